//! Newer wins when facts collide: the order of recall's results when a
//! newer one updates an older one ranked above it.

use super::{ASK, Candidate, Memo, judge};

/// One result of a recall as [`newer_first`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct Ranked<'a> {
    pub memo: Memo<'a>,
    /// RFC 3339; the newer of two is the later.
    pub timestamp: &'a str,
    /// Whether agents receive it unmarked: an untrusted result never moves
    /// above a trusted one.
    pub trusted: bool,
}

/// A newer result moved above an older one it probably updates.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    /// Indexes into the results as ranked.
    pub newer: usize,
    pub older: usize,
    pub why: Candidate,
}

/// Newer wins when facts collide: the order in which to show `results`
/// (best first) when a newer result updates an older one shown above it:
/// [`judge`] at [`ASK`] (same type, at least 0.54 similar, a fact that
/// differs), and either capture's rule ([`Candidate::links`]: at least
/// 0.80 similar, the older restated with a fact changed; 1.00 precise on
/// both halves of the labelled pairs) or the newer saying what it changes
/// ([`Candidate::names_the_change`]: `from X to Y`, X the older's). Any
/// differing fact at [`ASK`] (store's test) moved a newer result above
/// the answer in 30 of 31 of LongMemEval's knowledge-update questions
/// (MRR@10 0.784 → 0.380): among a conversation's turns of one type
/// nearly every close pair differs in some name or number
/// (docs/BENCHMARKS.md, "Newer wins").
/// Taken in rank order, each result moves to just above the highest-placed
/// older one it updates, never above a result newer than itself (so a
/// value changed twice shows newest, then middle, then oldest, and a
/// middle value that updates the oldest does not pass the newest);
/// everything else keeps its order. `cosine(i, j)`
/// is the similarity of two results' texts (`None` without vectors).
/// Returns the new order (indexes into `results`) and the moves, for
/// `--json`.
pub fn newer_first(
    results: &[Ranked],
    cosine: impl Fn(usize, usize) -> Option<f64>,
) -> (Vec<usize>, Vec<Update>) {
    let mut order: Vec<usize> = (0..results.len()).collect();
    let mut updates = Vec::new();
    for (j, newer) in results.iter().enumerate() {
        let at = order
            .iter()
            .position(|&k| k == j)
            .expect("every result is placed");
        // Never above a newer result: newer wins, it does not lose to a
        // middle value that moves.
        let floor = order[..at]
            .iter()
            .rposition(|&k| results[k].timestamp > newer.timestamp)
            .map_or(0, |p| p + 1);
        let highest = order[floor..at].iter().enumerate().find_map(|(place, &i)| {
            let place = floor + place;
            let older = &results[i];
            if newer.timestamp <= older.timestamp || (older.trusted && !newer.trusted) {
                return None;
            }
            let why = judge(older.memo, newer.memo, cosine(i, j)?, ASK)?;
            if !why.links() && !why.names_the_change() {
                return None;
            }
            Some((
                place,
                Update {
                    newer: j,
                    older: i,
                    why,
                },
            ))
        });
        if let Some((place, update)) = highest {
            order.remove(at);
            order.insert(place, j);
            updates.push(update);
        }
    }
    (order, updates)
}
