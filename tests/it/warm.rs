//! The warm process (`goldfish model warm`): a command that loaded the
//! model itself starts one, the next commands get their vectors from it, and
//! none of them needs it: killed in the middle of a request, stopped, of
//! another build or gone, a command embeds in its own process and answers
//! the same. Its life: one per home and model, ends when idle, when its home
//! goes, or when its executable changes.
//!
//! Most tests use the tests' stand-in embedder (what is checked is where the
//! vectors come from, not what they mean); the last compares the real
//! model's answers with and without the warm process.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{TestEnv, json_lines};

/// The warm process's files for the default model in `env`'s home.
fn warm_file(env: &TestEnv, extension: &str) -> PathBuf {
    env.path().join("home/.goldfish/warm").join(format!(
        "{}.{extension}",
        goldfish::adapters::embed::DEFAULT_MODEL
    ))
}

/// `goldfish ARGS` with the warm process allowed (the harness turns it off)
/// and the command's trace on stderr.
fn warm_command(env: &TestEnv, program: &Path, cwd: &Path, args: &[&str]) -> Command {
    let mut command = env.command(program, cwd);
    command
        .args(args)
        .env("GOLDFISH_WARM", "1")
        .env("GOLDFISH_TRACE", "1");
    command
}

fn goldfish() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_goldfish"))
}

#[track_caller]
fn succeeded(output: Output) -> Output {
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The trace line's "model loads N, warm requests M".
fn uses(output: &Output) -> (usize, usize) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let trace = stderr
        .lines()
        .find_map(|line| line.strip_prefix("goldfish trace: "))
        .unwrap_or_else(|| panic!("no trace in:\n{stderr}"));
    let number = |name: &str| -> usize {
        let (_, rest) = trace.split_once(name).unwrap();
        rest.trim().split(',').next().unwrap().parse().unwrap()
    };
    (number("model loads"), number("warm requests"))
}

/// A recall's hits as `--json` gives them, and where its vectors came from.
/// The index's cache of query vectors is emptied first, so that the query
/// is embedded by this command.
fn recall(env: &TestEnv, repo: &Path, warm: bool, question: &str) -> (String, (usize, usize)) {
    let index = env.path().join("home/.goldfish/index.db");
    let db = rusqlite::Connection::open(&index).unwrap();
    db.busy_timeout(Duration::from_secs(10)).unwrap();
    db.execute("DELETE FROM query_cache", []).unwrap();
    drop(db);
    let mut command = warm_command(env, goldfish(), repo, &["recall", "--json", question]);
    if !warm {
        command.env("GOLDFISH_WARM", "0");
    }
    let output = succeeded(command.output().unwrap());
    (
        String::from_utf8(output.stdout.clone()).unwrap(),
        uses(&output),
    )
}

