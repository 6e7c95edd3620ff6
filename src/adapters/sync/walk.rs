//! The walk of the history: for each memory line (its id and the hash of
//! its text), the commit that introduced it (its author, committer, date
//! and signature), found by walking the commits new since the last sync,
//! oldest first, and handed to the index to record in the sync's
//! transaction. The same walk follows the
//! trust policy through the history of `.goldfish/config`
//! ([`policy_history`]): which policy is in effect at HEAD, and the
//! changes that did not take effect.

use std::collections::{HashMap, HashSet};

use super::SyncError;
use crate::adapters::git::{CommitInfo, Verified, Workspace};
use crate::adapters::history::Policies;
use crate::adapters::history::provenance::{
    Claim, LineKey, Lines, Verifier, policy_change_message, refused_because,
};
use crate::adapters::index::IndexError;
use crate::adapters::index::writing::{ProvenanceRow, Writing};
use crate::domain::config::TrustPolicy;
use crate::domain::memory::verdict;
use crate::domain::policy_history::{self, Effective};

/// Walks the commits new since `known`, oldest first, and records for each
/// memory line the commit that introduced it: the one whose memory file has
/// the line (its id and canonical text) while none of its parents' versions
/// of that file do. The signatures
/// of the signed commits it records are verified with one git process.
/// A memory whose `author` field names someone else than its commit's
/// author, and a change of the trust policy by someone outside it, are
/// reported in what it returns. It stores `boundary`, the clone's shallow
/// boundary ([`shallow_boundary`]), as the one this walk saw.
pub(super) fn walk_provenance(
    writing: &Writing<'_>,
    workspace: &Workspace,
    head: gix::ObjectId,
    known: Option<gix::ObjectId>,
    boundary: &str,
) -> Result<Walked, SyncError> {
    let mut policies = Policies::new(workspace).with_signers();
    let signers_path = policies.signers_path().map(str::to_owned);
    let (known, stored) = walk_from(writing, workspace, head, known, signers_path.as_deref())?;
    let commits = workspace.new_commits(head, known)?;
    let positions = positions(writing, workspace, head, known, &commits)?;
    let changes = crate::adapters::history::paths::changes(workspace, &commits)?;
    let reverted = writing.record_changes(&changes)?;
    // The policy as a history: the commits that change the config's
    // policy are judged (their signatures verified with the rest below).
    let steps = policies.steps(&commits)?;
    let lines = Lines::walk(workspace, &commits)?;
    let recording = lines_to_record(writing, workspace, head, &commits, &positions, &lines)?;
    // The policy as a history, each change judged under the policy and
    // the allowed signers before it (its signature verified against those).
    let verifier = Verifier::new(workspace, signers_path.clone());
    let (effective, changes) =
        follow_policy(&steps, &commits, &mut policies, &verifier, &stored, known);
    let at_head = effective.get(&head).cloned().or_else(|| stored.clone());
    // Each commit recorded here is verified against the allowed signers in
    // effect at it (a walk in several syncs finds what one walk finds):
    // one git process per version of the signers file.
    let signatures = verifier.verify(recording.iter().map(|(_, index, _)| {
        let commit = &commits[*index];
        let signers = effective
            .get(&commit.id)
            .and_then(|at| at.signers.as_deref());
        (commit, signers)
    }));
    let shallow = recording
        .iter()
        .filter(|(_, index, _)| commits[*index].shallow)
        .count();
    let mismatching = record_lines(
        writing,
        &commits,
        &positions,
        &lines,
        recording,
        &signatures,
    )?;
    let mismatches = mismatch_messages(writing, mismatching)?;
    let policy_changes = record_refused_changes(
        writing,
        &commits,
        changes,
        &verifier,
        signers_path.as_deref(),
    )?;
    if let Some(at_head) = &at_head {
        writing.store_history_policy(at_head, signers_path.as_deref())?;
    }
    writing.store_shallow_boundary(boundary)?;
    Ok(Walked {
        commits: commits.len(),
        mismatches,
        policy_changes,
        reverted,
        shallow,
    })
}

/// The policy in effect at each commit walked, and its changes: each
/// judged under the policy and the allowed signers before it; the walk
/// goes on from the policy stored at `known`.
fn follow_policy(
    steps: &[policy_history::Step<gix::ObjectId>],
    commits: &[CommitInfo],
    policies: &mut Policies<'_>,
    verifier: &Verifier<'_>,
    stored: &Option<Effective>,
    known: Option<gix::ObjectId>,
) -> (
    HashMap<gix::ObjectId, Effective>,
    Vec<policy_history::Change>,
) {
    policy_history::walk(
        steps,
        |commit| match (stored, known) {
            (Some(stored), Some(known)) if *commit == known => stored.clone(),
            _ => policies.seed(*commit),
        },
        |index, before, signers| {
            let commit = &commits[index];
            verdict::quarantine(
                &verdict::Claim::default(),
                Some(&commit.origin(&verifier.judge(commit, signers))),
                Some(before),
            )
        },
    )
}

