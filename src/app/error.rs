//! What an operation says when it fails: a kind (the caller's input, or
//! anything else), the argument at fault as a value (each front end spells
//! it: `--type` on the command line, `type` in a tool call) and a hint that
//! the front end words (only a person can pass `--allow-secret`).

use crate::adapters::index::IndexError;
use crate::adapters::memdir::LogError;
use crate::adapters::sync::SyncError;

/// Whose fault it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The caller's arguments or input (the command line exits 2).
    Input,
    /// Anything else: I/O, a broken index, a model that does not load.
    Failure,
}

/// The argument a message is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    Content,
    Id,
    Type,
    Tags,
    Files,
    Source,
    /// The memory a store replaces (`--supersedes`).
    Supersedes,
    Since,
    Until,
    Limit,
    Budget,
    Mode,
    Workspace,
    Distill,
    /// The folder `import` reads.
    Dir,
    /// A field of the record that no argument sets (author, branch: from git).
    Field(&'static str),
}

/// What the caller can do about an error, worded by the front end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// Store the near-duplicate anyway (`--force`, `force: true`).
    Force,
    /// The new memory may replace older ones: name the one it replaces
    /// (`--supersedes ID`, `supersedes`), or store it as new (`--force`,
    /// `force: true`).
    Supersede,
    /// The text looks like a secret: remove it, or a person confirms it is
    /// none (`--allow-secret`, which a tool call cannot pass).
    AllowSecret,
}

/// An operation's error.
#[derive(Debug)]
pub struct AppError {
    pub kind: Kind,
    pub arg: Option<Arg>,
    pub error: anyhow::Error,
    pub hint: Option<Hint>,
}

impl AppError {
    /// The caller's input is wrong; no argument in particular.
    pub fn input(error: impl Into<anyhow::Error>) -> AppError {
        AppError {
            kind: Kind::Input,
            arg: None,
            error: error.into(),
            hint: None,
        }
    }

    /// `arg` is wrong, and `message` says how.
    pub fn arg(arg: Arg, message: impl std::fmt::Display) -> AppError {
        AppError {
            kind: Kind::Input,
            arg: Some(arg),
            error: anyhow::anyhow!("{message}"),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: Hint) -> AppError {
        self.hint = Some(hint);
        self
    }

    /// `arg: message` with the argument spelled by `name` (the front end's
    /// spelling), the message's causes included.
    pub fn message(&self, name: impl Fn(Arg) -> String) -> String {
        match self.arg {
            Some(arg) => format!("{}: {:#}", name(arg), self.error),
            None => format!("{:#}", self.error),
        }
    }
}

impl From<anyhow::Error> for AppError {
    fn from(error: anyhow::Error) -> AppError {
        AppError {
            kind: Kind::Failure,
            arg: None,
            error,
            hint: None,
        }
    }
}

impl From<IndexError> for AppError {
    fn from(err: IndexError) -> AppError {
        anyhow::Error::new(err).into()
    }
}

impl From<crate::adapters::index::locks::LockError> for AppError {
    fn from(err: crate::adapters::index::locks::LockError) -> AppError {
        SyncError::from(err).into()
    }
}

impl From<SyncError> for AppError {
    fn from(err: SyncError) -> AppError {
        anyhow::Error::new(err).context("sync failed").into()
    }
}

impl From<LogError> for AppError {
    fn from(err: LogError) -> AppError {
        match err {
            LogError::NotInitialized(_) | LogError::Unsafe { .. } | LogError::Timestamp(_) => {
                AppError::input(err)
            }
            // Local state in the git folder, not the caller's input.
            LogError::Io { .. } | LogError::Journal { .. } => anyhow::Error::new(err).into(),
        }
    }
}
