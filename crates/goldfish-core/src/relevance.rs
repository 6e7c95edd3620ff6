//! Whether a question is about anything the log holds: recall's "nothing
//! relevant" (issue 29). The index says which of the question's words the
//! log of the recall's scope uses and how many distinct words it has
//! (`goldfish::adapters::index::Index::relevance`); [`judge`] decides.
//!
//! Similarity cannot decide it: with the model recall uses, a question
//! about other software can be more similar to a project's memories (up to
//! 0.46) than a real question is to its answer ("login problems" to the fix
//! of an expired-token bug: 0.20, no word in common). Words can, in a log
//! large enough to have a vocabulary: when most of a question's words occur
//! nowhere in a log of thousands of distinct words, the log is about
//! something else. In a small log (the README demo's four memories have 34)
//! a word's absence says nothing, so a small log never refuses.
//!
//! Words are compared as scripts/eval/vocab_share.py and vocab_size.py
//! measured them: letters and digits, three or more, no stop word ([`STOP`]),
//! by their first five characters ([`PREFIX`]), so "deployment" finds
//! "deploy" and "tokens" "token".

use std::collections::HashSet;

/// A question is unrelated to the log when the share of its words the log
/// uses is below this…
///
/// Measured with scripts/eval/vocab_size.py (docs/BENCHMARKS.md, "Nothing
/// relevant"): logs grown at random around each on-topic question's answer
/// (fixtures/eval/, 71 questions, and LongMemEval_S's development split, 196,
/// ten orders each). At a vocabulary of 1,500 or more, a share below 0.5
/// would have refused 3 of 710 fixtures/eval logs and 37 of 1,960
/// LongMemEval ones holding the answer; below 0.34 (a third of the words or
/// fewer) 1 and 10. On the whole logs no on-topic question is refused
/// either way; 0.34 refuses 9 of the 38 off-topic questions asked of
/// fixtures/eval (0.5: 13).
pub const MIN_SHARE: f64 = 0.34;

/// …and the log has at least this many distinct words ([`PREFIX`]-long
/// keys). Below it a word's absence says nothing: the README demo's log
/// (34) keeps "login problems", which shares no word with its answer. At
/// 1,000 the random logs above refused 2 fixtures/eval and 37 LongMemEval
/// ones at a share below 0.34; at 1,500, 1 and 10; fixtures/eval's whole
/// log has 1,723, LongMemEval_S's 4,076 to 5,049.
pub const MIN_VOCABULARY: usize = 1_500;

/// The similarity from which a memory usually bears on a question (the
/// model's cosine): the prompt hook adds nothing less similar, and recall
/// marks a best match under it as weak (`goldfish::app::prompt`'s
/// `MIN_SIMILARITY`, measured there).
pub const CLOSE: f64 = 0.40;

/// Words are compared by their first this many characters.
pub const PREFIX: usize = 5;

/// Words too common to say what a question is about (scripts/eval/vocab_share.py's).
pub const STOP: &[&str] = &[
    "a", "about", "again", "all", "also", "an", "and", "another", "any", "are", "as", "at", "be",
    "been", "being", "but", "by", "can", "could", "did", "do", "does", "done", "down", "each",
    "every", "for", "from", "get", "go", "gone", "got", "had", "has", "have", "he", "here", "how",
    "i", "if", "in", "into", "is", "it", "its", "just", "made", "make", "may", "me", "might",
    "more", "most", "must", "my", "no", "not", "of", "off", "on", "once", "only", "or", "other",
    "our", "out", "over", "own", "same", "shall", "she", "should", "so", "some", "such", "than",
    "that", "the", "their", "then", "there", "these", "they", "this", "those", "to", "too",
    "under", "up", "use", "used", "using", "very", "was", "we", "went", "were", "what", "when",
    "where", "which", "who", "whom", "whose", "why", "will", "with", "would", "yes", "you", "your",
];

/// The longest [`STOP`] word, in bytes.
const STOP_LONGEST: usize = 7;

/// Whether a lowercased word is a [`STOP`] word (sorted: a binary search).
fn is_stop(word: &str) -> bool {
    STOP.binary_search(&word).is_ok()
}

/// The words of `text` that say what it is about, lowercased, in order,
/// without repeats: runs of letters and digits of three characters or
/// more that are not [`STOP`] words.
pub fn words(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
    {
        if !is_stop(&word) && !found.contains(&word) {
            found.push(word);
        }
    }
    found
}

