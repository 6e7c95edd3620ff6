//! Issue 26, point 1: declared supersession. `store --supersedes ID` (and
//! MCP `store` with `supersedes`) writes a memory line naming the one it
//! replaces; the old one leaves `brief` and default recall, comes back
//! marked with `--include-superseded`, and `show` gives the chain both
//! ways. The line merges like any other (real `git pull`/`git merge` with
//! the driver, both orders); a superseder agents would not receive unmarked
//! (quarantined, forgotten) hides nothing.

use std::path::Path;

use crate::common::{TestEnv, json_lines, memory_files, memory_lines};

const REDIS: &str = "Sessions live in Redis: the session cache is Redis, keyed by user";
const POSTGRES: &str = "Sessions moved to Postgres; the Redis instance is gone";

/// The id of the memory whose content starts with `content`, from every
/// memory recall lists (superseded and untrusted ones too).
pub(crate) fn id_of(env: &TestEnv, repo: &Path, content: &str) -> String {
    recalled(env, repo, &["--include-superseded", "--include-untrusted"])
        .iter()
        .find(|m| m["content"].as_str().unwrap().starts_with(content))
        .unwrap_or_else(|| panic!("no memory starts with {content}"))["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `recall --json -n 50` with `extra` arguments.
fn recalled(env: &TestEnv, repo: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["recall", "--json", "-n", "50"];
    args.extend_from_slice(extra);
    json_lines(&env.ok(repo, &args))
}

/// The contents recall lists by default, each cut to 20 characters.
fn contents(env: &TestEnv, repo: &Path) -> Vec<String> {
    recalled(env, repo, &[])
        .iter()
        .map(|m| m["content"].as_str().unwrap().chars().take(20).collect())
        .collect()
}

fn briefed(env: &TestEnv, repo: &Path, text: &str) -> bool {
    env.ok(repo, &["brief"]).contains(text)
}

#[test]
fn a_superseded_memory_leaves_brief_and_recall_and_comes_back_marked() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    env.set_now("2026-11-20T09:00:00Z");
    env.ok(&repo, &["store", "-t", "decision", REDIS]);
    let old = id_of(&env, &repo, REDIS);
    assert!(briefed(&env, &repo, "Sessions live in Redis"));

    env.set_now("2026-11-21T09:00:00Z");
    // A unique prefix names it, as for `show`.
    let stored = env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "--supersedes",
            &old[..14],
            POSTGRES,
        ],
    );
    let new = id_of(&env, &repo, POSTGRES);
    assert_eq!(
        stored,
        format!(
            "stored {new} in {}, superseding {old}\n",
            crate::common::today(&repo)
        )
    );
    let line = memory_lines(&repo)
        .into_iter()
        .find(|line| line["id"] == new.as_str())
        .unwrap();
    assert_eq!(line["supersedes"], old.as_str(), "the full id, in the line");

    // Default recall and the briefing: the new one alone.
    assert_eq!(contents(&env, &repo), ["Sessions moved to Po"]);
    let brief = env.ok(&repo, &["brief"]);
    assert!(brief.contains("Sessions moved to Postgres"), "{brief}");
    assert!(!brief.contains("Sessions live in Redis"), "{brief}");
    // The filter is in the query: a limit of one, on a query the old one
    // matches best, still gives one memory.
    let one = json_lines(&env.ok(
        &repo,
        &["recall", "--json", "-n", "1", "Redis session cache"],
    ));
    assert_eq!(one.len(), 1);
    assert_eq!(one[0]["id"], new.as_str());
    assert_eq!(one[0]["supersedes"], old.as_str());
    assert!(one[0].get("superseded_by").is_none());

    // Asked for, the old one comes back, marked, with why.
    let all = recalled(&env, &repo, &["--include-superseded"]);
    assert_eq!(all.len(), 2);
    let old_hit = all.iter().find(|m| m["id"] == old.as_str()).unwrap();
    assert_eq!(old_hit["superseded_by"], new.as_str());
    assert!(
        old_hit["superseded_why"]
            .as_str()
            .unwrap()
            .contains("declares it replaces this one"),
        "{old_hit}"
    );
    let text = env.ok(&repo, &["recall", "-n", "5", "--include-superseded"]);
    assert!(text.contains(&format!("(SUPERSEDED by {new})")), "{text}");
    let index = env.ok(&repo, &["recall", "--index", "--include-superseded"]);
    assert!(index.contains("(SUPERSEDED)"), "{index}");

    // `show` gives the chain both ways.
    let shown_old = env.ok(&repo, &["show", &old]);
    assert!(
        shown_old.contains(&format!("superseded by: {new}")),
        "{shown_old}"
    );
    let shown_new = env.ok(&repo, &["show", &new]);
    assert!(
        shown_new.contains(&format!("supersedes: {old}")),
        "{shown_new}"
    );
    let shown_json = json_lines(&env.ok(&repo, &["show", "--json", &old]));
    assert_eq!(shown_json[0]["superseded_by"], new.as_str());

    // A chain: superseding the old one again, or the new one, is allowed;
    // the newest superseder is named.
    env.set_now("2026-11-21T09:10:00Z");
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "--supersedes",
            &new,
            "Sessions are in SQLite now",
        ],
    );
    let newest = id_of(&env, &repo, "Sessions are in SQLite");
    assert_eq!(contents(&env, &repo), ["Sessions are in SQLi"]);
    let all = recalled(&env, &repo, &["--include-superseded"]);
    let by = |id: &str| all.iter().find(|m| m["id"] == id).unwrap()["superseded_by"].clone();
    assert_eq!(by(&new), newest.as_str());
    assert_eq!(by(&old), new.as_str());
    assert!(by(&newest).is_null());

    // Forgetting the newest brings back the one it replaced.
    env.ok(&repo, &["forget", &newest]);
    assert_eq!(contents(&env, &repo), ["Sessions moved to Po"]);
}

