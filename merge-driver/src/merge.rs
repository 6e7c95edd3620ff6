//! Three-way merge of memory logs.
//!
//! The unit of the merge is a line's *element*: the canonical serialization of
//! a record, or the raw bytes of a line that is not a record. Each side is a set
//! of elements, and an element is in the result when
//!
//! 1. both sides have it (kept), or
//! 2. the base lacks it and either side has it (added).
//!
//! So a record added on either side is kept, identical records appear once, a
//! record one side deleted stays deleted, and a record one side rewrote is
//! replaced by the rewrite. Tombstones are records too: they merge like any
//! other line and readers apply them.
//!
//! The output is canonical: records sorted by (timestamp, id, line), then the
//! lines that are not records (garbage, conflict markers, half lines), sorted
//! by bytes and reported as [`Notice`]s. Merging A into B and B into A gives
//! byte-identical results. Nothing here does I/O.

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::record::{Entry, ParseError, split_lines};

/// Which input a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Base,
    Ours,
    Theirs,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Base => "base",
            Side::Ours => "ours",
            Side::Theirs => "theirs",
        })
    }
}

/// Something the merge did that a person may want to look at. The merge
/// itself always succeeds.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// A line that is not a record was kept, moved to the end of the file.
    KeptInvalidLine {
        side: Side,
        line: usize,
        reason: ParseError,
    },
    /// Two different records share an id; both were kept.
    DivergentRecord { id: String },
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::KeptInvalidLine { side, line, reason } => write!(
                f,
                "{side} line {line} is not a memory record ({reason}); kept at the end of the file"
            ),
            Notice::DivergentRecord { id } => write!(
                f,
                "record {id} differs between the two sides; both versions kept"
            ),
        }
    }
}

/// The result of [`merge`].
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// The merged file, `\n`-terminated lines.
    pub bytes: Vec<u8>,
    pub notices: Vec<Notice>,
}

const IN_BASE: u8 = 1;
const IN_OURS: u8 = 2;
const IN_THEIRS: u8 = 4;

struct Element {
    /// Canonical line for a record, raw bytes otherwise.
    key: Vec<u8>,
    /// `(timestamp, id)` for a record; `None` for a line that is not one.
    record: Option<(String, String)>,
    sides: u8,
    /// Where an invalid line was first seen on ours or theirs, and why.
    first_invalid: Option<(Side, usize, ParseError)>,
}