/// The pid of the warm process once it serves (its info file, written
/// when its socket is ready), waiting up to 60 s; `not` skips an old one.
fn serving(env: &TestEnv, not: Option<u32>) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let info = std::fs::read_to_string(warm_file(env, "json"))
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
        if let Some(pid) = info.and_then(|info| info["pid"].as_u64())
            && Some(pid as u32) != not
            && warm_file(env, "sock").exists()
        {
            return pid as u32;
        }
        assert!(Instant::now() < deadline, "no warm process started");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `goldfish model warm` started by the test (not detached: the test waits
/// for it and reads what it said).
fn start_warm(env: &TestEnv, program: &Path, extra: &[(&str, &str)]) -> Child {
    let mut command = env.command(program, env.path());
    command
        .args(["model", "warm"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in extra {
        command.env(key, value);
    }
    // A program the test has just copied can be briefly "busy" (ETXTBSY):
    // a process another test thread forked meanwhile still holds the copy's
    // write descriptor until it execs. Try again for a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match command.spawn() {
            Err(err)
                if err.kind() == std::io::ErrorKind::ExecutableFileBusy
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            spawned => return spawned.unwrap(),
        }
    }
}

fn wait_output(child: Child) -> (std::process::ExitStatus, String) {
    let output = child.wait_with_output().unwrap();
    (
        output.status,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn signal(pid: u32, signal: i32) {
    // SAFETY: sends a signal to a process this test started.
    assert_eq!(unsafe { libc::kill(pid as i32, signal) }, 0);
}

/// Waits for `pid` (not a child of the test) to be gone.
fn gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        // SAFETY: signal 0 only checks that the process exists.
        if unsafe { libc::kill(pid as i32, 0) } != 0 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn stop_warm(env: &TestEnv) {
    if let Some(pid) = std::fs::read_to_string(warm_file(env, "json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|info| info["pid"].as_u64())
    {
        // SAFETY: a best-effort end of a process this test started.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
}

fn repo_with_memories(env: &TestEnv) -> PathBuf {
    let repo = env.repo("repo", "Alice");
    for content in [
        "Invoices are numbered per tenant, never globally",
        "The billing worker retries Stripe webhooks three times",
        "Login failed for expired sessions: the JWT exp claim was read in milliseconds",
    ] {
        env.ok(&repo, &["store", "--type", "decision", content]);
    }
    env.ok(&repo, &["sync", "--quiet"]);
    repo
}

#[test]
fn a_command_that_loaded_the_model_starts_a_warm_process_and_the_next_ones_use_it() {
    let env = TestEnv::new().with_fake_model();
    let repo = repo_with_memories(&env);
    let (alone, alone_uses) = recall(&env, &repo, false, "how are invoices numbered");
    assert_eq!(
        alone_uses,
        (1, 0),
        "GOLDFISH_WARM=0: loaded here, nothing started"
    );
    assert!(!warm_file(&env, "sock").exists());

    // The first command with the warm process allowed loads the model
    // itself and starts the warm process when it is done with it.
    let store = succeeded(
        warm_command(
            &env,
            goldfish(),
            &repo,
            &[
                "store",
                "--type",
                "insight",
                "Refunds go through the ledger",
            ],
        )
        .output()
        .unwrap(),
    );
    assert_eq!(uses(&store), (1, 0));
    let pid = serving(&env, None);

    // The next commands get their vectors from it, and answer the same.
    let (warmed, warmed_uses) = recall(&env, &repo, true, "how are invoices numbered");
    assert_eq!(
        warmed_uses,
        (0, 1),
        "the query embedded by the warm process"
    );
    assert_eq!(json_lines(&warmed)[0]["id"], json_lines(&alone)[0]["id"]);
    let (alone_again, _) = recall(&env, &repo, false, "how are invoices numbered");
    assert_eq!(warmed, alone_again, "the same answer with and without it");
    let store = succeeded(
        warm_command(
            &env,
            goldfish(),
            &repo,
            &["store", "--type", "insight", "Exports run nightly at two"],
        )
        .output()
        .unwrap(),
    );
    assert_eq!(uses(&store).0, 0, "a store loads no model either");
    assert!(uses(&store).1 >= 1);

    // `status` says it runs, in text and --json.
    let status = env.ok(&repo, &["status", "--json"]);
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["warm"]["pid"], pid);
    assert_eq!(status["warm"]["idle_secs"], 600);
    let text = env.ok(&repo, &["status"]);
    assert!(
        text.contains(&format!("warm       process {pid} keeps ")),
        "{text}"
    );
    stop_warm(&env);
}

#[test]
fn a_command_answers_when_the_warm_process_is_killed_in_the_middle_of_its_request() {
    let env = TestEnv::new().with_fake_model();
    let repo = repo_with_memories(&env);
    let (alone, _) = recall(&env, &repo, false, "webhook retries");
    // This warm process aborts when a request arrives, as if killed
    // between reading it and answering.
    let child = start_warm(&env, goldfish(), &[("GOLDFISH_FAULT", "warm-abort")]);
    let killed = serving(&env, None);
    let (answer, used) = recall(&env, &repo, true, "webhook retries");
    assert_eq!(answer, alone);
    assert_eq!(used, (1, 0), "embedded here after the warm process died");
    let (status, _) = wait_output(child);
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGABRT)
    );
    // That command started a new one; killed with SIGKILL while idle, it
    // leaves its socket file behind: the next command is refused by it,
    // answers the same, and starts another.
    let second = serving(&env, Some(killed));
    signal(second, libc::SIGKILL);
    assert!(gone(second));
    assert!(warm_file(&env, "sock").exists(), "a dead process's socket");
    let (answer, used) = recall(&env, &repo, true, "webhook retries");
    assert_eq!((answer, used), (alone, (1, 0)));
    let third = serving(&env, Some(second));
    assert_ne!(third, killed);
    stop_warm(&env);
}

#[test]
fn a_stopped_warm_process_does_not_stop_a_command() {
    let env = TestEnv::new().with_fake_model();
    let repo = repo_with_memories(&env);
    let (alone, _) = recall(&env, &repo, false, "expired sessions");
    let child = start_warm(&env, goldfish(), &[]);
    serving(&env, None);
    signal(child.id(), libc::SIGSTOP);
    // The hello goes unanswered: after a second the command embeds itself.
    let (answer, used) = recall(&env, &repo, true, "expired sessions");
    assert_eq!((answer, used), (alone, (1, 0)));
    signal(child.id(), libc::SIGKILL);
    let (status, _) = wait_output(child);
    assert!(!status.success());
}

#[test]
fn one_warm_process_per_home_that_ends_when_idle_or_when_its_home_goes() {
    let env = TestEnv::new().with_fake_model();
    // Idle long enough that the second one below surely finds it running,
    // even on a busy machine.
    let first = start_warm(&env, goldfish(), &[("GOLDFISH_WARM_IDLE", "15")]);
    let pid = serving(&env, None);
    assert_eq!(pid, first.id());
    // A second one for the same home and model does not start.
    let (status, said) = wait_output(start_warm(&env, goldfish(), &[]));
    assert!(status.success());
    assert!(
        said.contains("another warm process runs for this model"),
        "{said}"
    );
    // Fifteen seconds without a request end the first; its files go with it.
    let (status, said) = wait_output(first);
    assert!(status.success());
    assert!(
        said.contains("ended: no request for the idle time"),
        "{said}"
    );
    assert!(!warm_file(&env, "sock").exists());
    assert!(!warm_file(&env, "json").exists());

    // A home removed under a running warm process ends it.
    let child = start_warm(&env, goldfish(), &[]);
    serving(&env, None);
    std::fs::remove_dir_all(env.path().join("home/.goldfish/warm")).unwrap();
    let (status, said) = wait_output(child);
    assert!(status.success());
    assert!(said.contains("ended: its socket was removed"), "{said}");
}

#[test]
fn a_warm_process_of_another_build_makes_way_and_an_upgraded_one_ends() {
    let env = TestEnv::new().with_fake_model();
    let repo = repo_with_memories(&env);
    let (alone, _) = recall(&env, &repo, false, "how are invoices numbered");
    // Another build: the same program copied (another file is another
    // build, as an upgrade is).
    let old = env.path().join("old-goldfish");
    std::fs::copy(goldfish(), &old).unwrap();
    let child = start_warm(&env, &old, &[]);
    let old_pid = serving(&env, None);
    let (answer, used) = recall(&env, &repo, true, "how are invoices numbered");
    assert_eq!(
        (answer, used),
        (alone, (1, 0)),
        "not served by another build"
    );
    let (status, said) = wait_output(child);
    assert!(status.success());
    assert!(said.contains("ended: retired: another build"), "{said}");
    // The command started one of its own build, which serves the next.
    let new_pid = serving(&env, Some(old_pid));
    let (_, used) = recall(&env, &repo, true, "how are invoices numbered");
    assert_eq!(used, (0, 1));
    signal(new_pid, libc::SIGKILL);
    assert!(gone(new_pid));

    // A warm process whose executable is replaced on disk ends by itself.
    let child = start_warm(&env, &old, &[]);
    serving(&env, Some(new_pid));
    let replacement = env.path().join("new-goldfish");
    std::fs::copy(goldfish(), &replacement).unwrap();
    std::fs::rename(&replacement, &old).unwrap();
    let (status, said) = wait_output(child);
    assert!(status.success());
    assert!(said.contains("ended: its executable changed"), "{said}");
}

#[ignore = "needs the real model: bash scripts/test.sh"]
#[test]
fn the_real_models_answers_are_the_same_from_the_warm_process() {
    let env = TestEnv::new().with_model();
    let repo = repo_with_memories(&env);
    let questions = [
        "login problems",
        "how do we number invoices",
        "payment notifications sent again",
    ];
    let alone: Vec<String> = questions
        .iter()
        .map(|q| recall(&env, &repo, false, q).0)
        .collect();
    let child = start_warm(&env, goldfish(), &[]);
    serving(&env, None);
    for (question, alone) in questions.iter().zip(&alone) {
        let (warmed, used) = recall(&env, &repo, true, question);
        assert_eq!(used, (0, 1), "{question}");
        let ranking = |text: &str| -> Vec<(String, String)> {
            json_lines(text)
                .iter()
                .map(|hit| {
                    let score = hit["score"].as_f64().unwrap();
                    (
                        hit["id"].as_str().unwrap().to_owned(),
                        format!("{score:.4}"),
                    )
                })
                .collect()
        };
        assert!(!ranking(alone).is_empty(), "{question}");
        assert_eq!(ranking(&warmed), ranking(alone), "{question}");
    }
    signal(child.id(), libc::SIGKILL);
    wait_output(child);
}
