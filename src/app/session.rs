//! What one process reads from its environment once: the home, the model,
//! the clock; and what one command opens once: the index. The command line
//! opens a session per command; the MCP server keeps one for its whole life
//! and lets the index go after each call ([`Session::end_command`]).

use jiff::Timestamp;

use super::AppError;
use super::model::{self, Model};
use super::notice::Notice;
use crate::adapters::env;
use crate::adapters::git::Workspace;
use crate::adapters::home::Home;
use crate::adapters::index::Index;
use crate::adapters::memdir::{self, RepoConfigRead};

/// "Now": the system clock, or the fixed time of `GOLDFISH_NOW`.
#[derive(Debug, Clone)]
pub enum Clock {
    System,
    Fixed(Timestamp),
    /// `GOLDFISH_NOW` is set but unusable: every reading says why.
    Invalid(String),
}

impl Clock {
    pub fn from_env() -> Clock {
        let Some(fixed) = env::now() else {
            return Clock::System;
        };
        let Ok(at) = fixed.parse::<Timestamp>() else {
            return Clock::Invalid(format!(
                "{}={fixed} is not an RFC 3339 timestamp",
                env::GOLDFISH_NOW
            ));
        };
        // Ids count milliseconds since 1970; day files have 4-digit years.
        let year = at.to_zoned(jiff::tz::TimeZone::UTC).year();
        if !(1970..=9999).contains(&year) {
            return Clock::Invalid(format!(
                "{}={fixed} is outside the years 1970 to 9999",
                env::GOLDFISH_NOW
            ));
        }
        Clock::Fixed(at)
    }

    pub fn now(&self) -> Result<Timestamp, AppError> {
        match self {
            Clock::System => Ok(Timestamp::now()),
            Clock::Fixed(at) => Ok(*at),
            Clock::Invalid(why) => Err(AppError::input(anyhow::anyhow!("{why}"))),
        }
    }
}

/// How an operation asks for the embedding model ([`Session::model`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need<'a> {
    /// The model if a usable one is installed; one that is installed but
    /// unusable counts as none, with a warning (once a session): keyword
    /// recall goes on without it.
    Optional,
    /// The model if one is installed; one that is installed but unusable is
    /// an error that says why (a sync, a rebuild, an import: what they
    /// write would lack its embeddings).
    Usable,
    /// The model, or an error saying how to install it (or why it is
    /// unusable): `what` (a command) compares embeddings.
    Required(&'a str),
}

/// The embedding model as the session found it, for reports (`status`,
/// `doctor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelState {
    /// Installed and usable: its id.
    Installed(String),
    Missing,
    /// Installed but broken: why (a sentence that says so).
    Unusable(String),
}

impl ModelState {
    /// The id of the usable model.
    pub fn id(&self) -> Option<&str> {
        match self {
            ModelState::Installed(id) => Some(id),
            _ => None,
        }
    }
}

/// The model as a session found it.
enum Found {
    Missing,
    Installed(Box<Model>),
    /// Installed, but its files cannot be read: why.
    Unusable(String),
}

/// The home, the model and the clock, read once; and the notices the
/// operations left for the front end.
pub struct Session {
    pub home: Home,
    pub clock: Clock,
    model: Found,
    /// The unusable model was reported (once per session).
    told_unusable: bool,
    notices: Vec<Notice>,
    /// Shows embedding progress (the command line, on a terminal).
    pub progress: Option<Box<dyn Progress + Send>>,
    /// The index, opened on first use and kept for the command.
    index: Option<Index>,
    /// What the command has done so far (`GOLDFISH_TRACE=1` prints it).
    pub trace: Trace,
    /// Work trees whose store journal this command drained.
    pub(super) drained: Vec<std::path::PathBuf>,
    /// Each work tree's `.goldfish/config` as this command read it
    /// ([`Session::repo_config_read`]).
    repo_configs: Vec<(std::path::PathBuf, std::sync::Arc<RepoConfigRead>)>,
}

/// Whether the command's trace is wanted on stderr (`GOLDFISH_TRACE` set).
pub fn trace_wanted() -> bool {
    crate::adapters::env::trace()
}

