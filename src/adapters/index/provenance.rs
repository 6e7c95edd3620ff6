//! Provenance: for each memory id, the commit that introduced it (its
//! author, committer, date and signature), found by walking the commits new
//! since the last sync, oldest first; part of the sync's transaction. The
//! same walk finds the commits that changed the trust policy of
//! `.goldfish/config` while their author was outside the policy before
//! them.

use std::collections::{HashMap, HashSet};

use rusqlite::{OptionalExtension, Transaction, params};

use super::SyncError;
use crate::adapters::git::{CommitInfo, Verified, Workspace};
use crate::adapters::history::{self, Walker};
use crate::domain::config::{RepoConfig, TrustPolicy};
use crate::domain::memory::verdict;

#[derive(serde::Deserialize)]
struct IdOnly<'a> {
    #[serde(borrow)]
    id: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    author: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    imported_from: Option<serde::de::IgnoredAny>,
}

/// What a line of a memory file says of itself that provenance checks:
/// who it claims wrote it.
#[derive(Debug, Clone)]
struct Claim {
    /// The `author` field.
    author: Option<String>,
    /// Brought in by `goldfish import` (`imported_from`): the author is the
    /// note's, whom its committer vouches for.
    imported: bool,
}

impl Claim {
    /// Whether the `author` field names someone other than the author of
    /// `commit` ([`verdict::Claim::mismatches`]: the verdict's own test).
    fn mismatches(&self, commit: &CommitInfo) -> bool {
        let claim = verdict::Claim {
            author: self.author.as_deref(),
            imported: self.imported,
            instruction_like: false,
        };
        claim.mismatches(&commit.origin(&Verified::unsigned()))
    }
}

