//! What a range does to the code memories cite: the memories live where
//! the range starts whose cited lines it changes or removes, so the author
//! of a pull request can supersede them in the same pull request. Judged
//! as a sync judges ([`citation::locate`]), from git alone: each citation
//! of a file the range changes, located where the range starts (it must
//! hold there: a citation already lost is not the range's doing) and at
//! HEAD.

use super::*;
use crate::adapters::sync::cites::Texts;
use crate::domain::citation::{self, Checked};

/// A memory whose cited code the range changes.
#[derive(Debug, Clone)]
pub struct CitedChange {
    pub id: String,
    pub kind: String,
    /// At most 200 characters of its content, secrets masked.
    pub content: String,
    /// Its citations the range changes or removes, each judged at HEAD
    /// (`changed` or `gone`, with its lines there when known).
    pub cites: Vec<Checked>,
    /// What the range itself does about it: `superseded by ID`,
    /// `forgotten`; `None` when nothing yet.
    pub handled: Option<String>,
}

/// The memories live at `since` whose citations `since..head` loses, in
/// the order of their files. Nothing without a common history.
pub(super) fn cited_changes(
    workspace: &Workspace,
    since: Option<gix::ObjectId>,
    head: gix::ObjectId,
    diff: &Diff<'_>,
) -> Result<Vec<CitedChange>, AppError> {
    let git = |err| AppError::from(anyhow::Error::new(err));
    let Some(since) = since else {
        return Ok(Vec::new());
    };
    let (since_tree, head_tree) = (
        workspace.tree_of(since).map_err(git)?,
        workspace.tree_of(head).map_err(git)?,
    );
    let changes = workspace
        .diff_trees(Some(since_tree), Some(head_tree))
        .map_err(git)?;
    let memory_folder = format!("{MEMORY_DIR}/");
    let touched: HashSet<&str> = changes
        .modified
        .iter()
        .map(String::as_str)
        .chain(changes.deleted.iter().map(|(path, _)| path.as_str()))
        .filter(|path| !path.starts_with(&memory_folder))
        .collect();
    if touched.is_empty() {
        return Ok(Vec::new());
    }
    let memories = citing_memories(workspace, since, &touched)?;
    let mut texts = Texts::new(workspace);
    let mut found = Vec::new();
    for memory in memories {
        let mut cites = Vec::new();
        for anchor in citation::of_record(&memory.extra).anchors {
            if !touched.contains(anchor.path.as_str()) {
                continue;
            }
            let then = texts.of_hex(&anchor.blob);
            let at = |texts: &mut Texts<'_>, tree| {
                workspace
                    .object_at(tree, &anchor.path)
                    .and_then(|blob| texts.of(blob))
            };
            let before = at(&mut texts, since_tree);
            if !citation::locate(&anchor, before.as_deref(), then.as_deref()).intact() {
                continue;
            }
            let now = at(&mut texts, head_tree);
            let judged = citation::locate(&anchor, now.as_deref(), then.as_deref());
            if judged.intact() {
                continue;
            }
            cites.push(Checked {
                path: anchor.path.clone(),
                cited: (anchor.start, anchor.end),
                verdict: judged.name().to_owned(),
                lines: judged.lines(&anchor),
                now_path: None,
                change: None,
            });
        }
        if cites.is_empty() {
            continue;
        }
        found.push(CitedChange {
            handled: handled(diff, &memory.id),
            kind: memory.kind,
            content: shown(&memory.content, 200),
            id: memory.id,
            cites,
        });
    }
    Ok(found)
}

/// What the range's new lines do about memory `id`: a memory that
/// supersedes it, or a tombstone.
fn handled(diff: &Diff<'_>, id: &str) -> Option<String> {
    diff.added.iter().find_map(|line| match &line.entry {
        Some(Entry::Memory(memory)) if memory.supersedes.as_deref() == Some(id) => {
            Some(format!("superseded by {}", memory.id))
        }
        Some(Entry::Tombstone(tombstone)) if tombstone.forgets == id => Some("forgotten".into()),
        _ => None,
    })
}

/// The memories live at `commit` (neither forgotten nor superseded there)
/// citing a path of `paths`. Only lines naming a citation, a tombstone's
/// or a replacement's field are parsed: a large log without citations
/// costs a scan of its bytes.
fn citing_memories(
    workspace: &Workspace,
    commit: gix::ObjectId,
    paths: &HashSet<&str>,
) -> Result<Vec<Memory>, AppError> {
    let git = |err| AppError::from(anyhow::Error::new(err));
    let fields = aho_corasick::AhoCorasick::new([
        format!("\"{}\"", citation::FIELD),
        "\"forgets\"".to_owned(),
        "\"supersedes\"".to_owned(),
    ])
    .expect("three literal patterns");
    let mut citing = Vec::new();
    let mut hidden: HashSet<String> = HashSet::new();
    for (_, blob) in workspace.memory_files_at(commit).map_err(git)? {
        let bytes = workspace.read_blob(blob).map_err(git)?;
        for (_, raw) in goldfish_log::record::split_lines(&bytes) {
            if !fields.is_match(raw) {
                continue;
            }
            match Entry::parse(raw) {
                Ok(Entry::Tombstone(tombstone)) => {
                    hidden.insert(tombstone.forgets);
                }
                Ok(Entry::Memory(memory)) => {
                    if let Some(older) = &memory.supersedes {
                        hidden.insert(older.clone());
                    }
                    let cites_one = citation::of_record(&memory.extra)
                        .anchors
                        .iter()
                        .any(|anchor| paths.contains(anchor.path.as_str()));
                    if cites_one {
                        citing.push(memory);
                    }
                }
                _ => {}
            }
        }
    }
    citing.retain(|memory| !hidden.contains(&memory.id));
    Ok(citing)
}
