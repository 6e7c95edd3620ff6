//! Issue 26, point 5: `goldfish tidy` lists superseded memories,
//! checkpoints a later one of the same branch covers and near-duplicates
//! of a newer memory, changes nothing by default, and with `--apply`
//! forgets what is confirmed: tombstones, which a `git revert` undoes. A
//! memory agents would not receive unmarked (here, a committed one from
//! outside the trust policy) makes nothing redundant.

use std::path::Path;

use crate::common::{TestEnv, json_lines, memory_files, render};
use crate::supersede::id_of;

/// What `tidy --json` (with `extra`) lists: (content's first 12 characters,
/// why, whom because of, forgotten).
fn listed(env: &TestEnv, repo: &Path, extra: &[&str]) -> Vec<(String, String, String, bool)> {
    let mut args = vec!["tidy", "--json"];
    args.extend_from_slice(extra);
    json_lines(&env.ok(repo, &args))
        .iter()
        .map(|line| {
            (
                line["memory"]["content"]
                    .as_str()
                    .unwrap()
                    .chars()
                    .take(12)
                    .collect(),
                line["why"].as_str().unwrap().to_owned(),
                line["because_of"].as_str().unwrap().to_owned(),
                line["forgotten"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

/// The contents `recall --include-superseded` lists, cut to 12 characters.
fn remembered(env: &TestEnv, repo: &Path) -> Vec<String> {
    let mut contents: Vec<String> = json_lines(&env.ok(
        repo,
        &["recall", "--json", "-n", "50", "--include-superseded"],
    ))
    .iter()
    .map(|m| m["content"].as_str().unwrap().chars().take(12).collect())
    .collect();
    contents.sort();
    contents
}

#[test]
fn tidy_lists_then_forgets_what_is_confirmed_and_a_revert_brings_it_back() {
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("r", "Ada");
    env.set_now("2026-09-01T10:00:00Z");
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "Sessions live in Redis, keyed by user",
        ],
    );
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "checkpoint",
            "Checkpoint one: the login form half done",
        ],
    );
    env.set_now("2026-09-20T10:00:00Z");
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "checkpoint",
            "Checkpoint two: the login form done, tests left",
        ],
    );
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "insight",
            "The invoice numbers repeat when two workers start at once in the billing queue",
        ],
    );
    let redis = id_of(&env, &repo, "Sessions live in Redis");
    env.set_now("2026-11-20T10:00:00Z");
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "--supersedes",
            &redis,
            "Sessions moved to Postgres; Redis is gone",
        ],
    );
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "checkpoint",
            "Checkpoint three: the login form merged",
        ],
    );
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "insight",
            "--force",
            "The invoice numbers repeat when two workers start at once in the billing queue again",
        ],
    );
    env.commit_all(&repo, "memories");
    let postgres = id_of(&env, &repo, "Sessions moved to Postgres");
    let three = id_of(&env, &repo, "Checkpoint three");
    let invoice_new = id_of(
        &env,
        &repo,
        "The invoice numbers repeat when two workers start at once in the billing queue again",
    );

    // A dry run lists and changes nothing.
    let before = memory_files(&repo);
    let dry = listed(&env, &repo, &[]);
    let expected = |forgotten: bool| {
        vec![
            (
                "Sessions liv".to_owned(),
                "superseded".to_owned(),
                postgres.clone(),
                forgotten,
            ),
            (
                "Checkpoint o".to_owned(),
                "covered-checkpoint".to_owned(),
                three.clone(),
                forgotten,
            ),
            (
                "Checkpoint t".to_owned(),
                "covered-checkpoint".to_owned(),
                three.clone(),
                forgotten,
            ),
            (
                "The invoice ".to_owned(),
                "near-duplicate".to_owned(),
                invoice_new.clone(),
                forgotten,
            ),
        ]
    };
    assert_eq!(dry, expected(false));
    assert_eq!(memory_files(&repo), before, "a dry run writes nothing");
    let text = env.goldfish(&repo, &["tidy"]);
    assert_eq!(text.status.code(), Some(0), "{}", render(&text));
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("superseded: a later memory replaces each (1):")
            && stdout.contains("checkpoints a later one covers (2):")
            && stdout.contains("near-duplicates of a newer memory (1):")
            && stdout.contains(&format!("superseded by {postgres}")),
        "{stdout}"
    );
    assert!(
        String::from_utf8_lossy(&text.stderr).contains("nothing changed"),
        "{}",
        render(&text)
    );
    // With a 90-day window, no checkpoint is old enough.
    assert!(
        listed(&env, &repo, &["--older-than", "90"])
            .iter()
            .all(|(_, why, _, _)| why != "covered-checkpoint")
    );

    // --apply asks; where nothing can answer, it refuses (exit 2) and
    // writes nothing.
    let refused = env.goldfish(&repo, &["tidy", "--apply"]);
    assert_eq!(refused.status.code(), Some(2), "{}", render(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--yes"),
        "{}",
        render(&refused)
    );
    assert_eq!(memory_files(&repo), before);

    // --apply --yes forgets the four: tombstones, nothing else changes.
    assert_eq!(listed(&env, &repo, &["--apply", "--yes"]), expected(true));
    let kept = remembered(&env, &repo);
    assert_eq!(
        kept,
        ["Checkpoint t", "Sessions mov", "The invoice "],
        "the newest checkpoint, the superseder and the newer duplicate"
    );
    assert!(listed(&env, &repo, &[]).is_empty(), "nothing left to tidy");
    let after = memory_files(&repo);
    for (name, bytes) in &before {
        let now = &after.iter().find(|(n, _)| n == name).unwrap().1;
        assert!(now.starts_with(bytes), "{name}: only appended to");
    }

    // Committed, then reverted through git: the memories are back.
    env.commit_all(&repo, "tidy");
    env.git(&repo, &["revert", "--no-edit", "HEAD"]);
    assert_eq!(remembered(&env, &repo).len(), 7);
}

