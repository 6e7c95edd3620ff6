//! Local embeddings: an [`Embedder`] turns texts into unit vectors. The real
//! one runs an ONNX model in process ([`onnx::OnnxEmbedder`]); models are
//! installed under `$GOLDFISH_HOME/models/<name>/` by [`install`].

pub mod fake;
pub mod install;
pub mod manifest;
pub mod onnx;

use std::path::{Path, PathBuf};

pub use manifest::Manifest;

/// The model `goldfish model install` installs and recall uses by default.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2";
/// The ONNX Runtime shared library the installer provides.
pub const RUNTIME_LIBRARY: &str = "libonnxruntime.so.1.31.1";

/// Whether a text is a question or something stored: models may prefix them
/// differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    Query,
    Document,
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("could not read {}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {message}", .path.display())]
    Manifest { path: PathBuf, message: String },
    #[error("could not load ONNX Runtime from {}: {message}", .path.display())]
    Runtime { path: PathBuf, message: String },
    #[error("could not load the tokenizer {}: {message}", .path.display())]
    Tokenizer { path: PathBuf, message: String },
    #[error("the model failed: {0}")]
    Inference(String),
}

/// Turns texts into L2-normalised vectors of [`Embedder::dims`] floats.
pub trait Embedder {
    /// Identifies the vector space: vectors of different ids never mix.
    fn model_id(&self) -> &str;
    fn dims(&self) -> usize;
    fn embed(&mut self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Document vectors remembered by their text, up to a number of texts (then
/// forgotten all at once): long-lived processes embed the same sentences
/// again and again (the MCP server's digests).
#[derive(Debug, Default)]
pub struct TextVectors {
    vectors: std::collections::HashMap<String, Vec<f32>>,
}

impl TextVectors {
    /// Texts kept at most: about 30 MB of 384-dimension vectors.
    pub const CAPACITY: usize = 20_000;
}

/// `inner`, with document vectors looked up in `memory` first.
pub struct Remembering<'a> {
    pub inner: &'a mut dyn Embedder,
    pub memory: &'a mut TextVectors,
}

impl Embedder for Remembering<'_> {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dims(&self) -> usize {
        self.inner.dims()
    }

    fn embed(&mut self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        if kind != TextKind::Document {
            return self.inner.embed(texts, kind);
        }
        let vectors = &mut self.memory.vectors;
        let mut missing: Vec<&str> = Vec::new();
        for &text in texts {
            if !vectors.contains_key(text) && !missing.contains(&text) {
                missing.push(text);
            }
        }
        if !missing.is_empty() {
            let embedded = self.inner.embed(&missing, kind)?;
            if vectors.len() + missing.len() > TextVectors::CAPACITY {
                vectors.clear();
            }
            for (text, vector) in missing.into_iter().zip(embedded) {
                vectors.insert(text.to_owned(), vector);
            }
        }
        Ok(texts.iter().map(|text| vectors[*text].clone()).collect())
    }
}

/// Where an installed model's files are.
#[derive(Debug, Clone)]
pub struct InstalledModel {
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// The ONNX Runtime library to load.
    pub runtime: PathBuf,
}

impl InstalledModel {
    /// The model `name` under `models_dir`, with the runtime in
    /// `runtime_dir`; `Ok(None)` when it is not installed.
    pub fn find(
        models_dir: &Path,
        runtime_dir: &Path,
        name: &str,
    ) -> Result<Option<InstalledModel>, EmbedError> {
        let dir = models_dir.join(name);
        let manifest_path = dir.join(manifest::FILE);
        if !manifest_path.is_file() {
            return Ok(None);
        }
        let manifest = Manifest::read(&manifest_path)?;
        let runtime = runtime_dir.join(RUNTIME_LIBRARY);
        if !runtime.is_file() && !manifest.is_fake() {
            return Ok(None);
        }
        Ok(Some(InstalledModel {
            dir,
            manifest,
            runtime,
        }))
    }

    /// `name@<first 12 hex of the model file's sha256>`: a new build of a
    /// model is a new vector space.
    pub fn model_id(&self) -> String {
        let sha = self.manifest.model_sha256();
        format!("{}@{}", self.manifest.name, &sha[..sha.len().min(12)])
    }
}

/// Cosine similarity of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Scales `v` to unit length (left as is when zero).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in v {
            *x /= norm;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the texts it is asked to embed.
    struct Counting(usize);

    impl Embedder for Counting {
        fn model_id(&self) -> &str {
            "counting"
        }
        fn dims(&self) -> usize {
            1
        }
        fn embed(&mut self, texts: &[&str], _: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.0 += texts.len();
            Ok(texts.iter().map(|t| vec![t.len() as f32]).collect())
        }
    }

    #[test]
    fn remembered_documents_are_embedded_once_and_queries_never_remembered() {
        let mut inner = Counting(0);
        let mut memory = TextVectors::default();
        let mut embedder = Remembering {
            inner: &mut inner,
            memory: &mut memory,
        };
        let first = embedder
            .embed(&["a", "bb", "a"], TextKind::Document)
            .unwrap();
        assert_eq!(first, vec![vec![1.0], vec![2.0], vec![1.0]]);
        let second = embedder.embed(&["bb", "ccc"], TextKind::Document).unwrap();
        assert_eq!(second, vec![vec![2.0], vec![3.0]]);
        embedder.embed(&["a"], TextKind::Query).unwrap();
        embedder.embed(&["a"], TextKind::Query).unwrap();
        assert_eq!(inner.0, 2 + 1 + 2, "a, bb; then ccc; queries each time");
    }
}
