//! Scores capture on a labelled set of tool events (`fixtures/capture/`):
//! each event is labelled worth recording or not, with the expected type.
//! Sessions are replayed in order through the rules (and a model, when one
//! is given), as the worker would.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::domain::capture::event;
use crate::domain::capture::prompt::Context;
use crate::domain::capture::rules::{AgentSession, Verdict};
use crate::domain::capture::{Generator, guard, judge_with};
use crate::domain::memory::secrets;

/// One labelled event.
#[derive(Debug, Clone, Deserialize)]
pub struct Labelled {
    pub id: u32,
    pub worth: bool,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub payload: serde_json::Value,
}

/// The scores.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Report {
    pub events: usize,
    pub labelled_worth: usize,
    pub recorded: usize,
    pub true_positives: usize,
    pub type_correct: usize,
    /// Events a model was asked about, and how many answers were a valid
    /// call or no call (the rest were invalid, dropped).
    pub model_calls: usize,
    pub model_valid: usize,
    pub secrets_leaked: usize,
    pub latency_total: Duration,
    pub latency_max: Duration,
    /// Ids of events recorded but labelled not worth it, and missed ones.
    pub false_positives: Vec<u32>,
    pub missed: Vec<u32>,
}

impl Report {
    pub fn precision(&self) -> f64 {
        ratio(self.true_positives, self.recorded)
    }
    pub fn recall(&self) -> f64 {
        ratio(self.true_positives, self.labelled_worth)
    }
    pub fn type_accuracy(&self) -> f64 {
        ratio(self.type_correct, self.true_positives)
    }
    pub fn valid_call_rate(&self) -> f64 {
        ratio(self.model_valid, self.model_calls)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

/// Reads a labelled set (JSON Lines).
///
/// `⁞` in the file splits the fake tokens of the secret cases, so that no
/// secret scanner flags the repository itself; it is removed before parsing
/// (as in `fixtures/secrets/`).
pub fn load(text: &str) -> Result<Vec<Labelled>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str(&l.replace('⁞', "")).map_err(|e| format!("line {}: {e}", n + 1))
        })
        .collect()
}

/// Every string of the payload a secret rule flags.
fn secrets_in(value: &serde_json::Value, found: &mut Vec<String>) {
    match value {
        serde_json::Value::String(text) => {
            found.extend(
                text.lines()
                    .filter_map(|line| secrets::scan(line).map(|f| line[f.secret].to_owned())),
            );
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| secrets_in(v, found)),
        serde_json::Value::Object(map) => map.values().for_each(|v| secrets_in(v, found)),
        _ => {}
    }
}

/// Replays the set: rules first, `generator` on what they cannot judge,
/// then [`guard`] as the worker runs it before the store.
pub fn evaluate(
    set: &[Labelled],
    root: &Path,
    generator: Option<&mut (dyn Generator + '_)>,
) -> Report {
    evaluate_with(set, root, generator, Context::Plain)
}

/// [`evaluate`], the model shown `context` of each event.
pub fn evaluate_with(
    set: &[Labelled],
    root: &Path,
    mut generator: Option<&mut (dyn Generator + '_)>,
    context: Context,
) -> Report {
    let mut report = Report::default();
    let mut sessions: std::collections::BTreeMap<String, AgentSession> = Default::default();
    for labelled in set {
        let mut payload = labelled.payload.clone();
        let mut planted = Vec::new();
        secrets_in(&payload, &mut planted);
        event::sanitize(&mut payload);
        let started = Instant::now();
        let session_id = payload["session_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let session = sessions.entry(session_id).or_default();
        let facts = session.facts(&payload, root);
        let observation = match (session.apply(&facts), generator.as_deref_mut()) {
            (Verdict::Store(observation) | Verdict::Hold(observation), _) => Some(observation),
            (Verdict::Consult(_), Some(generator)) => {
                report.model_calls += 1;
                match judge_with(generator, &facts, context) {
                    Ok(observation) => {
                        report.model_valid += 1;
                        observation
                    }
                    Err(_) => None,
                }
            }
            _ => None,
        };
        // The worker's last check before the store.
        let observation = observation
            .and_then(|observation| guard(session.hide_secrets(observation)).observation);
        let elapsed = started.elapsed();
        report.latency_total += elapsed;
        report.latency_max = report.latency_max.max(elapsed);
        report.events += 1;
        report.labelled_worth += usize::from(labelled.worth);
        let Some(observation) = observation else {
            if labelled.worth {
                report.missed.push(labelled.id);
            }
            continue;
        };
        report.recorded += 1;
        if secrets::scan(&observation.content).is_some()
            || planted
                .iter()
                .any(|s| observation.content.contains(s.as_str()))
        {
            report.secrets_leaked += 1;
        }
        if labelled.worth {
            report.true_positives += 1;
            if labelled.kind.as_deref() == Some(observation.kind.as_str()) {
                report.type_correct += 1;
            }
        } else {
            report.false_positives.push(labelled.id);
        }
    }
    report
}
