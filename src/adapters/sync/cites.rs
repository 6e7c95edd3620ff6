//! The citations checked at a sync: each one due is located at HEAD by
//! the core ([`citation::locate`]) in its file's current version, with the
//! anchored version when the repository has it; one whose text is lost
//! is credited to the first commit on HEAD's first-parent line whose
//! version of the file lost it. An unchanged blob costs nothing: only the
//! citations of paths that changed between the last HEAD walked and this
//! one are read, and those not checked yet or not intact.

use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

use super::SyncError;
use crate::adapters::git::Workspace;
use crate::adapters::index::writing::{DueCite, Writing};
use crate::domain::citation::{self, Anchor, Change, Location, Normalised};

/// Commits followed back from HEAD to find who changed a citation, at most.
const MAX_CHAIN: usize = 256;

/// Checks the citations due at `head` (`old_head`: the last HEAD walked;
/// `all`: every citation, as after a walk from the start). Returns the
/// memories whose citations' verdicts changed.
pub(super) fn check(
    writing: &Writing<'_>,
    workspace: &Workspace,
    head: Option<gix::ObjectId>,
    old_head: Option<gix::ObjectId>,
    all: bool,
) -> Result<Vec<String>, SyncError> {
    let Some(head) = head else {
        return Ok(Vec::new());
    };
    if !writing.cites_any()? {
        return Ok(Vec::new());
    }
    let tree = workspace.tree_of(head)?;
    let (paths, all) = match old_head {
        Some(old) if !all && old != head => {
            let changes = workspace.diff_trees(Some(workspace.tree_of(old)?), Some(tree))?;
            let mut paths: Vec<String> = changes.modified;
            paths.extend(changes.deleted.into_iter().map(|(path, _)| path));
            paths.extend(changes.added.into_iter().map(|(path, _)| path));
            (paths, false)
        }
        Some(_) if !all => (Vec::new(), false),
        _ => (Vec::new(), true),
    };
    let mut texts = Texts::new(workspace);
    let mut changed = BTreeSet::new();
    // What one check reads once, however many citations share it: the
    // blob at each path, where renames took a path HEAD lacks, whether a
    // commit is HEAD's, and the judgement of an anchor against a version
    // (several memories cite one fix).
    let mut blobs: HashMap<String, Option<gix::ObjectId>> = HashMap::new();
    let mut renames: HashMap<String, Option<(String, gix::ObjectId)>> = HashMap::new();
    let mut ancestors: HashMap<gix::ObjectId, bool> = HashMap::new();
    let mut judged: HashMap<Judged, (Location, Option<Change>)> = HashMap::new();
    let mut blob_at = |path: &str| {
        *blobs
            .entry(path.to_owned())
            .or_insert_with(|| workspace.object_at(tree, path))
    };
    for cite in writing.cites_due(&paths, all)? {
        if !cite.committed {
            // Stored, not committed: its code may be too; judged once the
            // commit brings both.
            if writing.unjudge_cite(&cite.id, cite.n)? {
                changed.insert(cite.id);
            }
            continue;
        }
        // Where its file is: its cited path, else the path a rename the
        // last check followed took it to.
        let mut now_path = None;
        let mut blob = blob_at(&cite.anchor.path);
        if blob.is_none()
            && let Some(path) = &cite.now_path
            && let Some(id) = blob_at(path)
        {
            (now_path, blob) = (Some(path.clone()), Some(id));
        }
        let blob_hex = blob.map(|id| id.to_string()).unwrap_or_default();
        let in_head = |commit| {
            *ancestors
                .entry(commit)
                .or_insert_with(|| workspace.is_ancestor(commit, head))
        };
        if unchanged(in_head, &cite, &blob_hex) && cite.now_path == now_path {
            continue;
        }
        if blob.is_none()
            && let Some((path, id)) = renames
                .entry(cite.anchor.path.clone())
                .or_insert_with(|| renamed(workspace, head, &cite.anchor.path))
                .clone()
        {
            (now_path, blob) = (Some(path), Some(id));
        }
        let blob_hex = blob.map(|id| id.to_string()).unwrap_or_default();
        let key = Judged {
            anchor: cite.anchor.clone(),
            blob,
            now_path: now_path.clone(),
        };
        let (found, change) = judged
            .entry(key)
            .or_insert_with(|| judge(workspace, &mut texts, head, &cite.anchor, blob, &now_path))
            .clone();
        if writing.store_cite(
            &cite.id,
            cite.n,
            &cite.anchor,
            &found,
            (&blob_hex, now_path.as_deref()),
            change.as_ref(),
        )? {
            changed.insert(cite.id);
        }
    }
    Ok(changed.into_iter().collect())
}

/// An anchor judged against a version of its file, at its cited path or
/// (`now_path`) where a rename took it.
#[derive(PartialEq, Eq, Hash)]
struct Judged {
    anchor: Anchor,
    blob: Option<gix::ObjectId>,
    now_path: Option<String>,
}

/// The verdict of `anchor` in `blob` at HEAD, and for a lost text the
/// commit that lost it.
fn judge(
    workspace: &Workspace,
    texts: &mut Texts<'_>,
    head: gix::ObjectId,
    anchor: &Anchor,
    blob: Option<gix::ObjectId>,
    now_path: &Option<String>,
) -> (Location, Option<Change>) {
    let now = blob.and_then(|id| texts.of(id));
    let then = texts.of_hex(&anchor.blob);
    let mut found = citation::locate(anchor, now.as_deref(), then.as_deref());
    if now_path.is_some() && found == Location::Holds {
        // Its lines in another file: the memory follows it there.
        found = Location::Moved {
            start: anchor.start,
            end: anchor.end,
        };
    }
    let change =
        (!found.intact()).then(|| culprit(workspace, texts, head, anchor, now_path.as_deref()));
    (found, change)
}

