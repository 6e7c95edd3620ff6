//! Generators of the model's answer: an external command that gets the
//! prompt on stdin and prints the answer, or (in a build with the
//! `capture-model` feature) a GGUF model run in process (`gguf.rs`).

use std::path::Path;
use std::time::Duration;

#[cfg(feature = "capture-model")]
pub use super::gguf::{GgufModel, MAX_NEW_TOKENS, MAX_PROMPT_TOKENS};
pub use crate::domain::capture::{Generator, RuntimeError};

/// An external command (`GOLDFISH_CAPTURE_COMMAND`, run by `sh -c`): the
/// prompt on its stdin, the answer from its stdout, within a timeout
/// ([`crate::adapters::shell::run`]: killed with whatever it started).
pub struct CommandGenerator {
    pub command: String,
    pub timeout: Duration,
}

impl Generator for CommandGenerator {
    fn id(&self) -> String {
        let program = self.command.split_whitespace().next().unwrap_or("command");
        let name = Path::new(program)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("command-{name}")
    }

    fn generate(&mut self, prompt: &str) -> Result<String, RuntimeError> {
        let failed = |message: String| RuntimeError::Command {
            command: self.command.clone(),
            message,
        };
        let finished = crate::adapters::shell::run(&self.command, prompt, self.timeout, 1 << 20)
            .map_err(|err| failed(err.to_string()))?;
        if !finished.status.success() {
            return Err(failed(format!("exit status {}", finished.status)));
        }
        Ok(String::from_utf8_lossy(&finished.stdout).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: a timed-out `GOLDFISH_CAPTURE_COMMAND` was killed, but
    /// not what it had started (5 timeouts left 5 processes behind). A
    /// shell script stands in for the LLM's command line.
    #[test]
    fn a_timed_out_capture_command_leaves_no_process_behind() {
        use crate::adapters::shell::testing;
        use std::time::Instant;
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        let mut generator = CommandGenerator {
            command: testing::lingering(&pids),
            timeout: Duration::from_millis(300),
        };
        let started = Instant::now();
        let err = generator.generate("prompt").unwrap_err();
        assert!(err.to_string().contains("no answer within"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(testing::recorded(&pids).len(), 2, "the command ran");
        assert_eq!(testing::survivors(&pids), Vec::<u32>::new());
    }
}
