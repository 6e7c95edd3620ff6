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
    #[error("{0}")]
    Syntax(#[from] toml::de::Error),
    #[error("memory.types: {0}")]
    Kind(#[from] InvalidKindName),
}

impl RepoConfig {
    pub fn parse(text: &str) -> Result<RepoConfig, ConfigError> {
        let raw: RawConfig = toml::from_str(text)?;
        let kinds = Kinds::with_extra(raw.memory.types.iter().map(String::as_str))?;
        Ok(RepoConfig { kinds })
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
}
