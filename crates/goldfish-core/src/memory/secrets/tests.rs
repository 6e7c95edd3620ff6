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
        "HMAC key af135c9a384078e4c92c71fb55⁞6339b5749d4f7041bd2fa5b1e1fa57cbecbc24",
        "high-entropy",
    );
    // After a credential word, the sentence names it (issue 54).
    flagged(
        "HMAC signing key af135c9a384078e4c92c71fb55⁞6339b5749d4f7041bd2fa5b1e1fa57cbecbc24",
        "credential-statement",
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
    let key =
        join("k:\n-----BEGIN RSA PRIVATE⁞ KEY-----\nMIIEow\n-----END RSA PRIVATE⁞ KEY-----\nafter");
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
    let text = join("a \u{200b}key ghp⁞_yj6ZY4bi\u{200b}FstJtuxD13NGp8eYjtyvI3FOBrHl\u{ad} end");
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

/// `text` holds `expect` as the secret a rule finds (the whole of what
/// redaction hides), or no secret at all (`None`).
#[track_caller]
fn check(text: &str, expect: Option<&str>) {
    match (scan_all(text).into_iter().next(), expect) {
        (Some(finding), Some(value)) => {
            assert_eq!(&text[finding.secret.clone()], value, "{text}");
            assert!(!redact(text).contains(value), "{}", redact(text));
        }
        (None, None) => {}
        (found, _) => panic!("{text:?}: expected {expect:?}, found {found:?}"),
    }
}

/// Regression (issue 54, finding 5): a password a sentence names with no
/// `is` (`The password Sup3rS3cret was hard-coded`) was stored, by `store`
/// and from an agent's last answer.
#[test]
fn issue_54_a_value_named_right_after_a_credential_word() {
    check(
        "Fixed the config test. The password Sup3rS3cret was hard-coded",
        Some("Sup3rS3cret"),
    );
    check(
        "log in with password hunter2 and rotate it",
        Some("hunter2"),
    );
    check(
        "use the token abc123xyz789 for staging",
        Some("abc123xyz789"),
    );
    check(
        "call it with API key Zx9fQ2mR7tL4vB8nK3wP",
        Some("Zx9fQ2mR7tL4vB8nK3wP"),
    );
    check("sign it with the secret s3cr3t-Val9", Some("s3cr3t-Val9"));
    check("with the staging token tok_83hd7q", Some("tok_83hd7q"));
    // A plain word, a number, code, or words and numbers joined.
    for prose in [
        "the password field was empty",
        "the password reset flow",
        "token expiry is 60 s",
        "the token bucket",
        "rotate the API key monthly",
        "the password hashing moved to argon2id in v2",
        "the API key v2 endpoints",
        "the token GITHUB_TOKEN is injected",
        "the token parseHttp2 emits",
        "the token id2label table",
        "mount the secret app-v2-tls",
        "the secret MySecret2 rotates",
        "the token file ~/.config/gh/hosts.yml",
        "credentials /etc/app/creds.json",
        "the password config_test2 fixture",
        "the token user1@example.com owns",
    ] {
        check(prose, None);
    }
}

/// A quoted value after a password's word counts whatever it holds,
/// spaces too; after `token`, `secret` or a key it must look made by a
/// machine, as those words name other things.
#[test]
fn issue_54_a_quoted_value_named_after_a_credential_word() {
    check(
        "encrypted with passphrase 'correct horse battery staple'",
        Some("correct horse battery staple"),
    );
    check("the password \"swordfish\" still works", Some("swordfish"));
    check(
        "the passphrase is 'correct horse battery'",
        Some("correct horse battery"),
    );
    check("the api key `Zx9fQ2mR7tL4` works", Some("Zx9fQ2mR7tL4"));
    for prose in [
        "the token 'the' appears 12 times",
        "the secret 'db-credentials' holds the URL",
        "create an API key named 'ci-deploy'",
        "the password field is 'required'",
        "the token type is \"Bearer\" in every response",
    ] {
        check(prose, None);
    }
}

/// A value after `to` or `as` (`set the password to …`).
#[test]
fn issue_54_a_value_set_with_to_or_as() {
    // A last `!` is read as the sentence's (so is `.`): the rest is hidden.
    check(
        "I set the admin password to Winter2024! for the demo",
        Some("Winter2024"),
    );
    check(
        "the password was changed to 'bluebird' last week",
        Some("bluebird"),
    );
    check("changed the deploy token to tok_83hd7q", Some("tok_83hd7q"));
    for prose in [
        "cast the token to uint64 before hashing",
        "set the token to expire after 3600 seconds",
        "changed the password to a random one",
        "set the token to the value of CI_JOB_TOKEN",
        "the token limit was raised to 128000",
        "pass the password as an environment variable",
    ] {
        check(prose, None);
    }
}

/// `is` after more words than before, and plural credential words.
#[test]
fn issue_54_statements_after_a_host_or_in_the_plural() {
    check("the password for db01 is hunter2", Some("hunter2"));
    check(
        "the passwords are letmein42 and spring2024",
        Some("letmein42"),
    );
    check("the password for the admin account is in the vault", None);
    check("the token count is 4096 for this prompt", None);
}

#[test]
fn issue_54_a_pin() {
    check("the SIM PIN is 4821, the PUK is on the card", Some("4821"));
    check("door PIN: 907315", Some("907315"));
    check("SIM PIN 4821 unlocks the test phone", Some("4821"));
    check("the passcode is 770134", Some("770134"));
    for prose in [
        "pin serde to 1.0.200 until the fix lands",
        "the PIN must be 4 to 8 digits",
        "the PIN is 6 digits long",
        "the pin is 1234 characters",
        "pin 2024 of the board",
        "PIN 2024-01-01 was the day",
    ] {
        check(prose, None);
    }
}
