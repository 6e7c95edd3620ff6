//! The personal index: `$GOLDFISH_HOME/index.db` (SQLite) and its keyword
//! index beside it (`index.text/`, tantivy: [`keyword`]). It is derived
//! state: delete it and `goldfish sync` rebuilds it from git.
//!
//! WAL mode lets readers run while one writer writes; writers wait for each
//! other up to [`BUSY_TIMEOUT`].

mod branches;
mod cites;
pub mod keyword;
pub mod locks;
mod schema;
pub mod search;
mod staleness;
pub mod vectors;
mod verdicts;
pub mod writing;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

/// The provenance `p` of memory row `m`: that of its line (its id and the
/// hash of its text), or one recorded by id alone before schema 15 (empty
/// `record_hash`), until the next walk of the history replaces it.
pub(crate) const LINE_PROVENANCE: &str = "p.workspace_id = m.workspace_id AND p.id = m.id
    AND (p.record_hash = m.record_hash OR p.record_hash = '')";

/// How long a writer waits for another before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("could not create {}", .path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("index {}: {source}", .path.display())]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error(transparent)]
    Keyword(#[from] keyword::TextError),
    #[error("index {} has schema version {found}, newer than this goldfish understands ({supported}); upgrade goldfish or delete the index (it is rebuilt from git)", .path.display())]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
}

/// An open index.
pub struct Index {
    conn: Connection,
    path: PathBuf,
    /// Bit codes of the vectors, loaded on the first vector search.
    codes: vectors::Codes,
    /// A second, read-only connection: a hybrid recall runs its keyword
    /// stage on it, beside the vector stage (`None` until the first one,
    /// and while a recall has it).
    side: std::sync::Mutex<Option<Box<Index>>>,
    /// Whether a hybrid recall runs its two stages at once (more than one
    /// core).
    parallel: bool,
    /// The keyword index (`text`), opened on the first keyword ranking
    /// that finds it written, or a copy of it in memory.
    text: std::sync::Mutex<Option<keyword::TextIndex>>,
    /// A catch-up of the keyword index failed on this connection: keyword
    /// ranking does not try again, a copy in memory answers.
    keyword_catch_up_failed: std::sync::atomic::AtomicBool,
}

/// What [`Index::inspect`] found.
pub enum Inspection {
    /// No index yet (or an empty file): nothing was synced.
    Missing,
    /// Not a database, or `PRAGMA quick_check` failed: what SQLite said.
    Corrupt(String),
    /// Written by a newer goldfish.
    TooNew { found: i64, supported: i64 },
    /// Intact; open read-only.
    Intact(Box<Index>),
}

/// A workspace the index knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceRow {
    pub id: i64,
    pub root: String,
    pub name: String,
    pub head_commit: Option<String>,
    pub synced_at: Option<String>,
}

