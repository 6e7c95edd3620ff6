//! Refuses content that looks like a credential, so secrets never reach a
//! file that is committed and shared.
//!
//! Each rule has a stable name that the error message shows. The generic
//! `key = value` rule only fires on values that look random (Shannon entropy
//! and a mix of character classes), so prose about passwords passes.

use std::sync::LazyLock;

use regex::Regex;

/// A suspected secret in some text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule's name, e.g. `github-token`.
    pub rule: &'static str,
    /// The matched text.
    pub matched: String,
}

impl Finding {
    /// The match with everything but its first four characters hidden.
    pub fn redacted(&self) -> String {
        let shown: String = self.matched.chars().take(4).collect();
        format!("{shown}…")
    }
}

struct Rule {
    name: &'static str,
    pattern: Regex,
    /// For assignment rules: the capture group holding the value to weigh.
    value_group: Option<usize>,
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |name, pattern: &str, value_group| Rule {
        name,
        pattern: Regex::new(pattern).expect("secret patterns are valid"),
        value_group,
    };
    vec![
        rule(
            "private-key",
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
            None,
        ),
        rule(
            "aws-access-key-id",
            r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
            None,
        ),
        rule(
            "aws-secret-access-key",
            r#"(?i)aws_?secret_?access_?key\s*["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})\b"#,
            None,
        ),
        rule(
            "github-token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})",
            None,
        ),
        rule("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", None),
        rule(
            "slack-webhook",
            r"https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+",
            None,
        ),
        rule("anthropic-api-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", None),
        rule(
            "openai-api-key",
            r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
            None,
        ),
        rule(
            "jwt",
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
            None,
        ),
        rule(
            "secret-assignment",
            r#"(?i)\b(?:password|passwd|pwd|secret|secret_?key|api_?key|apikey|access_?token|auth_?token|token|client_?secret|private_?key)\b["']?\s*[:=]\s*["']?([^\s"',;]{8,})"#,
            Some(1),
        ),
    ]
});

/// The first thing in `text` that looks like a secret, if any.
pub fn scan(text: &str) -> Option<Finding> {
    RULES.iter().find_map(|rule| {
        rule.pattern.captures_iter(text).find_map(|captures| {
            let whole = captures.get(0)?;
            if let Some(group) = rule.value_group {
                let value = captures.get(group)?.as_str();
                if !looks_random(value) {
                    return None;
                }
            }
            Some(Finding {
                rule: rule.name,
                matched: whole.as_str().to_owned(),
            })
        })
    })
}

/// A value that a person would not type as a word: high Shannon entropy per
/// character and at least two character classes.
fn looks_random(value: &str) -> bool {
    let classes = [
        value.chars().any(|c| c.is_ascii_lowercase()),
        value.chars().any(|c| c.is_ascii_uppercase()),
        value.chars().any(|c| c.is_ascii_digit()),
        value.chars().any(|c| !c.is_ascii_alphanumeric()),
    ]
    .into_iter()
    .filter(|&present| present)
    .count();
    classes >= 2 && shannon_entropy(value) >= 3.0
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

    #[track_caller]
    fn flagged(text: &str, rule: &str) {
        match scan(text) {
            Some(finding) => assert_eq!(finding.rule, rule, "{text}"),
            None => panic!("expected rule {rule} to flag {text:?}"),
        }
    }

    #[track_caller]
    fn clean(text: &str) {
        assert_eq!(scan(text), None, "{text}");
    }

    // Every rule: one text it must flag, one near miss it must let through.
    // The tokens are synthetic (right shape, random letters), never real ones.

    #[test]
    fn private_key() {
        flagged(
            "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA",
            "private-key",
        );
        flagged("-----BEGIN RSA PRIVATE KEY-----", "private-key");
        clean("-----BEGIN PUBLIC KEY----- is what the server expects in certs/pub.pem");
    }

    #[test]
    fn aws() {
        flagged(
            "deploy used AKIAQ3EGV7XMLN4T2PZR for the bucket",
            "aws-access-key-id",
        );
        clean("AKIA keys must be rotated every 90 days");
        flagged(
            "aws_secret_access_key = wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY1",
            "aws-secret-access-key",
        );
        clean("aws_secret_access_key is read from the vault, never from env");
    }

    #[test]
    fn github() {
        flagged(
            "token ghp_9fT2kLmQ8xR4vW1zY6bN3cH7jD0sA5eG2uKp leaked",
            "github-token",
        );
        flagged(
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
            "github-token",
        );
        clean("ghp_ prefixes mark classic personal access tokens");
    }

    #[test]
    fn slack() {
        flagged("bot uses xoxb-2231-98123-Zk3mQp9LrT4vX", "slack-token");
        clean("xoxb tokens are bot tokens");
        flagged(
            "alerts go to https://hooks.slack.com/services/T024BE7LD/B08L3JQ5Y/x9ZcQ2mT7rLp",
            "slack-webhook",
        );
        clean("alerts go to the hooks.slack.com webhook configured in ops/alerts.toml");
    }

    #[test]
    fn llm_keys() {
        flagged(
            "ANTHROPIC_API_KEY=sk-ant-api03-Qm9vZ2xlLXRva2VuLXRlc3Q",
            "anthropic-api-key",
        );
        flagged(
            "use sk-proj-4fGh7JkL9mNpQ2rStUvWxYz0aBcD for evals",
            "openai-api-key",
        );
        clean("keys start with sk- and must stay out of the repo (task-runner, disk-usage)");
    }

    #[test]
    fn jwt() {
        flagged(
            "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r",
            "jwt",
        );
        clean("fixed JWT validation accepting expired tokens (eyJ... headers are base64)");
    }

    #[test]
    fn assignments_need_random_looking_values() {
        flagged("db password=Xk9#mQ2vLp7!wR in staging", "secret-assignment");
        flagged(r#"client_secret: "f3Ab9Kq27xZp0LmN4""#, "secret-assignment");
        clean("set password=changeme in the dev fixture");
        clean("the token= field is parsed in src/auth/session.rs");
        clean("password: rotate it quarterly");
    }
}
