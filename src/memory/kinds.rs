//! Memory types: the built-in ones plus those a repository declares in
//! `.goldfish/config`.

use super::TOMBSTONE_TYPE;

/// The types every repository knows, in the order `--help` lists them.
pub const BUILTIN: &[&str] = &[
    "decision",
    "bug-fix",
    "feature",
    "insight",
    "observation",
    "refactor",
    "checkpoint",
    "plan",
];

/// The type `store` uses when none is given.
pub const DEFAULT: &str = "observation";

/// The set of types valid in one repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kinds {
    names: Vec<String>,
}

/// A type that is not valid here.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown memory type `{given}`; valid types: {}", valid.join(", "))]
pub struct UnknownKind {
    pub given: String,
    pub valid: Vec<String>,
}

/// A type a repository tried to declare that cannot be one.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "`{0}` cannot be a memory type: use lowercase letters, digits and `-`, and not `tombstone`"
)]
pub struct InvalidKindName(pub String);

impl Default for Kinds {
    fn default() -> Self {
        Kinds {
            names: BUILTIN.iter().map(|&s| s.to_owned()).collect(),
        }
    }
}

impl Kinds {
    /// The built-in types plus `extra` (repeats ignored).
    pub fn with_extra<'a>(
        extra: impl IntoIterator<Item = &'a str>,
    ) -> Result<Kinds, InvalidKindName> {
        let mut kinds = Kinds::default();
        for name in extra {
            let valid = !name.is_empty()
                && name != TOMBSTONE_TYPE
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if !valid {
                return Err(InvalidKindName(name.to_owned()));
            }
            if !kinds.names.iter().any(|known| known == name) {
                kinds.names.push(name.to_owned());
            }
        }
        Ok(kinds)
    }

    /// Checks `given` (case-insensitively, `_` read as `-`) and returns the
    /// type's canonical spelling.
    pub fn resolve(&self, given: &str) -> Result<&str, UnknownKind> {
        let normalized = given.trim().to_ascii_lowercase().replace('_', "-");
        self.names
            .iter()
            .find(|name| **name == normalized)
            .map(String::as_str)
            .ok_or_else(|| UnknownKind {
                given: given.to_owned(),
                valid: self.names.clone(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_builtin_and_extra_types() {
        let kinds = Kinds::with_extra(["incident"]).unwrap();
        assert_eq!(kinds.resolve("Bug_Fix").unwrap(), "bug-fix");
        assert_eq!(kinds.resolve("incident").unwrap(), "incident");
        let err = kinds.resolve("idea").unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown memory type `idea`; valid types: decision, bug-fix, feature, insight, \
             observation, refactor, checkpoint, plan, incident"
        );
    }

    #[test]
    fn refuses_reserved_and_odd_names() {
        assert!(Kinds::with_extra(["tombstone"]).is_err());
        assert!(Kinds::with_extra(["Has Space"]).is_err());
    }
}