/// Walks the commits new since `known`, oldest first, and records for each
/// memory id the commit that introduced it: the one whose memory file has the
/// id while none of its parents' versions of that file do. The signatures
/// of the signed commits it records are verified with one git process.
/// A memory whose `author` field names someone else than its commit's
/// author, and a change of the trust policy by someone outside it, are
/// reported in what it returns.
pub(super) fn walk_provenance(
    tx: &Transaction<'_>,
    workspace: &Workspace,
    workspace_id: i64,
    head: gix::ObjectId,
    known: Option<gix::ObjectId>,
    sqlite: &dyn Fn(rusqlite::Error) -> SyncError,
) -> Result<Walked, SyncError> {
    if let Some(known) = known
        && !workspace.is_ancestor(known, head)
    {
        forget_outside(tx, workspace, workspace_id, head, sqlite)?;
    }
    let commits = workspace.new_commits(head, known)?;
    let reverted = super::staleness::record(tx, workspace, workspace_id, &commits, sqlite)?;
    // Per id: the commit (its index) and the blob of the file it is in.
    let mut introduced: HashMap<String, (usize, gix::ObjectId)> = HashMap::new();
    // The commits that changed the trust policy, with the policy before
    // each (its first parent's).
    let mut policy_changes: Vec<PolicyChange> = Vec::new();
    for change in history::config_changes(workspace, &commits)? {
        let before = policy_in(workspace, change.before);
        if before.is_some() && before != policy_in(workspace, change.after) {
            policy_changes.push(PolicyChange {
                index: change.commit,
                before,
            });
        }
    }
    let mut ids_in = Walker::new(workspace, claims_in);
    ids_in.walk(&commits, |change| {
        if let Some(blob) = change.blob {
            for (id, _) in change.added {
                introduced
                    .entry(id.clone())
                    .or_insert((change.commit, blob));
            }
        }
    })?;
    // An id this walk sees introduced again (copied into another file,
    // or brought back) keeps what an earlier walk recorded when that commit
    // is in HEAD's history too: it is the older one, as a walk of the whole
    // history would find.
    let walked: HashSet<gix::ObjectId> = commits.iter().map(|commit| commit.id).collect();
    let mut in_history: HashMap<String, bool> = HashMap::new();
    let mut recorded = tx
        .prepare_cached("SELECT commit_id FROM provenance WHERE workspace_id = ?1 AND id = ?2")
        .map_err(sqlite)?;
    let mut statement = tx
        .prepare_cached(
            "INSERT OR REPLACE INTO provenance (workspace_id, id, commit_id, author, date,
               author_name, author_email, committer, signature, signer)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )
        .map_err(sqlite)?;
    let mut recording: Vec<(&String, usize, gix::ObjectId)> = Vec::new();
    for (id, (index, blob)) in &introduced {
        let commit = &commits[*index];
        let earlier: Option<String> = recorded
            .query_row(params![workspace_id, id], |row| row.get(0))
            .optional()
            .map_err(sqlite)?;
        if let Some(earlier) = earlier
            && earlier != commit.id
        {
            let keep = match in_history.get(&earlier) {
                Some(keep) => *keep,
                None => {
                    let keep = match gix::ObjectId::from_hex(earlier.as_bytes()) {
                        Ok(earlier_id) if walked.contains(&earlier_id) => true,
                        Ok(earlier_id) => workspace.is_ancestor(earlier_id, head),
                        Err(_) => false,
                    };
                    in_history.insert(earlier.clone(), keep);
                    keep
                }
            };
            if keep {
                continue;
            }
        }
        recording.push((id, *index, *blob));
    }
    // One git process verifies every signed commit that matters here.
    let signatures = workspace.verify_signatures(
        recording
            .iter()
            .map(|(_, index, _)| *index)
            .chain(policy_changes.iter().map(|change| change.index))
            .map(|index| &commits[index]),
    );
    let signature_of = |commit: &CommitInfo| -> Verified { signatures.of(commit) };
    let mut walked = Walked {
        commits: commits.len(),
        reverted,
        ..Walked::default()
    };
    let mut mismatching: Vec<(&String, &Claim, &CommitInfo)> = Vec::new();
    for (id, index, blob) in recording {
        let commit = &commits[index];
        if let Some(claim) = ids_in.read(blob).and_then(|claims| claims.get(id))
            && claim.mismatches(commit)
        {
            mismatching.push((id, claim, commit));
        }
        let commit_id = commit.id.to_string();
        let signature = signature_of(commit);
        statement
            .execute(params![
                workspace_id,
                id,
                commit_id,
                commit.author,
                commit.date,
                commit.author_name,
                commit.author_email,
                commit.committer,
                signature.state.name(),
                // An SSH principal, or the email of a GPG user id: what the
                // policy's author patterns are matched against.
                TrustPolicy::email_of(&signature.signer),
            ])
            .map_err(sqlite)?;
    }
    // Named where the index has them now (a later commit may have moved the
    // line); an id the index does not hold (not a record) is not reported.
    let mut located = tx
        .prepare_cached("SELECT file, line FROM memories WHERE workspace_id = ?1 AND id = ?2")
        .map_err(sqlite)?;
    for (id, claim, commit) in mismatching {
        let Some((file, line)) = located
            .query_row(params![workspace_id, id], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .optional()
            .map_err(sqlite)?
        else {
            continue;
        };
        let claimed: String = claim
            .author
            .as_deref()
            .unwrap_or("")
            .chars()
            .take(80)
            .collect();
        walked.mismatches.push((
            file,
            line,
            format!(
                "memory {id}: its `author` field says {claimed:?}, but commit {} that introduced it is by {}; indexed, quarantined (`author-mismatch`)",
                &commit.id.to_string()[..10],
                commit.author
            ),
        ));
    }
    walked.mismatches.sort();
    let mut record_change = tx
        .prepare_cached(
            "INSERT OR REPLACE INTO policy_changes (workspace_id, commit_id, author, date, why) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .map_err(sqlite)?;
    for change in policy_changes {
        let commit = &commits[change.index];
        let Some(why) = change.outside(commit, &signature_of(commit)) else {
            continue;
        };
        record_change
            .execute(params![
                workspace_id,
                commit.id.to_string(),
                commit.author,
                commit.date,
                why
            ])
            .map_err(sqlite)?;
        walked.policy_changes.push(policy_change_message(
            &commit.id.to_string(),
            &commit.author,
            &why,
        ));
    }
    Ok(walked)
}

/// What a walk found besides provenance.
#[derive(Debug, Default)]
pub(super) struct Walked {
    /// Commits walked.
    pub commits: usize,
    /// Memories whose `author` field names someone other than the author
    /// of the commit that introduced them: (file, line, what is wrong).
    pub mismatches: Vec<(String, i64, String)>,
    /// Changes of the trust policy by someone outside it, as sync and
    /// doctor say them.
    pub policy_changes: Vec<String>,
    /// The commits the walked ones say they revert.
    pub reverted: Vec<String>,
}

/// What sync and doctor say of a policy change by an outsider.
pub fn policy_change_message(commit: &str, author: &str, why: &str) -> String {
    let short = commit.get(..10).unwrap_or(commit);
    format!(
        "the trust policy in {} was changed by commit {short} ({author}), {why}; check the change (`git show {short}`) and revert it if the team did not decide it",
        crate::adapters::git::REPO_CONFIG,
    )
}

/// A commit that changed the `[trust]` section of `.goldfish/config`, and
/// the policy before it (`None`: there was none, or it could not be read:
/// anyone could change it).
struct PolicyChange {
    index: usize,
    before: Option<TrustPolicy>,
}

impl PolicyChange {
    /// Why its author was outside the policy before it; `None` when inside.
    fn outside(&self, commit: &CommitInfo, signature: &Verified) -> Option<String> {
        let before = self.before.as_ref()?;
        // The verdict's test of the commit against the policy before it;
        // its first reason, told.
        let reasons = verdict::quarantine(
            &verdict::Claim::default(),
            Some(&commit.origin(signature)),
            Some(before),
        );
        Some(match *reasons.first()? {
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
        })
    }
}

/// The trust policy of `.goldfish/config` in a blob; `None` when there is
/// no section or the file cannot be used.
fn policy_in(workspace: &Workspace, blob: Option<gix::ObjectId>) -> Option<TrustPolicy> {
    let bytes = workspace.read_blob(blob?).ok()?;
    RepoConfig::from_file(&bytes).ok()?.trust
}

/// The tables that record what a walked commit did, by `commit_id`: who
/// introduced a memory, a change of the trust policy, a path deleted or
/// renamed, a revert.
const BY_COMMIT: [&str; 4] = ["provenance", "policy_changes", "path_changes", "reverts"];

/// HEAD left the history an earlier walk saw (a checkout of an older commit
/// or of another branch): what commits outside HEAD's history introduced,
/// changed, deleted or reverted no longer counts, as a walk of HEAD's whole
/// history would not see them.
fn forget_outside(
    tx: &Transaction<'_>,
    workspace: &Workspace,
    workspace_id: i64,
    head: gix::ObjectId,
    sqlite: &dyn Fn(rusqlite::Error) -> SyncError,
) -> Result<(), SyncError> {
    let recorded = BY_COMMIT
        .map(|table| format!("SELECT commit_id FROM {table} WHERE workspace_id = ?1"))
        .join(" UNION ");
    let commits: Vec<String> = tx
        .prepare_cached(&recorded)
        .and_then(|mut statement| {
            statement
                .query_map(params![workspace_id], |row| row.get(0))?
                .collect()
        })
        .map_err(sqlite)?;
    for commit in commits {
        let in_history = gix::ObjectId::from_hex(commit.as_bytes())
            .is_ok_and(|id| workspace.is_ancestor(id, head));
        if in_history {
            continue;
        }
        for table in BY_COMMIT {
            tx.prepare_cached(&format!(
                "DELETE FROM {table} WHERE workspace_id = ?1 AND commit_id = ?2"
            ))
            .and_then(|mut statement| statement.execute(params![workspace_id, commit]))
            .map_err(sqlite)?;
        }
    }
    Ok(())
}

/// The ids of a memory file's blob, each with what its first line claims.
fn claims_in(bytes: &[u8]) -> HashMap<String, Claim> {
    let mut ids: HashMap<String, Claim> = HashMap::new();
    for (_, text) in goldfish_log::record::split_lines(bytes) {
        let Ok(record) = serde_json::from_slice::<IdOnly<'_>>(text) else {
            continue;
        };
        ids.entry(record.id.into_owned()).or_insert_with(|| Claim {
            author: record.author.map(std::borrow::Cow::into_owned),
            imported: record.imported_from.is_some(),
        });
    }
    ids
}
