//! The steps of the index schema, one per version: SQL, but for version 12,
//! written in Rust ([`compact_vectors`]). Never edit a step once released:
//! an index that ran it opens by its version number alone.

/// Version 1.
///
/// - `workspaces`: one row per work tree synced, with HEAD and the last commit
///   whose history was walked for provenance.
/// - `files`: per workspace and memory file, the git blob id of the version
///   indexed and the stat data that lets a sync skip the file unread.
/// - `memories`: one row per memory record (forgotten ones too: `tombstones`
///   hide them at query time, so a tombstone that goes away brings its memory
///   back). `content_hash` is blake3 of the content, the key of embeddings.
/// - `tombstones`: the forget records, per file.
/// - `provenance`: the commit that introduced each memory id, and its author.
/// - `memories_fts`: FTS5 over content, tags and files (external content;
///   dropped in [`V10`]).
/// - `embeddings`: one row per (content hash, model): the unit vector as
///   little-endian f32 (sqlite-vec's float format, so its `vec_distance_*`
///   functions work on it) and its sign bits (`code`), the first stage of
///   vector search. Identical content is embedded once, whatever the
///   workspace.
/// - `embed_queue`: content hashes not yet embedded (kept by triggers; see
///   [`V2`]).
/// - `query_cache`: query embeddings by (model, query text).
/// - `digest_cache`: LLM digests by key (question, memories, command, budget).
/// - `meta`: `embedding_model`, the model the vectors belong to.
pub(super) const V1: &str = r#"
CREATE TABLE workspaces (
    id             INTEGER PRIMARY KEY,
    root           TEXT NOT NULL UNIQUE,
    name           TEXT NOT NULL,
    head_commit    TEXT,
    history_commit TEXT,
    synced_at      TEXT,
    live_memories  INTEGER NOT NULL DEFAULT 0,
    memory_rows    INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE files (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    blob_id      TEXT NOT NULL,
    size         INTEGER,
    mtime_ns     INTEGER,
    ctime_ns     INTEGER,
    inode        INTEGER,
    PRIMARY KEY (workspace_id, name)
) WITHOUT ROWID;

CREATE TABLE memories (
    rowid        INTEGER PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    id           TEXT NOT NULL,
    file         TEXT NOT NULL,
    line         INTEGER NOT NULL,
    record_hash  TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    timestamp    TEXT NOT NULL,
    ts_ms        INTEGER,
    type         TEXT NOT NULL,
    content      TEXT NOT NULL,
    source       TEXT,
    tags         TEXT NOT NULL DEFAULT '[]',
    author       TEXT,
    branch       TEXT,
    commit_id    TEXT,
    files        TEXT NOT NULL DEFAULT '[]',
    UNIQUE (workspace_id, id)
);
CREATE INDEX memories_by_file ON memories (workspace_id, file);
-- Rows per workspace, kept by triggers, so counting costs nothing at any size.
CREATE TRIGGER memories_count_insert AFTER INSERT ON memories BEGIN
    UPDATE workspaces SET memory_rows = memory_rows + 1 WHERE id = new.workspace_id;
END;
CREATE TRIGGER memories_count_delete AFTER DELETE ON memories BEGIN
    UPDATE workspaces SET memory_rows = memory_rows - 1 WHERE id = old.workspace_id;
END;
CREATE INDEX memories_by_time ON memories (workspace_id, ts_ms);
CREATE INDEX memories_by_hash ON memories (content_hash);

CREATE TABLE tombstones (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    id           TEXT NOT NULL,
    forgets      TEXT NOT NULL,
    file         TEXT NOT NULL,
    PRIMARY KEY (workspace_id, id)
) WITHOUT ROWID;
CREATE INDEX tombstones_by_target ON tombstones (workspace_id, forgets);
CREATE INDEX tombstones_by_file ON tombstones (workspace_id, file);

CREATE TABLE provenance (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    id           TEXT NOT NULL,
    commit_id    TEXT NOT NULL,
    author       TEXT NOT NULL,
    date         TEXT NOT NULL,
    PRIMARY KEY (workspace_id, id)
) WITHOUT ROWID;

CREATE VIRTUAL TABLE memories_fts USING fts5(
    content, tags, files,
    content = 'memories', content_rowid = 'rowid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content, tags, files) VALUES (new.rowid, new.content, new.tags, new.files);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, tags, files) VALUES ('delete', old.rowid, old.content, old.tags, old.files);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, tags, files ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, tags, files) VALUES ('delete', old.rowid, old.content, old.tags, old.files);
    INSERT INTO memories_fts (rowid, content, tags, files) VALUES (new.rowid, new.content, new.tags, new.files);
END;

CREATE TABLE embeddings (
    rowid        INTEGER PRIMARY KEY,
    content_hash TEXT NOT NULL,
    model        TEXT NOT NULL,
    vector       BLOB NOT NULL,
    code         BLOB NOT NULL,
    UNIQUE (content_hash, model)
);

CREATE TABLE embed_queue (
    content_hash TEXT PRIMARY KEY
) WITHOUT ROWID;
CREATE TRIGGER memories_queue_insert AFTER INSERT ON memories BEGIN
    INSERT OR IGNORE INTO embed_queue (content_hash) VALUES (new.content_hash);
END;
CREATE TRIGGER memories_queue_update AFTER UPDATE OF content_hash ON memories BEGIN
    INSERT OR IGNORE INTO embed_queue (content_hash) VALUES (new.content_hash);
END;

CREATE TABLE query_cache (
    model  TEXT NOT NULL,
    query  TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, query)
) WITHOUT ROWID;

CREATE TABLE digest_cache (
    key     TEXT PRIMARY KEY,
    digest  TEXT NOT NULL,
    tokens  INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
"#;

/// Version 2, over version 1.
///
/// - `embed_queue` holds each content hash at most once, and only while a
///   memory row has it and the current model has no vector for it. Version
///   1's triggers used `INSERT OR IGNORE`, which SQLite overrides with the
///   outer statement's conflict policy: under sync's upsert (`ON CONFLICT DO
///   UPDATE`, which aborts) a content hash coming back into a row while still
///   queued failed the whole sync, and without a model nothing ever left the
///   queue. The triggers now test before they insert, and deleting or
///   changing a row drops a hash no row has any more. The queue is repaired.
/// - `duplicates`: the records of an id that are not the indexed one, in
///   other files than the first (by name) that has it, kept so an incremental
///   sync can bring the next one in when that file loses the id.
/// - `tombstones` are keyed by file too: the same tombstone in two files
///   stays while either has it.
/// - `files.racy`: the file changed too shortly before it was read for its
///   stat data to prove it unchanged later; the next sync hashes it again.
/// - Every memory file is read again at the next sync (its blob id is
///   cleared and its stat data distrusted), so an index written by version 1
///   ends up as a rebuild would.
pub(super) const V2: &str = r#"
DROP TRIGGER memories_queue_insert;
DROP TRIGGER memories_queue_update;
CREATE TRIGGER memories_queue_insert AFTER INSERT ON memories
WHEN NOT EXISTS (SELECT 1 FROM embed_queue WHERE content_hash = new.content_hash)
 AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.content_hash = new.content_hash
                   AND e.model = (SELECT value FROM meta WHERE key = 'embedding_model'))
BEGIN
    INSERT INTO embed_queue (content_hash) VALUES (new.content_hash);
END;
CREATE TRIGGER memories_queue_update AFTER UPDATE OF content_hash ON memories
WHEN old.content_hash IS NOT new.content_hash
BEGIN
    DELETE FROM embed_queue WHERE content_hash = old.content_hash
      AND NOT EXISTS (SELECT 1 FROM memories WHERE content_hash = old.content_hash);
    INSERT INTO embed_queue (content_hash) SELECT new.content_hash
     WHERE NOT EXISTS (SELECT 1 FROM embed_queue WHERE content_hash = new.content_hash)
       AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.content_hash = new.content_hash
                         AND e.model = (SELECT value FROM meta WHERE key = 'embedding_model'));