#[test]
fn an_unknown_ambiguous_or_forgotten_id_is_refused_naming_it() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    env.ok(
        &repo,
        &["store", "-t", "decision", "First decision about the cache"],
    );
    env.ok(
        &repo,
        &["store", "-t", "decision", "Second decision about the queue"],
    );
    let first = id_of(&env, &repo, "First decision");
    let refused = |id: &str, says: &str| {
        let output = env.goldfish(&repo, &["store", "--supersedes", id, "A new fact entirely"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("--supersedes"), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    };
    refused(
        "01ZZZZZZZZZZZZZZZZZZZZZZZZ",
        "no memory of this repository has the id `01ZZZZZZZZZZZZZZZZZZZZZZZZ`",
    );
    refused("01", "`01` matches several memories");
    refused("", "the id is empty");
    env.ok(&repo, &["forget", &first]);
    refused(&first, "forgotten");
    assert_eq!(memory_lines(&repo).len(), 3, "nothing written when refused");
}

/// Alice stores the old decision and pushes; Bob supersedes it while Alice
/// stores something else; each merges the other's side.
#[test]
fn a_supersession_survives_merges_in_both_orders() {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    env.set_now("2026-11-20T09:00:00Z");
    env.ok(&alice, &["store", "-t", "decision", REDIS]);
    env.commit_all(&alice, "the redis decision");
    env.git(&alice, &["push", "-q", "origin", "main"]);
    env.git(&bob, &["pull", "-q", "--no-edit", "origin", "main"]);
    let old = id_of(&env, &bob, REDIS);

    env.set_now("2026-11-21T09:00:00Z");
    env.ok(
        &bob,
        &["store", "-t", "decision", "--supersedes", &old, POSTGRES],
    );
    env.commit_all(&bob, "postgres replaces redis");
    env.ok(
        &alice,
        &[
            "store",
            "-t",
            "insight",
            "The login page caches avatars for a day",
        ],
    );
    env.commit_all(&alice, "an insight");
    env.git(&bob, &["push", "-q", "origin", "HEAD:refs/heads/bob-work"]);
    env.git(&alice, &["push", "-q", "origin", "main"]);

    // Bob merges Alice's side into his (his supersession is "ours").
    env.git(&bob, &["pull", "-q", "--no-edit", "origin", "main"]);
    // Alice merges Bob's side into hers (his supersession is "theirs").
    env.git(&alice, &["fetch", "-q", "origin", "bob-work"]);
    env.git(&alice, &["merge", "-q", "--no-edit", "FETCH_HEAD"]);
    assert_eq!(
        memory_files(&alice),
        memory_files(&bob),
        "the same log either way"
    );
    for side in [&alice, &bob] {
        assert!(env.git(side, &["status", "--porcelain"]).is_empty());
        let shown = contents(&env, side);
        assert!(
            shown.contains(&"Sessions moved to Po".to_owned()),
            "{shown:?}"
        );
        assert!(
            shown.contains(&"The login page cache".to_owned()),
            "{shown:?}"
        );
        assert!(
            !shown.contains(&"Sessions live in Red".to_owned()),
            "{shown:?}"
        );
        assert!(!briefed(&env, side, "Sessions live in Redis"));
        let all = recalled(&env, side, &["--include-superseded"]);
        let old_hit = all.iter().find(|m| m["id"] == old.as_str()).unwrap();
        assert_eq!(
            old_hit["superseded_by"].as_str(),
            Some(id_of(&env, side, POSTGRES).as_str())
        );
    }
    // A rebuilt index says the same.
    env.ok(&alice, &["reindex"]);
    assert!(!contents(&env, &alice).contains(&"Sessions live in Red".to_owned()));
}

/// A memory from outside the trust policy claims to replace a good one: it
/// hides nothing until someone inside the policy releases it, and a
/// forgotten superseder hides nothing either.
#[test]
fn only_a_superseder_agents_receive_unmarked_hides_anything() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    std::fs::write(
        repo.join(".goldfish/config"),
        "[trust]\nauthors = [\"alice@example.com\"]\n",
    )
    .unwrap();
    env.set_now("2026-11-20T09:00:00Z");
    env.ok(&repo, &["store", "-t", "decision", REDIS]);
    env.commit_all(&repo, "policy and the redis decision");
    let old = id_of(&env, &repo, REDIS);

    // Mallory, outside the policy, commits a memory that supersedes it.
    env.identify(&repo, "Mallory");
    env.set_now("2026-11-21T09:00:00Z");
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "--supersedes",
            &old,
            "Sessions need no store at all",
        ],
    );
    env.commit_all(&repo, "mallory replaces the decision");
    env.identify(&repo, "Alice");
    let mallory = id_of(&env, &repo, "Sessions need no store");
    assert_eq!(contents(&env, &repo), ["Sessions live in Red"]);
    assert!(briefed(&env, &repo, "Sessions live in Redis"));
    let all = recalled(
        &env,
        &repo,
        &["--include-untrusted", "--include-superseded"],
    );
    let old_hit = all.iter().find(|m| m["id"] == old.as_str()).unwrap();
    assert!(old_hit.get("superseded_by").is_none(), "{old_hit}");
    let mallory_hit = all.iter().find(|m| m["id"] == mallory.as_str()).unwrap();
    assert_eq!(mallory_hit["trust"], "untrusted");
    assert_eq!(mallory_hit["supersedes"], old.as_str());

    // Alice, inside the policy, releases it: now it counts.
    env.ok(&repo, &["trust", &mallory]);
    env.commit_all(&repo, "alice vouches for it");
    assert_eq!(contents(&env, &repo), ["Sessions need no sto"]);
    assert!(!briefed(&env, &repo, "Sessions live in Redis"));

    // Forgotten, it hides nothing again.
    env.ok(&repo, &["forget", &mallory]);
    env.commit_all(&repo, "forget it");
    assert_eq!(contents(&env, &repo), ["Sessions live in Red"]);
    assert!(briefed(&env, &repo, "Sessions live in Redis"));
}

