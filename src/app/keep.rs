//! Keeping a captured memory: capture writes into `.goldfish/memories/`
//! and never commits, so a memory it made reaches the team once a person
//! commits its log file. [`keeping`] says what that commit takes (the
//! file, and every line of it not committed yet); [`keep`] makes it, as
//! `git commit -m MESSAGE -- FILE` does: a new commit of that file alone
//! (whatever else is staged stays staged), history never rewritten.

use std::collections::HashMap;

use super::show::show;
use super::{AppError, Session};
use crate::adapters::git::{MEMORY_DIR, Workspace};
use crate::domain::memory::Entry;
use crate::domain::recall::Captured;
use crate::domain::recalled::IndexedMemory;

/// What keeping a captured memory commits.
pub struct Keeping {
    pub memory: IndexedMemory,
    /// The log file, from the repository's root.
    pub path: String,
    /// The ids of the file's other lines not committed yet (memories,
    /// tombstones, trust lines): the commit takes them too.
    pub others: Vec<String>,
    /// The lines of the file not committed yet that are not records.
    pub unreadable: usize,
    /// Whether git knows the file yet (capture may have started it): a
    /// new one is added first.
    pub tracked: bool,
}

impl Keeping {
    /// The commit's message.
    pub fn message(&self) -> String {
        format!("Keep the captured memory {}", self.memory.id)
    }

    /// The command line that does the same.
    pub fn command(&self) -> String {
        let path = shell_quoted(&self.path);
        let commit = format!("git commit -m {} -- {path}", shell_quoted(&self.message()));
        if self.tracked {
            commit
        } else {
            format!("git add -- {path} && {commit}")
        }
    }
}

/// A kept memory: what was committed, and the commit.
pub struct Kept {
    pub keeping: Keeping,
    pub commit: String,
}

/// `text` as one word for a POSIX shell.
pub fn shell_quoted(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:,=@+%".contains(&b));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// What keeping the memory `id` (an id or a unique prefix) would commit;
/// an input error when it is not a captured memory waiting to be committed.
pub fn keeping(
    session: &mut Session,
    workspace: &Workspace,
    id: &str,
) -> Result<Keeping, AppError> {
    let memory = show(session, workspace.root(), &[id.to_owned()])?
        .pop()
        .ok_or_else(|| AppError::input(anyhow::anyhow!("no memory has the id `{id}`")))?;
    let captured = memory
        .source
        .as_deref()
        .is_some_and(|source| source.starts_with(Captured::SOURCE_PREFIX));
    if !captured {
        return Err(AppError::input(anyhow::anyhow!(
            "{} was not captured from an agent's tool use: nothing to keep",
            memory.id
        )));
    }
    if memory.introduced.is_some() {
        return Err(AppError::input(anyhow::anyhow!(
            "{} is committed already: the team has it",
            memory.id
        )));
    }
    let name = memory.file.clone();
    if name.contains('/') || !name.ends_with(".jsonl") {
        return Err(AppError::input(anyhow::anyhow!(
            "{} is in `{name}`, not a memory file",
            memory.id
        )));
    }
    let file = workspace.memory_dir().join(&name);
    let now = std::fs::read(&file)
        .map_err(|err| anyhow::Error::new(err).context(format!("reading {}", file.display())))?;
    let path = format!("{MEMORY_DIR}/{name}");
    let tracked = !workspace
        .git(&["--literal-pathspecs", "ls-files", "--", &path])
        .map_err(|err| anyhow::Error::new(err).context(format!("asking git about {path}")))?
        .trim()
        .is_empty();
    let committed = workspace
        .head_commit()
        .and_then(|head| workspace.memory_file_at(head, &name))
        .unwrap_or_default();
    // The lines of the work tree's file that HEAD's lacks, as multisets.
    let mut in_head: HashMap<&[u8], usize> = HashMap::new();
    for (_, line) in goldfish_log::record::split_lines(&committed) {
        *in_head.entry(line).or_default() += 1;
    }
    let mut others = Vec::new();
    let mut unreadable = 0;
    let mut found = false;
    for (_, line) in goldfish_log::record::split_lines(&now) {
        if let Some(left) = in_head.get_mut(line).filter(|left| **left > 0) {
            *left -= 1;
            continue;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match Entry::parse(line) {
            Ok(entry) if entry.id() == memory.id => found = true,
            Ok(entry) => others.push(entry.id().to_owned()),
            Err(_) => unreadable += 1,
        }
    }
    if !found {
        return Err(AppError::input(anyhow::anyhow!(
            "{} is not among the lines of {MEMORY_DIR}/{name} that are not committed",
            memory.id
        )));
    }
    Ok(Keeping {
        path,
        memory,
        others,
        unreadable,
        tracked,
    })
}

/// Commits the log file of the captured memory `id` (see [`keeping`]).
pub fn keep(session: &mut Session, workspace: &Workspace, id: &str) -> Result<Kept, AppError> {
    let keeping = keeping(session, workspace, id)?;
    let message = keeping.message();
    if !keeping.tracked {
        workspace
            .git(&["--literal-pathspecs", "add", "--", &keeping.path])
            .map_err(|err| anyhow::Error::new(err).context(format!("adding {}", keeping.path)))?;
    }
    workspace
        .git(&[
            "--literal-pathspecs",
            "commit",
            "-q",
            "-m",
            &message,
            "--",
            &keeping.path,
        ])
        .map_err(|err| anyhow::Error::new(err).context(format!("committing {}", keeping.path)))?;
    let commit = workspace
        .git(&["rev-parse", "HEAD"])
        .map_err(|err| anyhow::Error::new(err).context("reading the new commit"))?
        .trim()
        .to_owned();
    Ok(Kept { keeping, commit })
}

#[cfg(test)]
mod tests {
    use super::shell_quoted;

    #[test]
    fn words_are_quoted_for_a_shell() {
        assert_eq!(
            shell_quoted(".goldfish/memories/a.jsonl"),
            ".goldfish/memories/a.jsonl"
        );
        assert_eq!(shell_quoted("it's"), r"'it'\''s'");
        assert_eq!(shell_quoted("a b"), "'a b'");
        assert_eq!(shell_quoted(""), "''");
    }
}
