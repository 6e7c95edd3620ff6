//! Issue 26, point 3: staleness from the code. A memory whose `files` names
//! a path deleted since it was stored (and not re-created), or whose commit
//! was reverted, is `stale`: it stays in recall, marked and ranked below a
//! live memory as relevant, and leaves `brief`. A renamed path is followed:
//! recall by the new path finds the memory, which is not stale. Real git
//! histories; the sync that sees it is the incremental one (a clone that
//! pulls) as well as a first one.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common::{TestEnv, json_lines};

const CACHE: &str = "The cache module evicts entries after ten idle minutes";
const QUEUE: &str = "The queue module evicts entries after ten idle minutes";

/// `recall QUERY --json -n 20`.
fn recalled(env: &TestEnv, repo: &Path, query: &str) -> Vec<Value> {
    json_lines(&env.ok(repo, &["recall", query, "--json", "-n", "20"]))
}

/// The recalled memory whose content starts with `content`.
fn hit<'a>(hits: &'a [Value], content: &str) -> &'a Value {
    hits.iter()
        .find(|m| m["content"].as_str().unwrap().starts_with(content))
        .unwrap_or_else(|| panic!("no memory starts with {content:?} in {hits:#?}"))
}

fn position(hits: &[Value], content: &str) -> usize {
    hits.iter()
        .position(|m| m["content"].as_str().unwrap().starts_with(content))
        .unwrap_or_else(|| panic!("no memory starts with {content:?}"))
}

/// What `brief` prints (it exits 1 with nothing to brief on).
fn briefed(env: &TestEnv, repo: &Path) -> String {
    String::from_utf8_lossy(&env.goldfish(repo, &["brief"]).stdout).into_owned()
}

fn head(env: &TestEnv, repo: &Path) -> String {
    env.git(repo, &["rev-parse", "HEAD"]).trim().to_owned()
}

