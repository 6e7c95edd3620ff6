//! Issue 55: memories checked against the code they cite. `store --files
//! PATH:START-END` anchors a span; every sync where the cited file changed
//! locates it again, by code: `holds`, `moved` (with its new lines),
//! `changed` (with the commit that changed it, its author and date) or
//! `gone`. Real git repositories, real pulls and rebases; the index each
//! clone keeps is the incremental one, compared with a new home's where
//! history is rewritten.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common::{TestEnv, json_lines, memory_lines, stderr};

const JWT: &str = "\
use std::time::Duration;

/// How long a token outlives its expiry.
pub fn leeway() -> Duration {
    Duration::from_secs(60)
}

pub fn issuer() -> &'static str {
    \"goldfish\"
}
";

const LEEWAY: &str = "The JWT leeway is 60 s, set in leeway()";

/// The one recalled memory's `cites` (`recall leeway --json`), with the
/// home `home` when given.
fn cites(env: &TestEnv, repo: &Path, home: Option<&Path>) -> Vec<Value> {
    let vars: Vec<(&str, &str)> = home
        .map(|home| vec![("GOLDFISH_HOME", home.to_str().unwrap())])
        .unwrap_or_default();
    let hits = json_lines(&env.ok_with(repo, &["recall", "leeway", "--json"], &vars));
    let hit = hits
        .iter()
        .find(|m| m["content"] == LEEWAY)
        .unwrap_or_else(|| panic!("the memory is recalled: {hits:#?}"));
    hit["cites"].as_array().cloned().unwrap_or_default()
}

/// The one recalled memory's `stale`.
fn stale(env: &TestEnv, repo: &Path) -> Value {
    let hits = json_lines(&env.ok(repo, &["recall", "leeway", "--json"]));
    hits.iter()
        .find(|m| m["content"] == LEEWAY)
        .map(|m| m["stale"].clone())
        .unwrap()
}

