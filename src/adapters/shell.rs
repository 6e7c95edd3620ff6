//! An external command run by `sh -c`: an LLM's command line (capture's
//! `GOLDFISH_CAPTURE_COMMAND`, the digest's distill command) gets text on
//! its stdin and answers on its stdout, within a timeout.
//!
//! The command runs in a process group of its own, and nothing of it
//! outlives the call: once the shell exits, or the time is up, the whole
//! group is killed (`SIGKILL`), then the shell is reaped. The shell is
//! watched without being reaped (`waitid` with `WNOWAIT`) until the group
//! is killed, so its id (the group's) cannot be reused in between.

use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often a running command is looked at.
const POLL: Duration = Duration::from_millis(10);

/// How long the output may still take once the group is gone (a process
/// that left the group may hold stdout open).
const DRAIN: Duration = Duration::from_millis(200);

/// A command that ran to its end.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    /// Its stdout, at most the limit asked for.
    pub stdout: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    #[error("could not start `sh`: {0}")]
    Spawn(#[source] io::Error),
    /// Killed at the timeout, with everything it started.
    #[error("no answer within {} s", .0.as_secs_f64())]
    Timeout(Duration),
    #[error("could not wait for the command: {0}")]
    Wait(#[source] io::Error),
}

/// Runs `command` through `sh -c` with `input` on its stdin; its exit
/// status and stdout (at most `max_stdout` bytes), or why not. Its stderr
/// is dropped.
pub fn run(
    command: &str,
    input: &str,
    timeout: Duration,
    max_stdout: u64,
) -> Result<Finished, ShellError> {
    let deadline = Instant::now() + timeout;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(ShellError::Spawn)?;
    let group = child.id() as libc::pid_t;
    // Feed stdin and drain stdout on threads, so a command that writes
    // before it reads cannot deadlock with us.
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.to_owned();
    std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let stdout = child.stdout.take().expect("piped stdout");
    let (sender, output) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.take(max_stdout).read_to_end(&mut out);
        let _ = sender.send(out);
    });
    let timed_out = loop {
        match exited(group) {
            Ok(true) => break false,
            Ok(false) if Instant::now() >= deadline => break true,
            Ok(false) => std::thread::sleep(POLL),
            Err(err) => {
                kill_group(group);
                let _ = child.wait();
                return Err(ShellError::Wait(err));
            }
        }
    };
    kill_group(group);
    let status = child.wait().map_err(ShellError::Wait)?;
    if timed_out {
        return Err(ShellError::Timeout(timeout));
    }
    let wait = deadline
        .saturating_duration_since(Instant::now())
        .max(DRAIN);
    match output.recv_timeout(wait) {
        Ok(stdout) => Ok(Finished { status, stdout }),
        Err(_) => Err(ShellError::Timeout(timeout)),
    }
}

/// Whether process `pid` (a child) has exited, leaving it to be reaped.
fn exited(pid: libc::pid_t) -> io::Result<bool> {
    // SAFETY: `info` is a plain struct the call fills; `pid` is our child.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        if libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(info.si_pid() != 0)
    }
}

/// Kills every process of group `group` (none left is no error).
fn kill_group(group: libc::pid_t) {
    // SAFETY: a plain syscall; `group` is the group our child leads, its
    // id held by the child until it is reaped.
    unsafe { libc::kill(-group, libc::SIGKILL) };
}

/// What tests of the callers use: a stand-in for an LLM's command line
/// (a shell script; the one thing tests may mock) that starts two
/// processes and records their ids, and whether a process is alive.
#[cfg(test)]
pub(crate) mod testing {
    use std::path::Path;

    /// A command that starts two `sleep`s (one in the background, one
    /// waited for), writes their process ids to `pids`, and never answers.
    pub fn lingering(pids: &Path) -> String {
        format!(
            "sleep 300 & echo $! > '{0}'; sleep 301 & echo $! >> '{0}'; wait",
            pids.display()
        )
    }

    /// The ids `lingering` wrote.
    pub fn recorded(pids: &Path) -> Vec<u32> {
        std::fs::read_to_string(pids)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect()
    }

    /// Whether `pid` is a live process (not gone, not a zombie).
    pub fn alive(pid: u32) -> bool {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // `pid (comm) STATE …`: comm may hold spaces and parentheses.
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim().chars().next());
        state.is_some_and(|state| state != 'Z' && state != 'X')
    }

    /// The recorded processes still alive, killed so a failing test leaves
    /// none behind.
    pub fn survivors(pids: &Path) -> Vec<u32> {
        // SIGKILL is delivered asynchronously: a process killed a moment
        // ago may still show as running for a little while.
        let started = std::time::Instant::now();
        let mut alive: Vec<u32> = recorded(pids);
        loop {
            alive.retain(|&pid| self::alive(pid));
            if alive.is_empty() || started.elapsed() > std::time::Duration::from_secs(2) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        for &pid in &alive {
            // SAFETY: a plain syscall on a pid this test's command started.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
        alive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_and_failures() {
        let second = Duration::from_secs(2);
        let done = run("cat; echo done", "hello ", second, 1 << 20).unwrap();
        assert!(done.status.success());
        assert_eq!(done.stdout, b"hello done\n");
        let cut = run("cat", "0123456789", second, 4).unwrap();
        assert_eq!(cut.stdout, b"0123");
        let failed = run("exit 3", "", second, 1 << 20).unwrap();
        assert_eq!(failed.status.code(), Some(3));
        assert!(matches!(
            run("sleep 5", "", Duration::from_millis(100), 1 << 20),
            Err(ShellError::Timeout(_))
        ));
    }

    /// The shell answered and exited, but left a process behind that holds
    /// its stdout: the answer comes at once, and the process goes.
    #[test]
    fn what_a_finished_command_left_running_goes_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        let command = format!("sleep 300 & echo $! > '{}'; echo answer", pids.display());
        let started = Instant::now();
        let done = run(&command, "", Duration::from_secs(30), 1 << 20).unwrap();
        assert_eq!(done.stdout, b"answer\n");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(testing::survivors(&pids), Vec::<u32>::new());
    }
}
