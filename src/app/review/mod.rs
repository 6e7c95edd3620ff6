//! `goldfish review [BASE] [HEAD]`: the memory changes a range of commits
//! brings (added, forgotten, released, edited, deleted and unreadable
//! lines), each with the commit that made it, its author and signature,
//! and the trust verdict the index would give it
//! ([`verdict::quarantine`]) under the trust policy of BASE: the change
//! under review cannot loosen its own review. A line edited or deleted in
//! place stops the review too (memory lines are append-only), and so does a
//! change of `[trust]` by someone outside BASE's policy. Reads git only: no
//! sync, no index, no model.

use std::collections::{HashMap, HashSet};

use jiff::Timestamp;
use serde::Serialize;

use super::init::MEMORY_PATTERN;
use super::{AppError, Arg};
use crate::adapters::git::{
    AllowedSigners, CommitInfo, MEMORY_DIR, REPO_CONFIG, Signatures, Verified, Workspace,
};
use crate::adapters::history::{Policies, Walker};
use crate::domain::config::{RepoConfig, TrustPolicy};
use crate::domain::memory::kinds::Kinds;
use crate::domain::memory::secrets::redact;
use crate::domain::memory::verdict::{self, Claim};
use crate::domain::memory::{Entry, Memory, trust};
use crate::domain::policy_history::{self, Raw};
use crate::domain::recalled::{Provenance, Trust, trust_reason_text};

mod cites;
mod judge;
mod lines;
mod text;

pub use cites::CitedChange;
use judge::*;
use lines::*;
pub use text::*;

/// The reason an edit of an existing line stops a review.
pub const EDITED_IN_PLACE: &str = "edited-in-place";
/// The reason a removed line stops a review.
pub const DELETED_IN_PLACE: &str = "deleted-in-place";
/// The reason a change of the policy to a config that cannot be used
/// stops a review (it keeps the last good policy, or admits nobody).
pub const POLICY_UNUSABLE: &str = "policy-unusable";
/// The reason a line no commit of the range can be found to have made
/// stops a review (it comes back from older history).
pub const UNATTRIBUTED: &str = "unattributed";

/// The reason a line that is not text (a NUL, or not UTF-8) stops a
/// review: readers skip it, and what it holds cannot be reviewed.
pub const BINARY_LINE: &str = "binary-line";

/// What a reviewed range brings.
#[derive(Debug, Clone)]
pub struct Review {
    /// BASE as given (or the upstream it defaulted to) and its commit.
    pub base: String,
    pub base_commit: String,
    pub head: String,
    pub head_commit: String,
    /// The commit the changes are counted from: BASE, or the merge base of
    /// BASE and HEAD when BASE is not in HEAD's history (`null`: unrelated
    /// histories, every line of HEAD counts).
    pub since_commit: Option<String>,
    /// Commits in the range.
    pub commits: usize,
    /// The trust policy the verdicts use: BASE's.
    pub policy: PolicyUsed,
    pub changes: Vec<Change>,
    pub policy_changes: Vec<PolicyChange>,
    /// How git merges memory files, when the range changes it.
    pub attribute_changes: Vec<AttributeChange>,
    /// The allowed-signers file kept in the repository
    /// (`gpg.ssh.allowedSignersFile`), when the range changes it: a key
    /// added there makes its holder's signatures good.
    pub signers_change: Option<SignersChange>,
    /// What the range puts in place of the memory folder, or of a memory
    /// file, that is not a folder or a regular file (a submodule, a link).
    pub folder_changes: Vec<FolderChange>,
    /// The memories whose cited code the range changes or removes: a
    /// note for the author, never a reason to stop.
    pub cited: Vec<CitedChange>,
    /// Changes (policy and attribute changes too) that stop the review:
    /// exit 1.
    pub stopping: usize,
}

impl Review {
    /// Every change it lists: memory lines, policy, attribute and signers
    /// changes.
    pub fn total(&self) -> usize {
        self.changes.len()
            + self.policy_changes.len()
            + self.attribute_changes.len()
            + usize::from(self.signers_change.is_some())
            + self.folder_changes.len()
    }
}

