//! Embeddings in the index and the vector stage of recall.
//!
//! Vector search runs in three stages: every stored vector's sign bits (one
//! bit per dimension, 48 bytes for 384 dimensions) are held in memory and
//! compared with the query's by Hamming distance, keeping 8 × the candidates
//! (at least 16,384); an estimate of the cosine from the query's values and
//! those signs keeps the candidates (2,000 for recall); they are re-ranked by
//! exact cosine on their stored vectors (a byte a dimension, see
//! [`to_compact`]), read from SQLite by rowid. The bits
//! of a million vectors take 48 MB and scan in milliseconds.

use std::cell::RefCell;

use rusqlite::{OptionalExtension, params};

use super::{Index, IndexError};
use crate::adapters::embed::{EmbedError, Embedder, TextKind, cosine};

/// A query vector as cached: little-endian f32 (sqlite-vec's float format).
pub fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn from_blob(blob: &[u8]) -> Vec<f32> {
    blob.chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// A memory's vector as stored: one signed byte per dimension, each
/// component scaled so that the largest magnitude is 127, and rounded. The
/// scale is not kept: stored vectors are unit vectors and only their
/// direction is ever used (cosine), so [`from_compact`] normalises again.
/// A quarter of the f32 bytes; the top 10 by exact cosine against the f32
/// vectors is measured in docs/BENCHMARKS.md ("compact vectors").
pub fn to_compact(vector: &[f32]) -> Vec<u8> {
    let largest = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
    if largest == 0.0 || !largest.is_finite() {
        return vec![0; vector.len()];
    }
    let scale = 127.0 / largest;
    vector
        .iter()
        .map(|x| (x * scale).round().clamp(-127.0, 127.0) as i8 as u8)
        .collect()
}

/// The unit vector of a [`to_compact`] blob.
pub fn from_compact(blob: &[u8]) -> Vec<f32> {
    let mut vector: Vec<f32> = blob.iter().map(|&b| f32::from(b as i8)).collect();
    crate::adapters::embed::normalize(&mut vector);
    vector
}

/// One bit per dimension, set when the component is positive, packed into
/// little-endian u64 words.
pub fn code(vector: &[f32]) -> Vec<u8> {
    let mut bytes = vec![0u8; vector.len().div_ceil(64) * 8];
    for (i, x) in vector.iter().enumerate() {
        if *x > 0.0 {
            bytes[i / 8] |= 1 << (i % 8);
        }
    }
    bytes
}

fn words(code: &[u8]) -> impl Iterator<Item = u64> + '_ {
    code.chunks_exact(8)
        .map(|b| u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
}

#[derive(Debug, thiserror::Error)]
pub enum VectorError {
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
}

/// The bit codes of one model's vectors, in memory.
#[derive(Debug, Default)]
pub(super) struct CodeCache {
    model: String,
    words_per_code: usize,
    rowids: Vec<i64>,
    words: Vec<u64>,
    /// Highest rowid loaded, to load only newer rows later.
    max_rowid: i64,
    /// Highest rowid of the table (any model) when last refreshed.
    seen_rowid: i64,
}

/// A vector-stage hit: an embedded content hash and its cosine similarity.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorHit {
    pub content_hash: String,
    pub similarity: f32,
}

/// What an embedding pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct EmbedReport {
    /// Texts run through the model.
    pub embedded: usize,
    /// Hashes left in the queue (not embedded yet).
    pub pending: u64,
}

