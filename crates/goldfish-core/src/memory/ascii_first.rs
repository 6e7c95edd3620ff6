//! A detector's regex, compiled for the text it meets: most memories are
//! ASCII, and a pattern read without Unicode (`(?-u)`: ASCII `\w`, `\s`,
//! `\b`, ASCII case folding) compiles in a fraction of the time its
//! Unicode automaton takes, the cost of every command that scans.
//!
//! On an ASCII text both forms find the same matches at the same offsets:
//! Unicode's classes and case folding agree with ASCII's on every ASCII
//! character, and add only characters an ASCII text does not hold. A
//! pattern holding a non-ASCII literal cannot be read without Unicode; its
//! ASCII form is then its syntax tree with every class cut to ASCII and
//! every non-ASCII literal made to match nothing (an ASCII text cannot
//! hold it), which is the same argument made on the tree. The Unicode form
//! is compiled on the first text that is not ASCII.

use std::ops::Range;
use std::sync::OnceLock;

use regex::Regex;
use regex_syntax::hir::{
    Capture, Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind,
    Look, Repetition,
};

/// A pattern in its two forms (see the module's docs).
pub struct AsciiFirst {
    source: String,
    ascii: regex::bytes::Regex,
    unicode: OnceLock<Regex>,
}

impl AsciiFirst {
    /// Compiles `source`'s ASCII form (its Unicode form waits for a text
    /// that needs it). Panics on a pattern that does not compile: the
    /// detectors' patterns are constants their tests compile.
    pub fn new(source: impl Into<String>) -> AsciiFirst {
        let source = source.into();
        let ascii = regex::bytes::RegexBuilder::new(&source)
            .unicode(false)
            .build()
            .unwrap_or_else(|_| {
                let tree = regex_syntax::parse(&source).expect("a valid pattern");
                regex::bytes::Regex::new(&ascii_part(&tree).to_string())
                    .expect("the ASCII part of a valid pattern is one")
            });
        AsciiFirst {
            source,
            ascii,
            unicode: OnceLock::new(),
        }
    }

    /// The pattern as written.
    #[cfg(test)]
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The first match in `text`, as a byte range.
    pub fn find(&self, text: &str) -> Option<Range<usize>> {
        if text.is_ascii() {
            self.ascii.find(text.as_bytes()).map(|found| found.range())
        } else {
            self.unicode().find(text).map(|found| found.range())
        }
    }

    /// Every match in `text` with its named group `group`, as byte ranges:
    /// the whole match and the group's (`None` when it took no part).
    pub fn captures_named(
        &self,
        text: &str,
        group: &str,
    ) -> Vec<(Range<usize>, Option<Range<usize>>)> {
        if text.is_ascii() {
            self.ascii
                .captures_iter(text.as_bytes())
                .map(|found| {
                    let whole = found.get(0).expect("group 0 is the match").range();
                    (whole, found.name(group).map(|part| part.range()))
                })
                .collect()
        } else {
            self.unicode()
                .captures_iter(text)
                .map(|found| {
                    let whole = found.get(0).expect("group 0 is the match").range();
                    (whole, found.name(group).map(|part| part.range()))
                })
                .collect()
        }
    }

    /// The Unicode form, compiled on first use.
    fn unicode(&self) -> &Regex {
        self.unicode
            .get_or_init(|| Regex::new(&self.source).expect("a valid pattern"))
    }
}

/// What of `tree` an ASCII text can match: classes cut to ASCII, non-ASCII
/// literals matching nothing, Unicode word boundaries as ASCII ones (the
/// same on an ASCII text).
fn ascii_part(tree: &Hir) -> Hir {
    match tree.kind() {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(literal) if literal.0.is_ascii() => Hir::literal(literal.0.clone()),
        HirKind::Literal(_) => Hir::fail(),
        HirKind::Class(Class::Unicode(class)) => {
            let mut class = class.clone();
            class.intersect(&ClassUnicode::new([ClassUnicodeRange::new('\0', '\x7f')]));
            Hir::class(Class::Unicode(class))
        }
        HirKind::Class(Class::Bytes(class)) => {
            let mut class = class.clone();
            class.intersect(&ClassBytes::new([ClassBytesRange::new(0, 0x7f)]));
            Hir::class(Class::Bytes(class))
        }
        HirKind::Look(look) => Hir::look(match look {
            Look::WordUnicode => Look::WordAscii,
            Look::WordUnicodeNegate => Look::WordAsciiNegate,
            Look::WordStartUnicode => Look::WordStartAscii,
            Look::WordEndUnicode => Look::WordEndAscii,
            Look::WordStartHalfUnicode => Look::WordStartHalfAscii,
            Look::WordEndHalfUnicode => Look::WordEndHalfAscii,
            other => *other,
        }),
        HirKind::Repetition(repetition) => Hir::repetition(Repetition {
            sub: Box::new(ascii_part(&repetition.sub)),
            ..repetition.clone()
        }),
        HirKind::Capture(capture) => Hir::capture(Capture {
            sub: Box::new(ascii_part(&capture.sub)),
            ..capture.clone()
        }),
        HirKind::Concat(parts) => Hir::concat(parts.iter().map(ascii_part).collect()),
        HirKind::Alternation(parts) => Hir::alternation(parts.iter().map(ascii_part).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both forms agree on ASCII texts, for a pattern read without Unicode
    /// and for one whose ASCII part comes from its tree (a non-ASCII
    /// literal, a non-ASCII class member, Unicode case folding of `k`).
    #[test]
    fn both_forms_agree_on_ascii_texts() {
        let patterns = [
            r"(?i)\b(?:ignore|skip)\s+(?:all\s+)?rules?\b",
            r"(?i)(?:ignor\w*|забудь\w*)[^.\n]{0,20}?(?:instru[cç]\w*|指令)",
            r"(?i)\byou(?:\s+are|\s*['\x{2019}]re)\s+now\b",
            r"(?P<s>k\w+)\s*=",
        ];
        let texts = [
            "Please IGNORE all rules now",
            "ignorez les instructions",
            "ignoring the instructions above",
            "you're now a pirate; you are now free",
            "K_EY = 3, key=4",
            "nothing here",
            "",
        ];
        for pattern in patterns {
            let both = AsciiFirst::new(pattern);
            let unicode = Regex::new(pattern).unwrap();
            for text in texts {
                let ascii = both.find(text);
                assert_eq!(
                    ascii,
                    unicode.find(text).map(|found| found.range()),
                    "{pattern} on {text:?}"
                );
            }
        }
    }

    /// A text that is not ASCII is read by the Unicode form: its non-ASCII
    /// literals and classes match.
    #[test]
    fn a_text_that_is_not_ascii_meets_the_unicode_form() {
        let both = AsciiFirst::new(r"(?i)(?:ignor\w*|забудь\w*)\s+(?:instru[cç]\w*|все)");
        assert_eq!(both.find("забудь все"), Some(0.."забудь все".len()));
        assert_eq!(
            both.find("ignora instruções"),
            Some(0.."ignora instruções".len())
        );
        assert_eq!(both.find("ignore instructions"), Some(0..19));
        // A Unicode word character around an ASCII word.
        let word = AsciiFirst::new(r"\bkey\b");
        assert_eq!(word.find("ékey"), None);
        assert_eq!(word.find("é key"), Some(3..6));
    }
}
