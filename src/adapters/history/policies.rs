//! The trust policy of `.goldfish/config` (and of the allowed-signers file
//! kept in the repository) at each commit, each blob read once.

use std::collections::HashMap;

use crate::adapters::git::{CommitInfo, GitError, Workspace};
use crate::domain::policy_history::{self, Raw};

/// Reads the trust policy of `.goldfish/config` at commits, each blob
/// once, and, when asked, the version of the allowed-signers file kept in
/// the repository.
pub struct Policies<'w> {
    workspace: &'w Workspace,
    blob_at: HashMap<gix::ObjectId, Option<gix::ObjectId>>,
    raw_of: HashMap<gix::ObjectId, Raw>,
    /// The repository path of the allowed-signers file, when it is part
    /// of the policy.
    signers: Option<String>,
}

impl<'w> Policies<'w> {
    pub fn new(workspace: &'w Workspace) -> Self {
        Policies {
            workspace,
            blob_at: HashMap::new(),
            raw_of: HashMap::new(),
            signers: None,
        }
    }

    /// Follows the allowed-signers file too, when git verifies signatures
    /// against one kept in the repository
    /// ([`Workspace::signers_file_in_repo`]).
    pub fn with_signers(mut self) -> Self {
        self.signers = self.workspace.signers_file_in_repo();
        self
    }

    /// The repository path of the signers file it follows.
    pub fn signers_path(&self) -> Option<&str> {
        self.signers.as_deref()
    }

    /// The version of the signers file it follows at `commit`.
    pub fn signers_at(&self, commit: gix::ObjectId) -> Option<gix::ObjectId> {
        self.workspace
            .object_in_commit(commit, self.signers.as_deref()?)
    }

    /// The blob of the config of `commit` (`None`: no config).
    fn blob(&mut self, commit: gix::ObjectId) -> Result<Option<gix::ObjectId>, GitError> {
        if let Some(blob) = self.blob_at.get(&commit) {
            return Ok(*blob);
        }
        let blob = self.workspace.repo_config_at(commit)?;
        self.blob_at.insert(commit, blob);
        Ok(blob)
    }

    /// What the config of `commit` says of the policy.
    pub fn at(&mut self, commit: gix::ObjectId) -> Result<Raw, GitError> {
        let Some(blob) = self.blob(commit)? else {
            return Ok(Raw::Absent);
        };
        if let Some(raw) = self.raw_of.get(&blob) {
            return Ok(raw.clone());
        }
        let raw = Raw::of(Some(&self.workspace.read_blob(blob)?));
        self.raw_of.insert(blob, raw.clone());
        Ok(raw)
    }

    /// The steps of [`policy_history::walk`] for `commits` (oldest first).
    pub fn steps(
        &mut self,
        commits: &[CommitInfo],
    ) -> Result<Vec<policy_history::Step<gix::ObjectId>>, GitError> {
        commits
            .iter()
            .map(|commit| {
                let blob = self.blob(commit.id)?;
                let before = match commit.parents.first() {
                    Some(parent) => self.blob(*parent)?,
                    None => None,
                };
                let signers = self.signers_at(commit.id);
                let signers_before = commit
                    .parents
                    .first()
                    .and_then(|parent| self.signers_at(*parent));
                Ok(policy_history::Step {
                    commit: commit.id,
                    parents: commit.parents.clone(),
                    raw: self.at(commit.id)?,
                    signers: signers.map(|blob| blob.to_string()),
                    changed: blob != before || signers != signers_before,
                })
            })
            .collect()
    }

    /// The policy in effect at a commit outside a walk that no earlier
    /// walk knows: its config's, of a history of its own (a merge taking
    /// it is judged).
    pub fn seed(&mut self, commit: gix::ObjectId) -> policy_history::Effective {
        let policy = match self.at(commit) {
            Ok(Raw::Policy(policy)) => Some(policy),
            Ok(Raw::Absent) => None,
            Ok(Raw::Unusable(_)) | Err(_) => Some(policy_history::Effective::nobody()),
        };
        policy_history::Effective {
            root: Some(format!("outside:{commit}")),
            policy,
            signers: self.signers_at(commit).map(|blob| blob.to_string()),
        }
    }
}
