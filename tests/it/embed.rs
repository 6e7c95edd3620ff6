//! The real embedding models: the fp32 one checked against Python
//! onnxruntime's output, the int8 one against the fp32 reference.

use goldfish::adapters::embed::{
    DEFAULT_MODEL, Embedder, FP32_MODEL, INT8_MODEL, TextKind, cosine,
};
use serde_json::Value;

use crate::common::{with_embedder, with_embedder_of};

/// fixtures/embeddings/reference.json: texts, their fp32 vectors (Python
/// onnxruntime) and the sentence-transformers quickstart similarities.
struct Reference {
    texts: Vec<String>,
    vectors: Vec<Vec<f32>>,
    tolerance: f32,
    /// (a, b, cosine)
    similarities: Vec<(usize, usize, f32)>,
}

fn reference() -> Reference {
    let reference: Value =
        serde_json::from_str(include_str!("../../fixtures/embeddings/reference.json")).unwrap();
    let texts = reference["texts"].as_array().unwrap();
    Reference {
        texts: texts
            .iter()
            .map(|t| t["text"].as_str().unwrap().to_owned())
            .collect(),
        vectors: texts
            .iter()
            .map(|t| {
                t["embedding"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap() as f32)
                    .collect()
            })
            .collect(),
        tolerance: reference["tolerance"].as_f64().unwrap() as f32,
        similarities: reference["similarities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|pair| {
                (
                    pair["a"].as_u64().unwrap() as usize,
                    pair["b"].as_u64().unwrap() as usize,
                    pair["cosine"].as_f64().unwrap() as f32,
                )
            })
            .collect(),
    }
}

/// The reference texts embedded by `model` one at a time (as the reference
/// was made) and in one batch (padding must not change a text's vector).
fn embed_reference(model: &'static str, texts: &[String]) -> (Vec<Vec<f32>>, Vec<Vec<f32>>) {
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    with_embedder_of(model, |e| {
        let one_by_one = texts
            .iter()
            .map(|text| e.embed(&[text], TextKind::Document).unwrap().remove(0))
            .collect();
        (one_by_one, e.embed(&texts, TextKind::Document).unwrap())
    })
}

#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn embeddings_match_the_python_reference() {
    let reference = reference();
    let (one_by_one, batched) = embed_reference(FP32_MODEL, &reference.texts);
    for (i, expected) in reference.vectors.iter().enumerate() {
        assert_eq!(one_by_one[i].len(), 384);
        for (name, got) in [("alone", &one_by_one[i]), ("batched", &batched[i])] {
            let worst = got
                .iter()
                .zip(expected)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(
                worst <= reference.tolerance,
                "text {i} ({name}) differs by {worst}: {}",
                reference.texts[i]
            );
        }
    }
    for (a, b, expected) in reference.similarities {
        let got = cosine(&one_by_one[a], &one_by_one[b]);
        assert!(
            (got - expected).abs() < 1e-4,
            "cos({a},{b}) = {got}, expected {expected}"
        );
    }
}

/// The int8 build points where the fp32 one does: each reference text's
/// vector within cosine 0.98 of the fp32 reference (0.990–0.997 measured),
/// the same in a batch as alone, and the quickstart similarities within
/// 0.03 (0.008–0.013 measured). Ranking quality is measured on the
/// evaluation sets (docs/BENCHMARKS.md, "int8 model").
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn the_int8_model_stays_close_to_the_fp32_reference() {
    let reference = reference();
    let (one_by_one, batched) = embed_reference(INT8_MODEL, &reference.texts);
    for (i, expected) in reference.vectors.iter().enumerate() {
        let alone = cosine(&one_by_one[i], expected);
        assert!(alone >= 0.98, "text {i}: cosine {alone} to fp32");
        let drift = cosine(&one_by_one[i], &batched[i]);
        assert!(drift >= 0.9999, "text {i}: batched vs alone {drift}");
    }
    for (a, b, expected) in reference.similarities {
        let got = cosine(&one_by_one[a], &one_by_one[b]);
        assert!(
            (got - expected).abs() < 0.03,
            "cos({a},{b}) = {got}, expected {expected}"
        );
    }
}

#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn the_model_id_names_the_vector_space() {
    let id = with_embedder(|e| e.model_id().to_owned());
    assert!(id.starts_with(&format!("{DEFAULT_MODEL}@")), "{id}");
    assert_eq!(with_embedder(|e| e.dims()), 384);
    let fp32 = with_embedder_of(FP32_MODEL, |e| e.model_id().to_owned());
    let int8 = with_embedder_of(INT8_MODEL, |e| e.model_id().to_owned());
    assert!(fp32.starts_with("all-MiniLM-L6-v2@"), "{fp32}");
    assert!(int8.starts_with("all-MiniLM-L6-v2-int8@"), "{int8}");
}