END;
CREATE TRIGGER memories_queue_delete AFTER DELETE ON memories BEGIN
    DELETE FROM embed_queue WHERE content_hash = old.content_hash
      AND NOT EXISTS (SELECT 1 FROM memories WHERE content_hash = old.content_hash);
END;
DELETE FROM embed_queue
 WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.content_hash = embed_queue.content_hash)
    OR EXISTS (SELECT 1 FROM embeddings e WHERE e.content_hash = embed_queue.content_hash
                 AND e.model = (SELECT value FROM meta WHERE key = 'embedding_model'));
INSERT INTO embed_queue (content_hash)
SELECT DISTINCT m.content_hash FROM memories m
 WHERE NOT EXISTS (SELECT 1 FROM embed_queue q WHERE q.content_hash = m.content_hash)
   AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.content_hash = m.content_hash
                     AND e.model = (SELECT value FROM meta WHERE key = 'embedding_model'));

CREATE TABLE duplicates (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    id           TEXT NOT NULL,
    file         TEXT NOT NULL,
    line         INTEGER NOT NULL,
    record       TEXT NOT NULL,
    PRIMARY KEY (workspace_id, id, file)
) WITHOUT ROWID;
CREATE INDEX duplicates_by_file ON duplicates (workspace_id, file);

CREATE TABLE tombstones_v2 (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    id           TEXT NOT NULL,
    forgets      TEXT NOT NULL,
    file         TEXT NOT NULL,
    PRIMARY KEY (workspace_id, id, file)
) WITHOUT ROWID;
INSERT INTO tombstones_v2 (workspace_id, id, forgets, file)
SELECT workspace_id, id, forgets, file FROM tombstones;
DROP TABLE tombstones;
ALTER TABLE tombstones_v2 RENAME TO tombstones;
CREATE INDEX tombstones_by_target ON tombstones (workspace_id, forgets);
CREATE INDEX tombstones_by_file ON tombstones (workspace_id, file);

