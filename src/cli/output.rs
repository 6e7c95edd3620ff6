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
        if let Some(ranking) = &mut memory.ranking {
            ranking.keyword = round(ranking.keyword);
            ranking.semantic = round(ranking.semantic);
            ranking.time_cue = round(ranking.time_cue);
        }
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

/// Whether a character would act on a terminal instead of showing: C0
/// controls other than newline and tab, DEL, C1 controls, and the marks that
/// reorder text (bidi overrides, isolates and marks).
fn acts_on_terminal(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every character that would act on a terminal written as a
/// visible escape: `\r`, or `\uXXXX` (as JSON writes it, so a JSON line stays
/// valid and means the same).
pub(super) fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(acts_on_terminal) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            c if acts_on_terminal(c) => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A writer that passes text through [`terminal_safe`]: what a memory holds
/// (an escape sequence, a carriage return, a bidi override) is shown, never
/// run by the terminal. Bytes that are not UTF-8 are written as `\xNN`; a
/// character split across two writes is held until it is whole.
pub(super) struct TerminalSafe<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> TerminalSafe<W> {
    pub(super) fn new(inner: W) -> Self {
        TerminalSafe {
            inner,
            pending: Vec::new(),
        }
    }

    /// Writes what `pending` holds up to an incomplete character at its end
    /// (everything when `all`).
    fn drain(&mut self, all: bool) -> std::io::Result<()> {
        let mut start = 0;
        while start < self.pending.len() {
            match std::str::from_utf8(&self.pending[start..]) {
                Ok(text) => {
                    self.inner.write_all(terminal_safe(text).as_bytes())?;
                    start = self.pending.len();
                }
                Err(err) => {
                    let valid = &self.pending[start..start + err.valid_up_to()];
                    let valid = std::str::from_utf8(valid).expect("checked by valid_up_to");
                    self.inner.write_all(terminal_safe(valid).as_bytes())?;
                    start += err.valid_up_to();
                    let bad = match err.error_len() {
                        Some(n) => n,
                        None if all => self.pending.len() - start,
                        None => break,
                    };
                    for byte in &self.pending[start..start + bad] {
                        write!(self.inner, "\\x{byte:02x}")?;
                    }
                    start += bad;
                }
            }
        }
        self.pending.drain(..start);
        Ok(())
    }
}

impl<W: Write> Write for TerminalSafe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        self.drain(false)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.drain(true)?;
        self.inner.flush()
    }
}

/// `n` and the noun in the number it takes: "1 memory", "2 memories".
pub(crate) fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// [`count`] of memories.
pub(crate) fn memories(n: impl Into<u64>) -> String {
    count(n, "memory", "memories")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_marks_are_escaped_visibly() {
        assert_eq!(terminal_safe("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(
            terminal_safe("a\u{1b}[2Jb\rc\u{7}\u{9b}d\u{202e}e"),
            "a\\u001b[2Jb\\rc\\u0007\\u009bd\\u202ee"
        );
    }

    #[test]
    fn a_character_split_across_writes_is_kept_whole() {
        let mut out = TerminalSafe::new(Vec::new());
        let text = "é\u{202e}".as_bytes();
        for byte in text {
            out.write_all(std::slice::from_ref(byte)).unwrap();
        }
        out.write_all(b"\xff").unwrap();
        out.flush().unwrap();
        assert_eq!(String::from_utf8(out.inner).unwrap(), "é\\u202e\\xff");
    }
}
