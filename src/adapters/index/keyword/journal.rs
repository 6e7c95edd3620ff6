//! Catching the keyword index up with `text_journal`, and what doctor and
//! recall ask of its standing.

use super::*;

/// Whether the keyword index of the database `conn` has open (at `db`)
/// holds every row, from its last commit and the stamps of its files alone
/// (no reader, no writer, no checksum): a sync with nothing to write asks
/// this before it pays for a catch-up. A file whose stamp is not the one
/// the last catch-up recorded (written since, or never checked) asks for
/// one, which checks it.
pub fn holds_everything(conn: &Connection, db: &Path) -> Result<bool, TextError> {
    let dir = dir_of(db);
    let (schema, _) = schema();
    let Some(index) = existing(&dir, &schema).map_err(tantivy_at(&dir))? else {
        return Ok(false);
    };
    let metas = index.load_metas().map_err(tantivy_at(&dir))?;
    if !holds_all(conn, payload(&metas).as_ref()).map_err(sqlite_at(&dir))? {
        return Ok(false);
    }
    let recorded = recorded(conn).map_err(sqlite_at(&dir))?;
    Ok(stamps(&dir, &metas.segments).is_ok_and(|stamps| stamps == recorded))
}

/// Whether a commit that says `committed` holds every row of `conn`'s
/// database as it is now: it applied the journal's last entry, for this
/// database.
pub(super) fn holds_all(conn: &Connection, committed: Option<&Payload>) -> rusqlite::Result<bool> {
    let Some(committed) = committed else {
        return Ok(false);
    };
    Ok(db_id(conn)?.as_deref() == Some(committed.db.as_str())
        && journal_end(conn)? == committed.seq)
}

/// Where the keyword index stands against its database (`goldfish doctor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// It holds every row (`rows` in all): keyword recall ranks with it.
    Fresh { rows: u64 },
    /// Written for this database, `changes` changed rows ago: the next
    /// sync or recall applies them.
    Behind { changes: u64 },
    /// Never written for this database (none, or one left from a deleted
    /// database): the next sync or recall writes it.
    Unwritten,
    /// A file of it is missing, unreadable or does not match its checksum:
    /// the next sync or recall writes it again (a copy in memory answers
    /// until one can).
    Damaged(Damage),
}

/// A file of the keyword index that cannot be read as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    pub file: PathBuf,
    /// What is wrong with it.
    pub reason: String,
}

/// Where the keyword index of the database `conn` has open (at `db`)
/// stands, every file's checksum checked. Only reads: neither the index
/// nor the journal changes, and no reader is opened (which would read the
/// segments, and write a lock file).
pub fn standing(conn: &Connection, db: &Path) -> Result<Standing, TextError> {
    let dir = dir_of(db);
    let (schema, _) = schema();
    let tantivy = tantivy_at(&dir);
    let sqlite = sqlite_at(&dir);
    let Some(index) = existing(&dir, &schema).map_err(tantivy)? else {
        return Ok(Standing::Unwritten);
    };
    let metas = index.load_metas().map_err(tantivy)?;
    if let Err(damage) = intact(&index, &dir, &metas.segments, |_, _| false) {
        return Ok(Standing::Damaged(damage));
    }
    let committed = payload(&metas);
    if holds_all(conn, committed.as_ref()).map_err(sqlite)? {
        return Ok(Standing::Fresh {
            rows: metas
                .segments
                .iter()
                .map(|segment| u64::from(segment.num_docs()))
                .sum(),
        });
    }
    let id = db_id(conn).map_err(sqlite)?;
    let Some(seq) = committed
        .filter(|c| Some(&c.db) == id.as_ref())
        .map(|c| c.seq)
    else {
        return Ok(Standing::Unwritten);
    };
    let changes: i64 = conn
        .query_row(
            "SELECT count(DISTINCT row) FROM text_journal WHERE seq > ?1",
            [seq],
            |row| row.get(0),
        )
        .map_err(sqlite)?;
    Ok(Standing::Behind {
        changes: changes as u64,
    })
}

/// What [`catch_up`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaughtUp {
    /// Every row written again (a new index, or one of another database).
    Rebuilt { rows: usize },
    /// The journal's entries applied.
    Applied { rows: usize },
    /// Nothing to do.
    Fresh,
}

