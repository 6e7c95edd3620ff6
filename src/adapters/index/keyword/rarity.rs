//! Word rarity that does not depend on the home: a word's BM25 weight
//! comes from the searched workspaces' own rows, blended with a fixed
//! background table shipped in the binary, so the same repository ranks
//! the same whatever else a home holds, and a small one still tells a
//! rare word from a common one.
//!
//! The blend is a prior of [`PRIOR_ROWS`] rows drawn from the background:
//! a word in `df` of the scope's `n` rows, and in a share `p` of the
//! background's documents, weighs as in `df + PRIOR_ROWS · p` of
//! `n + PRIOR_ROWS` rows (FTS5's idf of those). With a prior of 0 it is
//! FTS5's bm25 over the scope's rows alone.
//!
//! The table (`rarity/wordfreq.tsv`, built by
//! `scripts/rarity/build_table.py wordfreq`): the 25,955 commonest Porter
//! stems of wordfreq 3.1.1's English word frequencies (PyPI `wordfreq`,
//! data CC-BY-SA 4.0, by Robyn Speer et al.; see NOTICE), each as the
//! share of 32-word documents holding it, out of 10,000,000. General
//! English estimated rarity as well as document frequencies over the
//! Python documentation's changelog and paragraphs did on the tuning sets
//! (docs/BENCHMARKS.md "Word rarity"). A header, then `stem<TAB>documents`
//! lines sorted by bytes, looked up by bisection (no parse, nothing kept
//! in memory).

/// The background table's name and version: what a change of table
/// changes (`TABLE`'s first line names the same corpus).
pub const RARITY_TABLE: &str = "wordfreq-3.1.1-en/1";

/// The prior's weight, in rows of the background (chosen on LongMemEval
/// and fixtures/eval, docs/BENCHMARKS.md "Word rarity").
pub(super) const PRIOR_ROWS: f64 = 1_000.0;

/// The table: a header of `# key: value` lines, then one line per stem.
static TABLE: &str = include_str!("rarity/wordfreq.tsv");

/// A background table of document frequencies.
#[derive(Debug, Clone, Copy)]
pub(super) struct Background {
    /// Its stem lines.
    lines: &'static str,
    documents: f64,
    /// What a stem not in the table reads as.
    floor: f64,
}

impl Background {
    /// The table shipped in the binary.
    pub(super) fn shipped() -> Background {
        Background::parse(TABLE)
    }

    /// A table in the format `build_table.py` writes. Panics on a header
    /// without `documents` (the shipped one is checked by a test).
    pub(super) fn parse(text: &'static str) -> Background {
        let mut documents = None;
        let mut floor = 0.5;
        let mut rest = text;
        while let Some(line) = rest.strip_prefix("# ") {
            let (line, tail) = line.split_once('\n').unwrap_or((line, ""));
            if let Some(value) = line.strip_prefix("documents: ") {
                documents = value.trim().parse::<f64>().ok();
            }
            if let Some(value) = line.strip_prefix("floor: ") {
                floor = value.trim().parse::<f64>().unwrap_or(floor);
            }
            rest = tail;
        }
        Background {
            lines: rest,
            documents: documents.expect("a rarity table names its documents"),
            floor,
        }
    }

    /// The documents holding `stem`, by bisection over the sorted lines.
    pub(super) fn documents_with(&self, stem: &str) -> Option<f64> {
        let bytes = self.lines.as_bytes();
        let (mut low, mut high) = (0, bytes.len());
        // Invariant: every line starting before `low` sorts before `stem`,
        // every line starting at or after `high` after it; `low` is a
        // line's start.
        while low < high {
            let middle = low + (high - low) / 2;
            let start = match bytes[low..middle].iter().rposition(|&b| b == b'\n') {
                Some(at) => low + at + 1,
                None => low,
            };
            let end = bytes[start..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |at| start + at);
            let line = &self.lines[start..end];
            let (key, count) = line.split_once('\t').unwrap_or((line, ""));
            match key.as_bytes().cmp(stem.as_bytes()) {
                std::cmp::Ordering::Equal => return count.trim().parse().ok(),
                std::cmp::Ordering::Less => low = end + 1,
                std::cmp::Ordering::Greater => high = start,
            }
        }
        None
    }

    /// The share of the background's documents holding `stem`.
    pub(super) fn share(&self, stem: &str) -> f64 {
        self.documents_with(stem).unwrap_or(self.floor) / self.documents
    }
}

