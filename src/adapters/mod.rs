//! The adapters: everything that touches the world outside the process's
//! memory. git objects and config ([`git`]), which commit changed which
//! memory line ([`history`]), the memory folder on disk
//! ([`memdir`]), the personal index ([`index`]), the embedding model
//! ([`embed`]), capture's queues, worker and model runtime ([`capture`]),
//! the sync from git into the index ([`sync`]), the home folder ([`home`]), the environment ([`env`](mod@env)), processes run
//! with a timeout ([`shell`]), the digest's LLM command ([`llm`]) and the
//! notes an import reads ([`notes`]).
//!
//! Adapters use the core (`crate::domain`), never the application layer or
//! a front end.

pub mod capture;
pub mod embed;
pub mod env;
pub mod git;
pub mod history;
pub mod home;
pub mod index;
pub mod llm;
pub mod memdir;
pub mod notes;
pub mod shell;
pub mod sync;

use std::path::{Path, PathBuf};

/// An I/O error with what was being done and the path it was done to:
/// "could not {action} {path}", the error beneath as its source. The error
/// enums of the adapters and the application layer wrap it.
#[derive(Debug, thiserror::Error)]
#[error("could not {action} {}", .path.display())]
pub struct PathError {
    pub action: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl PathError {
    /// What `map_err` takes for `action` on `path`: the I/O error as an
    /// `E` (an enum that wraps a `PathError`).
    pub fn at<E: From<PathError>>(
        action: &'static str,
        path: &Path,
    ) -> impl FnOnce(std::io::Error) -> E + use<E> {
        let path = path.to_owned();
        move |source| {
            E::from(PathError {
                action,
                path,
                source,
            })
        }
    }
}