fn write(repo: &Path, path: &str, text: &str) {
    let path = repo.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn head(env: &TestEnv, repo: &Path) -> String {
    env.git(repo, &["rev-parse", "HEAD"]).trim().to_owned()
}

/// Alice's clone with `src/jwt.rs` and a decision citing `leeway()`
/// (lines 3-6), committed and pushed; Bob's clone pulled it.
fn team_with_citation(env: &TestEnv) -> (std::path::PathBuf, std::path::PathBuf) {
    let (_remote, alice, bob) = env.team();
    write(&alice, "src/jwt.rs", JWT);
    env.commit_all(&alice, "jwt");
    env.ok(
        &alice,
        &[
            "store",
            "-t",
            "decision",
            "--files",
            "src/jwt.rs:3-6",
            LEEWAY,
        ],
    );
    env.commit_all(&alice, "the leeway decision");
    env.git(&alice, &["push", "-q", "origin", "main"]);
    env.git(&bob, &["pull", "-q", "origin", "main"]);
    (alice, bob)
}

#[test]
fn a_cited_line_a_teammate_edits_makes_the_memory_changed_in_both_clones() {
    let env = TestEnv::new();
    let (alice, bob) = team_with_citation(&env);
    // The line records the anchor; both clones find the span where it was.
    let line = memory_lines(&alice)
        .into_iter()
        .find(|line| line["content"] == LEEWAY)
        .unwrap();
    assert_eq!(line["files"], serde_json::json!(["src/jwt.rs"]));
    assert_eq!(line["cites"][0]["path"], "src/jwt.rs");
    assert_eq!(line["cites"][0]["lines"], serde_json::json!([3, 6]));
    for repo in [&alice, &bob] {
        let cited = cites(&env, repo, None);
        assert_eq!(cited[0]["verdict"], "holds", "{cited:?}");
        assert_eq!(cited[0]["now"], serde_json::json!([3, 6]));
        assert!(stale(&env, repo).is_null());
    }

    // Bob changes the leeway; his commit's sync (post-commit) sees it.
    write(
        &bob,
        "src/jwt.rs",
        &JWT.replace("from_secs(60)", "from_secs(300)"),
    );
    env.commit_all(&bob, "leeway 300 s");
    let by_bob = head(&env, &bob);
    env.git(&bob, &["push", "-q", "origin", "main"]);
    env.git(&alice, &["pull", "-q", "origin", "main"]);
    for repo in [&bob, &alice] {
        let cited = cites(&env, repo, None);
        assert_eq!(cited[0]["verdict"], "changed", "{cited:?}");
        assert_eq!(cited[0]["now"], serde_json::json!([3, 6]));
        assert_eq!(cited[0]["changed_by"]["commit"], by_bob.as_str());
        assert_eq!(
            cited[0]["changed_by"]["author"], "Bob <bob@example.com>",
            "{cited:?}"
        );
        let stale = stale(&env, repo);
        assert_eq!(stale["reason"], "code-changed", "{stale}");
        assert_eq!(stale["commit"], by_bob.as_str());
        assert_eq!(stale["file"], "src/jwt.rs");
        // Marked for a person, left out of the briefing; not proposed
        // for forgetting: the memory may still be worth its words.
        let text = env.ok(repo, &["recall", "leeway"]);
        assert!(
            text.contains("(STALE: the code it cites in src/jwt.rs changed"),
            "{text}"
        );
        assert!(
            text.contains("cites: src/jwt.rs:3-6 changed (now 3-6) by commit"),
            "{text}"
        );
        let brief = String::from_utf8_lossy(&env.goldfish(repo, &["brief"]).stdout).into_owned();
        assert!(!brief.contains("JWT leeway"), "{brief}");
        let tidy = env.ok(repo, &["tidy", "--json"]);
        assert!(!tidy.contains("JWT leeway"), "{tidy}");
        assert_eq!(
            cited_code(&env, repo)["message"],
            "1 memory cites code: citations 1 changed"
        );
    }

    // Put back as it was: the text holds again.
    write(&alice, "src/jwt.rs", JWT);
    env.commit_all(&alice, "leeway back to 60 s");
    assert_eq!(cites(&env, &alice, None)[0]["verdict"], "holds");
    assert!(stale(&env, &alice).is_null());
    let doctor = cited_code(&env, &alice);
    assert_eq!(doctor["status"], "ok", "{doctor}");
    assert_eq!(doctor["message"], "1 memory cites code: citations 1 hold");
}

/// `doctor --json`'s `cited-code` finding.
fn cited_code(env: &TestEnv, repo: &Path) -> Value {
    let doctor: Value =
        serde_json::from_slice(&env.goldfish(repo, &["doctor", "--json"]).stdout).unwrap();
    doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "cited-code")
        .cloned()
        .unwrap_or_else(|| panic!("a cited-code finding: {doctor:#}"))
}

#[test]
fn a_function_moved_down_its_file_keeps_its_memory_at_the_new_lines() {
    let env = TestEnv::new();
    let (alice, _bob) = team_with_citation(&env);
    // Moved below issuer(), re-indented with tabs, a header above: the
    // same text at other lines.
    let moved = "// Tokens.\n\nuse std::time::Duration;\n\npub fn issuer() -> &'static str {\n    \"goldfish\"\n}\n\n/// How long a token outlives its expiry.\npub fn leeway() -> Duration {\n\tDuration::from_secs(60)\n}\n";
    write(&alice, "src/jwt.rs", moved);
    env.commit_all(&alice, "reorder");
    let cited = cites(&env, &alice, None);
    assert_eq!(cited[0]["verdict"], "moved", "{cited:?}");
    assert_eq!(cited[0]["now"], serde_json::json!([9, 12]));
    assert!(cited[0]["changed_by"].is_null());
    assert!(stale(&env, &alice).is_null());
    let text = env.ok(&alice, &["recall", "leeway"]);
    assert!(
        text.contains("cites: src/jwt.rs:3-6 moved to 9-12"),
        "{text}"
    );

    // Deleted from the file: gone, and the memory's every citation is.
    write(
        &alice,
        "src/jwt.rs",
        "use std::time::Duration;\n\npub fn issuer() -> &'static str {\n    \"goldfish\"\n}\n",
    );
    env.commit_all(&alice, "no leeway");
    let cited = cites(&env, &alice, None);
    assert_eq!(cited[0]["verdict"], "gone", "{cited:?}");
    assert_eq!(stale(&env, &alice)["reason"], "code-gone");
    // Now tidy proposes it, and says why.
    let tidy = env.ok(&alice, &["tidy", "--json"]);
    assert!(
        tidy.contains("every span of code it cites is gone"),
        "{tidy}"
    );
}

