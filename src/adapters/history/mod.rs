//! What the git history says of memories, read by walking commits: which
//! commit changed which memory line ([`Walker`]; who introduced a line and
//! signed it: [`provenance`]), the trust policy at each commit
//! ([`Policies`]), the paths a commit deleted or renamed ([`paths`]), and
//! whether a branch's work landed ([`branches`]). The index's provenance
//! keys lines by id (the commit that introduced a memory); `goldfish
//! review` keys them by id and text (the commit that added, edited or
//! removed a line). It produces facts; the index stores them.

pub mod branches;
pub mod paths;
mod policies;
pub mod provenance;
mod walk;

pub use policies::Policies;
pub use walk::{FileChange, Walker};
