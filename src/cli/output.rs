//! How results look: text for people, JSON Lines for agents and scripts.

use std::io::Write;

use anyhow::Context;
use serde::Serialize;

use super::CliError;
use crate::memory::view::Problem;
use crate::recall::Hit;

/// One recalled memory in `--json` output. Field names are stable.
#[derive(Serialize)]
struct HitJson<'a> {
    id: &'a str,
    timestamp: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    content: &'a str,
    source: Option<&'a str>,
    tags: &'a [String],
    author: Option<&'a str>,
    branch: Option<&'a str>,
    commit: Option<&'a str>,
    files: &'a [String],
    /// File inside the memory folder, and 1-based line.
    file: &'a str,
    line: usize,
    score: f64,
}

pub(super) fn hits_json(hits: &[Hit<'_>], out: &mut dyn Write) -> Result<(), CliError> {
    for hit in hits {
        let m = &hit.located.memory;
        let json = HitJson {
            id: &m.id,
            timestamp: &m.timestamp,
            kind: &m.kind,
            content: &m.content,
            source: m.source.as_deref(),
            tags: &m.tags,
            author: m.author.as_deref(),
            branch: m.branch.as_deref(),
            commit: m.commit.as_deref(),
            files: &m.files,
            file: &hit.located.file,
            line: hit.located.line,
            score: (hit.score * 1000.0).round() / 1000.0,
        };
        let line = serde_json::to_string(&json).context("serializing a memory")?;
        writeln!(out, "{line}").context("writing output")?;
    }
    Ok(())
}

/// `ID  DATE TIME  TYPE  AUTHOR  [tags]` then the content, indented.
pub(super) fn hits_text(hits: &[Hit<'_>], out: &mut dyn Write) -> Result<(), CliError> {
    for (index, hit) in hits.iter().enumerate() {
        let m = &hit.located.memory;
        if index > 0 {
            writeln!(out).context("writing output")?;
        }
        let when = m
            .timestamp
            .get(..16)
            .unwrap_or(&m.timestamp)
            .replace('T', " ");
        let mut header = format!("{}  {when}  {}", m.id, m.kind);
        if let Some(author) = &m.author {
            header.push_str(&format!("  {author}"));
        }
        if !m.tags.is_empty() {
            header.push_str(&format!("  [{}]", m.tags.join(", ")));
        }
        writeln!(out, "{header}").context("writing output")?;
        for line in m.content.lines() {
            writeln!(out, "    {line}").context("writing output")?;
        }
        if !m.files.is_empty() {
            writeln!(out, "    files: {}", m.files.join(", ")).context("writing output")?;
        }
    }
    Ok(())
}

/// Reports lines readers skipped, on stderr.
pub(super) fn warn_problems(problems: &[Problem], dir: &str) {
    for problem in problems {
        eprintln!("warning: {dir}/{problem}");
    }
}