/// The key a word is compared by: its first [`PREFIX`] characters.
pub fn key(word: &str) -> &str {
    match word.char_indices().nth(PREFIX) {
        Some((end, _)) => &word[..end],
        None => word,
    }
}

/// The distinct word keys of a log, read memory by memory until there are
/// [`MIN_VOCABULARY`] of them (more changes nothing).
#[derive(Debug, Default)]
pub struct Vocabulary {
    keys: HashSet<String>,
}

impl Vocabulary {
    /// Adds the words of one memory; whether the vocabulary is now large
    /// enough for absence to count (reading more changes nothing).
    ///
    /// The same keys as [`key`] of [`words`], without a string per word
    /// (recall reads up to a thousand memories per question for this).
    pub fn add(&mut self, text: &str) -> bool {
        let mut word_key = String::with_capacity(4 * PREFIX);
        for token in text.split(|c: char| !c.is_alphanumeric()) {
            if self.keys.len() >= MIN_VOCABULARY {
                break;
            }
            let short = if token.is_ascii() {
                token.len() < 3
            } else {
                token.chars().count() < 3
            };
            if short {
                continue;
            }
            word_key.clear();
            if token.len() <= STOP_LONGEST {
                word_key.extend(token.chars().flat_map(char::to_lowercase));
                if is_stop(&word_key) {
                    continue;
                }
                let end = word_key
                    .char_indices()
                    .nth(PREFIX)
                    .map_or(word_key.len(), |(end, _)| end);
                word_key.truncate(end);
            } else {
                word_key.extend(token.chars().flat_map(char::to_lowercase).take(PREFIX));
            }
            if !self.keys.contains(word_key.as_str()) {
                self.keys.insert(word_key.clone());
            }
        }
        self.enough()
    }

    pub fn enough(&self) -> bool {
        self.keys.len() >= MIN_VOCABULARY
    }

    /// Distinct keys read, at most [`MIN_VOCABULARY`].
    pub fn size(&self) -> usize {
        self.keys.len()
    }
}

/// One word of the question and whether the log uses it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Asked {
    pub word: String,
    pub in_log: bool,
}

/// Whether a question is about anything in the log, and why: what recall
/// `--json` shows when it answers "nothing relevant".
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Judgement {
    /// False: nothing relevant.
    pub relevant: bool,
    /// The question's words ([`words`]) and whether the log uses each.
    pub words: Vec<Asked>,
    /// The share of them the log uses (1 without words).
    pub share: f64,
    /// The log's distinct words ([`PREFIX`]-long keys), counted up to
    /// `min_vocabulary`; `null` when not counted: a share of at least
    /// `min_share` keeps the question whatever the log's size
    /// ([`needs_vocabulary`]).
    pub vocabulary: Option<usize>,
    /// [`MIN_SHARE`]: a lower share is nothing relevant…
    pub min_share: f64,
    /// …in a log of at least [`MIN_VOCABULARY`] distinct words.
    pub min_vocabulary: usize,
}

impl Judgement {
    /// The question's words the log never uses.
    pub fn missing(&self) -> impl Iterator<Item = &str> {
        self.words
            .iter()
            .filter(|asked| !asked.in_log)
            .map(|asked| asked.word.as_str())
    }

    /// Why the question is unrelated, in a line: "the log never mentions
    /// helm, chart, kubernetes (3 of 4 words)".
    pub fn reason(&self) -> String {
        let missing: Vec<&str> = self.missing().collect();
        format!(
            "the log never mentions {} ({} of {} words; it has {}{} distinct words)",
            missing.join(", "),
            missing.len(),
            self.words.len(),
            if self.vocabulary >= Some(self.min_vocabulary) {
                "at least "
            } else {
                ""
            },
            self.vocabulary.unwrap_or_default(),
        )
    }
}

/// The share of the question's words the log uses (1 without words).
pub fn share(words: &[Asked]) -> f64 {
    let used = words.iter().filter(|asked| asked.in_log).count();
    if words.is_empty() {
        1.0
    } else {
        used as f64 / words.len() as f64
    }
}

/// Whether the judgement needs the log's vocabulary: only when the share is
/// low enough to refuse (most questions are judged by their words alone,
/// without reading the log's rows).
pub fn needs_vocabulary(words: &[Asked]) -> bool {
    share(words) < MIN_SHARE
}

