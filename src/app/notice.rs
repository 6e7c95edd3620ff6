//! What an operation tells its caller besides the answer: notes and
//! warnings, kept as data for the front end to show.

use super::render::terminal_safe;

/// Something the caller should be told that is not the answer: a note or a
/// warning (the command line prints it on stderr; so does the MCP server,
/// whose stdout is the protocol).
///
/// Its text is safe for a terminal, whoever shows it: what it quotes of a
/// repository (a memory file's name, a path) can hold escape sequences, so
/// the constructors escape them as [`terminal_safe`] does, and the text is
/// read only through [`Notice::text`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    level: Level,
    text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Note,
    Warning,
}

impl Notice {
    pub fn note(text: impl Into<String>) -> Notice {
        Notice::new(Level::Note, text.into())
    }

    pub fn warning(text: impl Into<String>) -> Notice {
        Notice::new(Level::Warning, text.into())
    }

    fn new(level: Level, text: String) -> Notice {
        let text = match terminal_safe(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(escaped) => escaped,
        };
        Notice { level, text }
    }

    pub fn level(&self) -> Level {
        self.level
    }

    /// The text, escaped for a terminal.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let level = match self.level {
            Level::Note => "note",
            Level::Warning => "warning",
        };
        write!(f, "{level}: {}", self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_holds_no_control_a_terminal_would_act_on() {
        let notice =
            Notice::warning(".goldfish/memories/x\u{1b}]0;pwned\u{7}\u{9b}.jsonl: skipped");
        assert_eq!(
            notice.to_string(),
            "warning: .goldfish/memories/x\\u001b]0;pwned\\u0007\\u009b.jsonl: skipped"
        );
        assert_eq!(
            Notice::note("line one\n\tline two").text(),
            "line one\n\tline two"
        );
    }
}
