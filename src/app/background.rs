//! Work that runs in a detached `goldfish` process: the background sync a
//! hook starts after a large pull, the catch-up a prompt leaves a lagging
//! index to, and the capture worker.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::adapters::git::Workspace;
use crate::adapters::home::Home;

/// Starts `goldfish ARGS` in `dir`, detached (its own process group, stdin
/// closed), appending its output to `$GOLDFISH_HOME/logs/LOG_NAME`; returns
/// that file's path.
pub fn spawn_detached(
    home: &Home,
    log_name: &str,
    args: &[&str],
    dir: &Path,
) -> anyhow::Result<PathBuf> {
    spawn_with_stdin(home, log_name, args, dir, std::process::Stdio::null())
}

/// [`spawn_detached`], with `stdin` as the child's standard input.
fn spawn_with_stdin(
    home: &Home,
    log_name: &str,
    args: &[&str],
    dir: &Path,
    stdin: std::process::Stdio,
) -> anyhow::Result<PathBuf> {
    use std::os::unix::process::CommandExt;
    let logs = home.logs_dir();
    std::fs::create_dir_all(&logs).with_context(|| format!("cannot create {}", logs.display()))?;
    let log_path = logs.join(log_name);
    let log_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .with_context(|| format!("cannot open {}", log_path.display()))?;
    let exe = std::env::current_exe().context("cannot find the goldfish executable")?;
    std::process::Command::new(exe)
        .args(args)
        .current_dir(dir)
        .stdin(stdin)
        .stdout(log_file.try_clone().context("cannot share the log file")?)
        .stderr(log_file)
        .process_group(0)
        .spawn()?;
    Ok(log_path)
}

/// Starts `goldfish sync` of `workspace` detached from the caller (a git
/// hook), appending its output to `$GOLDFISH_HOME/logs/sync.log`.
pub fn start_sync(home: &Home, workspace: &Workspace) -> anyhow::Result<PathBuf> {
    spawn_detached(home, "sync.log", &["sync"], workspace.root())
        .context("cannot start the background sync")
}

/// Starts `goldfish sync --catch-up` of `workspace` detached, logging to
/// `$GOLDFISH_HOME/logs/sync.log`, unless one runs already: `None` then.
/// Single-flight: the catch-up lock is taken here and handed to the child
/// as its stdin, so it is held from before the child starts until it
/// exits, and no second one starts between (a prompt a second).
pub fn start_catch_up(home: &Home, workspace: &Workspace) -> anyhow::Result<Option<PathBuf>> {
    let Some(lock) = crate::adapters::index::locks::catch_up(&home.locks_dir(), workspace.root())?
    else {
        return Ok(None);
    };
    spawn_with_stdin(
        home,
        "sync.log",
        &["sync", "--catch-up"],
        workspace.root(),
        lock.into(),
    )
    .map(Some)
    .context("cannot start the background sync")
}

/// Starts `goldfish capture work` detached, logging to
/// `$GOLDFISH_HOME/logs/capture.log`.
pub fn capture_worker(home: &Home) -> anyhow::Result<PathBuf> {
    spawn_detached(home, "capture.log", &["capture", "work"], home.root())
        .context("cannot start the capture worker")
}

/// Opens `url` in the desktop's browser (`open` on macOS, `xdg-open`
/// elsewhere), detached, its end awaited on a thread of its own; whether
/// one was started.
pub fn open_browser(url: &str) -> bool {
    use std::os::unix::process::CommandExt;
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn();
    match started {
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
            true
        }
        Err(_) => false,
    }
}