#[test]
fn verdicts_after_a_rebase_are_the_ones_a_new_index_gives() {
    let env = TestEnv::new();
    let (alice, bob) = team_with_citation(&env);
    // Alice changes the leeway on a branch; main moves on meanwhile.
    env.git(&alice, &["checkout", "-q", "-b", "leeway"]);
    write(
        &alice,
        "src/jwt.rs",
        &JWT.replace("from_secs(60)", "from_secs(90)"),
    );
    env.commit_all(&alice, "leeway 90 s");
    let before_rebase = cites(&env, &alice, None);
    assert_eq!(before_rebase[0]["verdict"], "changed");
    write(&bob, "NOTES.md", "notes\n");
    env.commit_all(&bob, "notes");
    env.git(&bob, &["push", "-q", "origin", "main"]);
    env.git(&alice, &["fetch", "-q", "origin"]);
    env.git(&alice, &["rebase", "-q", "origin/main"]);
    env.ok(&alice, &["sync"]);
    let rebased = head(&env, &alice);
    let incremental = cites(&env, &alice, None);
    assert_eq!(incremental[0]["verdict"], "changed");
    // The rewritten commit, not the one the rebase left behind.
    assert_eq!(incremental[0]["changed_by"]["commit"], rebased.as_str());
    let fresh = env.path().join("fresh-home");
    assert_eq!(incremental, cites(&env, &alice, Some(&fresh)));

    // Squashed into one commit with another change: still the same.
    env.git(&alice, &["reset", "-q", "--soft", "origin/main"]);
    write(&alice, "NOTES.md", "notes, squashed\n");
    env.commit_all(&alice, "squashed");
    env.ok(&alice, &["sync"]);
    let squashed = cites(&env, &alice, None);
    assert_eq!(
        squashed[0]["changed_by"]["commit"],
        head(&env, &alice).as_str()
    );
    let fresher = env.path().join("fresher-home");
    assert_eq!(squashed, cites(&env, &alice, Some(&fresher)));
}

#[test]
fn a_memory_not_committed_yet_is_judged_once_its_commit_brings_the_code() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    write(&repo, "src/jwt.rs", JWT);
    env.commit_all(&repo, "jwt");
    // The fix is in the working tree, not in HEAD: judged against HEAD it
    // would read as changed at once.
    write(
        &repo,
        "src/jwt.rs",
        &JWT.replace("from_secs(60)", "from_secs(120)"),
    );
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "--files",
            "src/jwt.rs:3-6",
            LEEWAY,
        ],
    );
    let cited = cites(&env, &repo, None);
    assert_eq!(cited[0]["verdict"], "unchecked", "{cited:?}");
    assert!(stale(&env, &repo).is_null());
    env.commit_all(&repo, "the fix and its memory");
    assert_eq!(cites(&env, &repo, None)[0]["verdict"], "holds");
}

#[test]
fn a_citation_outside_the_repository_too_long_or_past_its_file_is_refused() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    write(&repo, "src/jwt.rs", JWT);
    let outside = env.path().join("secret.txt");
    fs::write(&outside, "a line outside\n").unwrap();
    std::os::unix::fs::symlink(&outside, repo.join("link.txt")).unwrap();
    env.commit_all(&repo, "jwt");
    let before = memory_lines(&repo).len();
    for (spec, says) in [
        ("../secret.txt:1", "is not a path inside the repository"),
        ("/etc/hostname:1", "is not a path inside the repository"),
        (".git/config:1", "is not a path inside the repository"),
        ("link.txt:1", "it leads outside the repository"),
        (
            "src/jwt.rs:1-900",
            "spans 900 lines; a citation may span at most 400",
        ),
        ("src/jwt.rs:8-30", "the file has 10 lines"),
        ("src/jwt.rs:0-3", "lines are numbered from 1"),
        ("src/missing.rs:1", "cannot read it"),
    ] {
        let output = env.goldfish(&repo, &["store", "-t", "decision", "--files", spec, LEEWAY]);
        assert_eq!(output.status.code(), Some(2), "{spec}: {output:?}");
        let err = stderr(&output);
        assert!(err.contains("--files"), "{spec}: names the argument: {err}");
        assert!(err.contains(says), "{spec}: {err}");
    }
    assert_eq!(memory_lines(&repo).len(), before, "nothing was stored");
}