/// Merges `ours` and `theirs`, two descendants of `base`.
pub fn merge(base: &[u8], ours: &[u8], theirs: &[u8]) -> Merged {
    let mut elements: Vec<Element> = Vec::new();
    let mut by_key: HashMap<Vec<u8>, usize> = HashMap::new();
    // Byte-identical lines are common to all three sides: parse each once.
    let mut by_raw: HashMap<&[u8], usize> = HashMap::new();

    for (side, bit, bytes) in [
        (Side::Base, IN_BASE, base),
        (Side::Ours, IN_OURS, ours),
        (Side::Theirs, IN_THEIRS, theirs),
    ] {
        for (number, raw) in split_lines(bytes) {
            let index = match by_raw.get(raw) {
                Some(&index) => index,
                None => {
                    let (key, record, error) = match Entry::parse(raw) {
                        Ok(entry) => {
                            let record = (entry.timestamp().to_owned(), entry.id().to_owned());
                            (entry.to_line().into_bytes(), Some(record), None)
                        }
                        Err(err) => (raw.to_vec(), None, Some(err)),
                    };
                    let index = *by_key.entry(key).or_insert_with_key(|key| {
                        elements.push(Element {
                            key: key.clone(),
                            record,
                            sides: 0,
                            first_invalid: None,
                        });
                        elements.len() - 1
                    });
                    by_raw.insert(raw, index);
                    if let Some(err) = error {
                        let element = &mut elements[index];
                        if side != Side::Base && element.first_invalid.is_none() {
                            element.first_invalid = Some((side, number, err));
                        }
                    }
                    index
                }
            };
            let element = &mut elements[index];
            element.sides |= bit;
            if side != Side::Base && element.record.is_none() && element.first_invalid.is_none() {
                // First seen on the base, now on a side: report with this side's position.
                let reason = Entry::parse(raw).expect_err("an invalid line stays invalid");
                element.first_invalid = Some((side, number, reason));
            }
        }
    }

    let mut kept: Vec<&Element> = elements
        .iter()
        .filter(|e| {
            let both = e.sides & (IN_OURS | IN_THEIRS) == IN_OURS | IN_THEIRS;
            let added = e.sides & IN_BASE == 0 && e.sides & (IN_OURS | IN_THEIRS) != 0;
            both || added
        })
        .collect();
    // Records first by (timestamp, id, line); then invalid lines by bytes.
    kept.sort_by(|a, b| match (&a.record, &b.record) {
        (Some(ra), Some(rb)) => ra.cmp(rb).then_with(|| a.key.cmp(&b.key)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.key.cmp(&b.key),
    });

    let mut notices = Vec::new();
    let mut bytes = Vec::with_capacity(kept.iter().map(|e| e.key.len() + 1).sum());
    // Versions of one id need not be adjacent: they may differ in timestamp.
    let mut seen_ids: HashSet<&str> = HashSet::new();
    let mut reported_ids: HashSet<&str> = HashSet::new();
    for element in &kept {
        bytes.extend_from_slice(&element.key);
        bytes.push(b'\n');
        match (&element.record, &element.first_invalid) {
            (Some((_, id)), _) => {
                if !seen_ids.insert(id) && reported_ids.insert(id) {
                    notices.push(Notice::DivergentRecord { id: id.clone() });
                }
            }
            (None, Some((side, line, reason))) => notices.push(Notice::KeptInvalidLine {
                side: *side,
                line: *line,
                reason: reason.clone(),
            }),
            (None, None) => {}
        }
    }
    notices.dedup();
    Merged { bytes, notices }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: &str, ts: &str, content: &str) -> String {
        format!(
            r#"{{"id":"{id}","timestamp":"2026-11-21T{ts}Z","type":"decision","content":"{content}"}}"#
        )
    }

    fn lines(items: &[String]) -> Vec<u8> {
        items
            .iter()
            .flat_map(|l| format!("{l}\n").into_bytes())
            .collect()
    }

    #[test]
    fn both_sides_append() {
        let a = rec("a", "10:00:00", "base");
        let b = rec("b", "11:00:00", "ours");
        let c = rec("c", "10:30:00", "theirs");
        let merged = merge(
            &lines(std::slice::from_ref(&a)),
            &lines(&[a.clone(), b.clone()]),
            &lines(&[a.clone(), c.clone()]),
        );
        assert_eq!(merged.bytes, lines(&[a, c, b]));
        assert!(merged.notices.is_empty());
    }

    #[test]
    fn deletion_and_rewrite_on_one_side() {
        let a = rec("a", "10:00:00", "v1");
        let a2 = rec("a", "10:00:00", "v2");
        let b = rec("b", "10:00:01", "gone");
        let base = lines(&[a.clone(), b.clone()]);
        let merged = merge(
            &base,
            &lines(&[a2.clone(), b.clone()]),
            &lines(std::slice::from_ref(&a)),
        );
        assert_eq!(merged.bytes, lines(&[a2]));
    }

    #[test]
    fn divergent_rewrite_keeps_both_and_reports() {
        let a = rec("a", "10:00:00", "v1");
        let merged = merge(
            &lines(&[a]),
            &lines(&[rec("a", "10:00:00", "v2")]),
            &lines(&[rec("a", "10:00:00", "v3")]),
        );
        assert_eq!(merged.bytes.split(|&b| b == b'\n').count(), 3);
        assert_eq!(
            merged.notices,
            vec![Notice::DivergentRecord { id: "a".into() }]
        );
    }

    #[test]
    fn garbage_is_kept_and_reported_with_its_side_and_line() {
        let a = rec("a", "10:00:00", "x");
        let ours = format!("{a}\nnot json\n");
        let merged = merge(b"", ours.as_bytes(), b"");
        assert_eq!(merged.bytes, format!("{a}\nnot json\n").into_bytes());
        assert!(matches!(
            &merged.notices[..],
            [Notice::KeptInvalidLine {
                side: Side::Ours,
                line: 2,
                ..
            }]
        ));
    }
}
