//! The locks of a home's syncs: one sync of a workspace at a time, with
//! requests handed to the running one (numbered passes a reader can wait
//! for), and one embedder of the home at a time (embeddings are shared by
//! every workspace). Files in `$GOLDFISH_HOME/locks/`, held with `flock`, so
//! a killed process lets go.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

/// A lock file that could not be opened, created or held.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("could not read {}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What [`exclusive`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exclusive<T> {
    /// It held the lock and ran `f` (the last run's result).
    Ran(T),
    /// Another process held the lock; this one left its request to it.
    Handed(Ticket),
}

impl<T> Exclusive<T> {
    /// The result, if this caller ran `f`.
    pub fn ran(self) -> Option<T> {
        match self {
            Exclusive::Ran(value) => Some(value),
            Exclusive::Handed(_) => None,
        }
    }
}

/// A request left to the holder of a sync lock: the number of the last pass
/// that had started when the request was marked. Every later pass began
/// after the mark, so it saw what the caller saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u64);

/// Runs `f` while holding the sync lock of the workspace at `root`.
///
/// If another process holds it, this one leaves a "pending" mark and returns
/// [`Exclusive::Handed`]: the holder re-runs before it lets go, so the
/// request is not lost. The holder checks the mark again after releasing the
/// lock, closing the window in which a mark could be left unseen. The holder
/// numbers its passes (see `Passes`), so a caller that has to read
/// afterwards waits for the first pass after its mark
/// ([`wait_for_running`]), not for the lock to fall free, which a stream of
/// writers may keep it from doing for long.
pub fn exclusive<T, E>(
    locks_dir: &Path,
    root: &Path,
    mut f: impl FnMut() -> Result<T, E>,
) -> Result<Exclusive<T>, E>
where
    E: From<LockError>,
{
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| E::from(LockError::Io { path, source })
    };
    fs::create_dir_all(locks_dir).map_err(io(locks_dir))?;
    let files = LockFiles::of(locks_dir, root);
    let mut result = None;
    loop {
        let file = open_lock(&files.lock)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                fs::write(&files.pending, b"").map_err(io(&files.pending))?;
                // Read after the mark is down: a pass numbered higher began
                // after it.
                let ticket = Ticket(files.passes().started);
                match file.try_lock() {
                    Ok(()) => {}
                    Err(fs::TryLockError::WouldBlock) => {
                        return Ok(match result {
                            Some(value) => Exclusive::Ran(value),
                            None => Exclusive::Handed(ticket),
                        });
                    }
                    Err(fs::TryLockError::Error(err)) => return Err(io(&files.lock)(err)),
                }
            }
            Err(fs::TryLockError::Error(err)) => return Err(io(&files.lock)(err)),
        }
        let mut passes = files.passes();
        loop {
            // The mark goes before the pass is numbered: a request marked
            // after the removal either sees this number or a lower one.
            let _ = fs::remove_file(&files.pending);
            passes.started = passes.started.max(passes.finished) + 1;
            files.write_passes(passes).map_err(io(&files.passes))?;
            result = Some(f()?);
            passes.finished = passes.started;
            files.write_passes(passes).map_err(io(&files.passes))?;
            if !files.pending.exists() {
                break;
            }
        }
        drop(file);
        if !files.pending.exists() {
            return Ok(Exclusive::Ran(result.expect("a pass ran")));
        }
    }
}

/// Runs `f` holding the home's embedding lock (`embed.lock` in
/// `locks_dir`): one process embeds at a time, since every workspace shares
/// the embeddings. With `wait`, blocks until the lock is free; without,
/// returns `Ok(None)` when another process holds it.
pub fn embedding<T, E>(
    locks_dir: &Path,
    wait: bool,
    f: impl FnOnce() -> Result<T, E>,
) -> Result<Option<T>, E>
where
    E: From<LockError>,
{
    let path = locks_dir.join("embed.lock");
    let io = |source| {
        E::from(LockError::Io {
            path: path.clone(),
            source,
        })
    };
    fs::create_dir_all(locks_dir).map_err(|source| {
        E::from(LockError::Io {
            path: locks_dir.to_owned(),
            source,
        })
    })?;
    let file = open_lock(&path)?;
    if wait {
        file.lock().map_err(io)?;
    } else {
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => return Ok(None),
            Err(fs::TryLockError::Error(err)) => return Err(io(err)),
        }
    }
    let result = f();
    drop(file);
    result.map(Some)
}

