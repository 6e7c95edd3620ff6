//! How well `store` finds the older memories a new one replaces, on the
//! labelled pairs of `fixtures/supersede/pairs.jsonl` (an update, a
//! paraphrase, another fact of the same topic, or unrelated): precision and
//! recall of the detector (`domain::supersede::judge`: same type, the
//! cosine, shared files, a differing fact) and of the cosine alone, for
//! thresholds from 0.40 to 0.95, on the `tune` half (where `ASK` and `LINK`
//! were chosen), the `test` half and all; then what each label gets at both
//! thresholds; with `--pairs`, every pair, its cosine and what differs.
//! `tests/it/supersede_found.rs` holds the thresholds to their numbers.
//!
//! ```text
//! cargo run --release --example supersede_table [-- --pairs]
//! ```
//!
//! The model: `GOLDFISH_TEST_MODEL_HOME`, else `target/model-home` (what
//! `scripts/test.sh` installs).

#[path = "common/model.rs"]
mod model;

use goldfish::adapters::embed::{Embedder, TextKind, cosine};
use goldfish::domain::supersede::labelled::{self, Counts, Detector, Label, Split};
use goldfish::domain::supersede::{self, ASK, LINK};

fn main() -> anyhow::Result<()> {
    let mut embedder = model::default_embedder()?;
    let pairs = labelled::parse(include_str!("../fixtures/supersede/pairs.jsonl"))
        .map_err(|err| anyhow::anyhow!("fixtures/supersede/pairs.jsonl: {err}"))?;
    let mut cosines = Vec::new();
    for pair in &pairs {
        let vectors = embedder.embed(&[&pair.older, &pair.newer], TextKind::Document)?;
        cosines.push(f64::from(cosine(&vectors[0], &vectors[1])));
    }
    let halves = [
        ("tune", Some(Split::Tune)),
        ("test", Some(Split::Test)),
        ("all", None),
    ];
    println!("| threshold | detector | tune P / R | test P / R | all P / R |");
    println!("| --- | --- | --- | --- | --- |");
    for step in 8..=19 {
        let threshold = f64::from(step) * 0.05;
        for (name, detector) in [
            ("judge", Detector::Judge),
            ("judge, restated", Detector::Restated),
            ("cosine only", Detector::CosineOnly),
        ] {
            let cells: Vec<String> = halves
                .iter()
                .map(|(_, split)| {
                    let c = labelled::count(&pairs, &cosines, threshold, detector, *split);
                    format!("{:.2} / {:.2}", c.precision(), c.recall())
                })
                .collect();
            println!("| {threshold:.2} | {name} | {} |", cells.join(" | "));
        }
    }
    println!();
    println!("Flagged per label (of the pairs of that label):");
    println!();
    println!(
        "| threshold | half | precision | recall | update | paraphrase | other_fact | unrelated |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (name, threshold, detector) in [
        ("ASK", ASK, Detector::Judge),
        ("LINK", LINK, Detector::Restated),
        ("recall's newer wins, ASK", ASK, Detector::Newer),
    ] {
        for (half, split) in halves {
            let c = labelled::count(&pairs, &cosines, threshold, detector, split);
            println!(
                "| {name} {threshold:.2} | {half} | {:.2} | {:.2} | {} |",
                c.precision(),
                c.recall(),
                per_label(&c)
            );
        }
    }
    if std::env::args().any(|arg| arg == "--pairs") {
        println!();
        let mut order: Vec<usize> = (0..pairs.len()).collect();
        order.sort_by(|&a, &b| cosines[b].total_cmp(&cosines[a]));
        for i in order {
            let pair = &pairs[i];
            let said = supersede::judge(pair.older_memo(), pair.newer_memo(), cosines[i], 0.0)
                .map(|c| c.explain())
                .unwrap_or_default();
            println!(
                "{:.3} {:?} {} | {} | {} | {}",
                cosines[i],
                pair.split,
                pair.label.name(),
                pair.older,
                pair.newer,
                said
            );
        }
    }
    Ok(())
}

fn per_label(counts: &Counts) -> String {
    Label::ALL
        .iter()
        .map(|label| format!("{}/{}", counts.flagged(*label), counts.total(*label)))
        .collect::<Vec<_>>()
        .join(" | ")
}
