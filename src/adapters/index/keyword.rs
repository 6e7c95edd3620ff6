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
//! length against the average, and the word's rows over all rows; so
//! keyword ranking, and the hybrid fusion built on its scores, is the one
//! FTS5 gave (`tests`: the same scores as an FTS5 table of the same rows,
//! on fixtures/eval/). What is faster is reading: tantivy's compressed
//! postings lists, read once per word into a score per row, instead of
//! FTS5's per-match function call and row-size lookup.

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

/// The index's fields.
#[derive(Clone, Copy)]
struct Fields {
    row: Field,
    workspace: Field,
    length: Field,
    text: [Field; 3],
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let row = builder.add_u64_field("row", INDEXED | FAST);
    let workspace = builder.add_i64_field("workspace", FAST);
    let length = builder.add_u64_field("length", FAST);
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let text = ["content", "tags", "files"].map(|name| builder.add_text_field(name, text.clone()));
    (
        builder.build(),
        Fields {
            row,
            workspace,
            length,
            text,
        },
    )
}

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_WORD))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(Porter)
        .build()
}

/// FTS5's `porter` stemming: Porter's original algorithm (Snowball's
/// `porter`), on words of 3 to 64 bytes (FTS5 leaves others alone).
#[derive(Clone, Copy)]
struct Porter;

impl TokenFilter for Porter {
    type Tokenizer<T: Tokenizer> = PorterFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> PorterFilter<T> {
        PorterFilter(tokenizer)
    }
}

#[derive(Clone)]
struct PorterFilter<T>(T);

impl<T: Tokenizer> Tokenizer for PorterFilter<T> {
    type TokenStream<'a> = PorterStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        PorterStream {
            tail: self.0.token_stream(text),
            stemmer: frostem::Stemmer::new(frostem::Algorithm::Porter),
        }
    }
}

struct PorterStream<T> {
    tail: T,
    stemmer: frostem::Stemmer,
}

impl<T: TokenStream> TokenStream for PorterStream<T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        if (3..=64).contains(&token.text.len())
            && let std::borrow::Cow::Owned(stem) = self.stemmer.stem(&token.text)
        {
            token.text = stem;
        }
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

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
    /// Rows and their words in all, for the searcher generation they were
    /// counted in.
    totals: std::sync::Mutex<Option<(u64, Totals)>>,
    /// For a copy in memory ([`TextIndex::in_memory`]): the journal's last
    /// entry when it was written (it holds the rows as they were then).
    memory_at: Option<i64>,
}

