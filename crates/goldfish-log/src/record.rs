//! Memory records: one JSON object per line of a `.goldfish/memories/*.jsonl` file.
//!
//! A line holds a [`Memory`], a [`Tombstone`] (a line whose `type` is
//! `"tombstone"` and whose `forgets` names the id of a memory to hide) or a
//! [`Release`] (`"type":"trust"`, whose `releases` names a quarantined memory
//! a person vouches for). Lines are immutable once written; forgetting
//! appends a tombstone, trusting a release.
//!
//! [`Entry::to_line`] is the canonical serialization: fixed key order (`id`,
//! `timestamp`, `type`, `content`, `source`, `tags`, `author`, `branch`,
//! `commit`, `files`, `session`, `supersedes`, then unknown keys sorted), no whitespace, no trailing
//! newline. Unknown keys survive a parse/serialize round trip, so a newer
//! writer's fields are never dropped by an older reader or the merge driver.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

/// The `type` of a tombstone line. Reserved: no memory may use it.
pub const TOMBSTONE_TYPE: &str = "tombstone";

/// The `type` of a release line. Reserved: no memory may use it.
pub const RELEASE_TYPE: &str = "trust";

/// One parsed line of a memory log.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Memory(Memory),
    Tombstone(Tombstone),
    Release(Release),
}

/// A memory: something an agent or a person wanted to remember.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Memory {
    /// Unique, time-sortable id, generated at store.
    pub id: String,
    /// RFC 3339 UTC timestamp.
    pub timestamp: String,
    /// `decision`, `bug-fix`, … (validated by the writer, not by the parser).
    pub kind: String,
    pub content: String,
    pub source: Option<String>,
    pub tags: Vec<String>,
    pub author: Option<String>,
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub files: Vec<String>,
    /// The agent session that produced it (captured memories).
    pub session: Option<String>,
    /// The id of an older memory this one replaces (`store --supersedes`):
    /// readers hide that one while this one counts.
    pub supersedes: Option<String>,
    /// Keys this version does not know, kept verbatim (sorted).
    pub extra: BTreeMap<String, Value>,
}

/// A line that hides the memory whose id is `forgets`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tombstone {
    pub id: String,
    pub timestamp: String,
    pub forgets: String,
    pub author: Option<String>,
    pub extra: BTreeMap<String, Value>,
}

/// A line that releases the quarantined memory whose id is `releases`
/// (`goldfish trust ID`): who wrote it is its commit's author, as for any
/// line; readers count it only when that author is inside the trust policy.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Release {
    pub id: String,
    pub timestamp: String,
    pub releases: String,
    pub author: Option<String>,
    pub extra: BTreeMap<String, Value>,
}

/// The most bytes a record's line may take: well over what `store` writes
/// (8 KiB of content, 32 tags, 64 files of 1 KiB), far under what would
/// make every reader of a log hold a stranger's megabytes. A longer line is
/// not parsed: readers skip it as unreadable, the merge keeps it as a line.
pub const MAX_LINE_BYTES: usize = 256 * 1024;

/// Why a line is not a record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Over [`MAX_LINE_BYTES`]: not read at all.
    #[error("{0} bytes, over the {MAX_LINE_BYTES} a record may take")]
    TooLong(usize),
    #[error("not valid UTF-8")]
    NotUtf8,
    #[error("not valid JSON: {0}")]
    Json(String),
    #[error("not a JSON object")]
    NotAnObject,
    #[error("missing or empty field `{0}`")]
    MissingField(&'static str),
    #[error("field `{field}` must be {expected}")]
    WrongType {
        field: &'static str,
        expected: &'static str,
    },
}

impl Entry {
    pub fn id(&self) -> &str {
        match self {
            Entry::Memory(m) => &m.id,
            Entry::Tombstone(t) => &t.id,
            Entry::Release(r) => &r.id,
        }
    }

