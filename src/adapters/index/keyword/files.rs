//! The keyword index's folder: opening or creating it, its writer, the
//! payload of its commits, and each file's stamp and checksum.

use super::*;

/// The keyword index written in `dir`, its analyser registered; `None`
/// when none was, an error when it is unreadable or of another schema.
pub(super) fn existing(dir: &Path, schema: &Schema) -> tantivy::Result<Option<tantivy::Index>> {
    if !dir.join("meta.json").is_file() {
        return Ok(None);
    }
    let index = tantivy::Index::open_in_dir(dir)?;
    if &index.schema() != schema {
        return Err(tantivy::TantivyError::SchemaError(
            "another schema".to_owned(),
        ));
    }
    index.tokenizers().register(ANALYZER, analyzer());
    Ok(Some(index))
}

pub(super) fn open_or_create(dir: &Path, schema: &Schema) -> tantivy::Result<tantivy::Index> {
    if let Some(index) = existing(dir, schema)? {
        return Ok(index);
    }
    std::fs::create_dir_all(dir)?;
    let index = tantivy::Index::create_in_dir(dir, schema.clone())?;
    index.tokenizers().register(ANALYZER, analyzer());
    Ok(index)
}

/// Why `dir` cannot be written, if it cannot: a file created and removed
/// in it tells (a failed write of tantivy's says only that its worker
/// stopped).
pub(super) fn unwritable(dir: &Path) -> Option<TextError> {
    let probe = dir.join(".goldfish-probe");
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            None
        }
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => None,
        Err(source) => Some(TextError::Io {
            path: dir.to_owned(),
            source,
        }),
    }
}

/// The index's writer, waiting up to [`WRITER_WAIT`] while another process
/// holds its lock; a lock file that cannot be opened (an unwritable folder)
/// is an error at once, naming it.
pub(super) fn writer(
    index: &tantivy::Index,
    dir: &Path,
) -> Result<tantivy::IndexWriter, TextError> {
    use tantivy::directory::error::LockError;
    let started = Instant::now();
    loop {
        match index.writer_with_num_threads(1, WRITER_MEMORY) {
            Err(tantivy::TantivyError::LockFailure(LockError::LockBusy, _))
                if started.elapsed() < WRITER_WAIT =>
            {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(tantivy::TantivyError::LockFailure(LockError::IoError(err), _)) => {
                return Err(TextError::Io {
                    path: dir.join(tantivy::directory::INDEX_WRITER_LOCK.filepath.as_path()),
                    source: std::io::Error::new(err.kind(), err.to_string()),
                });
            }
            other => return other.map_err(tantivy_at(dir)),
        }
    }
}

/// What the index's last commit says it holds (`None` before any, or a
/// payload this goldfish did not write).
pub(super) fn committed(index: &tantivy::Index) -> tantivy::Result<Option<Payload>> {
    Ok(payload(&index.load_metas()?))
}

pub(super) fn payload(metas: &tantivy::IndexMeta) -> Option<Payload> {
    metas
        .payload
        .as_deref()
        .and_then(|payload| serde_json::from_str(payload).ok())
}

/// What a segment file looked like when its checksum matched: its size,
/// inode, and modification and change times (seconds, nanoseconds). A
/// write to the file changes its change time, which no one sets back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct Stamp(u64, u64, i64, i64, i64, i64);

impl Stamp {
    pub(super) fn of(metadata: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp(
            metadata.len(),
            metadata.ino(),
            metadata.mtime(),
            metadata.mtime_nsec(),
            metadata.ctime(),
            metadata.ctime_nsec(),
        )
    }
}

/// The files of `segments` (one per component, and the deletion bitset of
/// one with deletions) with their stamps; a missing one, or one that is
/// not a regular file, is damage.
pub(super) fn stamps(
    dir: &Path,
    segments: &[tantivy::SegmentMeta],
) -> Result<BTreeMap<String, Stamp>, Damage> {
    use tantivy::index::SegmentComponent as Component;
    let mut stamps = BTreeMap::new();
    for segment in segments {
        let mut components = vec![
            Component::Postings,
            Component::Positions,
            Component::Terms,
            Component::Store,
            Component::FastFields,
            Component::FieldNorms,
        ];
        if segment.has_deletes() {
            components.push(Component::Delete);
        }
        for component in components {
            let name = segment.relative_path(component);
            let file = dir.join(&name);
            let damage = |reason: String| Damage {
                file: file.clone(),
                reason,
            };
            let metadata =
                std::fs::symlink_metadata(&file).map_err(|err| damage(err.to_string()))?;
            if !metadata.file_type().is_file() {
                return Err(damage("not a regular file".to_owned()));
            }
            stamps.insert(name.to_string_lossy().into_owned(), Stamp::of(&metadata));
        }
    }
    Ok(stamps)
}

/// The stamps of the files of `segments` when each is intact: its stamp is
/// one `known` says was checked, or its checksum (tantivy's footer: a crc32
/// of the rest) matches now. The first damaged file otherwise.
pub(super) fn intact(
    index: &tantivy::Index,
    dir: &Path,
    segments: &[tantivy::SegmentMeta],
    known: impl Fn(&str, &Stamp) -> bool,
) -> Result<BTreeMap<String, Stamp>, Damage> {
    let stamps = stamps(dir, segments)?;
    for (name, stamp) in &stamps {
        if known(name, stamp) {
            continue;
        }
        let damage = |reason: String| Damage {
            file: dir.join(name),
            reason,
        };
        match index.directory().validate_checksum(Path::new(name)) {
            Ok(true) => {}
            Ok(false) => return Err(damage("does not match its checksum".to_owned())),
            Err(err) => return Err(damage(err.to_string())),
        }
    }
    Ok(stamps)
}

/// The stamps the last catch-up recorded (none when unreadable).
pub(super) fn recorded(conn: &Connection) -> rusqlite::Result<BTreeMap<String, Stamp>> {
    let value: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = ?1",
            [FILES_KEY],
            |row| row.get(0),
        )
        .optional()?;
    Ok(value
        .and_then(|value| serde_json::from_str(&value).ok())
        .unwrap_or_default())
}

pub(super) fn record(conn: &Connection, stamps: &BTreeMap<String, Stamp>) -> rusqlite::Result<()> {
    let value = serde_json::to_string(stamps).expect("stamps serialise");
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
        params![FILES_KEY, value],
    )?;
    Ok(())
}