/// A shallow clone's boundary as `workspaces.shallow_boundary` keeps it:
/// the sorted commit ids, one per line; empty in a complete clone. A
/// boundary other than the one the last walk stored (`git fetch
/// --unshallow` or `--deepen`) makes the next walk start again from the
/// first commit.
pub(super) fn shallow_boundary(workspace: &Workspace) -> String {
    let mut boundary: Vec<String> = workspace
        .shallow_boundary()
        .iter()
        .map(ToString::to_string)
        .collect();
    boundary.sort();
    boundary.join("\n")
}

/// Where the walk starts: after `known` with the policy stored at it, or
/// from the first commit (signatures verified against another signers file
/// are verified anew; the caller passes no `known` when a shallow boundary
/// moved, [`shallow_boundary`]). What commits outside HEAD's history recorded
/// is forgotten, and a walk from the start replaces every line's
/// provenance, as a new index would find it.
fn walk_from(
    writing: &Writing<'_>,
    workspace: &Workspace,
    head: gix::ObjectId,
    known: Option<gix::ObjectId>,
    signers_path: Option<&str>,
) -> Result<(Option<gix::ObjectId>, Option<Effective>), SyncError> {
    let stored = writing.history_policy()?;
    // Signatures verified against another signers file (another path, or
    // the work tree's before the index followed its history): every
    // commit is walked again and verified anew.
    let (known, stored) = match stored {
        Some((_, path)) if path.as_deref() != signers_path => (None, None),
        stored => (known, stored.map(|(effective, _)| effective)),
    };
    if let Some(known) = known
        && !workspace.is_ancestor(known, head)
    {
        forget_outside(writing, workspace, head)?;
    }
    if known.is_none() {
        // A walk from the start finds every line's provenance again.
        writing.clear_provenance()?;
    }
    Ok((known, stored))
}

/// HEAD left the history an earlier walk saw (a checkout of an older commit
/// or of another branch): what commits outside HEAD's history introduced,
/// changed, deleted or reverted no longer counts, as a walk of HEAD's whole
/// history would not see them.
fn forget_outside(
    writing: &Writing<'_>,
    workspace: &Workspace,
    head: gix::ObjectId,
) -> Result<(), IndexError> {
    for commit in writing.commits_recorded()? {
        let in_history = gix::ObjectId::from_hex(commit.as_bytes())
            .is_ok_and(|id| workspace.is_ancestor(id, head));
        if !in_history {
            writing.forget_commit(&commit)?;
        }
    }
    Ok(())
}

/// Each walked commit's place in history's order
/// ([`crate::domain::history_order`]), what `provenance.seq` holds. When
/// HEAD moved along its first-parent line the order of the last walk is a
/// prefix of HEAD's: the new commits come after every number stored.
/// Otherwise (the old HEAD was merged in as a second parent, or left) the
/// whole history is ordered again and the stored numbers renumbered, so a
/// sync after any history finds what a new index would.
fn positions(
    writing: &Writing<'_>,
    workspace: &Workspace,
    head: gix::ObjectId,
    known: Option<gix::ObjectId>,
    commits: &[CommitInfo],
) -> Result<HashMap<gix::ObjectId, i64>, SyncError> {
    let first_parents: HashMap<gix::ObjectId, Option<gix::ObjectId>> = commits
        .iter()
        .map(|commit| (commit.id, commit.parents.first().copied()))
        .collect();
    let extends = known.is_none_or(|known| {
        crate::domain::history_order::extends(head, known, |id| first_parents.get(&id).copied())
    });
    if extends {
        let first = writing.next_seq()?;
        return Ok(commits
            .iter()
            .enumerate()
            .map(|(index, commit)| (commit.id, first + index as i64))
            .collect());
    }
    let positions: HashMap<gix::ObjectId, i64> = workspace
        .commit_order(head)?
        .into_iter()
        .enumerate()
        .map(|(index, id)| (id, index as i64 + 1))
        .collect();
    // A commit outside HEAD's history was forgotten (`forget_outside`).
    writing.renumber(|commit| {
        let id = gix::ObjectId::from_hex(commit.as_bytes()).ok()?;
        positions.get(&id).copied()
    })?;
    Ok(positions)
}

/// The lines this walk introduced whose provenance it records: each with
/// the commit (its index) and the blob of its file. A line this walk sees
/// introduced again (copied into another file, or brought back) keeps what
/// an earlier walk recorded when that commit is in HEAD's history too and
/// comes first in history's order, as a walk of the whole history would
/// find.
fn lines_to_record<'l>(
    writing: &Writing<'_>,
    workspace: &Workspace,
    head: gix::ObjectId,
    commits: &[CommitInfo],
    positions: &HashMap<gix::ObjectId, i64>,
    lines: &'l Lines,
) -> Result<Vec<(&'l LineKey, usize, gix::ObjectId)>, SyncError> {
    let walked: HashSet<gix::ObjectId> = commits.iter().map(|commit| commit.id).collect();
    let mut in_history: HashMap<String, bool> = HashMap::new();
    let recorded = writing.recorded_provenance(
        lines
            .introduced
            .keys()
            .map(|line| (line.0.as_str(), line.1.as_str())),
    )?;
    let mut recording: Vec<(&LineKey, usize, gix::ObjectId)> = Vec::new();
    for ((line, (index, blob, _)), earlier) in lines.introduced.iter().zip(recorded) {
        let commit = &commits[*index];
        if let Some((earlier, earlier_at)) = earlier
            && earlier != commit.id
            && positions.get(&commit.id).is_some_and(|at| earlier_at < *at)
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
        recording.push((line, *index, *blob));
    }
    Ok(recording)
}