fn write(repo: &Path, path: &str, text: &str) {
    let path = repo.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A repository with `src/cache.rs` and `src/queue.rs` committed, and two
/// decisions as relevant to "evicts entries idle minutes", one about each
/// file (the one about the cache stored later: newer, it would win a tie).
fn two_modules(env: &TestEnv) -> std::path::PathBuf {
    let repo = env.repo("repo", "Alice");
    write(&repo, "src/cache.rs", "pub fn evict() {}\n");
    write(&repo, "src/queue.rs", "pub fn drain() {}\n");
    env.commit_all(&repo, "cache and queue");
    env.set_now("2026-11-20T09:00:00Z");
    env.ok(
        &repo,
        &["store", "-t", "decision", "--files", "src/queue.rs", QUEUE],
    );
    env.set_now("2026-11-20T09:01:00Z");
    env.ok(
        &repo,
        &["store", "-t", "decision", "--files", "src/cache.rs", CACHE],
    );
    env.set_now("2026-11-21T09:30:00Z");
    env.commit_all(&repo, "decisions");
    repo
}

#[test]
fn a_deleted_file_makes_its_memory_stale_ranked_below_a_live_one_and_out_of_brief() {
    let env = TestEnv::new();
    let repo = two_modules(&env);
    let before = recalled(&env, &repo, "evicts entries idle minutes");
    // Live, the newer one ranks first and both are briefed.
    assert_eq!(position(&before, CACHE), 0, "{before:#?}");
    assert!(hit(&before, CACHE).get("stale").is_none());
    let brief = briefed(&env, &repo);
    assert!(brief.contains("The cache module") && brief.contains("The queue module"));

    env.git(&repo, &["rm", "-q", "src/cache.rs"]);
    env.git(&repo, &["commit", "-q", "-m", "drop the cache"]);
    let deleting = head(&env, &repo);

    let after = recalled(&env, &repo, "evicts entries idle minutes");
    let cache = hit(&after, CACHE);
    assert_eq!(cache["stale"]["reason"], "file-deleted", "{cache}");
    assert_eq!(cache["stale"]["file"], "src/cache.rs");
    assert_eq!(cache["stale"]["commit"], deleting.as_str());
    assert_eq!(cache["ranking"]["stale"].as_f64(), Some(-0.1), "{cache}");
    // Still recalled, below the live memory as relevant.
    assert!(hit(&after, QUEUE).get("stale").is_none());
    assert!(
        position(&after, QUEUE) < position(&after, CACHE),
        "{after:#?}"
    );
    let text = env.ok(&repo, &["recall", "evicts entries idle minutes"]);
    assert!(
        text.contains(&format!(
            "(STALE: src/cache.rs deleted by commit {})",
            &deleting[..10]
        )),
        "{text}"
    );
    let brief = briefed(&env, &repo);
    assert!(!brief.contains("The cache module"), "{brief}");
    assert!(brief.contains("The queue module"), "{brief}");
    // `tidy` lists it, with the reason.
    let tidy = json_lines(&env.ok(&repo, &["tidy", "--json"]));
    assert_eq!(tidy.len(), 1, "{tidy:#?}");
    assert_eq!(tidy[0]["why"], "stale");
    assert_eq!(tidy[0]["because_of"], deleting.as_str());
    assert_eq!(tidy[0]["memory"]["content"], CACHE);
    let text = env.ok(&repo, &["tidy"]);
    assert!(
        text.contains(&format!(
            "stale: src/cache.rs was deleted by commit {}",
            &deleting[..10]
        )),
        "{text}"
    );

    // A first sync (a rebuild) finds the same.
    fs::remove_dir_all(env.path().join("home/.goldfish")).unwrap();
    let rebuilt = recalled(&env, &repo, "evicts entries idle minutes");
    assert_eq!(hit(&rebuilt, CACHE)["stale"], cache["stale"]);
    assert!(position(&rebuilt, QUEUE) < position(&rebuilt, CACHE));
}

#[test]
fn a_renamed_file_is_followed_and_its_new_path_finds_the_memory() {
    let env = TestEnv::new();
    let repo = two_modules(&env);
    // Nothing mentions the new name yet.
    let none = env.goldfish(&repo, &["recall", "lru", "--json"]);
    assert!(json_lines(&String::from_utf8_lossy(&none.stdout)).is_empty());

    env.git(&repo, &["mv", "src/cache.rs", "src/lru.rs"]);
    env.git(&repo, &["commit", "-q", "-m", "rename the cache"]);

    let found = recalled(&env, &repo, "lru");
    let cache = hit(&found, CACHE);
    assert!(cache.get("stale").is_none(), "{cache}");
    assert_eq!(cache["files"], serde_json::json!(["src/cache.rs"]));
    assert_eq!(
        cache["moved"],
        serde_json::json!([{"file": "src/cache.rs", "now": "src/lru.rs"}])
    );
    let text = env.ok(&repo, &["recall", "lru"]);
    assert!(text.contains("moved: src/cache.rs -> src/lru.rs"), "{text}");
    assert!(!text.contains("STALE"), "{text}");
    assert!(briefed(&env, &repo).contains("The cache module"));

    // Renamed again, then deleted: the chain is followed to the deletion.
    env.git(&repo, &["mv", "src/lru.rs", "src/tiny.rs"]);
    env.git(&repo, &["commit", "-q", "-m", "rename again"]);
    let cache = hit(&recalled(&env, &repo, "tiny"), CACHE).clone();
    assert_eq!(cache["moved"][0]["now"], "src/tiny.rs");
    env.git(&repo, &["rm", "-q", "src/tiny.rs"]);
    env.git(&repo, &["commit", "-q", "-m", "drop it"]);
    let deleting = head(&env, &repo);
    let cache = hit(&recalled(&env, &repo, "evicts entries idle minutes"), CACHE).clone();
    assert_eq!(cache["stale"]["reason"], "file-deleted", "{cache}");
    assert_eq!(cache["stale"]["commit"], deleting.as_str());
    assert!(cache.get("moved").is_none(), "{cache}");
}

#[test]
fn a_file_renamed_and_edited_in_one_commit_is_followed_and_a_rewrite_is_not() {
    let env = TestEnv::new();
    let repo = two_modules(&env);
    let module = |body: &str| {
        format!(
            "use std::time::Duration;\n\npub struct Cache {{\n    entries: Vec<Entry>,\n    idle: Duration,\n}}\n\nimpl Cache {{\n    pub fn evict(&mut self) {{\n        {body}\n    }}\n}}\n"
        )
    };
    write(&repo, "src/cache.rs", &module("self.entries.clear();"));
    env.commit_all(&repo, "a real cache");
    // Moved and edited in one commit (git itself sees a rename: -M50%).
    env.git(&repo, &["mv", "src/cache.rs", "src/lru.rs"]);
    write(
        &repo,
        "src/lru.rs",
        &module("self.entries.retain(|e| e.fresh(self.idle));"),
    );
    env.commit_all(&repo, "an lru cache");
    let status = env.git(&repo, &["show", "--stat", "-M", "--format=", "HEAD"]);
    assert!(
        status.contains("=> src/lru.rs") || status.contains("=> lru.rs"),
        "{status}"
    );
    let cache = hit(&recalled(&env, &repo, "evicts entries idle minutes"), CACHE).clone();
    assert!(cache.get("stale").is_none(), "{cache}");
    assert_eq!(
        cache["moved"],
        serde_json::json!([{"file": "src/cache.rs", "now": "src/lru.rs"}])
    );
    // Deleted and replaced by a file with little of it: a deletion.
    env.git(&repo, &["rm", "-q", "src/lru.rs"]);
    write(
        &repo,
        "src/slab.rs",
        "pub fn slab() -> Vec<u8> {\n    Vec::new()\n}\n",
    );
    env.commit_all(&repo, "a slab instead");
    let deleting = head(&env, &repo);
    let cache = hit(&recalled(&env, &repo, "evicts entries idle minutes"), CACHE).clone();
    assert_eq!(cache["stale"]["reason"], "file-deleted", "{cache}");
    assert_eq!(cache["stale"]["commit"], deleting.as_str());
}

#[test]
fn a_re_created_file_makes_the_memory_live_again() {
    let env = TestEnv::new();
    let repo = two_modules(&env);
    env.git(&repo, &["rm", "-q", "src/cache.rs"]);
    env.git(&repo, &["commit", "-q", "-m", "drop the cache"]);
    assert!(
        hit(&recalled(&env, &repo, "cache"), CACHE)
            .get("stale")
            .is_some()
    );
    assert!(!briefed(&env, &repo).contains("The cache module"));

    write(&repo, "src/cache.rs", "pub fn evict_again() {}\n");
    env.commit_all(&repo, "bring the cache back");
    let cache = hit(&recalled(&env, &repo, "cache"), CACHE).clone();
    assert!(cache.get("stale").is_none(), "{cache}");
    assert!(briefed(&env, &repo).contains("The cache module"));
}

#[test]
fn a_file_deleted_before_the_memory_was_stored_does_not_make_it_stale() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    write(&repo, "src/legacy.rs", "fn old() {}\n");
    env.commit_all(&repo, "legacy");
    env.git(&repo, &["rm", "-q", "src/legacy.rs"]);
    env.git(&repo, &["commit", "-q", "-m", "drop legacy"]);
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "--files",
            "src/legacy.rs,../../etc/passwd,/etc/passwd",
            "We removed the legacy module for good",
        ],
    );
    env.commit_all(&repo, "why legacy went");
    let legacy = hit(&recalled(&env, &repo, "legacy"), "We removed").clone();
    assert!(legacy.get("stale").is_none(), "{legacy}");
    assert!(briefed(&env, &repo).contains("We removed the legacy"));
}