    pub fn timestamp(&self) -> &str {
        match self {
            Entry::Memory(m) => &m.timestamp,
            Entry::Tombstone(t) => &t.timestamp,
            Entry::Release(r) => &r.timestamp,
        }
    }

    /// Parses one line (without its `\n`; a trailing `\r` is ignored).
    pub fn parse(line: &[u8]) -> Result<Entry, ParseError> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > MAX_LINE_BYTES {
            return Err(ParseError::TooLong(line.len()));
        }
        let text = std::str::from_utf8(line).map_err(|_| ParseError::NotUtf8)?;
        let value: Value =
            serde_json::from_str(text).map_err(|err| ParseError::Json(err.to_string()))?;
        let Value::Object(mut map) = value else {
            return Err(ParseError::NotAnObject);
        };
        let id = take_required_string(&mut map, "id")?;
        let timestamp = take_required_string(&mut map, "timestamp")?;
        let kind = take_required_string(&mut map, "type")?;
        if kind == TOMBSTONE_TYPE {
            let forgets = take_required_string(&mut map, "forgets")?;
            let author = take_optional_string(&mut map, "author")?;
            return Ok(Entry::Tombstone(Tombstone {
                id,
                timestamp,
                forgets,
                author,
                extra: map.into_iter().collect(),
            }));
        }
        if kind == RELEASE_TYPE {
            let releases = take_required_string(&mut map, "releases")?;
            let author = take_optional_string(&mut map, "author")?;
            return Ok(Entry::Release(Release {
                id,
                timestamp,
                releases,
                author,
                extra: map.into_iter().collect(),
            }));
        }
        let content = take_required_string(&mut map, "content")?;
        let source = take_optional_string(&mut map, "source")?;
        let tags = take_string_list(&mut map, "tags")?;
        let author = take_optional_string(&mut map, "author")?;
        let branch = take_optional_string(&mut map, "branch")?;
        let commit = take_optional_string(&mut map, "commit")?;
        let files = take_string_list(&mut map, "files")?;
        let session = take_optional_string(&mut map, "session")?;
        let supersedes = take_optional_string(&mut map, "supersedes")?;
        Ok(Entry::Memory(Memory {
            id,
            timestamp,
            kind,
            content,
            source,
            tags,
            author,
            branch,
            commit,
            files,
            session,
            supersedes,
            extra: map.into_iter().collect(),
        }))
    }

    /// The canonical one-line serialization, without the trailing newline.
    pub fn to_line(&self) -> String {
        let mut out = String::with_capacity(256);
        out.push('{');
        let mut first = true;
        let mut field = |out: &mut String, key: &str, value: &Value| {
            if !first {
                out.push(',');
            }
            first = false;
            push_json_string(out, key);
            out.push(':');
            out.push_str(&serde_json::to_string(value).expect("a JSON value always serializes"));
        };
        let string = |s: &str| Value::String(s.to_owned());
        let list = |items: &[String]| Value::Array(items.iter().map(|s| string(s)).collect());
        match self {
            Entry::Memory(m) => {
                field(&mut out, "id", &string(&m.id));
                field(&mut out, "timestamp", &string(&m.timestamp));
                field(&mut out, "type", &string(&m.kind));
                field(&mut out, "content", &string(&m.content));
                if let Some(source) = &m.source {
                    field(&mut out, "source", &string(source));
                }
                if !m.tags.is_empty() {
                    field(&mut out, "tags", &list(&m.tags));
                }
                if let Some(author) = &m.author {
                    field(&mut out, "author", &string(author));
                }
                if let Some(branch) = &m.branch {
                    field(&mut out, "branch", &string(branch));
                }
                if let Some(commit) = &m.commit {
                    field(&mut out, "commit", &string(commit));
                }
                if !m.files.is_empty() {
                    field(&mut out, "files", &list(&m.files));
                }
                if let Some(session) = &m.session {
                    field(&mut out, "session", &string(session));
                }
                if let Some(supersedes) = &m.supersedes {
                    field(&mut out, "supersedes", &string(supersedes));
                }
                for (key, value) in &m.extra {
                    field(&mut out, key, value);
                }
            }
            Entry::Tombstone(t) => {
                field(&mut out, "id", &string(&t.id));
                field(&mut out, "timestamp", &string(&t.timestamp));
                field(&mut out, "type", &string(TOMBSTONE_TYPE));
                field(&mut out, "forgets", &string(&t.forgets));
                if let Some(author) = &t.author {
                    field(&mut out, "author", &string(author));
                }
                for (key, value) in &t.extra {
                    field(&mut out, key, value);
                }
            }
            Entry::Release(r) => {
                field(&mut out, "id", &string(&r.id));
                field(&mut out, "timestamp", &string(&r.timestamp));
                field(&mut out, "type", &string(RELEASE_TYPE));
                field(&mut out, "releases", &string(&r.releases));
                if let Some(author) = &r.author {
                    field(&mut out, "author", &string(author));
                }
                for (key, value) in &r.extra {
                    field(&mut out, key, value);
                }
            }
        }
        out.push('}');
        out
    }
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_line())
    }
}

