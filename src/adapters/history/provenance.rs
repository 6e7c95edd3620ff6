//! Who introduced each memory line, read from the history: the lines each
//! commit's memory files add ([`Lines`]), what each line claims of its
//! author ([`Claim`]), the signatures of the commits that introduced them
//! ([`Verifier`]) and why a change of the trust policy did not take effect
//! ([`refused_because`]). The index stores what it finds (`provenance`,
//! `policy_changes`).

use std::cell::RefCell;
use std::collections::HashMap;

use crate::adapters::git::{AllowedSigners, CommitInfo, GitError, Verified, Workspace};
use crate::domain::memory::{Entry, verdict};
use crate::domain::policy_history::{self, Outcome};
use crate::domain::sync_plan;

use super::walk::Walker;

/// A line of a memory file, as provenance keys it: its id and the blake3
/// of its canonical line ([`sync_plan::record_hash`]). Provenance follows
/// content: a line of a known id with another text is another line.
pub type LineKey = (String, String);

/// What a line of a memory file says of itself that provenance checks:
/// who it claims wrote it.
#[derive(Debug, Clone)]
pub struct Claim {
    /// The `author` field.
    pub author: Option<String>,
    /// Brought in by `goldfish import` (`imported_from`): the author is the
    /// note's, whom its committer vouches for.
    pub imported: bool,
}

impl Claim {
    /// Whether the `author` field names someone other than the author of
    /// `commit` ([`verdict::Claim::mismatches`]: the verdict's own test).
    pub fn mismatches(&self, commit: &CommitInfo) -> bool {
        let claim = verdict::Claim {
            author: self.author.as_deref(),
            imported: self.imported,
            instruction_like: false,
        };
        claim.mismatches(&commit.origin(&Verified::unsigned()))
    }
}

/// The lines the walked commits introduced.
pub struct Lines {
    /// Per line (id and hash): the commit (its index), the blob of the
    /// file it is in there, and what it claims.
    pub introduced: HashMap<LineKey, (usize, gix::ObjectId, Claim)>,
}

impl Lines {
    /// Walks `commits` (oldest first): a line is introduced by the first
    /// commit whose memory file has it while none of its parents' versions
    /// of that file do.
    pub fn walk(workspace: &Workspace, commits: &[CommitInfo]) -> Result<Self, GitError> {
        let mut introduced: HashMap<LineKey, (usize, gix::ObjectId, Claim)> = HashMap::new();
        let mut ids_in = Walker::new(workspace, claim_of);
        ids_in.walk(commits, |change| {
            if let Some(blob) = change.blob {
                for (line, claim) in change.added {
                    introduced
                        .entry(line.clone())
                        .or_insert_with(|| (change.commit, blob, claim.clone()));
                }
            }
        })?;
        Ok(Lines { introduced })
    }
}

/// Verifies commits' signatures against the allowed signers in effect at
/// them: the file git is configured with, or a version of the one kept in
/// the repository (`signers_path`).
pub struct Verifier<'w> {
    workspace: &'w Workspace,
    signers_path: Option<String>,
    judged: RefCell<HashMap<gix::ObjectId, Verified>>,
}

impl<'w> Verifier<'w> {
    pub fn new(workspace: &'w Workspace, signers_path: Option<String>) -> Self {
        Verifier {
            workspace,
            signers_path,
            judged: RefCell::default(),
        }
    }

    fn signers_of(&self, version: Option<&str>) -> AllowedSigners {
        match self.signers_path {
            Some(_) => AllowedSigners::Blob(
                version.and_then(|blob| gix::ObjectId::from_hex(blob.as_bytes()).ok()),
            ),
            None => AllowedSigners::Configured,
        }
    }

    /// The signature of a commit that changes the policy, against the
    /// `signers` version before it; kept for [`Verifier::judged`].
    pub fn judge(&self, commit: &CommitInfo, signers: Option<&str>) -> Verified {
        let verified = self
            .workspace
            .verify_signatures_with([commit], &self.signers_of(signers))
            .of(commit);
        self.judged.borrow_mut().insert(commit.id, verified.clone());
        verified
    }

