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
use std::sync::LazyLock;

use regex::Regex;

mod gitleaks;

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

/// What a value must look like for a rule to fire.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    /// The shape is enough (a vendor prefix and a fixed length).
    Shape,
    /// Not a placeholder.
    NotPlaceholder,
    /// Not a placeholder, and random-looking.
    Random,
    /// Not a placeholder, and letters mixed with digits or both cases (a
    /// token, not hyphenated words).
    Token,
    /// The bare high-entropy token rule: see [`bare_token`].
    Bare,
    /// A value right after `pw:`, `pass=` and the like (no space: `---
    /// PASS: TestParse` is a test's result): [`Check::Credential`], and
    /// not a number (`pass:1523` counts tests).
    ShortKey,
    /// A vendor-style token after a short lowercase prefix (`cio_…`):
    /// see [`random_mix`].
    Prefixed,
    /// A value in a credential position: see [`credential`].
    Credential,
    /// A value a sentence gives a credential (`the password is …`): see
    /// [`stated`].
    Stated,
}

struct Rule {
    name: &'static str,
    /// The secret is the capture group `s`; the rest of the match may be shown.
    pattern: Regex,
    check: Check,
}

/// Keys whose value is a secret in `key = value`, `key: value`.
/// Matched at any word's end (`DB_PASSWORD`, `stripeSecret`), on the
/// lowercased text: measured, a case-insensitive pattern with a word prefix
/// cost more than every other rule together.
const SECRET_KEYS: &str = r"password|passwd|pwd|passphrase|secret|secret_?key|api_?key|apikey|access_?key|access_?token|auth_?token|refresh_?token|token|client_?secret|private_?key|credentials?|signing_?key";

/// Keys whose value is a password: any value counts ([`Check::Credential`]).
const PASSWORD_KEYS: &str = r"password|passwd|pwd|passphrase|secret";

/// Credential words a sentence may give a value to (`the deploy password is
/// …`, `API key: …`): a word, or two joined by a space, `_` or `-`.
const STATED_KEYS: &str = r"password|passwd|passphrase|pwd|secret|(?:api|access|secret|private|signing|deploy|master|encryption|license)[ _-]?key|apikey|(?:(?:access|auth|api|bearer|refresh|session|deploy|personal[ _-]access)[ _-]?)?token|credentials?";

/// The rules that run on the lowercased text (their keys are lowercase).
const LOWERCASED: &[&str] = &[
    "secret-assignment",
    "password-assignment",
    "credential-statement",
];