ALTER TABLE files ADD COLUMN racy INTEGER NOT NULL DEFAULT 0;
UPDATE files SET blob_id = '', racy = 1;
"#;

/// Version 3, over version 2: `memories.flags`, what [`crate::domain::memory::trust`] found suspect
/// in the record (comma-separated flag names, empty when nothing), for
/// `brief` to leave out and recall to mark. Rows written before were never
/// checked, so every file is read again on its workspace's next sync.
pub(super) const V3: &str = r#"
ALTER TABLE memories ADD COLUMN flags TEXT NOT NULL DEFAULT '';
UPDATE memories SET record_hash = '';
UPDATE files SET blob_id = '', racy = 1;
"#;

/// Version 4, over version 3: `text_journal`, the rowid of every memory row
/// inserted, changed (content, tags, files or workspace) or deleted, in
/// order, kept by triggers for the keyword index (`super::keyword`), which
/// applies and prunes it. Nothing to backfill: a keyword index that was
/// never written for this database is built from every row.
pub(super) const V4: &str = r#"
CREATE TABLE text_journal (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    row INTEGER NOT NULL
);
CREATE TRIGGER memories_text_insert AFTER INSERT ON memories BEGIN
    INSERT INTO text_journal (row) VALUES (new.rowid);
END;
CREATE TRIGGER memories_text_update AFTER UPDATE OF content, tags, files, workspace_id ON memories
WHEN old.content IS NOT new.content OR old.tags IS NOT new.tags OR old.files IS NOT new.files
  OR old.workspace_id IS NOT new.workspace_id
BEGIN
    INSERT INTO text_journal (row) VALUES (new.rowid);
END;
CREATE TRIGGER memories_text_delete AFTER DELETE ON memories BEGIN
    INSERT INTO text_journal (row) VALUES (old.rowid);
END;
"#;

/// Version 5, over version 4: `memories.flags` no longer holds
/// `future-timestamp`, which depends on the clock (readers compare the
/// time with theirs, see [`crate::domain::memory::trust::ahead`]); a stored one
/// stayed after the time had come, until a rebuild. Flags are sorted and
/// comma-separated: the flag goes with its comma.
pub(super) const V5: &str = r#"
UPDATE memories
   SET flags = trim(replace(',' || flags || ',', ',future-timestamp,', ','), ',')
 WHERE ',' || flags || ',' LIKE '%,future-timestamp,%';
"#;

/// Version 6, over version 5: [`crate::domain::memory::trust`] also flags
/// `instruction-like` text (an order to an agent, not a fact). Rows written
/// before were never checked for it, so every file is read again on its
/// workspace's next sync.
pub(super) const V6: &str = r#"
UPDATE memories SET record_hash = '';
UPDATE files SET blob_id = '', racy = 1;
"#;