impl Index {
    /// The model the stored vectors belong to.
    pub fn embedding_model(&self) -> Result<Option<String>, IndexError> {
        self.conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'embedding_model'",
                [],
                |row| row.get(0),
            )
            .optional()
            .map_err(self.sqlite())
    }

    /// Makes `model_id` the model of the index's vectors. When it changes,
    /// the other model's vectors and cached queries are dropped and every
    /// memory is queued for embedding: vector spaces never mix.
    pub fn use_model(&mut self, model_id: &str) -> Result<bool, IndexError> {
        if self.embedding_model()?.as_deref() == Some(model_id) {
            return Ok(false);
        }
        let sqlite = super::sqlite_at(&self.path);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        tx.execute(
            "DELETE FROM embeddings WHERE model <> ?1",
            params![model_id],
        )
        .map_err(sqlite)?;
        tx.execute(
            "DELETE FROM query_cache WHERE model <> ?1",
            params![model_id],
        )
        .map_err(sqlite)?;
        tx.execute(
            "INSERT OR IGNORE INTO embed_queue (content_hash)
             SELECT DISTINCT m.content_hash FROM memories m
              WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.content_hash = m.content_hash AND e.model = ?1)",
            params![model_id],
        )
        .map_err(sqlite)?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('embedding_model', ?1)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![model_id],
        )
        .map_err(sqlite)?;
        tx.commit().map_err(sqlite)?;
        *self.codes.borrow_mut() = CodeCache::default();
        Ok(true)
    }

    /// SQLite's `PRAGMA data_version`: it changes when another connection
    /// commits to the index, never for this one's own writes.
    pub fn data_version(&self) -> Result<i64, IndexError> {
        self.conn
            .query_row("PRAGMA data_version", [], |row| row.get(0))
            .map_err(self.sqlite())
    }

    /// Content hashes waiting to be embedded.
    pub fn pending_embeddings(&self) -> Result<u64, IndexError> {
        self.conn
            .query_row("SELECT count(*) FROM embed_queue", [], |row| {
                row.get::<_, i64>(0)
            })
            .map(|n| n as u64)
            .map_err(self.sqlite())
    }

    /// Of a workspace's memory rows, (how many wait for a vector, how many
    /// there are).
    pub fn workspace_pending(&self, workspace_id: i64) -> Result<(u64, u64), IndexError> {
        self.conn
            .query_row(
                "SELECT coalesce(sum(EXISTS (SELECT 1 FROM embed_queue q WHERE q.content_hash = m.content_hash)), 0),
                        count(*)
                   FROM memories m WHERE m.workspace_id = ?1",
                params![workspace_id],
                |row| Ok((row.get::<_, i64>(0)? as u64, row.get::<_, i64>(1)? as u64)),
            )
            .map_err(self.sqlite())
    }

    /// Queued content hashes that no memory row has: none in an index of
    /// this schema (the triggers drop them); an index written by an older
    /// goldfish could hold any number, and then a sync that brings such
    /// content back failed.
    pub fn stale_embeddings(&self) -> Result<u64, IndexError> {
        self.conn
            .query_row(
                "SELECT count(*) FROM embed_queue q
                  WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.content_hash = q.content_hash)",
                [],
                |row| row.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(self.sqlite())
    }

    /// Embeds queued content with `embedder`, `batch` texts per transaction,
    /// at most `limit` texts (all when `None`). `progress(done, total)` is
    /// called after each batch.
    pub fn embed_pending(
        &mut self,
        embedder: &mut dyn Embedder,
        limit: Option<usize>,
        progress: &mut dyn FnMut(usize, u64),
    ) -> Result<EmbedReport, VectorError> {
        const BATCH: usize = 128;
        self.use_model(embedder.model_id())?;
        let model = embedder.model_id().to_owned();
        let total = self.pending_embeddings()?;
        let mut report = EmbedReport::default();
        loop {
            let room = limit.map_or(BATCH, |limit| BATCH.min(limit - report.embedded));
            if room == 0 {
                break;
            }
            let rows: Vec<(String, Option<String>, bool)> = {
                let mut statement = self
                    .conn
                    .prepare_cached(
                        "SELECT q.content_hash,
                                (SELECT m.content FROM memories m WHERE m.content_hash = q.content_hash LIMIT 1),
                                EXISTS (SELECT 1 FROM embeddings e WHERE e.content_hash = q.content_hash AND e.model = ?1)
                         FROM embed_queue q LIMIT ?2",
                    )
                    .map_err(self.sqlite())?;
                statement
                    .query_map(params![model, room as i64], |row| {
                        Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                    })
                    .and_then(|rows| rows.collect::<Result<_, _>>())
                    .map_err(self.sqlite())?
            };
            if rows.is_empty() {
                break;
            }
            let todo: Vec<(&str, &str)> = rows
                .iter()
                .filter(|(_, content, done)| content.is_some() && !done)
                .map(|(hash, content, _)| (hash.as_str(), content.as_deref().unwrap_or_default()))
                .collect();
            let texts: Vec<&str> = todo.iter().map(|(_, text)| *text).collect();
            let vectors = if texts.is_empty() {
                Vec::new()
            } else {
                embedder.embed(&texts, TextKind::Document)?
            };
            let sqlite = super::sqlite_at(&self.path);
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(sqlite)?;
            for ((hash, _), vector) in todo.iter().zip(&vectors) {
                tx.prepare_cached(
                    "INSERT OR IGNORE INTO embeddings (content_hash, model, vector, code) VALUES (?1, ?2, ?3, ?4)",
                )
                .and_then(|mut s| s.execute(params![hash, model, to_compact(vector), code(vector)]))
                .map_err(sqlite)?;
            }
            for (hash, _, _) in &rows {
                tx.prepare_cached("DELETE FROM embed_queue WHERE content_hash = ?1")
                    .and_then(|mut s| s.execute(params![hash]))
                    .map_err(sqlite)?;
            }
            tx.commit().map_err(sqlite)?;
            report.embedded += texts.len();
            progress(report.embedded, total);
        }
        report.pending = self.pending_embeddings()?;
        Ok(report)
    }

    /// Stores vectors for content hashes directly (benchmarks and tests of
    /// the vector stage; sync stores through [`Index::embed_pending`]).
    pub fn insert_embeddings<'a>(
        &mut self,
        model: &str,
        vectors: impl IntoIterator<Item = (&'a str, &'a [f32])>,
    ) -> Result<(), IndexError> {
        let sqlite = super::sqlite_at(&self.path);
        let tx = self.conn.transaction().map_err(sqlite)?;
        {
            let mut statement = tx
                .prepare(
                    "INSERT OR REPLACE INTO embeddings (content_hash, model, vector, code) VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(sqlite)?;
            for (hash, vector) in vectors {
                statement
                    .execute(params![hash, model, to_compact(vector), code(vector)])
                    .map_err(sqlite)?;
            }
        }
        tx.commit().map_err(sqlite)
    }

    /// The embedding of `query` under `model`: from the cache, else from
    /// `embed` (called only on a miss, so a repeated query never loads the
    /// model), which is then cached.
    pub fn query_vector<E: From<IndexError>>(
        &mut self,
        model: &str,
        query: &str,
        embed: impl FnOnce() -> Result<Vec<f32>, E>,
    ) -> Result<Vec<f32>, E> {
        let cached: Option<Vec<u8>> = self
            .conn
            .query_row(
                "SELECT vector FROM query_cache WHERE model = ?1 AND query = ?2",
                params![model, query],
                |row| row.get(0),
            )
            .optional()
            .map_err(self.sqlite())?;
        if let Some(blob) = cached {
            return Ok(from_blob(&blob));
        }
        let vector = embed()?;
        // A cache: while another process holds the database for writing (a
        // sync of a large pull, for seconds), the query goes uncached rather
        // than wait for it (a prompt has 1.5 s).
        self.conn
            .busy_timeout(std::time::Duration::ZERO)
            .map_err(self.sqlite())?;
        let cached = self.conn.execute(
            "INSERT OR REPLACE INTO query_cache (model, query, vector) VALUES (?1, ?2, ?3)",
            params![model, query, to_blob(&vector)],
        );
        self.conn
            .busy_timeout(super::BUSY_TIMEOUT)
            .map_err(self.sqlite())?;
        match cached {
            Ok(_) => {}
            Err(rusqlite::Error::SqliteFailure(err, _))
                if err.code == rusqlite::ErrorCode::DatabaseBusy => {}
            Err(err) => return Err(self.sqlite()(err).into()),
        }
        Ok(vector)
    }

    /// The stored vector of a content hash under `model`.
    pub fn vector_of(
        &self,
        model: &str,
        content_hash: &str,
    ) -> Result<Option<Vec<f32>>, IndexError> {
        self.conn
            .query_row(
                "SELECT vector FROM embeddings WHERE model = ?1 AND content_hash = ?2",
                params![model, content_hash],
                |row| row.get::<_, Vec<u8>>(0),
            )
            .optional()
            .map(|blob| blob.map(|b| from_compact(&b)))
            .map_err(self.sqlite())
    }

    /// Loads codes added since the last call (all of them after a model switch).
    fn refresh_codes(&self, model: &str) -> Result<(), IndexError> {
        // Embeddings are only ever added (a model switch drops the other
        // model's, which this cache never holds), so the highest rowid tells
        // whether anything is new; it costs one B-tree descent.
        let max_rowid: i64 = self
            .conn
            .query_row(
                "SELECT coalesce(max(rowid), 0) FROM embeddings",
                [],
                |row| row.get(0),
            )
            .map_err(self.sqlite())?;
        let mut cache = self.codes.borrow_mut();
        if cache.model == model && cache.seen_rowid == max_rowid {
            return Ok(());
        }
        if cache.model != model || max_rowid < cache.seen_rowid {
            *cache = CodeCache {
                model: model.to_owned(),
                ..CodeCache::default()
            };
        }
        let mut statement = self
            .conn
            .prepare_cached(
                "SELECT rowid, code FROM embeddings WHERE model = ?1 AND rowid > ?2 ORDER BY rowid",
            )
            .map_err(self.sqlite())?;
        let mut rows = statement
            .query(params![model, cache.max_rowid])
            .map_err(self.sqlite())?;
        while let Some(row) = rows.next().map_err(self.sqlite())? {
            let rowid: i64 = row.get(0).map_err(self.sqlite())?;
            let code = row.get_ref(1).map_err(self.sqlite())?;
            let code = code.as_blob().map_err(|err| self.sqlite()(err.into()))?;
            if cache.words_per_code == 0 {
                cache.words_per_code = code.len() / 8;
            }
            cache.rowids.push(rowid);
            cache.words.extend(words(code));
            cache.max_rowid = rowid;
        }
        cache.seen_rowid = max_rowid;
        Ok(())
    }

    /// The `k` stored vectors closest to `query` by cosine, in three stages:
    /// Hamming distance between sign bits keeps the closest `8 × candidates`
    /// (at least 16,384); the query's own values dotted with those signs (an
    /// asymmetric estimate of the cosine) keep `candidates`; exact cosine on
    /// their stored vectors ranks them.
    pub fn vector_search(
        &self,
        model: &str,
        query: &[f32],
        k: usize,
        candidates: usize,
    ) -> Result<Vec<VectorHit>, IndexError> {
        self.refresh_codes(model)?;
        let cache = self.codes.borrow();
        let n = cache.rowids.len();
        if n == 0 || k == 0 {
            return Ok(Vec::new());
        }
        let per = cache.words_per_code;
        let query_words: Vec<u64> = words(&code(query)).collect();
        // Stage 1: Hamming distance on sign bits, both halves in parallel;
        // the cut-off distance comes from a histogram, not a sort.
        let keep = (candidates * 8).max(16_384).min(n);
        let by_hamming = closest_by_hamming(&cache.words, per, &query_words, keep);
        // Stage 2: Σ query[i] · sign(stored[i]), one lookup per code byte.
        let tables = sign_tables(query, per * 8);
        let mut by_estimate: Vec<(f32, i64)> = by_hamming
            .iter()
            .map(|&i| {
                let code = &cache.words[i as usize * per..(i as usize + 1) * per];
                let estimate = sign_estimate(code, &tables);
                (estimate, cache.rowids[i as usize])
            })
            .collect();
        let keep = candidates.max(k).min(by_estimate.len());
        if keep < by_estimate.len() {
            by_estimate.select_nth_unstable_by(keep - 1, |a, b| b.0.total_cmp(&a.0));
            by_estimate.truncate(keep);
        }
        let mut scored = by_estimate;
        drop(cache);
        // Rowid order reads the table front to back.
        scored.sort_unstable_by_key(|&(_, rowid)| rowid);
        let mut hits = Vec::with_capacity(keep);
        for chunk in scored.chunks(500) {
            let placeholders = vec!["?"; chunk.len()].join(",");
            let mut statement = self
                .conn
                .prepare(&format!(
                    "SELECT content_hash, vector FROM embeddings WHERE rowid IN ({placeholders})"
                ))
                .map_err(self.sqlite())?;
            let rows = statement
                .query_map(
                    rusqlite::params_from_iter(chunk.iter().map(|(_, rowid)| rowid)),
                    |row| Ok((row.get::<_, String>(0)?, row.get::<_, Vec<u8>>(1)?)),
                )
                .map_err(self.sqlite())?;
            for row in rows {
                let (content_hash, blob) = row.map_err(self.sqlite())?;
                let similarity = cosine(query, &from_compact(&blob));
                hits.push(VectorHit {
                    content_hash,
                    similarity,
                });
            }
        }
        hits.sort_by(|a, b| {
            b.similarity
                .total_cmp(&a.similarity)
                .then_with(|| a.content_hash.cmp(&b.content_hash))
        });
        hits.truncate(k);
        Ok(hits)
    }
}

