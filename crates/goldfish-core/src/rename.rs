//! Whether a file one commit deleted and a file it added are one file,
//! renamed and edited: git's rule of thumb (`git diff -M`: at least half
//! alike), measured on lines. Staleness follows such a rename as it follows
//! an exact one.

use std::collections::HashMap;

/// How alike a deleted and an added file must be to count as one file
/// renamed (git's default for `-M`).
pub const RENAME_SIMILARITY: f64 = 0.5;

/// The lines of a text that say something: trailing whitespace and lines
/// of only whitespace do not count (a blank line is in every file).
fn lines(text: &[u8]) -> HashMap<&[u8], usize> {
    let mut counts = HashMap::new();
    for line in text.split(|&b| b == b'\n') {
        let end = line
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(0, |i| i + 1);
        if end > 0 {
            *counts.entry(&line[..end]).or_insert(0) += 1;
        }
    }
    counts
}

/// How alike two versions of a file are, from 0 to 1: twice the lines they
/// have in common (a line as often as both sides hold it) over the lines
/// of both.
pub fn similarity(a: &[u8], b: &[u8]) -> f64 {
    let (a, b) = (lines(a), lines(b));
    let total: usize = a.values().sum::<usize>() + b.values().sum::<usize>();
    if total == 0 {
        return 0.0;
    }
    let common: usize = a
        .iter()
        .map(|(line, n)| (*n).min(b.get(line).copied().unwrap_or(0)))
        .sum();
    2.0 * common as f64 / total as f64
}

/// Pairs deleted files with added ones that are renames of them (at least
/// [`RENAME_SIMILARITY`] alike), the most alike pairs first, each file in
/// one pair at most; ties go to the earlier files. Returns (index into
/// `deleted`, index into `added`) pairs.
pub fn pair_renames(deleted: &[&[u8]], added: &[&[u8]]) -> Vec<(usize, usize)> {
    let mut scored: Vec<(f64, usize, usize)> = Vec::new();
    for (d, old) in deleted.iter().enumerate() {
        for (a, new) in added.iter().enumerate() {
            let alike = similarity(old, new);
            if alike >= RENAME_SIMILARITY {
                scored.push((alike, d, a));
            }
        }
    }
    scored.sort_by(|x, y| y.0.total_cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
    let (mut used_d, mut used_a) = (vec![false; deleted.len()], vec![false; added.len()]);
    let mut pairs = Vec::new();
    for (_, d, a) in scored {
        if !used_d[d] && !used_a[a] {
            used_d[d] = true;
            used_a[a] = true;
            pairs.push((d, a));
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    const CACHE: &[u8] = b"pub struct Cache {\n    entries: Vec<Entry>,\n}\n\nimpl Cache {\n    pub fn evict(&mut self) {\n        self.entries.clear();\n    }\n}\n";

    #[test]
    fn an_edited_copy_is_alike_and_another_file_is_not() {
        let edited = b"pub struct Cache {\n    entries: Vec<Entry>,\n    limit: usize,\n}\n\nimpl Cache {\n    pub fn evict(&mut self) {\n        self.entries.truncate(self.limit);\n    }\n}\n";
        let other = b"pub fn drain(queue: &mut Queue) {\n    while queue.pop().is_some() {}\n}\n";
        assert_eq!(similarity(CACHE, CACHE), 1.0);
        assert!(similarity(CACHE, edited) >= RENAME_SIMILARITY);
        assert!(similarity(CACHE, other) < RENAME_SIMILARITY);
        // Blank lines and trailing spaces say nothing.
        assert_eq!(similarity(b"\n\n  \n", b"\n\n"), 0.0);
        assert_eq!(similarity(b"a  \nb\n", b"a\nb"), 1.0);
    }

    #[test]
    fn each_file_pairs_once_with_its_most_alike() {
        let a: &[u8] = b"one\ntwo\nthree\nfour\n";
        let b: &[u8] = b"alpha\nbeta\ngamma\n";
        let a_edited: &[u8] = b"one\ntwo\nthree\nfive\n";
        let a_copy: &[u8] = b"one\ntwo\nthree\nfour\n";
        let pairs = pair_renames(&[a, b], &[a_edited, a_copy]);
        assert_eq!(pairs, vec![(0, 1)], "the exact copy, once; b has no match");
    }
}