/// Whether the last check stands: the same blob, and for a lost text a
/// commit still in HEAD's history (`in_head`; a rebase rewrites it: found
/// again).
fn unchanged(mut in_head: impl FnMut(gix::ObjectId) -> bool, cite: &DueCite, blob: &str) -> bool {
    let Some(verdict) = &cite.verdict else {
        return false;
    };
    if cite.checked_blob.as_deref() != Some(blob) {
        return false;
    }
    if verdict == citation::HOLDS || verdict == citation::MOVED {
        return true;
    }
    cite.commit
        .as_deref()
        .and_then(|commit| gix::ObjectId::from_hex(commit.as_bytes()).ok())
        .is_some_and(&mut in_head)
}

/// Renames followed from a cited path, at most.
const MAX_RENAMES: usize = 4;

/// Where a cited file HEAD no longer has went, when renames took it there:
/// the commit on HEAD's first-parent line that removed the path (at most
/// [`MAX_CHAIN`] back) renamed it (git's `-M`: the same blob, or one at
/// least half alike), and so on to a path HEAD has; with its blob there.
fn renamed(
    workspace: &Workspace,
    head: gix::ObjectId,
    path: &str,
) -> Option<(String, gix::ObjectId)> {
    let mut path = path.to_owned();
    for _ in 0..MAX_RENAMES {
        // The newest commit of the line without the path whose parent has it.
        let mut child = head;
        let mut steps = 0;
        loop {
            let parent = workspace.first_parent(child)?;
            if workspace.object_in_commit(parent, &path).is_some() {
                break;
            }
            child = parent;
            steps += 1;
            if steps >= MAX_CHAIN {
                return None;
            }
        }
        let info = workspace.commit_info(child).ok()?;
        let to = crate::adapters::history::paths::deleted_by(workspace, &info)
            .ok()?
            .into_iter()
            .find(|(deleted, _)| *deleted == path)?
            .1?;
        if let Some(blob) = workspace.object_in_commit(head, &to) {
            return Some((to, blob));
        }
        path = to;
    }
    None
}

/// The first commit, on HEAD's first-parent line back to the anchored
/// version (at most [`MAX_CHAIN`] commits), whose version of the file (at
/// its cited path, else at `renamed_to`) no longer has the cited text; the
/// oldest commit followed when none is found before it.
fn culprit(
    workspace: &Workspace,
    texts: &mut Texts<'_>,
    head: gix::ObjectId,
    anchor: &Anchor,
    renamed_to: Option<&str>,
) -> Change {
    let anchored = gix::ObjectId::from_hex(anchor.blob.as_bytes()).ok();
    let mut chain: Vec<(gix::ObjectId, Option<gix::ObjectId>)> = Vec::new();
    let mut at = Some(head);
    while let Some(commit) = at
        && chain.len() < MAX_CHAIN
    {
        // The file at its cited path, else where a rename took it.
        let blob = workspace
            .object_in_commit(commit, &anchor.path)
            .or_else(|| renamed_to.and_then(|path| workspace.object_in_commit(commit, path)));
        chain.push((commit, blob));
        if blob.is_some() && blob == anchored {
            break;
        }
        at = workspace.first_parent(commit);
    }
    let then = texts.of_hex(&anchor.blob);
    let mut previous = None;
    let mut culprit = chain.last().map_or(head, |(commit, _)| *commit);
    for (commit, blob) in chain.iter().rev() {
        if previous == Some(*blob) {
            continue;
        }
        previous = Some(*blob);
        let now = blob.and_then(|id| texts.of(id));
        if !citation::locate(anchor, now.as_deref(), then.as_deref()).intact() {
            culprit = *commit;
            break;
        }
    }
    match workspace.commit_info(culprit) {
        Ok(info) => Change {
            commit: info.id.to_string(),
            author: info.author,
            author_name: info.author_name,
            author_email: info.author_email,
            date: info.date,
        },
        Err(_) => Change {
            commit: culprit.to_string(),
            ..Change::default()
        },
    }
}

/// The versions of the blobs read during one check, each read once: `None`
/// for an object that is not a readable UTF-8 file within
/// [`citation::MAX_FILE_BYTES`].
pub(crate) struct Texts<'w> {
    workspace: &'w Workspace,
    read: HashMap<gix::ObjectId, Option<Rc<Normalised>>>,
}

impl<'w> Texts<'w> {
    pub(crate) fn new(workspace: &'w Workspace) -> Self {
        Texts {
            workspace,
            read: HashMap::new(),
        }
    }

    pub(crate) fn of(&mut self, id: gix::ObjectId) -> Option<Rc<Normalised>> {
        self.read
            .entry(id)
            .or_insert_with(|| {
                let bytes = self.workspace.read_blob(id).ok()?;
                if bytes.len() > citation::MAX_FILE_BYTES {
                    return None;
                }
                let text = String::from_utf8(bytes).ok()?;
                Some(Rc::new(Normalised::of(&text)))
            })
            .clone()
    }

    pub(crate) fn of_hex(&mut self, hex: &str) -> Option<Rc<Normalised>> {
        self.of(gix::ObjectId::from_hex(hex.as_bytes()).ok()?)
    }
}
