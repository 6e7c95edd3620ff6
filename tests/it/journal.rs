//! Store's journal and the append against what git does around it: an
//! autostash or a stash git applies after a pull, a write that fails half
//! way, and stores, pulls, pushes, syncs and recalls of two clones at once.
//! The journal's basics (a store during a stopped merge, git racing a store)
//! are in faults.rs.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::{McpLines, TestEnv, json_lines, set_tag, share_tag, stderr, today};

/// The id of the memory a `store --json` printed.
fn stored_id(stdout: &str) -> String {
    json_lines(stdout)[0]["id"].as_str().unwrap().to_owned()
}

/// How many lines of `text` hold memory `id`.
fn copies(text: &str, id: &str) -> usize {
    text.lines()
        .filter(|line| line.contains(&format!("\"id\":\"{id}\"")))
        .count()
}

/// Alice and Bob share today's memory file (committed on both sides); Bob
/// then stores a memory he has not committed and edits README.md, while
/// Alice pushes another memory to the same file. Returns (alice, bob,
/// Bob's memory id, Bob's README).
fn bob_with_uncommitted_work(env: &TestEnv) -> (PathBuf, PathBuf, String, String) {
    let (_remote, alice, bob) = env.team();
    env.ok(&alice, &["store", "Alice's first memory, shared"]);
    // One day file on both sides, as two branches of one clone have.
    share_tag(&alice, &bob);
    env.commit_all(&alice, "a memory");
    env.git(&alice, &["push", "-q"]);
    env.git(&bob, &["pull", "-q", "--no-edit"]);
    let id = stored_id(&env.ok(
        &bob,
        &["store", "--json", "Bob's memory, not yet committed"],
    ));
    let readme = format!(
        "{}Bob's edit, not yet committed\n",
        fs::read_to_string(bob.join("README.md")).unwrap()
    );
    fs::write(bob.join("README.md"), &readme).unwrap();
    env.ok(
        &alice,
        &["store", "Alice's second memory, pushed while Bob works"],
    );
    env.commit_all(&alice, "another memory");
    env.git(&alice, &["push", "-q"]);
    (alice, bob, id, readme)
}

/// Asserts Bob's work came back: his README edit, his memory once, Alice's
/// memories, nothing left in the stash.
fn assert_bobs_work_is_back(env: &TestEnv, bob: &Path, id: &str, readme: &str) {
    assert_eq!(fs::read_to_string(bob.join("README.md")).unwrap(), readme);
    let today = fs::read_to_string(bob.join(crate::common::today(bob))).unwrap();
    assert_eq!(copies(&today, id), 1, "{today}");
    assert!(today.contains("Alice's first memory"), "{today}");
    assert!(today.contains("Alice's second memory"), "{today}");
    assert_eq!(env.git(bob, &["stash", "list"]), "");
    // And the next command finds nothing to add.
    env.ok(bob, &["sync", "--quiet"]);
    assert_eq!(
        fs::read_to_string(bob.join(crate::common::today(bob))).unwrap(),
        today
    );
}

/// Runs git, which must succeed without a conflict.
fn git_without_conflict(env: &TestEnv, repo: &Path, args: &[&str]) {
    let output = env.command("git", repo).args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    assert!(
        !stderr(&output).contains("conflict"),
        "{args:?}: {}",
        stderr(&output)
    );
}

/// Regression (second adversarial round, MEDIUM 6): `git pull --autostash`
/// stashed Bob's uncommitted memory with his code edit, and the post-merge
/// hook, which runs before git applies the autostash, appended the memory
/// from store's journal again: applying the autostash then conflicted, and
/// git left the code edit in the stash.
#[test]
fn pull_autostash_gives_back_the_users_code_edits() {
    let env = TestEnv::new();
    let (_alice, bob, id, readme) = bob_with_uncommitted_work(&env);
    git_without_conflict(&env, &bob, &["pull", "--no-edit", "--autostash"]);
    assert_bobs_work_is_back(&env, &bob, &id, &readme);
}

/// The same with a rebase: `git pull --rebase --autostash` (Bob committed
/// something of his own, so there is something to rebase).
#[test]
fn pull_rebase_autostash_gives_back_the_users_code_edits() {
    let env = TestEnv::new();
    let (_alice, bob, id, readme) = bob_with_uncommitted_work(&env);
    fs::write(bob.join("bob.txt"), "Bob's committed work\n").unwrap();
    env.git(&bob, &["add", "bob.txt"]);
    env.git(&bob, &["commit", "-q", "-m", "Bob's work"]);
    git_without_conflict(&env, &bob, &["pull", "--rebase", "--autostash"]);
    assert_bobs_work_is_back(&env, &bob, &id, &readme);
}

