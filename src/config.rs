//! A repository's own settings, `.goldfish/config` (TOML, committed):
//!
//! ```toml
//! [memory]
//! types = ["incident", "meeting"]   # added to the built-in types
//! ```

use serde::Deserialize;

use crate::memory::kinds::{InvalidKindName, Kinds};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    memory: RawMemory,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMemory {
    #[serde(default)]
    types: Vec<String>,
}

/// The validated settings of one repository.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RepoConfig {
    pub kinds: Kinds,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// What the parser says, at which line; never the text of the line (the
    /// file may hold anything).
    #[error("line {line}: {message}")]
    Syntax { line: usize, message: String },
    /// Not a `#[source]`: its text is already in this one's, and `{:#}`
    /// would print it twice.
    #[error("memory.types: {0}")]
    Kind(InvalidKindName),
}

impl RepoConfig {
    pub fn parse(text: &str) -> Result<RepoConfig, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|err| ConfigError::Syntax {
            line: err
                .span()
                .and_then(|span| text.get(..span.start))
                .map_or(1, |before| before.matches('\n').count() + 1),
            message: err.message().trim_end().to_owned(),
        })?;
        let kinds = Kinds::with_extra(raw.memory.types.iter().map(String::as_str))
            .map_err(ConfigError::Kind)?;
        Ok(RepoConfig { kinds })
    }

    /// The types a reader checks records against, given the result of
    /// reading `.goldfish/config`: the built-in ones when there is no file,
    /// `None` when it cannot be read or parsed (types are then not checked).
    pub fn kinds_for_readers(read: std::io::Result<String>) -> Option<Kinds> {
        match read {
            Ok(text) => RepoConfig::parse(&text).ok().map(|config| config.kinds),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Some(Kinds::default()),
            Err(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_types() {
        let config = RepoConfig::parse("[memory]\ntypes = [\"incident\"]\n").unwrap();
        assert_eq!(config.kinds.resolve("incident").unwrap(), "incident");
        assert_eq!(RepoConfig::parse("").unwrap(), RepoConfig::default());
    }

    #[test]
    fn errors_name_the_key() {
        let err = RepoConfig::parse("[memory]\ntypes = [\"tombstone\"]\n").unwrap_err();
        assert!(
            err.to_string().starts_with("memory.types: `tombstone`"),
            "{err}"
        );
        let err = RepoConfig::parse("[memroy]\n").unwrap_err();
        assert!(err.to_string().contains("unknown field `memroy`"), "{err}");
    }

    #[test]
    fn syntax_errors_name_the_line_not_its_text() {
        let err = RepoConfig::parse("[memory]\nghp_secretsecretsecret\n").unwrap_err();
        let message = err.to_string();
        assert!(message.starts_with("line 2: "), "{message}");
        assert!(!message.contains("ghp_secret"), "{message}");
    }
}

/// The user's own settings, `$GOLDFISH_HOME/config.toml`:
///
/// ```toml
/// [distill]
/// command = "claude -p"      # gets a prompt on stdin, prints the digest
/// timeout_secs = 30
/// ```
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HomeConfig {
    #[serde(default)]
    pub distill: DistillConfig,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistillConfig {
    pub command: Option<String>,
    pub timeout_secs: Option<u64>,
}

impl HomeConfig {
    pub fn parse(text: &str) -> Result<HomeConfig, toml::de::Error> {
        toml::from_str(text)
    }
}

#[cfg(test)]
mod home_tests {
    use super::*;

    #[test]
    fn distill_settings() {
        let config =
            HomeConfig::parse("[distill]\ncommand = \"claude -p\"\ntimeout_secs = 5\n").unwrap();
        assert_eq!(config.distill.command.as_deref(), Some("claude -p"));
        assert_eq!(config.distill.timeout_secs, Some(5));
        assert_eq!(HomeConfig::parse("").unwrap(), HomeConfig::default());
        assert!(HomeConfig::parse("[distil]\n").is_err());
    }
}