#[test]
fn a_reverted_commit_makes_its_memory_stale_and_a_revert_of_the_revert_live() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    env.commit_all(&repo, "set up goldfish");
    write(&repo, "src/retry.rs", "pub fn retry() { loop {} }\n");
    env.commit_all(&repo, "retry forever");
    // The memory names the commit it is about (`commit`: HEAD when stored).
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "Retries loop until the server answers",
        ],
    );
    env.commit_all(&repo, "why we retry");
    let memory = hit(&recalled(&env, &repo, "retries"), "Retries loop").clone();
    assert!(memory.get("stale").is_none());
    let about = memory["commit"].as_str().unwrap().to_owned();
    assert!(briefed(&env, &repo).contains("Retries loop"));

    env.git(&repo, &["revert", "--no-edit", &about]);
    let revert = head(&env, &repo);
    let memory = hit(&recalled(&env, &repo, "retries"), "Retries loop").clone();
    assert_eq!(memory["stale"]["reason"], "reverted", "{memory}");
    assert_eq!(memory["stale"]["commit"], revert.as_str());
    assert!(memory["stale"].get("file").is_none());
    let text = env.ok(&repo, &["recall", "retries"]);
    assert!(
        text.contains(&format!(
            "(STALE: its commit reverted by {})",
            &revert[..10]
        )),
        "{text}"
    );
    assert!(!briefed(&env, &repo).contains("Retries loop"));

    env.git(&repo, &["revert", "--no-edit", &revert]);
    let memory = hit(&recalled(&env, &repo, "retries"), "Retries loop").clone();
    assert!(memory.get("stale").is_none(), "{memory}");
    assert!(briefed(&env, &repo).contains("Retries loop"));
}