/// Opens (creates) lock file `path`, never truncating what it holds.
fn open_lock(path: &Path) -> Result<File, LockError> {
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|source| LockError::Io {
            path: path.to_owned(),
            source,
        })
}

/// The files of a workspace's sync lock, in the home's locks folder.
struct LockFiles {
    /// Held exclusively by the running sync.
    lock: PathBuf,
    /// Present while a request waits for the holder's next pass.
    pending: PathBuf,
    /// The holder's pass numbers, [`Passes`].
    passes: PathBuf,
    /// Held by the background catch-up ([`catch_up`]).
    catch_up: PathBuf,
}

/// How many sync passes of a workspace have started, and the number of the
/// last that finished. Only the lock holder writes them (whole, by rename),
/// so a reader never sees half.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Passes {
    started: u64,
    finished: u64,
}

impl LockFiles {
    fn of(locks_dir: &Path, root: &Path) -> Self {
        let key = blake3::hash(root.to_string_lossy().as_bytes()).to_hex();
        let name = |suffix| locks_dir.join(format!("sync-{}.{suffix}", &key[..16]));
        LockFiles {
            lock: name("lock"),
            pending: name("pending"),
            passes: name("passes"),
            catch_up: name("catch-up"),
        }
    }

    /// The pass numbers; zeros when there are none yet (or they cannot be
    /// read: a waiter then falls back to the lock).
    fn passes(&self) -> Passes {
        let text = fs::read_to_string(&self.passes).unwrap_or_default();
        let mut numbers = text.split_whitespace().map(str::parse::<u64>);
        match (numbers.next(), numbers.next()) {
            (Some(Ok(started)), Some(Ok(finished))) => Passes { started, finished },
            _ => Passes::default(),
        }
    }

    fn write_passes(&self, passes: Passes) -> std::io::Result<()> {
        let mut temporary = self.passes.as_os_str().to_owned();
        temporary.push(".new");
        fs::write(
            &temporary,
            format!("{} {}\n", passes.started, passes.finished),
        )?;
        fs::rename(&temporary, &self.passes)
    }
}

/// What [`wait_for_running`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// A pass that began after the caller's mark finished: it synced what
    /// the caller saw.
    Synced,
    /// The lock is free and no pass after the mark finished (the holder
    /// failed, or let go without seeing the mark): sync again.
    SyncAgain,
    /// Still running at `deadline`.
    TimedOut,
}

/// For a caller whose [`exclusive`] handed its request to a running sync
/// and that has to read the index afterwards: waits, until `deadline` at
/// most, for a pass that began after the request to finish.
pub fn wait_for_running(
    locks_dir: &Path,
    root: &Path,
    ticket: Ticket,
    deadline: std::time::Instant,
) -> Result<Waited, LockError> {
    const POLL: std::time::Duration = std::time::Duration::from_millis(5);
    let files = LockFiles::of(locks_dir, root);
    let io = |source| LockError::Io {
        path: files.lock.clone(),
        source,
    };
    let file = open_lock(&files.lock)?;
    loop {
        if files.passes().finished > ticket.0 {
            return Ok(Waited::Synced);
        }
        match file.try_lock_shared() {
            Ok(()) => {
                file.unlock().map_err(io)?;
                return Ok(if files.passes().finished > ticket.0 {
                    Waited::Synced
                } else {
                    Waited::SyncAgain
                });
            }
            Err(fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(POLL);
            }
            Err(fs::TryLockError::WouldBlock) => return Ok(Waited::TimedOut),
            Err(fs::TryLockError::Error(err)) => return Err(io(err)),
        }
    }
}

/// Whether a sync of the workspace at `root` holds its lock now (another
/// process's, or another thread's of this one). Takes the lock shared for
/// an instant when none does, as [`wait_for_running`] does.
pub fn sync_running(locks_dir: &Path, root: &Path) -> bool {
    let files = LockFiles::of(locks_dir, root);
    let Ok(file) = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&files.lock)
    else {
        return false;
    };
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(fs::TryLockError::WouldBlock) => true,
        Err(fs::TryLockError::Error(_)) => false,
    }
}

