//! What a recall asks for. The index ([`crate::index::search`]) answers it.

use jiff::Timestamp;

/// What to recall.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Words to look for; `None` lists the newest memories.
    pub query: Option<String>,
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
    /// Any of these types (canonical spelling); empty means all.
    pub kinds: Vec<String>,
    /// Memories carrying every one of these tags (case-insensitive).
    pub tags: Vec<String>,
    /// Case-insensitive substring of the author.
    pub author: Option<String>,
    pub limit: usize,
    /// Drop results scoring below this (see `IndexedMemory::score`).
    pub min_score: Option<f64>,
}
