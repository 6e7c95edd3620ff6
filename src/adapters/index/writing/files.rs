//! The workspace's row, the files the index knows, and the memory
//! folder's last check (`FolderScan`).

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{OptionalExtension, Transaction, params};

use crate::domain::sync_plan::{RecordedFile, Stat};

/// A memory folder of at least this many files is checked file by file
/// only when its own stat changed, HEAD moved, or [`FOLDER_TRUSTED_NS`]
/// passed since the last such check; a smaller one always is (its check
/// costs a few milliseconds).
pub const FOLDER_CHECK_FILES: usize = 1_000;

/// How long after a check of every file a large folder's unchanged stat
/// stands for its files: an edit in place by another program (an editor
/// writing into a memory file) changes the file, not the folder, and is
/// seen by the first sync after this (or by `goldfish sync` at once).
/// goldfish's own appends mark the folder changed (`memdir`).
pub const FOLDER_TRUSTED_NS: i64 = 60 * 1_000_000_000;

/// A folder stat this close to the moment the files were checked is not
/// trusted: a change within the file system's timestamp granularity could
/// leave it as it was.
pub const FOLDER_RACY_NS: i64 = 1_000_000_000;

/// What the last check of every file of a large memory folder saw
/// (`workspaces.folder_scan`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderScan {
    /// The folder's stat (mtime, ctime, inode) before its files were
    /// listed.
    pub folder: (i64, i64, i64),
    /// When the check began.
    pub at_ns: i64,
    /// HEAD then.
    pub head: Option<String>,
    /// Memory files found.
    pub files: usize,
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

    /// Whether this check still stands for the folder at `now_ns`, HEAD
    /// being `head` and its stat `folder`.
    pub fn stands(&self, folder: Option<(i64, i64, i64)>, head: Option<&str>, now_ns: i64) -> bool {
        self.files >= FOLDER_CHECK_FILES
            && folder == Some(self.folder)
            && head == self.head.as_deref()
            && (0..FOLDER_TRUSTED_NS).contains(&(now_ns - self.at_ns))
    }

    /// What a check of every file that began at `at_ns`, the folder's stat
    /// then `folder`, leaves for the next syncs: `None` for a small folder,
    /// or one changed too close to the check to be trusted.
    pub fn after_check(
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

/// What the index remembers of a workspace at the start of a sync.
pub struct Registered {
    pub id: i64,
    pub name: String,
    pub head_commit: Option<String>,
    pub history_commit: Option<String>,
    pub live_memories: u64,
    /// Registered by this sync.
    pub new: bool,
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