/// Brings the keyword index of the database `conn` has open (at `db`) up to
/// date with it: every row again if it was never written for this
/// database, else the journal's rows since its last commit. Prunes the
/// journal entries applied. Waits for another process's catch-up.
pub fn catch_up(conn: &Connection, db: &Path) -> Result<CaughtUp, TextError> {
    let dir = dir_of(db);
    let sqlite = sqlite_at(&dir);
    let tantivy = tantivy_at(&dir);
    let id = ensure_db_id(conn).map_err(sqlite)?;
    let (schema, fields) = schema();
    let index = open_or_start_over(&dir, &schema)?;
    let mut writer = writer(&index, &dir)?;
    // A write that fails names the folder when it cannot be written.
    let written = |err: tantivy::TantivyError| unwritable(&dir).unwrap_or_else(|| tantivy(err));
    // Read under the writer's lock: no other catch-up commits meanwhile.
    let committed = committed(&index).map_err(tantivy)?;
    let mut since = match committed {
        Some(Payload { db, seq }) if db == id => Some(seq),
        _ => None,
    };
    // Its files as the last catch-up checked them, or checked now: a
    // damaged one (a stray write, a bad disk) makes it start over.
    // (The segments' metas are dropped at once: while one is alive, the
    // commit's clean-up keeps its files.)
    let recorded = recorded(conn).map_err(sqlite)?;
    let segments = index.searchable_segment_metas().map_err(tantivy)?;
    let checked = intact(&index, &dir, &segments, |name, stamp| {
        recorded.get(name) == Some(stamp)
    });
    drop(segments);
    let checked = checked.unwrap_or_else(|_| {
        since = None;
        BTreeMap::new()
    });
    // One read transaction: the rows and the journal's end agree.
    let tx = conn.unchecked_transaction().map_err(sqlite)?;
    let end = journal_end(&tx).map_err(sqlite)?;
    if since == Some(end) {
        drop(tx);
        if checked != recorded {
            record(conn, &checked).map_err(sqlite)?;
        }
        return Ok(CaughtUp::Fresh);
    }
    let rows = write_rows_since(&tx, &mut writer, fields, since, end, &dir)?;
    tx.finish().map_err(sqlite)?;
    let payload =
        serde_json::to_string(&Payload { db: id, seq: end }).expect("a payload serialises");
    let mut commit = writer.prepare_commit().map_err(written)?;
    commit.set_payload(&payload);
    commit.commit().map_err(written)?;
    writer.wait_merging_threads().map_err(written)?;
    // The files as written (and merged), each checked once: readers trust
    // these stamps.
    let segments = index.searchable_segment_metas().map_err(tantivy)?;
    let stamps = intact(&index, &dir, &segments, |name, stamp| {
        checked.get(name) == Some(stamp)
    })
    .map_err(|damage| TextError::Damaged {
        path: damage.file,
        reason: damage.reason,
    })?;
    record(conn, &stamps).map_err(sqlite)?;
    conn.execute("DELETE FROM text_journal WHERE seq <= ?1", params![end])
        .map_err(sqlite)?;
    Ok(match since {
        None => CaughtUp::Rebuilt { rows },
        Some(_) => CaughtUp::Applied { rows },
    })
}

/// The keyword index at `dir`; one unreadable or of another schema is
/// removed and created again (it is derived, so it starts over).
fn open_or_start_over(
    dir: &Path,
    schema: &tantivy::schema::Schema,
) -> Result<tantivy::Index, TextError> {
    match open_or_create(dir, schema) {
        Ok(index) => Ok(index),
        Err(_) => {
            std::fs::remove_dir_all(dir).map_err(|source| TextError::Io {
                path: dir.to_owned(),
                source,
            })?;
            open_or_create(dir, schema).map_err(tantivy_at(dir))
        }
    }
}

