//! What an operation tells its caller besides the answer: notes and
//! warnings, kept as data for the front end to show.

/// Something the caller should be told that is not the answer: a note or a
/// warning (the command line prints it on stderr; so does the MCP server,
/// whose stdout is the protocol).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub level: Level,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Note,
    Warning,
}

impl Notice {
    pub fn note(text: impl Into<String>) -> Notice {
        Notice {
            level: Level::Note,
            text: text.into(),
        }
    }

    pub fn warning(text: impl Into<String>) -> Notice {
        Notice {
            level: Level::Warning,
            text: text.into(),
        }
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