/// A word's weight (FTS5's idf, at least 1e-6) in `df` of `n` rows of the
/// scope, with the prior: `prior` rows of which a share `share` hold it.
pub(super) fn idf(df: f64, n: f64, share: f64, prior: f64) -> f64 {
    let df = df + prior * share;
    let n = n + prior;
    let idf = ((n - df + 0.5) / (df + 0.5)).ln();
    if idf <= 0.0 { 1e-6 } else { idf }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every stem of the shipped table is found by bisection with its
    /// count, and words between and around them are not.
    #[test]
    fn bisection_finds_every_stem_and_nothing_else() {
        let table = Background::shipped();
        let lines: std::collections::HashMap<&str, f64> = TABLE
            .lines()
            .filter(|line| !line.starts_with('#'))
            .map(|line| {
                let (stem, count) = line.split_once('\t').unwrap();
                (stem, count.parse().unwrap())
            })
            .collect();
        for (stem, count) in &lines {
            assert_eq!(table.documents_with(stem), Some(*count), "{stem}");
            for absent in [format!("{stem}\u{1}"), format!("{stem}zzzzzzzz")] {
                if !lines.contains_key(absent.as_str()) {
                    assert_eq!(table.documents_with(&absent), None, "{absent}");
                }
            }
        }
        assert!(lines.len() > 10_000, "{} stems", lines.len());
        assert_eq!(table.documents_with(""), None);
        assert_eq!(table.documents_with("\u{10ffff}"), None);
        let small = Background::parse("# documents: 10\n# floor: 0.25\nb\t3\nd\t1\n");
        for (stem, want) in [
            ("a", None),
            ("b", Some(3.0)),
            ("c", None),
            ("d", Some(1.0)),
            ("e", None),
        ] {
            assert_eq!(small.documents_with(stem), want, "{stem}");
        }
        assert_eq!(small.share("c"), 0.025);
    }

    /// The table's header names its corpus, sorted by bytes, Porter stems
    /// as the index writes them ("gener" for "generated", as FTS5).
    #[test]
    fn the_shipped_table_is_the_one_named() {
        assert!(TABLE.starts_with("# goldfish word rarity: wordfreq\n"));
        assert!(RARITY_TABLE.starts_with("wordfreq-3.1.1"));
        let stems: Vec<&str> = TABLE
            .lines()
            .filter(|line| !line.starts_with('#'))
            .map(|line| line.split_once('\t').unwrap().0)
            .collect();
        assert!(stems.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes()));
        let table = Background::shipped();
        for stem in ["gener", "databas", "cach", "the", "bug"] {
            assert!(table.documents_with(stem).is_some(), "{stem}");
        }
        assert!(table.documents_with("generated").is_none());
        assert!(table.share("the") > 0.3, "{}", table.share("the"));
        assert!(table.share("deadlock") < 0.01);
    }

    /// With no prior, FTS5's idf; a word common in the background weighs
    /// little even in a workspace of a few rows where it is rare, a word
    /// rare in both much; a large workspace's own counts outweigh the
    /// prior.
    #[test]
    fn the_blend_leans_on_the_background_only_where_rows_are_few() {
        let fts5 = |df: f64, n: f64| ((n - df + 0.5) / (df + 0.5)).ln();
        assert_eq!(idf(3.0, 100.0, 0.4, 0.0), fts5(3.0, 100.0));
        assert_eq!(idf(80.0, 100.0, 0.0, 0.0), 1e-6);
        // Ten rows, the word in one of them.
        let common = idf(1.0, 10.0, 0.5, PRIOR_ROWS);
        let rare = idf(1.0, 10.0, 0.0001, PRIOR_ROWS);
        assert!(common < 0.1, "{common}");
        assert!(rare > 5.0, "{rare}");
        assert!(fts5(1.0, 10.0) < 2.0);
        // A million rows: the workspace's own share decides, even against
        // a background fifty times commoner.
        let big = idf(10_000.0, 1e6, 0.5, PRIOR_ROWS);
        assert!((big - fts5(10_000.0, 1e6)).abs() < 0.05, "{big}");
        // More rows holding it, less weight.
        assert!(idf(2.0, 500.0, 0.01, PRIOR_ROWS) < idf(1.0, 500.0, 0.01, PRIOR_ROWS));
    }
}