/// Version 7, over version 6: who wrote each memory, from git (issue 24).
///
/// - `provenance` also holds the introducing commit's author name and
///   email apart, its committer (`Name <email>`), and its signature as git
///   verified it at sync time (the name of git's signature state) with
///   the signer git named. Rows written before lack them: they are dropped
///   and every workspace's history is walked again at its next sync.
/// - `workspaces.trust_policy` (1 when `.goldfish/config` has a `[trust]`
///   section, 0 without one, as the last sync that could read the file
///   found it), `trust_signed`, and `trust_authors` (the section's email
///   globs, lowercased): what recall checks provenance against.
/// - `policy_changes`: commits that changed `.goldfish/config`'s trust
///   policy while their author was outside the policy before them.
/// - `memories.imported`: the record came from `goldfish import` (it has
///   `imported_from`): its `author` is the note's, not its committer's.
/// - `releases`: the `goldfish trust` lines (the id of the line, the memory
///   it releases), per file like tombstones; a release counts when its own
///   provenance is inside the policy. Every file is read again, for them.
pub(super) const V7: &str = r#"
ALTER TABLE provenance ADD COLUMN author_name TEXT NOT NULL DEFAULT '';
ALTER TABLE provenance ADD COLUMN author_email TEXT NOT NULL DEFAULT '';
ALTER TABLE provenance ADD COLUMN committer TEXT NOT NULL DEFAULT '';
ALTER TABLE provenance ADD COLUMN signature TEXT NOT NULL DEFAULT 'unsigned';
ALTER TABLE provenance ADD COLUMN signer TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN imported INTEGER NOT NULL DEFAULT 0;
DELETE FROM provenance;
UPDATE workspaces SET history_commit = NULL;
UPDATE memories SET record_hash = '';
UPDATE files SET blob_id = '', racy = 1;
ALTER TABLE workspaces ADD COLUMN trust_policy INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workspaces ADD COLUMN trust_signed INTEGER NOT NULL DEFAULT 0;
CREATE TABLE trust_authors (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    pattern      TEXT NOT NULL,
    PRIMARY KEY (workspace_id, pattern)
) WITHOUT ROWID;
CREATE TABLE releases (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    id           TEXT NOT NULL,
    releases     TEXT NOT NULL,
    file         TEXT NOT NULL,
    PRIMARY KEY (workspace_id, id, file)
) WITHOUT ROWID;
CREATE INDEX releases_by_target ON releases (workspace_id, releases);
CREATE INDEX releases_by_file ON releases (workspace_id, file);
CREATE TABLE policy_changes (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    commit_id    TEXT NOT NULL,
    author       TEXT NOT NULL,
    date         TEXT NOT NULL,
    why          TEXT NOT NULL,
    PRIMARY KEY (workspace_id, commit_id)
) WITHOUT ROWID;
"#;

/// Version 8, over version 7: each memory's trust verdict is stored on its
/// row ([`super::verdicts`]) instead of weighed for every row a recall
/// reads: `quarantine` (every reason to quarantine it, comma-separated,
/// empty when none) and `released` (a `goldfish trust` line that counts
/// releases it). The migration weighs every memory at once, so no reader
/// sees a quarantined memory as trusted in between.
pub(super) const V8: &str = r#"
ALTER TABLE memories ADD COLUMN quarantine TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN released INTEGER NOT NULL DEFAULT 0;
"#;

/// Version 9, over version 8: `memories.supersedes`, the id of the older
/// memory a memory declares it replaces (`store --supersedes`), for recall
/// and `brief` to leave that one out (see `super::search`). Rows written
/// before never read the field, so every file is read again on its
/// workspace's next sync. The index holds only the memories that declare
/// one (a partial index: nothing to write for the others).
pub(super) const V9: &str = r#"
ALTER TABLE memories ADD COLUMN supersedes TEXT;
CREATE INDEX memories_by_supersedes ON memories (workspace_id, supersedes)
    WHERE supersedes IS NOT NULL;
UPDATE memories SET record_hash = '';
UPDATE files SET blob_id = '', racy = 1;
"#;