#[test]
fn a_revert_of_the_commit_that_introduced_a_memory_makes_it_stale() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    env.commit_all(&repo, "set up goldfish");
    // The code and the memory in one commit; the revert takes both out,
    // and a later commit brings the memory line back (a merge kept it,
    // say): it is still about reverted code.
    write(&repo, "src/pool.rs", "pub fn pool() {}\n");
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "The pool holds eight connections",
        ],
    );
    env.commit_all(&repo, "pool of eight");
    let introducing = head(&env, &repo);
    let memory_file = crate::common::memory_files(&repo);
    env.git(&repo, &["revert", "--no-edit", &introducing]);
    let revert = head(&env, &repo);
    for (name, bytes) in memory_file {
        fs::write(repo.join(".goldfish/memories").join(name), bytes).unwrap();
    }
    env.commit_all(&repo, "keep the note");
    let memory = hit(&recalled(&env, &repo, "pool"), "The pool holds").clone();
    assert_eq!(
        memory["introduced"]["commit"],
        introducing.as_str(),
        "{memory}"
    );
    assert_eq!(memory["stale"]["reason"], "reverted", "{memory}");
    assert_eq!(memory["stale"]["commit"], revert.as_str());
    assert!(!briefed(&env, &repo).contains("The pool holds"));
}

#[test]
fn a_deletion_pulled_from_a_teammate_makes_the_memory_stale() {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    write(&alice, "src/cache.rs", "pub fn evict() {}\n");
    env.ok(
        &alice,
        &["store", "-t", "decision", "--files", "src/cache.rs", CACHE],
    );
    env.commit_all(&alice, "cache, and why");
    env.git(&alice, &["push", "-q", "origin", "main"]);
    env.git(&bob, &["pull", "-q"]);
    let cache = hit(&recalled(&env, &bob, "evicts"), CACHE).clone();
    assert!(cache.get("stale").is_none());
    assert!(briefed(&env, &bob).contains("The cache module"));

    env.git(&alice, &["rm", "-q", "src/cache.rs"]);
    env.git(&alice, &["commit", "-q", "-m", "drop the cache"]);
    let deleting = head(&env, &alice);
    env.git(&alice, &["push", "-q", "origin", "main"]);
    // The pull's hook syncs (or recall does): the walk of the pulled
    // commits finds the deletion.
    env.git(&bob, &["pull", "-q"]);
    let cache = hit(&recalled(&env, &bob, "evicts"), CACHE).clone();
    assert_eq!(cache["stale"]["reason"], "file-deleted", "{cache}");
    assert_eq!(cache["stale"]["commit"], deleting.as_str());
    assert!(!briefed(&env, &bob).contains("The cache module"));
    let status = env.ok(&bob, &["doctor"]);
    assert!(status.contains("1 memory stale"), "{status}");
}

#[test]
fn a_deletion_by_someone_outside_the_trust_policy_does_not_take_a_memory_out_of_brief() {
    let env = TestEnv::new();
    let repo = two_modules(&env);
    fs::write(
        repo.join(".goldfish/config"),
        "[trust]\nauthors = [\"alice@example.com\"]\n",
    )
    .unwrap();
    env.commit_all(&repo, "trust alice");
    env.git(&repo, &["rm", "-q", "src/cache.rs"]);
    env.git(
        &repo,
        &[
            "-c",
            "user.name=Mallory",
            "-c",
            "user.email=mallory@evil.example",
            "commit",
            "-q",
            "-m",
            "drop the cache",
        ],
    );
    let cache = hit(&recalled(&env, &repo, "evicts"), CACHE).clone();
    assert_eq!(cache["stale"]["reason"], "file-deleted", "{cache}");
    assert_eq!(cache["stale"]["outside_policy"], true, "{cache}");
    // Marked, but not ranked lower.
    assert!(cache["ranking"].get("stale").is_none(), "{cache}");
    assert!(briefed(&env, &repo).contains("The cache module"));
    // Nor does `tidy` propose to forget it.
    assert!(json_lines(&env.ok(&repo, &["tidy", "--json"])).is_empty());
}

const LIVE: &str = "Sessions are cached in memory and expire after five idle minutes";
const SPIKE: &str = "Sessions are cached in Redis and expire after five idle minutes";
const SPIKE_CHECKPOINT: &str =
    "Checkpoint: the Redis session cache compiles; next, wire it into login";

