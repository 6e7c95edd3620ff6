//! Finds credentials in text, so secrets never reach a file that is
//! committed and shared, and are masked wherever a memory is shown.
//!
//! Each rule has a stable name that messages show, and marks the part of
//! its match that is the secret: what comes before it (a vendor prefix like
//! `sk_live_`, a key like `password=`, `postgres://user:`) may be shown, the
//! secret never is ([`Finding::redacted`], [`redact`]).
//!
//! Rules for values of no fixed shape (`api_key = …`, a bare token) only
//! fire on values that look random (Shannon entropy and a mix of character
//! classes) and are not placeholders (`<your-password>`, `${DB_PASSWORD}`,
//! `changeme`, `xxxx`, AWS's documented `…EXAMPLE` keys), so prose about
//! keys passes. A credential position (a URL's password, `password:`,
//! `DB_PASSWORD=`, `secret=`, `Authorization: Bearer …`) takes any value
//! that is not a placeholder, however weak (`hunter2`), unless it reads as
//! prose: a plain word followed by more words (`password: rotate it`).
//! A sentence giving a credential a value (`the deploy password is
//! hunter2`, `the API key is …`, `token was …`) counts when the value is
//! marked as one: a digit or a symbol in it, or quotes around it; a plain
//! word (`the token is valid`), a number with a unit (`the token is 3600
//! seconds`), a format (`the key is ed25519`), a path or a variable's name
//! does not. Only a key that ends in a credential word counts:
//! `PASSWORD_MIN_LENGTH=12` and `MAX_TOKENS=4096` are settings.
//!
//! A sentence may also name the value with no `is` (`the password
//! Sup3rS3cret was hard-coded`, `with passphrase 'correct horse'`, `set the
//! token to …`, `SIM PIN 4821`): then the value must say by its look that
//! it is one, as no word of the sentence does. After a password's word it is
//! quoted, or six characters or more of letters with a digit or a symbol,
//! not code; after `token`, `secret` or a key, words that name other things
//! too (a lexer's token, a Kubernetes secret), it mixes letters and digits
//! within one part, as a machine makes them (`tok_83hd7`, not `uint64`,
//! `parseHttp2` or `app-v2-tls`), quoted or not.
//!
//! A credential flag (`--token X`), a short password key (`pw:X`) and
//! SQL's `IDENTIFIED BY` are credential positions too; a random token after
//! a short lowercase prefix (`cio_…`) is a vendor's token whatever the
//! vendor. The shapes of some 200 named vendors come from gitleaks'
//! maintained rule set, read as data (`gitleaks.rs`), after our rules.
//!
//! Invisible characters (zero-width spaces and joiners, the word joiner, a
//! byte order mark, soft hyphens) are removed before matching, so they
//! cannot split a token; what is found is reported in the original text.
//! Long hex runs count only next to a word like `key` or `secret` and away
//! from one like `sha256` or `commit`, so git ids and lock-file digests
//! pass.

use std::ops::Range;

mod gitleaks;
mod rules;
mod values;

use rules::{RULES, matches};
use values::{is_placeholder, shannon_entropy};

/// A suspected secret in some text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule's name, e.g. `github-token`.
    pub rule: &'static str,
    /// The text shown before the secret: the match up to the secret part.
    pub shown: String,
    /// Byte range of the secret part in the scanned text.
    pub secret: Range<usize>,
}

impl Finding {
    /// The match with the secret hidden, e.g. `sk_live_…[redacted]`.
    pub fn redacted(&self) -> String {
        format!("{}{MASK}", self.shown)
    }
}

/// What replaces a secret.
pub const MASK: &str = "…[redacted]";

/// Characters that change nothing a reader sees but split a token: zero-width
/// space, non-joiner and joiner, word joiner, byte order mark, soft hyphen.
const INVISIBLE: &[char] = &[
    '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{AD}',
];

/// The first thing in `text` that looks like a secret, if any: our rules
/// first (they know credential positions and prose), then the vendors'
/// token shapes of the public rule set (gitleaks' default rules).
pub fn scan(text: &str) -> Option<Finding> {
    let visible = Visible::of(text);
    RULES
        .iter()
        .find_map(|rule| matches(rule, &visible).into_iter().next())
        .or_else(|| vendor_findings(&visible).into_iter().next())
        .map(|finding| visible.in_original(finding, text))
}

