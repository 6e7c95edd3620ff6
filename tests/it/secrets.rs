//! Secrets: the labelled fixture set (what `store` must refuse and what it
//! must accept), every field `store` writes, and secrets that arrive through
//! git: flagged by sync and doctor, masked in every recall output.

use std::path::Path;

use goldfish::memory::{ContentError, secrets, validate_content};

/// `(name, text)` of a fixture file: one case a line, `name<TAB>text`, `\n`
/// for a line break, `⁞` splitting tokens (see fixtures/secrets/README.md).
fn cases(file: &str) -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/secrets").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let (name, text) = line
                .split_once('\t')
                .unwrap_or_else(|| panic!("{file}: `{line}` has no tab"));
            (
                name.to_owned(),
                text.replace("\\n", "\n").replace('⁞', ""),
            )
        })
        .collect()
}

/// Goal: at least 27 of every 29 secrets refused, no innocent text refused.
#[test]
fn store_catches_the_labelled_secrets_and_no_innocent_text() {
    let secrets = cases("secrets.txt");
    let innocent = cases("innocent.txt");
    let mut missed = Vec::new();
    for (name, text) in &secrets {
        match validate_content(text.as_bytes(), false) {
            Err(ContentError::Secret { excerpt, .. }) => {
                // The message never shows the secret itself.
                assert!(excerpt.ends_with(secrets::MASK), "{name}: {excerpt}");
                let secret = secrets::scan(text).unwrap();
                assert!(
                    !excerpt.contains(&text[secret.secret.clone()]),
                    "{name}: {excerpt}"
                );
            }
            _ => missed.push(name.as_str()),
        }
    }
    let refused: Vec<&str> = innocent
        .iter()
        .filter(|(_, text)| validate_content(text.as_bytes(), false).is_err())
        .map(|(name, _)| name.as_str())
        .collect();
    let caught = secrets.len() - missed.len();
    println!(
        "secrets caught: {caught}/{} (missed: {missed:?}); innocent texts refused: {}/{} ({refused:?})",
        secrets.len(),
        refused.len(),
        innocent.len()
    );
    assert!(secrets.len() >= 29 && innocent.len() >= 14, "the sets shrank");
    assert!(
        caught * 29 >= secrets.len() * 27,
        "caught {caught}/{}; missed {missed:?}",
        secrets.len()
    );
    assert!(refused.is_empty(), "innocent texts refused: {refused:?}");
    // Redaction hides every secret of the set and leaves innocent text alone.
    for (name, text) in &secrets {
        let masked = secrets::redact(text);
        if missed.contains(&name.as_str()) {
            continue;
        }
        assert!(masked.contains(secrets::MASK), "{name}: {masked}");
        assert_eq!(secrets::scan(&masked), None, "{name}: {masked}");
    }
    for (name, text) in &innocent {
        assert_eq!(&secrets::redact(text), text, "{name}");
    }
}