/// One line of a log file as read: its 1-based number, its bytes (without
/// `\n` or `\r\n`) and what it parsed to.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine<'a> {
    pub number: usize,
    pub raw: &'a [u8],
    pub parsed: Result<Entry, ParseError>,
}

/// Splits a log file into lines and parses each. Blank lines are skipped; a
/// last line without `\n` is still a line; `\r\n` endings are accepted.
pub fn parse_log(bytes: &[u8]) -> Vec<LogLine<'_>> {
    split_lines(bytes)
        .map(|(number, raw)| LogLine {
            number,
            raw,
            parsed: Entry::parse(raw),
        })
        .collect()
}

/// The non-blank lines of `bytes` with their 1-based numbers, without line
/// terminators (`\n`, `\r\n`).
pub fn split_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    body.split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(index, line)| {
            // All trailing `\r`s: a kept invalid line must not end in one, or
            // writing it back with `\n` would make `\r\n` and change it on re-read.
            let end = line.iter().rposition(|&b| b != b'\r').map_or(0, |i| i + 1);
            let line = &line[..end];
            (!line.iter().all(u8::is_ascii_whitespace)).then_some((index + 1, line))
        })
}

fn push_json_string(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).expect("a string always serializes"));
}

fn take_required_string(
    map: &mut Map<String, Value>,
    field: &'static str,
) -> Result<String, ParseError> {
    match map.remove(field) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        Some(Value::String(_)) | None | Some(Value::Null) => Err(ParseError::MissingField(field)),
        Some(_) => Err(ParseError::WrongType {
            field,
            expected: "a string",
        }),
    }
}

fn take_optional_string(
    map: &mut Map<String, Value>,
    field: &'static str,
) -> Result<Option<String>, ParseError> {
    match map.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ParseError::WrongType {
            field,
            expected: "a string",
        }),
    }
}

