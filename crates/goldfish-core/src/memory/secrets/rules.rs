//! Our rules: each a name, a pattern whose group `s` is the secret, and
//! the check its value must pass; [`matches`] runs one on a text.

use std::sync::LazyLock;

use crate::memory::ascii_first::AsciiFirst;

use super::values::{
    bare_token, credential, is_placeholder, looks_like_token, looks_random, named, pin, random_mix,
    stated,
};
use super::{Finding, MASK, Visible};

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
    /// A value a sentence names after a credential word, with no `is`
    /// between (`the password Sup3rS3cret was`, `set the token to …`): see
    /// [`named`].
    Named,
    /// A PIN a sentence gives: see [`pin`].
    Pin,
}

pub(super) struct Rule {
    name: &'static str,
    /// The secret is the capture group `s`; the rest of the match may be shown.
    pattern: AsciiFirst,
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

/// What comes between a credential word and the value a sentence gives it:
/// `is`, `was`, `:`, `=`, or up to five words and then `is` (`the password
/// for db01 is …`).
const STATED_BY: &str =
    r"(?:\s+(?:is|was|are|were)\s+|\s*[:=]\s*|(?:\s+[a-z0-9_@.-]+){1,5}?\s+(?:is|was|are|were)\s+)";

/// The same, or a value named with no verb (`the password Sup3rS3cret`,
/// `with passphrase '…'`), or after `to` or `as` (`set the password to
/// …`, `the token was changed to …`).
const NAMED_BY: &str = r"(?:\s+(?:is|was|are|were)\s+|\s*[:=]\s*|(?:\s+[a-z0-9_@.-]+){1,5}?\s+(?:is|was|are|were)\s+|(?:\s+[a-z0-9_@.-]+){0,3}?\s+(?:to|as)\s+|\s+)";

/// The rules that run on the lowercased text (their keys are lowercase).
const LOWERCASED: &[&str] = &[
    "secret-assignment",
    "password-assignment",
    "credential-statement",
];
pub(super) static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |name, pattern: &str, check| Rule {
        name,
        pattern: AsciiFirst::new(pattern),
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
        // A quoted value, which may hold spaces (`with passphrase 'correct
        // horse battery staple'`): before the rules that would take its
        // first word.
        rule(
            "credential-statement",
            &format!(
                r#"\b(?:{STATED_KEYS}|passcode)s?{NAMED_BY}["'`](?P<s>[^"'`\n]{{3,64}}?)["'`]"#
            ),
            Check::Named,
        ),
        rule(
            "credential-statement",
            &format!(
                r#"\b(?:{STATED_KEYS})s?{STATED_BY}["'`]?(?P<s>[^\s"'`,;]{{3,}}[^\s"'`,;.:!?)])"#
            ),
            Check::Stated,
        ),
        rule(
            "credential-statement",
            &format!(r#"\b(?:{STATED_KEYS}|passcode)s?\s+(?P<s>[^\s"'`,;]{{3,}}[^\s"'`,;.:!?)])"#),
            Check::Named,
        ),
        rule(
            "credential-statement",
            &format!(
                r#"\b(?:{STATED_KEYS}|passcode)s?(?:\s+[a-z0-9_@.-]+){{0,3}}?\s+(?:to|as)\s+(?P<s>[^\s"'`,;]{{3,}}[^\s"'`,;.:!?)])"#
            ),
            Check::Named,
        ),
        rule(
            "credential-statement",
            r#"\b(?:pin|pin code|pin number|passcode)(?:\s+(?:is|was)\s+|\s*[:=]\s*|\s+)["'`]?(?P<s>\d{4,8})\b"#,
            Check::Pin,
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

pub(super) fn matches(rule: &Rule, visible: &Visible<'_>) -> Vec<Finding> {
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
    for (whole, secret) in rule.pattern.captures_named(haystack, "s") {
        let Some(secret) = secret else {
            continue;
        };
        let value = &text[secret.clone()];
        if value.starts_with(MASK) {
            // Already masked.
            continue;
        }
        let fires = match rule.check {
            Check::Shape => true,
            Check::NotPlaceholder => !is_placeholder(value),
            Check::Random => !is_placeholder(value) && looks_random(value),
            Check::Token => !is_placeholder(value) && looks_like_token(value),
            Check::Bare => !is_placeholder(value) && bare_token(text, secret.start, value),
            Check::Prefixed => !is_placeholder(value) && random_mix(value),
            Check::ShortKey => {
                !value
                    .chars()
                    .all(|c| c.is_ascii_digit() || ".,%/".contains(c))
                    && credential(text, whole.start..secret.start, secret.clone())
            }
            Check::Credential => credential(text, whole.start..secret.start, secret.clone()),
            Check::Stated => stated(text, whole.start..secret.start, secret.clone()),
            Check::Named => named(text, whole.start..secret.start, secret.clone()),
            Check::Pin => pin(text, whole.start..secret.start, secret.clone()),
        };
        if fires {
            found.push(Finding {
                rule: rule.name,
                shown: text[whole.start..secret.start].to_owned(),
                secret: secret.clone(),
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rule's ASCII form finds what its Unicode form finds (matches
    /// and secret groups, at the same offsets) on every ASCII line of the
    /// committed corpora, as written and lowercased.
    #[test]
    fn each_rule_reads_ascii_text_as_its_unicode_form_does() {
        // The corpora, read at compile time (the core does no I/O).
        let corpora = [
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/secrets/innocent.txt"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/secrets/secrets.txt"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/secrets/stated-innocent.txt"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/secrets/stated.txt"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/secrets-public/credsweeper.innocent.txt"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/secrets-public/credsweeper.secrets.txt"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/secrets-public/detect-secrets.innocent.txt"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/secrets-public/detect-secrets.secrets.txt"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/secrets-public/secretlint.innocent.txt"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/secrets-public/secretlint.secrets.txt"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/secrets-prose/botocore-held-out.txt"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/secrets-prose/botocore-tune.txt"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/secrets-prose/python-docs-held-out.txt"
            )),
        ];
        let unicode: Vec<regex::Regex> = RULES
            .iter()
            .map(|rule| regex::Regex::new(rule.pattern.source()).unwrap())
            .collect();
        let mut lines = 0;
        for text in corpora {
            for line in text.lines().filter(|line| line.is_ascii()) {
                lines += 1;
                for haystack in [line.to_owned(), line.to_ascii_lowercase()] {
                    for (rule, unicode) in RULES.iter().zip(&unicode) {
                        let expected: Vec<_> = unicode
                            .captures_iter(&haystack)
                            .map(|found| {
                                (
                                    found.get(0).unwrap().range(),
                                    found.name("s").map(|part| part.range()),
                                )
                            })
                            .collect();
                        assert_eq!(
                            rule.pattern.captures_named(&haystack, "s"),
                            expected,
                            "{} on {haystack:?}",
                            rule.name,
                        );
                    }
                }
            }
        }
        assert!(lines > 500, "{lines} ASCII lines read");
    }
}