#[test]
fn review_lists_the_memories_whose_cited_lines_a_branch_changes() {
    let env = TestEnv::new();
    let (alice, _bob) = team_with_citation(&env);
    // A second memory cites issuer() in the same file, lines 8-10.
    env.ok(
        &alice,
        &[
            "store",
            "-t",
            "insight",
            "--files",
            "src/jwt.rs:8-10",
            "The token issuer is the string goldfish",
        ],
    );
    env.commit_all(&alice, "the issuer insight");
    let base = head(&env, &alice);
    env.git(&alice, &["checkout", "-q", "-b", "leeway"]);
    // A comment above both functions moves them (no memory is stale for
    // that); the leeway changes (one is).
    write(
        &alice,
        "src/jwt.rs",
        &format!(
            "// Tokens.\n{}",
            JWT.replace("from_secs(60)", "from_secs(300)")
        ),
    );
    env.commit_all(&alice, "leeway 300 s");

    let out = env.goldfish(&alice, &["review", &base, "leeway", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let review: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cited = review["cited"].as_array().unwrap();
    assert_eq!(cited.len(), 1, "only the leeway memory: {cited:#?}");
    assert_eq!(cited[0]["content"], LEEWAY);
    assert_eq!(cited[0]["type"], "decision");
    assert_eq!(cited[0]["cites"][0]["path"], "src/jwt.rs");
    assert_eq!(cited[0]["cites"][0]["lines"], serde_json::json!([3, 6]));
    assert_eq!(cited[0]["cites"][0]["verdict"], "changed");
    assert_eq!(cited[0]["cites"][0]["now"], serde_json::json!([4, 7]));
    assert!(cited[0]["handled"].is_null());
    let id = cited[0]["id"].as_str().unwrap().to_owned();
    let text = env.ok(&alice, &["review", &base, "leeway"]);
    assert!(
        text.contains("cited code: this change alters lines that 1 memory describes"),
        "{text}"
    );
    assert!(
        text.contains("src/jwt.rs:3-6: changed, now lines 4-7"),
        "{text}"
    );
    assert!(text.contains(&format!("--supersedes {id}")), "{text}");

    // The author supersedes it in the same branch: the review says so.
    env.ok(
        &alice,
        &[
            "store",
            "-t",
            "decision",
            "--supersedes",
            &id,
            "--files",
            "src/jwt.rs:4-7",
            "The JWT leeway is 300 s, set in leeway()",
        ],
    );
    env.commit_all(&alice, "the new leeway");
    let review: Value =
        serde_json::from_str(&env.ok(&alice, &["review", &base, "leeway", "--json"])).unwrap();
    let handled = review["cited"][0]["handled"].as_str().unwrap_or_default();
    assert!(handled.starts_with("superseded by "), "{review:#}");

    // A branch that only moves the code lists nothing.
    env.git(&alice, &["checkout", "-q", "-b", "moved", &base]);
    write(&alice, "src/jwt.rs", &format!("// Tokens.\n\n{JWT}"));
    env.commit_all(&alice, "a comment");
    let review: Value =
        serde_json::from_str(&env.ok(&alice, &["review", &base, "moved", "--json"])).unwrap();
    assert_eq!(review["cited"], serde_json::json!([]), "{review:#}");
}

const POOL: &str = "\
def read_pool():
    return 20

def write_pool():
    return 20
";

/// `store -t decision --files SPAN TEXT` in `repo`: what it said on
/// stderr, once it succeeded.
fn store_decision(env: &TestEnv, repo: &Path, span: &str, text: &str) -> String {
    let out = env.goldfish(repo, &["store", "-t", "decision", "--files", span, text]);
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    said
}

/// The fake model (words hashed into a vector) stands in: the test is of
/// which memories are compared, not of what the words mean.
#[test]
fn memories_citing_other_lines_of_one_file_are_not_offered_as_replacements() {
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("r", "Ada");
    write(&repo, "pool.py", POOL);
    env.commit_all(&repo, "pool");
    let pool = |span: &str, size: u32| {
        let text = format!("The pool size is {size} connections per service");
        store_decision(&env, &repo, span, &text)
    };
    pool("pool.py:1-2", 20);
    env.commit_all(&repo, "the read pool");
    // Another function of the same file, another number: two decisions.
    let said = pool("pool.py:4-5", 50);
    assert!(!said.contains("may replace"), "{said}");
    assert!(
        !said.contains(" similar to "),
        "no near-duplicate either: {said}"
    );
    // The same lines, another number: offered, as without citations.
    let said = pool("pool.py:2", 80);
    assert!(said.contains("it may replace "), "{said}");
}

/// MCP `store` takes spans in `files` as `store --files` does: the line
/// keeps the anchor, `get` shows the citation judged; a span outside the
/// repository is a tool error naming `files`.
#[test]
fn mcp_store_cites_a_span_and_refuses_one_outside_the_repository() {
    use crate::mcp::{call, connect, runtime, text_of};
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    write(&repo, "src/jwt.rs", JWT);
    env.commit_all(&repo, "jwt");
    runtime().block_on(async {
        let client = connect(&env, &repo).await;
        let stored = call(
            &client,
            "store",
            serde_json::json!({"content": LEEWAY, "type": "decision", "files": ["src/jwt.rs:3-6"]}),
        )
        .await;
        assert_eq!(stored.is_error, Some(false), "{}", text_of(&stored));
        let outside = call(
            &client,
            "store",
            serde_json::json!({"content": "Another", "type": "decision", "files": ["../x.rs:1-2"]}),
        )
        .await;
        assert_eq!(outside.is_error, Some(true));
        assert!(text_of(&outside).contains("files"), "{}", text_of(&outside));
        client.cancel().await.unwrap();
    });
    let lines = memory_lines(&repo);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert_eq!(lines[0]["cites"][0]["path"], "src/jwt.rs");
    assert_eq!(lines[0]["cites"][0]["lines"], serde_json::json!([3, 6]));
    env.commit_all(&repo, "the decision");
    assert_eq!(cites(&env, &repo, None)[0]["verdict"], "holds");
}

/// A cited file renamed (`git mv`, then edited in the same commit, as
/// git's `-M` still calls a rename) is followed: the memory moves with it,
/// in both clones; a later edit of the lines at the new path changes it.
#[test]
fn a_cited_file_renamed_is_followed_to_its_new_path() {
    let env = TestEnv::new();
    let (alice, bob) = team_with_citation(&env);
    fs::create_dir_all(bob.join("src/auth")).unwrap();
    env.git(&bob, &["mv", "src/jwt.rs", "src/auth/jwt.rs"]);
    write(
        &bob,
        "src/auth/jwt.rs",
        &format!("// Moved under auth.\n{JWT}"),
    );
    env.commit_all(&bob, "jwt under auth");
    env.git(&bob, &["push", "-q", "origin", "main"]);
    env.git(&alice, &["pull", "-q", "origin", "main"]);
    for repo in [&bob, &alice] {
        let cited = cites(&env, repo, None);
        assert_eq!(cited[0]["verdict"], "moved", "{cited:?}");
        assert_eq!(cited[0]["now_path"], "src/auth/jwt.rs", "{cited:?}");
        assert_eq!(cited[0]["now"], serde_json::json!([4, 7]));
        assert!(stale(&env, repo).is_null());
        let text = env.ok(repo, &["recall", "leeway"]);
        assert!(
            text.contains("cites: src/jwt.rs:3-6 moved to src/auth/jwt.rs:4-7"),
            "{text}"
        );
    }
    // A new index finds the same.
    let fresh = env.path().join("fresh-home");
    let cited = cites(&env, &alice, Some(&fresh));
    assert_eq!(cited[0]["now_path"], "src/auth/jwt.rs", "{cited:?}");

    // An edit at the new path is seen there.
    write(
        &alice,
        "src/auth/jwt.rs",
        &format!(
            "// Moved under auth.\n{}",
            JWT.replace("from_secs(60)", "from_secs(90)")
        ),
    );
    env.commit_all(&alice, "leeway 90 s");
    let cited = cites(&env, &alice, None);
    assert_eq!(cited[0]["verdict"], "changed", "{cited:?}");
    assert_eq!(
        cited[0]["changed_by"]["commit"],
        head(&env, &alice).as_str()
    );
    assert_eq!(stale(&env, &alice)["reason"], "code-changed");
}
