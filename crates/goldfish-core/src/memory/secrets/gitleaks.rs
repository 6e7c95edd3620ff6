//! Vendors' token shapes from a maintained public rule set: the default
//! configuration of gitleaks (`gitleaks.toml` beside this file, copied
//! verbatim from github.com/gitleaks/gitleaks `config/gitleaks.toml`, MIT,
//! licence in `gitleaks.LICENSE`), read as data. Updating is copying the
//! file again; the tests say which rules stopped compiling.
//!
//! Each rule runs as gitleaks runs it on a file's text: only when one of
//! its keywords is in the text (one Aho-Corasick pass for all), its
//! regex's first non-empty group (or its `secretGroup`) is the secret,
//! which must pass the rule's entropy floor and no allowlist (the global
//! one and the rule's own, on the secret, the match or the line). What a
//! memory is not, a file with a path, drops the rules that need one
//! ([`SKIPPED`] says which and why). A regex compiles on first use.

use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use aho_corasick::AhoCorasick;
use regex::{Regex, RegexBuilder};
use serde::Deserialize;

/// The rule set, as gitleaks ships it.
const RULES_TOML: &str = include_str!("gitleaks.toml");

/// Rules left out, and why. Rules that apply only to a file's path
/// (`path = …`) are left out too: a memory has no path. None today: the
/// broadest, `generic-api-key`, costs the most to compile and still finds
/// what ours miss (without it: credsweeper 0.825 instead of 0.841,
/// detect-secrets 0.675 instead of 0.720, `scripts/eval/secrets_public.py`).
const SKIPPED: &[(&str, &str)] = &[];

/// A finding: the rule's id, the whole match and the secret in it.
pub(super) struct Found {
    pub rule: &'static str,
    pub whole: Range<usize>,
    pub secret: Range<usize>,
}

#[derive(Deserialize)]
struct RawConfig {
    allowlist: RawAllowlist,
    rules: Vec<RawRule>,
}

#[derive(Deserialize)]
struct RawRule {
    id: String,
    regex: Option<String>,
    path: Option<String>,
    #[serde(default, rename = "secretGroup")]
    secret_group: usize,
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    allowlists: Vec<RawAllowlist>,
}

#[derive(Deserialize, Default)]
struct RawAllowlist {
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default, rename = "regexTarget")]
    regex_target: Option<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    condition: Option<String>,
}

/// What an allowlist's regexes are matched against.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Secret,
    Match,
    Line,
}

struct Allowlist {
    target: Target,
    /// The regexes' sources, compiled on first use.
    sources: Vec<String>,
    regexes: OnceLock<Vec<Regex>>,
    /// Lowercase; a secret holding one is allowed.
    stopwords: Vec<String>,
    /// `condition = "AND"` with paths: it can never hold for a memory,
    /// which has no path.
    never: bool,
}

struct Rule {
    id: String,
    source: String,
    regex: OnceLock<Option<Regex>>,
    secret_group: usize,
    entropy: Option<f64>,
    allowlists: Vec<Allowlist>,
}

struct RuleSet {
    rules: Vec<Rule>,
    /// Rules with no keywords: they run on every text.
    always: Vec<usize>,
    keywords: AhoCorasick,
    /// For each keyword pattern, the rules it wakes.
    keyword_rules: Vec<Vec<usize>>,
    global: Allowlist,
}

static RULE_SET: LazyLock<RuleSet> = LazyLock::new(|| {
    let raw: RawConfig = toml::from_str(RULES_TOML).expect("gitleaks.toml is valid TOML");
    RuleSet::new(raw)
});

/// Reads the rule set now (else on first use).
pub(super) fn prepare() {
    LazyLock::force(&RULE_SET);
}

/// A regex of the rule set, compiled as gitleaks' Go regexes read: `None`
/// when the Rust engine cannot read it (a test lists those). Go's `\w`,
/// `\d` and `\s` are ASCII; Rust's are Unicode, which matches more and
/// compiles to automata many times the size ([`ascii_classes`]).
fn compile(source: &str) -> Option<Regex> {
    RegexBuilder::new(&ascii_classes(source))
        .size_limit(16 << 20)
        .build()
        .ok()
}

