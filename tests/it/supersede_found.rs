//! Issue 26, point 2: supersession found, not only declared. The detector's
//! precision and recall on the labelled pairs of
//! `fixtures/supersede/pairs.jsonl` (chosen on the `tune` half, held on
//! both); `store` at a terminal asks per candidate, from a script names
//! them (text and `--json`), over MCP refuses naming them; every reason in
//! `--json`.
//!
//! The table: `cargo run --release --example supersede_table`.

use goldfish::adapters::embed::{Embedder, TextKind, cosine};
use goldfish::domain::supersede::labelled::{self, Detector, Label, Split};
use goldfish::domain::supersede::{ASK, LINK};

use crate::common::{TestEnv, json_lines};

/// Recall of the detector at [`ASK`] measured on each half (0.97 on both
/// when chosen), less a margin for another build of the model.
const ASK_RECALL: f64 = 0.90;

#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn the_thresholds_hold_their_precision_and_recall_on_both_halves() {
    let pairs = labelled::parse(include_str!("../../fixtures/supersede/pairs.jsonl")).unwrap();
    let cosines: Vec<f64> = crate::common::with_embedder(|embedder| {
        pairs
            .iter()
            .map(|pair| {
                let vectors = embedder
                    .embed(&[&pair.older, &pair.newer], TextKind::Document)
                    .unwrap();
                f64::from(cosine(&vectors[0], &vectors[1]))
            })
            .collect()
    });
    let mut table = String::from("threshold | half | precision | recall | flagged per label\n");
    let mut failures = Vec::new();
    for (name, threshold, detector) in [
        ("ASK", ASK, Detector::Judge),
        ("LINK", LINK, Detector::Restated),
        ("NEWER", ASK, Detector::Newer),
    ] {
        for (half, split) in [
            ("tune", Some(Split::Tune)),
            ("test", Some(Split::Test)),
            ("all", None),
        ] {
            let counts = labelled::count(&pairs, &cosines, threshold, detector, split);
            let labels: Vec<String> = Label::ALL
                .iter()
                .map(|l| format!("{} {}/{}", l.name(), counts.flagged(*l), counts.total(*l)))
                .collect();
            table.push_str(&format!(
                "{name} {threshold:.2} | {half} | {:.2} | {:.2} | {}\n",
                counts.precision(),
                counts.recall(),
                labels.join(", ")
            ));
            if name == "LINK" && counts.precision() < 0.95 {
                failures.push(format!(
                    "LINK precision on {half}: {:.2}",
                    counts.precision()
                ));
            }
            if name == "ASK" && counts.recall() < ASK_RECALL {
                failures.push(format!("ASK recall on {half}: {:.2}", counts.recall()));
            }
            // Recall's reordering: it hides nothing, but a paraphrase or
            // another fact moved above its neighbour misleads as much.
            if name == "NEWER" && counts.precision() < 0.95 {
                failures.push(format!(
                    "recall's newer-wins precision on {half}: {:.2}",
                    counts.precision()
                ));
            }
            if name == "LINK" && counts.recall() < 0.15 {
                failures.push(format!("LINK recall on {half}: {:.2}", counts.recall()));
            }
        }
    }
    println!("{table}");
    assert!(failures.is_empty(), "{}\n{table}", failures.join("\n"));
}

const OLD: &str = "The connection pool size is 20 per service instance";
const NEW: &str = "The connection pool size is 50 per service instance";

/// A workspace with the real model where `OLD` was stored as a decision
/// on 2026-11-20 (and as an insight too, with `insight`), the clock a day
/// later; and `OLD`'s id as a decision.
fn with_old(insight: bool) -> (TestEnv, std::path::PathBuf, String) {
    let env = TestEnv::new().with_model();
    let repo = env.repo("r", "Ada");
    env.set_now("2026-11-20T09:00:00Z");
    env.ok(&repo, &["store", "-t", "decision", OLD]);
    let old = crate::supersede::id_of(&env, &repo, OLD);
    if insight {
        env.ok(&repo, &["store", "-t", "insight", OLD]);
    }
    env.set_now("2026-11-21T09:00:00Z");
    (env, repo, old)
}

