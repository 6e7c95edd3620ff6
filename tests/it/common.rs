//! The hermetic test environment.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

/// The fixed "now" of every test.
pub const NOW: &str = "2026-11-21T09:30:00Z";
const GIT_DATE: &str = "2026-11-21T10:00:00+00:00";

/// A tempdir with a `bin/` holding `goldfish` (to put on PATH) and a home.
pub struct TestEnv {
    pub dir: TempDir,
    bin: PathBuf,
    /// Whether `goldfish` is on the PATH of the commands this env runs.
    pub goldfish_on_path: bool,
    /// `GOLDFISH_NOW` of the commands this env runs.
    now: std::cell::RefCell<String>,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("bin");
        fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_goldfish"), bin.join("goldfish")).unwrap();
        fs::create_dir_all(dir.path().join("home")).unwrap();
        TestEnv {
            dir,
            bin,
            goldfish_on_path: true,
            now: std::cell::RefCell::new(NOW.to_owned()),
        }
    }

    /// Sets the fixed "now" of the goldfish commands that follow.
    pub fn set_now(&self, now: &str) {
        *self.now.borrow_mut() = now.to_owned();
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A command with the hermetic environment.
    pub fn command(&self, program: impl AsRef<OsStr>, cwd: &Path) -> Command {
        let mut command = Command::new(program);
        let system_path = std::env::var("PATH").unwrap_or_default();
        let path = if self.goldfish_on_path {
            format!("{}:{system_path}", self.bin.display())
        } else {
            system_path
        };
        command
            .current_dir(cwd)
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.path().join("home"))
            .env("LANG", "C.UTF-8")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_DATE", GIT_DATE)
            .env("GIT_COMMITTER_DATE", GIT_DATE)
            .env("GIT_COMMITTER_NAME", "Test Committer")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("GOLDFISH_NOW", self.now.borrow().as_str())
            .env("GOLDFISH_HOME", self.path().join("home/.goldfish"))
            // Each test's commands load the model themselves (whether a
            // warm process already answers would depend on timing);
            // `tests/it/warm.rs` turns it on.
            .env("GOLDFISH_WARM", "0")
            .stdin(Stdio::null());
        command
    }

    /// Runs git and asserts it succeeded; returns stdout.
    #[track_caller]
    pub fn git(&self, cwd: &Path, args: &[&str]) -> String {
        let output = self
            .command("git", cwd)
            .args(args)
            .output()
            .expect("spawn git");
        assert!(
            output.status.success(),
            "git {args:?} failed in {}:\n{}{}",
            cwd.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// Runs goldfish (from the test build) with the hermetic environment.
    pub fn goldfish(&self, cwd: &Path, args: &[&str]) -> Output {
        self.command(env!("CARGO_BIN_EXE_goldfish"), cwd)
            .args(args)
            .output()
            .expect("spawn goldfish")
    }

    /// Runs goldfish with `stdin` and returns its output.
    pub fn goldfish_stdin(&self, cwd: &Path, args: &[&str], stdin: &[u8]) -> Output {
        self.goldfish_stdin_with(cwd, args, stdin, &[])
    }

    /// [`TestEnv::goldfish_stdin`] with these variables set too.
    pub fn goldfish_stdin_with(
        &self,
        cwd: &Path,
        args: &[&str],
        stdin: &[u8],
        vars: &[(&str, &std::ffi::OsStr)],
    ) -> Output {
        let mut command = self.command(env!("CARGO_BIN_EXE_goldfish"), cwd);
        command.args(args).envs(vars.iter().copied());
        output_with_stdin(command, stdin)
    }

    /// Runs the command line `line` as an agent runs a hook's command
    /// (`sh -c`), with `payload` on stdin and these variables set.
    pub fn as_agent_hook(
        &self,
        cwd: &Path,
        line: &str,
        payload: &serde_json::Value,
        vars: &[(&str, &std::ffi::OsStr)],
    ) -> Output {
        let mut command = self.command("sh", cwd);
        command.args(["-c", line]).envs(vars.iter().copied());
        output_with_stdin(command, payload.to_string().as_bytes())
    }

    /// `goldfish store --type KIND CONTENT` in `repo` with a home of its
    /// own (`home`, a folder of this env): a teammate whose index is not
    /// the env's, so what they store arrives unembedded. Asserts success.
    #[track_caller]
    pub fn store_elsewhere(&self, repo: &Path, home: &str, kind: &str, content: &str) {
        let stored = self
            .command(env!("CARGO_BIN_EXE_goldfish"), repo)
            .args(["store", "--type", kind, content])
            .env("GOLDFISH_HOME", self.path().join(home))
            .output()
            .unwrap();
        assert!(stored.status.success(), "{stored:?}");
    }

    /// Runs goldfish, asserts success, returns stdout.
    #[track_caller]
    pub fn ok(&self, cwd: &Path, args: &[&str]) -> String {
        self.ok_with(cwd, args, &[])
    }

    /// [`TestEnv::ok`] with these environment variables set too.
    pub fn ok_with(&self, cwd: &Path, args: &[&str], vars: &[(&str, &str)]) -> String {
        let output = self
            .command(env!("CARGO_BIN_EXE_goldfish"), cwd)
            .args(args)
            .envs(vars.iter().copied())
            .output()
            .expect("spawn goldfish");
        assert!(
            output.status.success(),
            "goldfish {args:?} failed ({:?}):\n{}{}",
            output.status.code(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// A new repository with one commit, user `name`, goldfish initialized.
    pub fn repo(&self, name: &str, user: &str) -> PathBuf {
        let repo = self.path().join(name);
        fs::create_dir_all(&repo).unwrap();
        self.git(&repo, &["init", "-q", "-b", "main"]);
        self.identify(&repo, user);
        fs::write(repo.join("README.md"), "# project\n").unwrap();
        self.git(&repo, &["add", "README.md"]);
        self.git(&repo, &["commit", "-q", "-m", "initial"]);
        self.ok(&repo, &["init"]);
        repo
    }

    /// Sets the repository-local identity and pull behaviour.
    pub fn identify(&self, repo: &Path, user: &str) {
        let email = format!("{}@example.com", user.to_lowercase().replace(' ', "."));
        self.git(repo, &["config", "user.name", user]);
        self.git(repo, &["config", "user.email", &email]);
        self.git(repo, &["config", "pull.rebase", "false"]);
    }

    /// A bare remote seeded from a repository with goldfish committed, and two
    /// initialized clones of it: (remote, alice, bob).
    pub fn team(&self) -> (PathBuf, PathBuf, PathBuf) {
        let seed = self.repo("seed", "Seed");
        self.git(&seed, &["add", "-A"]);
        self.git(&seed, &["commit", "-q", "-m", "set up goldfish"]);
        let remote = self.path().join("remote.git");
        self.git(
            self.path(),
            &[
                "clone",
                "-q",
                "--bare",
                seed.to_str().unwrap(),
                remote.to_str().unwrap(),
            ],
        );
        let clone = |name: &str, user: &str| {
            let dir = self.clone_of(&remote, name);
            self.identify(&dir, user);
            self.ok(&dir, &["init"]);
            dir
        };
        let alice = clone("alice", "Alice");
        let bob = clone("bob", "Bob");
        (remote, alice, bob)
    }

    /// `git clone -q SOURCE NAME` into this env's folder; nothing set up.
    pub fn clone_of(&self, source: &Path, name: &str) -> PathBuf {
        let dir = self.path().join(name);
        self.git(
            self.path(),
            &[
                "clone",
                "-q",
                source.to_str().unwrap(),
                dir.to_str().unwrap(),
            ],
        );
        dir
    }

    /// `git add -A && git commit`.
    pub fn commit_all(&self, repo: &Path, message: &str) {
        self.git(repo, &["add", "-A"]);
        self.git(repo, &["commit", "-q", "-m", message]);
    }
}

/// The tag of `repo`'s work tree: the end of the name of the day files its
/// stores write (`goldfish::adapters::memdir::TAG_FILE`, in its git
/// folder), made by its first store; `None` before.
pub fn tag_of(repo: &Path) -> Option<String> {
    let text = fs::read_to_string(tag_file(repo)).ok()?;
    Some(text.trim().to_owned())
}

/// The day file `repo`'s stores write on the tests' fixed day, relative to
/// the repository: `.goldfish/memories/2026-11-21-TAG.jsonl`. Panics
/// before the first store.
pub fn today(repo: &Path) -> String {
    let tag = tag_of(repo).expect("no store has run in this work tree: it has no tag yet");
    format!(".goldfish/memories/2026-11-21-{tag}.jsonl")
}

/// Gives `to` the tag of `from`, so both write the same day file, as two
/// branches of one clone do (two clones never do): for the tests of what
/// git and the merge driver make of one file changed on both sides.
pub fn share_tag(from: &Path, to: &Path) {
    set_tag(to, &tag_of(from).expect("`from` has stored nothing yet"));
}

/// Sets the tag of `repo`'s work tree before its first store, so a test
/// can write the day file its stores will append to.
pub fn set_tag(repo: &Path, tag: &str) {
    fs::write(tag_file(repo), format!("{tag}\n")).unwrap();
}

/// Where `repo`'s work tree keeps its tag: in its own git folder.
fn tag_file(repo: &Path) -> PathBuf {
    let output = Command::new("git")
        .args(["rev-parse", "--absolute-git-dir"])
        .current_dir(repo)
        .output()
        .unwrap();
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
        .join(goldfish::adapters::memdir::TAG_FILE)
}

/// Every `*.jsonl` in a repository's memory folder, concatenated in name order.
pub fn memory_files(repo: &Path) -> Vec<(String, Vec<u8>)> {
    let dir = repo.join(".goldfish/memories");
    let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

/// Every line of every memory file, parsed as JSON.
pub fn memory_lines(repo: &Path) -> Vec<serde_json::Value> {
    memory_files(repo)
        .iter()
        .flat_map(|(name, bytes)| {
            String::from_utf8(bytes.clone())
                .unwrap()
                .lines()
                .map(|line| {
                    serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}: {e}: {line}"))
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The problems `goldfish sync --json` reports in `repo`, one line each.
pub fn sync_problems(env: &TestEnv, repo: &Path) -> Vec<String> {
    let report: serde_json::Value =
        serde_json::from_str(&env.ok(repo, &["sync", "--json"])).unwrap();
    report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_owned())
        .collect()
}

/// A command's stderr, as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Appends a hand-written decision line of 2026-11-21 (a teammate's editor,
/// or an attacker's commit) to `file` of the memory folder.
pub fn hand_write(repo: &Path, file: &str, id: &str, author: &str, content: &str) {
    let line = serde_json::json!({
        "id": id,
        "timestamp": "2026-11-21T08:00:00.000Z",
        "type": "decision",
        "content": content,
        "author": author,
    });
    let path = repo.join(".goldfish/memories").join(file);
    let mut text = fs::read_to_string(&path).unwrap_or_default();
    text.push_str(&format!("{line}\n"));
    fs::write(&path, text).unwrap();
}

/// Lines of JSON Lines stdout.
pub fn json_lines(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// insta filters for what changes between runs: ids, commit hashes, tempdirs.
pub fn filters(env: &TestEnv) -> Vec<(String, String)> {
    vec![
        (
            regex_escape(&env.path().display().to_string()),
            "[TMP]".into(),
        ),
        (r"\b[0-9A-HJKMNP-TV-Z]{26}\b".into(), "[ID]".into()),
        (r"\b[0-9a-f]{40}\b".into(), "[COMMIT]".into()),
        (
            r"\b(\d{4}-\d\d-\d\d)-[0-9a-z]{6}\.jsonl\b".into(),
            "$1-[TAG].jsonl".into(),
        ),
    ]
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if "\\.+*?()|[]{}^$".contains(c) {
                vec!['\\', c]
            } else {
                vec![c]
            }
        })
        .collect()
}

/// Exit code, stdout and stderr in one string for snapshots.
pub fn render(output: &Output) -> String {
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        output
            .status
            .code()
            .map_or("signal".to_owned(), |c| c.to_string()),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A `GOLDFISH_HOME` with the embedding model and ONNX Runtime installed:
/// `GOLDFISH_TEST_MODEL_HOME`, else `target/model-home` (where
/// `scripts/test.sh` installs them).
pub fn model_home() -> PathBuf {
    let home = std::env::var_os("GOLDFISH_TEST_MODEL_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/model-home"));
    assert!(
        home.join("models")
            .join(goldfish::adapters::embed::DEFAULT_MODEL)
            .join("manifest.json")
            .is_file(),
        "the embedding model is not installed in {}: run `bash scripts/test.sh`, which installs it \
         (or `GOLDFISH_HOME={} goldfish model install`)",
        home.display(),
        home.display()
    );
    home
}

impl TestEnv {
    /// Makes the installed model available to this environment's goldfish.
    pub fn with_model(self) -> TestEnv {
        let home = self.path().join("home/.goldfish");
        fs::create_dir_all(&home).unwrap();
        let installed = model_home();
        for dir in ["models", "runtime"] {
            std::os::unix::fs::symlink(installed.join(dir), home.join(dir)).unwrap();
        }
        self
    }
}

/// One embedder of the default model per test binary: loading the model is
/// the expensive part.
pub fn with_embedder<T>(
    f: impl FnOnce(&mut goldfish::adapters::embed::onnx::OnnxEmbedder) -> T,
) -> T {
    with_embedder_of(goldfish::adapters::embed::DEFAULT_MODEL, f)
}

/// [`with_embedder`] for the installed model `name` (each loaded once).
pub fn with_embedder_of<T>(
    name: &'static str,
    f: impl FnOnce(&mut goldfish::adapters::embed::onnx::OnnxEmbedder) -> T,
) -> T {
    use goldfish::adapters::embed::onnx::OnnxEmbedder;
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};
    static EMBEDDERS: LazyLock<Mutex<HashMap<&'static str, OnnxEmbedder>>> =
        LazyLock::new(Mutex::default);
    let mut embedders = EMBEDDERS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let embedder = embedders.entry(name).or_insert_with(|| {
        let home = model_home();
        let model = goldfish::adapters::embed::InstalledModel::find(
            &home.join("models"),
            &home.join("runtime"),
            name,
        )
        .unwrap()
        .unwrap_or_else(|| panic!("{name} is not installed in {}", home.display()));
        OnnxEmbedder::load(&model, 2).unwrap()
    });
    f(embedder)
}

impl TestEnv {
    /// Runs goldfish `args` in `repo` with a terminal for stdin, which
    /// answers `answers` to whatever it asks (`tidy --apply`, `store`).
    pub fn at_terminal(&self, repo: &Path, args: &[&str], answers: &[u8]) -> std::process::Output {
        use std::io::Write;
        let (keep, stdin) = terminal();
        let child = self
            .command(env!("CARGO_BIN_EXE_goldfish"), repo)
            .args(args)
            .stdin(stdin)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut answering = std::fs::File::from(keep.try_clone().unwrap());
        answering.write_all(answers).unwrap();
        let out = child.wait_with_output().unwrap();
        drop(keep);
        out
    }

    /// Installs the tests' stand-in embedder (`goldfish::adapters::embed::fake`: words
    /// hashed into a vector; tokens are words) where the default model goes,
    /// for tests of behaviour that need a model but not its meaning. No
    /// files to download: `cargo test` runs them on a fresh clone.
    pub fn with_fake_model(self) -> TestEnv {
        let dir = self
            .path()
            .join("home/.goldfish/models")
            .join(goldfish::adapters::embed::DEFAULT_MODEL);
        fs::create_dir_all(&dir).unwrap();
        let manifest = serde_json::json!({
            "name": "fake-words",
            "kind": goldfish::adapters::embed::manifest::FAKE_KIND,
            "dims": 64,
            "pooling": "mean",
            "normalize": true,
            "max_length": 256,
            "files": {"model.onnx": {"sha256": "fa4e00000000000000000000", "source": "tests"}},
        });
        fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
        self
    }
}

/// A pseudo-terminal: (the side to keep open, the side to give a child as
/// stdin).
pub fn terminal() -> (std::os::fd::OwnedFd, std::process::Stdio) {
    use std::os::fd::FromRawFd;
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two new descriptors, which are owned below.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty");
    // SAFETY: both descriptors are new and owned by nothing else.
    unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(master),
            std::process::Stdio::from(std::os::fd::OwnedFd::from_raw_fd(slave)),
        )
    }
}

/// Runs `command` with `stdin` written to its standard input (then closed),
/// stdout and stderr captured.
pub fn output_with_stdin(mut command: Command, stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// A `goldfish mcp` spoken to line by line, as a client with its own
/// JSON-RPC code would: initialized, then raw lines in and JSON out.
pub struct McpLines {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl McpLines {
    /// Starts `server` (goldfish, without its `mcp` argument), its stderr
    /// to `stderr`, and initializes the session.
    pub fn initialized(mut server: Command, stderr: Stdio) -> McpLines {
        let mut child = server
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn goldfish mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut lines = McpLines {
            child,
            stdin,
            stdout,
        };
        lines.send(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"lines","version":"1"}}}"#,
        );
        assert_eq!(lines.receive()["result"]["serverInfo"]["name"], "goldfish");
        lines.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        lines
    }

    pub fn send(&mut self, line: &str) {
        use std::io::Write;
        writeln!(self.stdin, "{line}").unwrap();
    }

    /// The next line of stdout, as the server wrote it.
    pub fn receive_line(&mut self) -> String {
        use std::io::BufRead;
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line
    }

    /// The next line of stdout, which must be JSON.
    pub fn receive(&mut self) -> serde_json::Value {
        let line = self.receive_line();
        serde_json::from_str(&line)
            .unwrap_or_else(|err| panic!("stdout carries only JSON-RPC: {line:?}: {err}"))
    }

    /// Closes stdin and waits for the server to exit.
    pub fn finish(self) -> Output {
        drop(self.stdin);
        self.child.wait_with_output().unwrap()
    }
}