/// Characters that change nothing a reader sees but split a token: zero-width
/// space, non-joiner and joiner, word joiner, byte order mark, soft hyphen.
const INVISIBLE: &[char] = &[
    '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{AD}',
];

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |name, pattern: &str, check| Rule {
        name,
        pattern: Regex::new(pattern).expect("secret patterns are valid"),
        check,
    };
    vec![
        rule(
            "private-key",
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?s)(?P<s>.*?(?:-----END[^\n]*?-----|\z))",
            Check::Shape,
        ),
        rule(
            "aws-access-key-id",
            r"\b(?:AKIA|ASIA|ABIA|ACCA)(?P<s>[0-9A-Z]{16})\b",
            Check::NotPlaceholder,
        ),
        rule(
            "aws-secret-access-key",
            r#"(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?(?P<s>[A-Za-z0-9/+=]{40})"#,
            Check::NotPlaceholder,
        ),
        rule(
            "github-token",
            r"\bg(?:h[pousr]|ithub_pat)_(?P<s>[A-Za-z0-9_]{30,})",
            Check::Shape,
        ),
        rule(
            "slack-token",
            r"\bxox[abposr]-(?P<s>[A-Za-z0-9-]{10,})",
            Check::Shape,
        ),
        rule(
            "slack-webhook",
            r"https://hooks\.slack\.com/services/(?P<s>T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+)",
            Check::Shape,
        ),
        rule(
            "anthropic-api-key",
            r"\bsk-ant-(?P<s>[A-Za-z0-9_-]{20,})",
            Check::Shape,
        ),
        rule(
            "openai-api-key",
            r"\bsk-(?:proj-|svcacct-|admin-)?(?P<s>[A-Za-z0-9_-]{20,})",
            Check::Token,
        ),
        rule(
            "stripe-key",
            r"\b(?:sk|rk)_(?:live|test)_(?P<s>[A-Za-z0-9]{16,})",
            Check::Shape,
        ),
        rule("npm-token", r"\bnpm_(?P<s>[A-Za-z0-9]{36})\b", Check::Shape),
        rule(
            "twilio-api-key",
            r"\bSK(?P<s>[0-9a-fA-F]{32})\b",
            Check::Shape,
        ),
        rule(
            "google-api-key",
            r"\bAIza(?P<s>[0-9A-Za-z_-]{35})",
            Check::Shape,
        ),
        rule(
            "jwt",
            r"\beyJ(?P<s>[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})",
            Check::Shape,
        ),
        rule(
            "gcp-service-account",
            r#""private_key_id"\s*:\s*"(?P<s>[^"\s]{16,})""#,
            Check::NotPlaceholder,
        ),
        rule(
            "azure-key",
            r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)\s*=\s*(?P<s>[A-Za-z0-9+/%]{20,}=*)",
            Check::NotPlaceholder,
        ),
        rule(
            "url-password",
            r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:(?P<s>[^\s:/@]+)@",
            Check::NotPlaceholder,
        ),
        rule(
            "authorization-header",
            r#"(?i)\bAuthorization["']?\s*:\s*["']?(?:Basic|Bearer|Token)\s+(?P<s>[A-Za-z0-9+/._~-]{4,}=*)"#,
            Check::Credential,
        ),
        rule(
            "bearer-token",
            r"\bBearer\s+(?P<s>[A-Za-z0-9+/._~-]{20,}=*)",
            Check::Token,
        ),
        rule(
            "secret-assignment",
            &format!(r#"(?:{SECRET_KEYS})\b["']?\s*[:=]\s*["']?(?P<s>[^\s"',;]{{8,}})"#),
            Check::Random,
        ),
        rule(
            "password-assignment",
            &format!(r#"(?:{PASSWORD_KEYS})\b["']?\s*[:=]\s*["']?(?P<s>[^\s"',;]{{4,}})"#),
            Check::Credential,
        ),
        rule(
            "credential-statement",
            &format!(
                r#"\b(?:{STATED_KEYS})(?:\s+(?:is|was|are)\s+|\s*[:=]\s*|(?:\s+[a-z]+){{1,5}}?\s+(?:is|was|are)\s+)["'`]?(?P<s>[^\s"'`,;]{{3,}}[^\s"'`,;.:!?)])"#
            ),
            Check::Stated,
        ),
        rule(
            "credential-flag",
            r#"(?i)(?:^|\s)--?(?:[a-z0-9]+[-_])*(?:token|password|passwd|pass|passphrase|secret|api-?key|apikey|bearer)(?:\s+|=)["']?(?P<s>[^\s"']{4,})"#,
            Check::Credential,
        ),
        rule(
            "short-password-key",
            r#"(?i)(?:^|[^a-z0-9])(?:pw|pass|pwd|passwords?)\s*[:=]["']?(?P<s>[^\s"',;)]{4,})"#,
            Check::ShortKey,
        ),
        rule(
            "sql-password",
            r#"(?i)\b(?:identified\s+(?:with\s+\S+\s+)?by|with\s+(?:encrypted\s+)?password|role\s+\S+\s+password)\s+["'`]?(?P<s>[^\s"'`;)]{4,})"#,
            Check::Credential,
        ),
        rule(
            "prefixed-token",
            r"\b[a-z][a-z0-9]{1,9}_(?P<s>[A-Za-z0-9]{20,80})\b",
            Check::Prefixed,
        ),
        rule(
            "high-entropy",
            r"(?P<s>[A-Za-z0-9+/_-]{32,}={0,2})",
            Check::Bare,
        ),
    ]
});

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

fn matches(rule: &Rule, visible: &Visible<'_>) -> Vec<Finding> {
    let text: &str = &visible.text;
    // The assignment rules run on the lowercased text (the same byte
    // offsets: ASCII case only), so their key literals are found fast.
    let haystack = if LOWERCASED.contains(&rule.name) {
        visible
            .lowercased
            .get_or_init(|| text.to_ascii_lowercase())
            .as_str()
    } else {
        text
    };
    let mut found = Vec::new();
    for captures in rule.pattern.captures_iter(haystack) {
        let (Some(whole), Some(secret)) = (captures.get(0), captures.name("s")) else {
            continue;
        };
        let value = &text[secret.range()];
        if value.starts_with(MASK) {
            // Already masked.
            continue;
        }
        let fires = match rule.check {
            Check::Shape => true,
            Check::NotPlaceholder => !is_placeholder(value),
            Check::Random => !is_placeholder(value) && looks_random(value),
            Check::Token => !is_placeholder(value) && looks_like_token(value),
            Check::Bare => !is_placeholder(value) && bare_token(text, secret.start(), value),
            Check::Prefixed => !is_placeholder(value) && random_mix(value),
            Check::ShortKey => {
                !value
                    .chars()
                    .all(|c| c.is_ascii_digit() || ".,%/".contains(c))
                    && credential(text, whole.start()..secret.start(), secret.range())
            }
            Check::Credential => credential(text, whole.start()..secret.start(), secret.range()),
            Check::Stated => stated(text, whole.start()..secret.start(), secret.range()),
        };
        if fires {
            found.push(Finding {
                rule: rule.name,
                shown: text[whole.start()..secret.start()].to_owned(),
                secret: secret.range(),
            });
        }
    }
    found
}

