//! Whether a branch's work landed in HEAD: its tip in HEAD's history, or
//! HEAD holding every path it changed. The index records the branches and
//! marks the memories of a deleted, unmerged one `branch-deleted`.

use std::collections::BTreeSet;

use crate::adapters::git::{GitError, Workspace};

/// goldfish's own folder (memories, config): left out of what a branch
/// changed, since memories merge line by line.
const GOLDFISH_DIR: &str = ".goldfish/";

/// HEAD's tree, read once for every branch judged in one sync.
#[derive(Default)]
pub struct Landed {
    head_tree: Option<(gix::ObjectId, gix::ObjectId)>,
}

impl Landed {
    /// Whether the work of a branch whose last tip was `tip` is in `head`:
    /// `tip` is in HEAD's history (a merge, a fast-forward), or the branch
    /// changed nothing but memories, or HEAD changed every path the branch
    /// changed since their merge base (a squash or a cherry-pick brought
    /// it; goldfish's folder is left out). `None` when the tip is no longer in the repository.
    ///
    /// The last test errs on the side of "merged": a memory then stays as
    /// it was, where the other way would take a landed branch's memories
    /// out of the briefing.
    pub fn landed(
        &mut self,
        workspace: &Workspace,
        tip: gix::ObjectId,
        head: gix::ObjectId,
    ) -> Result<Option<bool>, GitError> {
        if !workspace.has_commit(tip) {
            return Ok(None);
        }
        if workspace.is_ancestor(tip, head) {
            return Ok(Some(true));
        }
        let Some(base) = workspace.merge_base(tip, head) else {
            return Ok(Some(false));
        };
        let base_tree = workspace.tree_of(base)?;
        let changes = workspace.diff_trees(Some(base_tree), Some(workspace.tree_of(tip)?))?;
        let paths: BTreeSet<&str> = changes
            .paths()
            .filter(|path| !path.starts_with(GOLDFISH_DIR))
            .collect();
        let head_tree = match self.head_tree {
            Some((at, tree)) if at == head => tree,
            _ => {
                let tree = workspace.tree_of(head)?;
                self.head_tree = Some((head, tree));
                tree
            }
        };
        Ok(Some(paths.into_iter().all(|path| {
            workspace.object_at(head_tree, path) != workspace.object_at(base_tree, path)
        })))
    }
}
