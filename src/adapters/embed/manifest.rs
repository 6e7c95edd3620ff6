//! `manifest.json` beside a model: what the embedder needs to know to use it
//! and where its files came from.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::EmbedError;

pub const FILE: &str = "manifest.json";

/// Texts per model run unless a manifest says otherwise.
pub const DEFAULT_BATCH: usize = 32;

fn default_batch() -> usize {
    DEFAULT_BATCH
}

fn is_default_batch(batch: &usize) -> bool {
    *batch == DEFAULT_BATCH
}

/// The `kind` of the tests' stand-in embedder (`embed::fake`): only the
/// tests write a manifest with it.
pub const FAKE_KIND: &str = "fake-words";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub name: String,
    /// What runs the model: absent for an ONNX model (the only kind a
    /// release installs); `fake-words` for the tests' stand-in
    /// (`embed::fake`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub dims: usize,
    /// How a text's token vectors become one: `mean` (over the attention
    /// mask: all-MiniLM-L6-v2, e5) or `cls` (the first token's: bge).
    pub pooling: String,
    pub normalize: bool,
    /// Tokens per text; longer texts are truncated.
    pub max_length: usize,
    /// The most texts one model run holds (default [`DEFAULT_BATCH`]). 1
    /// for a dynamically quantised model: it scales its activations by the
    /// largest value in the whole batch, so a text's vector would depend on
    /// the texts run with it (cosine 0.99 to itself alone, measured).
    #[serde(default = "default_batch", skip_serializing_if = "is_default_batch")]
    pub batch: usize,
    #[serde(default)]
    pub query_prefix: String,
    #[serde(default)]
    pub document_prefix: String,
    /// File name → where it came from and its sha256.
    pub files: BTreeMap<String, FileSource>,
}

/// How token vectors are pooled into a text's vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The mean of the token vectors the attention mask keeps.
    Mean,
    /// The first token's vector (`[CLS]`).
    Cls,
}

impl Pooling {
    fn of(name: &str) -> Option<Pooling> {
        match name {
            "mean" => Some(Pooling::Mean),
            "cls" => Some(Pooling::Cls),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSource {
    pub sha256: String,
    pub source: String,
}

impl Manifest {
    /// The manifest of all-MiniLM-L6-v2 (fp32).
    pub fn minilm(files: BTreeMap<String, FileSource>) -> Manifest {
        Manifest::minilm_named(super::FP32_MODEL, files)
    }

    /// The manifest of a build of all-MiniLM-L6-v2 called `name` (the int8
    /// one runs with the same settings).
    pub fn minilm_named(name: &str, files: BTreeMap<String, FileSource>) -> Manifest {
        Manifest {
            name: name.to_owned(),
            kind: None,
            dims: 384,
            pooling: "mean".to_owned(),
            normalize: true,
            max_length: 256,
            batch: DEFAULT_BATCH,
            query_prefix: String::new(),
            document_prefix: String::new(),
            files,
        }
    }

    pub fn read(path: &Path) -> Result<Manifest, EmbedError> {
        let text = std::fs::read_to_string(path).map_err(|source| EmbedError::Io {
            path: path.to_owned(),
            source,
        })?;
        let manifest: Manifest =
            serde_json::from_str(&text).map_err(|err| EmbedError::Manifest {
                path: path.to_owned(),
                message: err.to_string(),
            })?;
        if let Some(kind) = &manifest.kind
            && !manifest.is_fake()
        {
            return Err(EmbedError::Manifest {
                path: path.to_owned(),
                message: format!("kind `{kind}` is not supported (only ONNX models)"),
            });
        }
        if manifest.batch == 0 {
            return Err(EmbedError::Manifest {
                path: path.to_owned(),
                message: "batch must be at least 1".to_owned(),
            });
        }
        if Pooling::of(&manifest.pooling).is_none() {
            return Err(EmbedError::Manifest {
                path: path.to_owned(),
                message: format!(
                    "pooling `{}` is not supported (`mean` or `cls`)",
                    manifest.pooling
                ),
            });
        }
        Ok(manifest)
    }

    /// The manifest's pooling (checked when it was read: `mean` otherwise).
    pub fn pooling(&self) -> Pooling {
        Pooling::of(&self.pooling).unwrap_or(Pooling::Mean)
    }

    /// Whether this is the tests' stand-in embedder.
    pub fn is_fake(&self) -> bool {
        self.kind.as_deref() == Some(FAKE_KIND)
    }

    pub fn model_sha256(&self) -> &str {
        self.files
            .get("model.onnx")
            .map_or("unknown", |f| f.sha256.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &serde_json::Value) -> Result<Manifest, EmbedError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(&path, json.to_string()).unwrap();
        Manifest::read(&path)
    }

    #[test]
    fn batch_defaults_to_32_is_kept_when_given_and_is_never_zero() {
        let mut json = serde_json::to_value(Manifest::minilm(BTreeMap::new())).unwrap();
        assert!(json.get("batch").is_none(), "the default is not written");
        assert_eq!(read(&json).unwrap().batch, DEFAULT_BATCH);
        json["batch"] = 1.into();
        assert_eq!(read(&json).unwrap().batch, 1);
        json["batch"] = 0.into();
        let err = read(&json).unwrap_err().to_string();
        assert!(err.contains("batch must be at least 1"), "{err}");
        assert!(err.contains(FILE), "names the file: {err}");
    }
}
