//! Secrets: the labelled fixture set (what `store` must refuse and what it
//! must accept), every field `store` writes, and secrets that arrive through
//! git: flagged by sync and doctor, masked in every recall output.

use std::path::Path;

use goldfish::domain::memory::{ContentError, secrets, validate_content};

use crate::common::{TestEnv, memory_lines};

/// `(name, text)` of a fixture file: one case a line, `name<TAB>text`, `\n`
/// for a line break, `\u{…}` for an invisible character, `⁞` splitting
/// tokens (see fixtures/secrets/README.md).
fn cases(file: &str) -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/secrets")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let (name, text) = line
                .split_once('\t')
                .unwrap_or_else(|| panic!("{file}: `{line}` has no tab"));
            (
                name.to_owned(),
                unescape(&text.replace("\\n", "\n").replace('⁞', "")),
            )
        })
        .collect()
}

/// `text` with every `\u{XXXX}` escape decoded.
pub(crate) fn unescape(text: &str) -> String {
    let escape = regex::Regex::new(r"\\u\{([0-9a-fA-F]{1,6})\}").unwrap();
    escape
        .replace_all(text, |captures: &regex::Captures| {
            let code = u32::from_str_radix(&captures[1], 16).unwrap();
            char::from_u32(code).unwrap().to_string()
        })
        .into_owned()
}

/// `(group, text)` of every row of `path` (a `name<TAB>text` file, `\n` for
/// a line break, `⁞` removed): the group is the name up to its `/`.
fn public_rows(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let (name, text) = line.split_once('\t').unwrap();
            let group = name.split('/').next().unwrap_or(name).to_owned();
            (group, unescape(&text.replace("\\n", "\n").replace('⁞', "")))
        })
        .collect()
}