/// Version 10, over version 9: no `memories_fts` (nor its triggers). The
/// keyword index (`super::keyword`, tantivy) is the one keyword engine; it
/// had ranked with FTS5's own bm25 scores since version 4, FTS5 answering
/// only while it lagged. The journal (`text_journal`) stays its source of
/// changes. The pages FTS5 held are free for SQLite to reuse.
pub(super) const V10: &str = r#"
DROP TRIGGER IF EXISTS memories_fts_insert;
DROP TRIGGER IF EXISTS memories_fts_delete;
DROP TRIGGER IF EXISTS memories_fts_update;
DROP TABLE IF EXISTS memories_fts;
"#;

/// Version 11, over version 10: staleness from the code
/// ([`super::staleness`]).
///
/// - `memories.stale` (`''` live, `file-deleted`, `reverted`), with
///   `stale_file` (the path deleted), `stale_commit` (the commit that
///   deleted it, or reverted the memory's commit) and `stale_outside`
///   (that commit's author is outside the trust policy: `brief` keeps the
///   memory); `memories.moved`, a JSON list of `[path, new path]` for each
///   of its files renamed since (the keyword index reads it with `files`).
/// - `memory_files`: one row per (memory, path of its `files`), kept by
///   triggers, so the memories of a path a commit changed are found by
///   index.
/// - `path_changes`: the paths each walked commit deleted (against every
///   parent), with the path it renamed it to (same blob added); `reverts`:
///   the commits whose message says `This reverts commit <sha>.`.
///
/// The history is walked again by each workspace's next sync
/// (`history_commit` cleared), which weighs every memory.
pub(super) const V11: &str = r#"
ALTER TABLE memories ADD COLUMN stale TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN stale_file TEXT;
ALTER TABLE memories ADD COLUMN stale_commit TEXT;
ALTER TABLE memories ADD COLUMN stale_outside INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN moved TEXT NOT NULL DEFAULT '[]';
CREATE INDEX memories_stale ON memories (workspace_id) WHERE stale <> '' OR moved <> '[]';

CREATE TABLE memory_files (
    workspace_id INTEGER NOT NULL,
    path         TEXT NOT NULL,
    id           TEXT NOT NULL,
    PRIMARY KEY (workspace_id, path, id)
) WITHOUT ROWID;
CREATE TRIGGER memory_files_insert AFTER INSERT ON memories WHEN new.files <> '[]' BEGIN
    INSERT OR IGNORE INTO memory_files (workspace_id, path, id)
        SELECT new.workspace_id,
               CASE WHEN value LIKE './%' THEN substr(value, 3) ELSE value END, new.id
        FROM json_each(CASE WHEN json_valid(new.files) THEN new.files ELSE '[]' END)
        WHERE type = 'text';
END;
CREATE TRIGGER memory_files_update AFTER UPDATE OF files, id, workspace_id ON memories
WHEN old.files IS NOT new.files OR old.id IS NOT new.id OR old.workspace_id IS NOT new.workspace_id
BEGIN
    DELETE FROM memory_files WHERE workspace_id = old.workspace_id AND id = old.id;
    INSERT OR IGNORE INTO memory_files (workspace_id, path, id)
        SELECT new.workspace_id,
               CASE WHEN value LIKE './%' THEN substr(value, 3) ELSE value END, new.id
        FROM json_each(CASE WHEN json_valid(new.files) THEN new.files ELSE '[]' END)
        WHERE type = 'text';
END;
CREATE TRIGGER memory_files_delete AFTER DELETE ON memories WHEN old.files <> '[]' BEGIN
    DELETE FROM memory_files WHERE workspace_id = old.workspace_id AND id = old.id;
END;
INSERT OR IGNORE INTO memory_files (workspace_id, path, id)
    SELECT m.workspace_id, CASE WHEN j.value LIKE './%' THEN substr(j.value, 3) ELSE j.value END, m.id
    FROM memories m, json_each(CASE WHEN json_valid(m.files) THEN m.files ELSE '[]' END) j
    WHERE m.files <> '[]' AND j.type = 'text';