/// `source` with Go's meaning of `\w`, `\d`, `\s` and their negations
/// (ASCII only), inside and outside bracket classes.
fn ascii_classes(source: &str) -> String {
    let mut out = String::with_capacity(source.len() + 32);
    // Depth of bracket classes (`[[:alpha:]]` nests one level).
    let mut depth = 0usize;
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push(c);
                    break;
                };
                let (inside, outside) = match next {
                    'w' => ("[:word:]", "[[:word:]]"),
                    'd' => ("0-9", "[0-9]"),
                    's' => ("\\t\\n\\x0C\\r ", "[\\t\\n\\x0C\\r ]"),
                    'W' => ("[:^word:]", "[^[:word:]]"),
                    'D' => ("[:^digit:]", "[^0-9]"),
                    'S' => ("[:^space:]", "[^\\t\\n\\x0C\\r ]"),
                    _ => {
                        out.push(c);
                        out.push(next);
                        continue;
                    }
                };
                out.push_str(if depth > 0 { inside } else { outside });
            }
            '[' => {
                if depth > 0 && chars.peek() == Some(&':') {
                    // `[:alpha:]` inside a class: copied whole.
                    out.push(c);
                    for inner in chars.by_ref() {
                        out.push(inner);
                        if inner == ']' {
                            break;
                        }
                    }
                    continue;
                }
                depth += 1;
                out.push(c);
                // `[]…]` and `[^]…]`: a first `]` is a literal.
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().expect("peeked"));
                }
                if chars.peek() == Some(&']') {
                    out.push(chars.next().expect("peeked"));
                }
            }
            ']' if depth > 0 => {
                depth -= 1;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

impl Allowlist {
    fn new(raw: RawAllowlist) -> Allowlist {
        let target = match raw.regex_target.as_deref() {
            Some("match") => Target::Match,
            Some("line") => Target::Line,
            _ => Target::Secret,
        };
        Allowlist {
            target,
            sources: raw.regexes,
            regexes: OnceLock::new(),
            stopwords: raw.stopwords.iter().map(|w| w.to_lowercase()).collect(),
            never: raw.condition.as_deref() == Some("AND") && !raw.paths.is_empty(),
        }
    }

    /// Whether this allowlist lets the finding through as no secret.
    fn allows(&self, text: &str, whole: &Range<usize>, secret: &str) -> bool {
        if self.never {
            return false;
        }
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => &text[whole.clone()],
            Target::Line => {
                let start = text[..whole.start].rfind('\n').map_or(0, |i| i + 1);
                let end = text[whole.end..]
                    .find('\n')
                    .map_or(text.len(), |i| whole.end + i);
                &text[start..end]
            }
        };
        let regexes = self
            .regexes
            .get_or_init(|| self.sources.iter().filter_map(|r| compile(r)).collect());
        if regexes.iter().any(|regex| regex.is_match(target)) {
            return true;
        }
        if self.stopwords.is_empty() {
            return false;
        }
        let lower = secret.to_lowercase();
        self.stopwords
            .iter()
            .any(|word| lower.contains(word.as_str()))
    }
}

