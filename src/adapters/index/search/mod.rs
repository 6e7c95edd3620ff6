//! Recall from the index: filters in SQL; keyword candidates from the keyword
//! index (tantivy, `keyword.rs`: the one keyword engine, or a copy of it in
//! memory when it cannot be written), vector candidates from `vectors.rs`;
//! the fusion policy is the core's (`crate::domain::recall`).
//!
//! `types.rs` holds what a search returns and is asked; `recall.rs` the
//! entry points; `filters.rs` the SQL a request sets and the rows it
//! selects; `keywords.rs` the keyword stage; `fusion.rs` the vector stage
//! and the hybrid fusion; `similar.rs` near-duplicates; `trust.rs` what the
//! index knows of a workspace's trust.

use rusqlite::types::Value;

use super::{Index, IndexError, LINE_PROVENANCE};
use crate::domain::config::TrustPolicy;
use crate::domain::memory::verdict::AUTHOR_MISMATCH;
use crate::domain::recall::{Evidence, Request, Spread, TimeCue, fuse, ranked_before};
use crate::domain::recalled::{IndexedMemory, Moved, Provenance, SUPERSEDED_WHY, Stale, Trust};
use crate::domain::relevance::Judgement;

mod filters;
mod fusion;
mod keywords;
mod recall;
mod similar;
#[cfg(test)]
mod tests;
mod trust;
mod types;

use filters::*;
pub use keywords::*;
pub use types::*;