    /// What [`Verifier::judge`] found of a commit (unsigned when it did not
    /// judge it).
    pub fn judged(&self, commit: gix::ObjectId) -> Verified {
        self.judged
            .borrow()
            .get(&commit)
            .cloned()
            .unwrap_or_else(Verified::unsigned)
    }

    /// The signatures of `commits`, each with the signers version in effect
    /// at it: one git process per version of the signers file.
    pub fn verify<'c>(
        &self,
        commits: impl IntoIterator<Item = (&'c CommitInfo, Option<&'c str>)>,
    ) -> HashMap<gix::ObjectId, Verified> {
        let mut by_signers: HashMap<Option<&str>, Vec<&CommitInfo>> = HashMap::new();
        for (commit, signers) in commits {
            by_signers.entry(signers).or_default().push(commit);
        }
        let mut signatures: HashMap<gix::ObjectId, Verified> = HashMap::new();
        for (signers, group) in by_signers {
            let verified = self
                .workspace
                .verify_signatures_with(group.iter().copied(), &self.signers_of(signers));
            for commit in group {
                signatures.insert(commit.id, verified.of(commit));
            }
        }
        signatures
    }
}

/// A line of a memory file with what it claims; `None` when it is not a
/// record.
pub fn claim_of(text: &[u8]) -> Option<(LineKey, Claim)> {
    {
        let entry = Entry::parse(text).ok()?;
        let (author, imported) = match &entry {
            Entry::Memory(memory) => (
                memory.author.clone(),
                memory
                    .extra
                    .contains_key(crate::domain::import::IMPORTED_FROM),
            ),
            Entry::Tombstone(tombstone) => (tombstone.author.clone(), false),
            Entry::Release(release) => (release.author.clone(), false),
        };
        let hash = sync_plan::record_hash(&entry.to_line())
            .to_hex()
            .to_string();
        Some(((entry.id().to_owned(), hash), Claim { author, imported }))
    }
}

/// What sync and doctor say of a policy change by an outsider (`why`
/// says where: `refused_because`).
pub fn policy_change_message(commit: &str, author: &str, why: &str) -> String {
    let short = commit.get(..10).unwrap_or(commit);
    format!(
        "the trust policy was changed by commit {short} ({author}) {why}; check the change (`git show {short}`) and revert it if the team did not decide it",
    )
}

/// Why a change of the policy did not take effect, as sync and doctor say
/// it; `None` when it did.
pub fn refused_because(
    change: &policy_history::Change,
    commit: &CommitInfo,
    signature: &Verified,
    signers_path: Option<&str>,
) -> Option<String> {
    let (place, kept) = match signers_path {
        Some(path) if change.signers_only => (
            format!("in the allowed-signers file {path}"),
            "the signers before it stay in effect",
        ),
        _ if change.before.is_some() => (
            format!("in {}", crate::adapters::git::REPO_CONFIG),
            "the policy before it stays in effect",
        ),
        _ => (
            format!("in {}", crate::adapters::git::REPO_CONFIG),
            "no committed memory is trusted until it is fixed",
        ),
    };
    Some(match &change.outcome {
        Outcome::Taken => return None,
        Outcome::Unusable(why) => format!("{place}, which cannot be used ({why}); {kept}"),
        Outcome::Outside(reasons) => {
            let why = match *reasons.first()? {
                verdict::AUTHOR_OUTSIDE_POLICY => format!(
                    "whose author ({}) is outside the policy before it",
                    commit.author_email
                ),
                verdict::SIGNER_OUTSIDE_POLICY => format!(
                    "signed by {}, outside the policy before it",
                    signature.signer
                ),
                _ => format!(
                    "whose signature is {} while the policy before it asks for signed commits",
                    signature.state.name()
                ),
            };
            format!("{place}, {why}; {kept}")
        }
    })
}