impl Index {
    /// Opens (creating if needed) the index at `path`. An index that is not a
    /// database or is corrupt is moved aside to `index.db.corrupt` and a new
    /// one is created: it is only a cache of git.
    pub fn open(path: &Path) -> Result<Index, IndexError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| IndexError::CreateDir {
                path: dir.to_owned(),
                source,
            })?;
        }
        match Index::open_unchecked(path) {
            Err(IndexError::Sqlite { source, .. }) if is_corruption(&source) => {
                let aside = path.with_extension("db.corrupt");
                let _ = std::fs::rename(path, &aside);
                for suffix in ["-wal", "-shm"] {
                    let mut side = path.as_os_str().to_owned();
                    side.push(suffix);
                    let _ = std::fs::remove_file(side);
                }
                Index::open_unchecked(path)
            }
            other => other,
        }
    }

    fn with(conn: Connection, path: &Path) -> Index {
        static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let cores =
            *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        Index {
            conn,
            path: path.to_owned(),
            codes: Default::default(),
            side: Default::default(),
            parallel: cores > 1,
            text: Default::default(),
            keyword_catch_up_failed: Default::default(),
        }
    }

    /// The second connection, opened on first use: read-only, no
    /// migration (this one did it).
    fn take_side(&self) -> Result<Box<Index>, IndexError> {
        let kept = self.side.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(side) = kept {
            return Ok(side);
        }
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(self.sqlite())?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(self.sqlite())?;
        let mut side = Index::with(conn, &self.path);
        side.parallel = false;
        Ok(Box::new(side))
    }

    fn put_side(&self, side: Box<Index>) {
        *self.side.lock().unwrap_or_else(|p| p.into_inner()) = Some(side);
    }

    /// Runs hybrid recalls' two stages one after the other (`false`) or
    /// at once (`true`, the default with more than one core).
    pub fn set_parallel(&mut self, parallel: bool) {
        self.parallel = parallel;
    }

    fn open_unchecked(path: &Path) -> Result<Index, IndexError> {
        let sqlite = |source| IndexError::Sqlite {
            path: path.to_owned(),
            source,
        };
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sqlite)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sqlite)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(sqlite)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(sqlite)?;
        let mut index = Index::with(conn, path);
        schema::migrate(&mut index.conn).map_err(|err| match err {
            schema::MigrateError::Sqlite(source) => sqlite(source),
            schema::MigrateError::TooNew { found, supported } => IndexError::TooNew {
                path: path.to_owned(),
                found,
                supported,
            },
        })?;
        Ok(index)
    }

    /// Looks at the index at `path` without changing anything: nothing is
    /// created, migrated, repaired or moved aside. A readable, intact index of
    /// this schema version comes back open for reading only.
    ///
    /// With no `-wal` and `-shm` beside it (no process has it open), the file
    /// is read as immutable, so SQLite creates no side files either; a
    /// corruption seen that way while the file changed is checked again
    /// through a plain read-only connection (a writer started meanwhile).
    pub fn inspect(path: &Path) -> Result<Inspection, IndexError> {
        if !path.exists() {
            return Ok(Inspection::Missing);
        }
        // Whether a process has the file open, and its size and mtime.
        let state = || {
            let in_use = ["-wal", "-shm"].iter().any(|suffix| {
                let mut side = path.as_os_str().to_owned();
                side.push(suffix);
                Path::new(&side).exists()
            });
            let stat = std::fs::metadata(path)
                .ok()
                .map(|m| (m.len(), m.modified().ok()));
            (in_use, stat)
        };
        let before = state();
        let immutable = !before.0;
        let mut conn = open_read_only(path, immutable)?;
        let mut found = quick_check(&conn, path)?;
        if immutable && found.is_err() && state() != before {
            conn = open_read_only(path, false)?;
            found = quick_check(&conn, path)?;
        }
        Ok(match found {
            Err(why) => Inspection::Corrupt(why),
            Ok(0) => Inspection::Missing,
            Ok(found) if found > schema::VERSION => Inspection::TooNew {
                found,
                supported: schema::VERSION,
            },
            Ok(_) => Inspection::Intact(Box::new(Index::with(conn, path))),
        })
    }

    /// The schema version of the file (`PRAGMA user_version`): below
    /// `schema::VERSION` only for an index [`Index::inspect`] opened, which
    /// does not migrate.
    pub fn schema_version(&self) -> Result<i64, IndexError> {
        self.conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(self.sqlite())
    }

    /// Where the keyword index beside this index stands (`goldfish doctor`).
    pub fn keyword_index(&self) -> Result<keyword::Standing, keyword::TextError> {
        keyword::standing(&self.conn, &self.path)
    }

    /// The schema version this goldfish writes.
    pub fn current_schema_version() -> i64 {
        schema::VERSION
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sqlite(&self) -> impl Fn(rusqlite::Error) -> IndexError + '_ {
        sqlite_at(&self.path)
    }

    /// Every workspace the index knows, by name.
    pub fn workspaces(&self) -> Result<Vec<WorkspaceRow>, IndexError> {
        let mut statement = self
            .conn
            .prepare("SELECT id, root, name, head_commit, synced_at FROM workspaces ORDER BY name")
            .map_err(self.sqlite())?;
        let rows = statement
            .query_map([], workspace_row)
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(self.sqlite())?;
        Ok(rows)
    }

    /// The workspace whose work tree is `root`, if synced before.
    pub fn workspace_by_root(&self, root: &Path) -> Result<Option<WorkspaceRow>, IndexError> {
        self.conn
            .query_row(
                "SELECT id, root, name, head_commit, synced_at FROM workspaces WHERE root = ?1",
                params![root.to_string_lossy()],
                workspace_row,
            )
            .optional()
            .map_err(self.sqlite())
    }

    /// Live (not forgotten) memories of a workspace in the index.
    pub fn live_count(&self, workspace_id: i64) -> Result<u64, IndexError> {
        writing::live_count(&self.conn, workspace_id).map_err(self.sqlite())
    }

    /// Drops every workspace and what was synced from it. Embeddings stay:
    /// they are keyed by content hash and model, not by repository state.
    pub fn clear(&mut self) -> Result<(), IndexError> {
        let sqlite = sqlite_at(&self.path);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        tx.execute("DELETE FROM workspaces", []).map_err(sqlite)?;
        tx.commit().map_err(sqlite)
    }

    /// A cached LLM digest: (text, tokens).
    pub fn cached_digest(&self, key: &str) -> Result<Option<(String, usize)>, IndexError> {
        self.conn
            .query_row(
                "SELECT digest, tokens FROM digest_cache WHERE key = ?1",
                params![key],
                |row| Ok((row.get(0)?, row.get::<_, i64>(1)? as usize)),
            )
            .optional()
            .map_err(self.sqlite())
    }

    pub fn cache_digest(&self, key: &str, digest: &str, tokens: usize) -> Result<(), IndexError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO digest_cache (key, digest, tokens) VALUES (?1, ?2, ?3)",
                params![key, digest, tokens as i64],
            )
            .map(|_| ())
            .map_err(self.sqlite())
    }
}

