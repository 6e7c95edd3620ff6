//! The labelled pairs of `fixtures/supersede/pairs.jsonl` and the detector's
//! precision and recall on them: what `examples/supersede_table.rs` prints
//! and `tests/it/supersede_found.rs` holds the thresholds to. Pure: the
//! cosines come in, measured by the caller with the embedding model.

use serde::Deserialize;

use super::{Memo, judge};

/// What the newer memory of a pair is to the older.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// It replaces it: a number, a name, a version changed, a decision
    /// reversed. The only label the detector should flag.
    Update,
    /// The same fact restated (a near-duplicate).
    Paraphrase,
    /// The same topic, another fact that holds with it.
    OtherFact,
    Unrelated,
}

impl Label {
    pub const ALL: [Label; 4] = [
        Label::Update,
        Label::Paraphrase,
        Label::OtherFact,
        Label::Unrelated,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Label::Update => "update",
            Label::Paraphrase => "paraphrase",
            Label::OtherFact => "other_fact",
            Label::Unrelated => "unrelated",
        }
    }
}

/// The half a pair belongs to: thresholds are chosen on `tune`, and
/// reported on `test` too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    Tune,
    Test,
}

/// One labelled pair.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pair {
    pub older: String,
    pub newer: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// Files both memories name.
    #[serde(default)]
    pub files: Vec<String>,
    /// Files of the older memory alone, when they differ from the newer's.
    #[serde(default)]
    pub older_files: Option<Vec<String>>,
    #[serde(default)]
    pub newer_files: Option<Vec<String>>,
    pub label: Label,
    pub split: Split,
}

impl Pair {
    pub fn older_memo(&self) -> Memo<'_> {
        Memo {
            kind: &self.kind,
            content: &self.older,
            files: self.older_files.as_deref().unwrap_or(&self.files),
            spans: &[],
        }
    }

    pub fn newer_memo(&self) -> Memo<'_> {
        Memo {
            kind: &self.kind,
            content: &self.newer,
            files: self.newer_files.as_deref().unwrap_or(&self.files),
            spans: &[],
        }
    }
}

/// The pairs of a JSON Lines text; an error names the line.
pub fn parse(text: &str) -> Result<Vec<Pair>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(number, line)| {
            serde_json::from_str(line).map_err(|err| format!("line {}: {err}", number + 1))
        })
        .collect()
}

/// How many pairs of each label a detector flagged, out of how many.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub flagged: [usize; 4],
    pub total: [usize; 4],
}

impl Counts {
    fn slot(label: Label) -> usize {
        Label::ALL.iter().position(|l| *l == label).unwrap_or(0)
    }

    pub fn flagged(&self, label: Label) -> usize {
        self.flagged[Counts::slot(label)]
    }

    pub fn total(&self, label: Label) -> usize {
        self.total[Counts::slot(label)]
    }

    /// Share of the flagged pairs that are updates (1 when none is flagged).
    pub fn precision(&self) -> f64 {
        let flagged: usize = self.flagged.iter().sum();
        if flagged == 0 {
            1.0
        } else {
            self.flagged(Label::Update) as f64 / flagged as f64
        }
    }

    /// Share of the updates flagged.
    pub fn recall(&self) -> f64 {
        let updates = self.total(Label::Update);
        if updates == 0 {
            0.0
        } else {
            self.flagged(Label::Update) as f64 / updates as f64
        }
    }
}

/// What flags a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detector {
    /// [`judge`]: the type, the cosine, the files and a differing fact
    /// (what `store` asks about).
    Judge,
    /// [`judge`], and the newer restates the older but the facts that
    /// differ (what capture links: [`super::Candidate::links`]).
    Restated,
    /// [`judge`], and either capture's link or the newer saying what it
    /// changes (what recall moves: [`super::newer_first`]).
    Newer,
    /// The cosine alone, for comparison.
    CosineOnly,
}

/// The counts of `detector` at `threshold` over the pairs of `split` (all
/// with `None`); `cosines[i]` is the cosine of `pairs[i]`'s texts.
pub fn count(
    pairs: &[Pair],
    cosines: &[f64],
    threshold: f64,
    detector: Detector,
    split: Option<Split>,
) -> Counts {
    let mut counts = Counts::default();
    for (pair, &cosine) in pairs.iter().zip(cosines) {
        if split.is_some_and(|s| s != pair.split) {
            continue;
        }
        let slot = Counts::slot(pair.label);
        counts.total[slot] += 1;
        let flagged = match detector {
            Detector::Judge => {
                judge(pair.older_memo(), pair.newer_memo(), cosine, threshold).is_some()
            }
            Detector::Restated => judge(pair.older_memo(), pair.newer_memo(), cosine, threshold)
                .is_some_and(|c| c.not_restated.is_empty()),
            Detector::Newer => judge(pair.older_memo(), pair.newer_memo(), cosine, threshold)
                .is_some_and(|c| c.links() || c.names_the_change()),
            Detector::CosineOnly => cosine >= threshold,
        };
        if flagged {
            counts.flagged[slot] += 1;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_labelled_set_parses_and_is_big_and_balanced_enough() {
        let pairs = parse(include_str!("../../../../fixtures/supersede/pairs.jsonl")).unwrap();
        assert!(pairs.len() >= 80, "{}", pairs.len());
        let counts = count(
            &pairs,
            &vec![1.0; pairs.len()],
            0.0,
            Detector::CosineOnly,
            None,
        );
        for label in Label::ALL {
            assert!(counts.total(label) >= 10, "{}", label.name());
        }
        for split in [Split::Tune, Split::Test] {
            let half = count(
                &pairs,
                &vec![1.0; pairs.len()],
                0.0,
                Detector::CosineOnly,
                Some(split),
            );
            assert!(half.total(Label::Update) >= 25, "{split:?}");
        }
    }

    #[test]
    fn precision_and_recall_count_updates_among_the_flagged() {
        let pairs = parse(concat!(
            r#"{"older":"Pool is 20","newer":"Pool is 50","type":"decision","label":"update","split":"tune"}"#,
            "\n",
            r#"{"older":"Pool is 20","newer":"The pool has 20","type":"decision","label":"paraphrase","split":"test"}"#,
            "\n",
            r#"{"older":"Pool is 20","newer":"Pool is 30","type":"decision","label":"other_fact","split":"test"}"#,
        ))
        .unwrap();
        let all = count(&pairs, &[0.9, 0.95, 0.7], 0.8, Detector::Judge, None);
        assert_eq!((all.precision(), all.recall()), (1.0, 1.0));
        let all = count(&pairs, &[0.9, 0.95, 0.9], 0.8, Detector::Judge, None);
        assert_eq!((all.precision(), all.recall()), (0.5, 1.0));
        let cosine = count(&pairs, &[0.9, 0.95, 0.9], 0.8, Detector::CosineOnly, None);
        assert_eq!(cosine.flagged(Label::Paraphrase), 1);
        let test = count(
            &pairs,
            &[0.9, 0.95, 0.9],
            0.8,
            Detector::Judge,
            Some(Split::Test),
        );
        assert_eq!((test.precision(), test.recall()), (0.0, 0.0));
        assert!(parse("{}\n").unwrap_err().starts_with("line 1: "));
    }
}