/// An entry of HEAD's tree where memories are read that is not what
/// goldfish reads: `.goldfish` or `.goldfish/memories` not a folder, or a
/// `*.jsonl` entry of the folder not a regular file. Readers (and `store`)
/// refuse it, so its memories reach no one and a submodule there takes
/// the memories stored in it to another repository: it always stops
/// review.
#[derive(Debug, Clone, Serialize)]
pub struct FolderChange {
    pub path: String,
    /// `a submodule`, `a symbolic link`, `a folder`, `a file`.
    pub kind: &'static str,
    /// Its object: the submodule's commit, the link's blob, …
    pub object: String,
    pub stops: bool,
}

/// A change of the range to the allowed-signers file in the repository:
/// its blob at both ends (`null`: no such file). It always stops review:
/// whoever adds a key there is trusted under the name it gives the key.
#[derive(Debug, Clone, Serialize)]
pub struct SignersChange {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
    pub stops: bool,
}

/// A change of the range to how git treats memory files: the `merge`
/// attribute their `.gitattributes` give them.
#[derive(Debug, Clone, Serialize)]
pub struct AttributeChange {
    pub attribute: &'static str,
    /// As `git check-attr` says it: `goldfish`, `unset`, `unspecified`, …
    pub before: String,
    pub after: String,
    /// Memory files leave goldfish's merge driver.
    pub stops: bool,
}

/// The trust policy a review applied.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyUsed {
    /// The commit whose `.goldfish/config` it comes from (BASE).
    pub commit: String,
    /// `[trust] authors`; `null` without a `[trust]` section (every author
    /// is trusted).
    pub authors: Option<Vec<String>>,
    pub signed: bool,
    /// Why BASE's config gave no policy when it has one that cannot be
    /// used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What kind of change a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// A new memory.
    Added,
    /// A tombstone (`goldfish forget`).
    Forgotten,
    /// A release (`goldfish trust`).
    Released,
    /// A line whose id BASE has, with other text.
    Edited,
    /// A line of BASE that HEAD no longer has.
    Deleted,
    /// A new line that is not a record (readers skip it).
    Unreadable,
}

impl ChangeKind {
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Forgotten => "forgotten",
            ChangeKind::Released => "released",
            ChangeKind::Edited => "edited",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Unreadable => "unreadable",
        }
    }
}

/// One changed line. `review --json` names its fields as `recall --json`
/// does (`type`, `introduced`, `trust`, `trust_reasons`, `flags`).
#[derive(Debug, Clone)]
pub struct Change {
    pub change: ChangeKind,
    /// The line's id (`null` for an unreadable line).
    pub id: Option<String>,
    /// Where the line is in HEAD (in BASE for a deleted one), 1-based.
    pub file: String,
    pub line: usize,
    pub kind: Option<String>,
    /// A memory's content; for an unreadable line its text (at most 400
    /// characters). Secrets are masked.
    pub content: Option<String>,
    /// The line's own `author` field.
    pub author: Option<String>,
    /// The memory a tombstone forgets or a release releases.
    pub target: Option<String>,
    /// An edited or deleted line as BASE has it.
    pub was: Option<Was>,
    /// The commit of the range that made the change (added, edited or
    /// removed the line); `null` when none can be found.
    pub introduced: Option<Provenance>,
    /// What agents would get: for a memory added or edited, `trusted` or
    /// `untrusted` (quarantined); `null` for other lines.
    pub trust: Option<Trust>,
    /// Why: the verdict's reasons (`instruction-like`, `author-mismatch`,
    /// `author-outside-policy`, …, and `edited-in-place`,
    /// `deleted-in-place`, `unattributed`), or what lets a trusted memory
    /// in (`author-in-policy`, `no-policy`, `released`, …).
    pub trust_reasons: Vec<String>,
    /// What `memory::trust` finds suspect in the line (`secret`,
    /// `instruction-like`, `unknown-type`, …).
    pub flags: Vec<String>,
    /// Whether this change stops the review (exit 1).
    pub stops: bool,
    /// What else to know: what a tombstone forgets, whether a release
    /// counts, why a line is unreadable.
    pub note: Option<String>,
}

