//! The memory log's domain: records, types, validation of new content and the
//! view a reader gets of a log once tombstones are applied. No I/O here; see
//! `goldfish::adapters::memdir` for the files.

mod ascii_first;
pub mod fold;
pub mod injection;
pub mod kinds;
pub mod label;
pub mod secrets;
pub mod trust;
pub mod verdict;
pub mod view;

pub use goldfish_log::record::{
    Entry, LogLine, Memory, ParseError, RELEASE_TYPE, Release, TOMBSTONE_TYPE, Tombstone,
};

use jiff::Timestamp;

/// Content longer than this is refused: a memory is a few sentences, not a file.
pub const MAX_CONTENT_BYTES: usize = 8 * 1024;

/// A `source` longer than this is refused (a URL or a name is shorter); one
/// that arrives through git is flagged `oversize`.
pub const MAX_SOURCE_BYTES: usize = 2048;

/// How many items, of how many bytes each, a list field of a record may
/// hold. Tags are labels (a word or two; 32 is more than any memory needs),
/// files point to where to look (a few, each a repository path; 1024
/// bytes is longer than any real one): a record is a few sentences, and
/// every recall, index and briefing carries these with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListLimit {
    /// One item, as messages say it: `tag`, `file`.
    pub item: &'static str,
    pub max_items: usize,
    pub max_bytes: usize,
}

pub const TAGS: ListLimit = ListLimit {
    item: "tag",
    max_items: 32,
    max_bytes: 64,
};

pub const FILES: ListLimit = ListLimit {
    item: "file",
    max_items: 64,
    max_bytes: 1024,
};

/// A list over its [`ListLimit`]. The item itself is not shown: it may be
/// anything, of any length.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ListError {
    #[error("{count} {item}s, at most {max}")]
    TooMany {
        item: &'static str,
        count: usize,
        max: usize,
    },
    #[error("a {item} of {len} bytes; a {item} is at most {max} bytes")]
    TooLong {
        item: &'static str,
        len: usize,
        max: usize,
    },
}

impl ListLimit {
    /// Whether `items` are within the limit, or the first way they are not.
    pub fn check(&self, items: &[String]) -> Result<(), ListError> {
        if items.len() > self.max_items {
            return Err(ListError::TooMany {
                item: self.item,
                count: items.len(),
                max: self.max_items,
            });
        }
        match items.iter().find(|item| item.len() > self.max_bytes) {
            Some(long) => Err(ListError::TooLong {
                item: self.item,
                len: long.len(),
                max: self.max_bytes,
            }),
            None => Ok(()),
        }
    }
}

/// Why new content cannot be stored.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ContentError {
    #[error("the memory is empty")]
    Empty,
    #[error(
        "the memory is {len} bytes; the limit is {MAX_CONTENT_BYTES} bytes (store a summary, and point to files with --files)"
    )]
    TooLong { len: usize },
    #[error("the memory is not valid UTF-8 (first bad byte at offset {offset})")]
    NotUtf8 { offset: usize },
    #[error(
        "the memory looks like it contains a secret ({rule}: {excerpt}); remove it, or pass --allow-secret if it is not one"
    )]
    Secret { rule: &'static str, excerpt: String },
}

/// Checks raw content for storing and returns it trimmed.
pub fn validate_content(raw: &[u8], allow_secret: bool) -> Result<String, ContentError> {
    let text = std::str::from_utf8(raw).map_err(|err| ContentError::NotUtf8 {
        offset: err.valid_up_to(),
    })?;
    let text = text.trim();
    if text.is_empty() {
        return Err(ContentError::Empty);
    }
    if text.len() > MAX_CONTENT_BYTES {
        return Err(ContentError::TooLong { len: text.len() });
    }
    if !allow_secret && let Some(found) = secrets::scan(text) {
        return Err(ContentError::Secret {
            rule: found.rule,
            excerpt: found.redacted(),
        });
    }
    Ok(text.to_owned())
}

