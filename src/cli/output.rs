//! How results look: text for people, JSON Lines for agents and scripts.

use std::io::Write;

use anyhow::Context;

use super::CliError;
use crate::index::search::IndexedMemory;

/// One memory per line; field names are those of [`IndexedMemory`].
pub(super) fn memories_json(
    memories: &[IndexedMemory],
    out: &mut dyn Write,
) -> Result<(), CliError> {
    for memory in memories {
        let round = |x: f64| (x * 10_000.0).round() / 10_000.0;
        let mut memory = memory.clone();
        memory.score = round(memory.score);
        memory.keyword = memory.keyword.map(round);
        memory.similarity = memory.similarity.map(round);
        let line = serde_json::to_string(&memory).context("serializing a memory")?;
        writeln!(out, "{line}").context("writing output")?;
    }
    Ok(())
}

/// `ID  DATE TIME  TYPE  AUTHOR  [tags]  (flagged: …)` then the content,
/// indented.
pub(super) fn memories_text(
    memories: &[IndexedMemory],
    show_workspace: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    for (index, m) in memories.iter().enumerate() {
        if index > 0 {
            writeln!(out).context("writing output")?;
        }
        let when = m
            .timestamp
            .get(..16)
            .unwrap_or(&m.timestamp)
            .replace('T', " ");
        let mut header = format!("{}  {when}  {}", m.id, m.kind);
        if show_workspace {
            header.push_str(&format!("  @{}", m.workspace));
        }
        if let Some(author) = &m.author {
            header.push_str(&format!("  {author}"));
        }
        if !m.tags.is_empty() {
            header.push_str(&format!("  [{}]", m.tags.join(", ")));
        }
        if !m.flags.is_empty() {
            // Marked, so a reader does not take it at face value: see
            // `goldfish doctor`.
            header.push_str(&format!("  (flagged: {})", m.flags.join(", ")));
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
pub(super) fn warn_problems(problems: &[impl std::fmt::Display], dir: &str) {
    for problem in problems {
        eprintln!("warning: {dir}/{problem}");
    }
}

/// A digest as recall reports it.
pub(super) struct DigestReport {
    pub text: String,
    pub tokens: usize,
    pub tokens_of_sources: usize,
    /// Extractive digests: each sentence with its memory.
    pub sentences: Vec<crate::digest::Picked>,
    /// `llm` or `extractive`.
    pub distill: &'static str,
    /// Why the LLM's answer was not used, when it was asked.
    pub fallback_reason: Option<String>,
    /// Whether the LLM digest came from the cache.
    pub cached: bool,
}

/// A digest: its text, or one JSON object with the token accounting.
pub(super) fn digest(
    digested: &super::ops::Digested,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let super::ops::Digested {
        report: digest,
        hits: sources,
        budget,
        tokenizer,
    } = digested;
    if !json {
        out.write_all(digest.text.as_bytes())
            .context("writing output")?;
        return Ok(());
    }
    let reduction = if digest.tokens_of_sources > 0 {
        100.0 * (1.0 - digest.tokens as f64 / digest.tokens_of_sources as f64)
    } else {
        0.0
    };
    let value = serde_json::json!({
        "digest": digest.text,
        "tokens": digest.tokens,
        "tokens_of_sources": digest.tokens_of_sources,
        "reduction_percent": (reduction * 10.0).round() / 10.0,
        "budget": budget,
        "tokenizer": tokenizer,
        "distill": digest.distill,
        "fallback_reason": digest.fallback_reason,
        "cached": digest.cached,
        "sources": sources
            .iter()
            .map(|m| serde_json::json!({ "id": m.id, "timestamp": m.timestamp, "type": m.kind }))
            .collect::<Vec<_>>(),
        "sentences": digest.sentences,
    });
    writeln!(out, "{value}").context("writing output")?;
    Ok(())
}