/// A line as BASE has it.
#[derive(Debug, Clone, Serialize)]
pub struct Was {
    pub file: String,
    pub line: usize,
    /// Its content (a memory) or its text (another line), secrets masked.
    pub content: String,
}

/// A commit of the range that changed the `[trust]` section.
#[derive(Debug, Clone)]
pub struct PolicyChange {
    pub commit: Provenance,
    /// The policy before and after that commit, as `authors …, signed`
    /// (`none`: no section; `invalid: …`).
    pub before: String,
    pub after: String,
    /// Why its commit is outside BASE's policy (empty: inside, or BASE has
    /// none).
    pub reasons: Vec<String>,
    pub stops: bool,
}

/// Reviews `base..head` as the command line names them: `base` defaults to
/// what a pull request of the current branch is compared with (its
/// upstream remote's default branch: `default_base`), `head` to `HEAD`;
/// `base` may be `BASE..HEAD` on its own.
pub fn review(
    workspace: &Workspace,
    base: Option<&str>,
    head: Option<&str>,
    now: Timestamp,
) -> Result<Review, AppError> {
    let (base, head) = match (base, head) {
        (Some(range), None) if range.contains("..") && !range.contains("...") => {
            let (base, head) = range.split_once("..").expect("contains ..");
            (
                Some(base.to_owned()),
                Some(if head.is_empty() { "HEAD" } else { head }.to_owned()),
            )
        }
        (base, head) => (base.map(str::to_owned), head.map(str::to_owned)),
    };
    let head = head.unwrap_or_else(|| "HEAD".to_owned());
    let resolve = |spec: &str, arg: &'static str| -> Result<gix::ObjectId, AppError> {
        workspace
            .resolve_commit(spec)
            .map_err(|err| AppError::from(anyhow::Error::new(err)))?
            .ok_or_else(|| {
                AppError::arg(
                    Arg::Field(arg),
                    format!(
                        "`{}` is not a commit in this repository (a branch, a tag, `origin/main` after a `git fetch`, or a commit id)",
                        crate::app::render::terminal_safe(spec)
                    ),
                )
            })
    };
    let (base, base_id) = match base {
        Some(base) => {
            let id = resolve(&base, "BASE")?;
            (base, id)
        }
        None => match default_base(workspace) {
            Some(found) => found,
            None => {
                let upstream = workspace.upstream().ok_or_else(|| {
                    AppError::arg(
                        Arg::Field("BASE"),
                        "none given, and the current branch has no upstream (nor origin a default branch) to default to: pass the commit to review from, e.g. `goldfish review origin/main`",
                    )
                })?;
                let id = resolve(&upstream, "BASE")?;
                (upstream, id)
            }
        },
    };
    let head_id = resolve(&head, "HEAD")?;
    review_commits(workspace, (&base, base_id), (&head, head_id), now)
}

/// The branches a review can be asked for ([`review_branch`]): local and
/// remote-tracking ones, by the names git shows them with.
pub fn branches(workspace: &Workspace) -> Result<Vec<String>, AppError> {
    Ok(workspace
        .branch_refs()
        .map_err(|err| AppError::from(anyhow::Error::new(err)))?
        .into_iter()
        .map(|(name, _)| name)
        .collect())
}

/// Reviews the branch `name` as a pull request of it would be: from what
/// `review` compares with by default (the default branch of origin, else
/// the upstream) to the branch's tip. `name` must be one of [`branches`]
/// (it comes from a form): it is looked up in that list and never handed
/// to git, which reads the tip's id.
pub fn review_branch(
    workspace: &Workspace,
    name: &str,
    now: Timestamp,
) -> Result<Review, AppError> {
    let tip = workspace
        .branch_refs()
        .map_err(|err| AppError::from(anyhow::Error::new(err)))?
        .into_iter()
        .find(|(branch, _)| branch == name)
        .map(|(_, id)| id)
        .ok_or_else(|| {
            AppError::arg(
                Arg::Field("HEAD"),
                format!(
                    "`{}` is not a branch of this repository",
                    crate::app::render::terminal_safe(name)
                ),
            )
        })?;
    let base = match default_base(workspace) {
        Some(found) => found,
        None => {
            let upstream = workspace.upstream().ok_or_else(|| {
                AppError::arg(
                    Arg::Field("BASE"),
                    "origin has no default branch, and the current branch no upstream, to compare with",
                )
            })?;
            let id = workspace
                .resolve_commit(&upstream)
                .map_err(|err| AppError::from(anyhow::Error::new(err)))?
                .ok_or_else(|| {
                    AppError::arg(Arg::Field("BASE"), "the upstream is not a commit here")
                })?;
            (upstream, id)
        }
    };
    review_commits(workspace, (&base.0, base.1), (name, tip), now)
}