/// Indices of the `keep` codes closest to `query` in Hamming distance:
/// distances are computed on two threads, then a histogram gives the distance
/// at which `keep` is reached (ties at that distance go by position).
fn closest_by_hamming(words: &[u64], per: usize, query: &[u64], keep: usize) -> Vec<u32> {
    let n = words.len() / per;
    let mut distances = vec![0u16; n];
    let half = n.div_ceil(2);
    std::thread::scope(|scope| {
        for (part, out) in distances.chunks_mut(half).enumerate() {
            let codes = &words[part * half * per..];
            scope.spawn(move || hamming_distances(codes, per, query, out));
        }
    });
    if keep >= n {
        return (0..n as u32).collect();
    }
    let mut histogram = vec![0usize; per * 64 + 1];
    for &d in &distances {
        histogram[d as usize] += 1;
    }
    // The distance at which `keep` is reached; everything closer is taken,
    // and from that distance only as many as still fit.
    let mut cutoff = 0;
    let mut closer = 0;
    for (distance, &count) in histogram.iter().enumerate() {
        if closer + count >= keep {
            cutoff = distance;
            break;
        }
        closer += count;
    }
    let mut at_cutoff = keep - closer;
    let mut chosen = Vec::with_capacity(keep);
    for (i, &d) in distances.iter().enumerate() {
        let d = d as usize;
        if d < cutoff || (d == cutoff && at_cutoff > 0) {
            if d == cutoff {
                at_cutoff -= 1;
            }
            chosen.push(i as u32);
        }
    }
    chosen
}

