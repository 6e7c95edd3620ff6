//! Codex CLI's `apply_patch` text read into the edits it makes: which files
//! it adds, deletes, updates or moves, and for each hunk of an update the
//! text it replaces and the text it puts there, as Claude Code's `Edit`
//! gives them (`old_string`, `new_string`), so capture reads a patch as it
//! reads an edit.
//!
//! The form is Codex's own (`codex-rs/apply-patch`, the tool's grammar in
//! its request): `*** Begin Patch`, then per file `*** Add File: PATH`
//! (every line `+`), `*** Delete File: PATH`, or `*** Update File: PATH`
//! (optionally `*** Move to: PATH`) with hunks opened by `@@` (context
//! after it optional) of ` `, `-` and `+` lines and an optional
//! `*** End of File`, then `*** End Patch`. The text is the agent's, so
//! nothing is trusted: a line of no known form is skipped, and at most
//! [`MAX_FILES`] files and [`MAX_HUNKS`] hunks a file are kept. Paths are
//! returned as written; the caller places them (in the repository or not).

/// Files of one patch kept at most.
pub const MAX_FILES: usize = 64;

/// Hunks of one file kept at most.
pub const MAX_HUNKS: usize = 64;

/// What a patch does to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Add,
    Delete,
    Update,
}

impl Change {
    /// The word Codex's patch uses (`Add File`, …), lowercased.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Add => "add",
            Change::Delete => "delete",
            Change::Update => "update",
        }
    }
}

/// One file of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// The path as the patch names it.
    pub path: String,
    pub change: Change,
    /// Where an update moves the file (`*** Move to:`).
    pub moved_to: Option<String>,
    /// The hunks of an update, or the added file's text: each the text it
    /// replaces (its context and `-` lines; empty for an added file) and
    /// the text it leaves (its context and `+` lines).
    pub hunks: Vec<Hunk>,
}

/// One hunk: the lines it replaces and the lines it leaves, `\n`-joined.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunk {
    pub old: String,
    pub new: String,
}

impl Hunk {
    fn push(&mut self, old: Option<&str>, new: Option<&str>) {
        for (text, line) in [(&mut self.old, old), (&mut self.new, new)] {
            if let Some(line) = line {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(line);
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.old.is_empty() && self.new.is_empty()
    }
}

/// The files of a Codex patch, in the order it names them (none when the
/// text is no patch).
pub fn parse(text: &str) -> Vec<FilePatch> {
    let mut files: Vec<FilePatch> = Vec::new();
    let mut hunk = Hunk::default();
    // Whether the text since the last header belongs to a file kept.
    let mut open = false;
    let close = |files: &mut Vec<FilePatch>, hunk: &mut Hunk, open: bool| {
        let hunk = std::mem::take(hunk);
        if let Some(file) = files.last_mut().filter(|_| open)
            && !hunk.is_empty()
            && file.hunks.len() < MAX_HUNKS
        {
            file.hunks.push(hunk);
        }
    };
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let header = [
            ("*** Add File: ", Change::Add),
            ("*** Delete File: ", Change::Delete),
            ("*** Update File: ", Change::Update),
        ]
        .into_iter()
        .find_map(|(start, change)| line.strip_prefix(start).map(|path| (path.trim(), change)));
        if let Some((path, change)) = header {
            close(&mut files, &mut hunk, open);
            open = !path.is_empty() && files.len() < MAX_FILES;
            if open {
                files.push(FilePatch {
                    path: path.to_owned(),
                    change,
                    moved_to: None,
                    hunks: Vec::new(),
                });
            }
            continue;
        }
        if !open {
            continue;
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        if let Some(path) = line.strip_prefix("*** Move to: ") {
            if file.change == Change::Update && !path.trim().is_empty() {
                file.moved_to = Some(path.trim().to_owned());
            }
            continue;
        }
        if line.starts_with("*** ") {
            // `*** End of File`, `*** End Patch`: the hunk ends.
            close(&mut files, &mut hunk, open);
            if line.starts_with("*** End Patch") {
                open = false;
            }
            continue;
        }
        match file.change {
            Change::Delete => {}
            Change::Add => {
                if let Some(added) = line.strip_prefix('+') {
                    hunk.push(None, Some(added));
                }
            }
            Change::Update => {
                if line.starts_with("@@") {
                    close(&mut files, &mut hunk, open);
                } else if let Some(removed) = line.strip_prefix('-') {
                    hunk.push(Some(removed), None);
                } else if let Some(added) = line.strip_prefix('+') {
                    hunk.push(None, Some(added));
                } else if let Some(context) = line.strip_prefix(' ') {
                    hunk.push(Some(context), Some(context));
                } else if line.is_empty() {
                    // An empty context line some models write without its space.
                    hunk.push(Some(""), Some(""));
                }
            }
        }
    }
    close(&mut files, &mut hunk, open);
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_reads_as_the_text_it_replaces_and_the_text_it_leaves() {
        let patch = "*** Begin Patch\n*** Update File: src/cart.js\n@@\n const x = 1;\n-exports.total = (a, b) => a + b + 1;\n+exports.total = (a, b) => a + b;\n*** End Patch\n";
        assert_eq!(
            parse(patch),
            [FilePatch {
                path: "src/cart.js".to_owned(),
                change: Change::Update,
                moved_to: None,
                hunks: vec![Hunk {
                    old: "const x = 1;\nexports.total = (a, b) => a + b + 1;".to_owned(),
                    new: "const x = 1;\nexports.total = (a, b) => a + b;".to_owned(),
                }],
            }]
        );
    }

    #[test]
    fn adds_deletes_moves_and_hunks_of_several_files() {
        let patch = "*** Begin Patch\n*** Add File: docs/a.md\n+# A\n+text\n*** Delete File: old.rs\n*** Update File: src/lib.rs\n*** Move to: src/core.rs\n@@ fn one()\n-one\n+uno\n@@ fn two()\n-two\n+dos\n*** End of File\n*** End Patch";
        let files = parse(patch);
        assert_eq!(files.len(), 3, "{files:#?}");
        assert_eq!(
            (files[0].change, files[0].hunks[0].new.as_str()),
            (Change::Add, "# A\ntext")
        );
        assert_eq!(files[0].hunks[0].old, "");
        assert_eq!((files[1].change, files[1].hunks.len()), (Change::Delete, 0));
        assert_eq!(files[2].moved_to.as_deref(), Some("src/core.rs"));
        assert_eq!(
            files[2]
                .hunks
                .iter()
                .map(|h| (h.old.as_str(), h.new.as_str()))
                .collect::<Vec<_>>(),
            [("one", "uno"), ("two", "dos")]
        );
    }

    #[test]
    fn what_is_no_patch_gives_nothing_and_the_counts_are_bounded() {
        assert_eq!(parse("rm -rf /"), []);
        assert_eq!(parse("*** Update File: \n-a\n+b\n"), []);
        let many: String = (0..200)
            .map(|n| format!("*** Add File: f{n}\n+x\n"))
            .collect();
        assert_eq!(parse(&many).len(), MAX_FILES);
        let hunks: String = (0..200).map(|n| format!("@@\n-{n}\n+{n}!\n")).collect();
        let file = parse(&format!("*** Update File: a\n{hunks}"));
        assert_eq!(file[0].hunks.len(), MAX_HUNKS);
    }
}