/// What `review` compares with when no BASE is given: what a pull request
/// of the current branch shows. The default branch of its upstream's
/// remote (`origin` without an upstream; see
/// [`Workspace::remote_default_branch`]), whose merge base with HEAD the
/// changes count from ([`review_commits`]), under that branch's policy.
/// `None` when there is none: the upstream itself is the base then (a
/// local branch, a remote without a default branch).
fn default_base(workspace: &Workspace) -> Option<(String, gix::ObjectId)> {
    let remote = match workspace.upstream_remote() {
        Some(remote) => remote,
        None if workspace.upstream().is_none() => "origin".to_owned(),
        None => return None,
    };
    workspace.remote_default_branch(&remote)
}

fn short(id: &str) -> &str {
    id.get(..10).unwrap_or(id)
}

/// At most `max` characters of `text`, secrets masked.
fn shown(text: &str, max: usize) -> String {
    let masked = redact(text);
    if masked.chars().count() <= max {
        return masked;
    }
    let cut: String = masked.chars().take(max).collect();
    format!("{cut}…")
}

/// Reviews the range between two resolved commits (`(as named, id)`): the
/// diff of its memory lines (`Diff`), the commit that made each change
/// (`attribute`), and each change judged under BASE's policy (`Judge`).
pub fn review_commits(
    workspace: &Workspace,
    (base, base_id): (&str, gix::ObjectId),
    (head, head_id): (&str, gix::ObjectId),
    now: Timestamp,
) -> Result<Review, AppError> {
    let since = if workspace.is_ancestor(base_id, head_id) {
        Some(base_id)
    } else {
        workspace.merge_base(base_id, head_id)
    };
    let (before, after) = diffed_lines(workspace, since, head_id)?;
    let diff = Diff::of(&before, &after);
    // BASE when HEAD does not hold it (a pull request's target): an id the
    // range takes from it is reused once merged.
    let base_lines = if since == Some(base_id) {
        Vec::new()
    } else {
        let ids: HashSet<&str> = diff.added.iter().map(|line| line.key.0.as_str()).collect();
        lines_with_ids(workspace, base_id, &ids)?
    };
    let reused = diff.reused(&base_lines);
    let mut range = attribute(workspace, &diff, since, head_id)?;

    let base_config = config_at(workspace, Some(base_id));
    let policy = policy_of(&base_config);
    let since_config = config_at(workspace, since);
    let head_config = config_at(workspace, Some(head_id));
    let kinds: Option<Kinds> = match &head_config {
        Ok(Some(config)) => Some(config.kinds.clone()),
        Ok(None) => Some(Kinds::default()),
        Err(_) => None,
    };
    // The policy as a history: the commits that change the config's
    // policy, merges included (their signatures verified with the rest).
    let steps = if describe(&since_config) != describe(&head_config) {
        range
            .policies
            .steps(&range.commits)
            .map_err(|err| AppError::from(anyhow::Error::new(err)))?
    } else {
        Vec::new()
    };
    let judge = Judge {
        signatures: verify(workspace, base_id, &range, &steps),
        policy,
        kinds,
        now,
        reused,
    };

    let changes = judge.changes(&diff, &range);
    let policy_changes = judge.policy_changes(&steps, &mut range);
    let attribute_changes = attribute_changes(workspace, since, head_id);
    let signers_change = signers_change(workspace, since, head_id);
    let folder_changes = folder_changes(workspace, since, head_id)?;
    let cited = cites::cited_changes(workspace, since, head_id, &diff)?;

    let stopping = changes.iter().filter(|change| change.stops).count()
        + policy_changes.iter().filter(|change| change.stops).count()
        + attribute_changes
            .iter()
            .filter(|change| change.stops)
            .count()
        + usize::from(signers_change.is_some())
        + folder_changes.len();
    Ok(Review {
        base: base.to_owned(),
        base_commit: base_id.to_string(),
        head: head.to_owned(),
        head_commit: head_id.to_string(),
        since_commit: since.map(|id| id.to_string()),
        commits: range.commits.len(),
        policy: PolicyUsed {
            commit: base_id.to_string(),
            authors: judge.policy.as_ref().map(|policy| policy.authors.clone()),
            signed: judge.policy.as_ref().is_some_and(|policy| policy.signed),
            note: base_config.err(),
        },
        changes,
        policy_changes,
        attribute_changes,
        signers_change,
        folder_changes,
        cited,
        stopping,
    })
}

