//! Opening the keyword index, on disk or as a copy in memory, and reading
//! it only when it is fresh and its files intact.

use super::*;

impl TextIndex {
    /// Opens the keyword index of the database at `db`, if one was written
    /// (an error when it is unreadable or of another schema). Reads no
    /// segment: [`TextIndex::fresh`] checks them first.
    pub fn open(db: &Path) -> Result<Option<TextIndex>, TextError> {
        let dir = dir_of(db);
        let (schema, fields) = schema();
        let Some(index) = existing(&dir, &schema).map_err(tantivy_at(&dir))? else {
            return Ok(None);
        };
        Ok(Some(TextIndex {
            db: db.to_owned(),
            dir,
            index,
            fields,
            reader: Default::default(),
            searcher: Default::default(),
            verified: Default::default(),
            broken: AtomicBool::new(false),
            totals: Default::default(),
            memory_at: None,
        }))
    }

    /// A keyword index of every row of `conn`'s database (at `db`), written
    /// in memory: what keyword ranking reads when the index on disk cannot
    /// be brought up to date (its folder unwritable, the disk full, its
    /// files damaged and no catch-up able to write them again). The same
    /// engine and scores, at the cost of writing every row: a few seconds
    /// a hundred thousand memories. Fresh while the database's journal has
    /// nothing newer.
    pub fn in_memory(conn: &Connection, db: &Path) -> Result<TextIndex, TextError> {
        let dir = dir_of(db);
        let sqlite = sqlite_at(&dir);
        let tantivy = tantivy_at(&dir);
        let (schema, fields) = schema();
        let index = tantivy::Index::create_in_ram(schema);
        index.tokenizers().register(ANALYZER, analyzer());
        let mut writer = index
            .writer_with_num_threads(1, WRITER_MEMORY)
            .map_err(tantivy)?;
        // One read transaction: the rows and the journal's end agree.
        let tx = conn.unchecked_transaction().map_err(sqlite)?;
        let end = journal_end(&tx).map_err(sqlite)?;
        let mut statement = tx
            .prepare("SELECT rowid, workspace_id, content, tags, files || CASE WHEN moved = '[]' THEN '' ELSE ' ' || moved END FROM memories")
            .map_err(sqlite)?;
        let mut rows = statement.query([]).map_err(sqlite)?;
        add_rows(&writer, fields, &mut rows, &dir, tantivy)?;
        drop(rows);
        drop(statement);
        tx.finish().map_err(sqlite)?;
        writer.commit().map_err(tantivy)?;
        drop(writer);
        let reader: tantivy::IndexReader = index
            .reader_builder()
            .reload_policy(tantivy::ReloadPolicy::Manual)
            .try_into()
            .map_err(tantivy)?;
        let searcher = reader.searcher();
        Ok(TextIndex {
            db: db.to_owned(),
            dir,
            index,
            fields,
            reader: std::sync::Mutex::new(Some(reader)),
            searcher: std::sync::Mutex::new(Some(searcher)),
            verified: Default::default(),
            broken: AtomicBool::new(false),
            totals: Default::default(),
            memory_at: Some(end),
        })
    }

    /// Whether this is a copy in memory ([`TextIndex::in_memory`]).
    pub fn is_in_memory(&self) -> bool {
        self.memory_at.is_some()
    }

    /// Whether the index holds every row of `conn`'s database as it is now
    /// (its last commit applied the journal's last entry, for this
    /// database) and every file of its segments is intact: stamped as
    /// checked by the last catch-up (a write to a file changes its stamp),
    /// else its checksum matches now (once per process and stamp). A search
    /// after `true` reads exactly the segments checked. A damaged index, or
    /// one tantivy panicked on, is not fresh: the next catch-up writes it
    /// again. A copy in memory is fresh while the journal has nothing newer
    /// than it holds.
    pub fn fresh(&self, conn: &Connection) -> Result<bool, TextError> {
        if let Some(end) = self.memory_at {
            return Ok(!self.broken.load(Ordering::Relaxed)
                && journal_end(conn).map_err(sqlite_at(&self.dir))? == end);
        }
        let mut kept = self.searcher.lock().unwrap_or_else(|p| p.into_inner());
        *kept = None;
        *kept = self.checked_searcher(conn)?;
        Ok(kept.is_some())
    }

    /// A searcher of the index's segments when it is fresh and they are
    /// intact ([`TextIndex::fresh`]).
    pub(super) fn checked_searcher(
        &self,
        conn: &Connection,
    ) -> Result<Option<tantivy::Searcher>, TextError> {
        if self.broken.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let sqlite = sqlite_at(&self.dir);
        let metas = self.index.load_metas().map_err(tantivy_at(&self.dir))?;
        if !holds_all(conn, payload(&metas).as_ref()).map_err(sqlite)? {
            return Ok(None);
        }
        let recorded = recorded(conn).map_err(sqlite)?;
        let mut verified = self.verified.lock().unwrap_or_else(|p| p.into_inner());
        let known = |name: &str, stamp: &Stamp| {
            recorded.get(name) == Some(stamp) || verified.get(name) == Some(stamp)
        };
        match intact(&self.index, &self.dir, &metas.segments, known) {
            Ok(stamps) => *verified = stamps,
            Err(_) => return Ok(None),
        }
        drop(verified);
        let opened = self.guarded(|| -> tantivy::Result<tantivy::Searcher> {
            let mut reader = self.reader.lock().unwrap_or_else(|p| p.into_inner());
            match reader.as_ref() {
                Some(open) => open.reload()?,
                None => {
                    *reader = Some(
                        self.index
                            .reader_builder()
                            .reload_policy(tantivy::ReloadPolicy::Manual)
                            .try_into()?,
                    )
                }
            }
            Ok(reader.as_ref().expect("opened").searcher())
        });
        let searcher = match opened {
            Ok(searcher) => searcher.map_err(tantivy_at(&self.dir))?,
            Err(_) => {
                // A copy in memory answers whether or not this mark is
                // written.
                let _ = rebuild_at_next_sync(&self.db);
                return Ok(None);
            }
        };
        // A commit since the check (another process's catch-up) waits for
        // the next recall.
        let checked: std::collections::HashSet<_> =
            metas.segments.iter().map(|segment| segment.id()).collect();
        if !searcher
            .segment_readers()
            .iter()
            .all(|segment| checked.contains(&segment.segment_id()))
        {
            return Ok(None);
        }
        Ok(Some(searcher))
    }

    /// Runs `read` (tantivy reading the index); a panic is
    /// [`TextError::Panicked`], and this index broken for the process.
    pub(super) fn guarded<R>(&self, read: impl FnOnce() -> R) -> Result<R, TextError> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)).map_err(|panic| {
            self.broken.store(true, Ordering::Relaxed);
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            TextError::Panicked {
                path: self.dir.clone(),
                message,
            }
        })
    }

    /// The searcher of the segments the last [`TextIndex::fresh`] checked,
    /// unless a read panicked before ([`TextError::Panicked`]).
    pub(super) fn readable_searcher(&self) -> Result<tantivy::Searcher, TextError> {
        if self.broken.load(Ordering::Relaxed) {
            return Err(TextError::Panicked {
                path: self.dir.clone(),
                message: "an earlier read".to_owned(),
            });
        }
        self.searcher
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| TextError::Unchecked {
                path: self.dir.clone(),
            })
    }
}
