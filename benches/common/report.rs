//! Result rows for the one benchmark table. Every benchmark prints its own
//! markdown table and, when `GOLDFISH_BENCH_ROWS` names a file, appends each
//! number to it as a JSON line:
//!
//! ```json
//! {"area":"recall","measure":"hybrid, warm","size":10000,"unit":"ms","value":12.3,"p95":15.1}
//! ```
//!
//! `scripts/bench.sh` sets the variable, runs every benchmark and hands the
//! file to `scripts/bench_table.py`, which prints the merged table (sizes as
//! columns) and writes the JSON document that runs are compared with.
//!
//! Standard library only: the merge crate's benchmark includes this file too.
#![allow(dead_code)]

use std::io::Write;
use std::time::Duration;

/// The variable naming the rows file.
pub const ROWS_VAR: &str = "GOLDFISH_BENCH_ROWS";

/// One number of the table.
#[derive(Debug, Clone)]
pub struct Row {
    /// The table section: `store`, `merge`, `sync`, `embed`, `recall warm`, …
    pub area: &'static str,
    /// What is measured, short (`no-op sync`, `hybrid --budget 500`).
    pub measure: String,
    /// Memories (or lines, or vectors) in the workspace; `None` when the
    /// number does not depend on a size.
    pub size: Option<usize>,
    /// `ms`, `texts/s`, `B/memory`, `MB`, `×`.
    pub unit: &'static str,
    /// The median, or the single value.
    pub value: f64,
    /// The 95th percentile, for latencies.
    pub p95: Option<f64>,
}

impl Row {
    pub fn new(
        area: &'static str,
        measure: impl Into<String>,
        unit: &'static str,
        value: f64,
    ) -> Row {
        Row {
            area,
            measure: measure.into(),
            size: None,
            unit,
            value,
            p95: None,
        }
    }

    /// A median time in milliseconds.
    pub fn time(area: &'static str, measure: impl Into<String>, median: Duration) -> Row {
        Row::new(area, measure, "ms", median.as_secs_f64() * 1e3)
    }

    /// p50 and p95 in milliseconds.
    pub fn latency(
        area: &'static str,
        measure: impl Into<String>,
        p50: Duration,
        p95: Duration,
    ) -> Row {
        Row {
            p95: Some(p95.as_secs_f64() * 1e3),
            ..Row::time(area, measure, p50)
        }
    }

    pub fn at(self, size: usize) -> Row {
        Row {
            size: Some(size),
            ..self
        }
    }

    /// The row as one JSON line (no trailing newline).
    pub fn to_json(&self) -> String {
        let mut out = format!(
            r#"{{"area":{},"measure":{},"size":{},"unit":{},"value":{}"#,
            json_string(self.area),
            json_string(&self.measure),
            self.size.map_or("null".to_owned(), |n| n.to_string()),
            json_string(self.unit),
            json_number(self.value)
        );
        if let Some(p95) = self.p95 {
            out.push_str(&format!(r#","p95":{}"#, json_number(p95)));
        }
        out.push('}');
        out
    }
}

/// Appends `row` to the rows file, if there is one.
pub fn emit(row: Row) {
    let Some(path) = std::env::var_os(ROWS_VAR) else {
        return;
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap_or_else(|err| panic!("{ROWS_VAR}={}: {err}", path.to_string_lossy()));
    writeln!(file, "{}", row.to_json())
        .unwrap_or_else(|err| panic!("{ROWS_VAR}={}: {err}", path.to_string_lossy()));
}

fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_number(value: f64) -> String {
    if value.is_finite() {
        // Four significant decimals are more than any of these numbers has.
        let rounded = (value * 1e4).round() / 1e4;
        format!("{rounded}")
    } else {
        "null".to_owned()
    }
}
