//! What a page's query or form says, as the application functions take it.

use serde::Deserialize;

use crate::app::recall::RecallInput;
use crate::domain::recall::Captured;

/// The timeline's filters: recall's (`q`, `type`, `author`, `since`,
/// `captured`), the verdict (`trusted`, the default; `all`; `quarantined`),
/// `branch`, `stale`, and the page (`after`: the last memory's timestamp
/// and id, space-separated).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Filters {
    #[serde(default)]
    pub q: String,
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub author: String,
    #[serde(default)]
    pub since: String,
    #[serde(default)]
    pub branch: String,
    #[serde(default)]
    pub captured: String,
    #[serde(default)]
    pub verdict: String,
    #[serde(default)]
    pub stale: String,
    #[serde(default)]
    pub after: String,
    /// `on`: the page loads again every few seconds (no filter is being
    /// typed).
    #[serde(default)]
    pub live: String,
}

fn given(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

impl Filters {
    /// The recall they ask for, a page long.
    pub fn recall_input(&self) -> RecallInput {
        let mut input = RecallInput::plain(given(&self.q), super::PAGE);
        input.kinds = given(&self.kind).into_iter().collect();
        input.author = given(&self.author);
        input.since = given(&self.since);
        input.captured = match self.captured.as_str() {
            "only" => Captured::Only,
            "exclude" => Captured::Exclude,
            _ => Captured::Include,
        };
        match self.verdict.as_str() {
            "all" => input.include_untrusted = true,
            "quarantined" => input.narrow.quarantined_only = true,
            _ => {}
        }
        input.narrow.branch = given(&self.branch);
        input.narrow.stale_only = self.stale == "on";
        // Pages of the newest-first list only: a ranked search shows its
        // best page.
        if input.query.is_none() {
            input.narrow.after = self
                .after
                .split_once(' ')
                .map(|(timestamp, id)| (timestamp.to_owned(), id.to_owned()));
        }
        input
    }

    /// These filters as a query string, the page after `last` when given.
    pub fn query_after(&self, last: Option<(&str, &str)>) -> String {
        let mut pairs: Vec<(&str, String)> = [
            ("q", &self.q),
            ("type", &self.kind),
            ("author", &self.author),
            ("since", &self.since),
            ("branch", &self.branch),
            ("captured", &self.captured),
            ("verdict", &self.verdict),
            ("stale", &self.stale),
        ]
        .into_iter()
        .filter(|(_, value)| !value.is_empty())
        .map(|(key, value)| (key, value.clone()))
        .collect();
        if let Some((timestamp, id)) = last {
            pairs.push(("after", format!("{timestamp} {id}")));
        }
        pairs
            .iter()
            .map(|(key, value)| format!("{key}={}", percent(value)))
            .collect::<Vec<_>>()
            .join("&")
    }

    /// These filters, the first page, following.
    pub fn query_following(&self) -> String {
        let query = self.query_after(None);
        if query.is_empty() {
            "live=on".to_owned()
        } else {
            format!("{query}&live=on")
        }
    }

    /// Whether any filter narrows the list.
    pub fn any(&self) -> bool {
        !self.query_after(None).is_empty()
    }
}

/// `text` percent-encoded for a URL's query (all but unreserved bytes).
pub fn percent(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A confirmed action's form: the viewer's form key, and for a
/// supersession the new memory (its text, type, tags and files, as
/// `goldfish store` takes them).
#[derive(Debug, Clone, Deserialize)]
pub struct Confirm {
    #[serde(default)]
    pub key: String,
    #[serde(default)]
    pub text: String,
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub tags: String,
    #[serde(default)]
    pub files: String,
}

/// The branch review page's query: the branch chosen from its list.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Branch {
    #[serde(default)]
    pub name: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_become_a_recall_and_a_query_again() {
        let filters = Filters {
            q: String::new(),
            kind: "decision".into(),
            verdict: "quarantined".into(),
            stale: "on".into(),
            branch: "main".into(),
            after: "2026-11-21T08:00:00.000Z 01ABC".into(),
            ..Filters::default()
        };
        let input = filters.recall_input();
        assert_eq!(input.kinds, ["decision"]);
        assert!(input.narrow.quarantined_only && input.narrow.stale_only);
        assert_eq!(input.narrow.branch.as_deref(), Some("main"));
        assert_eq!(
            input.narrow.after,
            Some(("2026-11-21T08:00:00.000Z".into(), "01ABC".into()))
        );
        assert_eq!(
            filters.query_after(Some(("2026-11-21T08:00:00.000Z", "01X"))),
            "type=decision&branch=main&verdict=quarantined&stale=on&after=2026-11-21T08%3A00%3A00.000Z%2001X"
        );
        assert_eq!(percent("<a&b>"), "%3Ca%26b%3E");
    }
}
