//! The real embedding model, checked against Python onnxruntime's output.

use goldfish::adapters::embed::{Embedder, TextKind, cosine};
use serde_json::Value;

use crate::common::with_embedder;

#[test]
#[cfg_attr(
    not(feature = "real-model"),
    ignore = "needs the real model: bash scripts/test.sh"
)]
fn embeddings_match_the_python_reference() {
    let reference: Value =
        serde_json::from_str(include_str!("../../fixtures/embeddings/reference.json")).unwrap();
    let tolerance = reference["tolerance"].as_f64().unwrap() as f32;
    let texts: Vec<&str> = reference["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["text"].as_str().unwrap())
        .collect();
    // One at a time, as the reference was made, and in one batch (padding
    // must not change a text's vector).
    let one_by_one: Vec<Vec<f32>> = with_embedder(|e| {
        texts
            .iter()
            .map(|text| e.embed(&[text], TextKind::Document).unwrap().remove(0))
            .collect()
    });
    let batched = with_embedder(|e| e.embed(&texts, TextKind::Document).unwrap());
    for (i, text) in reference["texts"].as_array().unwrap().iter().enumerate() {
        let expected: Vec<f32> = text["embedding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        assert_eq!(one_by_one[i].len(), 384);
        for (name, got) in [("alone", &one_by_one[i]), ("batched", &batched[i])] {
            let worst = got
                .iter()
                .zip(&expected)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(
                worst <= tolerance,
                "text {i} ({name}) differs by {worst}: {}",
                texts[i]
            );
        }
    }
    // The sentence-transformers quickstart similarities.
    for pair in reference["similarities"].as_array().unwrap() {
        let (a, b) = (
            pair["a"].as_u64().unwrap() as usize,
            pair["b"].as_u64().unwrap() as usize,
        );
        let expected = pair["cosine"].as_f64().unwrap() as f32;
        let got = cosine(&one_by_one[a], &one_by_one[b]);
        assert!(
            (got - expected).abs() < 1e-4,
            "cos({a},{b}) = {got}, expected {expected}"
        );
    }
}

#[test]
#[cfg_attr(
    not(feature = "real-model"),
    ignore = "needs the real model: bash scripts/test.sh"
)]
fn the_model_id_names_the_vector_space() {
    let id = with_embedder(|e| e.model_id().to_owned());
    assert!(id.starts_with("all-MiniLM-L6-v2@"), "{id}");
    assert_eq!(with_embedder(|e| e.dims()), 384);
}
