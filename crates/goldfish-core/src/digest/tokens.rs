//! Token counting: the caller's tokenizer or an estimate, and what the
//! sources would cost whole.

use super::{Source, block_text, header};

/// Counts tokens as the model that will read the digest would.
pub trait TokenCounter {
    fn count(&mut self, text: &str) -> usize;
}

/// About four characters a token: the estimate when no tokenizer is
/// available.
pub struct CharEstimate;

impl TokenCounter for CharEstimate {
    fn count(&mut self, text: &str) -> usize {
        text.chars().count().div_ceil(4)
    }
}

/// What the sources cost whole, rendered as a digest renders them.
pub fn source_tokens(sources: &[Source], counter: &mut dyn TokenCounter) -> usize {
    let whole: String = sources
        .iter()
        .map(|s| {
            let lines: Vec<String> = s.content.lines().map(block_text).collect();
            format!("{}\n{}\n", header(s, false), lines.join("\n"))
        })
        .collect();
    counter.count(&whole)
}
