//! The per-workspace capture folder under `$GOLDFISH_HOME/capture/`: the
//! queue the hook appends to, the batch the worker is on, each session's
//! state and the status log. Nothing of it is ever in the repository.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::CaptureError;
use crate::adapters::PathError;

/// Bytes a queue may hold; events past it are dropped (and counted).
pub const MAX_QUEUE_BYTES: u64 = 16 << 20;

/// One workspace's capture folder.
#[derive(Debug, Clone)]
pub struct Queue {
    dir: PathBuf,
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> CaptureError {
    PathError::at(action, path)
}

impl Queue {
    /// The folder of the repository at `root` under `capture_root`
    /// (`$GOLDFISH_HOME/capture`): a hash of the path, and its name to
    /// help a person.
    pub fn for_root(capture_root: &Path, root: &Path) -> Queue {
        let hash = blake3::hash(root.as_os_str().as_encoded_bytes()).to_hex();
        let name: String = root
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("repo")
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .take(40)
            .collect();
        Queue {
            dir: capture_root.join(format!("{}-{name}", &hash[..16])),
        }
    }

    pub fn at(dir: PathBuf) -> Queue {
        Queue { dir }
    }

    /// Every workspace's queue under `capture_root`.
    pub fn all(capture_root: &Path) -> Vec<Queue> {
        let Ok(entries) = std::fs::read_dir(capture_root) else {
            return Vec::new();
        };
        let mut queues: Vec<Queue> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| Queue::at(e.path()))
            .collect();
        queues.sort_by(|a, b| a.dir.cmp(&b.dir));
        queues
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn queue_path(&self) -> PathBuf {
        self.dir.join("queue.jsonl")
    }

    fn batch_path(&self) -> PathBuf {
        self.dir.join("batch.jsonl")
    }

    fn root_path(&self) -> PathBuf {
        self.dir.join("root")
    }

    pub fn status_path(&self) -> PathBuf {
        self.dir.join("status.jsonl")
    }

    fn session_path(&self, session: &str) -> PathBuf {
        self.dir
            .join("sessions")
            .join(format!("{}.json", file_safe(session)))
    }

    /// Appends one line to the queue (owner-only file, under a lock, one
    /// write) and records the repository's root. Returns false when the
    /// queue is full and the line was dropped.
    pub fn push(&self, root: &Path, line: &str) -> Result<bool, CaptureError> {
        self.record_root(root)?;
        let path = self.queue_path();
        // The worker renames the queue under its lock: a file that is no
        // longer the queue once locked is opened again.
        let mut file = loop {
            let file = open_private(&path, true)?;
            file.lock().map_err(io_error("lock", &path))?;
            let opened = file.metadata().map_err(io_error("inspect", &path))?;
            match std::fs::symlink_metadata(&path) {
                Ok(now) if now.ino() == opened.ino() && now.dev() == opened.dev() => break file,
                _ => continue,
            }
        };
        let size = file.metadata().map_err(io_error("inspect", &path))?.len();
        if size + line.len() as u64 > MAX_QUEUE_BYTES {
            return Ok(false);
        }
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        file.write_all(&bytes)
            .map_err(io_error("append to", &path))?;
        Ok(true)
    }

    /// Creates the folder and records the repository's root in it.
    pub fn record_root(&self, root: &Path) -> Result<(), CaptureError> {
        create_private_dir(&self.dir)?;
        let root_path = self.root_path();
        if !root_path.exists() {
            write_private(&root_path, root.as_os_str().as_encoded_bytes())?;
        }
        Ok(())
    }

    /// The repository this queue belongs to.
    pub fn root(&self) -> Option<PathBuf> {
        let bytes = std::fs::read(self.root_path()).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        Some(PathBuf::from(text))
    }

    /// Events waiting, counted by lines (the batch being worked on too).
    pub fn pending(&self) -> usize {
        [self.queue_path(), self.batch_path()]
            .iter()
            .filter_map(|p| std::fs::read(p).ok())
            .map(|bytes| bytes.iter().filter(|b| **b == b'\n').count())
            .sum()
    }

    /// Takes the queued lines for the worker: the queue becomes the batch
    /// (a batch left by a worker that died is taken first, whole).
    pub fn take(&self) -> Result<Option<String>, CaptureError> {
        let batch = self.batch_path();
        if !batch.exists() {
            let queue = self.queue_path();
            let Ok(file) = File::open(&queue) else {
                return Ok(None);
            };
            file.lock().map_err(io_error("lock", &queue))?;
            std::fs::rename(&queue, &batch).map_err(io_error("move", &queue))?;
        }
        let mut text = String::new();
        File::open(&batch)
            .and_then(|mut f| f.read_to_string(&mut text))
            .map_err(io_error("read", &batch))?;
        Ok(Some(text))
    }

    /// The batch is done.
    pub fn finish(&self) -> Result<(), CaptureError> {
        let batch = self.batch_path();
        std::fs::remove_file(&batch).map_err(io_error("remove", &batch))
    }

    pub fn load_session<T: serde::de::DeserializeOwned + Default>(&self, session: &str) -> T {
        std::fs::read(self.session_path(session))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    pub fn save_session<T: serde::Serialize>(
        &self,
        session: &str,
        state: &T,
    ) -> Result<(), CaptureError> {
        let path = self.session_path(session);
        create_private_dir(path.parent().unwrap_or(&self.dir))?;
        let bytes = serde_json::to_vec(state)
            .map_err(|e| PathError::at::<CaptureError>("encode", &path)(io::Error::other(e)))?;
        let temp = path.with_extension("json.tmp");
        write_private(&temp, &bytes)?;
        std::fs::rename(&temp, &path).map_err(io_error("replace", &path))
    }

    /// Appends a line to the status log.
    pub fn log_status(&self, record: &serde_json::Value) -> Result<(), CaptureError> {
        let path = self.status_path();
        let mut file = open_private(&path, true)?;
        let mut line = record.to_string();
        line.push('\n');
        file.write_all(line.as_bytes())
            .map_err(io_error("append to", &path))
    }

    /// The status log's records.
    pub fn statuses(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.status_path())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

/// A session id as a file name: safe characters kept, else a hash.
fn file_safe(session: &str) -> String {
    let safe = !session.is_empty()
        && session.len() <= 80
        && session
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if safe {
        session.to_owned()
    } else {
        blake3::hash(session.as_bytes()).to_hex()[..32].to_owned()
    }
}

fn create_private_dir(dir: &Path) -> Result<(), CaptureError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io_error("create", dir))
}

fn open_private(path: &Path, append: bool) -> Result<File, CaptureError> {
    OpenOptions::new()
        .create(true)
        .append(append)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(io_error("open", path))
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), CaptureError> {
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(io_error("open", path))?;
    file.write_all(bytes).map_err(io_error("write", path))
}