/// The first field of `memory` that holds what looks like a secret: the
/// field's name in the record (`content`, `tags`, `files`, `source`, …, or
/// an unknown key) and what was found there.
pub fn secret_in(memory: &Memory) -> Option<(String, secrets::Finding)> {
    fn optional<'m>(name: &str, value: &'m Option<String>) -> Option<(String, &'m str)> {
        value.as_deref().map(|value| (name.to_owned(), value))
    }
    let fields = std::iter::once(("content".to_owned(), memory.content.as_str()))
        .chain(optional("source", &memory.source))
        .chain(
            memory
                .tags
                .iter()
                .map(|tag| ("tags".to_owned(), tag.as_str())),
        )
        .chain(
            memory
                .files
                .iter()
                .map(|file| ("files".to_owned(), file.as_str())),
        )
        .chain(optional("author", &memory.author))
        .chain(optional("branch", &memory.branch))
        .chain(optional("commit", &memory.commit))
        .chain(optional("session", &memory.session))
        .chain(
            memory
                .extra
                .iter()
                .filter_map(|(key, value)| Some((key.clone(), value.as_str()?))),
        );
    for (name, value) in fields {
        if let Some(found) = secrets::scan(value) {
            return Some((name, found));
        }
    }
    None
}

/// The canonical timestamp format: RFC 3339, UTC, milliseconds.
pub fn format_timestamp(at: Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// A new unique id, sortable by time: a ULID of `at` and 80 random bits.
pub fn new_id(at: Timestamp) -> String {
    let millis = u64::try_from(at.as_millisecond()).unwrap_or(0);
    ulid::Ulid::from_parts(millis, rand_bits()).to_string()
}

fn rand_bits() -> u128 {
    // ulid's own generator, minus the timestamp part.
    ulid::Ulid::generate().random()
}

/// The day file (relative to the memory folder) of an entry stamped `at`:
/// `YYYY-MM-DD.jsonl` of its UTC date; a work tree's stores add its tag
/// before `.jsonl` (`adapters::memdir`).
pub fn file_name_for(at: Timestamp) -> String {
    at.strftime("%Y-%m-%d.jsonl").to_string()
}

/// Splits a comma-separated list (`--tags a,b`), trimming items and dropping
/// empty ones and repeats while keeping the order.
pub fn split_list(raw: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    raw.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty() && seen.insert(*item))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_checks() {
        assert_eq!(validate_content(b"  \n", false), Err(ContentError::Empty));
        assert_eq!(
            validate_content(b"ok\xff", false),
            Err(ContentError::NotUtf8 { offset: 2 })
        );
        let long = "x".repeat(MAX_CONTENT_BYTES + 1);
        assert_eq!(
            validate_content(long.as_bytes(), false),
            Err(ContentError::TooLong {
                len: MAX_CONTENT_BYTES + 1
            })
        );
        assert_eq!(validate_content(b" use WAL \n", false).unwrap(), "use WAL");
    }

    #[test]
    fn ids_sort_by_time_and_files_by_utc_day() {
        let early: Timestamp = "2026-11-21T23:59:59.999Z".parse().unwrap();
        let late: Timestamp = "2026-11-22T00:00:00Z".parse().unwrap();
        assert!(new_id(early) < new_id(late));
        assert_eq!(file_name_for(early), "2026-11-21.jsonl");
        assert_eq!(file_name_for(late), "2026-11-22.jsonl");
        assert_eq!(format_timestamp(late), "2026-11-22T00:00:00.000Z");
    }

    #[test]
    fn every_field_is_scanned_for_secrets() {
        let token = "ghp_9fT2kLmQ8xR4vW1zY6bN3cH7jD0s⁞A5eG2uKp".replace('⁞', "");
        let clean = Memory {
            content: "rotated the deploy token".into(),
            tags: vec!["ops".into()],
            ..Memory::default()
        };
        assert_eq!(secret_in(&clean), None);
        let mut in_tags = clean.clone();
        in_tags.tags.push(token.clone());
        let (field, found) = secret_in(&in_tags).unwrap();
        assert_eq!((field.as_str(), found.rule), ("tags", "github-token"));
        let mut in_extra = clean.clone();
        in_extra
            .extra
            .insert("imported_from".into(), serde_json::Value::String(token));
        assert_eq!(secret_in(&in_extra).unwrap().0, "imported_from");
    }

    #[test]
    fn lists() {
        assert_eq!(split_list(" db, ,wal,db "), vec!["db", "wal"]);
    }

    #[test]
    fn list_limits() {
        let items = |n: usize, len: usize| -> Vec<String> {
            (0..n).map(|i| format!("{i:0len$}")).collect()
        };
        assert_eq!(TAGS.check(&items(32, 64)), Ok(()));
        assert_eq!(
            TAGS.check(&items(33, 2)).unwrap_err().to_string(),
            "33 tags, at most 32"
        );
        assert_eq!(
            FILES.check(&items(1, 1025)).unwrap_err().to_string(),
            "a file of 1025 bytes; a file is at most 1024 bytes"
        );
    }
}