/// Every distinct line (8 bytes or more) of tool output in the public agent
/// sessions of fixtures/capture-sessions/: code, test and build output.
fn session_lines() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/capture-sessions");
    let mut seen = std::collections::BTreeSet::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("transcript.jsonl").is_file())
        // The nineteen the rules were measured on (issue 53's sessions, each
        // with a `half`, came after; the secrets rules were never tuned on
        // them, docs/BENCHMARKS.md has their figure).
        .filter(|path| {
            !std::fs::read_to_string(path.join("labels.json")).is_ok_and(|l| l.contains("\"half\""))
        })
        .collect();
    dirs.sort();
    for dir in dirs {
        let transcript = std::fs::read_to_string(dir.join("transcript.jsonl")).unwrap();
        for line in transcript.lines() {
            let Ok(entry) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let Some(parts) = entry["message"]["content"].as_array() else {
                continue;
            };
            for part in parts.iter().filter(|p| p["type"] == "tool_result") {
                let body = match &part["content"] {
                    serde_json::Value::String(text) => text.clone(),
                    serde_json::Value::Array(items) => items
                        .iter()
                        .filter_map(|item| item["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => continue,
                };
                for line in body.lines().map(str::trim).filter(|l| l.len() >= 8) {
                    seen.insert(line.to_owned());
                }
            }
        }
    }
    seen.into_iter().collect()
}

/// Secrets measured on text nobody here wrote (issue 39, MEDIUM 6): other
/// scanners' labelled test cases (fixtures/secrets-public/, sources and
/// licences in its SOURCE.md) for recall, and real text that holds no
/// secret for false alarms: public projects' commit messages and CHANGELOG
/// entries, and agents' tool output in public sessions.
/// `scripts/eval/secrets_public.py` measures the same through the binary.
/// Floors: what the rules score today, less a little; before the public
/// rule set and the credential positions it adds: credsweeper 0.578,
/// detect-secrets 0.640, secretlint 0.798.
#[test]
fn public_corpora_recall_and_false_alarms_on_real_text() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/secrets-public");
    for (source, floor) in [
        ("credsweeper", 0.82),
        ("detect-secrets", 0.70),
        ("secretlint", 0.86),
    ] {
        let rows = public_rows(&dir.join(format!("{source}.secrets.txt")));
        let mut per_group: std::collections::BTreeMap<&str, (usize, usize)> = Default::default();
        for (group, text) in &rows {
            let entry = per_group.entry(group).or_default();
            entry.0 += 1;
            entry.1 += usize::from(secrets::scan(text).is_some());
        }
        let caught: usize = per_group.values().map(|(_, c)| c).sum();
        let recall = caught as f64 / rows.len() as f64;
        let innocent = public_rows(&dir.join(format!("{source}.innocent.txt")));
        let near_misses = innocent
            .iter()
            .filter(|(_, text)| secrets::scan(text).is_some())
            .count();
        println!(
            "{source}: {caught}/{} secrets caught ({recall:.3}), {} of {} vendors whole; near misses flagged {near_misses}/{}",
            rows.len(),
            per_group.values().filter(|(n, c)| n == c).count(),
            per_group.len(),
            innocent.len()
        );
        assert!(rows.len() >= 100, "{source}: the set shrank");
        assert!(recall >= floor, "{source}: recall {recall:.3} < {floor}");
    }

    let benign = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/injection-public");
    for set in ["benign-commits", "benign-changelog"] {
        let text = std::fs::read_to_string(benign.join(format!("{set}.tsv"))).unwrap();
        let flagged: Vec<&str> = text
            .lines()
            .filter_map(|line| line.split_once('\t'))
            .map(|(_, text)| text)
            .filter(|text| secrets::scan(&text.replace("\\n", "\n")).is_some())
            .collect();
        println!("{set}: {} flagged", flagged.len());
        assert!(flagged.is_empty(), "{set}: {flagged:?}");
    }
    // Sentences of others' documentation that name a credential and hold
    // none (fixtures/secrets-prose/, issue 54): today's false alarms are
    // templates and examples (`"password": "secure_password"`, PEM markers).
    let prose = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/secrets-prose");
    for (set, most) in [
        ("botocore-tune", 3),
        ("botocore-held-out", 3),
        ("python-docs-held-out", 9),
    ] {
        let rows = public_rows(&prose.join(format!("{set}.txt")));
        let flagged: Vec<&str> = rows
            .iter()
            .filter(|(_, text)| secrets::scan(text).is_some())
            .map(|(_, text)| text.as_str())
            .collect();
        println!("{set}: {} of {} flagged", flagged.len(), rows.len());
        assert!(rows.len() >= 300, "{set}: the set shrank");
        assert!(flagged.len() <= most, "{set}: {flagged:?}");
    }
    let lines = session_lines();
    let flagged: Vec<&String> = lines
        .iter()
        .filter(|line| secrets::scan(line).is_some())
        .collect();
    println!(
        "session tool output: {} of {} lines flagged",
        flagged.len(),
        lines.len()
    );
    assert!(lines.len() >= 4000, "the sessions shrank");
    // Today: `test.secret: Staging=? …` and `PostHogAPIKey =
    // "phc_development_key"` (twice), flagged before the rule set as well.
    assert!(flagged.len() <= 3, "{flagged:?}");
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
    assert!(
        secrets.len() >= 29 && innocent.len() >= 14,
        "the sets shrank"
    );
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

/// Regression (issue 24): a credential told in plain language ("the deploy
/// password is hunter2", "the API key is …") was stored, by `store` and by
/// capture. Goal on `stated.txt` and `stated-innocent.txt`: at least 24 of
/// 26 refused, no innocent sentence refused; prints precision and recall
/// over the labelled sets, these and the ones above (docs/BENCHMARKS.md).
#[test]
fn plain_language_credentials_are_refused_and_redacted_but_not_prose_about_them() {
    let stated = cases("stated.txt");
    let prose = cases("stated-innocent.txt");
    assert!(stated.len() >= 20 && prose.len() >= 20, "the sets shrank");
    let refused = |text: &str| validate_content(text.as_bytes(), false).is_err();
    let missed: Vec<&str> = stated
        .iter()
        .filter(|(_, text)| !refused(text))
        .map(|(name, _)| name.as_str())
        .collect();
    let false_alarms: Vec<String> = prose
        .iter()
        .filter(|(_, text)| refused(text))
        .map(|(name, text)| format!("{name}: {:?}", secrets::scan(text).map(|f| f.rule)))
        .collect();
    let score = |positives: &[(String, String)], negatives: &[(String, String)]| {
        let tp = positives.iter().filter(|(_, t)| refused(t)).count();
        let fp = negatives.iter().filter(|(_, t)| refused(t)).count();
        let precision = tp as f64 / (tp + fp).max(1) as f64;
        let recall = tp as f64 / positives.len() as f64;
        (tp, fp, precision, recall)
    };
    let (tp, fp, precision, recall) = score(&stated, &prose);
    println!(
        "plain-language credentials: {tp}/{} refused (missed {missed:?}), {fp}/{} prose refused ({false_alarms:?}): precision {precision:.2}, recall {recall:.2}",
        stated.len(),
        prose.len()
    );
    let all_positives: Vec<_> = cases("secrets.txt")
        .into_iter()
        .chain(stated.clone())
        .collect();
    let all_negatives: Vec<_> = cases("innocent.txt")
        .into_iter()
        .chain(prose.clone())
        .collect();
    let (tp, fp, precision, recall) = score(&all_positives, &all_negatives);
    println!(
        "all secret fixtures: {tp}/{} refused, {fp}/{} innocent refused: precision {precision:.2}, recall {recall:.2}",
        all_positives.len(),
        all_negatives.len()
    );
    assert!(missed.len() * 26 <= stated.len() * 2, "missed {missed:?}");
    assert!(false_alarms.is_empty(), "prose refused: {false_alarms:?}");
    // Capture's redaction finds what `store` refuses: the line goes, the
    // value never reaches the text kept.
    for (name, text) in &stated {
        if missed.contains(&name.as_str()) {
            continue;
        }
        let (kept, found) = goldfish::domain::capture::redact::remove_secrets(text);
        assert!(found, "{name}");
        assert!(!kept.contains("hunter2"), "{name}: {kept}");
        assert_eq!(secrets::scan(&kept), None, "{name}: {kept}");
    }
    for (name, text) in &prose {
        assert_eq!(
            goldfish::domain::capture::redact::remove_secrets(text),
            (text.clone(), false),
            "{name}"
        );
    }
}

/// A fake token, assembled here so that the source holds no token.
fn token(parts: &[&str]) -> String {
    parts.concat()
}

#[test]
fn store_checks_every_field_it_writes() {
    let env = TestEnv::new();
    let repo = env.repo("project", "Ada");
    let npm = token(&["npm_", "EjhRFyya1q79Vfsec", "C5d8qk0FKE3FcGdE1fK"]);
    let stripe = token(&["sk_live_", "9naHVck6pbd4", "ZRj2SxphvDTw"]);
    let url = token(&["postgres://app:", "Xq7vRt2pLm9sK", "@db.internal/app"]);
    for (args, argument, secret) in [
        (
            vec![
                "store",
                "--tags",
                &format!("ops,{npm}"),
                "rotated the deploy token",
            ],
            "--tags",
            "EjhRFyya",
        ),
        (
            vec![
                "store",
                "--files",
                &format!("config/{stripe}.env"),
                "moved the env file",
            ],
            "--files",
            "9naHVck6",
        ),
        (
            vec!["store", "--source", &url, "the importer reconnects"],
            "--source",
            "Xq7vRt2",
        ),
    ] {
        let output = env.goldfish(&repo, &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.starts_with(&format!(
                "error: {argument}: the memory looks like it contains a secret"
            )) && stderr.contains("…[redacted]")
                && !stderr.contains(secret),
            "{stderr}"
        );
    }
    assert!(memory_lines(&repo).is_empty(), "nothing refused is written");
    env.ok(
        &repo,
        &[
            "store",
            "--allow-secret",
            "--tags",
            &npm,
            "a known false positive",
        ],
    );
    assert_eq!(memory_lines(&repo).len(), 1);
}

/// A teammate commits a memory line by hand with a token in its content and
/// its tags; the other clone pulls it.
#[test]
fn a_pulled_secret_is_flagged_by_sync_and_doctor_and_masked_in_recall() {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    let stripe = token(&["sk_live_", "9naHVck6pbd4", "ZRj2SxphvDTw"]);
    let npm = token(&["npm_", "EjhRFyya1q79Vfsec", "C5d8qk0FKE3FcGdE1fK"]);
    env.ok(
        &alice,
        &[
            "store",
            "-t",
            "decision",
            "Billing retries failed payments twice",
        ],
    );
    let line = serde_json::json!({
        "id": "01M808JSD5E063FV73QVNQJ5DD",
        "timestamp": "2026-11-20T10:00:00.000Z",
        "type": "bug-fix",
        "content": format!("Billing webhooks failed: the key was {stripe}, now rotated"),
        "tags": ["billing", npm],
    });
    let file = alice.join(".goldfish/memories/2026-11-20.jsonl");
    std::fs::write(&file, format!("{line}\n")).unwrap();
    env.commit_all(&alice, "billing notes");
    env.git(&alice, &["push", "-q", "origin", "HEAD"]);
    env.git(&bob, &["pull", "-q", "--no-edit", "origin", "main"]);

    let secret_parts = ["9naHVck6", "EjhRFyya"];
    let no_secret = |what: &str, text: &str| {
        for part in secret_parts {
            assert!(!text.contains(part), "{what} shows the secret: {text}");
        }
    };

    // Sync names the file and line (the hook synced already: a reindex
    // reads every file again).
    let sync = env.goldfish(&bob, &["reindex", "--json"]);
    let report = String::from_utf8_lossy(&sync.stdout);
    assert!(
        report.contains("2026-11-20.jsonl:1: memory 01M808JSD5E063FV73QVNQJ5DD: `content` looks like it holds a secret (stripe-key: sk_live_…[redacted])"),
        "{report}"
    );
    no_secret("sync", &report);
    no_secret("sync stderr", &String::from_utf8_lossy(&sync.stderr));

    // Recall: text, JSON and the digest mask it; the memory is marked.
    let text = env.ok(&bob, &["recall", "billing"]);
    assert!(
        text.contains("sk_live_…[redacted]") && text.contains("(flagged: secret)"),
        "{text}"
    );
    no_secret("recall", &text);
    let json = env.ok(&bob, &["recall", "billing", "--json"]);
    let hit = crate::common::json_lines(&json)
        .into_iter()
        .find(|m| m["id"] == "01M808JSD5E063FV73QVNQJ5DD")
        .unwrap();
    assert_eq!(hit["flags"], serde_json::json!(["secret"]));
    assert_eq!(
        hit["tags"],
        serde_json::json!(["billing", "npm_…[redacted]"])
    );
    no_secret("recall --json", &json);
    let digest = env.ok(
        &bob,
        &[
            "recall",
            "billing webhooks key",
            "--budget",
            "200",
            "--json",
        ],
    );
    assert!(digest.contains("…[redacted]"), "{digest}");
    no_secret("recall --budget", &digest);
    let listed = env.ok(&bob, &["recall", "--since", "7d"]);
    no_secret("recall --since", &listed);

    // Doctor warns (exit 0: goldfish works), with file:line and the fix.
    let doctor = env.goldfish(&bob, &["doctor"]);
    let doctor_text = String::from_utf8_lossy(&doctor.stdout);
    assert_eq!(doctor.status.code(), Some(0), "{doctor_text}");
    assert!(
        doctor_text.contains(".goldfish/memories/2026-11-20.jsonl:1: memory 01M808JSD5E063FV73QVNQJ5DD: `content` looks like it holds a secret")
            && doctor_text.contains("rotate the credential"),
        "{doctor_text}"
    );
    no_secret("doctor", &doctor_text);
    // Nothing in the log changed.
    assert_eq!(memory_lines(&bob).len(), 2);
}

/// Regression (issue 54, finding 5): `goldfish store` took a sentence that
/// names a password with no `is`, exit 0, and `doctor` found no secret.
/// Refused as every secret is (exit 2, the kind named, the value hidden);
/// `--allow-secret` stores it, and doctor then names it.
#[test]
fn issue_54_store_refuses_a_password_a_sentence_names() {
    let env = TestEnv::new();
    let repo = env.repo("project", "Ada");
    let text = "Fixed the config test. The password Sup3rS3cret was hard-coded";
    let output = env.goldfish(&repo, &["store", text]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "the memory looks like it contains a secret (credential-statement: password …[redacted])"
        ) && !stderr.contains("Sup3rS3cret"),
        "{stderr}"
    );
    assert!(memory_lines(&repo).is_empty(), "nothing refused is written");
    env.ok(&repo, &["store", "--allow-secret", text]);
    assert_eq!(memory_lines(&repo).len(), 1);
    let doctor = env.goldfish(&repo, &["doctor"]);
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        report.contains("looks like it holds a secret (credential-statement"),
        "{report}"
    );
    assert!(!report.contains("Sup3rS3cret"), "{report}");
}