/// At a terminal `store` asks whether the new memory replaces the one it
/// found (default no) and records `supersedes` on a yes; `--json` says
/// why, and what was decided.
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn at_a_terminal_store_asks_and_records_supersedes_on_a_yes() {
    let (env, repo, old) = with_old(false);

    let declined = env.at_terminal(&repo, &["store", "-t", "decision", "--json", NEW], b"\n");
    let stderr = String::from_utf8_lossy(&declined.stderr);
    assert_eq!(declined.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("it may replace {old} (2026-11-20, 0."))
            && stderr.contains("number 20 → 50")
            && stderr.contains("Does the new memory replace it? [y/N]"),
        "{stderr}"
    );
    let lines = json_lines(&String::from_utf8_lossy(&declined.stdout));
    assert_eq!(lines[0]["supersedes"], serde_json::Value::Null);
    assert_eq!(lines[1]["replaceable"]["id"], old.as_str());
    assert_eq!(lines[1]["replaceable"]["decision"], "declined");
    let declined_id = lines[0]["id"].as_str().unwrap().to_owned();
    env.ok(&repo, &["forget", &declined_id]);

    let confirmed = env.at_terminal(&repo, &["store", "-t", "decision", "--json", NEW], b"y\n");
    let stderr = String::from_utf8_lossy(&confirmed.stderr);
    assert_eq!(confirmed.status.code(), Some(0), "{stderr}");
    let lines = json_lines(&String::from_utf8_lossy(&confirmed.stdout));
    assert_eq!(lines[0]["supersedes"], old.as_str(), "{lines:?}");
    let why = &lines[1]["replaceable"];
    assert_eq!(why["decision"], "superseded");
    assert_eq!(why["why"]["same_type"], true);
    assert!(why["why"]["cosine"].as_f64().unwrap() >= ASK);
    assert_eq!(
        why["why"]["differences"][0],
        serde_json::json!({"kind": "number", "older": "20", "newer": "50"})
    );
    // The old one left default recall and the briefing.
    let recalled = env.ok(&repo, &["recall", "connection pool"]);
    assert!(!recalled.contains("is 20 per"), "{recalled}");
    assert!(!env.ok(&repo, &["brief"]).contains("is 20 per"));
}

/// From a script `store` writes as before and names what it may replace
/// (text on stderr, `--json` after the record); a memory of another type,
/// or one the team quarantined, is never named.
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn from_a_script_store_writes_and_names_the_candidates() {
    let (env, repo, old) = with_old(true);
    let out = env.goldfish(&repo, &["store", "-t", "decision", NEW]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("note: it may replace ") && stderr.contains("--supersedes "),
        "{stderr}"
    );
    assert_eq!(stderr.matches("it may replace").count(), 1, "{stderr}");
    assert_eq!(crate::common::memory_lines(&repo).len(), 3);

    let json = env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "--json",
            "The connection pool size is 80 per service instance",
        ],
    );
    let lines = json_lines(&json);
    let named: Vec<&serde_json::Value> = lines[1..].iter().map(|l| &l["replaceable"]).collect();
    assert!(
        named
            .iter()
            .all(|n| n["decision"] == "not-asked" && n["type"] == "decision"),
        "{json}"
    );
    assert!(named.iter().any(|n| n["id"] == old.as_str()), "{json}");
}