/// The lock of a workspace's catch-up (`sync-….catch-up` in `locks_dir`):
/// the background sync a prompt leaves a lagging index to, one at a time.
/// `None` when another process holds it (a catch-up runs); else the open
/// file, locked. The lock belongs to the open file, so a child process
/// given it (as its stdin) holds it until it exits, whoever started it.
pub fn catch_up(locks_dir: &Path, root: &Path) -> Result<Option<File>, LockError> {
    let path = LockFiles::of(locks_dir, root).catch_up;
    let io = |source| LockError::Io {
        path: path.clone(),
        source,
    };
    fs::create_dir_all(locks_dir).map_err(|source| LockError::Io {
        path: locks_dir.to_owned(),
        source,
    })?;
    let file = open_lock(&path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(fs::TryLockError::WouldBlock) => Ok(None),
        Err(fs::TryLockError::Error(err)) => Err(io(err)),
    }
}

/// Whether another process embeds for the home now (holds the embedding
/// lock). Takes the lock for an instant when nobody does.
pub fn embedding_running(locks_dir: &Path) -> bool {
    matches!(
        embedding(locks_dir, false, || Ok::<(), LockError>(())),
        Ok(None)
    )
}

/// How far the running embedder is: written by it after each batch
/// (`locks/embed.progress`), read by `status` while it holds the lock.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EmbedProgress {
    /// When the pass started (Unix seconds).
    pub started: f64,
    /// Texts queued when it started.
    pub total: u64,
    /// Texts embedded since.
    pub done: u64,
    /// When `done` was written (Unix seconds).
    pub updated: f64,
}

impl EmbedProgress {
    fn path(locks_dir: &Path) -> PathBuf {
        locks_dir.join("embed.progress")
    }

    /// Texts per second so far (`None` before the first batch).
    pub fn rate(&self) -> Option<f64> {
        let seconds = self.updated - self.started;
        (self.done > 0 && seconds > 0.0).then(|| self.done as f64 / seconds)
    }

    /// Seconds left at the rate so far.
    pub fn seconds_left(&self) -> Option<f64> {
        self.rate()
            .map(|rate| self.total.saturating_sub(self.done) as f64 / rate)
    }

    /// Writes the record (replacing the last one whole; a failure only
    /// costs `status` its estimate).
    pub fn write(&self, locks_dir: &Path) {
        let path = Self::path(locks_dir);
        let temp = path.with_extension("tmp");
        let text = serde_json::to_string(self).expect("progress serializes");
        if fs::write(&temp, text).is_ok() {
            let _ = fs::rename(&temp, &path);
        }
    }

    /// The running embedder's record; `None` when no embedder runs or it
    /// wrote none.
    pub fn read(locks_dir: &Path) -> Option<EmbedProgress> {
        if !embedding_running(locks_dir) {
            return None;
        }
        let text = fs::read_to_string(Self::path(locks_dir)).ok()?;
        serde_json::from_str(&text).ok()
    }
}