/// A value written to be replaced: `<your-password>`, `${DB_PASSWORD}`,
/// `$DB_PASSWORD`, `{{ token }}`, `%s`, `changeme`, `xxxx`, `****`, AWS's
/// documented example keys.
fn is_placeholder(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    let trimmed = lower.trim_matches(|c: char| "\"'`()[]".contains(c));
    const WORDS: &[&str] = &[
        "changeme",
        "change_me",
        "change-me",
        "password",
        "passwd",
        "secret",
        "example",
        "placeholder",
        "redacted",
        "your_",
        "your-",
        "dummy",
        "sample",
        "todo",
        "replace",
        "insert",
        "notasecret",
    ];
    trimmed.is_empty()
        || trimmed.starts_with('<')
        || trimmed.starts_with('$')
        || trimmed.starts_with("{{")
        || trimmed.starts_with('%')
        || trimmed.contains("...")
        || trimmed.contains('…')
        || value.contains(MASK)
        || WORDS.iter().any(|word| {
            // A placeholder word alone, or a value built around it; AWS's
            // examples end in EXAMPLE / EXAMPLEKEY. A credential's own name
            // counts only alone: `secret123`, `mySecret2024` are weak
            // passwords, not placeholders.
            trimmed == *word
                || (word.len() >= 6
                    && !CREDENTIAL_NAMES.contains(word)
                    && trimmed.contains(word)
                    && !looks_random(&strip(trimmed, word)))
                || (*word == "example" && value.contains("EXAMPLE"))
        })
        || repeated_filler(trimmed)
}

/// Placeholder words that are also weak passwords' stems.
const CREDENTIAL_NAMES: &[&str] = &["password", "passwd", "secret"];

/// Values that say how a setting is set, not what the secret is.
const NOT_VALUES: &[&str] = &[
    "true",
    "false",
    "yes",
    "no",
    "null",
    "none",
    "nil",
    "undefined",
    "required",
    "optional",
    "empty",
    "unset",
];

/// A value in a credential position (`key` is what precedes it in the
/// match: `password: `, `DB_PASSWORD=`, `Authorization: Bearer `): any
/// value that is not a placeholder or a setting (`true`, `none`), unless
/// it reads as prose. A value reads as a secret when it looks like a token,
/// holds a digit or a symbol, is quoted, follows `=` tightly
/// (`DB_PASSWORD=hunter2`) or ends its line; a plain word followed by more
/// words (`password: rotate it quarterly`) is prose.
fn credential(text: &str, key: Range<usize>, secret: Range<usize>) -> bool {
    let value = &text[secret.clone()];
    let bare = value.trim_end_matches(['.', ':', '!', '?', ')']);
    if is_placeholder(value) || NOT_VALUES.contains(&bare.to_ascii_lowercase().as_str()) {
        return false;
    }
    let key = &text[key];
    let marked = bare
        .chars()
        .any(|c| c.is_ascii_digit() || "!@#$%^&*+=?~|".contains(c));
    let quoted = key.ends_with(['"', '\'']);
    let tight = key.ends_with('=');
    let after = &text[secret.end..];
    let ends_line = after.is_empty() || after.starts_with(['\n', '\r']);
    looks_like_token(value) || marked || quoted || tight || ends_line
}

/// Words that name a format, an algorithm or a scheme: what a sentence
/// says a token *is* (`the token is base64`, `the key is ed25519`), not its
/// value.
const TECHNICAL_TERMS: &[&str] = &[
    "base32",
    "base58",
    "base64",
    "base64url",
    "hex",
    "sha1",
    "sha256",
    "sha384",
    "sha512",
    "md5",
    "hs256",
    "hs384",
    "hs512",
    "rs256",
    "rs384",
    "rs512",
    "es256",
    "es384",
    "es512",
    "ps256",
    "eddsa",
    "ed25519",
    "ed448",
    "x25519",
    "p256",
    "p384",
    "secp256k1",
    "rsa",
    "rsa2048",
    "rsa4096",
    "aes",
    "aes128",
    "aes256",
    "utf8",
    "utf-8",
    "x509",
    "oauth",
    "oauth2",
    "oidc",
    "saml2",
    "jwt",
    "jwe",
    "jws",
    "uuid",
    "uuid4",
    "uuidv4",
    "uuidv7",
    "ulid",
    "argon2",
    "argon2id",
    "bcrypt",
    "scrypt",
    "pbkdf2",
    "http2",
    "ipv4",
    "ipv6",
    "2fa",
    "mfa",
    "totp",
    "hotp",
    "hmac",
    "sha",
    "sha2",
    "sha3",
    "chacha20",
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    "pkcs8",
    "pkcs12",
    "pem",
    "der",
];