/// Over MCP `store` refuses a memory that may replace another, naming it and
/// why; the agent calls again with `supersedes`, or `force` when it
/// replaces none.
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn over_mcp_store_names_the_candidates_and_the_agent_decides() {
    use crate::mcp::{call, connect, runtime, text_of};
    let (env, repo, old) = with_old(false);
    runtime().block_on(async {
        let client = connect(&env, &repo).await;
        let args = serde_json::json!({ "content": NEW, "type": "decision" });
        let refused = call(&client, "store", args.clone()).await;
        let text = text_of(&refused);
        assert_eq!(refused.is_error, Some(true), "{text}");
        assert!(
            text.contains(&format!("not stored: it may replace {old}"))
                && text.contains("number 20 → 50")
                && text.contains("`supersedes: ID`")
                && text.contains("`force: true`"),
            "{text}"
        );
        let mut superseding = args.clone();
        superseding["supersedes"] = old.clone().into();
        let stored = text_of(&call(&client, "store", superseding).await);
        assert!(stored.contains(&format!("superseding {old}")), "{stored}");

        // Another value again, stored as new: named after the store.
        let mut forced = serde_json::json!({
            "content": "The connection pool size is 80 per service instance",
            "type": "decision",
        });
        forced["force"] = true.into();
        let text = text_of(&call(&client, "store", forced).await);
        assert!(
            text.starts_with("stored ") && text.contains("it may replace "),
            "{text}"
        );
        client.cancel().await.unwrap();
    });
}

/// Capture links a captured memory to an older one only above [`LINK`],
/// restated with a fact changed, and only when capture wrote the older one
/// too: a memory a person stored is named in the worker's log, never
/// superseded by what a tool printed.
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn capture_links_only_what_capture_wrote() {
    use crate::capture::{capture_through, tool};
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new().with_model();
    let repo = env.repo("r", "Ada");
    let said = |size: u32| {
        format!(
            "The POOL_SIZE constant in src/config.rs is {size} so sync and recall stop starving each other"
        )
    };
    env.set_now("2026-11-20T09:00:00Z");
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "--files",
            "src/config.rs",
            &said(8),
        ],
    );
    let by_hand = crate::supersede::id_of(&env, &repo, &said(8));
    // A mock capture command answering with the text of `answer.txt`.
    let answer = env.path().join("answer.txt");
    let script = env.path().join("mock-llm.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat > /dev/null\nprintf '<tool_call>{{\"name\": \"create_observation\", \"arguments\": {{\"type\": \"decision\", \"text\": \"%s\"}}}}</tool_call>\\n' \"$(cat {})\"\n",
            answer.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let vars = [("GOLDFISH_CAPTURE_COMMAND", script.to_str().unwrap())];
    let capture = |size: u32, old: u32| {
        std::fs::write(&answer, said(size)).unwrap();
        let payload = tool(
            &repo,
            "Edit",
            serde_json::json!({"file_path": repo.join("src/config.rs"), "old_string": format!("POOL_SIZE: usize = {old}"), "new_string": format!("POOL_SIZE: usize = {size}")}),
            serde_json::json!({}),
        )
        .to_string();
        let out = capture_through(&env, &repo, &vars, payload.as_bytes());
        // The hook's worker may have drained the event: its log, and this
        // one's output.
        let log = std::fs::read_to_string(env.path().join("home/.goldfish/logs/capture.log"))
            .unwrap_or_default();
        log + &String::from_utf8_lossy(&out.stdout) + &String::from_utf8_lossy(&out.stderr)
    };
    env.set_now("2026-11-21T09:00:00Z");
    let log = capture(16, 8);
    let lines = crate::common::memory_lines(&repo);
    assert_eq!(lines.len(), 2, "{lines:#?}\n{log}");
    assert_eq!(lines[1]["supersedes"], serde_json::Value::Null, "{log}");
    assert!(
        log.contains(&format!("may replace {by_hand}"))
            && log.contains("capture replaces only what capture wrote"),
        "{log}"
    );
    let first_capture = lines[1]["id"].as_str().unwrap().to_owned();

    env.set_now("2026-11-22T09:00:00Z");
    let log = capture(32, 16);
    let lines = crate::common::memory_lines(&repo);
    assert_eq!(lines.len(), 3, "{lines:#?}\n{log}");
    assert_eq!(lines[2]["supersedes"], first_capture.as_str(), "{log}");
    assert!(
        log.contains(&format!("supersedes {first_capture}")),
        "{log}"
    );
}
