//! What a value looks like: a placeholder, a credential in its position,
//! a value a sentence gives a credential, random or a token.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::MASK;

/// A value written to be replaced: `<your-password>`, `${DB_PASSWORD}`,
/// `$DB_PASSWORD`, `{{ token }}`, `%s`, `changeme`, `xxxx`, `****`, AWS's
/// documented example keys.
pub(super) fn is_placeholder(value: &str) -> bool {
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
pub(super) fn credential(text: &str, key: Range<usize>, secret: Range<usize>) -> bool {
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
    "bearer",
    "basic",
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
pub(super) fn stated(text: &str, key: Range<usize>, secret: Range<usize>) -> bool {
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

/// A value a sentence names after a credential word (`key` is what
/// precedes it in the match: `password `, `passphrase '`, `password to `,
/// `the token was changed to `), with or without `is` between. What
/// [`stated`] turns down is turned down here too; then:
/// - quoted, after `is`, `:` or `=`: as [`stated`] (`the password is
///   "swordfish"`);
/// - quoted after a password's word (`password`, `passphrase`, `passcode`,
///   `pwd`): any value, spaces too (`with passphrase 'correct horse'`);
/// - unquoted after a password's word: six characters or more, letters with
///   a digit or a symbol (`the password Sup3rS3cret was`, `log in with
///   password hunter2`), and not code (a path, a file or a dotted name, a
///   call, an environment variable's name, `snake_case` words);
/// - after any other credential word (`token`, `secret`, `API key`), quoted
///   or not: what a machine makes, six characters or more of letters mixed
///   with digits or symbols within one part (`Sup3rS3cret`, `tok_83hd7`,
///   `Zx9fQ2…`), not words and numbers joined (`uint64`, `parseHttp2`,
///   `app-v2-tls`). Those words name other things too, a lexer's token, a
///   Kubernetes secret, an API key's name (`the token 'the'`, `the secret
///   'db-creds'`), which may be quoted.
///
/// A plain word is never a value here (`the password field was empty`,
/// `rotate the API key monthly`), nor a number (`token expiry is 60 s`).
pub(super) fn named(text: &str, key: Range<usize>, secret: Range<usize>) -> bool {
    let key_text = text[key.clone()].to_ascii_lowercase();
    let quoted = key_text.ends_with(['"', '\'', '`']);
    if quoted && STATED_FORM.is_match(&key_text) {
        return stated(text, key, secret);
    }
    let value = &text[secret.clone()];
    if !value_like(text, value, secret.end) {
        return false;
    }
    let password = PASSWORD_WORDS.iter().any(|word| key_text.starts_with(word));
    let letters = value.chars().any(|c| c.is_alphabetic());
    let marked = value
        .chars()
        .any(|c| c.is_ascii_digit() || "!@#$%^&*+=?~|".contains(c));
    let long = value.chars().count() >= 6;
    match (quoted, password) {
        (true, true) => true,
        (false, true) => long && letters && marked && !reads_as_code(value),
        (_, false) => long && letters && marked && !reads_as_code(value) && !wordy(value),
    }
}

/// How a password's value is introduced (`password`, `passphrase`,
/// `passcode`, `pwd`): these words name nothing else.
const PASSWORD_WORDS: &[&str] = &["pass", "pwd"];

/// A key of [`named`] that gives a value with `is`, `:` or `=`.
static STATED_FORM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:\s(?:is|was|are|were)\s+|[:=]\s*)["'`]$"#).expect("a valid pattern")
});

/// What [`stated`] turns down before it asks whether a value is marked: a
/// placeholder, a setting, a number (with a unit, or followed by a word),
/// a format or an algorithm, a path, an environment variable's name.
fn value_like(text: &str, value: &str, end: usize) -> bool {
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
    let digits = value.chars().filter(char::is_ascii_digit).count();
    let after = &text[end..];
    if digits == value.len()
        && (digits < 6 || after.starts_with(' ') && after[1..].starts_with(char::is_alphabetic))
    {
        return false;
    }
    !(value.contains('_')
        && value
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
}

/// An unquoted value that reads as code, not as a credential: a path, a
/// URL, a file or a dotted name (`config.toml`, `std::env`), a call or an
/// index (`token()`, `key[0]`), an address (`user@example.com`), or
/// lowercase words joined by `_` (`config_test`, `read_token_v2`).
fn reads_as_code(value: &str) -> bool {
    if value.contains([
        '.', '/', '\\', ':', '(', ')', '<', '>', '[', ']', '{', '}', '=',
    ]) {
        return true;
    }
    if let Some((user, host)) = value.split_once('@')
        && !user.is_empty()
        && host.contains('.')
    {
        return true;
    }
    value.contains('_') && wordy(value)
}

/// Every part of `value` (between `-` and `_`) is a word, a number, or a
/// word and a number run together (`uint64`, `http2`, `parseHttp2`,
/// `v1beta1`, `2fa`): what a person names things with. A machine's token
/// mixes letters and digits within a part (`Sup3rS3cret`, `83hd7`).
fn wordy(value: &str) -> bool {
    value
        .split(['-', '_'])
        .filter(|part| !part.is_empty())
        .all(|part| WORDY_PART.is_match(&part.to_ascii_lowercase()))
}

/// A part of a name: letters, digits, letters then digits, digits then a
/// short unit (`2fa`, `64k`), a version (`v1beta1`, `v2rc1`), or two words
/// joined by a `2` or a `4` read as "to" or "for" (`id2label`, `str2int`).
static WORDY_PART: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[a-z]+|\d+|[a-z]+\d+|\d+[a-z]{1,3}|v\d+(?:(?:alpha|beta|rc)\d*)?|[a-z]{2,}[24][a-z]{2,})$")
        .expect("a valid pattern")
});

/// A PIN a sentence gives (`the PIN is 4821`, `PIN: 907315`, `SIM PIN
/// 4821`): four to eight digits after `pin` and `is`, `:` or `=`, or right
/// after `PIN` in capitals (`pin 1234` may be a version to pin). Not a
/// count of something (`the PIN is 6 digits`, `pin: 1234 characters`),
/// nor part of a date or a version (`2024-01-01`, `1234.5`).
pub(super) fn pin(text: &str, key: Range<usize>, secret: Range<usize>) -> bool {
    let key_text = &text[key];
    let after = &text[secret.end..];
    if after.starts_with(['-', '.', ',', '/', ':'])
        && after[1..].starts_with(|c: char| c.is_ascii_digit())
    {
        return false;
    }
    if PIN_UNIT.is_match(after) {
        return false;
    }
    let verb = key_text.trim_end_matches(['"', '\'', '`']);
    let lower = verb.to_ascii_lowercase();
    lower.trim_end().ends_with(" is")
        || lower.trim_end().ends_with(" was")
        || lower.trim_end().ends_with([':', '='])
        || verb.starts_with("PIN")
        || lower.starts_with("passcode")
}

/// A unit after a number: what it counts.
static PIN_UNIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:digits?|characters?|chars?|bytes?|bits?|times?|tries|attempts|ms|s|secs?|seconds?|minutes?|hours?|days?)\b")
        .expect("a valid pattern")
});

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
pub(super) fn looks_random(value: &str) -> bool {
    character_classes(value) >= 2 && shannon_entropy(value) >= 3.0
}

/// [`looks_random`], with at least two of lowercase, uppercase and digits.
pub(super) fn looks_like_token(value: &str) -> bool {
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
pub(super) fn bare_token(text: &str, start: usize, token: &str) -> bool {
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
pub(super) fn random_mix(value: &str) -> bool {
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

pub(super) fn shannon_entropy(value: &str) -> f64 {
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