/// Units after a number: `the token is 3600 seconds`, `32-byte`.
static NUMBER_WITH_UNIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\d+(?:\.\d+)?[ -]?(?:bits?|bytes?|chars?|characters?|digits?|letters?|ms|s|secs?|seconds?|m|mins?|minutes?|h|hours?|d|days?|weeks?|months?|years?|kb|mb|k)?$")
        .expect("a valid pattern")
});

/// A value a sentence gives a credential (`key` is what precedes it in
/// the match: `the password is `, `api key: `): not a placeholder or a
/// setting, nor a number (`the token is 3600 seconds`), a format or an
/// algorithm (`the token is HS256-signed`), a path or a file; and marked
/// as a value: a digit or a symbol in it (`hunter2`, `p@ss`), or quoted
/// (`the password is "swordfish"`). A plain word after `is` (`the token is
/// valid`, `the password is wrong`) reads as prose: `the password is
/// swordfish` is missed, as it cannot be told from prose by its words.
fn stated(text: &str, key: Range<usize>, secret: Range<usize>) -> bool {
    let value = &text[secret.clone()];
    let lower = value.to_ascii_lowercase();
    if is_placeholder(value) || NOT_VALUES.contains(&lower.as_str()) {
        return false;
    }
    let head = lower.split(['-', '.', '/']).next().unwrap_or(&lower);
    if TECHNICAL_TERMS.contains(&lower.as_str())
        || TECHNICAL_TERMS.contains(&head)
        || NUMBER_WITH_UNIT.is_match(&lower)
        || lower.starts_with(['/', '~', '.'])
    {
        return false;
    }
    // A number of fewer than 6 digits is a size or a count (`the token
    // limit: 4096`), and so is one followed by a word (`the token is 86400
    // seconds`).
    let digits = value.chars().filter(char::is_ascii_digit).count();
    let after = &text[secret.end..];
    if digits == value.len()
        && (digits < 6 || after.starts_with(' ') && after[1..].starts_with(char::is_alphabetic))
    {
        return false;
    }
    // An environment variable's name (`the token is GITHUB_TOKEN`).
    if value.contains('_')
        && value
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    {
        return false;
    }
    let key = &text[key];
    let quoted = key.ends_with(['"', '\'', '`']);
    let marked = digits > 0 || value.chars().any(|c| "!@#$%^&*+=?~|".contains(c));
    quoted || marked
}

/// `value` without `word`.
fn strip(value: &str, word: &str) -> String {
    value.replace(word, "")
}

/// Mostly one character: `xxxxxxxx`, `********`, `00000000`.
fn repeated_filler(value: &str) -> bool {
    let mut counts = std::collections::HashMap::new();
    for c in value.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    let most = counts.values().copied().max().unwrap_or(0);
    let len = value.chars().count();
    len > 0 && most * 2 > len
}

/// A value that a person would not type as a word: high Shannon entropy per
/// character and at least two character classes.
fn looks_random(value: &str) -> bool {
    character_classes(value) >= 2 && shannon_entropy(value) >= 3.0
}

/// [`looks_random`], with at least two of lowercase, uppercase and digits.
fn looks_like_token(value: &str) -> bool {
    let alphanumeric: String = value.chars().filter(char::is_ascii_alphanumeric).collect();
    character_classes(&alphanumeric) >= 2 && looks_random(value)
}

fn character_classes(value: &str) -> usize {
    [
        value.chars().any(|c| c.is_ascii_lowercase()),
        value.chars().any(|c| c.is_ascii_uppercase()),
        value.chars().any(|c| c.is_ascii_digit()),
        value.chars().any(|c| !c.is_ascii_alphanumeric()),
    ]
    .into_iter()
    .filter(|&present| present)
    .count()
}

/// Words that say a nearby token is a secret.
static SECRET_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:key|secret|token|passw|credential|signing|hmac|api)")
        .expect("a valid pattern")
});

/// Words that say a nearby token is a digest or an id, not a secret.
static DIGEST_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:sha-?\d|md5|blake|checksum|integrity|digest|hash|commit|revert|merge|cherry|rev\b|fingerprint|etag|uuid|\bid\b)")
        .expect("a valid pattern")
});