#[test]
fn a_checkpoint_from_outside_the_trust_policy_covers_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    std::fs::write(
        repo.join(".goldfish/config"),
        "[trust]\nauthors = [\"ada@example.com\"]\n",
    )
    .unwrap();
    env.set_now("2026-09-01T10:00:00Z");
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "checkpoint",
            "Checkpoint: the team's own work",
        ],
    );
    env.commit_all(&repo, "ours");
    // A later checkpoint, committed by someone outside the policy.
    env.identify(&repo, "Mallory");
    env.set_now("2026-11-20T10:00:00Z");
    env.ok(
        &repo,
        &["store", "-t", "checkpoint", "Checkpoint: a stranger's work"],
    );
    env.commit_all(&repo, "theirs");
    env.identify(&repo, "Ada");
    let dry = env.goldfish(&repo, &["tidy", "--json"]);
    assert_eq!(dry.status.code(), Some(0), "{}", render(&dry));
    assert!(dry.stdout.is_empty(), "{}", render(&dry));
    assert!(
        String::from_utf8_lossy(&dry.stderr).contains("nothing to tidy among 2 memories"),
        "{}",
        render(&dry)
    );
}

/// At a terminal, `--apply` asks per group and forgets only the groups
/// confirmed.
#[test]
fn at_a_terminal_apply_forgets_only_the_groups_confirmed() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.set_now("2026-09-01T10:00:00Z");
    env.ok(
        &repo,
        &["store", "-t", "decision", "Sessions live in Redis"],
    );
    env.ok(&repo, &["store", "-t", "checkpoint", "Checkpoint one"]);
    let redis = id_of(&env, &repo, "Sessions live in Redis");
    env.set_now("2026-11-20T10:00:00Z");
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "--supersedes",
            &redis,
            "Sessions moved to Postgres",
        ],
    );
    env.ok(&repo, &["store", "-t", "checkpoint", "Checkpoint two"]);
    // No to the superseded memory, yes to the covered checkpoint.
    let out = env.at_terminal(&repo, &["tidy", "--apply"], b"n\ny\n");
    assert_eq!(out.status.code(), Some(0), "{}", render(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Forget 1 memory listed above? [y/N]")
            && stderr.contains("forgot 1 of 2 memories"),
        "{stderr}"
    );
    assert_eq!(
        remembered(&env, &repo),
        ["Checkpoint t", "Sessions liv", "Sessions mov"]
    );
}
