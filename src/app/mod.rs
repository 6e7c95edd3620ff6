//! The application layer: the operations the two front ends share — the
//! command line ([`crate::front::cli`]) and the MCP server ([`crate::front::mcp`]).
//!
//! - [`session`]: what a process reads from its environment once (home,
//!   model, clock), and the notices operations leave for the front end.
//! - [`sync`]: the one path to the index (keyword sync, then embedding as
//!   an [`sync::Embed`] policy says).
//! - [`store`], [`recall`] (with [`digest`]), [`brief`], [`forget`] (and
//!   `trust`), [`show`] (and `similar`); [`tidy`]: what the log holds that
//!   no longer helps, and forgetting it.
//! - [`hook`]: what a git hook does; [`capture`]: the agent hook, the
//!   capture worker and its status; [`keep`]: committing a captured
//!   memory; [`import`]: old notes into the log;
//!   [`background`]: the detached processes they start.
//! - [`status`]: `goldfish status`'s report, as data; [`review`]: the memory
//!   changes between two commits and their trust verdicts.
//! - [`error`]: [`AppError`], with the argument at fault as an [`Arg`].
//!
//! Nothing here prints or knows which front end calls it: each front end
//! spells the arguments (`--type`, `type`), words the hints, renders results
//! and notices, and picks exit codes or tool errors.

pub mod agent;
pub mod background;
pub mod brief;
pub mod capture;
pub mod digest;
pub mod doctor;
pub mod error;
pub mod forget;
pub mod heal;
pub mod hook;
pub mod import;
pub mod init;
pub mod keep;
pub mod merge;
pub mod model;
pub mod notice;
pub mod prompt;
pub mod recall;
pub mod render;
pub mod review;
pub mod session;
pub mod show;
pub mod status;
pub mod store;
pub mod sync;
pub mod tidy;

pub use error::{AppError, Arg, Hint, Kind};
pub use notice::Notice;
pub use session::Session;

// What the front ends hold of the adapters without using them: the
// workspace and the home they hand to operations, the memory folder's path
// they name to people.
pub use crate::adapters::git::{MEMORY_DIR, Workspace};
pub use crate::adapters::home::Home;