/// The same by hand: `git stash`, `git pull`, `git stash pop`. The hook of
/// the pull leaves the stashed memory to the stash.
#[test]
fn a_stash_popped_after_a_pull_gives_back_the_users_code_edits() {
    let env = TestEnv::new();
    let (_alice, bob, id, readme) = bob_with_uncommitted_work(&env);
    env.git(&bob, &["stash", "-q"]);
    env.git(&bob, &["pull", "-q", "--no-edit"]);
    git_without_conflict(&env, &bob, &["stash", "pop"]);
    assert_bobs_work_is_back(&env, &bob, &id, &readme);
}

/// While the stash holds the memory, it waits in the journal; a stash
/// dropped instead of popped does not take the memory with it.
#[test]
fn a_memory_in_a_dropped_stash_comes_back_from_the_journal() {
    let env = TestEnv::new();
    let (_alice, bob, id, _readme) = bob_with_uncommitted_work(&env);
    env.git(&bob, &["stash", "-q"]);
    env.git(&bob, &["pull", "-q", "--no-edit"]);
    assert_eq!(
        copies(&fs::read_to_string(bob.join(today(&bob))).unwrap(), &id),
        0
    );
    env.git(&bob, &["stash", "drop", "-q"]);
    env.ok(&bob, &["sync", "--quiet"]);
    assert_eq!(
        copies(&fs::read_to_string(bob.join(today(&bob))).unwrap(), &id),
        1
    );
}

/// Regression (second adversarial round, MEDIUM 7): on a full disk a store
/// failed ("No space left on device") but left the start of its line in
/// the day file, which the next commit would have shared. A file size limit
/// (`RLIMIT_FSIZE`, SIGXFSZ ignored) cuts the write the same way: the first
/// `write` is short, the next fails.
#[test]
fn a_failed_write_leaves_no_partial_line() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    // Written by hand, not by `store`: its journal (kept for a minute)
    // would be larger than the limit below.
    let committed: String = (0..40)
        .map(|n| {
            format!(
                "{{\"id\":\"01KAJ{n:021}\",\"timestamp\":\"2026-11-21T08:00:00.000Z\",\"type\":\"insight\",\"content\":\"Committed memory number {n} of the day\"}}\n"
            )
        })
        .collect();
    set_tag(&repo, "t0day0");
    let today = today(&repo);
    fs::write(repo.join(&today), committed).unwrap();
    env.commit_all(&repo, "40 memories");
    let before = fs::read(repo.join(&today)).unwrap();
    let journal = repo.join(".git/goldfish-journal.jsonl");
    let journal_before = fs::read(&journal).unwrap_or_default();
    // Room for a hundred more bytes of the day file; the line is longer.
    let limit = before.len() as u64 + 100;
    let long = format!("A memory too long for the disk: {}", "word ".repeat(200));
    let mut store = env.command(env!("CARGO_BIN_EXE_goldfish"), &repo);
    store.args(["store", &long]);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        store.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let rlimit = libc::rlimit {
                rlim_cur: limit,
                rlim_max: libc::RLIM_INFINITY,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &rlimit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = store.output().unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(stderr(&output).contains(&today), "{}", stderr(&output));
    assert_eq!(fs::read(repo.join(&today)).unwrap(), before, "no torn line");
    // Not stored, so not journaled either.
    assert_eq!(fs::read(&journal).unwrap_or_default(), journal_before);
    // The next store (with room) goes in whole, on a line of its own.
    env.ok(&repo, &["store", "Stored once the disk had room again"]);
    let after = fs::read_to_string(repo.join(&today)).unwrap();
    assert!(after.starts_with(std::str::from_utf8(&before).unwrap()));
    assert_eq!(after.lines().count(), 41);
    assert!(!after.contains("too long for the disk"));
    for line in after.lines() {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "{line}"
        );
    }
}