#[test]
fn a_supersedes_naming_no_memory_is_a_sync_problem_not_an_error() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    env.ok(&repo, &["store", "-t", "decision", REDIS]);
    let today = crate::common::today(&repo);
    let name = today.rsplit('/').next().unwrap();
    let path = repo.join(&today);
    let mut text = std::fs::read_to_string(&path).unwrap();
    for (id, target) in [
        ("01M88B3FD0JAPT2D6XTHHG4A01", "01M00000000000000000000000"),
        ("01M88B3FD0JAPT2D6XTHHG4A02", "01M88B3FD0JAPT2D6XTHHG4A02"),
    ] {
        let line = serde_json::json!({
            "id": id,
            "timestamp": "2026-11-21T08:00:00.000Z",
            "type": "decision",
            "content": format!("Hand-written memory {id}"),
            "supersedes": target,
        });
        text.push_str(&format!("{line}\n"));
    }
    std::fs::write(&path, text).unwrap();
    let problems = crate::common::sync_problems(&env, &repo);
    assert!(
        problems.iter().any(|p| *p == format!("{name}:2: memory 01M88B3FD0JAPT2D6XTHHG4A01: `supersedes` names 01M00000000000000000000000, which no memory of this repository has; it hides nothing")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| *p == format!("{name}:3: memory 01M88B3FD0JAPT2D6XTHHG4A02: `supersedes` names the memory itself; it hides nothing")),
        "{problems:?}"
    );
    // Both indexed and shown; nothing hidden.
    assert_eq!(recalled(&env, &repo, &[]).len(), 3);
}

