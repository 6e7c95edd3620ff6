//! The words of a text as the detector reads them, their stems, and which
//! of them are names.

/// A word of a text, as the detector reads it.
#[derive(Debug, Clone)]
pub(super) struct Word {
    /// As written, without surrounding punctuation and backticks.
    pub(super) raw: String,
    /// Lower case, a possessive `'s` removed.
    pub(super) lower: String,
    /// First of its sentence.
    pub(super) initial: bool,
    /// Code: written between backticks, or a part of an expression
    /// ([`parts`]).
    pub(super) quoted: bool,
    /// Punctuation that ended a clause right after it (`,`, `;`, `.`).
    pub(super) ends_clause: bool,
}

pub(super) fn split_words(text: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut initial = true;
    // Inside a span between backticks, which may hold spaces: code.
    let mut in_code = false;
    for chunk in text.split_whitespace() {
        let ticks = chunk.matches('`').count();
        let quoted = in_code || ticks > 0;
        in_code ^= ticks % 2 == 1;
        let trimmed_end = chunk.trim_end_matches(|c: char| ",.;:!?)]}\"'`".contains(c));
        let tail = &chunk[trimmed_end.len()..];
        let core = trimmed_end.trim_start_matches(|c: char| "([{\"'`".contains(c));
        let ends_sentence = tail.contains(['.', '!', '?', ';', ':']);
        let ends_clause = ends_sentence || tail.contains(',');
        let parts = parts(core);
        let quoted = quoted || core.contains(|c: char| "()[]{}<>\"".contains(c));
        if parts.is_empty() {
            initial = initial || ends_sentence;
            continue;
        }
        let count = parts.len();
        for (i, part) in parts.into_iter().enumerate() {
            let mut lower = part.to_lowercase().replace('’', "'");
            if let Some(base) = lower.strip_suffix("'s") {
                lower = base.to_owned();
            }
            words.push(Word {
                raw: part.to_owned(),
                lower,
                initial,
                quoted,
                ends_clause: ends_clause && i + 1 == count,
            });
            initial = false;
        }
        initial = ends_sentence;
    }
    words
}

/// The words a chunk without spaces holds: a call or an expression
/// (`list(sliced('abc',`, `Err(Timeout)`, `Vec<String>`) is cut at its
/// brackets, commas and quotes into the names and values it is made of;
/// `localhost:3000` into a host and its port; anything else is one word.
fn parts(core: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for piece in core.split(|c: char| "()[]{}<>,;\"".contains(c)) {
        let piece = piece.trim_matches(|c: char| "'`".contains(c));
        if piece.is_empty() {
            continue;
        }
        match piece.split_once(':') {
            Some((host, port))
                if !host.is_empty()
                    && !host.chars().all(|c| c.is_ascii_digit())
                    && !port.is_empty()
                    && port.chars().all(|c| c.is_ascii_digit()) =>
            {
                parts.extend([host, port]);
            }
            _ => parts.push(piece),
        }
    }
    parts
}

/// A crude stem: `orders` and `order`, `runners` and `runner` meet.
pub(super) fn stem(word: &str) -> String {
    let word = word.trim_end_matches('\'');
    for suffix in ["ies", "es", "s"] {
        if let Some(base) = word.strip_suffix(suffix)
            && base.len() >= 3
            && !word.ends_with("ss")
        {
            return if suffix == "ies" {
                format!("{base}y")
            } else {
                base.to_owned()
            };
        }
    }
    word.to_owned()
}

/// Words that start sentences or are capitalised without naming anything.
pub(super) const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "all",
    "also",
    "always",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "before",
    "both",
    "but",
    "by",
    "can",
    "checkpoint",
    "decided",
    "do",
    "does",
    "during",
    "each",
    "every",
    "for",
    "from",
    "has",
    "have",
    "he",
    "her",
    "here",
    "his",
    "how",
    "i",
    "i'm",
    "i've",
    "if",
    "in",
    "is",
    "it",
    "its",
    "keep",
    "let",
    "make",
    "may",
    "me",
    "more",
    "most",
    "must",
    "my",
    "never",
    "new",
    "no",
    "not",
    "note",
    "now",
    "of",
    "on",
    "once",
    "only",
    "or",
    "our",
    "plan",
    "she",
    "should",
    "since",
    "so",
    "some",
    "that",
    "the",
    "their",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "todo",
    "under",
    "until",
    "use",
    "was",
    "we",
    "we're",
    "what",
    "when",
    "where",
    "which",
    "while",
    "why",
    "will",
    "with",
    "per",
    "via",
    "than",
    "too",
    "still",
    "been",
    "were",
    "into",
    "onto",
    "out",
    "up",
    "them",
    "it's",
    "you",
    "your",
    "am",
    "being",
    "just",
    "very",
    "get",
    "got",
    "gets",
];

/// A name: a capitalised word that is no common word, an acronym, an
/// identifier (`max_connections`, `auth_v2`, `us-east-1`, a path), or
/// anything between backticks. Numbers and versions are quantities.
pub(super) fn is_name(word: &Word) -> bool {
    let raw = word.raw.as_str();
    if !raw.chars().any(|c| c.is_alphabetic()) || STOPWORDS.contains(&word.lower.as_str()) {
        return false;
    }
    if word.quoted {
        return true;
    }
    let has_digit = raw.chars().any(|c| c.is_ascii_digit());
    let code_like = raw.contains(['_', '/', '=', '.', ':'])
        || (raw.contains('-') && has_digit)
        || (has_digit && !raw.starts_with(|c: char| c.is_ascii_digit()))
        || raw.chars().skip(1).any(|c| c.is_uppercase());
    if code_like {
        // `v76` is a version.
        return !(word.lower.starts_with('v')
            && word.lower[1..]
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.'));
    }
    // A sentence's first word is capitalised whatever it is: not a name.
    raw.starts_with(|c: char| c.is_uppercase()) && !word.initial
}
