//! The files a sync looks at: the memory folder's stat, the work tree's
//! files and their stat data, and a work-tree file read as a stream.

use super::*;

/// The folder's stat now (mtime, ctime, inode); `None` when it cannot be
/// read (no folder).
pub(super) fn folder_stat(dir: &Path) -> Option<(i64, i64, i64)> {
    let stat = stat_of(&fs::symlink_metadata(dir).ok()?);
    Some((stat.mtime_ns, stat.ctime_ns, stat.inode))
}

/// The stat data of a work-tree file, as the index records it.
pub(super) fn stat_of(metadata: &fs::Metadata) -> Stat {
    Stat {
        size: metadata.size() as i64,
        mtime_ns: metadata.mtime() * 1_000_000_000 + metadata.mtime_nsec(),
        ctime_ns: metadata.ctime() * 1_000_000_000 + metadata.ctime_nsec(),
        inode: metadata.ino() as i64,
    }
}

pub(super) fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// The `*.jsonl` files of `workspace`'s memory folder on disk with their
/// metadata.
pub(super) fn worktree_files(
    workspace: &Workspace,
    problems: &mut Vec<SyncProblem>,
) -> Result<BTreeMap<String, fs::Metadata>, SyncError> {
    let mut files = BTreeMap::new();
    let folder = crate::adapters::memdir::MemoryDir::of(workspace);
    let dir = folder.path();
    // A memory folder (or `.goldfish`) that is a link is never followed,
    // nor one that is a submodule read.
    if let Err(err @ crate::adapters::memdir::LogError::Unsafe { .. }) = folder.check_folder() {
        problems.push(SyncProblem::Other(err.to_string()));
        return Ok(files);
    }
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(files),
        Err(source) => {
            return Err(SyncError::Io {
                path: dir.to_owned(),
                source,
            });
        }
    };
    for entry in entries {
        let entry = entry.map_err(|source| SyncError::Io {
            path: dir.to_owned(),
            source,
        })?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".jsonl") {
            continue;
        }
        // Links are not followed: a committed link could point anywhere.
        match fs::symlink_metadata(entry.path()) {
            Ok(metadata) if metadata.is_file() => {
                files.insert(name, metadata);
            }
            Ok(metadata) if metadata.file_type().is_symlink() => problems.push(SyncProblem::file(
                &name,
                crate::adapters::memdir::OpenError::Link.skipped(),
            )),
            Ok(metadata)
                if metadata.is_dir() && fs::symlink_metadata(entry.path().join(".git")).is_ok() =>
            {
                problems.push(SyncProblem::file(
                    &name,
                    "is a git submodule (another repository), not a memory file; skipped",
                ))
            }
            Ok(_) => problems.push(SyncProblem::file(&name, "is not a file; skipped")),
            Err(err) => problems.push(SyncProblem::file(&name, format!("{err}; skipped"))),
        }
    }
    Ok(files)
}

/// A work-tree memory file read as a stream: its git blob id and, with
/// `parse`, its lines as [`Content::parse`] reads them, except that a line
/// over [`goldfish_log::record::MAX_LINE_BYTES`] is never held (its bytes
/// are hashed and passed over; it stays a `TooLong` line). `None` when the
/// file's size changed while it was read.
pub(super) fn streamed(
    path: &Path,
    parse: bool,
) -> Result<Option<(String, Option<Content>)>, crate::adapters::memdir::OpenError> {
    use crate::adapters::memdir::{OpenError, open_regular};
    use crate::domain::memory::view::BYTE_ORDER_MARK;
    use std::io::Read;

    let mut file = open_regular(path, fs::OpenOptions::new().read(true))?;
    let size = file.metadata().map_err(OpenError::Io)?.len();
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(format!("blob {size}\0").as_bytes());
    let mut lines = StreamedLines::new();
    let mut first_bytes: Vec<u8> = Vec::new();
    let mut read = 0u64;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(OpenError::Io(err)),
        };
        let bytes = &chunk[..n];
        hasher.update(bytes);
        if first_bytes.len() < BYTE_ORDER_MARK.len() {
            first_bytes.extend(bytes.iter().take(BYTE_ORDER_MARK.len() - first_bytes.len()));
        }
        read += n as u64;
        if parse {
            lines.feed(bytes);
        }
    }
    if read != size {
        return Ok(None);
    }
    let lines = if parse { lines.finish() } else { Vec::new() };
    let blob = hasher
        .try_finalize()
        .map_err(|err| OpenError::Io(std::io::Error::other(err)))?
        .to_string();
    Ok(Some((
        blob,
        parse.then_some(Content {
            lines,
            byte_order_mark: first_bytes.starts_with(BYTE_ORDER_MARK),
        }),
    )))
}

/// The lines of a file read as a stream, as [`Content::parse`] reads them,
/// but that a line over [`goldfish_log::record::MAX_LINE_BYTES`] is never
/// held whole.
struct StreamedLines {
    lines: Vec<sync_plan::Line>,
    /// The line being read: its first bytes (all of it while it fits), its
    /// length, its trailing `\r`s, and whether it is blank so far.
    held: Vec<u8>,
    length: usize,
    carriage_returns: usize,
    blank: bool,
    number: i64,
}

impl StreamedLines {
    fn new() -> StreamedLines {
        StreamedLines {
            lines: Vec::new(),
            held: Vec::new(),
            length: 0,
            carriage_returns: 0,
            blank: true,
            number: 0,
        }
    }

    /// Reads the next bytes of the file.
    fn feed(&mut self, bytes: &[u8]) {
        use goldfish_log::record::MAX_LINE_BYTES;
        for &byte in bytes {
            if byte == b'\n' {
                self.end_line();
                continue;
            }
            self.length += 1;
            self.carriage_returns = if byte == b'\r' {
                self.carriage_returns + 1
            } else {
                0
            };
            self.blank &= byte.is_ascii_whitespace();
            if self.held.len() <= MAX_LINE_BYTES {
                self.held.push(byte);
            }
        }
    }

    /// Parses the line read (a blank one is counted, not kept) and starts
    /// the next.
    fn end_line(&mut self) {
        use goldfish_log::record::{MAX_LINE_BYTES, ParseError};
        self.number += 1;
        let kept = self.length - self.carriage_returns;
        if !self.blank {
            let parsed = if kept > MAX_LINE_BYTES {
                Err(ParseError::TooLong(kept))
            } else {
                Entry::parse(&self.held[..kept])
            };
            self.lines.push(sync_plan::Line {
                number: self.number,
                parsed,
            });
        }
        self.held.clear();
        (self.length, self.carriage_returns, self.blank) = (0, 0, true);
    }

    /// The lines, the last one too when the file does not end with a
    /// newline.
    fn finish(mut self) -> Vec<sync_plan::Line> {
        if self.length > 0 {
            self.end_line();
        }
        self.lines
    }
}