#[derive(Debug, Clone, Copy)]
struct Totals {
    rows: u64,
    words: u64,
}

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
    fn checked_searcher(&self, conn: &Connection) -> Result<Option<tantivy::Searcher>, TextError> {
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
    fn guarded<R>(&self, read: impl FnOnce() -> R) -> Result<R, TextError> {
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

    /// The best `limit` matches of any of `words` (stopwords already left
    /// out), in `workspaces` (`None`: every one), as (rowid, bm25 score as
    /// FTS5 computes it), best first, and every match that scores as well
    /// as the last of them (ties at the edge are all there). Reads the
    /// segments the last [`TextIndex::fresh`] checked; a panic in tantivy
    /// is [`TextError::Panicked`].
    pub fn search(
        &self,
        words: &[String],
        workspaces: Option<&[i64]>,
        limit: usize,
    ) -> Result<Matches, TextError> {
        let searcher = self.readable_searcher()?;
        self.guarded(|| self.search_in(&searcher, words, workspaces, limit))
            .inspect_err(|_| {
                // The caller's copy in memory answers whether or not this
                // mark is written.
                if self.memory_at.is_none() {
                    let _ = rebuild_at_next_sync(&self.db);
                }
            })?
    }

    /// The index's analyzer (the one its terms were written with).
    fn analyzer(&self) -> TextAnalyzer {
        self.index
            .tokenizers()
            .get(ANALYZER)
            .unwrap_or_else(analyzer)
    }

    /// The searcher of the segments the last [`TextIndex::fresh`] checked,
    /// unless a read panicked before ([`TextError::Panicked`]).
    fn readable_searcher(&self) -> Result<tantivy::Searcher, TextError> {
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

    /// Whether any live memory of `workspaces` (`None`: every one) holds a
    /// word beginning like each of `words` ([`crate::domain::relevance`]):
    /// a word is stemmed as the index stems it, and any term beginning with
    /// the first [`crate::domain::relevance::PREFIX`] characters of its stem
    /// (the whole stem when shorter) counts, in content, tags or files.
    /// Reads the segments the last [`TextIndex::fresh`] checked.
    pub fn holds(
        &self,
        words: &[String],
        workspaces: Option<&[i64]>,
    ) -> Result<Vec<bool>, TextError> {
        let searcher = self.readable_searcher()?;
        self.guarded(|| self.holds_in(&searcher, words, workspaces))?
    }

    fn holds_in(
        &self,
        searcher: &tantivy::Searcher,
        words: &[String],
        workspaces: Option<&[i64]>,
    ) -> Result<Vec<bool>, TextError> {
        use tantivy::DocSet;
        let tantivy = tantivy_at(&self.dir);
        let io = |source: std::io::Error| TextError::Io {
            path: self.dir.clone(),
            source,
        };
        let mut analyzer = self.analyzer();
        let mut held = Vec::with_capacity(words.len());
        for word in words {
            let mut stream = analyzer.token_stream(word);
            let Some(stem) = stream.next().map(|token| token.text.clone()) else {
                held.push(false);
                continue;
            };
            let prefix = crate::domain::relevance::key(&stem).as_bytes().to_vec();
            let mut found = false;
            'segments: for segment in searcher.segment_readers() {
                let workspace = match workspaces {
                    Some(_) => Some(segment.fast_fields().i64("workspace").map_err(tantivy)?),
                    None => None,
                };
                for field in self.fields.text {
                    let inverted = segment.inverted_index(field).map_err(tantivy)?;
                    let mut terms = inverted
                        .terms()
                        .range()
                        .ge(&prefix)
                        .into_stream()
                        .map_err(io)?;
                    while terms.advance() {
                        if !terms.key().starts_with(&prefix) {
                            break;
                        }
                        let mut postings = inverted
                            .read_postings_from_terminfo(terms.value(), IndexRecordOption::Basic)
                            .map_err(io)?;
                        let mut doc = postings.doc();
                        while doc != tantivy::TERMINATED {
                            let alive = segment
                                .alive_bitset()
                                .is_none_or(|alive| alive.is_alive(doc));
                            let in_scope = match (workspaces, &workspace) {
                                (Some(ids), Some(column)) => {
                                    column.first(doc).is_some_and(|id| ids.contains(&id))
                                }
                                _ => true,
                            };
                            if alive && in_scope {
                                found = true;
                                break 'segments;
                            }
                            doc = postings.advance();
                        }
                    }
                }
            }
            held.push(found);
        }
        Ok(held)
    }

    fn search_in(
        &self,
        searcher: &tantivy::Searcher,
        words: &[String],
        workspaces: Option<&[i64]>,
        limit: usize,
    ) -> Result<Matches, TextError> {
        let tantivy = tantivy_at(&self.dir);
        let io = |source: std::io::Error| TextError::Io {
            path: self.dir.clone(),
            source,
        };
        let mut analyzer = self.analyzer();
        // FTS5 matches each quoted word as a phrase of its tokens; goldfish's
        // words are letters and digits, one token each.
        let mut terms: Vec<String> = Vec::new();
        for word in words {
            let mut stream = analyzer.token_stream(word);
            while let Some(token) = stream.next() {
                if !terms.contains(&token.text) {
                    terms.push(token.text.clone());
                }
            }
        }
        if terms.is_empty() || limit == 0 {
            return Ok(Matches::default());
        }
        let totals = self.totals(searcher)?;
        if totals.rows == 0 {
            return Ok(Matches::default());
        }
        let segments = searcher.segment_readers();
        // Per word and segment: the matching rows and their weighted
        // frequency (content 1, tags 2, files 0.5), by document.
        let mut matches: Vec<Vec<Vec<(u32, f64)>>> = Vec::with_capacity(terms.len());
        for term in &terms {
            let mut per_segment = Vec::with_capacity(segments.len());
            for segment in segments {
                let mut lists = Vec::new();
                for (field, weight) in self.fields.text.iter().zip(WEIGHTS) {
                    let postings = segment
                        .inverted_index(*field)
                        .map_err(tantivy)?
                        .read_postings(
                            &Term::from_field_text(*field, term),
                            IndexRecordOption::WithFreqs,
                        )
                        .map_err(io)?;
                    if let Some(postings) = postings {
                        lists.push((postings, f64::from(weight)));
                    }
                }
                per_segment.push(merge(lists, segment.alive_bitset()));
            }
            matches.push(per_segment);
        }
        let avgdl = totals.words as f64 / totals.rows as f64;
        let n = totals.rows as f64;
        let idf: Vec<f64> = matches
            .iter()
            .map(|per_segment| {
                let hits = per_segment.iter().map(Vec::len).sum::<usize>() as f64;
                let idf = ((n - hits + 0.5) / (hits + 0.5)).ln();
                if idf <= 0.0 { 1e-6 } else { idf }
            })
            .collect();
        let mut scored: Vec<(f64, i64)> = Vec::new();
        for (s, segment) in segments.iter().enumerate() {
            let fast = segment.fast_fields();
            let length = fast.u64("length").map_err(tantivy)?;
            let row = fast.u64("row").map_err(tantivy)?;
            let workspace = match workspaces {
                Some(_) => Some(fast.i64("workspace").map_err(tantivy)?),
                None => None,
            };
            // Scores by document (a match scores above 0: its word's idf
            // is at least 1e-6), and the documents scored.
            let mut score = vec![0.0f64; segment.max_doc() as usize];
            let mut scored_docs: Vec<u32> = Vec::new();
            for (t, per_segment) in matches.iter().enumerate() {
                for &(doc, f) in &per_segment[s] {
                    let dl = length.first(doc).unwrap_or(0) as f64;
                    let slot = &mut score[doc as usize];
                    if *slot == 0.0 {
                        scored_docs.push(doc);
                    }
                    *slot += idf[t] * (f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * dl / avgdl));
                }
            }
            for doc in scored_docs {
                if let (Some(ids), Some(column)) = (workspaces, &workspace)
                    && !column.first(doc).is_some_and(|id| ids.contains(&id))
                {
                    continue;
                }
                if let Some(row) = row.first(doc) {
                    scored.push((score[doc as usize], row as i64));
                }
            }
        }
        let by_score = |a: &(f64, i64), b: &(f64, i64)| b.0.total_cmp(&a.0);
        if scored.len() > limit {
            scored.select_nth_unstable_by(limit - 1, by_score);
            let edge = scored[limit - 1].0;
            let (top, rest) = scored.split_at_mut(limit);
            let mut kept = top.to_vec();
            kept.extend(rest.iter().filter(|(score, _)| *score >= edge));
            scored = kept;
        }
        scored.sort_by(by_score);
        Ok(Matches {
            rows: scored
                .into_iter()
                .map(|(score, row)| (row, score))
                .collect(),
            // A row of average length holding each word once, in its
            // content: idf × (f (K1 + 1)) / (f + K1) with f = 1 is idf.
            full: idf.iter().sum(),
        })
    }

    /// Rows and their words in all, counted once per searcher generation.
    fn totals(&self, searcher: &tantivy::Searcher) -> Result<Totals, TextError> {
        let generation = searcher.generation().generation_id();
        let mut cached = self.totals.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, totals)) = *cached
            && at == generation
        {
            return Ok(totals);
        }
        let mut totals = Totals { rows: 0, words: 0 };
        for segment in searcher.segment_readers() {
            let length = segment
                .fast_fields()
                .u64("length")
                .map_err(tantivy_at(&self.dir))?;
            for doc in 0..segment.max_doc() {
                if segment
                    .alive_bitset()
                    .is_none_or(|alive| alive.is_alive(doc))
                {
                    totals.rows += 1;
                    totals.words += length.first(doc).unwrap_or(0);
                }
            }
        }
        *cached = Some((generation, totals));
        Ok(totals)
    }
}