fn take_string_list(
    map: &mut Map<String, Value>,
    field: &'static str,
) -> Result<Vec<String>, ParseError> {
    let wrong = ParseError::WrongType {
        field,
        expected: "a list of strings",
    };
    match map.remove(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|item| match item {
                Value::String(s) => Ok(s),
                _ => Err(wrong.clone()),
            })
            .collect(),
        Some(_) => Err(wrong),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_over_the_limit_is_not_parsed() {
        let line = format!(
            "{{\"id\":\"a\",\"timestamp\":\"t\",\"type\":\"note\",\"content\":\"{}\"}}",
            "x".repeat(MAX_LINE_BYTES)
        );
        assert_eq!(
            Entry::parse(line.as_bytes()),
            Err(ParseError::TooLong(line.len()))
        );
    }

    #[test]
    fn canonical_order_and_round_trip() {
        let line = br#"{"files":["src/a.rs"],"session":"s-1","content":"use \"x\"","type":"decision","timestamp":"2026-11-21T10:00:00.000Z","id":"01JD","zz":1,"aa":{"b":2},"tags":["db"]}"#;
        let entry = Entry::parse(line).unwrap();
        let canonical = entry.to_line();
        assert_eq!(
            canonical,
            r#"{"id":"01JD","timestamp":"2026-11-21T10:00:00.000Z","type":"decision","content":"use \"x\"","tags":["db"],"files":["src/a.rs"],"session":"s-1","aa":{"b":2},"zz":1}"#
        );
        assert_eq!(Entry::parse(canonical.as_bytes()).unwrap(), entry);
    }

    #[test]
    fn supersedes_is_a_known_field_in_its_place() {
        let line = br#"{"zz":1,"supersedes":"01JC","content":"x","type":"decision","timestamp":"2026-11-21T10:00:00.000Z","id":"01JD","session":"s"}"#;
        let Entry::Memory(memory) = Entry::parse(line).unwrap() else {
            panic!("a memory");
        };
        assert_eq!(memory.supersedes.as_deref(), Some("01JC"));
        assert!(!memory.extra.contains_key("supersedes"));
        assert_eq!(
            Entry::Memory(memory).to_line(),
            r#"{"id":"01JD","timestamp":"2026-11-21T10:00:00.000Z","type":"decision","content":"x","session":"s","supersedes":"01JC","zz":1}"#
        );
        let wrong =
            br#"{"id":"01JD","timestamp":"t","type":"decision","content":"x","supersedes":7}"#;
        assert!(matches!(
            Entry::parse(wrong),
            Err(ParseError::WrongType {
                field: "supersedes",
                ..
            })
        ));
    }

    #[test]
    fn tombstone_round_trip() {
        let line = r#"{"id":"02","timestamp":"2026-11-21T10:00:00.000Z","type":"tombstone","forgets":"01","author":"Ada"}"#;
        let entry = Entry::parse(line.as_bytes()).unwrap();
        assert!(matches!(&entry, Entry::Tombstone(t) if t.forgets == "01"));
        assert_eq!(entry.to_line(), line);
    }

    #[test]
    fn release_round_trip() {
        let line = r#"{"id":"03","timestamp":"2026-11-21T10:00:00.000Z","type":"trust","releases":"01","author":"Ada","why":"a false alarm"}"#;
        let entry = Entry::parse(line.as_bytes()).unwrap();
        assert!(matches!(&entry, Entry::Release(r) if r.releases == "01"));
        assert_eq!(entry.to_line(), line);
        assert_eq!(
            Entry::parse(br#"{"id":"03","timestamp":"t","type":"trust"}"#),
            Err(ParseError::MissingField("releases"))
        );
    }

    #[test]
    fn rejects_what_is_not_a_record() {
        assert_eq!(Entry::parse(b"[1]"), Err(ParseError::NotAnObject));
        assert_eq!(Entry::parse(b"\xff"), Err(ParseError::NotUtf8));
        assert!(matches!(
            Entry::parse(b"{\"id\":"),
            Err(ParseError::Json(_))
        ));
        assert_eq!(
            Entry::parse(br#"{"id":"1","timestamp":"t","type":"decision"}"#),
            Err(ParseError::MissingField("content"))
        );
        assert_eq!(
            Entry::parse(
                br#"{"id":"1","timestamp":"t","type":"decision","content":"c","tags":"x"}"#
            ),
            Err(ParseError::WrongType {
                field: "tags",
                expected: "a list of strings"
            })
        );
    }

    #[test]
    fn splits_crlf_blank_and_unterminated_lines() {
        let lines: Vec<_> = split_lines(b"a\r\n\n  \nb\nc").collect();
        assert_eq!(lines, vec![(1, &b"a"[..]), (4, &b"b"[..]), (5, &b"c"[..])]);
        assert_eq!(split_lines(b"").count(), 0);
        assert_eq!(split_lines(b"\n").count(), 0);
    }
}