/// Judges a question by its words (each with whether the log uses it, by
/// [`key`]) and the log's vocabulary size ([`Vocabulary::size`]; `None`:
/// not counted): nothing relevant when the log is large enough for absence
/// to count and uses fewer than [`MIN_SHARE`] of the words.
pub fn judge(words: Vec<Asked>, vocabulary: Option<usize>) -> Judgement {
    let share = share(&words);
    Judgement {
        relevant: share >= MIN_SHARE || vocabulary.is_none_or(|size| size < MIN_VOCABULARY),
        words,
        share,
        vocabulary,
        min_share: MIN_SHARE,
        min_vocabulary: MIN_VOCABULARY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(words: &[(&str, bool)]) -> Vec<Asked> {
        words
            .iter()
            .map(|&(word, in_log)| Asked {
                word: word.to_owned(),
                in_log,
            })
            .collect()
    }

    #[test]
    fn the_stop_words_are_sorted_for_the_binary_search() {
        assert!(STOP.windows(2).all(|pair| pair[0] < pair[1]));
        assert_eq!(STOP.iter().map(|w| w.len()).max(), Some(STOP_LONGEST));
    }

    #[test]
    fn a_question_s_words_skip_short_and_stop_words() {
        assert_eq!(
            words("How do we upgrade the Helm chart? helm, K8s"),
            ["upgrade", "helm", "chart", "k8s"]
        );
        assert_eq!(words("Le café, où?"), ["café"]);
        assert!(words("what is it").is_empty());
        assert_eq!(key("kubernetes"), "kuber");
        assert_eq!(key("jwt"), "jwt");
        assert_eq!(key("déploiement"), "déplo");
    }

    #[test]
    fn the_vocabulary_counts_keys_up_to_enough() {
        let mut vocabulary = Vocabulary::default();
        assert!(!vocabulary.add("Deploy deployment deployed tokens token"));
        assert_eq!(vocabulary.size(), 2, "deplo, token");
        // The keys of `words` and `key`, stop and short words left out.
        let text = "The JWT was compared in ms; Caféterias, CAFÉTÉRIA and the Über-Kubernetes";
        let mut expected: Vec<String> = words(text).iter().map(|w| key(w).to_owned()).collect();
        expected.sort();
        expected.dedup();
        let mut vocabulary = Vocabulary::default();
        vocabulary.add(text);
        let mut got: Vec<String> = vocabulary.keys.iter().cloned().collect();
        got.sort();
        assert_eq!(got, expected);
        assert_eq!(got, ["caf\u{e9}t", "compa", "jwt", "kuber", "\u{fc}ber"]);
        let many: String = (0..2 * MIN_VOCABULARY)
            .map(|n| format!("{n:05}w "))
            .collect();
        assert!(vocabulary.add(&many));
        assert_eq!(vocabulary.size(), MIN_VOCABULARY);
    }

    #[test]
    fn missing_words_in_a_large_log_are_nothing_relevant() {
        let verdict = judge(
            asked(&[
                ("kubernetes", false),
                ("helm", false),
                ("chart", false),
                ("upgrade", true),
            ]),
            Some(MIN_VOCABULARY),
        );
        assert!(!verdict.relevant);
        assert_eq!(verdict.share, 0.25);
        assert_eq!(
            verdict.reason(),
            "the log never mentions kubernetes, helm, chart (3 of 4 words; it has at least 1500 distinct words)"
        );
        // A third of the words is still too few; half is enough.
        let third = asked(&[("graphql", false), ("schema", true), ("stitching", false)]);
        assert!(needs_vocabulary(&third));
        assert!(!judge(third, Some(MIN_VOCABULARY)).relevant);
        let half = asked(&[("login", true), ("portal", false)]);
        assert!(!needs_vocabulary(&half));
        let verdict = judge(half, None);
        assert!(verdict.relevant);
        assert_eq!(verdict.vocabulary, None);
    }

    /// The README's demo log (four memories) shares no word with "login
    /// problems", yet holds its answer: in a small log absence says nothing.
    #[test]
    fn a_small_log_never_refuses() {
        let none = asked(&[("login", false), ("problems", false)]);
        let verdict = judge(none.clone(), Some(34));
        assert!(verdict.relevant);
        assert_eq!(verdict.share, 0.0);
        assert!(!judge(none, Some(MIN_VOCABULARY)).relevant);
        // A question without words to judge is never refused.
        assert!(!needs_vocabulary(&[]));
        assert!(judge(Vec::new(), Some(MIN_VOCABULARY)).relevant);
    }
}