/// Seconds since the Unix epoch, for [`EmbedProgress`].
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};

    use super::*;

    #[test]
    fn one_embedder_at_a_time_and_a_few_texts_do_not_wait() {
        let dir = tempfile::tempdir().unwrap();
        let locks = dir.path().to_owned();
        let held = Arc::new(Barrier::new(2));
        let release = Arc::new(Barrier::new(2));
        let holder = {
            let (locks, held, release) = (locks.clone(), held.clone(), release.clone());
            std::thread::spawn(move || {
                embedding(&locks, true, || {
                    held.wait();
                    release.wait();
                    Ok::<_, LockError>(1)
                })
                .unwrap()
            })
        };
        held.wait();
        let skipped = embedding(&locks, false, || Ok::<_, LockError>(2)).unwrap();
        assert_eq!(
            skipped, None,
            "a caller wanting a few leaves it to the holder"
        );
        // The workspace's sync lock is not held meanwhile: readers go on.
        let synced = exclusive(&locks, Path::new("/repo"), || Ok::<_, LockError>(3)).unwrap();
        assert_eq!(synced, Exclusive::Ran(3));
        release.wait();
        assert_eq!(holder.join().unwrap(), Some(1));
        let waited = embedding(&locks, true, || Ok::<_, LockError>(4)).unwrap();
        assert_eq!(waited, Some(4));
    }

    #[test]
    fn a_sync_asked_for_while_another_runs_is_run_by_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let locks = dir.path().to_owned();
        let runs = Arc::new(AtomicUsize::new(0));
        let started = Arc::new(Barrier::new(2));
        let asked = Arc::new(Barrier::new(2));
        let holder = {
            let (locks, runs, started, asked) =
                (locks.clone(), runs.clone(), started.clone(), asked.clone());
            std::thread::spawn(move || {
                exclusive(
                    &locks,
                    Path::new("/repo"),
                    || -> Result<usize, LockError> {
                        let run = runs.fetch_add(1, Ordering::SeqCst);
                        if run == 0 {
                            started.wait(); // the other caller may try now
                            asked.wait(); // ... and has given up
                        }
                        Ok(run)
                    },
                )
                .unwrap()
            })
        };
        started.wait();
        let skipped = exclusive(
            &locks,
            Path::new("/repo"),
            || -> Result<usize, LockError> { panic!("must not run while the lock is held") },
        )
        .unwrap();
        asked.wait();
        assert!(matches!(skipped, Exclusive::Handed(_)), "{skipped:?}");
        assert_eq!(
            holder.join().unwrap(),
            Exclusive::Ran(1),
            "the holder ran again for the skipped request"
        );
        assert_eq!(runs.load(Ordering::SeqCst), 2);
        // Another workspace has its own lock.
        let other = exclusive(&locks, Path::new("/other"), || -> Result<u8, LockError> {
            Ok(7)
        })
        .unwrap();
        assert_eq!(other, Exclusive::Ran(7));
    }

    /// Regression: a reader waited for the lock to fall free, and a holder
    /// kept busy by a stream of writers' requests held it past the reader's
    /// deadline ("another sync ... is still running"), although its first
    /// pass after the reader's request had long covered it.
    #[test]
    fn a_reader_waits_for_the_pass_after_its_request_not_for_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let locks = dir.path().to_owned();
        let pending = LockFiles::of(&locks, Path::new("/repo")).pending;
        let started = Arc::new(Barrier::new(2));
        let asked = Arc::new(Barrier::new(2));
        let read = Arc::new(Barrier::new(2));
        let holder = {
            let (started, asked, read) = (started.clone(), asked.clone(), read.clone());
            let (locks, pending) = (locks.clone(), pending.clone());
            std::thread::spawn(move || {
                let mut runs = 0;
                exclusive(&locks, Path::new("/repo"), || -> Result<u8, LockError> {
                    runs += 1;
                    match runs {
                        1 => {
                            started.wait();
                            asked.wait();
                        }
                        // The reader's pass; a writer asks for another.
                        2 => fs::write(&pending, b"").unwrap(),
                        // Still holding the lock until the reader has read.
                        _ => {
                            read.wait();
                        }
                    }
                    Ok(runs)
                })
                .unwrap()
            })
        };
        started.wait();
        let handed = exclusive(&locks, Path::new("/repo"), || -> Result<u8, LockError> {
            panic!("must not run while the lock is held")
        })
        .unwrap();
        asked.wait();
        let Exclusive::Handed(ticket) = handed else {
            panic!("{handed:?}")
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let waited = wait_for_running(&locks, Path::new("/repo"), ticket, deadline).unwrap();
        assert_eq!(waited, Waited::Synced);
        read.wait();
        assert_eq!(holder.join().unwrap(), Exclusive::Ran(3));
        // The lock is free and every request served: nothing to wait for.
        let free = wait_for_running(&locks, Path::new("/repo"), ticket, deadline).unwrap();
        assert_eq!(free, Waited::Synced);
    }

    #[test]
    fn a_reader_whose_holder_failed_syncs_again() {
        let dir = tempfile::tempdir().unwrap();
        let locks = dir.path().to_owned();
        let files = LockFiles::of(&locks, Path::new("/repo"));
        // A holder numbered a pass and died in it.
        files
            .write_passes(Passes {
                started: 4,
                finished: 3,
            })
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let waited = wait_for_running(&locks, Path::new("/repo"), Ticket(3), deadline).unwrap();
        assert_eq!(waited, Waited::SyncAgain);
        // The next holder numbers on from the highest.
        exclusive(&locks, Path::new("/repo"), || Ok::<_, LockError>(())).unwrap();
        assert_eq!(
            files.passes(),
            Passes {
                started: 5,
                finished: 5
            }
        );
    }
}