CREATE TABLE path_changes (
    seq          INTEGER PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    path         TEXT NOT NULL,
    commit_id    TEXT NOT NULL,
    renamed_to   TEXT,
    author       TEXT NOT NULL,
    author_name  TEXT NOT NULL,
    author_email TEXT NOT NULL,
    UNIQUE (workspace_id, path, commit_id)
);
CREATE INDEX path_changes_by_commit ON path_changes (workspace_id, commit_id);

CREATE TABLE reverts (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    reverted     TEXT NOT NULL,
    commit_id    TEXT NOT NULL,
    author       TEXT NOT NULL,
    author_name  TEXT NOT NULL,
    author_email TEXT NOT NULL,
    PRIMARY KEY (workspace_id, reverted, commit_id)
) WITHOUT ROWID;

-- A renamed path is searchable: the keyword index reads `moved` too.
DROP TRIGGER IF EXISTS memories_text_update;
CREATE TRIGGER memories_text_update AFTER UPDATE OF content, tags, files, moved, workspace_id ON memories
WHEN old.content IS NOT new.content OR old.tags IS NOT new.tags OR old.files IS NOT new.files
  OR old.moved IS NOT new.moved OR old.workspace_id IS NOT new.workspace_id
BEGIN
    INSERT INTO text_journal (row) VALUES (new.rowid);
END;

UPDATE workspaces SET history_commit = NULL;
"#;

/// Version 12, over version 11: compact vectors. `embeddings.vector` holds a
/// signed byte a dimension ([`crate::adapters::index::vectors::to_compact`]) instead of
/// little-endian f32: a quarter of the bytes, the same direction (the sign
/// bits in `code` are kept). Written in Rust by [`compact_vectors`]: the
/// vectors stay, nothing is embedded again. The pages freed are reused by
/// later rows (the file shrinks only with a `VACUUM`).
pub(super) fn compact_vectors(tx: &rusqlite::Transaction) -> rusqlite::Result<()> {
    let mut read = tx.prepare(
        "SELECT rowid, vector FROM embeddings WHERE rowid > ?1 ORDER BY rowid LIMIT 1000",
    )?;
    let mut update = tx.prepare("UPDATE embeddings SET vector = ?2 WHERE rowid = ?1")?;
    let mut after = 0i64;
    loop {
        let rows: Vec<(i64, Vec<u8>)> = read
            .query_map([after], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let Some(&(last, _)) = rows.last() else {
            return Ok(());
        };
        for (rowid, blob) in rows {
            let vector = crate::adapters::index::vectors::from_blob(&blob);
            update.execute(rusqlite::params![
                rowid,
                crate::adapters::index::vectors::to_compact(&vector)
            ])?;
        }
        after = last;
    }
}

/// Version 13, over version 12: renames with edits. A commit that deletes
/// a file and adds one at least half alike (`domain::rename`) renamed it;
/// `path_changes` only knew renames of the same blob. Its rows are dropped
/// and each workspace's history is walked again by its next sync
/// (`history_commit` cleared), which records them anew and weighs every
/// memory.
pub(super) const V13: &str = r#"
DELETE FROM path_changes;
UPDATE workspaces SET history_commit = NULL;
"#;

/// Version 14, over version 13: branches deleted without being merged.
/// `branches` keeps each branch's last tip by short name (local, else
/// remote-tracking: `local` says which), so a sync sees one vanish: `gone`, with `merged`
/// (judged against HEAD: its tip is in HEAD's history, or HEAD holds its
/// changes; `NULL` while not judged) while a memory names it. A gone
/// branch no memory names is forgotten. Filled by the next sync of each
/// workspace (a branch deleted before it is not known to have existed).
pub(super) const V14: &str = r#"
CREATE TABLE branches (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    tip          TEXT NOT NULL,
    local        INTEGER NOT NULL DEFAULT 0,
    gone         INTEGER NOT NULL DEFAULT 0,
    merged       INTEGER,
    PRIMARY KEY (workspace_id, name)
) WITHOUT ROWID;
"#;

/// Version 15, over version 14: provenance by content, the policy as a
/// history (issue 39).
///
/// - `provenance` is kept per line, not per id: (`id`, `record_hash`, the
///   blake3 of its canonical line) → the commit that introduced that line,
///   and `seq`, its place in the order the walks met them (oldest first).
///   A line of a known id with another text has its own commit, never the
///   other's; while lines of one id coexist (the row and its
///   `duplicates`), the row whose line came later is quarantined
///   `id-reused`.
/// - `duplicates.record_hash`, `releases.record_hash`,
///   `tombstones.record_hash`: the same hash of their lines, to find their
///   provenance (a release counts only by its own line's commit).
/// - `tombstones.counts`: whether a tombstone forgets anything: one
///   committed outside the trust policy hides nothing, as a `supersedes`
///   from outside it does not (weighed with the verdicts).
/// - `workspaces.history_trust`: the trust policy in effect at
///   `history_commit` (JSON: `policy`, `root`), from the history of
///   `.goldfish/config`: a change by someone outside the policy before it
///   does not take effect.
///
/// The provenance recorded by id is kept with an empty `record_hash` (any
/// line of its id, as before) until the next sync walks the history again
/// from the start and replaces it; policy changes are dropped and found
/// again by that walk; every file is read again (for the hashes).
pub(super) const V15: &str = r#"
CREATE TABLE provenance_v15 (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    id           TEXT NOT NULL,
    record_hash  TEXT NOT NULL,
    commit_id    TEXT NOT NULL,
    author       TEXT NOT NULL,
    date         TEXT NOT NULL,
    author_name  TEXT NOT NULL DEFAULT '',
    author_email TEXT NOT NULL DEFAULT '',
    committer    TEXT NOT NULL DEFAULT '',
    signature    TEXT NOT NULL DEFAULT 'unsigned',
    signer       TEXT NOT NULL DEFAULT '',
    seq          INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, id, record_hash)
) WITHOUT ROWID;
INSERT INTO provenance_v15 (workspace_id, id, record_hash, commit_id, author, date,
    author_name, author_email, committer, signature, signer)