/// What a pre-push hook reviews: one range per pushed ref.
#[derive(Debug)]
pub enum Pushed {
    /// The ref (`refs/heads/main`) and its review.
    Reviewed(String, Box<Review>),
    /// Not reviewed, and why (a deleted ref, a new branch with nothing to
    /// compare it with).
    Skipped(String, String),
}

/// Reviews what `git push` is about to send to `remote`, from the lines git
/// gives a pre-push hook on stdin (`<local ref> <local sha> <remote ref>
/// <remote sha>`). A new branch (remote sha all zeros), or one whose remote
/// commit this clone does not have, is reviewed from its merge base with
/// the remote's default branch (`refs/remotes/REMOTE/HEAD`).
pub fn pre_push(
    workspace: &Workspace,
    remote: &str,
    lines: &str,
    now: Timestamp,
) -> Result<Vec<Pushed>, AppError> {
    let mut pushed = Vec::new();
    for line in lines.lines().filter(|line| !line.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [local_ref, local, remote_ref, remote_sha] = fields[..] else {
            return Err(AppError::input(anyhow::anyhow!(
                "pre-push: a line of four fields expected on stdin, got `{}`",
                crate::app::render::terminal_safe(line)
            )));
        };
        let local_ref = crate::app::render::terminal_safe(local_ref).into_owned();
        let zero = |sha: &str| sha.bytes().all(|b| b == b'0');
        if zero(local) {
            pushed.push(Pushed::Skipped(
                local_ref,
                "a deletion: nothing to review".to_owned(),
            ));
            continue;
        }
        let Some(head) = workspace
            .resolve_commit(local)
            .map_err(|err| AppError::from(anyhow::Error::new(err)))?
        else {
            pushed.push(Pushed::Skipped(
                local_ref,
                format!("{local} is not a commit here"),
            ));
            continue;
        };
        let known = if zero(remote_sha) {
            None
        } else {
            workspace
                .resolve_commit(remote_sha)
                .map_err(|err| AppError::from(anyhow::Error::new(err)))?
        };
        let (base_name, base) = match known {
            Some(base) => (
                crate::app::render::terminal_safe(&format!("{remote} {remote_ref}")).into_owned(),
                base,
            ),
            None => {
                let default = format!("refs/remotes/{remote}/HEAD");
                let found = workspace
                    .resolve_commit(&default)
                    .ok()
                    .flatten()
                    .and_then(|tip| workspace.merge_base(tip, head).map(|base| (tip, base)));
                let Some((_, base)) = found else {
                    let why = format!(
                        "a new branch, and no {} to compare it with: not reviewed (run `git remote set-head {} --auto`, or `goldfish review BASE {local_ref}`)",
                        crate::app::render::terminal_safe(&default),
                        crate::app::render::terminal_safe(remote),
                    );
                    pushed.push(Pushed::Skipped(local_ref, why));
                    continue;
                };
                (
                    format!(
                        "the merge base with {}",
                        crate::app::render::terminal_safe(&format!("{remote}/HEAD"))
                    ),
                    base,
                )
            }
        };
        let review = review_commits(workspace, (&base_name, base), (&local_ref, head), now)?;
        pushed.push(Pushed::Reviewed(local_ref, Box::new(review)));
    }
    Ok(pushed)
}