/// Records the commit that introduced each line, its author, committer and
/// signature, and returns the lines whose `author` field names someone
/// else than that commit's author.
fn record_lines<'l, 'c>(
    writing: &Writing<'_>,
    commits: &'c [CommitInfo],
    positions: &HashMap<gix::ObjectId, i64>,
    lines: &'l Lines,
    recording: Vec<(&'l LineKey, usize, gix::ObjectId)>,
    signatures: &HashMap<gix::ObjectId, Verified>,
) -> Result<Vec<(&'l LineKey, &'l Claim, &'c CommitInfo)>, IndexError> {
    let signature_of = |commit: &CommitInfo| -> Verified {
        signatures
            .get(&commit.id)
            .cloned()
            .unwrap_or_else(Verified::unsigned)
    };
    let mut mismatching: Vec<(&LineKey, &Claim, &CommitInfo)> = Vec::new();
    let mut rows = Vec::with_capacity(recording.len());
    for (line, index, _) in recording {
        let commit = &commits[index];
        // A shallow boundary holds what its missing parents did: its author
        // is no evidence against the line's (`shallow` says so instead).
        if !commit.shallow
            && let Some((_, _, claim)) = lines.introduced.get(line)
            && claim.mismatches(commit)
        {
            mismatching.push((line, claim, commit));
        }
        let signature = signature_of(commit);
        rows.push(ProvenanceRow {
            id: &line.0,
            record_hash: &line.1,
            commit_id: commit.id.to_string(),
            author: &commit.author,
            date: &commit.date,
            author_name: &commit.author_name,
            author_email: &commit.author_email,
            committer: &commit.committer,
            signature: signature.state.name(),
            signer: TrustPolicy::email_of(&signature.signer).to_owned(),
            seq: positions[&commit.id],
            shallow: commit.shallow,
        });
    }
    writing.record_provenance(rows)?;
    Ok(mismatching)
}

/// What sync says of each memory whose `author` field names someone else
/// than its commit's author: (file, line, message), sorted. Named where the
/// index has them now (a later commit may have moved the line); an id the
/// index does not hold (not a record) is not reported.
fn mismatch_messages(
    writing: &Writing<'_>,
    mismatching: Vec<(&LineKey, &Claim, &CommitInfo)>,
) -> Result<Vec<(String, i64, String)>, IndexError> {
    let located = writing.located(
        mismatching
            .iter()
            .map(|((id, hash), _, _)| (id.as_str(), hash.as_str())),
    )?;
    let mut mismatches = Vec::new();
    for (((id, _), claim, commit), located) in mismatching.into_iter().zip(located) {
        let Some((file, line)) = located else {
            continue;
        };
        let claimed: String = claim
            .author
            .as_deref()
            .unwrap_or("")
            .chars()
            .take(80)
            .collect();
        mismatches.push((
            file,
            line,
            format!(
                "memory {id}: its `author` field says {claimed:?}, but commit {} that introduced it is by {}; indexed, quarantined (`author-mismatch`)",
                &commit.id.to_string()[..10],
                commit.author
            ),
        ));
    }
    mismatches.sort();
    Ok(mismatches)
}

/// Records each change of the trust policy that did not take effect, with
/// why, and returns what sync and doctor say of them.
fn record_refused_changes(
    writing: &Writing<'_>,
    commits: &[CommitInfo],
    changes: Vec<policy_history::Change>,
    verifier: &Verifier<'_>,
    signers_path: Option<&str>,
) -> Result<Vec<String>, IndexError> {
    let mut messages = Vec::new();
    for change in changes {
        let commit = &commits[change.step];
        let signature = verifier.judged(commit.id);
        let Some(why) = refused_because(&change, commit, &signature, signers_path) else {
            continue;
        };
        writing.record_policy_change(&commit.id.to_string(), &commit.author, &commit.date, &why)?;
        messages.push(policy_change_message(
            &commit.id.to_string(),
            &commit.author,
            &why,
        ));
    }
    Ok(messages)
}

/// Whether the signatures the index holds were verified against another
/// allowed-signers file than the one git is now told to use (another
/// path, or one kept in the repository before the index followed its
/// history): the next walk starts again from the first commit.
pub(super) fn signers_moved(
    writing: &Writing<'_>,
    workspace: &Workspace,
) -> Result<bool, IndexError> {
    Ok(writing
        .history_policy()?
        .is_some_and(|(_, path)| path != workspace.signers_file_in_repo()))
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
    /// Lines recorded at a shallow clone's boundary (quarantined
    /// `shallow`: who introduced them is unknown).
    pub shallow: usize,
}