SELECT workspace_id, id, '', commit_id, author, date,
    author_name, author_email, committer, signature, signer
FROM provenance;
DROP TABLE provenance;
ALTER TABLE provenance_v15 RENAME TO provenance;
ALTER TABLE duplicates ADD COLUMN record_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE releases ADD COLUMN record_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE tombstones ADD COLUMN record_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE tombstones ADD COLUMN counts INTEGER NOT NULL DEFAULT 1;
ALTER TABLE workspaces ADD COLUMN history_trust TEXT;
DELETE FROM policy_changes;
UPDATE workspaces SET history_commit = NULL;
UPDATE files SET blob_id = '', racy = 1;
"#;

/// Version 16, over version 15: `workspaces.folder_scan` (JSON: the memory
/// folder's stat, when and at which HEAD every file was last checked, how
/// many there were, and whether the folder's stat can be trusted), which
/// lets a sync of a large folder skip the per-file check for a while (see
/// `sync::FolderScan`). `history_trust` also keeps `signers` and
/// `signers_path`, the allowed-signers file kept in the repository.
pub(super) const V16: &str = "ALTER TABLE workspaces ADD COLUMN folder_scan TEXT;";

/// Version 17, over version 16: no new column; the detectors read folded
/// text (NFKC, default-ignorable characters, look-alike letters) and the
/// verdict weighs a commit author's name (`author-instruction-like`), so
/// the next sync reads every file and walks the history again.
pub(super) const V17: &str = "
DELETE FROM policy_changes;
UPDATE workspaces SET history_commit = NULL;
UPDATE files SET blob_id = '', racy = 1;
";

/// Version 18, over version 17:
/// - `provenance.shallow`: the commit that introduced the line is a
///   shallow clone's boundary (its parents are missing), so who wrote the
///   line is unknown (quarantined `shallow`).
/// - `workspaces.shallow_boundary`: the boundary the last walk saw
///   (sorted commit ids, one per line; empty in a complete clone); a walk
///   that finds another (`git fetch --unshallow`, `--deepen`) walks the
///   history again from the start.
///
/// `provenance.seq` now follows history's order (the first-parent line of
/// the branch each commit reached), the same on every machine: the next
/// sync walks the history again from the start to number it.
pub(super) const V18: &str = "
ALTER TABLE provenance ADD COLUMN shallow INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workspaces ADD COLUMN shallow_boundary TEXT NOT NULL DEFAULT '';
DELETE FROM policy_changes;
UPDATE workspaces SET history_commit = NULL;
UPDATE files SET blob_id = '', racy = 1;
";