/// A long token with no prefix or key to go by: flagged when it is random
/// and stands on its own. Hex needs a secret word shortly before it (git
/// ids, digests and UUIDs are hex too); mixed-case letters and digits are
/// enough. Never a token inside a URL or a file name, nor next to a digest
/// word.
fn bare_token(text: &str, start: usize, token: &str) -> bool {
    let end = start + token.len();
    // After the whitespace before it, which may be more than a byte (a
    // no-break space).
    let word_start = text[..start]
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let word_end = text[end..]
        .find(char::is_whitespace)
        .map_or(text.len(), |i| end + i);
    let word = &text[word_start..word_end];
    if word.contains("://") {
        return false;
    }
    let rest = &text[end..word_end];
    if rest.starts_with('.') && rest[1..].starts_with(|c: char| c.is_ascii_alphabetic()) {
        // A file name: `uploads/3fA9….webp`.
        return false;
    }
    let mut before_start = start.saturating_sub(40);
    while !text.is_char_boundary(before_start) {
        before_start -= 1;
    }
    let before = &text[before_start..start];
    let before = before.rsplit('\n').next().unwrap_or(before);
    let token_head: String = token.chars().take(8).collect();
    if DIGEST_WORD.is_match(before) || DIGEST_WORD.is_match(&token_head) {
        return false;
    }
    let hex = token.chars().all(|c| c.is_ascii_hexdigit());
    if hex {
        return SECRET_WORD.is_match(before) && shannon_entropy(token) >= 3.0;
    }
    let count = |f: fn(&char) -> bool| token.chars().filter(f).count();
    count(char::is_ascii_uppercase) >= 2
        && count(char::is_ascii_lowercase) >= 2
        && count(char::is_ascii_digit) >= 2
        && shannon_entropy(token) >= 4.0
}

/// Upper case, lower case and digits, each at least twice, changing
/// class often, with short runs of lower case (a random token, not
/// `HashMapInsert1000Items`, whose runs are words), and high entropy.
fn random_mix(value: &str) -> bool {
    let class = |c: char| {
        if c.is_ascii_uppercase() {
            0
        } else if c.is_ascii_lowercase() {
            1
        } else {
            2
        }
    };
    let mut counts = [0usize; 3];
    let mut changes = 0;
    let mut last = None;
    for c in value.chars() {
        let now = class(c);
        counts[now] += 1;
        if last.is_some_and(|last| last != now) {
            changes += 1;
        }
        last = Some(now);
    }
    let lower_runs = value
        .split(|c: char| !c.is_ascii_lowercase())
        .filter(|run| !run.is_empty())
        .count();
    counts.iter().all(|&n| n >= 2)
        && changes * 3 >= value.len()
        // The mean run of lower case: about 1.7 in random base 62.
        && counts[1] * 2 < lower_runs * 5
        && shannon_entropy(value) >= 3.5
}

