//! What a new user meets in the first hour: messages that read right, and
//! the README's set-up steps run as written.

use crate::common::TestEnv;

fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn forgetting_twice_says_already_forgotten_and_when() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    let stored = env.ok(&repo, &["store", "A memory to forget"]);
    let id = stored.split_whitespace().nth(1).unwrap().to_owned();
    let prefix = &id[..12];
    env.ok(&repo, &["forget", prefix]);
    env.set_now("2026-11-22T08:00:00Z");
    for name in [prefix, id.as_str()] {
        let again = env.goldfish(&repo, &["forget", name]);
        assert_eq!(again.status.code(), Some(0), "{}", stderr_of(&again));
        assert_eq!(
            String::from_utf8_lossy(&again.stdout),
            format!("{id} is already forgotten (since 2026-11-21T09:30:00.000Z)\n")
        );
    }
}

#[test]
fn status_counts_committed_memories_in_git_and_says_how_many_are_not() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["store", "First"]);
    env.ok(&repo, &["store", "Second"]);
    env.commit_all(&repo, "memories");
    env.ok(&repo, &["store", "Third, not committed"]);
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&repo, &["status", "--json"])).unwrap();
    assert_eq!(status["memories_in_git"], 2, "{status}");
    assert_eq!(status["memories_uncommitted"], 1, "{status}");
    assert_eq!(status["memories_in_index"], 3, "{status}");
    let text = env.ok(&repo, &["status"]);
    assert!(
        text.contains("memories   2 in git (and 1 not committed yet), 3 in the index"),
        "{text}"
    );
}

#[test]
fn a_bad_repository_config_is_reported_once() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    std::fs::write(
        repo.join(".goldfish/config"),
        "[memory]\ntypes = [\"Bad Type\"]\n",
    )
    .unwrap();
    let store = env.goldfish(&repo, &["store", "x"]);
    assert_eq!(store.status.code(), Some(2));
    let stderr = stderr_of(&store);
    assert_eq!(
        stderr.matches("cannot be a memory type").count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains(".goldfish/config is invalid: memory.types"),
        "{stderr}"
    );
}

#[test]
fn outside_a_repository_the_error_says_it_once() {
    let env = TestEnv::new();
    let nowhere = env.path().join("nowhere");
    std::fs::create_dir_all(&nowhere).unwrap();
    let status = env.goldfish(&nowhere, &["status"]);
    assert_eq!(status.status.code(), Some(2));
    let stderr = stderr_of(&status);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: not inside a git repository (")
            && stderr.ends_with("): run goldfish in a clone, or `git init` first\n"),
        "{stderr}"
    );
}

#[test]
fn one_memory_is_not_one_memories() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["store", "The only memory"]);
    let outputs = [
        env.ok(&repo, &["sync"]),
        env.ok(&repo, &["status"]),
        env.ok(&repo, &["reindex"]),
        String::from_utf8_lossy(&env.goldfish(&repo, &["doctor"]).stdout).into_owned(),
    ];
    for text in &outputs {
        assert!(!text.contains("1 memories"), "{text}");
        assert!(!text.contains("1 files"), "{text}");
    }
    assert!(
        outputs[0].contains("synced r: 1 memory (0 files read of 1"),
        "{}",
        outputs[0]
    );
    assert!(outputs[1].contains("r: 1 memory ("), "{}", outputs[1]);
    assert!(
        outputs[3].contains("1 memory, every line readable"),
        "{}",
        outputs[3]
    );
}

#[test]
fn doctor_in_a_repository_without_commits_reads_right() {
    let env = TestEnv::new();
    let repo = env.path().join("fresh");
    std::fs::create_dir_all(&repo).unwrap();
    env.git(&repo, &["init", "-q", "-b", "main"]);
    env.ok(&repo, &["init"]);
    env.ok(&repo, &["store", "Before the first commit"]);
    let doctor = String::from_utf8_lossy(&env.goldfish(&repo, &["doctor"]).stdout).into_owned();
    assert!(!doctor.contains("HEAD no commit"), "{doctor}");
    assert!(
        doctor.contains("up to date with the work tree (no commit yet)"),
        "{doctor}"
    );
}

