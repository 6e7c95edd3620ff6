//! The keyword index, goldfish's one keyword engine: a tantivy index beside
//! `index.db` (`index.text/`) that ranks keyword matches with FTS5's bm25
//! formula (what goldfish ranked with before it had this index) in a
//! fraction of the time `bm25()` took (a few milliseconds at a million
//! memories, against hundreds).
//!
//! SQLite stays the truth. Triggers on `memories` append the rowid of every
//! row inserted, changed or deleted to `text_journal` (schema version 4);
//! [`catch_up`] (run after each sync) applies the journal to the tantivy
//! index and commits with a payload naming the database (its
//! `meta.text_index` id) and the last journal entry applied, then prunes
//! what it applied. A recall uses the keyword index only when that payload
//! names this database and the journal's last entry ([`TextIndex::fresh`]);
//! otherwise (never caught up, a sync half way, an index of another
//! database, an unreadable directory) recall catches it up first, and when
//! that cannot be done (an unwritable folder, a full disk) ranks with a
//! copy written in memory from every row ([`TextIndex::in_memory`]): the
//! same engine and scores, only slower, so an answer never misses a row
//! SQLite has.
//!
//! Nor does recall read a damaged file: tantivy ends each with a crc32 of
//! the rest, but reads without checking it (random bytes in a postings list
//! panic, in a fast field change scores). A catch-up checks the files it
//! has not checked and records each one's stamp (`Stamp`) in `meta`
//! (`text_files`); [`TextIndex::fresh`] compares stamps (a write changes a
//! file's ctime) and checks the checksum of a file whose stamp changed,
//! once per process. A damaged file makes the index not fresh, and the
//! next catch-up write every row again. A panic in tantivy all the same is
//! caught (`TextIndex::guarded`): a copy in memory answers, and the next
//! catch-up rebuilds. (A kernel with coarse file times could leave a stamp
//! equal after a write in the very tick the catch-up stamped it; `doctor`
//! checks every checksum.)
//!
//! Fields: `row` (the memory's rowid), `workspace` (its workspace id),
//! `length` (its words in all three texts), all fast, and `content`, `tags`,
//! `files` (word frequencies), analysed like FTS5's `porter unicode61
//! remove_diacritics 2`: words of letters and digits, lowercased, accents
//! folded, Porter's stemming (`Porter`; tantivy's own English stemmer is
//! Porter2, which stems "generated" and "generic" apart where FTS5 does
//! not).
//!
//! [`TextIndex::search`] scores with FTS5's own `bm25(fts, 1.0, 2.0, 0.5)`
//! formula, not tantivy's BM25 (which scores each field on its own): per
//! query word, its frequency weighted over the three texts, the row's whole
//! length against the average, and the word's rarity. The statistics are
//! the searched workspaces' alone (their rows, their average length, the
//! word's rows among them: counted from the postings read anyway, each
//! match's `workspace` checked), never the whole home's, so a repository
//! ranks the same whatever else its user has synced; and a word's rarity
//! is blended with a background table shipped in the binary
//! (`rarity.rs`), so a small repository still tells a rare word from a
//! common one (`tests`: with the blend off, the same scores as an FTS5
//! table of the scope's rows, on fixtures/eval/; with it, FTS5's scores
//! times the blended idf over FTS5's). What is faster is reading:
//! tantivy's compressed postings lists, read once per word into a score
//! per row, instead of FTS5's per-match function call and row-size lookup.
//!
//! `analysis.rs` makes words of a text; `open.rs` opens the index (or a
//! copy in memory) and checks it; `score.rs` scores; `rarity.rs` holds
//! the background table and the blend; `journal.rs` catches
//! it up from `text_journal` and says its standing; `files.rs` keeps its
//! folder, writer, commit payload and files' stamps.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, params};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{
    AsciiFoldingFilter, LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer, Token,
    TokenFilter, TokenStream, Tokenizer,
};
use tantivy::{TantivyDocument, Term};

mod analysis;
mod files;
mod journal;
mod open;
mod rarity;
mod score;
#[cfg(test)]
mod tests;

use analysis::*;
use files::*;
pub use journal::*;
pub use rarity::RARITY_TABLE;

