//! `goldfish import DIR`: the old Goldfish notes of `fixtures/import/` into a
//! repository's log, twice, then recalled.

use std::path::{Path, PathBuf};

use crate::common::{TestEnv, filters, json_lines, memory_files, render};

macro_rules! snapshot {
    ($env:expr, $value:expr) => {{
        let filters = filters($env);
        let filters: Vec<(&str, &str)> = filters.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        insta::with_settings!({ filters => filters }, {
            insta::assert_snapshot!($value);
        });
    }};
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/import")
}

/// The memory files as `## NAME` followed by their lines.
fn log_text(repo: &Path) -> String {
    memory_files(repo)
        .into_iter()
        .map(|(name, bytes)| format!("## {name}\n{}", String::from_utf8(bytes).unwrap()))
        .collect()
}

#[test]
fn import_old_notes_once_then_recall_them() {
    let env = TestEnv::new();
    let repo = env.repo("project", "Ada Lovelace");
    let dir = fixtures();
    let dir = dir.to_str().unwrap();

    let preview = env.ok(&repo, &["import", "--dry-run", dir]);
    assert!(
        preview.contains("would import 9 memories from 8 files"),
        "{preview}"
    );
    assert!(memory_files(&repo).is_empty(), "a dry run writes nothing");

    let first = env.goldfish(&repo, &["import", dir]);
    snapshot!(&env, render(&first));
    let log = log_text(&repo);
    snapshot!(&env, log);

    // The same import again adds nothing and says why, file by file.
    let second = env.goldfish(&repo, &["import", "--json", dir]);
    assert_eq!(second.status.code(), Some(0), "{}", render(&second));
    assert_eq!(log_text(&repo), log, "a second import must not write");
    let report = &json_lines(&String::from_utf8(second.stdout).unwrap())[0];
    assert_eq!(report["memories_imported"], 0);
    assert_eq!(report["files_already_in_log"], 8);
    assert_eq!(report["files_skipped"], 11);
    let reasons: Vec<(&str, &str)> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["file"].as_str().unwrap(), f["reason"].as_str().unwrap()))
        .collect();
    snapshot!(&env, format!("{reasons:#?}"));
    let bad = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["reason"] == "frontmatter")
        .unwrap();
    assert_eq!(bad["file"], "checkpoints/2026-10-15/1645-invoice-pdf.md");
    assert_eq!(bad["line"], 4);

    // What was imported is indexed: recall finds it with its metadata.
    let recalled = json_lines(&env.ok(&repo, &["recall", "--json", "AuthLayer"]));
    assert_eq!(recalled.len(), 1, "{recalled:#?}");
    let auth = &recalled[0];
    assert_eq!(auth["type"], "checkpoint");
    assert_eq!(auth["timestamp"], "2026-10-14T15:30:00.000Z");
    assert_eq!(auth["tags"], serde_json::json!(["auth", "refactor"]));
    assert_eq!(auth["branch"], "feat/auth-middleware");
    assert_eq!(
        auth["files"],
        serde_json::json!([
            "crates/api/src/auth/middleware.rs",
            "crates/api/src/auth/jwt.rs"
        ])
    );
    assert_eq!(auth["author"], "Aisha Demir");
    // Committed by the importer, a note keeps its own author and is not
    // taken for a forged one (issue 24: `author-mismatch`).
    env.commit_all(&repo, "imported notes");
    let recalled = json_lines(&env.ok(&repo, &["recall", "--json", "AuthLayer"]));
    assert_eq!(recalled[0]["author"], "Aisha Demir");
    assert_eq!(
        recalled[0]["introduced"]["author"],
        "Ada Lovelace <ada.lovelace@example.com>"
    );
    assert_eq!(recalled[0]["trust"], "trusted", "{recalled:#?}");
    // The second half of the split plan is found on its own.
    let rollback = json_lines(&env.ok(
        &repo,
        &[
            "recall", "--json", "--tag", "search", "shadow", "diff", "owns",
        ],
    ));
    assert!(
        rollback[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("Search migration: Elasticsearch to Postgres full-text (part 2/2)"),
        "{rollback:#?}"
    );
}

#[test]
fn import_refuses_what_it_cannot_read() {
    let env = TestEnv::new();
    let repo = env.repo("project", "Ada");
    let mut rendered = String::new();
    let mut run = |name: &str, dir: &Path| {
        let output = env.goldfish(&repo, &["import", dir.to_str().unwrap()]);
        rendered.push_str(&format!("## {name}\n{}\n", render(&output)));
    };
    run("missing", &env.path().join("nope"));
    let empty = env.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "not markdown").unwrap();
    run("no markdown", &empty);
    let broken = env.path().join("broken");
    std::fs::create_dir_all(broken.join("plans")).unwrap();
    std::fs::write(broken.join("plans/undated.md"), "# Someday\n\nMaybe.\n").unwrap();
    std::fs::write(
        broken.join("plans/typo.md"),
        "---\ndate: 2026-10-01\ntype: idea\n---\nx\n",
    )
    .unwrap();
    run("nothing importable", &broken);
    snapshot!(&env, rendered);
    assert!(memory_files(&repo).is_empty());
}
