//! goldfish: durable, team-shared memory for AI coding agents, kept in git.
//!
//! The folders are the layers, each using only those below it:
//!
//! - [`front`]: the command line, the MCP server and the merge driver;
//! - [`app`]: the operations the front ends run (store, recall, brief,
//!   sync, capture, setup, doctor); it never prints;
//! - [`adapters`]: git, the memory folder, the index, the model, processes;
//! - [`domain`]: the pure core, the `goldfish-core` crate (with
//!   `goldfish-log`, the record format and its merge): no I/O, no
//!   environment, no printing, and no use of this crate (the compiler holds
//!   it).
//!
//! See docs/ARCHITECTURE.md.

pub mod adapters;
pub mod app;
pub use goldfish_core as domain;
pub mod front;
