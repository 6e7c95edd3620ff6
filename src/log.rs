//! The memory folder on disk: atomic appends and reading every log file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::memory::view::{LogView, Problem};
use crate::memory::{self, Entry};

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{} does not exist: run `goldfish init` in this repository first", .0.display())]
    NotInitialized(PathBuf),
    #[error("could not {action} {}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> LogError {
    let path = path.to_owned();
    move |source| LogError::Io {
        action,
        path,
        source,
    }
}

/// One `*.jsonl` file of the memory folder.
#[derive(Debug, Clone)]
pub struct LogFile {
    /// File name, e.g. `2026-11-21.jsonl`.
    pub name: String,
    /// Its bytes, or why they could not be read.
    pub content: Result<Vec<u8>, String>,
}

/// `.goldfish/memories/` of one work tree.
#[derive(Debug, Clone)]
pub struct MemoryDir {
    path: PathBuf,
}

impl MemoryDir {
    pub fn new(path: PathBuf) -> MemoryDir {
        MemoryDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `entry` to the file of its UTC day and returns that file.
    ///
    /// The line goes out in a single `write` under an exclusive lock on the
    /// file, so concurrent writers never interleave or tear lines; if the file
    /// does not end in a newline (a torn line from elsewhere), one is written
    /// first so the new record stays on a line of its own.
    pub fn append(&self, entry: &Entry) -> Result<PathBuf, LogError> {
        if !self.path.is_dir() {
            return Err(LogError::NotInitialized(self.path.clone()));
        }
        let timestamp: jiff::Timestamp = entry
            .timestamp()
            .parse()
            .expect("entries written by goldfish carry a valid timestamp");
        let file_path = self.path.join(memory::file_name_for(timestamp));
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&file_path)
            .map_err(io_error("open", &file_path))?;
        file.lock().map_err(io_error("lock", &file_path))?;
        let mut line = Vec::with_capacity(512);
        if !ends_with_newline(&mut file).map_err(io_error("read", &file_path))? {
            line.push(b'\n');
        }
        line.extend_from_slice(entry.to_line().as_bytes());
        line.push(b'\n');
        file.write_all(&line)
            .and_then(|()| file.sync_data())
            .map_err(io_error("append to", &file_path))?;
        // The lock is released when `file` is closed.
        Ok(file_path)
    }

    /// Reads every `*.jsonl` file of the folder into one view. Files that
    /// cannot be read are reported as problems, never fatal.
    pub fn read(&self) -> Result<LogView, LogError> {
        let files = self.read_files()?;
        let mut problems = Vec::new();
        let mut readable = Vec::new();
        for file in &files {
            match &file.content {
                Ok(bytes) => readable.push((file.name.as_str(), bytes.as_slice())),
                Err(reason) => problems.push(Problem {
                    file: file.name.clone(),
                    line: 0,
                    reason: reason.clone(),
                }),
            }
        }
        let mut view = LogView::build(readable);
        problems.append(&mut view.problems);
        view.problems = problems;
        Ok(view)
    }

    /// The log files (sorted by name) with their bytes, or why not readable.
    pub fn read_files(&self) -> Result<Vec<LogFile>, LogError> {
        let entries = match fs::read_dir(&self.path) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(io_error("list", &self.path)(err)),
        };
        let mut files = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io_error("list", &self.path))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".jsonl") {
                continue;
            }
            let path = entry.path();
            let content = if path.is_dir() {
                Err("is a directory, not a memory file; skipped".to_owned())
            } else {
                fs::read(&path).map_err(|err| format!("could not be read ({err}); skipped"))
            };
            files.push(LogFile { name, content });
        }
        files.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(files)
    }
}

fn ends_with_newline(file: &mut File) -> io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Memory;

    fn memory(id: &str) -> Entry {
        Entry::Memory(Memory {
            id: id.into(),
            timestamp: "2026-11-21T10:00:00.000Z".into(),
            kind: "insight".into(),
            content: "c".into(),
            ..Memory::default()
        })
    }

    #[test]
    fn append_repairs_a_missing_final_newline() {
        let dir = tempfile::tempdir().unwrap();
        let log = MemoryDir::new(dir.path().to_owned());
        let file = dir.path().join("2026-11-21.jsonl");
        fs::write(&file, b"{\"half").unwrap();
        log.append(&memory("01A")).unwrap();
        let text = fs::read_to_string(&file).unwrap();
        assert_eq!(text, format!("{{\"half\n{}\n", memory("01A").to_line()));
        let view = log.read().unwrap();
        assert_eq!(view.memories.len(), 1);
        assert_eq!(view.problems.len(), 1);
    }

    #[test]
    fn append_needs_an_initialized_folder() {
        let dir = tempfile::tempdir().unwrap();
        let log = MemoryDir::new(dir.path().join("missing"));
        assert!(matches!(
            log.append(&memory("01A")),
            Err(LogError::NotInitialized(_))
        ));
    }
}