/// A decision on main, then on branch `spike/redis` a commit of code, a
/// newer decision and a checkpoint. The spike's memory lines reach main
/// the way any uncommitted change does: the checkout carries them, and
/// they are committed there. Returns the spike's tip.
fn spike(env: &TestEnv, repo: &Path) -> String {
    write(repo, "src/app.rs", "fn main() {}\n");
    env.commit_all(repo, "app");
    env.set_now("2026-11-20T09:00:00Z");
    env.ok(repo, &["store", "-t", "decision", LIVE]);
    env.commit_all(repo, "a decision");
    env.git(repo, &["checkout", "-q", "-b", "spike/redis"]);
    write(repo, "src/cache.rs", "pub struct Redis;\n");
    env.commit_all(repo, "try a redis cache");
    let tip = head(env, repo);
    env.set_now("2026-11-20T10:00:00Z");
    env.ok(repo, &["store", "-t", "decision", SPIKE]);
    env.ok(repo, &["store", "-t", "checkpoint", SPIKE_CHECKPOINT]);
    env.git(repo, &["checkout", "-q", "main"]);
    env.commit_all(repo, "the spike's memories");
    env.set_now("2026-11-21T09:00:00Z");
    tip
}

const SESSIONS: &str = "sessions cached expire idle minutes";

#[test]
fn a_branch_deleted_without_being_merged_makes_its_memories_stale_until_it_is_back_or_merged() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    let tip = spike(&env, &repo);
    let before = recalled(&env, &repo, SESSIONS);
    assert!(hit(&before, SPIKE).get("stale").is_none(), "{before:#?}");
    assert_eq!(position(&before, SPIKE), 0, "newer, it ranks first");
    let brief = briefed(&env, &repo);
    assert!(brief.contains("Redis session cache compiles"), "{brief}");

    // Deleted unmerged (`-D`): a change of refs only, seen by the next
    // command's sync.
    env.git(&repo, &["branch", "-q", "-D", "spike/redis"]);
    let after = recalled(&env, &repo, SESSIONS);
    let stale = hit(&after, SPIKE);
    assert_eq!(stale["stale"]["reason"], "branch-deleted", "{stale}");
    assert_eq!(stale["stale"]["branch"], "spike/redis");
    assert_eq!(stale["stale"]["commit"], tip.as_str());
    assert!(hit(&after, LIVE).get("stale").is_none());
    assert!(
        position(&after, LIVE) < position(&after, SPIKE),
        "{after:#?}"
    );
    let checkpoint = hit(
        &recalled(&env, &repo, "redis checkpoint login"),
        SPIKE_CHECKPOINT,
    )
    .clone();
    assert_eq!(checkpoint["stale"]["reason"], "branch-deleted");
    let text = env.ok(&repo, &["recall", SESSIONS]);
    assert!(
        text.contains(&format!(
            "(STALE: branch spike/redis deleted unmerged at {})",
            &tip[..10]
        )),
        "{text}"
    );
    let brief = briefed(&env, &repo);
    assert!(!brief.contains("Redis"), "{brief}");
    assert!(brief.contains("cached in memory"), "{brief}");
    let doctor = env.ok(&repo, &["doctor"]);
    assert!(doctor.contains("2 memories stale"), "{doctor}");
    let tidy = json_lines(&env.ok(&repo, &["tidy", "--json"]));
    assert!(
        tidy.iter().any(|t| t["why"] == "stale"
            && t["because_of"] == tip.as_str()
            && t["memory"]["content"] == SPIKE),
        "{tidy:#?}"
    );
    assert!(env.ok(&repo, &["tidy"]).contains(&format!(
        "stale: its branch spike/redis was deleted without being merged (last at {})",
        &tip[..10]
    )));

    // Brought back (from the reflog, say): live again.
    env.git(&repo, &["branch", "spike/redis", &tip]);
    let back = recalled(&env, &repo, SESSIONS);
    assert!(hit(&back, SPIKE).get("stale").is_none(), "{back:#?}");
    assert!(briefed(&env, &repo).contains("Redis session cache compiles"));

    // Merged, then deleted (`-d`): live.
    env.git(
        &repo,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "merge the spike",
            "spike/redis",
        ],
    );
    env.git(&repo, &["branch", "-q", "-d", "spike/redis"]);
    let merged = recalled(&env, &repo, SESSIONS);
    assert!(hit(&merged, SPIKE).get("stale").is_none(), "{merged:#?}");
    assert_eq!(position(&merged, SPIKE), 0);
}

