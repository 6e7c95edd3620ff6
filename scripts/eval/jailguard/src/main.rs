//! Scores text with the `jailguard` crate's embedded classifier, for
//! scripts/eval/injection_classifier.py. Not part of the goldfish workspace.
//!
//! stdin: JSON lines `{"text": "..."}`; stdout: one JSON line each,
//! `{"score": f32, "is_injection": bool}` (`is_injection` is the crate's own
//! cut, score > 0.5).
use std::io::{BufRead, Write};

fn main() {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in stdin.lock().lines() {
        let line = line.expect("read stdin");
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
        let text = v["text"].as_str().expect("a \"text\" string");
        let r = jailguard::detect(text);
        writeln!(
            out,
            "{}",
            serde_json::json!({"score": r.score, "is_injection": r.is_injection})
        )
        .expect("write stdout");
    }
}