/// The live documents of `lists` (one word's postings in each text, with
/// the text's weight) and their weighted frequency, by document.
fn merge(
    mut lists: Vec<(tantivy::postings::SegmentPostings, f64)>,
    alive: Option<&tantivy::fastfield::AliveBitSet>,
) -> Vec<(u32, f64)> {
    use tantivy::{DocSet, TERMINATED, postings::Postings};
    let mut out = Vec::new();
    loop {
        let Some(doc) = lists.iter().map(|(p, _)| p.doc()).min() else {
            return out;
        };
        if doc == TERMINATED {
            return out;
        }
        let mut f = 0.0;
        for (postings, weight) in &mut lists {
            if postings.doc() == doc {
                f += *weight * f64::from(postings.term_freq());
                postings.advance();
            }
        }
        if alive.is_none_or(|alive| alive.is_alive(doc)) {
            out.push((doc, f));
        }
    }
}

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
fn holds_all(conn: &Connection, committed: Option<&Payload>) -> rusqlite::Result<bool> {
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
    let index = match open_or_create(&dir, &schema) {
        Ok(index) => index,
        Err(_) => {
            // Unreadable or of another schema: it is derived, so start over.
            std::fs::remove_dir_all(&dir).map_err(|source| TextError::Io {
                path: dir.clone(),
                source,
            })?;
            open_or_create(&dir, &schema).map_err(tantivy)?
        }
    };
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
    let rows = add_rows(&writer, fields, &mut query, &dir, written)?;
    drop(query);
    drop(statement);
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

/// Adds a document for each of `rows` (rowid, workspace id, content, tags,
/// files) with `writer`; how many. A failed write is `failed`'s error.
fn add_rows(
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

/// The keyword index written in `dir`, its analyser registered; `None`
/// when none was, an error when it is unreadable or of another schema.
fn existing(dir: &Path, schema: &Schema) -> tantivy::Result<Option<tantivy::Index>> {
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

fn open_or_create(dir: &Path, schema: &Schema) -> tantivy::Result<tantivy::Index> {
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
fn unwritable(dir: &Path) -> Option<TextError> {
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
fn writer(index: &tantivy::Index, dir: &Path) -> Result<tantivy::IndexWriter, TextError> {
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
fn committed(index: &tantivy::Index) -> tantivy::Result<Option<Payload>> {
    Ok(payload(&index.load_metas()?))
}

fn payload(metas: &tantivy::IndexMeta) -> Option<Payload> {
    metas
        .payload
        .as_deref()
        .and_then(|payload| serde_json::from_str(payload).ok())
}

/// What a segment file looked like when its checksum matched: its size,
/// inode, and modification and change times (seconds, nanoseconds). A
/// write to the file changes its change time, which no one sets back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Stamp(u64, u64, i64, i64, i64, i64);

impl Stamp {
    fn of(metadata: &std::fs::Metadata) -> Stamp {
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
fn stamps(
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
fn intact(
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
fn recorded(conn: &Connection) -> rusqlite::Result<BTreeMap<String, Stamp>> {
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

fn record(conn: &Connection, stamps: &BTreeMap<String, Stamp>) -> rusqlite::Result<()> {
    let value = serde_json::to_string(stamps).expect("stamps serialise");
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
        params![FILES_KEY, value],
    )?;
    Ok(())
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
fn journal_end(conn: &Connection) -> rusqlite::Result<i64> {
    Ok(conn
        .query_row(
            "SELECT seq FROM sqlite_sequence WHERE name = 'text_journal'",
            [],
            |row| row.get(0),
        )
        .optional()?
        .unwrap_or(0))
}

fn db_id(conn: &Connection) -> rusqlite::Result<Option<String>> {
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
fn ensure_db_id(conn: &Connection) -> rusqlite::Result<String> {
    if let Some(id) = db_id(conn)? {
        return Ok(id);
    }
    conn.execute(
        "INSERT OR IGNORE INTO meta (key, value) VALUES ('text_index', ?1)",
        params![crate::domain::memory::new_id(jiff::Timestamp::now())],
    )?;
    Ok(db_id(conn)?.expect("just written"))
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::index::Index;

    /// The lowercased words of `text` (goldfish's query words, stopwords
    /// kept: more matches to compare).
    fn query_words(text: &str) -> Vec<String> {
        let mut words: Vec<String> = Vec::new();
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            if !words.contains(&word.to_lowercase()) {
                words.push(word.to_lowercase());
            }
        }
        words
    }

    fn index_with(memories: &[(i64, &str, &str, &str)]) -> (tempfile::TempDir, Index) {
        let (dir, index) = crate::adapters::index::two_workspaces();
        for (n, (workspace, content, tags, files)) in memories.iter().enumerate() {
            insert(&index, n, *workspace, content, tags, files);
        }
        (dir, index)
    }

    fn insert(index: &Index, n: usize, workspace: i64, content: &str, tags: &str, files: &str) {
        index
            .conn
            .execute(
                "INSERT INTO memories (workspace_id, id, file, line, record_hash, content_hash,
                    timestamp, type, content, tags, files)
                 VALUES (?1, ?2, 'f.jsonl', ?3, ?2, ?2, '2026-11-01T10:00:00.000Z', 'insight', ?4, ?5, ?6)",
                params![workspace, format!("01M{n:05}"), n as i64, content, tags, files],
            )
            .unwrap();
    }

    /// FTS5's scores of every match of `words`, by rowid: the oracle the
    /// keyword index's scores are held to (the index itself has no FTS5
    /// table since schema 10), an FTS5 table of the memories' texts as the
    /// index had it, written anew for each question.
    fn fts5(index: &Index, words: &[String]) -> Vec<(i64, f64)> {
        index
            .conn
            .execute_batch(
                "DROP TABLE IF EXISTS temp.oracle;
                 CREATE VIRTUAL TABLE temp.oracle USING fts5(
                     content, tags, files,
                     tokenize = 'porter unicode61 remove_diacritics 2'
                 );
                 INSERT INTO temp.oracle (rowid, content, tags, files)
                     SELECT rowid, content, tags, files FROM memories;",
            )
            .unwrap();
        let query = words
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" OR ");
        let mut statement = index
            .conn
            .prepare(
                "SELECT rowid, -bm25(oracle, 1.0, 2.0, 0.5) FROM temp.oracle
                 WHERE oracle MATCH ?1",
            )
            .unwrap();
        let mut scores: Vec<(i64, f64)> = statement
            .query_map([query], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        scores.sort_by_key(|(row, _)| *row);
        scores
    }

    fn search_all(text: &TextIndex, words: &[String]) -> Vec<(i64, f64)> {
        let mut scores = text.search(words, None, 1_000_000).unwrap().rows;
        scores.sort_by_key(|(row, _)| *row);
        scores
    }

    fn assert_same_scores(ours: &[(i64, f64)], fts5: &[(i64, f64)], what: &str) {
        assert_eq!(
            ours.iter().map(|(row, _)| *row).collect::<Vec<_>>(),
            fts5.iter().map(|(row, _)| *row).collect::<Vec<_>>(),
            "{what}: the same matches"
        );
        for ((row, a), (_, b)) in ours.iter().zip(fts5) {
            assert!(
                (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                "{what}: row {row} scores {a} here, {b} in FTS5"
            );
        }
    }

    /// The keyword index scores every match of every question of
    /// fixtures/eval/ as FTS5's bm25() does, over the set's memories with
    /// their tags and files.
    #[test]
    fn scores_are_fts5s_on_the_project_set() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/eval");
        let memories: Vec<serde_json::Value> = std::fs::read_to_string(root.join("memories.jsonl"))
            .unwrap()
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let rows: Vec<(i64, String, String, String)> = memories
            .iter()
            .map(|m| {
                (
                    1,
                    m["content"].as_str().unwrap().to_owned(),
                    m.get("tags").map_or("[]".to_owned(), |t| t.to_string()),
                    m.get("files").map_or("[]".to_owned(), |f| f.to_string()),
                )
            })
            .collect();
        let borrowed: Vec<(i64, &str, &str, &str)> = rows
            .iter()
            .map(|(w, c, t, f)| (*w, c.as_str(), t.as_str(), f.as_str()))
            .collect();
        let (_dir, index) = index_with(&borrowed);
        assert_eq!(
            catch_up(&index.conn, &index.path).unwrap(),
            CaughtUp::Rebuilt {
                rows: memories.len()
            }
        );
        let text = TextIndex::open(&index.path).unwrap().unwrap();
        assert!(text.fresh(&index.conn).unwrap());
        let questions: Vec<serde_json::Value> =
            serde_json::from_str(&std::fs::read_to_string(root.join("questions.json")).unwrap())
                .unwrap();
        let mut matched = 0;
        for question in &questions {
            let question = question["question"].as_str().unwrap();
            let words = query_words(question);
            let ours = search_all(&text, &words);
            matched += ours.len();
            assert_same_scores(&ours, &fts5(&index, &words), question);
        }
        assert!(matched > 3000, "{matched} matches in all");
    }

    /// Rows inserted, changed and deleted reach the keyword index at the
    /// next catch-up; until then it says it is not fresh. An index left
    /// from another database is written again.
    #[test]
    fn the_journal_brings_changes_and_a_new_database_a_rebuild() {
        let (dir, index) = index_with(&[
            (1, "the pool size is eight", "[\"pool\"]", "[]"),
            (2, "a deadlock in the wal", "[]", "[\"src/wal.rs\"]"),
        ]);
        assert_eq!(
            standing(&index.conn, &index.path).unwrap(),
            Standing::Unwritten
        );
        assert_eq!(
            catch_up(&index.conn, &index.path).unwrap(),
            CaughtUp::Rebuilt { rows: 2 }
        );
        assert_eq!(catch_up(&index.conn, &index.path).unwrap(), CaughtUp::Fresh);
        assert_eq!(
            standing(&index.conn, &index.path).unwrap(),
            Standing::Fresh { rows: 2 }
        );
        let text = TextIndex::open(&index.path).unwrap().unwrap();
        assert!(text.fresh(&index.conn).unwrap());
        let words = query_words;
        assert_eq!(search_all(&text, &words("pool")).len(), 1);
        // Only in workspace 2.
        assert_eq!(
            text.search(&words("deadlock"), Some(&[1]), 10)
                .unwrap()
                .rows,
            vec![]
        );
        assert_eq!(
            text.search(&words("deadlock"), Some(&[2]), 10)
                .unwrap()
                .rows
                .len(),
            1
        );

        insert(&index, 7, 1, "another pool note", "[]", "[]");
        assert!(!text.fresh(&index.conn).unwrap(), "a row the index lacks");
        index
            .conn
            .execute(
                "UPDATE memories SET content = 'a livelock in the wal' WHERE id = '01M00001'",
                [],
            )
            .unwrap();
        index
            .conn
            .execute("DELETE FROM memories WHERE id = '01M00000'", [])
            .unwrap();
        assert_eq!(
            standing(&index.conn, &index.path).unwrap(),
            Standing::Behind { changes: 3 },
            "the new row, the changed one, the deleted one"
        );
        assert_eq!(
            catch_up(&index.conn, &index.path).unwrap(),
            CaughtUp::Applied { rows: 2 },
            "the new row and the changed one (the deleted one is only removed)"
        );
        assert!(text.fresh(&index.conn).unwrap());
        for query in ["pool", "deadlock", "livelock wal", "zebra"] {
            assert_same_scores(
                &search_all(&text, &words(query)),
                &fts5(&index, &words(query)),
                query,
            );
        }
        assert_eq!(search_all(&text, &words("deadlock")), vec![]);
        let journal: i64 = index
            .conn
            .query_row("SELECT count(*) FROM text_journal", [], |row| row.get(0))
            .unwrap();
        assert_eq!(journal, 0, "applied entries are pruned");

        // The database goes (it is derived) and comes back with one row:
        // the old keyword index is not taken for its.
        drop(text);
        drop(index);
        std::fs::remove_file(dir.path().join("index.db")).unwrap();
        let index = Index::open(&dir.path().join("index.db")).unwrap();
        index
            .conn
            .execute_batch("INSERT INTO workspaces (id, root, name) VALUES (1, '/a', 'a');")
            .unwrap();
        insert(&index, 0, 1, "a fresh start", "[]", "[]");
        let text = TextIndex::open(&index.path).unwrap().unwrap();
        assert!(
            !text.fresh(&index.conn).unwrap(),
            "written for another database"
        );
        assert_eq!(
            standing(&index.conn, &index.path).unwrap(),
            Standing::Unwritten
        );
        assert_eq!(
            catch_up(&index.conn, &index.path).unwrap(),
            CaughtUp::Rebuilt { rows: 1 }
        );
        assert!(text.fresh(&index.conn).unwrap());
        assert_eq!(search_all(&text, &words("livelock")), vec![]);
        assert_eq!(search_all(&text, &words("fresh start")).len(), 1);
    }

    /// 600 rows of a small vocabulary (postings lists long enough for
    /// blocks), caught up; then one deleted and caught up again, so its
    /// segment has a deletion bitset (`.del`).
    fn busy_index() -> (tempfile::TempDir, Index) {
        const WORDS: [&str; 12] = [
            "pool", "size", "wal", "deadlock", "cache", "eviction", "lock", "index", "query",
            "merge", "hook", "branch",
        ];
        let (dir, index) = crate::adapters::index::two_workspaces();
        for n in 0..600 {
            let content: Vec<&str> = (0..8).map(|k| WORDS[(n * 7 + k * k * 5) % 12]).collect();
            insert(
                &index,
                n,
                1 + (n % 2) as i64,
                &content.join(" "),
                "[]",
                "[]",
            );
        }
        assert_eq!(
            catch_up(&index.conn, &index.path).unwrap(),
            CaughtUp::Rebuilt { rows: 600 }
        );
        index
            .conn
            .execute("DELETE FROM memories WHERE id = '01M00007'", [])
            .unwrap();
        assert_eq!(
            catch_up(&index.conn, &index.path).unwrap(),
            CaughtUp::Applied { rows: 0 }
        );
        (dir, index)
    }

    /// The files of the index's folder whose name ends with `.kind`.
    fn files_of_kind(db: &Path, kind: &str) -> Vec<PathBuf> {
        std::fs::read_dir(dir_of(db))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.to_string_lossy().ends_with(&format!(".{kind}")))
            .collect()
    }

    /// tantivy's CRC-32 (IEEE), for a forged footer.
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for byte in bytes {
            crc ^= u32::from(*byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    /// Writes pseudo-random bytes over the middle half of the body of
    /// `file` (before tantivy's footer: its JSON, its length, a magic
    /// number), in place; `forge`: and writes the footer's checksum of the
    /// new body, so only reading it shows the damage.
    fn scribble(file: &Path, forge: bool) {
        let mut bytes = std::fs::read(file).unwrap();
        let len = bytes.len();
        let footer = u32::from_le_bytes(bytes[len - 8..len - 4].try_into().unwrap()) as usize;
        let body = len - 8 - footer;
        let before = bytes.clone();
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        for byte in &mut bytes[body / 4..body * 3 / 4] {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *byte = state as u8;
        }
        assert_ne!(bytes, before, "{} changed", file.display());
        if forge {
            let mut json: serde_json::Value =
                serde_json::from_slice(&bytes[body..body + footer]).unwrap();
            json["crc"] = crc32(&bytes[..body]).into();
            let json = serde_json::to_vec(&json).unwrap();
            bytes.truncate(body);
            bytes.extend_from_slice(&json);
            bytes.extend_from_slice(&(json.len() as u32).to_le_bytes());
            bytes.extend_from_slice(&1337u32.to_le_bytes());
        }
        // Later than the catch-up that stamped it, on a kernel whose file
        // times are coarse as well.
        std::thread::sleep(Duration::from_millis(20));
        use std::io::Write;
        let mut handle = std::fs::OpenOptions::new().write(true).open(file).unwrap();
        handle.write_all(&bytes).unwrap();
        handle.set_len(bytes.len() as u64).unwrap();
    }

    /// MEDIUM 2: a file of any kind of a segment with random bytes in it:
    /// the keyword index is not fresh (recall uses FTS5), `standing` names
    /// the file for doctor, a sync with nothing to write sees it lags, and
    /// the catch-up writes every row again; then it scores as FTS5.
    #[test]
    fn medium_2_a_damaged_file_of_any_kind_is_found_and_written_again() {
        let words = query_words;
        for kind in ["idx", "term", "pos", "store", "fast", "fieldnorm", "del"] {
            let (_dir, index) = busy_index();
            let reader = TextIndex::open(&index.path).unwrap().unwrap();
            assert!(reader.fresh(&index.conn).unwrap(), ".{kind}");
            assert!(holds_everything(&index.conn, &index.path).unwrap());
            let files = files_of_kind(&index.path, kind);
            assert!(!files.is_empty(), "a .{kind} file");
            for file in &files {
                scribble(file, false);
            }
            // A reader open before, and one opened now.
            assert!(!reader.fresh(&index.conn).unwrap(), ".{kind}");
            let text = TextIndex::open(&index.path).unwrap().unwrap();
            assert!(!text.fresh(&index.conn).unwrap(), ".{kind}");
            match standing(&index.conn, &index.path).unwrap() {
                Standing::Damaged(damage) => {
                    assert!(files.contains(&damage.file), ".{kind}: {damage:?}")
                }
                other => panic!(".{kind}: {other:?}"),
            }
            assert!(!holds_everything(&index.conn, &index.path).unwrap());
            assert_eq!(
                catch_up(&index.conn, &index.path).unwrap(),
                CaughtUp::Rebuilt { rows: 599 },
                ".{kind}"
            );
            assert_eq!(
                standing(&index.conn, &index.path).unwrap(),
                Standing::Fresh { rows: 599 }
            );
            assert!(holds_everything(&index.conn, &index.path).unwrap());
            for text in [&reader, &text] {
                assert!(text.fresh(&index.conn).unwrap(), ".{kind}");
                for query in ["pool size", "deadlock wal", "hook branch merge"] {
                    assert_same_scores(
                        &search_all(text, &words(query)),
                        &fts5(&index, &words(query)),
                        query,
                    );
                }
            }
        }
    }

    /// MEDIUM 2, the last resort: damage that the checksums do not show (a
    /// forged footer) makes tantivy panic reading postings. The panic stays
    /// inside: the search is an error (FTS5 answers), the index is used no
    /// more, and the next catch-up writes every row again.
    #[test]
    fn medium_2_a_panic_in_tantivy_is_caught_and_the_index_written_again() {
        let (_dir, index) = busy_index();
        let words = query_words;
        for file in files_of_kind(&index.path, "idx") {
            scribble(&file, true);
        }
        let text = TextIndex::open(&index.path).unwrap().unwrap();
        assert!(text.fresh(&index.conn).unwrap(), "the checksums match");
        let searched = text.search(&words("pool size deadlock"), None, 10);
        assert!(
            matches!(searched, Err(TextError::Panicked { .. })),
            "{searched:?}"
        );
        assert!(!text.fresh(&index.conn).unwrap(), "used no more");
        assert!(!holds_everything(&index.conn, &index.path).unwrap());
        assert_eq!(
            catch_up(&index.conn, &index.path).unwrap(),
            CaughtUp::Rebuilt { rows: 599 }
        );
        let text = TextIndex::open(&index.path).unwrap().unwrap();
        assert!(text.fresh(&index.conn).unwrap());
        assert_same_scores(
            &search_all(&text, &words("pool size deadlock")),
            &fts5(&index, &words("pool size deadlock")),
            "written again",
        );
    }

    /// MEDIUM 3: a writer lock file that cannot be opened (an unwritable
    /// folder) is an error naming it at once; it was retried for 30 s as
    /// if another process held it.
    #[test]
    fn medium_3_a_lock_file_that_cannot_be_opened_fails_at_once() {
        let (_dir, index) = busy_index();
        let lock = dir_of(&index.path).join(".tantivy-writer.lock");
        std::fs::remove_file(&lock).unwrap();
        std::fs::create_dir(&lock).unwrap();
        insert(&index, 1000, 1, "one more pool", "[]", "[]");
        let started = Instant::now();
        let err = catch_up(&index.conn, &index.path).unwrap_err();
        assert!(
            started.elapsed() < WRITER_WAIT / 3,
            "{:?}",
            started.elapsed()
        );
        assert!(
            matches!(&err, TextError::Io { path, .. } if *path == lock),
            "{err:?}"
        );
        assert!(err.to_string().contains(&lock.display().to_string()));
    }
}
