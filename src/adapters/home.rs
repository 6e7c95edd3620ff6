//! `$GOLDFISH_HOME` (default `~/.goldfish`): the personal, per-user state —
//! the index, locks, logs, models and the ONNX Runtime. Everything in it is derived from
//! git and can be deleted.

use std::path::{Path, PathBuf};

use crate::adapters::env;

#[derive(Debug, Clone)]
pub struct Home {
    root: PathBuf,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot find a home for goldfish's index: set GOLDFISH_HOME (or HOME)")]
pub struct NoHome;

impl Home {
    /// `$GOLDFISH_HOME`, else `$HOME/.goldfish`.
    pub fn from_env() -> Result<Home, NoHome> {
        if let Some(dir) = env::home() {
            return Ok(Home::at(PathBuf::from(dir)));
        }
        env::user_home()
            .map(|home| Home::at(Path::new(&home).join(".goldfish")))
            .ok_or(NoHome)
    }

    pub fn at(root: PathBuf) -> Home {
        Home { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn index_path(&self) -> PathBuf {
        self.root.join("index.db")
    }

    /// What the agent hooks keep of each agent session between its hooks
    /// (`app::agent::SessionMarks`).
    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join("sessions")
    }

    pub fn locks_dir(&self) -> PathBuf {
        self.root.join("locks")
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// The user's settings, `config.toml`.
    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    /// `models/<name>/` for each installed embedding model.
    pub fn models_dir(&self) -> PathBuf {
        self.root.join("models")
    }

    /// The name of the embedding model `model install --from` put in use
    /// (`model`), read when `GOLDFISH_MODEL` names none.
    pub fn model_choice_path(&self) -> PathBuf {
        self.root.join("model")
    }

    /// The warm process's socket, lock and info, per model (`warm/`).
    pub fn warm_dir(&self) -> PathBuf {
        self.root.join("warm")
    }

    /// The ONNX Runtime shared library.
    pub fn runtime_dir(&self) -> PathBuf {
        self.root.join("runtime")
    }
}
