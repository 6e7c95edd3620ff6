//! The pure core: what a sync records of the branches ([`branches`]), what a memory is and what may be believed of it
//! ([`memory`]), a recall request and how its rankings are fused
//! ([`recall`]), what recall returns ([`recalled`]), whether a question is about anything the log holds
//! ([`relevance`]), `--since`-style times ([`timespec`]), the repository's
//! `.goldfish/config` ([`config`]), the digest within a token budget
//! ([`digest`]), the embedder's interface and vector arithmetic
//! ([`embedding`]), capture's rules ([`capture`]), the plan of an import
//! ([`import`]), what a sync writes into the index ([`sync_plan`]), what
//! `tidy` proposes to forget ([`tidy`]), whether a file was renamed with
//! edits ([`rename`]), whether a memory is stale ([`staleness`]), whether a memory replaces another
//! ([`supersede`]), which trust policy is in effect at a commit
//! ([`policy_history`]) and the order in which history shows commits
//! ([`history_order`]).
//!
//! **Invariant:** nothing here does I/O, reads the environment or prints
//! (`tests/it/layers.rs` holds it to that).

pub mod branches;
pub mod capture;
pub mod citation;
pub mod config;
pub mod digest;
pub mod embedding;
pub mod history_order;
pub mod import;
pub mod memory;
pub mod policy_history;
pub mod recall;
pub mod recalled;
pub mod relevance;
pub mod rename;
pub mod staleness;
pub mod supersede;
pub mod sync_plan;
pub mod tidy;
pub mod timespec;
