//! Embeddings as the core sees them: an [`Embedder`] turns texts into unit
//! vectors (the ONNX model in `goldfish::adapters::embed` is one), and the
//! arithmetic on them.

use std::path::PathBuf;

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
    /// For a process that stays between calls: give back, after each
    /// call, the memory the call needed (by default nothing is kept).
    fn keep_memory_low(&mut self) {}
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