#[test]
fn mcp_store_supersedes_and_recall_brings_the_old_one_back_when_asked() {
    use crate::mcp::{call, connect, runtime, text_of};
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    env.set_now("2026-11-20T09:00:00Z");
    env.ok(&repo, &["store", "-t", "decision", REDIS]);
    let old = id_of(&env, &repo, REDIS);
    env.set_now("2026-11-21T09:00:00Z");
    runtime().block_on(async {
        let client = connect(&env, &repo).await;
        let unknown = call(
            &client,
            "store",
            serde_json::json!({ "content": POSTGRES, "type": "decision", "supersedes": "01ZZZZ" }),
        )
        .await;
        assert_eq!(unknown.is_error, Some(true));
        let text = text_of(&unknown);
        assert!(
            text.contains("supersedes") && text.contains("`01ZZZZ`"),
            "{text}"
        );

        let stored = call(
            &client,
            "store",
            serde_json::json!({ "content": POSTGRES, "type": "decision", "supersedes": old }),
        )
        .await;
        let text = text_of(&stored);
        assert!(text.contains(&format!("superseding {old}")), "{text}");

        let recall = text_of(
            &call(
                &client,
                "recall",
                serde_json::json!({ "query": "sessions" }),
            )
            .await,
        );
        assert!(recall.contains("Sessions moved to Postgres"), "{recall}");
        assert!(!recall.contains("Sessions live in Redis"), "{recall}");
        let with_old = text_of(
            &call(
                &client,
                "recall",
                serde_json::json!({ "query": "sessions", "superseded": true }),
            )
            .await,
        );
        assert!(with_old.contains("Sessions live in Redis"), "{with_old}");
        assert!(with_old.contains("(SUPERSEDED by "), "{with_old}");
        client.cancel().await.unwrap();
    });
}

/// The memory a store supersedes says nearly the same by nature: it is no
/// near-duplicate of the new one (MCP refuses a near-duplicate otherwise).
#[test]
fn the_superseded_memory_is_no_near_duplicate_of_its_replacement() {
    use crate::mcp::{call, connect, runtime, text_of};
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("repo", "Alice");
    env.ok(&repo, &["store", "-t", "decision", REDIS]);
    let old = id_of(&env, &repo, REDIS);
    runtime().block_on(async {
        let client = connect(&env, &repo).await;
        let same = serde_json::json!({ "content": REDIS, "type": "decision" });
        let refused = call(&client, "store", same).await;
        assert_eq!(refused.is_error, Some(true), "{}", text_of(&refused));
        assert!(text_of(&refused).contains(&old), "{}", text_of(&refused));
        let replacing =
            serde_json::json!({ "content": REDIS, "type": "decision", "supersedes": old });
        let stored = call(&client, "store", replacing).await;
        assert_ne!(stored.is_error, Some(true), "{}", text_of(&stored));
        assert!(!text_of(&stored).contains("nearly"), "{}", text_of(&stored));
        client.cancel().await.unwrap();
    });
    assert_eq!(memory_lines(&repo).len(), 2);
}
