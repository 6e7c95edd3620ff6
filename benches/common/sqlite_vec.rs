//! sqlite-vec on an index's own file, for the tests and benchmarks (the
//! binary does not link it; the index stores a byte a dimension, which
//! `goldfish_f32(vector)` turns back into sqlite-vec's float format):
//! exact search over every vector, the reference the two-stage search is
//! held to, and sqlite-vec's binary quantisation (a `vec0` table of sign
//! bits, KNN by Hamming distance) with exact cosine on the candidates, all
//! in SQL, which `benches/vectors.rs` measures against the two-stage search.

use std::path::Path;
use std::sync::Once;
use std::time::{Duration, Instant};

use goldfish::adapters::index::Index;
use goldfish::adapters::index::vectors::{VectorHit, from_compact, to_blob};
use rusqlite::{Connection, params};

/// Makes sqlite-vec available in every connection this process opens after.
pub fn register() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // SAFETY: `sqlite3_vec_init` is the extension's entry point with the
        // signature SQLite expects of an auto extension.
        unsafe {
            #[allow(clippy::missing_transmute_annotations)]
            rusqlite::ffi::sqlite3_auto_extension(Some(std::mem::transmute(
                ::sqlite_vec::sqlite3_vec_init as *const (),
            )));
        }
    });
}

/// A connection to an index file with sqlite-vec loaded and
/// `goldfish_f32(vector)`: a stored vector as the unit f32 vector sqlite-vec
/// reads.
pub fn open(index: &Path) -> Connection {
    register();
    let conn = Connection::open(index).expect("open the index with sqlite-vec");
    conn.busy_timeout(Duration::from_secs(5)).unwrap();
    conn.create_scalar_function(
        "goldfish_f32",
        1,
        rusqlite::functions::FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| Ok(to_blob(&from_compact(ctx.get_raw(0).as_blob()?))),
    )
    .unwrap();
    conn
}

/// Exact search with sqlite-vec's `vec_distance_cosine` over every stored
/// vector of a model, on a connection of its own to the index's file.
pub trait ExactSearch {
    /// The `k` vectors of `model` closest to `query` by cosine, best first
    /// (ties by content hash).
    fn vector_search_exact(
        &self,
        model: &str,
        query: &[f32],
        k: usize,
    ) -> rusqlite::Result<Vec<VectorHit>>;
}

impl ExactSearch for Index {
    fn vector_search_exact(
        &self,
        model: &str,
        query: &[f32],
        k: usize,
    ) -> rusqlite::Result<Vec<VectorHit>> {
        exact_search(&open(self.path()), model, query, k)
    }
}

/// [`ExactSearch`] on an open connection.
pub fn exact_search(
    conn: &Connection,
    model: &str,
    query: &[f32],
    k: usize,
) -> rusqlite::Result<Vec<VectorHit>> {
    let mut statement = conn.prepare_cached(
        "SELECT content_hash, vec_distance_cosine(goldfish_f32(vector), ?2) AS distance FROM embeddings
          WHERE model = ?1 ORDER BY distance, content_hash LIMIT ?3",
    )?;
    statement
        .query_map(params![model, to_blob(query), k as i64], |row| {
            Ok(VectorHit {
                content_hash: row.get(0)?,
                similarity: 1.0 - row.get::<_, f64>(1)? as f32,
            })
        })?
        .collect()
}

/// A `vec0` table of sign bits: `vec0(code bit[DIMS])`, with sqlite-vec's
/// default chunk size (1,024 vectors) or another.
#[derive(Debug, Clone, Copy)]
pub struct BitTable {
    pub name: &'static str,
    pub chunk_size: Option<usize>,
}

impl BitTable {
    /// Creates the table and fills it from `model`'s vectors in `embeddings`
    /// with `vec_quantize_binary` (rowid = the embedding's rowid). Returns how
    /// long that took and how many bytes the table and its shadow tables
    /// added to the database.
    pub fn create(self, conn: &Connection, model: &str, dims: usize) -> (Duration, u64) {
        let bytes = |conn: &Connection| -> u64 {
            let pages: i64 = conn
                .query_row("PRAGMA page_count", [], |row| row.get(0))
                .unwrap();
            let size: i64 = conn
                .query_row("PRAGMA page_size", [], |row| row.get(0))
                .unwrap();
            (pages * size) as u64
        };
        let before = bytes(conn);
        let start = Instant::now();
        let chunk = self
            .chunk_size
            .map(|c| format!(", chunk_size={c}"))
            .unwrap_or_default();
        conn.execute_batch(&format!(
            "DROP TABLE IF EXISTS {name};
             CREATE VIRTUAL TABLE {name} USING vec0(code bit[{dims}]{chunk});",
            name = self.name
        ))
        .unwrap();
        conn.execute(
            &format!(
                "INSERT INTO {} (rowid, code)
                 SELECT rowid, vec_quantize_binary(goldfish_f32(vector)) FROM embeddings WHERE model = ?1 ORDER BY rowid",
                self.name
            ),
            params![model],
        )
        .unwrap();
        let fill = start.elapsed();
        (fill, bytes(conn).saturating_sub(before))
    }

    /// The `k` nearest of `model`'s vectors to `query` by sqlite-vec's binary
    /// quantisation and re-scoring: the `candidates` closest sign bits by
    /// Hamming distance (`vec0` KNN), then `vec_distance_cosine` on their
    /// float vectors, in one statement.
    pub fn search(
        self,
        conn: &Connection,
        model: &str,
        query: &[f32],
        k: usize,
        candidates: usize,
    ) -> Vec<VectorHit> {
        let mut statement = conn
            .prepare_cached(&format!(
                "WITH knn AS MATERIALIZED (
                     SELECT rowid FROM {}
                      WHERE code MATCH vec_quantize_binary(?2) AND k = ?3
                 )
                 SELECT e.content_hash, vec_distance_cosine(goldfish_f32(e.vector), ?2) AS distance
                   FROM knn JOIN embeddings e ON e.rowid = knn.rowid
                  WHERE e.model = ?1
                  ORDER BY distance, e.content_hash LIMIT ?4",
                self.name
            ))
            .unwrap();
        statement
            .query_map(
                params![model, to_blob(query), candidates as i64, k as i64],
                |row| {
                    Ok(VectorHit {
                        content_hash: row.get(0)?,
                        similarity: 1.0 - row.get::<_, f64>(1)? as f32,
                    })
                },
            )
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .unwrap()
    }
}