/// Regression (second adversarial round, LOW 9): `status` showed a memory
/// store had left in the journal (git was busy then) as missing; like every
/// other command it now puts it into its file first.
#[test]
fn status_drains_the_journal() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.commit_all(&repo, "goldfish");
    // A store while git is in the middle of a merge waits in the journal
    // (MERGE_HEAD is what tells it: see faults.rs for a real stopped merge).
    let head = env.git(&repo, &["rev-parse", "HEAD"]);
    let merge_head = repo.join(".git/MERGE_HEAD");
    fs::write(&merge_head, head).unwrap();
    let stored = env.goldfish(&repo, &["store", "--json", "Stored while git merged"]);
    assert_eq!(stored.status.code(), Some(0), "{}", stderr(&stored));
    assert!(stderr(&stored).contains("waits in"), "{}", stderr(&stored));
    let id = stored_id(&String::from_utf8_lossy(&stored.stdout));
    fs::remove_file(&merge_head).unwrap();
    assert!(!repo.join(today(&repo)).exists());
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&repo, &["status", "--json"])).unwrap();
    assert_eq!(status["memories_uncommitted"], 1, "{status}");
    assert_eq!(
        copies(&fs::read_to_string(repo.join(today(&repo))).unwrap(), &id),
        1
    );
}

/// A writer loop: `goldfish store --json` until `stop` exists, stdout (the
/// stored records) to `out`.
fn spawn_writer(env: &TestEnv, repo: &Path, name: &str, stop: &Path, out: &Path) -> Child {
    let script = format!(
        "i=0; while [ ! -e '{stop}' ]; do goldfish store --json \"{name} store $i, a memory written while the team pulls and pushes\" || exit 1; i=$((i+1)); done",
        stop = stop.display()
    );
    env.command("sh", repo)
        .args(["-c", &script])
        .stdout(fs::File::create(out).unwrap())
        .stderr(fs::File::create(out.with_extension("err")).unwrap())
        .spawn()
        .unwrap()
}

/// A loop of what a teammate's shell does between stores: commit the
/// memories, pull (the merge driver and the hooks run), push; and a sync
/// in the background.
fn spawn_git_loop(env: &TestEnv, repo: &Path, stop: &Path) -> Child {
    let script = format!(
        "while [ ! -e '{stop}' ]; do \
           git add -A .goldfish >/dev/null 2>&1 && git commit -q -m memories >/dev/null 2>&1; \
           git pull -q --no-edit >/dev/null 2>&1 || git merge --abort >/dev/null 2>&1; \
           git push -q >/dev/null 2>&1; \
           goldfish sync --quiet >/dev/null 2>&1 & \
           sleep 0.1; \
         done; wait",
        stop = stop.display()
    );
    env.command("sh", repo)
        .args(["-c", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Recalls through one `goldfish mcp` (`server`, the command without its
/// argument) until `stop` exists; returns how many
/// answered without an error.
fn mcp_recall_loop(server: std::process::Command, stop: &Path) -> usize {
    let mut lines = McpLines::initialized(server, Stdio::null());
    let mut answered = 0;
    for id in 1.. {
        if stop.exists() {
            break;
        }
        lines.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"recall","arguments":{{"query":"memory written while the team pulls","limit":5}}}}}}"#
        ));
        let answer = lines.receive();
        assert_eq!(answer["id"], id, "{answer}");
        assert!(answer.get("error").is_none(), "{answer}");
        if answer["result"]["isError"] != true {
            answered += 1;
        }
    }
    lines.finish();
    answered
}