#[test]
fn a_branch_squash_merged_then_deleted_keeps_its_memories_live() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    write(&repo, "src/app.rs", "fn main() {}\n");
    env.commit_all(&repo, "app");
    env.git(&repo, &["checkout", "-q", "-b", "feat/redis"]);
    write(&repo, "src/cache.rs", "pub struct Redis;\n");
    env.set_now("2026-11-20T10:00:00Z");
    env.ok(&repo, &["store", "-t", "decision", SPIKE]);
    env.commit_all(&repo, "a redis cache, and why");
    // Main moves on meanwhile, in the same file too.
    env.git(&repo, &["checkout", "-q", "main"]);
    write(&repo, "src/app.rs", "fn main() { run() }\n");
    env.commit_all(&repo, "run");
    env.ok(&repo, &["sync"]);
    // Squashed into one commit on main: the branch's tip is in no
    // history of main, but its work is.
    env.git(&repo, &["merge", "-q", "--squash", "feat/redis"]);
    env.git(&repo, &["commit", "-q", "-m", "redis cache (#12)"]);
    env.git(&repo, &["branch", "-q", "-D", "feat/redis"]);
    let hits = recalled(&env, &repo, SESSIONS);
    assert!(hit(&hits, SPIKE).get("stale").is_none(), "{hits:#?}");
    assert!(briefed(&env, &repo).contains("cached in Redis"));
}

#[test]
fn a_teammates_branch_deleted_on_the_remote_unmerged_makes_its_memories_stale_after_a_prune() {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    let tip = spike(&env, &alice);
    env.git(&alice, &["push", "-q", "origin", "main", "spike/redis"]);
    env.git(&bob, &["pull", "-q"]);
    let hits = recalled(&env, &bob, SESSIONS);
    assert!(hit(&hits, SPIKE).get("stale").is_none(), "{hits:#?}");

    env.git(&alice, &["push", "-q", "origin", "--delete", "spike/redis"]);
    // A fetch runs no hook and moves no HEAD: the next command's sync
    // sees the remote-tracking branch gone.
    env.git(&bob, &["fetch", "-q", "--prune"]);
    let hits = recalled(&env, &bob, SESSIONS);
    let stale = hit(&hits, SPIKE);
    assert_eq!(stale["stale"]["reason"], "branch-deleted", "{stale}");
    assert_eq!(stale["stale"]["branch"], "spike/redis");
    assert_eq!(stale["stale"]["commit"], tip.as_str());
    assert!(!briefed(&env, &bob).contains("Redis"));
}

#[test]
fn under_a_policy_a_remote_branch_deletion_marks_but_takes_nothing_and_a_local_one_counts() {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    fs::write(
        alice.join(".goldfish/config"),
        "[trust]\nauthors = [\"alice@example.com\", \"bob@example.com\"]\n",
    )
    .unwrap();
    env.commit_all(&alice, "trust alice and bob");
    let tip = spike(&env, &alice);
    env.git(&alice, &["push", "-q", "origin", "main", "spike/redis"]);
    env.git(&bob, &["pull", "-q"]);
    assert!(
        hit(&recalled(&env, &bob, SESSIONS), SPIKE)
            .get("stale")
            .is_none()
    );

    // Deleted on the remote: whoever did it is not known to the policy.
    env.git(&alice, &["push", "-q", "origin", "--delete", "spike/redis"]);
    env.git(&bob, &["fetch", "-q", "--prune"]);
    let stale = hit(&recalled(&env, &bob, SESSIONS), SPIKE).clone();
    assert_eq!(stale["stale"]["reason"], "branch-deleted", "{stale}");
    assert_eq!(stale["stale"]["outside_policy"], true, "{stale}");
    assert!(stale["ranking"].get("stale").is_none(), "{stale}");
    assert!(briefed(&env, &bob).contains("Redis session cache compiles"));
    let text = env.ok(&bob, &["recall", SESSIONS]);
    assert!(
        text.contains("on the remote: by anyone who can push"),
        "{text}"
    );

    // Alice still has it, until she deletes it herself: then it counts.
    assert!(
        hit(&recalled(&env, &alice, SESSIONS), SPIKE)
            .get("stale")
            .is_none()
    );
    env.git(&alice, &["branch", "-q", "-D", "spike/redis"]);
    let stale = hit(&recalled(&env, &alice, SESSIONS), SPIKE).clone();
    assert_eq!(stale["stale"]["reason"], "branch-deleted", "{stale}");
    assert_eq!(stale["stale"]["commit"], tip.as_str());
    assert!(stale["stale"].get("outside_policy").is_none(), "{stale}");
    assert!(!briefed(&env, &alice).contains("Redis"));
}
