//! How results look: text for people, JSON Lines for agents and scripts.

use std::io::Write;

use anyhow::Context;

use super::CliError;
use crate::app::Session;
use crate::app::digest::Digested;
use crate::app::render::{memory_text, terminal_safe};
use crate::domain::recalled::IndexedMemory;
use crate::front::wire;

/// One memory per line ([`wire::Memory`]), scores rounded.
pub(super) fn memories_json(
    memories: &[IndexedMemory],
    out: &mut dyn Write,
) -> Result<(), CliError> {
    for memory in memories {
        let memory = wire::Memory::from(memory).rounded();
        let line = serde_json::to_string(&memory).context("serializing a memory")?;
        writeln!(out, "{line}").context("writing output")?;
    }
    Ok(())
}

/// Memories as text, a blank line between two.
pub(super) fn memories_text(
    memories: &[IndexedMemory],
    show_workspace: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    for (index, m) in memories.iter().enumerate() {
        if index > 0 {
            writeln!(out).context("writing output")?;
        }
        out.write_all(memory_text(m, show_workspace).as_bytes())
            .context("writing output")?;
    }
    Ok(())
}

/// Notes and warnings an operation left, on stderr.
pub(super) fn notices(session: &mut Session) {
    for left in session.take_notices() {
        crate::front::stderr::notice(&left);
    }
}

/// Why recall answered "nothing relevant", as one JSON line: the
/// judgement ([`crate::domain::relevance::Judgement`]: each word and
/// whether the log uses it, the share, the vocabulary and the thresholds),
/// with `nothing_relevant` true and the missing words.
pub(super) fn nothing_relevant_json(
    judgement: &crate::domain::relevance::Judgement,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let round = |x: f64| (x * 10_000.0).round() / 10_000.0;
    let value = serde_json::json!({
        "nothing_relevant": true,
        "reason": judgement.reason(),
        "missing": judgement.missing().collect::<Vec<_>>(),
        "share": round(judgement.share),
        "words": judgement.words,
        "vocabulary": judgement.vocabulary,
        "min_share": judgement.min_share,
        "min_vocabulary": judgement.min_vocabulary,
    });
    writeln!(out, "{value}").context("writing output")?;
    Ok(())
}

/// A digest: its text, or one JSON object with the token accounting.
pub(super) fn digest(digested: &Digested, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let Digested {
        report: digest,
        hits: sources,
        budget,
        tokenizer,
    } = digested;
    if !json {
        // What an agent reads (the briefing, a recall with a budget) opens
        // with the line that says the memories are quoted data.
        writeln!(out, "{}", crate::app::render::QUOTED_DATA).context("writing output")?;
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

/// One older memory `store` found the new one may replace, as a JSON line
/// after the record: `{"replaceable": {id, timestamp, type, content,
/// decision, why}}`, `decision` being `superseded` (asked, and confirmed:
/// the record's `supersedes`), `declined` (asked) or `not-asked` (no
/// terminal), `why` the detector's reasons (cosine, same type, shared
/// files, the facts that differ, the older's words not restated).
pub fn replaceable_json(
    candidate: &crate::app::store::Replaceable,
    decision: &str,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let m = &candidate.memory;
    let line = serde_json::json!({
        "replaceable": {
            "id": m.id,
            "timestamp": m.timestamp,
            "type": m.kind,
            "content": m.content,
            "files": m.files,
            "decision": decision,
            "why": candidate.why,
        }
    });
    writeln!(out, "{line}").context("writing output")?;
    Ok(())
}

/// `store --json`'s line for a memory that is or will be quarantined
/// (after the record's line): its id, the reasons as `trust_reasons`
/// spells them, whether it is quarantined already (`now`: its text) or
/// only once committed, by whom, and what the detector found.
pub fn quarantine_json(
    id: &str,
    quarantine: &crate::app::store::Quarantine,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let line = serde_json::json!({
        "quarantine": {
            "id": id,
            "trust_reasons": quarantine.reasons,
            "now": quarantine.now,
            "committed_as": quarantine.committed_as,
            "finding": quarantine.finding,
        }
    });
    writeln!(out, "{line}").context("writing output")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