/// Regression (second adversarial round, MEDIUM 5), and the round's
/// concurrency scenario in a bounded form: two clones, two writers each,
/// each clone committing, pulling and pushing in a loop with background
/// syncs, and recalls through an MCP server, for `GOLDFISH_SCENARIO_SECS`
/// (default 15). Then both clones settle (commit, pull, push until both
/// have the same HEAD): every memory a store printed is in HEAD exactly
/// once. Under this load, 4 of 1,192 ids were in HEAD twice (adjacent
/// lines from one clone's own work tree).
#[test]
fn concurrent_writers_pulls_and_syncs_lose_and_duplicate_nothing() {
    let seconds: u64 = std::env::var("GOLDFISH_SCENARIO_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    let stop = env.path().join("stop");
    let outs = env.path().join("out");
    fs::create_dir_all(&outs).unwrap();
    let mut children = Vec::new();
    let mut writers = Vec::new();
    for (name, repo) in [("alice", &alice), ("bob", &bob)] {
        for w in 0..2 {
            let out = outs.join(format!("{name}-{w}.jsonl"));
            children.push(spawn_writer(
                &env,
                repo,
                &format!("{name} {w}"),
                &stop,
                &out,
            ));
            writers.push(out);
        }
        children.push(spawn_git_loop(&env, repo, &stop));
    }
    let started = Instant::now();
    let recalls = std::thread::scope(|scope| {
        let server = env.command(env!("CARGO_BIN_EXE_goldfish"), &bob);
        let recalls = scope.spawn(|| mcp_recall_loop(server, &stop));
        std::thread::sleep(Duration::from_secs(seconds));
        fs::write(&stop, "").unwrap();
        recalls.join().unwrap()
    });
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    assert!(recalls > 0, "no recall answered in {:?}", started.elapsed());
    let mut stored: Vec<String> = Vec::new();
    for out in &writers {
        stored.extend(
            json_lines(&fs::read_to_string(out).unwrap())
                .iter()
                .map(|m| m["id"].as_str().unwrap().to_owned()),
        );
        let errors = fs::read_to_string(out.with_extension("err")).unwrap();
        assert!(!errors.contains("error"), "{}: {errors}", out.display());
    }
    assert!(stored.len() >= 8, "only {} stores", stored.len());
    // Settle: each clone commits what it has, pulls and pushes, until both
    // have one HEAD and nothing to commit.
    for _ in 0..5 {
        for repo in [&alice, &bob] {
            env.ok(repo, &["sync", "--quiet"]);
            env.git(repo, &["add", "-A", ".goldfish"]);
            let _ = env
                .command("git", repo)
                .args(["commit", "-q", "-m", "settle"])
                .output();
            env.git(repo, &["pull", "-q", "--no-edit"]);
            env.git(repo, &["push", "-q"]);
        }
    }
    env.git(&alice, &["pull", "-q", "--no-edit"]);
    let head = |repo: &Path| env.git(repo, &["rev-parse", "HEAD"]);
    assert_eq!(head(&alice), head(&bob));
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let tree = env.git(
        &alice,
        &["ls-tree", "--name-only", "HEAD", ".goldfish/memories/"],
    );
    for path in tree.lines() {
        for line in env.git(&alice, &["show", &format!("HEAD:{path}")]).lines() {
            if let Some(id) = serde_json::from_str::<serde_json::Value>(line)
                .ok()
                .and_then(|m| m["id"].as_str().map(str::to_owned))
            {
                *counts.entry(id).or_default() += 1;
            }
        }
    }
    let lost: Vec<&String> = stored
        .iter()
        .filter(|id| !counts.contains_key(*id))
        .collect();
    let doubled: Vec<(&String, &usize)> = counts.iter().filter(|(_, n)| **n > 1).collect();
    // The numbers, for a longer run (`GOLDFISH_SCENARIO_SECS=120 cargo test
    // --test it concurrent_writers -- --nocapture`).
    eprintln!(
        "{seconds} s: {} stores, {} recalls over MCP, {} lost, {} twice",
        stored.len(),
        recalls,
        lost.len(),
        doubled.len()
    );
    assert!(
        lost.is_empty(),
        "{} of {} lost: {lost:?}",
        lost.len(),
        stored.len()
    );
    assert!(
        doubled.is_empty(),
        "{} of {} twice: {doubled:?}",
        doubled.len(),
        stored.len()
    );
}

/// A line stored before work trees had tags is in the plain day file
/// (`2026-11-21.jsonl`) and in the journal: the first drain after the
/// upgrade finds it there and does not copy it into the tagged file.
#[test]
fn a_line_journaled_before_tags_stays_in_its_plain_day_file() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    let line = r#"{"id":"01KAJ00000000000000000000U","timestamp":"2026-11-21T09:00:00.000Z","type":"insight","content":"Stored by the version before tags"}"#;
    fs::write(
        repo.join(".goldfish/memories/2026-11-21.jsonl"),
        format!("{line}\n"),
    )
    .unwrap();
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let reflog = env.git(&repo, &["reflog", "--format=%H"]).lines().count();
    fs::write(
        repo.join(".git/goldfish-journal.jsonl"),
        format!("{millis}\t{reflog}\tplaced\t{line}\n"),
    )
    .unwrap();
    env.ok(&repo, &["sync", "--quiet"]);
    let copies: usize = crate::common::memory_files(&repo)
        .iter()
        .map(|(_, bytes)| {
            copies(
                &String::from_utf8_lossy(bytes),
                "01KAJ00000000000000000000U",
            )
        })
        .sum();
    assert_eq!(copies, 1, "{:?}", crate::common::memory_files(&repo));
}
