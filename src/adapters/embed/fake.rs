//! A stand-in embedder for tests of behaviour (sync, embedding queues,
//! hybrid recall, the digest's plumbing) on a machine without the real
//! model. Always compiled in (a feature for it made test builds resolve
//! the dependencies' features differently from the binary's, compiling the
//! graph twice), and used only for a model whose manifest asks for it,
//! which nothing but the tests writes.
//!
//! A text's vector is its words hashed into [`DIMS`] signed buckets, so two
//! texts are as similar as the words they share: enough for "embedded once
//! per text", "found by a vector", "a duplicate is close"; nothing about
//! meaning. Installed as a model whose manifest says `"kind": "fake-words"`
//! (tests write it: `tests/it/common.rs`); tokens are words.

use super::{EmbedError, Embedder, TextKind, normalize};

/// Dimensions of its vectors.
pub const DIMS: usize = 64;

pub struct FakeEmbedder {
    model_id: String,
}

impl FakeEmbedder {
    pub fn new(model_id: String) -> FakeEmbedder {
        FakeEmbedder { model_id }
    }
}

/// The words of a text, as the fake embeds and counts them.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
}

impl Embedder for FakeEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dims(&self) -> usize {
        DIMS
    }

    fn embed(&mut self, texts: &[&str], _kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|text| {
                let mut vector = vec![0.0f32; DIMS];
                for word in words(text) {
                    let hash = blake3::hash(word.as_bytes());
                    let bytes = hash.as_bytes();
                    let bucket = usize::from(bytes[0]) % DIMS;
                    vector[bucket] += if bytes[1] & 1 == 0 { 1.0 } else { -1.0 };
                }
                normalize(&mut vector);
                vector
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::embed::cosine;

    #[test]
    fn texts_are_as_close_as_the_words_they_share() {
        let mut fake = FakeEmbedder::new("fake".to_owned());
        let vectors = fake
            .embed(
                &[
                    "Retry payments with backoff",
                    "retry PAYMENTS, with backoff!",
                    "Retry payments later",
                    "Invoices are numbered per customer",
                ],
                TextKind::Document,
            )
            .unwrap();
        let same = cosine(&vectors[0], &vectors[1]);
        let some = cosine(&vectors[0], &vectors[2]);
        let none = cosine(&vectors[0], &vectors[3]);
        assert!((same - 1.0).abs() < 1e-6, "{same}");
        assert!(some > 0.3 && some < 0.99, "{some}");
        assert!(none < some, "{none} < {some}");
        assert!(vectors.iter().all(|v| v.len() == DIMS));
    }
}