impl RuleSet {
    fn new(raw: RawConfig) -> RuleSet {
        let mut rules = Vec::new();
        let mut always = Vec::new();
        let mut keywords: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        for rule in raw.rules {
            let Some(source) = rule.regex else { continue };
            if rule.path.is_some() || SKIPPED.iter().any(|(id, _)| *id == rule.id) {
                continue;
            }
            let index = rules.len();
            if rule.keywords.is_empty() {
                always.push(index);
            }
            for keyword in &rule.keywords {
                let keyword = keyword.to_lowercase();
                match keywords.iter().position(|k| *k == keyword) {
                    Some(at) => keyword_rules[at].push(index),
                    None => {
                        keywords.push(keyword);
                        keyword_rules.push(vec![index]);
                    }
                }
            }
            rules.push(Rule {
                id: rule.id,
                source,
                regex: OnceLock::new(),
                secret_group: rule.secret_group,
                entropy: rule.entropy,
                allowlists: rule.allowlists.into_iter().map(Allowlist::new).collect(),
            });
        }
        let keywords = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&keywords)
            .expect("gitleaks' keywords build an automaton");
        RuleSet {
            rules,
            always,
            keywords,
            keyword_rules,
            global: Allowlist::new(raw.allowlist),
        }
    }

    /// The rules one of whose keywords `text` holds, and those with none,
    /// in the file's order.
    fn woken(&self, text: &str) -> Vec<usize> {
        let mut woken = self.always.clone();
        for found in self.keywords.find_overlapping_iter(text) {
            woken.extend(&self.keyword_rules[found.pattern().as_usize()]);
        }
        woken.sort_unstable();
        woken.dedup();
        woken
    }
}

impl Rule {
    fn regex(&self) -> Option<&Regex> {
        self.regex.get_or_init(|| compile(&self.source)).as_ref()
    }

    fn find(&'static self, text: &str, global: &Allowlist, found: &mut Vec<Found>) {
        let Some(regex) = self.regex() else { return };
        for captures in regex.captures_iter(text) {
            let whole = captures.get(0).expect("group 0 is the match");
            let group = if self.secret_group > 0 {
                captures.get(self.secret_group)
            } else {
                captures.iter().skip(1).flatten().find(|g| !g.is_empty())
            };
            let secret = group.unwrap_or(whole);
            let value = secret.as_str();
            if value.is_empty() {
                continue;
            }
            if self
                .entropy
                .is_some_and(|floor| super::shannon_entropy(value) <= floor)
            {
                continue;
            }
            // gitleaks' generic rules want a digit in the secret.
            if self.id.starts_with("generic") && !value.chars().any(|c| c.is_ascii_digit()) {
                continue;
            }
            let whole = whole.range();
            if global.allows(text, &whole, value)
                || self
                    .allowlists
                    .iter()
                    .any(|list| list.allows(text, &whole, value))
            {
                continue;
            }
            found.push(Found {
                rule: &self.id,
                whole,
                secret: secret.range(),
            });
        }
    }
}

/// Every finding of the rule set in `text`, rule by rule in the file's
/// order.
pub(super) fn find_all(text: &str) -> Vec<Found> {
    let set: &'static RuleSet = &RULE_SET;
    let mut found = Vec::new();
    for index in set.woken(text) {
        set.rules[index].find(text, &set.global, &mut found);
    }
    found
}

#[cfg(test)]
#[test]
fn go_classes_are_ascii() {
    assert_eq!(ascii_classes(r"\w+"), "[[:word:]]+");
    assert_eq!(ascii_classes(r"[\w.-]{0,50}"), "[[:word:].-]{0,50}");
    assert_eq!(ascii_classes(r"[^\s\d]"), r"[^\t\n\x0C\r 0-9]");
    assert_eq!(
        ascii_classes(r"[[:alnum:]\w]\\w\b"),
        r"[[:alnum:][:word:]]\\w\b"
    );
    assert_eq!(ascii_classes(r"[]\w]x"), "[][:word:]]x");
    let regex = compile(r"^\w+$").unwrap();
    assert!(regex.is_match("abc_1") && !regex.is_match("abé"));
}

/// The ids of the rules in use, and of those whose regex the Rust engine
/// cannot read.
#[cfg(test)]
pub(super) fn rule_ids() -> (Vec<&'static str>, Vec<&'static str>) {
    let set: &'static RuleSet = &RULE_SET;
    let ids = set.rules.iter().map(|r| r.id.as_str()).collect();
    let broken = set
        .rules
        .iter()
        .filter(|r| r.regex().is_none())
        .map(|r| r.id.as_str())
        .collect();
    (ids, broken)
}
