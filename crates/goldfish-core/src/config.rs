//! A repository's own settings, `.goldfish/config` (TOML, committed):
//!
//! ```toml
//! [memory]
//! types = ["incident", "meeting"]   # added to the built-in types
//!
//! [trust]
//! authors = ["alice@example.com", "*@example.com"]   # commit author emails, globs
//! signed = true                                       # and only verified signatures
//! ```
//!
//! It arrives through git, and every command and git hook of every clone
//! reads it: at most [`MAX_BYTES`] of it are read, and at most
//! [`kinds::MAX_EXTRA`](crate::memory::kinds::MAX_EXTRA) types of
//! [`kinds::MAX_NAME_BYTES`](crate::memory::kinds::MAX_NAME_BYTES) each are
//! taken, and at most [`MAX_AUTHORS`] author patterns of
//! [`MAX_PATTERN_BYTES`].

use serde::Deserialize;

use crate::memory::kinds::{Kinds, KindsError};

/// The repository's own goldfish settings, relative to its work tree.
pub const REPO_CONFIG: &str = ".goldfish/config";

/// The most of `.goldfish/config` read: a few settings take a few lines.
pub const MAX_BYTES: usize = 64 * 1024;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    memory: RawMemory,
    trust: Option<RawTrust>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrust {
    authors: Option<Vec<String>>,
    #[serde(default)]
    signed: bool,
}

/// Author patterns a `[trust]` section holds at most.
pub const MAX_AUTHORS: usize = 256;
/// Bytes of one author pattern at most (an email address is at most 254).
pub const MAX_PATTERN_BYTES: usize = 254;

/// Who may write memories that agents receive unmarked: the `[trust]`
/// section of `.goldfish/config`. The identity checked is the email of the
/// author of the commit that introduced a memory (and with `signed`, that
/// the commit's signature verifies and its signer is in `authors` too).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustPolicy {
    /// Email globs, lowercased: `*` any run of characters, `?` one.
    pub authors: Vec<String>,
    /// Only commits whose signature git verifies count.
    pub signed: bool,
}

impl TrustPolicy {
    /// The policy `policy` (`None`: no section) as one line:
    /// `authors a@x, *@y, signed`, `none`, or `nobody` (a policy that admits
    /// no one).
    pub fn describe(policy: Option<&TrustPolicy>) -> String {
        match policy {
            None => "none".to_owned(),
            Some(policy) if policy.authors.is_empty() => "nobody".to_owned(),
            Some(policy) => format!(
                "authors {}{}",
                policy.authors.join(", "),
                if policy.signed { ", signed" } else { "" }
            ),
        }
    }

    /// Whether `email` (any case) matches one of the author patterns.
    pub fn admits(&self, email: &str) -> bool {
        let email = email.trim().to_lowercase();
        self.authors
            .iter()
            .any(|pattern| glob_matches(pattern.as_bytes(), email.as_bytes()))
    }

    /// The patterns that let almost anyone in: the domain part (after the
    /// last `@`, or the whole pattern without one) has no letter or digit
    /// (`*`, `*@*`), or opens with a wildcard not followed by a dot
    /// (`*@*example.com` also takes `evilexample.com`).
    pub fn loose(&self) -> Vec<&str> {
        self.authors
            .iter()
            .filter(|pattern| {
                let domain = pattern
                    .rsplit_once('@')
                    .map_or(pattern.as_str(), |(_, d)| d);
                let literal = domain.chars().any(|c| c.is_alphanumeric());
                let open = domain.starts_with(['*', '?'])
                    && !domain.trim_start_matches(['*', '?']).starts_with('.');
                !literal || open
            })
            .map(String::as_str)
            .collect()
    }

    /// The email of an identity git gives: `Name <email>` (GPG), or the
    /// text itself (an SSH principal).
    pub fn email_of(identity: &str) -> &str {
        match (identity.rfind('<'), identity.rfind('>')) {
            (Some(open), Some(close)) if open < close => &identity[open + 1..close],
            _ => identity.trim(),
        }
    }

