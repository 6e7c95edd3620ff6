//! Local embeddings: an [`Embedder`] turns texts into unit vectors. The real
//! one runs an ONNX model in process ([`onnx::OnnxEmbedder`]); models are
//! installed under `$GOLDFISH_HOME/models/<name>/` by [`install`].

pub mod fake;
pub mod install;
pub mod manifest;
pub mod onnx;
pub mod warm;

use std::path::{Path, PathBuf};

pub use manifest::Manifest;

pub use crate::domain::embedding::{
    EmbedError, Embedder, Remembering, TextKind, TextVectors, cosine, normalize,
};

/// all-MiniLM-L6-v2 as published: fp32 weights.
pub const FP32_MODEL: &str = "all-MiniLM-L6-v2";
/// The same model with int8 weights (dynamically quantised at install time
/// by `scripts/model/quantize_int8.py`).
pub const INT8_MODEL: &str = "all-MiniLM-L6-v2-int8";
/// The model recall uses unless `GOLDFISH_MODEL` names another
/// (`goldfish model install` installs both of the above): int8, as good on
/// four public sets (within 0.005 R@10), 1.8 times the embedding rate and
/// a third of the memory (docs/BENCHMARKS.md, "The embedding model"); the
/// cosine thresholds were chosen on it ("Thresholds on public pairs").
pub const DEFAULT_MODEL: &str = INT8_MODEL;
/// The ONNX Runtime shared library the installer provides.
pub const RUNTIME_LIBRARY: &str = "libonnxruntime.so.1.31.1";

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