/// The shell lines of README.md's "Use it in a repository" code blocks, in
/// order, comments and blank lines left out.
fn readme_setup_lines() -> Vec<String> {
    let readme = include_str!("../../README.md");
    let section = readme
        .split_once("## Use it in a repository\n")
        .expect("README has a \"Use it in a repository\" section")
        .1;
    let section = section.split("\n### ").next().unwrap();
    let mut lines = Vec::new();
    let mut in_block = false;
    for line in section.lines() {
        match line.trim() {
            "```sh" => in_block = true,
            "```" => in_block = false,
            text if in_block && !text.is_empty() && !text.starts_with('#') => {
                lines.push(text.to_owned());
            }
            _ => {}
        }
    }
    lines
}

/// README's set-up steps, run as written in a clean home with `goldfish` on
/// PATH, end with recall finding what the README says it finds. Four
/// stand-ins, each checked: the release installer and `cargo install` are the test build already on
/// PATH, `goldfish model install` gets `--from` the test model (no network),
/// and the placeholder id of `show` and `forget` becomes the id of the first
/// memory stored. `your-repo` is a repository with one commit, as a user's is.
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn readme_setup_steps_run_as_written_end_with_recall_finding_the_memory() {
    let env = TestEnv::new();
    let lines = readme_setup_lines();
    assert!(lines.len() >= 10, "{lines:?}");
    let model = crate::common::model_home();
    let from = env.path().join("model-files");
    std::fs::create_dir_all(&from).unwrap();
    let default = goldfish::adapters::embed::DEFAULT_MODEL;
    for file in [
        format!("models/{default}/model.onnx"),
        format!("models/{default}/tokenizer.json"),
        format!("models/{default}/manifest.json"),
        "runtime/libonnxruntime.so.1.31.1".to_owned(),
    ] {
        let source = model.join(file);
        let name = source.file_name().unwrap().to_owned();
        std::os::unix::fs::symlink(&source, from.join(name)).unwrap();
    }
    let repo = env.path().join("your-repo");
    std::fs::create_dir_all(&repo).unwrap();
    env.git(&repo, &["init", "-q", "-b", "main"]);
    env.identify(&repo, "Alice");
    std::fs::write(repo.join("README.md"), "# your repo\n").unwrap();
    env.commit_all(&repo, "initial");

    let mut cwd = env.path().to_owned();
    let mut first_id: Option<String> = None;
    let mut found = false;
    for line in &lines {
        let command = line.split(" #").next().unwrap().trim();
        // The release installer needs the network and a published release:
        // scripts/dist_check.sh (CI) runs it on an archive of this build.
        // Here, as for `cargo install`, the build under test is on PATH.
        if command.starts_with("curl ") && command.ends_with("/install.sh | sh") {
            assert!(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("install.sh")
                    .is_file(),
                "README's installer is the repository's install.sh"
            );
            continue;
        }
        if command.starts_with("cargo install --locked --path .") {
            let which = env
                .command("sh", &cwd)
                .args(["-c", "command -v goldfish"])
                .output()
                .unwrap();
            assert!(which.status.success(), "goldfish is on PATH");
            continue;
        }
        if let Some(dir) = command.strip_prefix("cd ") {
            cwd = cwd.join(dir);
            continue;
        }
        let mut command = command.to_owned();
        if command == "goldfish model install" {
            command = format!("goldfish model install --from {}", from.display());
        }
        if let Some(placeholder) = command
            .strip_prefix("goldfish forget ")
            .or_else(|| command.strip_prefix("goldfish show "))
        {
            let id = first_id
                .as_deref()
                .expect("a memory was stored before show and forget");
            command = command.replace(placeholder.split_whitespace().next().unwrap(), &id[..12]);
        }
        let output = env
            .command("sh", &cwd)
            .args(["-c", &command])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        // 1 is "nothing found" for a search, a problem for doctor.
        let searches = ["goldfish recall", "goldfish similar"]
            .iter()
            .any(|search| command.starts_with(search));
        assert!(
            output.status.code() == Some(0) || (searches && output.status.code() == Some(1)),
            "`{command}` failed ({:?}):\n{stdout}{}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        );
        if command.starts_with("goldfish store") && first_id.is_none() {
            first_id = stdout.split_whitespace().nth(1).map(str::to_owned);
        }
        // A line whose comment says `finds "…"` must find it.
        if let Some(expected) = line
            .split("finds \"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
        {
            assert_eq!(output.status.code(), Some(0), "`{command}`:\n{stdout}");
            assert!(
                stdout.contains(expected),
                "`{command}` finds {expected:?}:\n{stdout}"
            );
            found = true;
        }
    }
    assert!(found, "the README's recall line was run: {lines:?}");
}