/// Maps SQLite errors to [`IndexError::Sqlite`] naming the index at `path`.
fn sqlite_at(path: &Path) -> impl Fn(rusqlite::Error) -> IndexError + Copy + '_ {
    move |source| IndexError::Sqlite {
        path: path.to_owned(),
        source,
    }
}

/// A read-only connection to `path`; `immutable` also skips locking and the
/// WAL (for a file no process has open).
fn open_read_only(path: &Path, immutable: bool) -> Result<Connection, IndexError> {
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    uri.push_str(if immutable {
        "?mode=ro&immutable=1"
    } else {
        "?mode=ro"
    });
    let conn = Connection::open_with_flags(
        &uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sqlite_at(path))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite_at(path))?;
    Ok(conn)
}

/// The schema version of an intact index, or what is wrong with it: not a
/// database, or what `PRAGMA quick_check` reports.
fn quick_check(conn: &Connection, path: &Path) -> Result<Result<i64, String>, IndexError> {
    let corrupt = |err: rusqlite::Error| match is_corruption(&err) {
        true => Ok(Err(err.to_string())),
        false => Err(sqlite_at(path)(err)),
    };
    let version: i64 = match conn.pragma_query_value(None, "user_version", |row| row.get(0)) {
        Ok(version) => version,
        Err(err) => return corrupt(err),
    };
    let messages = conn
        .prepare("PRAGMA quick_check")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| row.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()
        });
    match messages {
        Ok(messages) if messages == ["ok"] => Ok(Ok(version)),
        Ok(messages) => Ok(Err(messages.join("; "))),
        Err(err) => corrupt(err),
    }
}

fn workspace_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<WorkspaceRow> {
    Ok(WorkspaceRow {
        id: row.get(0)?,
        root: row.get(1)?,
        name: row.get(2)?,
        head_commit: row.get(3)?,
        synced_at: row.get(4)?,
    })
}

fn is_corruption(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
    )
}

/// For tests: a new index in a temporary directory that knows two
/// workspaces, 1 (`/a`) and 2 (`/b`).
#[cfg(test)]
pub(crate) fn two_workspaces() -> (tempfile::TempDir, Index) {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::open(&dir.path().join("index.db")).unwrap();
    index
        .conn
        .execute_batch(
            "INSERT INTO workspaces (id, root, name) VALUES (1, '/a', 'a'), (2, '/b', 'b');",
        )
        .unwrap();
    (dir, index)
}