/// Hamming distance of each `per`-word code in `codes` to `query`, into `out`.
fn hamming_distances(codes: &[u64], per: usize, query: &[u64], out: &mut [u16]) {
    // 384 dimensions (6 words) is the common case: a fixed-size loop the
    // compiler unrolls.
    if let Ok(q) = <&[u64; 6]>::try_from(query) {
        for (d, code) in out.iter_mut().zip(codes.chunks_exact(6)) {
            let code: &[u64; 6] = code.try_into().expect("chunks of 6");
            *d = code
                .iter()
                .zip(q)
                .map(|(a, b)| (a ^ b).count_ones())
                .sum::<u32>() as u16;
        }
        return;
    }
    for (d, code) in out.iter_mut().zip(codes.chunks_exact(per)) {
        *d = code
            .iter()
            .zip(query)
            .map(|(a, b)| (a ^ b).count_ones())
            .sum::<u32>() as u16;
    }
}

/// The sign-dot estimate of one code: Σ over its bytes of the byte's table
/// entry (see [`sign_tables`]).
fn sign_estimate(code: &[u64], tables: &[f32]) -> f32 {
    code.iter()
        .flat_map(|word| word.to_le_bytes())
        .zip(tables.chunks_exact(256))
        .map(|(byte, table)| table[byte as usize])
        .sum()
}

