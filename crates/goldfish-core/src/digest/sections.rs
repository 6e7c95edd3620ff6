//! The briefing's sections: titled groups of sources sharing one budget.

use super::select::distill;
use super::tokens::{TokenCounter, source_tokens};
use super::{Digest, Source};

/// Distils titled groups of sources (each in recall order) into one digest
/// of at most `budget` tokens: each group's title as a `## ` line, then its
/// extractive digest. A group gets an equal share of what is left, so room
/// one leaves unused goes to the next; empty groups are left out.
pub fn sections(
    parts: &[(String, Vec<Source>)],
    counter: &mut dyn TokenCounter,
    budget: usize,
) -> Result<Digest, crate::embedding::EmbedError> {
    let live: Vec<&(String, Vec<Source>)> = parts
        .iter()
        .filter(|(_, sources)| !sources.is_empty())
        .collect();
    let tokens_of_sources = live
        .iter()
        .map(|(_, sources)| source_tokens(sources, counter))
        .sum();
    let mut room = budget;
    loop {
        let mut text = String::new();
        let mut sentences = Vec::new();
        let mut left = room;
        for (n, (title, sources)) in live.iter().enumerate() {
            let heading = format!("## {title}\n");
            let heading_tokens = counter.count(&heading) + 1;
            let share = left / (live.len() - n);
            let mut part = Digest::default();
            // An equal share, or, when that fits nothing, what is left: a
            // group with something in it beats an even split.
            for room in [share, left] {
                if room > heading_tokens {
                    part = distill(sources, &[], None, None, counter, room - heading_tokens)?;
                }
                if !part.text.is_empty() {
                    break;
                }
            }
            if part.text.is_empty() {
                continue;
            }
            left = left.saturating_sub(heading_tokens + part.tokens);
            text.push_str(&heading);
            text.push_str(&part.text);
            sentences.extend(part.sentences);
        }
        let tokens = if text.is_empty() {
            0
        } else {
            counter.count(&text)
        };
        // Pieces counted apart can add up to less than the whole.
        if tokens <= budget || room == 0 {
            return Ok(Digest {
                text,
                tokens,
                tokens_of_sources,
                sentences,
            });
        }
        room = room.saturating_sub(tokens - budget);
    }
}