/// Version 19, over version 18: `memories.session`, the agent session a
/// captured memory came from (`recall --json`'s `session`); the next sync
/// reads every file again to fill it.
pub(super) const V19: &str = "
ALTER TABLE memories ADD COLUMN session TEXT;
UPDATE files SET blob_id = '', racy = 1;
";

/// Version 20, over version 19: citations (`crate::domain::citation`).
/// - `memories.cites`: the anchors of the spans a memory cites, as its
///   record's `cites` holds them once read (`[]`: none).
/// - `memory_cites`: one row per anchor, kept by triggers from
///   `memories.cites`, with the verdict the last check gave it (`NULL`: not
///   checked yet), its lines then, the blob of its file it was judged
///   against (`''`: no file), and for a verdict other than `holds` or
///   `moved` the commit that changed it, its author and date.
///
/// The next sync reads every file again to fill `cites`.
pub(super) const V20: &str = "
ALTER TABLE memories ADD COLUMN cites TEXT NOT NULL DEFAULT '[]';
CREATE TABLE memory_cites (
    workspace_id INTEGER NOT NULL,
    id           TEXT NOT NULL,
    n            INTEGER NOT NULL,
    path         TEXT NOT NULL,
    anchor       TEXT NOT NULL,
    verdict      TEXT,
    now_start    INTEGER,
    now_end      INTEGER,
    checked_blob TEXT,
    commit_id    TEXT,
    author       TEXT,
    author_name  TEXT,
    author_email TEXT,
    date         TEXT,
    PRIMARY KEY (workspace_id, id, n)
) WITHOUT ROWID;
CREATE INDEX memory_cites_path ON memory_cites (workspace_id, path);
CREATE INDEX memory_cites_due ON memory_cites (workspace_id, id)
    WHERE verdict IS NULL OR verdict NOT IN ('holds', 'moved');
CREATE TRIGGER memory_cites_insert AFTER INSERT ON memories WHEN new.cites <> '[]' BEGIN
    INSERT OR IGNORE INTO memory_cites (workspace_id, id, n, path, anchor)
        SELECT new.workspace_id, new.id, key, json_extract(value, '$.path'), value
        FROM json_each(CASE WHEN json_valid(new.cites) THEN new.cites ELSE '[]' END)
        WHERE type = 'object' AND json_type(value, '$.path') = 'text';
END;
CREATE TRIGGER memory_cites_update AFTER UPDATE OF cites, id, workspace_id ON memories
WHEN old.cites IS NOT new.cites OR old.id IS NOT new.id OR old.workspace_id IS NOT new.workspace_id
BEGIN
    DELETE FROM memory_cites WHERE workspace_id = old.workspace_id AND id = old.id;
    INSERT OR IGNORE INTO memory_cites (workspace_id, id, n, path, anchor)
        SELECT new.workspace_id, new.id, key, json_extract(value, '$.path'), value
        FROM json_each(CASE WHEN json_valid(new.cites) THEN new.cites ELSE '[]' END)
        WHERE type = 'object' AND json_type(value, '$.path') = 'text';
END;
CREATE TRIGGER memory_cites_delete AFTER DELETE ON memories WHEN old.cites <> '[]' BEGIN
    DELETE FROM memory_cites WHERE workspace_id = old.workspace_id AND id = old.id;
END;
UPDATE files SET blob_id = '', racy = 1;
";

/// Version 21, over version 20: `memory_cites.now_path`, the path a cited
/// file was renamed to (`NULL`: where it was cited); checked like its
/// cited path at every sync that changes it.
pub(super) const V21: &str = "
ALTER TABLE memory_cites ADD COLUMN now_path TEXT;
CREATE INDEX memory_cites_now_path ON memory_cites (workspace_id, now_path)
    WHERE now_path IS NOT NULL;
";

/// Version 22, over version 21: `memories_newest`, the memories of a
/// workspace newest first as recall without a query lists them (by
/// `timestamp`, then `id`), so a page of the timeline reads its rows from
/// the index instead of sorting every memory that passes the filters.
pub(super) const V22: &str = "
CREATE INDEX IF NOT EXISTS memories_newest ON memories (workspace_id, timestamp, id);
";