/// For each byte of a code, the contribution of its 8 sign bits to the dot
/// product with `query`: `table[b * 256 + byte]` = Σ ± query[8b + j].
fn sign_tables(query: &[f32], code_bytes: usize) -> Vec<f32> {
    let mut tables = vec![0f32; code_bytes * 256];
    for b in 0..code_bytes {
        for byte in 0..256usize {
            let mut sum = 0f32;
            for j in 0..8 {
                if let Some(&x) = query.get(b * 8 + j) {
                    sum += if byte >> j & 1 == 1 { x } else { -x };
                }
            }
            tables[b * 256 + byte] = sum;
        }
    }
    tables
}

/// Shared by [`Index`]: the code cache lives beside the connection.
pub(super) type Codes = RefCell<CodeCache>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_and_codes() {
        let v = [0.5f32, -0.25, 0.0, 1.0];
        assert_eq!(from_blob(&to_blob(&v)), v);
        let c = code(&v);
        assert_eq!(c.len(), 8);
        assert_eq!(c[0], 0b1001);
    }

    #[test]
    fn compact_vectors_keep_the_direction_in_a_byte_a_dimension() {
        let mut v: Vec<f32> = (0..384)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
            .collect();
        crate::adapters::embed::normalize(&mut v);
        let blob = to_compact(&v);
        assert_eq!(blob.len(), 384);
        assert!(blob.iter().any(|&b| b as i8 == 127 || b as i8 == -127));
        let back = from_compact(&blob);
        let norm: f32 = back.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{norm}");
        assert!(cosine(&v, &back) > 0.9999, "{}", cosine(&v, &back));
        // Nothing to scale: zeros, not NaN.
        assert_eq!(from_compact(&to_compact(&[0.0; 4])), vec![0.0; 4]);
        assert_eq!(to_compact(&[f32::NAN, 1.0]), vec![0, 127]);
    }
}
