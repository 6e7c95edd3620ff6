//! Capture's judgement, pure: the facts of a tool call ([`event`]), the
//! rules that decide what is worth a memory ([`rules`]), `<private>` spans
//! and secrets removed ([`redact`]), the capture model's prompt and the
//! parse of its answer ([`prompt`]). The queue, the worker, the model
//! runtime and the labelled-set evaluation are adapters
//! (`crate::adapters::capture`).

pub mod event;
pub mod failures;
pub mod prompt;
pub mod redact;
pub mod rules;

use std::path::PathBuf;

pub use rules::{Observation, Session, Verdict};

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("cannot read the model {}: {message}", .path.display())]
    Model { path: PathBuf, message: String },
    #[error("the model failed: {0}")]
    Inference(String),
    #[error("the capture command `{command}` failed: {message}")]
    Command { command: String, message: String },
}

/// Writes the answer to a prompt.
pub trait Generator {
    /// Names the model in the memories' `source` (`capture:<id>`).
    fn id(&self) -> String;
    fn generate(&mut self, prompt: &str) -> Result<String, RuntimeError>;
}

/// Asks the model about one event: `Ok(None)` when it calls no tool, `Err`
/// (the reason to count it dropped) when it fails or answers outside the
/// schema.
pub fn judge(
    generator: &mut dyn Generator,
    facts: &event::Facts,
) -> Result<Option<Observation>, String> {
    judge_with(generator, facts, prompt::Context::Plain)
}

/// [`judge`] with the model shown `context` of the event.
pub fn judge_with(
    generator: &mut dyn Generator,
    facts: &event::Facts,
    context: prompt::Context,
) -> Result<Option<Observation>, String> {
    let prompt = prompt::prompt(&prompt::describe_with(facts, context));
    let output = generator
        .generate(&prompt)
        .map_err(|err| format!("model failed: {err}"))?;
    match prompt::parse(&output) {
        prompt::Answer::Nothing => Ok(None),
        prompt::Answer::Invalid(why) => Err(format!("invalid tool call: {why}")),
        prompt::Answer::Observation { kind, text } => {
            let text = redact::strip_private(&text);
            let (text, secret) = redact::remove_secrets(&text);
            if secret {
                return Err("the model's text looks like it holds a secret".to_owned());
            }
            Ok(Some(Observation {
                kind,
                content: text,
                files: facts.modified.clone(),
                source: format!("capture:{}", generator.id()),
            }))
        }
    }
}
