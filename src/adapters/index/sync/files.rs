//! The files a sync looks at: the memory folder's check (`FolderScan`),
//! the work tree's files and their stat data, the workspace's row, the
//! files the index knows, and a work-tree file read as a stream.

use super::*;

/// What the last check of every file of a large memory folder saw
/// (`workspaces.folder_scan`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FolderScan {
    /// The folder's stat (mtime, ctime, inode) before its files were
    /// listed.
    pub(super) folder: (i64, i64, i64),
    /// When the check began.
    pub(super) at_ns: i64,
    /// HEAD then.
    pub(super) head: Option<String>,
    /// Memory files found.
    pub(super) files: usize,
}

impl FolderScan {
    pub(super) fn read(
        tx: &Transaction<'_>,
        workspace_id: i64,
    ) -> rusqlite::Result<Option<FolderScan>> {
        let json: Option<String> = tx.query_row(
            "SELECT folder_scan FROM workspaces WHERE id = ?1",
            params![workspace_id],
            |row| row.get(0),
        )?;
        Ok(json.and_then(|json| {
            let value: serde_json::Value = serde_json::from_str(&json).ok()?;
            let folder = value.get("folder")?.as_array()?;
            let number = |index: usize| folder.get(index)?.as_i64();
            Some(FolderScan {
                folder: (number(0)?, number(1)?, number(2)?),
                at_ns: value.get("at_ns")?.as_i64()?,
                head: value.get("head")?.as_str().map(str::to_owned),
                files: usize::try_from(value.get("files")?.as_u64()?).ok()?,
            })
        }))
    }

    /// Stores it (`None`: forgets it, so the next sync checks every file).
    pub(super) fn store(
        tx: &Transaction<'_>,
        workspace_id: i64,
        scan: Option<&FolderScan>,
    ) -> rusqlite::Result<()> {
        let json = scan.map(|scan| {
            serde_json::json!({
                "folder": [scan.folder.0, scan.folder.1, scan.folder.2],
                "at_ns": scan.at_ns,
                "head": scan.head,
                "files": scan.files,
            })
            .to_string()
        });
        tx.execute(
            "UPDATE workspaces SET folder_scan = ?2 WHERE id = ?1",
            params![workspace_id, json],
        )?;
        Ok(())
    }

    /// The folder's stat now; `None` when it cannot be read (no folder).
    pub(super) fn folder_stat(dir: &Path) -> Option<(i64, i64, i64)> {
        let stat = stat_of(&fs::symlink_metadata(dir).ok()?);
        Some((stat.mtime_ns, stat.ctime_ns, stat.inode))
    }

    /// Whether this check still stands for the folder at `now_ns`, HEAD
    /// being `head` and its stat `folder`.
    pub(super) fn stands(
        &self,
        folder: Option<(i64, i64, i64)>,
        head: Option<&str>,
        now_ns: i64,
    ) -> bool {
        self.files >= FOLDER_CHECK_FILES
            && folder == Some(self.folder)
            && head == self.head.as_deref()
            && (0..FOLDER_TRUSTED_NS).contains(&(now_ns - self.at_ns))
    }

    /// What a check of every file that began at `at_ns`, the folder's stat
    /// then `folder`, leaves for the next syncs: `None` for a small folder,
    /// or one changed too close to the check to be trusted.
    pub(super) fn after_check(
        folder: Option<(i64, i64, i64)>,
        at_ns: i64,
        head: Option<String>,
        files: usize,
    ) -> Option<FolderScan> {
        let folder = folder?;
        let settled = folder.0 < at_ns - FOLDER_RACY_NS && folder.1 < at_ns - FOLDER_RACY_NS;
        (files >= FOLDER_CHECK_FILES && settled).then_some(FolderScan {
            folder,
            at_ns,
            head,
            files,
        })
    }
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

/// What the index remembers of a workspace at the start of a sync.
pub(super) struct Registered {
    pub(super) id: i64,
    pub(super) name: String,
    pub(super) head_commit: Option<String>,
    pub(super) history_commit: Option<String>,
    pub(super) live_memories: u64,
    /// Registered by this sync.
    pub(super) new: bool,
}

/// Finds or creates the workspace row.
pub(super) fn register(tx: &Transaction<'_>, root: &Path) -> rusqlite::Result<Registered> {
    let root_text = root.to_string_lossy();
    let existing = tx
        .query_row(
            "SELECT id, name, head_commit, history_commit, live_memories FROM workspaces WHERE root = ?1",
            params![root_text],
            |row| {
                Ok(Registered {
                    id: row.get(0)?,
                    name: row.get(1)?,
                    head_commit: row.get(2)?,
                    history_commit: row.get(3)?,
                    live_memories: row.get::<_, i64>(4)? as u64,
                    new: false,
                })
            },
        )
        .optional()?;
    if let Some(existing) = existing {
        return Ok(existing);
    }
    // The folder name, made unique among workspaces.
    let base = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "workspace".to_owned());
    let mut name = base.clone();
    let mut n = 1;
    while tx
        .query_row(
            "SELECT 1 FROM workspaces WHERE name = ?1",
            params![name],
            |_| Ok(()),
        )
        .optional()?
        .is_some()
    {
        n += 1;
        name = format!("{base}-{n}");
    }
    tx.execute(
        "INSERT INTO workspaces (root, name) VALUES (?1, ?2)",
        params![root_text, name],
    )?;
    Ok(Registered {
        id: tx.last_insert_rowid(),
        name,
        head_commit: None,
        history_commit: None,
        live_memories: 0,
        new: true,
    })
}

/// The files the index recorded for a workspace. `racy` is read only by a
/// sync: doctor also reads indexes of older schemas, which lack it.
pub(super) fn known_files(
    tx: &Transaction<'_>,
    workspace_id: i64,
    with_racy: bool,
) -> rusqlite::Result<HashMap<String, RecordedFile>> {
    let mut statement = tx.prepare(if with_racy {
        "SELECT name, blob_id, size, mtime_ns, ctime_ns, inode, racy FROM files WHERE workspace_id = ?1"
    } else {
        "SELECT name, blob_id, size, mtime_ns, ctime_ns, inode, 0 FROM files WHERE workspace_id = ?1"
    })?;
    let rows = statement.query_map(params![workspace_id], |row| {
        let size: i64 = row.get(2)?;
        let stat = (size >= 0).then_some(Stat {
            size,
            mtime_ns: row.get(3)?,
            ctime_ns: row.get(4)?,
            inode: row.get(5)?,
        });
        Ok((
            row.get::<_, String>(0)?,
            RecordedFile {
                blob: row.get(1)?,
                stat,
                racy: row.get(6)?,
            },
        ))
    })?;
    rows.collect()
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