/// Counts of the expensive steps of a command: a trace that shows each is
/// done once (`GOLDFISH_TRACE=1` makes the command line print it on stderr).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Trace {
    /// Times the index was opened.
    pub index_opens: usize,
    /// Syncs of a workspace that ran (the keyword part).
    pub syncs: usize,
    /// Memory texts embedded.
    pub texts_embedded: usize,
    /// Queries embedded.
    pub queries_embedded: usize,
    /// Times the model was loaded in this process.
    pub model_loads: usize,
    /// Embeddings the warm process answered (`goldfish model warm`).
    pub warm_requests: usize,
    /// Times a repository's `.goldfish/config` was read.
    pub config_reads: usize,
    /// Searches of the index for the memories nearly repeating a text
    /// (`store`'s near-duplicates, `similar`).
    pub similarity_searches: usize,
    /// Syncs that did not check the memory files one by one (a large
    /// folder found unchanged).
    pub folder_unchanged: usize,
}

impl std::fmt::Display for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "index opens {}, syncs {}, texts embedded {}, queries embedded {}, model loads {}, \
             warm requests {}, config reads {}, similarity searches {}, folder unchanged {}",
            self.index_opens,
            self.syncs,
            self.texts_embedded,
            self.queries_embedded,
            self.model_loads,
            self.warm_requests,
            self.config_reads,
            self.similarity_searches,
            self.folder_unchanged
        )
    }
}

/// How long work reports its progress.
pub trait Progress {
    fn start(&mut self, total: u64);
    fn set(&mut self, done: u64);
    fn finish(&mut self);
}

impl Session {
    /// Reads the environment. A model that is installed but unusable does not
    /// stop a session: keyword recall works without it, and the operations
    /// that need it say why it is unusable.
    pub fn open() -> Result<Session, AppError> {
        let home = Home::from_env().map_err(AppError::input)?;
        let mut session = Session::at(home, Clock::from_env());
        // This process is the goldfish program: it may start the warm
        // process (a library user's `Session::at` does not).
        if let Found::Installed(model) = &mut session.model {
            model.may_start_warm();
        }
        Ok(session)
    }

    pub fn at(home: Home, clock: Clock) -> Session {
        let model = match Model::find(&home) {
            Ok(Some(model)) => Found::Installed(Box::new(model)),
            Ok(None) => Found::Missing,
            Err(err) => Found::Unusable(format!("{:#}", err.error)),
        };
        Session {
            home,
            clock,
            model,
            told_unusable: false,
            notices: Vec::new(),
            progress: None,
            index: None,
            trace: Trace::default(),
            drained: Vec::new(),
            repo_configs: Vec::new(),
        }
    }

    /// The index, opened once per command.
    pub fn index(&mut self) -> Result<&mut Index, AppError> {
        if self.index.is_none() {
            self.index = Some(Index::open(&self.home.index_path())?);
            self.trace.index_opens += 1;
        }
        Ok(self.index.as_mut().expect("opened above"))
    }

    /// The index and the model, as `need` asks for it ([`Session::model`]),
    /// at once: embedding writes the one with the other.
    pub fn index_and_model(
        &mut self,
        need: Need<'_>,
    ) -> Result<(&mut Index, Option<&mut Model>), AppError> {
        self.settle(need)?;
        self.index()?;
        let index = self.index.as_mut().expect("opened above");
        let model = match &mut self.model {
            Found::Installed(model) => Some(&mut **model),
            _ => None,
        };
        Ok((index, model))
    }

    /// The command is over: the index is let go (a long-lived session opens
    /// it again for the next command, so it never holds a file another
    /// process has since moved aside).
    pub fn end_command(&mut self) {
        self.index = None;
        self.drained.clear();
        self.forget_repo_configs();
    }

    /// The repository's `.goldfish/config` as `workspace`'s work tree has
    /// it, read once per command: every later call gives the same bytes,
    /// or the same failure to read them.
    pub fn repo_config_read(&mut self, workspace: &Workspace) -> std::sync::Arc<RepoConfigRead> {
        let root = workspace.root();
        if let Some((_, read)) = self.repo_configs.iter().find(|(at, _)| at == root) {
            return std::sync::Arc::clone(read);
        }
        let read = std::sync::Arc::new(memdir::read_repo_config(workspace));
        self.trace.config_reads += 1;
        self.repo_configs
            .push((root.to_owned(), std::sync::Arc::clone(&read)));
        read
    }