/// Writes the rows the journal changed after `since` up to `end` (every
/// row, the documents deleted first, when `since` is `None`); how many.
fn write_rows_since(
    tx: &rusqlite::Transaction<'_>,
    writer: &mut tantivy::IndexWriter,
    fields: Fields,
    since: Option<i64>,
    end: i64,
    dir: &Path,
) -> Result<usize, TextError> {
    let sqlite = sqlite_at(dir);
    let tantivy = tantivy_at(dir);
    // A write that fails names the folder when it cannot be written.
    let written = |err: tantivy::TantivyError| unwritable(dir).unwrap_or_else(|| tantivy(err));
    let mut statement;
    let mut query = match since {
        None => {
            writer.delete_all_documents().map_err(tantivy)?;
            statement = tx
                .prepare("SELECT rowid, workspace_id, content, tags, files || CASE WHEN moved = '[]' THEN '' ELSE ' ' || moved END FROM memories")
                .map_err(sqlite)?;
            statement.query([]).map_err(sqlite)?
        }
        Some(since) => {
            let mut changed = tx
                .prepare("SELECT DISTINCT row FROM text_journal WHERE seq > ?1 AND seq <= ?2")
                .map_err(sqlite)?;
            let changed: Vec<i64> = changed
                .query_map(params![since, end], |row| row.get(0))
                .and_then(|rows| rows.collect())
                .map_err(sqlite)?;
            for rowid in &changed {
                writer.delete_term(Term::from_field_u64(fields.row, *rowid as u64));
            }
            statement = tx
                .prepare(
                    "SELECT m.rowid, m.workspace_id, m.content, m.tags,
                            m.files || CASE WHEN m.moved = '[]' THEN '' ELSE ' ' || m.moved END
                     FROM memories m
                     WHERE m.rowid IN (SELECT DISTINCT row FROM text_journal WHERE seq > ?1 AND seq <= ?2)",
                )
                .map_err(sqlite)?;
            statement.query(params![since, end]).map_err(sqlite)?
        }
    };
    let rows = add_rows(writer, fields, &mut query, dir, written)?;
    drop(query);
    drop(statement);
    Ok(rows)
}

/// Adds a document for each of `rows` (rowid, workspace id, content, tags,
/// files) with `writer`; how many. A failed write is `failed`'s error.
pub(super) fn add_rows(
    writer: &tantivy::IndexWriter,
    fields: Fields,
    rows: &mut rusqlite::Rows<'_>,
    dir: &Path,
    failed: impl Fn(tantivy::TantivyError) -> TextError,
) -> Result<usize, TextError> {
    let sqlite = sqlite_at(dir);
    let mut words = analyzer();
    let mut added = 0;
    while let Some(row) = rows.next().map_err(sqlite)? {
        let rowid: i64 = row.get(0).map_err(sqlite)?;
        let workspace: i64 = row.get(1).map_err(sqlite)?;
        let texts = [
            row.get::<_, String>(2).map_err(sqlite)?,
            row.get::<_, String>(3).map_err(sqlite)?,
            row.get::<_, String>(4).map_err(sqlite)?,
        ];
        let mut doc = TantivyDocument::new();
        doc.add_u64(fields.row, rowid as u64);
        doc.add_i64(fields.workspace, workspace);
        let mut length = 0u64;
        for text in &texts {
            let mut stream = words.token_stream(text);
            while stream.advance() {
                length += 1;
            }
        }
        doc.add_u64(fields.length, length);
        for (field, text) in fields.text.iter().zip(texts) {
            doc.add_text(*field, text);
        }
        writer.add_document(doc).map_err(&failed)?;
        added += 1;
    }
    Ok(added)
}

/// Makes the next catch-up write the keyword index of the database at `db`
/// again (every row): it forgets the database's id, so the index's commit
/// names another database. For an index tantivy panicked on, whose
/// checksums match; on a connection of its own (a recall may hold only a
/// read-only one).
pub fn rebuild_at_next_sync(db: &Path) -> Result<(), TextError> {
    let sqlite = sqlite_at(db);
    let conn = Connection::open(db).map_err(sqlite)?;
    conn.busy_timeout(Duration::from_secs(5)).map_err(sqlite)?;
    conn.execute("DELETE FROM meta WHERE key = 'text_index'", [])
        .map_err(sqlite)?;
    Ok(())
}

/// The journal's last entry ever (0 before any): AUTOINCREMENT keeps it
/// after the entries are pruned.
pub(super) fn journal_end(conn: &Connection) -> rusqlite::Result<i64> {
    Ok(conn
        .query_row(
            "SELECT seq FROM sqlite_sequence WHERE name = 'text_journal'",
            [],
            |row| row.get(0),
        )
        .optional()?
        .unwrap_or(0))
}

pub(super) fn db_id(conn: &Connection) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT value FROM meta WHERE key = 'text_index'",
        [],
        |row| row.get(0),
    )
    .optional()
}

/// This database's id for its keyword index: a new database (an index
/// deleted and synced again) gets a new one, so an index left from the old
/// one is never taken for its.
pub(super) fn ensure_db_id(conn: &Connection) -> rusqlite::Result<String> {
    if let Some(id) = db_id(conn)? {
        return Ok(id);
    }
    conn.execute(
        "INSERT OR IGNORE INTO meta (key, value) VALUES ('text_index', ?1)",
        params![crate::domain::memory::new_id(jiff::Timestamp::now())],
    )?;
    Ok(db_id(conn)?.expect("just written"))
}
