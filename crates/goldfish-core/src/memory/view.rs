//! What a reader sees of a log: every memory that no tombstone forgets, with
//! the file and line it came from, and the lines that could not be read.

use std::collections::HashMap;

use goldfish_log::record::parse_log;

use super::{Entry, Memory};

/// A memory and where it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    pub memory: Memory,
    /// File name inside the memory folder, e.g. `2026-11-21.jsonl`.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
}

/// The bytes of a UTF-8 byte order mark.
pub const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// What to add to the reason line `number` of a file is unreadable: the
/// file may start with a UTF-8 byte order mark (`starts_with_bom`), which
/// no record can.
pub fn bom_note(starts_with_bom: bool, number: usize) -> &'static str {
    if number == 1 && starts_with_bom {
        "; the file starts with a UTF-8 byte order mark (bytes EF BB BF): remove it"
    } else {
        ""
    }
}

/// A line a reader skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: String,
    /// 1-based; 0 when the problem is the whole file (it could not be read).
    pub line: usize,
    pub reason: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            0 => write!(f, "{}: {}", self.file, self.reason),
            line => write!(f, "{}:{line}: {}", self.file, self.reason),
        }
    }
}

/// The live memories of a log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogView {
    /// Sorted by (timestamp, id).
    pub memories: Vec<Located>,
    /// Ids forgotten by a tombstone, with the time of the first one.
    pub forgotten: HashMap<String, String>,
    pub problems: Vec<Problem>,
}

impl LogView {
    /// Reads the given files (name, bytes) as one log: tombstones anywhere
    /// hide the memory they name, wherever it is.
    pub fn build<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> LogView {
        let mut view = LogView::default();
        let mut seen: HashMap<String, (String, usize)> = HashMap::new();
        let mut memories = Vec::new();
        for (file, bytes) in files {
            for line in parse_log(bytes) {
                match line.parsed {
                    Ok(Entry::Memory(memory)) => {
                        if let Some((first_file, first_line)) = seen.get(&memory.id) {
                            view.problems.push(Problem {
                                file: file.to_owned(),
                                line: line.number,
                                reason: format!(
                                    "id {} already used at {first_file}:{first_line}; this line is ignored",
                                    memory.id
                                ),
                            });
                            continue;
                        }
                        seen.insert(memory.id.clone(), (file.to_owned(), line.number));
                        memories.push(Located {
                            memory,
                            file: file.to_owned(),
                            line: line.number,
                        });
                    }
                    Ok(Entry::Tombstone(tombstone)) => {
                        let at = view.forgotten.entry(tombstone.forgets).or_default();
                        if at.is_empty() || tombstone.timestamp < *at {
                            *at = tombstone.timestamp;
                        }
                    }
                    // A release says nothing of what a reader sees: the
                    // index weighs it against the trust policy.
                    Ok(Entry::Release(_)) => {}
                    Err(err) => view.problems.push(Problem {
                        file: file.to_owned(),
                        line: line.number,
                        reason: format!(
                            "not a memory record ({err}{}); skipped",
                            bom_note(bytes.starts_with(BYTE_ORDER_MARK), line.number)
                        ),
                    }),
                }
            }
        }
        memories.retain(|m| !view.forgotten.contains_key(&m.memory.id));
        memories.sort_by(|a, b| {
            (&a.memory.timestamp, &a.memory.id).cmp(&(&b.memory.timestamp, &b.memory.id))
        });
        view.memories = memories;
        view
    }

    /// The memory with this id, or the only one whose id starts with it.
    pub fn find(&self, id_or_prefix: &str) -> Lookup<'_> {
        let needle = id_or_prefix.trim().to_ascii_uppercase();
        if let Some(exact) = self.memories.iter().find(|m| m.memory.id == needle) {
            return Lookup::Found(exact);
        }
        let matches: Vec<&Located> = self
            .memories
            .iter()
            .filter(|m| !needle.is_empty() && m.memory.id.starts_with(&needle))
            .collect();
        match matches.as_slice() {
            [] => self.find_forgotten(&needle),
            [one] => Lookup::Found(one),
            many => Lookup::Ambiguous(many.iter().map(|m| m.memory.id.clone()).collect()),
        }
    }
}

impl LogView {
    /// The forgotten memory `needle` (an id or a prefix) names alone.
    fn find_forgotten(&self, needle: &str) -> Lookup<'_> {
        let mut matches: Vec<(&String, &String)> = self
            .forgotten
            .iter()
            .filter(|(id, _)| !needle.is_empty() && id.starts_with(needle))
            .collect();
        if let Some(exact) = matches.iter().find(|(id, _)| id.as_str() == needle) {
            matches = vec![*exact];
        }
        match matches.as_slice() {
            [] => Lookup::Missing,
            [(id, at)] => Lookup::Forgotten {
                id: (*id).clone(),
                at: (*at).clone(),
            },
            many => {
                let mut ids: Vec<String> = many.iter().map(|(id, _)| (*id).clone()).collect();
                ids.sort();
                Lookup::Ambiguous(ids)
            }
        }
    }
}

/// The result of [`LogView::find`].
#[derive(Debug, PartialEq)]
pub enum Lookup<'a> {
    Found(&'a Located),
    /// Forgotten: the memory's id, and when (the first tombstone's time).
    Forgotten {
        id: String,
        at: String,
    },
    Missing,
    Ambiguous(Vec<String>),
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str =
        r#"{"id":"01A","timestamp":"2026-11-21T10:00:00.000Z","type":"decision","content":"a"}"#;
    const B: &str =
        r#"{"id":"01B","timestamp":"2026-11-20T10:00:00.000Z","type":"insight","content":"b"}"#;
    const FORGET_A: &str =
        r#"{"id":"01C","timestamp":"2026-11-22T10:00:00.000Z","type":"tombstone","forgets":"01A"}"#;

    #[test]
    fn tombstones_in_any_file_apply_and_order_is_by_time() {
        let day1 = format!("{A}\ngarbage\n{B}\n");
        let day2 = format!("{FORGET_A}\n");
        let view = LogView::build([
            ("2026-11-22.jsonl", day2.as_bytes()),
            ("2026-11-21.jsonl", day1.as_bytes()),
        ]);
        let ids: Vec<_> = view.memories.iter().map(|m| m.memory.id.as_str()).collect();
        assert_eq!(ids, vec!["01B"]);
        assert_eq!(view.memories[0].line, 3);
        assert_eq!(view.problems.len(), 1);
        assert_eq!(view.problems[0].file, "2026-11-21.jsonl");
        assert_eq!(view.problems[0].line, 2);
        let forgotten = Lookup::Forgotten {
            id: "01A".into(),
            at: "2026-11-22T10:00:00.000Z".into(),
        };
        assert_eq!(view.find("01a"), forgotten);
        assert_eq!(view.find("01A"), forgotten);
    }

    #[test]
    fn lookup_by_prefix() {
        let log = format!("{A}\n{B}\n");
        let view = LogView::build([("x.jsonl", log.as_bytes())]);
        assert!(matches!(view.find("01b"), Lookup::Found(m) if m.memory.id == "01B"));
        assert_eq!(
            view.find("01"),
            Lookup::Ambiguous(vec!["01B".into(), "01A".into()])
        );
        assert_eq!(view.find("zz"), Lookup::Missing);
    }
}