    fn from_raw(raw: RawTrust) -> Result<TrustPolicy, ConfigError> {
        let invalid = |why: String| ConfigError::Trust(why);
        let Some(authors) = raw.authors else {
            return Err(invalid(
                "authors: missing; list the emails (or globs such as \"*@example.com\") whose commits agents may trust".into(),
            ));
        };
        if authors.len() > MAX_AUTHORS {
            return Err(invalid(format!(
                "authors: {} patterns, at most {MAX_AUTHORS}",
                authors.len()
            )));
        }
        let mut patterns = Vec::with_capacity(authors.len());
        for pattern in authors {
            let pattern = pattern.trim().to_lowercase();
            if pattern.is_empty() {
                return Err(invalid("authors: an empty pattern".into()));
            }
            if pattern.len() > MAX_PATTERN_BYTES {
                return Err(invalid(format!(
                    "authors: a pattern of {} bytes; a pattern is at most {MAX_PATTERN_BYTES} bytes",
                    pattern.len()
                )));
            }
            if let Some(bad) = pattern
                .chars()
                .find(|c| c.is_whitespace() || c.is_control() || matches!(c, '[' | ']' | '<' | '>'))
            {
                return Err(invalid(format!(
                    "authors: `{}` holds {bad:?}; a pattern is an email address with `*` and `?` as wildcards",
                    pattern.escape_debug()
                )));
            }
            if !patterns.contains(&pattern) {
                patterns.push(pattern);
            }
        }
        Ok(TrustPolicy {
            authors: patterns,
            signed: raw.signed,
        })
    }
}

/// The dotted key set on line `line` of `text` (`trust.authors`), when the
/// line is a plain `key = …` under a plain `[table]` header: what a type
/// error is about. Only names made of letters, digits, `_` and `-` are
/// taken, so no other text of the file is echoed.
fn key_at(text: &str, line: usize) -> Option<String> {
    let plain = |name: &str| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    let lines: Vec<&str> = text.lines().collect();
    let (key, _) = lines.get(line.checked_sub(1)?)?.split_once('=')?;
    let key = key.trim();
    if !plain(key) {
        return None;
    }
    let table = lines[..line - 1]
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| l.starts_with('['))
        .map(|header| header.trim_start_matches('[').trim_end_matches(']').trim());
    match table {
        Some(table) if plain(table) => Some(format!("{table}.{key}")),
        Some(_) => None,
        None => Some(key.to_owned()),
    }
}

