//! Distillation: the recalled memories cut down to a digest that fits a token
//! budget. Extractive and deterministic: the digest is made of whole
//! sentences of the memories (so identifiers stay intact and nothing is
//! invented), each under a header naming its memory.
//!
//! 1. Split each memory into sentences.
//! 2. Score each sentence against the query: cosine similarity of its
//!    embedding (when there is a model) and the share of the query's words it
//!    contains, plus a little for the memory's recall rank. Without a query,
//!    the rank alone (newest first) decides. Off-topic sentences, and with a
//!    query those below half the best sentence's score, stay out even when
//!    there is room: a digest shorter than its budget beats one padded.
//! 3. Pick greedily by maximal marginal relevance: relevance minus
//!    similarity to what is already picked. A near-duplicate of a picked
//!    sentence is dropped, unless it names other identifiers or numbers (an
//!    update: "12 hours" after "5 hours").
//! 4. A picked sentence comes with its context, so the answer keeps what
//!    carries it: a memory short enough (a quarter of the budget) whole;
//!    else the sentences it continues ("It", "so", lower case), the ones
//!    after it that continue it or carry identifiers (a path, a symbol, a
//!    commit, a number), and never a piece shorter than a clause alone. When
//!    that does not fit, the sentence with the least context that does.
//! 5. Stop when nothing more fits the budget, counted with the caller's
//!    tokenizer, headers included.
//! 6. Group the picked sentences under their memory (in recall order), each
//!    group in the memory's own sentence order, " … " where sentences were
//!    apart in the memory.

mod sections;
mod select;
mod sentence;
mod tokens;

pub use sections::sections;
pub use select::distill;
pub use sentence::sentences;
pub use tokens::{CharEstimate, TokenCounter, source_tokens};

/// A memory to distil, in recall order.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub id: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    pub kind: String,
    pub content: String,
    /// Quarantined (only there when asked for): its header says so.
    pub untrusted: bool,
    /// Who committed it, per git (the name of the author of the commit that
    /// introduced it, not what the line claims); `None` while uncommitted.
    pub author: Option<String>,
    /// That commit, abbreviated.
    pub commit: Option<String>,
}

/// A sentence of the digest and the memory it comes from.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Picked {
    /// The memory's id.
    pub memory: String,
    pub text: String,
}

/// The result of [`distill`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Digest {
    pub text: String,
    /// Tokens of `text`.
    pub tokens: usize,
    /// Tokens the sources would have cost, rendered whole the same way.
    pub tokens_of_sources: usize,
    pub sentences: Vec<Picked>,
}

/// Characters of a memory id shown in headers: unique in practice (a ULID's
/// first 10 are its millisecond), accepted by every command that takes an id.
pub const SHORT_ID: usize = 12;

/// The line that opens a memory's block: `[ID · DATE · TYPE · AUTHOR
/// @COMMIT]` (`uncommitted` for the local user's own), ` · UNTRUSTED` when
/// quarantined; `compact`, `[TYPE · AUTHOR]` (the digest's `--json` lists
/// the ids). What follows it up to the next header is that memory's text
/// alone: [`block_text`] keeps it from passing for a header or a heading.
fn header(source: &Source, compact: bool) -> String {
    let mark = if source.untrusted {
        " · UNTRUSTED"
    } else {
        ""
    };
    if compact {
        let author = source.author.as_deref().unwrap_or("uncommitted");
        return format!("[{} · {author}{mark}]", source.kind);
    }
    let id: String = source.id.chars().take(SHORT_ID).collect();
    let origin = match (&source.author, &source.commit) {
        (Some(author), Some(commit)) => format!("{author} @{commit}"),
        (Some(author), None) => author.clone(),
        (None, Some(commit)) => format!("@{commit}"),
        (None, None) => "uncommitted".to_owned(),
    };
    format!(
        "[{id} · {} · {} · {origin}{mark}]",
        source.date, source.kind
    )
}

/// A memory's text as its block holds it: on lines of its own that never
/// open like a header (`[`) or a section heading (`#`), so what a memory
/// says cannot pass for another memory's header or the digest's own
/// structure (a backslash goes first, as markdown escapes them).
fn block_text(text: &str) -> String {
    if text.starts_with(['[', '#']) {
        format!("\\{text}")
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests;
