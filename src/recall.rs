//! Recall over a [`LogView`]: filters, then keyword ranking. Pure: the caller
//! reads the log and passes "now" in.

use jiff::Timestamp;

use crate::memory::view::{Located, LogView};

/// What to recall.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Words to look for; `None` lists the newest memories.
    pub query: Option<String>,
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
    /// Any of these types (canonical spelling); empty means all.
    pub kinds: Vec<String>,
    /// Memories carrying every one of these tags (case-insensitive).
    pub tags: Vec<String>,
    /// Case-insensitive substring of the author.
    pub author: Option<String>,
    pub limit: usize,
}

/// One recalled memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit<'a> {
    pub located: &'a Located,
    /// Share of the query's words the memory contains, in [0, 1]; 1 without a query.
    pub score: f64,
}

/// Filters `view`, ranks what is left and keeps the best `limit`.
///
/// With a query: memories containing at least one of its words, most words
/// first, newest first among equals. Without: newest first.
pub fn recall<'a>(view: &'a LogView, request: &Request) -> Vec<Hit<'a>> {
    let terms = request.query.as_deref().map(terms).unwrap_or_default();
    let mut hits: Vec<Hit<'a>> = view
        .memories
        .iter()
        .filter(|located| passes_filters(located, request))
        .filter_map(|located| {
            if terms.is_empty() {
                return Some(Hit {
                    located,
                    score: 1.0,
                });
            }
            let haystack = searchable_text(located);
            let found = terms
                .iter()
                .filter(|term| haystack.contains(term.as_str()))
                .count();
            (found > 0).then(|| Hit {
                located,
                score: found as f64 / terms.len() as f64,
            })
        })
        .collect();
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| b.located.memory.timestamp.cmp(&a.located.memory.timestamp))
            .then_with(|| b.located.memory.id.cmp(&a.located.memory.id))
    });
    hits.truncate(request.limit);
    hits
}

fn passes_filters(located: &Located, request: &Request) -> bool {
    let memory = &located.memory;
    if request.since.is_some() || request.until.is_some() {
        let Ok(at) = memory.timestamp.parse::<Timestamp>() else {
            return false;
        };
        if request.since.is_some_and(|since| at < since)
            || request.until.is_some_and(|until| at > until)
        {
            return false;
        }
    }
    if !request.kinds.is_empty() && !request.kinds.contains(&memory.kind) {
        return false;
    }
    let has_tag = |wanted: &String| {
        memory
            .tags
            .iter()
            .any(|tag| tag.eq_ignore_ascii_case(wanted))
    };
    if !request.tags.iter().all(has_tag) {
        return false;
    }
    if let Some(author) = &request.author {
        let matches = memory
            .author
            .as_deref()
            .is_some_and(|name| name.to_lowercase().contains(&author.to_lowercase()));
        if !matches {
            return false;
        }
    }
    true
}

/// Lowercased words of a query, at least two characters, without repeats.
fn terms(query: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in query
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.' || c == '/'))
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| w.chars().count() >= 2)
    {
        if !terms.contains(&word) {
            terms.push(word);
        }
    }
    terms
}

fn searchable_text(located: &Located) -> String {
    let memory = &located.memory;
    let mut text = memory.content.to_lowercase();
    for extra in memory
        .tags
        .iter()
        .chain(&memory.files)
        .chain([&memory.kind])
    {
        text.push(' ');
        text.push_str(&extra.to_lowercase());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> LogView {
        let log = [
            r#"{"id":"01A","timestamp":"2026-11-19T10:00:00.000Z","type":"decision","content":"Use SQLite WAL mode for the index","tags":["db"],"author":"Ada Lovelace"}"#,
            r#"{"id":"01B","timestamp":"2026-11-20T10:00:00.000Z","type":"bug-fix","content":"Fixed the WAL checkpoint stall","author":"Grace Hopper"}"#,
            r#"{"id":"01C","timestamp":"2026-11-21T10:00:00.000Z","type":"checkpoint","content":"Halfway through the index rewrite","tags":["DB"]}"#,
        ]
        .join("\n");
        LogView::build([("2026-11.jsonl", log.as_bytes())])
    }

    fn ids(hits: &[Hit<'_>]) -> Vec<String> {
        hits.iter().map(|h| h.located.memory.id.clone()).collect()
    }

    #[test]
    fn newest_first_without_query() {
        let view = view();
        let hits = recall(
            &view,
            &Request {
                limit: 10,
                ..Request::default()
            },
        );
        assert_eq!(ids(&hits), ["01C", "01B", "01A"]);
    }

    #[test]
    fn more_query_words_rank_higher() {
        let view = view();
        let request = Request {
            query: Some("SQLite WAL".into()),
            limit: 10,
            ..Request::default()
        };
        let hits = recall(&view, &request);
        assert_eq!(ids(&hits), ["01A", "01B"]);
        assert_eq!(hits[0].score, 1.0);
        assert_eq!(hits[1].score, 0.5);
    }

    #[test]
    fn filters() {
        let view = view();
        let since = "2026-11-20T00:00:00Z".parse().ok();
        let check = |request: Request, expected: &[&str]| {
            let limit = if request.limit == 0 {
                10
            } else {
                request.limit
            };
            let request = Request { limit, ..request };
            assert_eq!(ids(&recall(&view, &request)), expected);
        };
        check(
            Request {
                since,
                ..Request::default()
            },
            &["01C", "01B"],
        );
        check(
            Request {
                until: since,
                ..Request::default()
            },
            &["01A"],
        );
        check(
            Request {
                kinds: vec!["bug-fix".into()],
                ..Request::default()
            },
            &["01B"],
        );
        check(
            Request {
                tags: vec!["db".into()],
                ..Request::default()
            },
            &["01C", "01A"],
        );
        check(
            Request {
                author: Some("grace".into()),
                ..Request::default()
            },
            &["01B"],
        );
        check(
            Request {
                limit: 1,
                ..Request::default()
            },
            &["01C"],
        );
    }
}