    /// Lets go of the configs read so far: the next use reads them again
    /// (a new command; each memory the capture worker stores).
    pub fn forget_repo_configs(&mut self) {
        self.repo_configs.clear();
    }

    pub fn now(&self) -> Result<Timestamp, AppError> {
        self.clock.now()
    }

    /// The model, as `need` asks for it: `None` when there is none to use
    /// (never for [`Need::Required`]), or the error `need` makes of its
    /// absence.
    pub fn model(&mut self, need: Need<'_>) -> Result<Option<&mut Model>, AppError> {
        self.settle(need)?;
        Ok(match &mut self.model {
            Found::Installed(model) => Some(model),
            _ => None,
        })
    }

    /// What `need` makes of the model found: nothing, a warning (once a
    /// session) or an error.
    fn settle(&mut self, need: Need<'_>) -> Result<(), AppError> {
        match (&self.model, need) {
            (Found::Installed(_), _) | (Found::Missing, Need::Optional | Need::Usable) => Ok(()),
            (Found::Unusable(why), Need::Optional) => {
                if !self.told_unusable {
                    self.told_unusable = true;
                    let text = format!("{why}; using keywords only (see `goldfish doctor`)");
                    self.notices.push(Notice::warning(text));
                }
                Ok(())
            }
            (Found::Unusable(why), Need::Usable | Need::Required(_)) => {
                Err(anyhow::anyhow!("{why}").into())
            }
            (Found::Missing, Need::Required(what)) => Err(AppError::input(anyhow::anyhow!(
                "{what} compares embeddings, and no embedding model is installed; {}",
                model::INSTALL_HINT
            ))),
        }
    }

    /// The model as the session found it, for a report: nothing is loaded
    /// or told.
    pub fn model_state(&self) -> ModelState {
        match &self.model {
            Found::Installed(model) => ModelState::Installed(model.id()),
            Found::Missing => ModelState::Missing,
            Found::Unusable(why) => ModelState::Unusable(why.clone()),
        }
    }

    /// What the command has done so far, with how it got its vectors.
    pub fn trace(&self) -> Trace {
        let (model_loads, warm_requests) = match &self.model {
            Found::Installed(model) => model.uses(),
            _ => (0, 0),
        };
        Trace {
            model_loads,
            warm_requests,
            ..self.trace
        }
    }

    /// The warm process that serves this session's model, when one runs.
    pub fn warm_info(&self) -> Option<crate::app::status::WarmInfo> {
        match &self.model {
            Found::Installed(model) => model.warm_info(),
            _ => None,
        }
    }

    /// Keeps a notice for the front end.
    pub fn notice(&mut self, notice: Notice) {
        self.notices.push(notice);
    }

    /// The notices left since the last call, oldest first.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
    }

    /// The distill command and its timeout: `GOLDFISH_DISTILL_COMMAND` /
    /// `GOLDFISH_DISTILL_TIMEOUT`, else `[distill]` in
    /// `$GOLDFISH_HOME/config.toml` (read when asked: a broken file only
    /// stops what needs it).
    pub fn distill_command(&self) -> Result<Option<(String, std::time::Duration)>, AppError> {
        use anyhow::Context;
        let path = self.home.config_path();
        let config = match std::fs::read_to_string(&path) {
            Ok(text) => crate::domain::config::HomeConfig::parse(&text)
                .with_context(|| format!("{} is invalid", path.display()))
                .map_err(AppError::input)?,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Default::default(),
            Err(err) => {
                return Err(anyhow::Error::new(err)
                    .context(format!("cannot read {}", path.display()))
                    .into());
            }
        };
        let command = env::distill_command().or(config.distill.command);
        let timeout = match env::distill_timeout() {
            Some(secs) => secs
                .parse::<u64>()
                .with_context(|| {
                    format!(
                        "{}={secs} is not a number of seconds",
                        env::GOLDFISH_DISTILL_TIMEOUT
                    )
                })
                .map_err(AppError::input)?,
            None => config.distill.timeout_secs.unwrap_or(30),
        };
        Ok(command.map(|command| (command, std::time::Duration::from_secs(timeout))))
    }
}