/// Whether `text` matches the glob `pattern` (`*`: any run of bytes, `?`:
/// one character), as SQLite's `GLOB` does for those two: the index checks
/// the same patterns in SQL.
fn glob_matches(pattern: &[u8], text: &[u8]) -> bool {
    let text = String::from_utf8_lossy(text);
    let text: Vec<char> = text.chars().collect();
    let pattern = String::from_utf8_lossy(pattern);
    let pattern: Vec<char> = pattern.chars().collect();
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(c) if *c == '?' || *c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((star_p, star_t)) => {
                    p = star_p + 1;
                    t = star_t + 1;
                    star = Some((star_p, star_t + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
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
    /// The `[trust]` section; `None` without one (everyone is trusted, the
    /// content flags still apply).
    pub trust: Option<TrustPolicy>,
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
    /// What is wrong in `[trust]`, starting with the key.
    #[error("trust.{0}")]
    Trust(String),
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
        let raw: RawConfig = toml::from_str(text).map_err(|err| {
            let line = err
                .span()
                .and_then(|span| text.get(..span.start))
                .map_or(1, |before| before.matches('\n').count() + 1);
            let message = err.message().trim_end();
            ConfigError::Syntax {
                line,
                message: match key_at(text, line) {
                    Some(key) if !message.contains('`') => format!("{key}: {message}"),
                    _ => message.to_owned(),
                },
            }
        })?;
        let kinds = Kinds::with_extra(raw.memory.types.iter().map(String::as_str))
            .map_err(ConfigError::Kind)?;
        let trust = raw.trust.map(TrustPolicy::from_raw).transpose()?;
        Ok(RepoConfig { kinds, trust })
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

    /// The `[trust]` section alone, from the bytes read of the file: what
    /// the rest of the file holds (a bad type name, a key of a later
    /// version) does not make the policy unusable; what cannot be parsed
    /// at all does.
    pub fn trust_of(bytes: &[u8]) -> Result<Option<TrustPolicy>, ConfigError> {
        #[derive(Deserialize)]
        struct TrustOnly {
            trust: Option<RawTrust>,
        }
        if bytes.len() > MAX_BYTES {
            return Err(ConfigError::TooLarge);
        }
        let text = std::str::from_utf8(bytes).map_err(|_| ConfigError::NotUtf8)?;
        if let Err(err) = RepoConfig::parse(text)
            && !matches!(err, ConfigError::Kind(_))
        {
            return Err(err);
        }
        let raw: TrustOnly = toml::from_str(text).map_err(|err| ConfigError::Syntax {
            line: 1,
            message: err.message().trim_end().to_owned(),
        })?;
        raw.trust.map(TrustPolicy::from_raw).transpose()
    }

    /// The config a reader (sync, recall, doctor) goes by, given what
    /// reading `.goldfish/config` gave (`None`: there is none, so the
    /// defaults: built-in types, no trust policy), or why it cannot (the
    /// file cannot be read or used). The one way readers take it.
    pub fn for_readers(
        read: Result<Option<Vec<u8>>, impl std::fmt::Display>,
    ) -> Result<RepoConfig, Unchecked> {
        match read {
            Ok(Some(bytes)) => RepoConfig::from_file(&bytes).map_err(Unchecked::Invalid),
            Ok(None) => Ok(RepoConfig::default()),
            Err(err) => Err(Unchecked::Unreadable(err.to_string())),
        }
    }

    /// The types a reader checks records against ([`Self::for_readers`]).
    pub fn kinds_for_readers(
        read: Result<Option<Vec<u8>>, impl std::fmt::Display>,
    ) -> Result<Kinds, Unchecked> {
        RepoConfig::for_readers(read).map(|config| config.kinds)
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
        let names: Vec<String> = (0..crate::memory::kinds::MAX_EXTRA)
            .map(|i| format!("t{i}"))
            .collect();
        let config = RepoConfig::parse(&types(&names)).unwrap();
        assert_eq!(config.kinds.resolve("t63").unwrap(), "t63");
        let mut over = names.clone();
        over.push("one-more".to_owned());
        let err = RepoConfig::parse(&types(&over)).unwrap_err();
        assert_eq!(err.to_string(), "memory.types: 65 types, at most 64");
        let long = "a".repeat(crate::memory::kinds::MAX_NAME_BYTES + 1);
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
    fn trust_policy() {
        let config = RepoConfig::parse(
            "[trust]\nauthors = [\"Alice@Example.com\", \"*@team.example.com\"]\nsigned = true\n",
        )
        .unwrap();
        let policy = config.trust.unwrap();
        assert!(policy.signed);
        assert!(policy.admits("alice@example.com"));
        assert!(policy.admits("ALICE@example.com"));
        assert!(policy.admits("bob@team.example.com"));
        assert!(!policy.admits("bob@example.com"));
        assert!(!policy.admits("mallory@team.example.com.evil"));
        assert!(policy.loose().is_empty());
        assert_eq!(RepoConfig::parse("").unwrap().trust, None);
        let open = RepoConfig::parse("[trust]\nauthors = [\"*\", \"*@*\", \"*@*example.com\", \"*@*.example.com\", \"a?@x.org\"]\n")
            .unwrap()
            .trust
            .unwrap();
        assert_eq!(open.loose(), ["*", "*@*", "*@*example.com"]);
        assert!(!open.signed);
        assert!(open.admits("a1@x.org") && open.admits("anyone@anywhere"));
        // Nobody: a policy that trusts no commit at all.
        let none = RepoConfig::parse("[trust]\nauthors = []\n")
            .unwrap()
            .trust
            .unwrap();
        assert!(!none.admits("alice@example.com"));
        assert_eq!(
            TrustPolicy::email_of("Alice <alice@example.com>"),
            "alice@example.com"
        );
        assert_eq!(
            TrustPolicy::email_of("alice@example.com"),
            "alice@example.com"
        );
    }

    #[test]
    fn a_malformed_trust_section_names_the_key() {
        for (text, expected) in [
            ("[trust]\nsigned = true\n", "trust.authors: missing"),
            (
                "[trust]\nauthors = [\"\"]\n",
                "trust.authors: an empty pattern",
            ),
            (
                "[trust]\nauthors = [\"a b@x\"]\n",
                "trust.authors: `a b@x` holds ' '",
            ),
            (
                "[trust]\nauthors = [\"[ab]@x\"]\n",
                "trust.authors: `[ab]@x` holds '['",
            ),
            (
                "[trust]\nauthors = \"alice@example.com\"\n",
                "line 2: trust.authors: invalid type",
            ),
            (
                "[trust]\nauthors = []\nsigned = \"yes\"\n",
                "line 3: trust.signed: invalid type",
            ),
            ("[trust]\nauthor = []\n", "unknown field `author`"),
        ] {
            let err = RepoConfig::parse(text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
        let many: Vec<String> = (0..=MAX_AUTHORS).map(|i| format!("\"u{i}@x\"")).collect();
        let err =
            RepoConfig::parse(&format!("[trust]\nauthors = [{}]\n", many.join(","))).unwrap_err();
        assert_eq!(err.to_string(), "trust.authors: 257 patterns, at most 256");
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
