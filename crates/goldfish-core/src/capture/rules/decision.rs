//! Decision records: a new markdown file in a decision folder (or laid
//! out as one elsewhere) is a decision, its title and its decision.

use crate::capture::event::Facts;
use crate::capture::redact;

use super::{Observation, RULES_SOURCE, clip};

/// Folders that hold architecture decision records, by the conventions of
/// adr-tools (`doc/adr/`), MADR (`docs/decisions/`) and their kin.
const DECISION_FOLDERS: &[&str] = &["adr", "adrs", "decisions", "architecture-decisions"];

/// A new decision record written (a markdown file in a decision folder) is
/// a decision: its title and decision (else first paragraph), naming the
/// file. The layouts of adr-tools and Nygard (`# 7. Title`, `## Status`,
/// `## Decision`) and MADR (YAML front matter or `* Status:` lines,
/// `## Decision Outcome`) are read; numbers (`7.`, `ADR 7:`, `0007`) and
/// status, date and deciders lines are left out.
pub(super) fn decision_record(facts: &Facts) -> Option<Observation> {
    let [path] = facts.modified.as_slice() else {
        return None;
    };
    let path_ref = std::path::Path::new(path);
    let in_folder = path_ref
        .parent()
        .and_then(|dir| dir.file_name())
        .and_then(|name| name.to_str())
        .is_some_and(|name| DECISION_FOLDERS.contains(&name.to_ascii_lowercase().as_str()));
    if path_ref.extension().is_none_or(|ext| ext != "md") {
        return None;
    }
    let text = facts.written.as_deref()?;
    if !in_folder && !reads_as_record(text) {
        return None;
    }
    let mut lines = without_front_matter(text).lines().map(str::trim).peekable();
    let title = record_title(lines.by_ref().find(|line| !line.is_empty())?);
    // A setext heading's underline.
    lines.next_if(|line| !line.is_empty() && line.chars().all(|c| c == '=' || c == '-'));
    // The paragraphs after the title, each under the heading it follows.
    let mut paragraphs: Vec<(String, Vec<&str>)> = Vec::new();
    let mut heading = String::new();
    let mut open = false;
    for line in lines {
        if line.starts_with('#') {
            heading = line.trim_start_matches('#').trim().to_lowercase();
            open = false;
        } else if line.is_empty() || is_record_metadata(line) {
            open = false;
        } else if open {
            paragraphs.last_mut().expect("open").1.push(line);
        } else {
            paragraphs.push((heading.clone(), vec![line]));
            open = true;
        }
    }
    // The decision itself (MADR's "Decision Outcome", Nygard's "Decision"),
    // else the first paragraph that is not under a status or date heading.
    let paragraph = paragraphs
        .iter()
        .find(|(heading, _)| heading.starts_with("decision"))
        .or_else(|| {
            paragraphs
                .iter()
                .find(|(heading, _)| !matches!(heading.as_str(), "status" | "date"))
        })
        .map(|(_, lines)| lines.join(" "))
        .unwrap_or_default();
    // A title or decision that was all order (removed when the facts were
    // read) is no decision.
    if redact::said(&title) == 0 || redact::said(&paragraph) == 0 {
        return None;
    }
    let content = format!("Decision ({path}): {title}. {}", clip(&paragraph, 400));
    let (content, _) = redact::remove_secrets(&content);
    Some(Observation {
        kind: "decision".to_owned(),
        content,
        files: vec![path.clone()],
        cites: Vec::new(),
        source: RULES_SOURCE.to_owned(),
        supersedes: None,
    })
}

/// Whether a markdown text outside a decision folder is laid out as a
/// decision record, wherever the project keeps them (`docs/architecture/`,
/// `design/`): a heading that is the decision (Nygard's "Decision", MADR's
/// "Decision Outcome") and one a record has beside it ("Status", "Context",
/// "Consequences", MADR's "Context and Problem Statement").
fn reads_as_record(text: &str) -> bool {
    let headings: Vec<String> = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("##"))
        .map(|heading| {
            heading
                .trim_start_matches('#')
                .trim()
                .trim_end_matches(':')
                .to_lowercase()
        })
        .collect();
    let has = |names: &[&str]| headings.iter().any(|h| names.contains(&h.as_str()));
    has(&["decision", "decision outcome"])
        && has(&[
            "status",
            "context",
            "consequences",
            "context and problem statement",
        ])
}

/// MADR's YAML front matter (`---` … `---`) left out.
fn without_front_matter(text: &str) -> &str {
    let trimmed = text.trim_start();
    let Some(rest) = trimmed.strip_prefix("---\n") else {
        return text;
    };
    match rest.find("\n---") {
        Some(end) => rest[end + 4..].trim_start_matches(['-', '\n']),
        None => text,
    }
}

/// A record's title without its heading marks and number: `# 7. Use WAL`,
/// `# ADR 7: Use WAL`, `# ADR-0007 - Use WAL`, `# 0007 Use WAL` → `Use WAL`.
fn record_title(line: &str) -> String {
    let mut title = line.trim_start_matches('#').trim();
    for prefix in ["ADR", "adr", "Adr"] {
        if let Some(rest) = title.strip_prefix(prefix)
            && rest
                .trim_start_matches(['-', ' '])
                .starts_with(|c: char| c.is_ascii_digit())
        {
            title = rest.trim_start_matches(['-', ' ']);
        }
    }
    let number_end = title
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(title.len());
    if number_end > 0 {
        let rest = &title[number_end..];
        let separated = rest.trim_start_matches(['.', ':', '-', '–', '—', ' ']);
        // `7. Title`, `7: Title`, `0007 Title`: a number, then a separator.
        if separated.len() < rest.len() {
            title = separated;
        }
    }
    title.trim().trim_end_matches('.').trim().to_owned()
}

/// `Status: Accepted`, `* Date: 2026-11-02`, `- **Deciders:** Ada`: a
/// record's metadata, not what it says.
fn is_record_metadata(line: &str) -> bool {
    let line = line
        .trim_start_matches(['*', '-', ' '])
        .trim_start_matches("**");
    let Some((key, _)) = line.split_once(':') else {
        return false;
    };
    matches!(
        key.trim_end_matches("**").trim().to_lowercase().as_str(),
        "status"
            | "date"
            | "deciders"
            | "decision-makers"
            | "authors"
            | "author"
            | "consulted"
            | "informed"
            | "technical story"
            | "supersedes"
            | "superseded by"
    )
}
