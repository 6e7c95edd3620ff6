//! Three-way merge of memory logs.
//!
//! The merge counts lines. Each distinct line (its bytes, without the line
//! terminator) has a count on the base, ours and theirs, and is kept
//!
//! - `min(ours, theirs)` times (what both sides have), plus
//! - as many more times as the side with more has beyond the base,
//!
//! so a line added on either side is kept, a line both sides added appears
//! once, a line one side deleted stays deleted, and a line a side has twice
//! (a duplicate record, the same garbage line twice) keeps its copies. Every
//! kept line is written back byte for byte as a side has it: the merge never
//! re-serializes a record.
//!
//! Records are also compared by their canonical form ([`Entry::to_line`]): two
//! spellings of one record (other key order, other whitespace) count as one
//! record, so a record both sides added, or both respelled, in different ways
//! is kept once, in the spelling that sorts first.
//!
//! The output is sorted: records by (timestamp, id, line), then the lines that
//! are not records (garbage, conflict markers, half lines), sorted by bytes and
//! reported as [`Notice`]s. Merging A into B and B into A gives byte-identical
//! results. Nothing here does I/O.

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

/// One distinct line of the inputs.
struct Line<'a> {
    raw: &'a [u8],
    /// `(timestamp, id)` for a record; `None` for a line that is not one.
    record: Option<(String, String)>,
    /// The record this line spells ([`Group`]); a line that is not a record
    /// is a group of its own.
    group: usize,
    /// How many times base, ours and theirs have this line.
    counts: [usize; 3],
    /// Where an invalid line was first seen on ours or theirs, and why.
    first_invalid: Option<(Side, usize, ParseError)>,
}

/// The lines that spell one record (or one line that is not a record).
struct Group {
    counts: [usize; 3],
    /// The canonical line of a record, to tell divergent versions of an id apart.
    canonical: Vec<u8>,
}

/// How many copies of a line the merge keeps, given how many the base, ours
/// and theirs have: what both sides have, plus what the side with more added
/// beyond the base.
fn kept([base, ours, theirs]: [usize; 3]) -> usize {
    let (low, high) = (ours.min(theirs), ours.max(theirs));
    low + high.saturating_sub(base.max(low))
}

/// Merges `ours` and `theirs`, two descendants of `base`.
pub fn merge(base: &[u8], ours: &[u8], theirs: &[u8]) -> Merged {
    let mut lines: Vec<Line> = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    // Byte-identical lines are common to all three sides: parse each once.
    let mut by_raw: HashMap<&[u8], usize> = HashMap::new();
    let mut by_canonical: HashMap<Vec<u8>, usize> = HashMap::new();

    for (side, slot, bytes) in [
        (Side::Base, 0, base),
        (Side::Ours, 1, ours),
        (Side::Theirs, 2, theirs),
    ] {
        for (number, raw) in split_lines(bytes) {
            let index = *by_raw.entry(raw).or_insert_with(|| {
                let (canonical, record) = match Entry::parse(raw) {
                    Ok(entry) => {
                        let record = (entry.timestamp().to_owned(), entry.id().to_owned());
                        (entry.to_line().into_bytes(), Some(record))
                    }
                    // Not a record: its own group, apart from any canonical line.
                    Err(_) => (Vec::new(), None),
                };
                let group = if record.is_some() {
                    *by_canonical.entry(canonical.clone()).or_insert_with(|| {
                        groups.push(Group {
                            counts: [0; 3],
                            canonical,
                        });
                        groups.len() - 1
                    })
                } else {
                    groups.push(Group {
                        counts: [0; 3],
                        canonical,
                    });
                    groups.len() - 1
                };
                lines.push(Line {
                    raw,
                    record,
                    group,
                    counts: [0; 3],
                    first_invalid: None,
                });
                lines.len() - 1
            });
            let line = &mut lines[index];
            line.counts[slot] += 1;
            groups[line.group].counts[slot] += 1;
            if side != Side::Base && line.record.is_none() && line.first_invalid.is_none() {
                let reason = Entry::parse(raw).expect_err("an invalid line stays invalid");
                line.first_invalid = Some((side, number, reason));
            }
        }
    }

    let mut copies: Vec<usize> = lines.iter().map(|line| kept(line.counts)).collect();
    // Two spellings of one record, each kept by the line count (both sides
    // added it, or respelled it, differently), would repeat the record: keep
    // the record's count, dropping the spellings that sort last.
    let mut spellings: Vec<Vec<usize>> = vec![Vec::new(); groups.len()];
    for (index, line) in lines.iter().enumerate() {
        if copies[index] > 0 {
            spellings[line.group].push(index);
        }
    }
    for (group, members) in groups.iter().zip(&mut spellings) {
        let allowed = kept(group.counts);
        let mut total: usize = members.iter().map(|&index| copies[index]).sum();
        if total <= allowed {
            continue;
        }
        members.sort_by(|&a, &b| lines[b].raw.cmp(lines[a].raw));
        for &index in members.iter() {
            let drop = copies[index].min(total - allowed);
            copies[index] -= drop;
            total -= drop;
            if total == allowed {
                break;
            }
        }
    }

    let mut kept_lines: Vec<usize> = (0..lines.len()).filter(|&i| copies[i] > 0).collect();
    // Records first by (timestamp, id, line); then invalid lines by bytes.
    kept_lines.sort_by(|&a, &b| {
        let (a, b) = (&lines[a], &lines[b]);
        match (&a.record, &b.record) {
            (Some(ra), Some(rb)) => ra.cmp(rb).then_with(|| a.raw.cmp(b.raw)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => a.raw.cmp(b.raw),
        }
    });

    let mut notices = Vec::new();
    let mut bytes = Vec::with_capacity(
        kept_lines
            .iter()
            .map(|&i| (lines[i].raw.len() + 1) * copies[i])
            .sum(),
    );
    // Versions of one id need not be adjacent: they may differ in timestamp.
    let mut version_of_id: HashMap<&str, usize> = HashMap::new();
    let mut reported_ids: HashSet<&str> = HashSet::new();
    for &index in &kept_lines {
        let line = &lines[index];
        for _ in 0..copies[index] {
            bytes.extend_from_slice(line.raw);
            bytes.push(b'\n');
        }
        match (&line.record, &line.first_invalid) {
            (Some((_, id)), _) => {
                let first = *version_of_id.entry(id).or_insert(line.group);
                if groups[first].canonical != groups[line.group].canonical
                    && reported_ids.insert(id)
                {
                    notices.push(Notice::DivergentRecord { id: id.clone() });
                }
            }
            (None, Some((side, number, reason))) => notices.push(Notice::KeptInvalidLine {
                side: *side,
                line: *number,
                reason: reason.clone(),
            }),
            (None, None) => {}
        }
    }
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
