//! Every line the front ends write on stderr goes through here, escaped
//! for the terminal: a notice, an error or a hint can quote a name, a path
//! or a query that came from a stranger (through git, an agent's payload).
//! stdout is the product's output (and the MCP protocol); stderr is for
//! people. An agent hook Gemini CLI runs (which shows a hook's stderr to
//! the user) sends them to the hook log instead ([`into_hook_log`]).

use std::sync::{Mutex, OnceLock};

use crate::app::Notice;
use crate::app::agent::HookLog;
use crate::app::render::terminal_safe;

/// Where the lines go when not on stderr.
static HOOK_LOG: OnceLock<HookLog> = OnceLock::new();

/// The errors a hook said ([`hook_error`]), for its answer.
static HOOK_ERRORS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// From now on every line goes to `log`, none to stderr; a line the log
/// cannot keep is lost (an error still reaches the hook's answer:
/// [`hook_errors`]).
pub fn into_hook_log(log: HookLog) {
    let _ = HOOK_LOG.set(log);
}

fn write(text: &str) {
    match HOOK_LOG.get() {
        Some(log) => {
            let _ = log.append(text);
        }
        None => eprint!("{text}"),
    }
}

/// A note or a warning ([`Notice`] escapes its own text).
pub fn notice(notice: &Notice) {
    write(&format!("{notice}\n"));
}

/// A line that is not a notice: an error, a hint, a hook's or a server's
/// report.
pub fn line(text: &str) {
    write(&format!("{}\n", terminal_safe(text)));
}

/// Text without a line end of its own: a question waiting for its answer
/// on the same line, or a block that ends in its own line break.
pub fn text(text: &str) {
    write(&terminal_safe(text));
}

/// An agent hook's failure to do its work: a [`line()`], kept for
/// [`hook_errors`].
pub fn hook_error(text: &str) {
    line(text);
    if let Ok(mut errors) = HOOK_ERRORS.lock() {
        errors.push(terminal_safe(text).into_owned());
    }
}

/// The errors said with [`hook_error`] so far, escaped.
pub fn hook_errors() -> Vec<String> {
    HOOK_ERRORS
        .lock()
        .map(|errors| errors.clone())
        .unwrap_or_default()
}
