//! Every line the front ends write on stderr goes through here, escaped
//! for the terminal: a notice, an error or a hint can quote a name, a path
//! or a query that came from a stranger (through git, an agent's payload).
//! stdout is the product's output (and the MCP protocol); stderr is for
//! people.

use crate::app::Notice;
use crate::app::render::terminal_safe;

/// A note or a warning ([`Notice`] escapes its own text).
pub fn notice(notice: &Notice) {
    eprintln!("{notice}");
}

/// A line that is not a notice: an error, a hint, a hook's or a server's
/// report.
pub fn line(text: &str) {
    eprintln!("{}", terminal_safe(text));
}

/// Text without a line end of its own: a question waiting for its answer
/// on the same line, or a block that ends in its own line break.
pub fn text(text: &str) {
    eprint!("{}", terminal_safe(text));
}
