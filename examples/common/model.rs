//! The real embedding model for the examples that print labelled tables:
//! `GOLDFISH_TEST_MODEL_HOME`, else `target/model-home` (what
//! `scripts/test.sh` installs); `GOLDFISH_MODEL` names another installed
//! model than the default (e.g. `all-MiniLM-L6-v2-int8`).

use std::path::PathBuf;

use goldfish::adapters::embed::onnx::OnnxEmbedder;
use goldfish::adapters::embed::{DEFAULT_MODEL, InstalledModel};

/// The default model (or `GOLDFISH_MODEL`'s), loaded; an error says how to
/// install it.
pub fn default_embedder() -> anyhow::Result<OnnxEmbedder> {
    let home = std::env::var_os("GOLDFISH_TEST_MODEL_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/model-home"));
    let name = std::env::var("GOLDFISH_MODEL").unwrap_or_else(|_| DEFAULT_MODEL.to_owned());
    let model = InstalledModel::find(&home.join("models"), &home.join("runtime"), &name)?
        .ok_or_else(|| {
            anyhow::anyhow!(
                "no model {name} in {}: run `bash scripts/test.sh` once, which installs it",
                home.display()
            )
        })?;
    Ok(OnnxEmbedder::load(&model, 2)?)
}