/// Longer words are left out (FTS5 keeps them; tantivy cannot index them).
const MAX_WORD: usize = 1_000;

/// The analyser's name in the index's schema.
const ANALYZER: &str = "goldfish";

/// The weights of content, tags and files in a query (FTS5's bm25 weights).
const WEIGHTS: [f32; 3] = [1.0, 2.0, 0.5];

/// The writer's memory before it flushes a segment.
const WRITER_MEMORY: usize = 64 << 20;

/// How long a catch-up waits for another process's writer (only while
/// another process holds its lock: a lock file that cannot be opened fails
/// at once).
const WRITER_WAIT: Duration = Duration::from_secs(30);

/// The `meta` key of the stamps of the keyword index's files as they were
/// when their checksums last matched ([`Stamp`]).
const FILES_KEY: &str = "text_files";

#[derive(Debug, thiserror::Error)]
pub enum TextError {
    #[error("keyword index {}: {source}", .path.display())]
    Tantivy {
        path: PathBuf,
        #[source]
        source: tantivy::TantivyError,
    },
    #[error("keyword index {}: {source}", .path.display())]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("keyword index {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file of the index cannot be read as written.
    #[error("keyword index {}: {reason}", .path.display())]
    Damaged { path: PathBuf, reason: String },
    /// tantivy panicked reading the index (damage its checksums do not
    /// show): this process uses it no more.
    #[error("keyword index {}: reading it panicked ({message})", .path.display())]
    Panicked { path: PathBuf, message: String },
    /// A search before [`TextIndex::fresh`] checked the index's files.
    #[error("keyword index {}: searched before its files were checked", .path.display())]
    Unchecked { path: PathBuf },
}

/// FTS5's bm25 parameters.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Where the keyword index of the database at `db` lives.
pub fn dir_of(db: &Path) -> PathBuf {
    db.with_extension("text")
}

/// What a commit of the keyword index says it holds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Payload {
    /// The database's `meta.text_index` id.
    db: String,
    /// The last journal entry applied.
    seq: i64,
}

/// What a keyword search found: the matching rows with their BM25 score
/// (as FTS5 computes it), best first, and the score a row of average length
/// holding each of the query's words once would get (Σ idf): how much of the
/// query's word weight a match covers is its score over this.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Matches {
    pub rows: Vec<(i64, f64)>,
    pub full: f64,
}

/// An open keyword index, for reading.
pub struct TextIndex {
    /// The database's file, and the index's folder.
    db: PathBuf,
    dir: PathBuf,
    index: tantivy::Index,
    fields: Fields,
    /// The reader, opened by the first [`TextIndex::fresh`] that finds every
    /// file intact (opening reads the segments).
    reader: std::sync::Mutex<Option<tantivy::IndexReader>>,
    /// The segments [`TextIndex::fresh`] last found intact, to search.
    searcher: std::sync::Mutex<Option<tantivy::Searcher>>,
    /// The files this process found matching their checksums, with their
    /// stamp then.
    verified: std::sync::Mutex<BTreeMap<String, Stamp>>,
    /// tantivy panicked reading the index: this process uses it no more.
    broken: AtomicBool,
    /// Rows and their words by workspace, for the searcher generation
    /// they were counted in.
    totals: std::sync::Mutex<Option<(u64, TotalsByWorkspace)>>,
    /// For a copy in memory ([`TextIndex::in_memory`]): the journal's last
    /// entry when it was written (it holds the rows as they were then).
    memory_at: Option<i64>,
}

/// Rows and their words, by workspace id.
type TotalsByWorkspace = std::sync::Arc<BTreeMap<i64, Totals>>;

#[derive(Debug, Clone, Copy, Default)]
struct Totals {
    rows: u64,
    words: u64,
}

impl TextIndex {}

fn sqlite_at(dir: &Path) -> impl Fn(rusqlite::Error) -> TextError + Copy + '_ {
    move |source| TextError::Sqlite {
        path: dir.to_owned(),
        source,
    }
}

fn tantivy_at(dir: &Path) -> impl Fn(tantivy::TantivyError) -> TextError + Copy + '_ {
    move |source| TextError::Tantivy {
        path: dir.to_owned(),
        source,
    }
}
