//! The real model's cosine of each pair of texts read from standard input,
//! one pair a line as `id<TAB>text a<TAB>text b`, printed as `id<TAB>cosine`
//! (both embedded as documents, as `store`'s near-duplicate check and
//! supersession compare them). `scripts/eval/thresholds_public.py` feeds it
//! public labelled pairs to choose the cosine thresholds per model.
//!
//! ```text
//! GOLDFISH_MODEL=all-MiniLM-L6-v2-int8 cargo run --release --example pair_cosines < pairs.tsv
//! ```
//!
//! The model: as `similarity_table` (`GOLDFISH_TEST_MODEL_HOME`, else
//! `target/model-home`; `GOLDFISH_MODEL` names another installed model).

#[path = "common/model.rs"]
mod model;

use std::io::{BufRead, Write};

use goldfish::adapters::embed::{Embedder, TextKind, cosine};

fn main() -> anyhow::Result<()> {
    let mut embedder = model::default_embedder()?;
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (number, line) in stdin.lock().lines().enumerate() {
        let line = line?;
        let mut fields = line.splitn(3, '\t');
        let (Some(id), Some(a), Some(b)) = (fields.next(), fields.next(), fields.next()) else {
            anyhow::bail!("standard input, line {}: not `id<TAB>a<TAB>b`", number + 1);
        };
        let vectors = embedder.embed(&[a, b], TextKind::Document)?;
        writeln!(out, "{id}\t{:.4}", cosine(&vectors[0], &vectors[1]))?;
    }
    Ok(())
}
