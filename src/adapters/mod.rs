//! The adapters: everything that touches the world outside the process's
//! memory. git objects and config ([`git`]), which commit changed which
//! memory line ([`history`]), the memory folder on disk
//! ([`memdir`]), the personal index ([`index`]), the embedding model
//! ([`embed`]), capture's queues, worker and model runtime ([`capture`]),
//! the home folder ([`home`]), the environment ([`env`](mod@env)), processes run
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
