//! How similar the real model finds the labelled pairs of
//! `fixtures/similar/pairs.jsonl` (a paraphrase, or the same topic with
//! another fact, or unrelated): precision and recall of "a pair at the
//! threshold or more is a paraphrase" for thresholds from 0.50 to 0.95, then
//! every pair's cosine. `similar`'s default (0.80) and `store`'s
//! near-duplicate check (0.85) were chosen from this table; the tests in
//! `tests/it/similarity.rs` hold them.
//!
//! ```text
//! cargo run --release --example similarity_table
//! ```
//!
//! The model: `GOLDFISH_TEST_MODEL_HOME`, else `target/model-home` (what
//! `scripts/test.sh` installs).

#[path = "common/model.rs"]
mod model;

use goldfish::adapters::embed::{Embedder, TextKind, cosine};

fn main() -> anyhow::Result<()> {
    let mut embedder = model::default_embedder()?;
    let mut pairs: Vec<(f32, bool)> = Vec::new();
    for (number, line) in include_str!("../fixtures/similar/pairs.jsonl")
        .lines()
        .enumerate()
    {
        let pair: serde_json::Value = serde_json::from_str(line)?;
        let text = |key: &str| {
            pair[key].as_str().ok_or_else(|| {
                anyhow::anyhow!("fixtures/similar/pairs.jsonl:{}: no `{key}`", number + 1)
            })
        };
        let vectors = embedder.embed(&[text("a")?, text("b")?], TextKind::Document)?;
        pairs.push((
            cosine(&vectors[0], &vectors[1]),
            pair["paraphrase"].as_bool() == Some(true),
        ));
    }
    let paraphrases = pairs.iter().filter(|(_, p)| *p).count() as f64;
    println!("| threshold | precision | recall | flagged |");
    println!("| --- | --- | --- | --- |");
    for step in 10..=19 {
        let threshold = step as f32 * 0.05;
        let flagged: Vec<bool> = pairs
            .iter()
            .filter(|(c, _)| *c >= threshold)
            .map(|(_, p)| *p)
            .collect();
        let hits = flagged.iter().filter(|p| **p).count() as f64;
        let precision = if flagged.is_empty() {
            1.0
        } else {
            hits / flagged.len() as f64
        };
        println!(
            "| {threshold:.2} | {precision:.2} | {:.2} | {} |",
            hits / paraphrases,
            flagged.len()
        );
    }
    println!();
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (cosine, paraphrase) in pairs {
        println!(
            "{cosine:.3} {}",
            if paraphrase { "paraphrase" } else { "other" }
        );
    }
    Ok(())
}
