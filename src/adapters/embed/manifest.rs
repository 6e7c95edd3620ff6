//! `manifest.json` beside a model: what the embedder needs to know to use it
//! and where its files came from.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::EmbedError;

pub const FILE: &str = "manifest.json";

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
    /// Only `mean` (over the attention mask) for now.
    pub pooling: String,
    pub normalize: bool,
    /// Tokens per text; longer texts are truncated.
    pub max_length: usize,
    #[serde(default)]
    pub query_prefix: String,
    #[serde(default)]
    pub document_prefix: String,
    /// File name → where it came from and its sha256.
    pub files: BTreeMap<String, FileSource>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSource {
    pub sha256: String,
    pub source: String,
}

impl Manifest {
    /// The manifest of the default model, all-MiniLM-L6-v2.
    pub fn minilm(files: BTreeMap<String, FileSource>) -> Manifest {
        Manifest {
            name: super::DEFAULT_MODEL.to_owned(),
            kind: None,
            dims: 384,
            pooling: "mean".to_owned(),
            normalize: true,
            max_length: 256,
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
        if manifest.pooling != "mean" {
            return Err(EmbedError::Manifest {
                path: path.to_owned(),
                message: format!(
                    "pooling `{}` is not supported (only `mean`)",
                    manifest.pooling
                ),
            });
        }
        Ok(manifest)
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