fn shannon_entropy(value: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for c in value.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    let len = value.chars().count() as f64;
    counts
        .values()
        .map(|&n| {
            let p = n as f64 / len;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tokens below are synthetic (right shape, random letters), split
    /// by `⁞` so that no scanner reads them as real ones.
    fn join(text: &str) -> String {
        text.replace('⁞', "")
    }

    #[track_caller]
    fn flagged(text: &str, rule: &str) {
        let text = join(text);
        match scan(&text) {
            Some(finding) => assert_eq!(finding.rule, rule, "{text}"),
            None => panic!("expected rule {rule} to flag {text:?}"),
        }
    }

    #[track_caller]
    fn clean(text: &str) {
        let text = join(text);
        assert_eq!(scan(&text), None, "{text}");
    }

    // Every rule: one text it must flag, one near miss it must let through.
    // The fixture sets in fixtures/secrets/ are measured in tests/it.

    #[test]
    fn private_key() {
        flagged(
            "key:\n-----BEGIN OPENSSH PRIVATE⁞ KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA",
            "private-key",
        );
        flagged("-----BEGIN RSA PRIVATE⁞ KEY-----", "private-key");
        clean("-----BEGIN PUBLIC KEY----- is what the server expects in certs/pub.pem");
    }

    #[test]
    fn aws() {
        flagged(
            "deploy used AKIA⁞Q3EGV7XMLN4T2PZR for the bucket",
            "aws-access-key-id",
        );
        clean("AKIA keys must be rotated every 90 days");
        clean("the docs use AKIAIOSFODNN7EXAMPLE");
        flagged(
            "aws_secret_access_key = wJalrXUtnFEMIK7MD⁞ENGbPxRfiCYzQmPLaKEY1x9",
            "aws-secret-access-key",
        );
        clean("aws_secret_access_key is read from the vault, never from env");
    }

    #[test]
    fn github() {
        flagged(
            "token ghp⁞_9fT2kLmQ8xR4vW1zY6bN3cH7jD0sA5eG2uKp leaked",
            "github-token",
        );
        flagged(
            "github_pat⁞_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
            "github-token",
        );
        clean("ghp_ prefixes mark classic personal access tokens");
    }

    #[test]
    fn slack() {
        flagged("bot uses xoxb⁞-2231-98123-Zk3mQp9LrT4vX", "slack-token");
        clean("xoxb tokens are bot tokens");
        flagged(
            "alerts go to https://hooks.slack.com/services/T024⁞BE7LD/B08L3JQ5Y/x9ZcQ2mT7rLp",
            "slack-webhook",
        );
        clean("alerts go to the hooks.slack.com webhook configured in ops/alerts.toml");
    }

    #[test]
    fn llm_keys() {
        flagged(
            "ANTHROPIC_API_KEY=sk-ant⁞-api03-Qm9vZ2xlLXRva2VuLXRlc3Q",
            "anthropic-api-key",
        );
        flagged(
            "use sk-proj⁞-4fGh7JkL9mNpQ2rStUvWxYz0aBcD for evals",
            "openai-api-key",
        );
        clean("keys start with sk- and must stay out of the repo (task-runner, disk-usage)");
        clean("we wrap sk-learn-compatible-estimators-in-a-pipeline");
    }

    #[test]
    fn jwt() {
        flagged(
            "Bearer eyJhbGciOiJIUzI1NiJ9⁞.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r",
            "jwt",
        );
        clean("fixed JWT validation accepting expired tokens (eyJ... headers are base64)");
    }

    #[test]
    fn vendor_tokens() {
        flagged(
            "billing uses sk_live⁞_9naHVck6pbd4ZRj2SxphvDTw",
            "stripe-key",
        );
        flagged(
            "publish with npm⁞_EjhRFyya1q79VfsecC5d8qk0FKE3FcGdE1fK",
            "npm-token",
        );
        flagged("sms: SK⁞e7e8201acdb19e90dc0bc0487faa7afa", "twilio-api-key");
        flagged(
            "maps: AIza⁞SyaTCRhwnZQqQmOR69pYamt7uzPVZDo7uR6",
            "google-api-key",
        );
        clean("sk_live_ keys go in the vault; npm_ tokens too; AIza keys are browser keys");
    }

    #[test]
    fn connection_strings_and_headers() {
        flagged(
            "postgres://app:Xq7vRt2⁞pLm9sK@db.internal:5432/app",
            "url-password",
        );
        clean("connect with postgres://app:<password>@localhost/app");
        clean("connect with postgres://localhost:5432/app as ${USER}");
        flagged(
            "AccountName=x;AccountKey=56rPVhEB6+MPrObthsfo4s8/VaDm9an⁞vK21wV8w3zKml5oJ==",
            "azure-key",
        );
        flagged(
            "Authorization: Basic ZGVwbG95Ond6enZIc0x⁞PTDZ1dXhBUEo=",
            "authorization-header",
        );
        clean("the Authorization: Bearer header carries the session token");
    }

    #[test]
    fn assignments_need_random_looking_values() {
        flagged(
            "db password=Xk9#mQ2v⁞Lp7!wR in staging",
            "secret-assignment",
        );
        flagged(
            r#"client_secret: "f3Ab9Kq2⁞7xZp0LmN4""#,
            "secret-assignment",
        );
        flagged(
            "DB_PASSWORD=Xk9mQ2v⁞Lp7wR3 in the old .env",
            "secret-assignment",
        );
        clean("set password=changeme in the dev fixture");
        clean("set password=<your-password> in .env");
        clean("DB_PASSWORD=${DB_PASSWORD} comes from the environment");
        clean(r#"api_key = "xxxxxxxxxxxxxxxxxxxx" is the format"#);
        clean("the token= field is parsed in src/auth/session.rs");
        clean("password: rotate it quarterly");
    }

    #[test]
    fn bare_tokens() {
        flagged(
            "the secret k7U4O5Zi/czrwcK+tmoYgj⁞7LZDwTkENNvOX8R4jI works",
            "high-entropy",
        );
        flagged(
            "HMAC signing key af135c9a384078e4c92c71fb55⁞6339b5749d4f7041bd2fa5b1e1fa57cbecbc24",
            "high-entropy",
        );
        clean("reverted 17fb2e904784b2a966c5e801728b3d19e5867b38 before the key rotation");
        clean("image @sha256:af135c9a384078e4c92c71fb556339b5749d4f7041bd2fa5b1e1fa57cbecbc24");
        clean("thumbnails go to uploads/by8a4cq57s3ImGgfFviB8JI6xGHchFSy.webp");
        clean("TokenCounter::count_exact_with_model_tokenizer_fallback");
    }

    #[test]
    fn redaction_keeps_the_prefix_and_hides_the_secret() {
        let text = join(
            "use sk_live⁞_9naHVck6pbd4ZRj2SxphvDTw and postgres://app:Xq7vRt2⁞pLm9sK@db/app, password=Xk9#mQ2v⁞Lp7!wR",
        );
        let masked = redact(&text);
        assert_eq!(
            masked,
            "use sk_live_…[redacted] and postgres://app:…[redacted]@db/app, password=…[redacted]"
        );
        assert_eq!(redact(&masked), masked, "redacting twice changes nothing");
        assert_eq!(scan(&masked), None, "a masked text holds no secret");
        assert_eq!(
            scan(&text).unwrap().redacted(),
            "sk_live_…[redacted]",
            "{text}"
        );
        let key = join(
            "k:\n-----BEGIN RSA PRIVATE⁞ KEY-----\nMIIEow\n-----END RSA PRIVATE⁞ KEY-----\nafter",
        );
        assert_eq!(
            redact(&key),
            join("k:\n-----BEGIN RSA PRIVATE⁞ KEY-----…[redacted]\nafter")
        );
    }

    /// Regression: weak values in a credential position, and tokens split
    /// by an invisible character, were stored without complaint.
    #[test]
    fn secrets_stored_without_complaint() {
        flagged("postgres://admin:hunter2@prod-db", "url-password");
        flagged("postgres://user:pass@host", "url-password");
        flagged("password: hunter2", "password-assignment");
        flagged("DB_PASSWORD=hunter2", "password-assignment");
        flagged("set pwd=\"letmein\" for the demo", "password-assignment");
        flagged("the secret=tiger7 of the old box", "password-assignment");
        flagged("Authorization: Bearer abc123", "authorization-header");
        flagged(
            "CI pushes with ghp⁞_yj6ZY4bi\u{200b}FstJtuxD13NGp8eYjtyvI3FOBrHl",
            "github-token",
        );
        flagged(
            "billing uses sk_live⁞_9naHVck6\u{ad}pbd4ZRj2SxphvDTw",
            "stripe-key",
        );
        // Placeholders, variables and prose stay clean.
        clean("postgres://user:${DB_PASSWORD}@host");
        clean("password: <your password>");
        clean("Authorization: Bearer $TOKEN");
        clean("password: changeme");
        clean("DB_PASSWORD=changeme");
        clean("password: rotate it quarterly");
        clean("password: see docs/ops/rotation.md for the steps");
        clean("the secret= flag is documented, secret=true turns it on");
        clean("the Authorization: Bearer header carries the session token");
        clean("the token= field is parsed in src/auth/session.rs");
    }

    /// Regression: a token after a no-break space (two bytes of
    /// whitespace) panicked the scan, and with it the sync of every clone
    /// whose log held such a line (a LongMemEval conversation did).
    #[test]
    fn a_token_after_a_multibyte_space_is_scanned_not_a_panic() {
        let rule = |text: &str| scan(text).map(|finding| finding.rule);
        for space in ["\u{a0}", "\u{2003}", "\u{3000}"] {
            // Candidates are runs of 32 or more: random, a file name, prose
            // run together (as the conversation had it, after a quote).
            for token in [
                "Zx9fQ2mR7tL4vB8nK3wPq5TzHy6Jc1Ds",
                "3fA9Zq7Lm2Xc8Vb4Nk1Pw6Tz5Hy3Jc7Ds.webp",
                "\u{2018}IhopeyoufindthisASCIIartheartmoretoyourliking.",
            ] {
                let with = format!("you might li{space}{token} here");
                let plain = format!("you might li {token} here");
                assert_eq!(rule(&with), rule(&plain), "{with}");
            }
        }
    }

    proptest::proptest! {
        /// Whatever mix of multi-byte spaces, quotes, letters and the
        /// words the rules look at a line holds, scanning and redacting it
        /// never panics (every slice on a character boundary).
        #[test]
        fn scanning_never_panics_on_any_mix_of_characters(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    " ", "\u{a0}", "\u{2003}", "\u{3000}", "\u{200b}", "\u{2018}", "\u{e9}",
                    "\u{1f600}", "\n", "a", "Z", "9", "/", "_", ".", "=", ":", "-",
                    "key", "token ", "password is ", "sha256", "://", "Bearer ",
                    "Zx9fQ2mR7tL4vB8n", "K3wPq5TzHy6Jc1Ds",
                ]),
                0..80,
            )
        ) {
            let text = pieces.concat();
            let _ = scan(&text);
            let _ = scan_all(&text);
            let _ = redact(&text);
        }
    }

    /// Regression (issue 24): a credential given in a sentence, as a
    /// failing test's output told it, was neither refused nor redacted.
    #[test]
    fn credentials_stated_in_a_sentence() {
        flagged("the deploy password is hunter2", "credential-statement");
        flagged("Error: the password is hunter2.", "credential-statement");
        flagged(
            "the API key is Zx9fQ2mR7tL4vB8nK3wP",
            "credential-statement",
        );
        flagged("our staging token is abc123xyz", "credential-statement");
        flagged(
            "the admin password was \"swordfish\"",
            "credential-statement",
        );
        flagged("the pwd is `letmein!`", "credential-statement");
        flagged("API key: hunter22", "credential-statement");
        assert_eq!(
            redact("the deploy password is hunter2."),
            "the deploy password is …[redacted]."
        );
        for prose in [
            "the password field is required",
            "the password is required",
            "rotate the API key monthly",
            "the token bucket rate limiter drops bursts",
            "the token is valid for one hour",
            "the token is 3600 seconds",
            "the token is HS256-signed",
            "the token limit: 4096",
            "the token is GITHUB_TOKEN from the environment",
            "the key is ~/.ssh/id_ed25519",
            "the password is swordfish",
            "PASSWORD_MIN_LENGTH=12",
            "MAX_TOKENS=4096",
        ] {
            clean(prose);
        }
    }

    #[test]
    fn redaction_masks_the_original_span_around_invisible_characters() {
        let text =
            join("a \u{200b}key ghp⁞_yj6ZY4bi\u{200b}FstJtuxD13NGp8eYjtyvI3FOBrHl\u{ad} end");
        let finding = scan(&text).unwrap();
        assert_eq!(finding.shown, "ghp_");
        assert_eq!(
            &text[finding.secret.clone()],
            "yj6ZY4bi\u{200b}FstJtuxD13NGp8eYjtyvI3FOBrHl"
        );
        assert_eq!(redact(&text), "a \u{200b}key ghp_…[redacted]\u{ad} end");
        let weak = "DB_PASSWORD=hun\u{ad}ter2, then";
        assert_eq!(redact(weak), "DB_PASSWORD=…[redacted], then");
    }

    /// Every regex of the public rule set reads in Rust's engine, and the
    /// rules we use are most of the file's.
    #[test]
    fn the_public_rule_set_compiles() {
        let (ids, broken) = gitleaks::rule_ids();
        assert!(ids.len() >= 200, "only {} rules in use", ids.len());
        assert!(
            broken.is_empty(),
            "rules the Rust engine cannot read: {broken:?}"
        );
    }

    /// Vendors nobody here listed come from the public rule set, with the
    /// rule's id as the finding's name and its prefix shown.
    #[test]
    fn vendors_from_the_public_rule_set() {
        flagged(
            "the Linear sync uses lin_api_⁞q8vr2ml9tz4wk7pn3bf6hj1sd5gy0ca4ue7io2pl",
            "linear-api-key",
        );
        flagged(
            "the GitLab runner uses glpat-⁞Xq8vR2mL9tZ4wK7pN3bF",
            "gitlab-pat",
        );
        flagged(
            "login with hf_⁞XqvRmLtZwKpNbFhJsDgYcAeUiOoPlMkQWz",
            "huggingface-access-token",
        );
        clean("Linear keys start with lin_api_ and are 40 characters after it");
        clean("GitLab personal access tokens start with glpat-");
    }

    /// Regression (issue 39, MEDIUM 6): three credentials stored with exit
    /// 0 and shared.
    #[test]
    fn medium_6_credentials_nobody_listed() {
        for text in [
            "The crates.io publish token for the release workflow is cio_⁞8fJ2kLq9ZxW3vB7nR4tY1mP6 stored in CI secrets",
            "publish with cargo publish --token cio_⁞8fJ2kLq9ZxW3vB7nR4tY1mP6",
            "Staging DB: postgres user hexyl, the password we use there is Tr0ub4⁞dor&3",
            "release with cio_⁞8fJ2kLq9ZxW3vB7nR4tY1mP6 from the vault",
        ] {
            let text = join(text);
            let finding = scan(&text).unwrap_or_else(|| panic!("missed {text:?}"));
            assert!(
                !finding.redacted().contains("8fJ2") && !finding.redacted().contains("dor&3"),
                "{text:?} -> {}",
                finding.redacted()
            );
            assert!(!redact(&text).contains("8fJ2") && !redact(&text).contains("dor&3"));
        }
        for prose in [
            "the password we use there is stored in the vault",
            "the token we send back is valid for one hour",
            "the token budget of the digest is 200k",
            "pass --token to publish and --password-file for the registry",
            "run cargo publish --token $CARGO_TOKEN in CI",
            "use --token <token> from the settings page",
            "bench_HashMapInsert1000Items and test_ParseHttp2Response are slow",
            "fixed in v2_0_0 and src_lib_rs_HashMapInsert10000",
        ] {
            clean(prose);
        }
    }
}