/// Compiles our rules and reads the public rule set now (else on first
/// use), searching nothing; the public set's regexes still compile on
/// first use, each only when a text holds one of its keywords.
pub fn prepare() {
    std::sync::LazyLock::force(&rules::RULES);
    gitleaks::prepare();
}

/// Everything in `text` that looks like a secret, our rules' findings
/// before the rule set's; secret ranges may overlap.
pub fn scan_all(text: &str) -> Vec<Finding> {
    let visible = Visible::of(text);
    RULES
        .iter()
        .flat_map(|rule| matches(rule, &visible))
        .chain(vendor_findings(&visible))
        .map(|finding| visible.in_original(finding, text))
        .collect()
}

/// The public rule set's findings on the visible text, placeholders and
/// masked values left out.
fn vendor_findings(visible: &Visible<'_>) -> Vec<Finding> {
    let text: &str = &visible.text;
    gitleaks::find_all(text)
        .into_iter()
        .filter(|found| {
            let value = &text[found.secret.clone()];
            !value.starts_with(MASK) && !is_placeholder(value)
        })
        .map(|found| Finding {
            rule: found.rule,
            shown: text[found.whole.start..found.secret.start].to_owned(),
            secret: found.secret,
        })
        .collect()
}

/// A text without its [`INVISIBLE`] characters, and where each of its
/// bytes came from.
struct Visible<'t> {
    text: std::borrow::Cow<'t, str>,
    /// `text` lowercased (ASCII only: the same offsets), made once.
    lowercased: std::cell::OnceCell<String>,
    /// For each byte of `text` (and its end), its offset in the original;
    /// empty when nothing was removed.
    starts: Vec<usize>,
    /// For each offset of `text`, the original offset just after the byte
    /// before it (so a range's end leaves out what was removed after it).
    ends: Vec<usize>,
}

impl<'t> Visible<'t> {
    fn of(text: &'t str) -> Visible<'t> {
        if !text.contains(INVISIBLE) {
            return Visible {
                text: std::borrow::Cow::Borrowed(text),
                lowercased: std::cell::OnceCell::new(),
                starts: Vec::new(),
                ends: Vec::new(),
            };
        }
        let mut visible = String::with_capacity(text.len());
        let mut starts = Vec::with_capacity(text.len() + 1);
        let mut ends = Vec::with_capacity(text.len() + 1);
        ends.push(0);
        for (at, c) in text.char_indices().filter(|(_, c)| !INVISIBLE.contains(c)) {
            visible.push(c);
            for byte in at..at + c.len_utf8() {
                starts.push(byte);
                ends.push(byte + 1);
            }
        }
        starts.push(text.len());
        Visible {
            text: std::borrow::Cow::Owned(visible),
            lowercased: std::cell::OnceCell::new(),
            starts,
            ends,
        }
    }

    /// `finding` (made on the visible text) in `original`'s offsets.
    fn in_original(&self, finding: Finding, original: &str) -> Finding {
        if self.starts.is_empty() {
            return finding;
        }
        let whole_start = self.starts[finding.secret.start - finding.shown.len()];
        let secret = self.starts[finding.secret.start]..self.ends[finding.secret.end];
        Finding {
            rule: finding.rule,
            shown: original[whole_start..secret.start].to_owned(),
            secret,
        }
    }
}

/// `text` with every secret replaced by [`MASK`] (what precedes a secret in
/// its match, like `sk_live_` or `password=`, stays).
pub fn redact(text: &str) -> String {
    // Rules are in order of precedence: a specific rule's match (which
    // shows its prefix) wins over a later one overlapping it.
    let mut taken: Vec<(Range<usize>, Range<usize>)> = Vec::new();
    for finding in scan_all(text) {
        let whole = finding.secret.start - finding.shown.len()..finding.secret.end;
        if !taken
            .iter()
            .any(|(other, _)| whole.start < other.end && other.start < whole.end)
        {
            taken.push((whole, finding.secret));
        }
    }
    if taken.is_empty() {
        return text.to_owned();
    }
    taken.sort_by_key(|(whole, _)| whole.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (_, secret) in taken {
        out.push_str(&text[at..secret.start]);
        out.push_str(MASK);
        at = secret.end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests;
