//! A repository's own settings, `.goldfish/config` (TOML, committed):
//!
//! ```toml
//! [memory]
//! types = ["incident", "meeting"]   # added to the built-in types
//! ```
//!
//! It arrives through git, and every command and git hook of every clone
//! reads it: at most [`MAX_BYTES`] of it are read, and at most
//! [`kinds::MAX_EXTRA`](crate::domain::memory::kinds::MAX_EXTRA) types of
//! [`kinds::MAX_NAME_BYTES`](crate::domain::memory::kinds::MAX_NAME_BYTES) each are
//! taken.

use serde::Deserialize;

use crate::domain::memory::kinds::{Kinds, KindsError};

/// The repository's own goldfish settings, relative to its work tree.
pub const REPO_CONFIG: &str = ".goldfish/config";

/// The most of `.goldfish/config` read: a few settings take a few lines.
pub const MAX_BYTES: usize = 64 * 1024;

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
    Kind(KindsError),
    #[error("larger than 64 KiB ({MAX_BYTES} bytes)")]
    TooLarge,
    #[error("not UTF-8 text")]
    NotUtf8,
}

/// Why a reader does not check types: the config it could not use.
#[derive(Debug, thiserror::Error)]
pub enum Unchecked {
    /// Why it could not be read (a link, a FIFO, an I/O error).
    #[error("{REPO_CONFIG} cannot be read: {0}")]
    Unreadable(String),
    #[error("{REPO_CONFIG} is invalid: {0}")]
    Invalid(ConfigError),
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

    /// The settings from the bytes read of the file: at most
    /// [`MAX_BYTES`] (a reader reads one more, to tell a larger file).
    pub fn from_file(bytes: &[u8]) -> Result<RepoConfig, ConfigError> {
        if bytes.len() > MAX_BYTES {
            return Err(ConfigError::TooLarge);
        }
        let text = std::str::from_utf8(bytes).map_err(|_| ConfigError::NotUtf8)?;
        RepoConfig::parse(text)
    }

    /// The types a reader checks records against, given what reading
    /// `.goldfish/config` gave (`None`: there is none, so the built-in
    /// ones), or why they are not checked (it cannot be read or used).
    pub fn kinds_for_readers(
        read: Result<Option<Vec<u8>>, impl std::fmt::Display>,
    ) -> Result<Kinds, Unchecked> {
        match read {
            Ok(Some(bytes)) => RepoConfig::from_file(&bytes)
                .map(|config| config.kinds)
                .map_err(Unchecked::Invalid),
            Ok(None) => Ok(Kinds::default()),
            Err(err) => Err(Unchecked::Unreadable(err.to_string())),
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

    /// Regression: 60,000 types took seconds to read (each compared with
    /// every one before it), on every command and hook.
    #[test]
    fn types_in_the_config_scale_quadratically() {
        let types = |names: &[String]| {
            let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
            format!("[memory]\ntypes = [{}]\n", quoted.join(", "))
        };
        let names: Vec<String> = (0..crate::domain::memory::kinds::MAX_EXTRA)
            .map(|i| format!("t{i}"))
            .collect();
        let config = RepoConfig::parse(&types(&names)).unwrap();
        assert_eq!(config.kinds.resolve("t63").unwrap(), "t63");
        let mut over = names.clone();
        over.push("one-more".to_owned());
        let err = RepoConfig::parse(&types(&over)).unwrap_err();
        assert_eq!(err.to_string(), "memory.types: 65 types, at most 64");
        let long = "a".repeat(crate::domain::memory::kinds::MAX_NAME_BYTES + 1);
        let err = RepoConfig::parse(&types(&[long])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "memory.types: a type of 65 bytes; a type is at most 64 bytes"
        );
        let big = format!("# {}\n", "x".repeat(MAX_BYTES));
        let err = RepoConfig::from_file(big.as_bytes()).unwrap_err();
        assert_eq!(err.to_string(), "larger than 64 KiB (65536 bytes)");
        let err = RepoConfig::from_file(b"[memory]\ntypes = [\"\xff\"]\n").unwrap_err();
        assert_eq!(err.to_string(), "not UTF-8 text");
        // Readers go on without checking types, whatever the reason.
        let unchecked = RepoConfig::kinds_for_readers(Ok::<_, String>(Some(big.into_bytes())));
        assert_eq!(
            unchecked.unwrap_err().to_string(),
            ".goldfish/config is invalid: larger than 64 KiB (65536 bytes)"
        );
        let none = RepoConfig::kinds_for_readers(Ok::<_, String>(None));
        assert_eq!(none.unwrap(), Kinds::default());
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
