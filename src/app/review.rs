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
use crate::adapters::git::{AllowedSigners, CommitInfo, REPO_CONFIG, Verified, Workspace};
use crate::adapters::history::{Policies, Walker};
use crate::adapters::index::search::{Provenance, Trust, trust_reason_text};
use crate::domain::config::{RepoConfig, TrustPolicy};
use crate::domain::memory::kinds::Kinds;
use crate::domain::memory::secrets::redact;
use crate::domain::memory::verdict::{self, Claim};
use crate::domain::memory::{Entry, trust};
use crate::domain::policy_history::{self, Raw};

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

/// What a reviewed range brings.
#[derive(Debug, Clone, Serialize)]
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
    }
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

/// One changed line. Field names follow `recall --json` (`type`,
/// `introduced`, `trust`, `trust_reasons`, `flags`).
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub change: ChangeKind,
    /// The line's id (`null` for an unreadable line).
    pub id: Option<String>,
    /// Where the line is in HEAD (in BASE for a deleted one), 1-based.
    pub file: String,
    pub line: usize,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// A memory's content; for an unreadable line its text (at most 400
    /// characters). Secrets are masked.
    pub content: Option<String>,
    /// The line's own `author` field.
    pub author: Option<String>,
    /// The memory a tombstone forgets or a release releases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// An edited or deleted line as BASE has it.
    #[serde(skip_serializing_if = "Option::is_none")]
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
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// Whether this change stops the review (exit 1).
    pub stops: bool,
    /// What else to know: what a tombstone forgets, whether a release
    /// counts, why a line is unreadable.
    #[serde(skip_serializing_if = "Option::is_none")]
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
#[derive(Debug, Clone, Serialize)]
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
/// the current branch's upstream, `head` to `HEAD`; `base` may be
/// `BASE..HEAD` on its own.
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
    let base = match base {
        Some(base) => base,
        None => workspace.upstream().ok_or_else(|| {
            AppError::arg(
                Arg::Field("BASE"),
                "none given, and the current branch has no upstream to default to: pass the commit to review from, e.g. `goldfish review origin/main`",
            )
        })?,
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
    let base_id = resolve(&base, "BASE")?;
    let head_id = resolve(&head, "HEAD")?;
    review_commits(workspace, (&base, base_id), (&head, head_id), now)
}

/// One line of a memory file at a commit.
#[derive(Clone)]
struct Line {
    file: String,
    number: usize,
    key: Key,
    entry: Option<Entry>,
    /// Why it is not a record.
    problem: Option<String>,
    /// The line's first [`RAW_KEPT`] bytes.
    raw: String,
}

/// A line's identity for the diff: its id and the hash of its canonical
/// text (two spellings of a record are one line, as the merge counts
/// them); an unreadable line has no id and the hash of its bytes. A hash,
/// not the text: a review of a large log holds 32 bytes a line, not a
/// copy of it.
type Key = (String, [u8; 32]);

fn key_of(raw: &[u8]) -> (Key, Option<Entry>, Option<String>) {
    match Entry::parse(raw) {
        Ok(entry) => {
            let canonical = blake3::hash(entry.to_line().as_bytes());
            (
                (entry.id().to_owned(), *canonical.as_bytes()),
                Some(entry),
                None,
            )
        }
        Err(err) => (
            (String::new(), *blake3::hash(raw).as_bytes()),
            None,
            Some(err.to_string()),
        ),
    }
}

/// How much of a line a review keeps to show it (it shows at most 400
/// characters of one): a line over the size a record may take is never
/// copied whole.
const RAW_KEPT: usize = 4096;

fn keys_in(bytes: &[u8]) -> HashMap<Key, ()> {
    goldfish_log::record::split_lines(bytes)
        .map(|(_, raw)| (key_of(raw).0, ()))
        .collect()
}

/// Every line of memory file `file` (blob `blob`), in order; with `only`,
/// only the lines whose id it holds (read with a light parse of the id).
fn file_lines(
    workspace: &Workspace,
    file: &str,
    blob: gix::ObjectId,
    only: Option<&HashSet<&str>>,
) -> Result<Vec<Line>, AppError> {
    #[derive(serde::Deserialize)]
    struct IdOnly<'a> {
        #[serde(borrow)]
        id: std::borrow::Cow<'a, str>,
    }
    let bytes = workspace
        .read_blob(blob)
        .map_err(|err| AppError::from(anyhow::Error::new(err)))?;
    let mut lines = Vec::new();
    for (number, raw) in goldfish_log::record::split_lines(&bytes) {
        if let Some(only) = only {
            let wanted = serde_json::from_slice::<IdOnly<'_>>(raw)
                .is_ok_and(|record| only.contains(record.id.as_ref()));
            if !wanted {
                continue;
            }
        }
        let (key, entry, problem) = key_of(raw);
        lines.push(Line {
            file: file.to_owned(),
            number,
            key,
            entry,
            problem,
            raw: String::from_utf8_lossy(&raw[..raw.len().min(RAW_KEPT)]).into_owned(),
        });
    }
    Ok(lines)
}

/// The lines of the memory files that differ between `since` and `head`
/// (each side's), and of the files both have alike only those whose id a
/// change may concern: what the diff needs, without reading every memory
/// of a large log in full.
fn diffed_lines(
    workspace: &Workspace,
    since: Option<gix::ObjectId>,
    head: gix::ObjectId,
) -> Result<(Vec<Line>, Vec<Line>), AppError> {
    let git = |err| AppError::from(anyhow::Error::new(err));
    let files_since = match since {
        Some(since) => workspace.memory_files_at(since).map_err(git)?,
        None => Default::default(),
    };
    let files_head = workspace.memory_files_at(head).map_err(git)?;
    let alike = |name: &String, blob: &gix::ObjectId| {
        files_since.get(name) == Some(blob) && files_head.get(name) == Some(blob)
    };
    let mut before = Vec::new();
    for (name, blob) in files_since.iter().filter(|(n, b)| !alike(n, b)) {
        before.extend(file_lines(workspace, name, *blob, None)?);
    }
    let mut after = Vec::new();
    for (name, blob) in files_head.iter().filter(|(n, b)| !alike(n, b)) {
        after.extend(file_lines(workspace, name, *blob, None)?);
    }
    let before_keys: HashSet<&Key> = before.iter().map(|line| &line.key).collect();
    let after_keys: HashSet<&Key> = after.iter().map(|line| &line.key).collect();
    let mut ids: HashSet<&str> = HashSet::new();
    for line in after.iter().filter(|line| !before_keys.contains(&line.key)) {
        ids.insert(&line.key.0);
        match &line.entry {
            Some(Entry::Tombstone(t)) => ids.insert(&t.forgets),
            Some(Entry::Release(r)) => ids.insert(&r.releases),
            _ => true,
        };
    }
    for line in before.iter().filter(|line| !after_keys.contains(&line.key)) {
        ids.insert(&line.key.0);
    }
    ids.remove("");
    let mut shared = Vec::new();
    if !ids.is_empty() {
        for (name, blob) in files_head.iter().filter(|(n, b)| alike(n, b)) {
            shared.extend(file_lines(workspace, name, *blob, Some(&ids))?);
        }
    }
    before.extend(shared.iter().cloned());
    after.extend(shared);
    Ok((before, after))
}

/// The config of a commit: the policy it gives and how to say it
/// (`Err`: it cannot be used, and why).
fn config_at(
    workspace: &Workspace,
    commit: Option<gix::ObjectId>,
) -> Result<Option<RepoConfig>, String> {
    let Some(commit) = commit else {
        return Ok(None);
    };
    let blob = workspace
        .repo_config_at(commit)
        .map_err(|err| err.to_string())?;
    let Some(blob) = blob else {
        return Ok(None);
    };
    let bytes = workspace.read_blob(blob).map_err(|err| err.to_string())?;
    RepoConfig::from_file(&bytes)
        .map(Some)
        .map_err(|err| format!("{REPO_CONFIG} is invalid: {err}"))
}

fn policy_of(config: &Result<Option<RepoConfig>, String>) -> Option<TrustPolicy> {
    config
        .as_ref()
        .ok()
        .and_then(|config| config.as_ref())
        .and_then(|config| config.trust.clone())
}

/// How a policy reads in a line.
fn describe(config: &Result<Option<RepoConfig>, String>) -> String {
    match config {
        Err(why) => format!("invalid ({why})"),
        Ok(config) => TrustPolicy::describe(config.as_ref().and_then(|c| c.trust.as_ref())),
    }
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

/// The verdict's view of the commit that made a change.
/// Reviews the range between two resolved commits (`(as named, id)`).
pub fn review_commits(
    workspace: &Workspace,
    (base, base_id): (&str, gix::ObjectId),
    (head, head_id): (&str, gix::ObjectId),
    now: Timestamp,
) -> Result<Review, AppError> {
    let git = |err| AppError::from(anyhow::Error::new(err));
    let since = if workspace.is_ancestor(base_id, head_id) {
        Some(base_id)
    } else {
        workspace.merge_base(base_id, head_id)
    };
    let (before, after) = diffed_lines(workspace, since, head_id)?;
    let before_keys: HashSet<&Key> = before.iter().map(|line| &line.key).collect();
    let after_keys: HashSet<&Key> = after.iter().map(|line| &line.key).collect();
    let mut before_by_id: HashMap<&str, Vec<&Line>> = HashMap::new();
    for line in &before {
        if !line.key.0.is_empty() {
            before_by_id.entry(&line.key.0).or_default().push(line);
        }
    }
    let after_ids: HashSet<&str> = after.iter().map(|line| line.key.0.as_str()).collect();
    let added: Vec<&Line> = after
        .iter()
        .filter(|line| !before_keys.contains(&line.key))
        .collect();
    let removed: Vec<&Line> = before
        .iter()
        .filter(|line| {
            !line.key.0.is_empty()
                && !after_keys.contains(&line.key)
                && !after_ids.contains(line.key.0.as_str())
        })
        .collect();

    // Which commit of the range made each change.
    let commits = workspace.new_commits(head_id, since).map_err(git)?;
    let wanted: HashSet<&Key> = added.iter().map(|line| &line.key).collect();
    let gone: HashSet<&Key> = removed.iter().map(|line| &line.key).collect();
    let mut made_by: HashMap<Key, usize> = HashMap::new();
    let mut removed_by: HashMap<Key, usize> = HashMap::new();
    let mut walker = Walker::new(workspace, keys_in).with_removals();
    walker
        .walk(&commits, |change| {
            for (key, _) in change.added {
                if wanted.contains(key) {
                    made_by.entry(key.clone()).or_insert(change.commit);
                }
            }
            for key in change.removed {
                if gone.contains(key) {
                    removed_by.insert(key.clone(), change.commit);
                }
            }
        })
        .map_err(git)?;

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
    let mut policies = Policies::new(workspace);
    let steps = if describe(&since_config) != describe(&head_config) {
        policies.steps(&commits).map_err(git)?
    } else {
        Vec::new()
    };

    // One git process verifies the signed commits that matter, against
    // BASE's allowed signers when the repository keeps them: a key the
    // range adds signs nothing good in it.
    let signers = match workspace.signers_file_in_repo() {
        Some(path) => AllowedSigners::Blob(workspace.object_in_commit(base_id, &path)),
        None => AllowedSigners::Configured,
    };
    let signatures = workspace.verify_signatures_with(
        made_by
            .values()
            .chain(removed_by.values())
            .copied()
            .chain(
                steps
                    .iter()
                    .enumerate()
                    .filter(|(_, step)| step.changes())
                    .map(|(index, _)| index),
            )
            .map(|index| &commits[index]),
        &signers,
    );
    let signature_of = |commit: &CommitInfo| -> Verified { signatures.of(commit) };
    let provenance = |commit: &CommitInfo| -> Provenance {
        let signature = signature_of(commit);
        Provenance {
            commit: commit.id.to_string(),
            author: commit.author.clone(),
            date: commit.date.clone(),
            committer: commit.committer.clone(),
            signature: signature.state.name().to_owned(),
            signer: TrustPolicy::email_of(&signature.signer).to_owned(),
        }
    };
    // The verdict's view of a commit.
    let judge = |commit: &CommitInfo, claim: &Claim<'_>| -> Vec<&'static str> {
        let signature = signature_of(commit);
        verdict::quarantine(claim, Some(&commit.origin(&signature)), policy.as_ref())
    };
    let counts = |commit: &CommitInfo| -> bool {
        let signature = signature_of(commit);
        verdict::releases(Some(&commit.origin(&signature)), policy.as_ref())
    };
    let trusted_because = |commit: Option<&CommitInfo>| -> Vec<String> {
        let signed_by_another = commit.is_some_and(|commit| {
            let signature = signature_of(commit);
            verdict::signed_by_another(
                signature.state.name(),
                TrustPolicy::email_of(&signature.signer),
                &commit.author_email,
            )
        });
        verdict::trusted_because(
            commit.is_some(),
            policy.as_ref().map(|policy| policy.signed),
            signed_by_another,
        )
        .iter()
        .map(|reason| (*reason).to_owned())
        .collect()
    };

    // Releases the range adds that count: a memory they name is released.
    let mut released: HashSet<&str> = HashSet::new();
    for line in &added {
        if let Some(Entry::Release(release)) = &line.entry
            && let Some(commit) = made_by.get(&line.key).map(|index| &commits[*index])
            && counts(commit)
        {
            released.insert(&release.releases);
        }
    }
    // What a tombstone forgets, as HEAD (or BASE) has it.
    let content_of = |id: &str| -> Option<String> {
        after
            .iter()
            .chain(&before)
            .find_map(|line| match &line.entry {
                Some(Entry::Memory(memory)) if memory.id == id => Some(shown(&memory.content, 80)),
                _ => None,
            })
    };

    let mut changes = Vec::new();
    for line in &added {
        let commit = made_by.get(&line.key).map(|index| &commits[*index]);
        let was = before_by_id.get(line.key.0.as_str()).and_then(|lines| {
            lines
                .iter()
                .find(|old| !after_keys.contains(&old.key))
                .or(lines.first())
                .map(|old| Was {
                    file: old.file.clone(),
                    line: old.number,
                    content: match &old.entry {
                        Some(Entry::Memory(memory)) => shown(&memory.content, 2000),
                        _ => shown(&old.raw, 400),
                    },
                })
        });
        let edited = was.is_some();
        let mut change = Change {
            change: ChangeKind::Added,
            id: None,
            file: line.file.clone(),
            line: line.number,
            kind: None,
            content: None,
            author: None,
            target: None,
            was,
            introduced: commit.map(provenance),
            trust: None,
            trust_reasons: Vec::new(),
            flags: Vec::new(),
            stops: false,
            note: None,
        };
        match &line.entry {
            None => {
                change.change = ChangeKind::Unreadable;
                change.content = Some(shown(&line.raw, 400));
                change.flags = vec!["unreadable".to_owned()];
                change.note = line.problem.clone();
            }
            Some(Entry::Memory(memory)) => {
                let suspicions = trust::check(memory, now, kinds.as_ref());
                let secret = suspicions
                    .iter()
                    .any(|s| matches!(s, trust::Suspicion::Secret { .. }));
                let mask = |text: &str| {
                    if secret {
                        redact(text)
                    } else {
                        text.to_owned()
                    }
                };
                let claim = Claim {
                    author: memory.author.as_deref(),
                    imported: memory.extra.contains_key("imported_from"),
                    instruction_like: suspicions
                        .iter()
                        .any(|s| matches!(s, trust::Suspicion::InstructionLike { .. })),
                };
                let mut reasons: Vec<String> = match commit {
                    Some(commit) => judge(commit, &claim),
                    None => verdict::quarantine(&claim, None, policy.as_ref()),
                }
                .into_iter()
                .map(str::to_owned)
                .collect();
                if commit.is_none() {
                    reasons.push(UNATTRIBUTED.to_owned());
                }
                let release = !edited && commit.is_some() && released.contains(memory.id.as_str());
                if release {
                    reasons.clear();
                }
                if edited {
                    reasons.insert(0, EDITED_IN_PLACE.to_owned());
                }
                change.change = if edited {
                    ChangeKind::Edited
                } else {
                    ChangeKind::Added
                };
                change.id = Some(memory.id.clone());
                change.kind = Some(memory.kind.clone());
                change.content = Some(shown(&mask(&memory.content), 2000));
                change.author = memory.author.as_deref().map(&mask);
                change.flags = trust::flags(&suspicions)
                    .split(',')
                    .filter(|flag| !flag.is_empty())
                    .map(str::to_owned)
                    .collect();
                change.stops = !reasons.is_empty();
                change.trust = Some(if reasons.is_empty() {
                    Trust::Trusted
                } else {
                    Trust::Untrusted
                });
                change.trust_reasons = if release {
                    vec!["released".to_owned()]
                } else if reasons.is_empty() {
                    trusted_because(commit)
                } else {
                    reasons
                };
            }
            Some(entry @ (Entry::Tombstone(_) | Entry::Release(_))) => {
                let (kind, target, author) = match entry {
                    Entry::Tombstone(t) => (ChangeKind::Forgotten, &t.forgets, &t.author),
                    Entry::Release(r) => (ChangeKind::Released, &r.releases, &r.author),
                    Entry::Memory(_) => unreachable!("matched above"),
                };
                change.change = if edited { ChangeKind::Edited } else { kind };
                change.id = Some(entry.id().to_owned());
                change.kind = Some(
                    match kind {
                        ChangeKind::Forgotten => crate::domain::memory::TOMBSTONE_TYPE,
                        _ => crate::domain::memory::RELEASE_TYPE,
                    }
                    .to_owned(),
                );
                change.author = author.as_deref().map(|a| shown(a, 200));
                change.target = Some(target.clone());
                let mut reasons: Vec<String> = Vec::new();
                if edited {
                    reasons.push(EDITED_IN_PLACE.to_owned());
                }
                if commit.is_none() {
                    reasons.push(UNATTRIBUTED.to_owned());
                }
                // A forget from outside the policy forgets nothing once
                // pulled; the attempt stops the review.
                if kind == ChangeKind::Forgotten
                    && let Some(commit) = commit
                {
                    reasons.extend(
                        judge(commit, &Claim::default())
                            .into_iter()
                            .map(str::to_owned),
                    );
                }
                change.stops = !reasons.is_empty();
                change.trust_reasons = reasons;
                let about = content_of(target)
                    .map(|content| format!(": {content}"))
                    .unwrap_or_default();
                change.note = Some(match kind {
                    ChangeKind::Forgotten => {
                        // A forget from outside the policy forgets nothing:
                        // said, and it stops the review (above).
                        let outside: Vec<&str> = commit
                            .map(|commit| judge(commit, &Claim::default()))
                            .unwrap_or_default();
                        if outside.is_empty() {
                            format!("forgets {target}{about}")
                        } else {
                            format!(
                                "forgets {target}{about}; its commit is outside the trust policy ({}): it forgets nothing",
                                outside.join(", ")
                            )
                        }
                    }
                    _ => {
                        format!(
                            "releases {target}{about}; {}",
                            if commit.is_some_and(counts) {
                                "counts (its commit is inside the trust policy)"
                            } else {
                                "counts for nothing (its commit is outside the trust policy, or there is none)"
                            }
                        )
                    }
                });
            }
        }
        changes.push(change);
    }
    for line in &removed {
        let commit = removed_by.get(&line.key).map(|index| &commits[*index]);
        let (kind, content, author) = match &line.entry {
            Some(Entry::Memory(memory)) => (
                Some(memory.kind.clone()),
                shown(&memory.content, 2000),
                memory.author.clone(),
            ),
            Some(entry) => (None, shown(&entry.to_line(), 400), None),
            None => (None, shown(&line.raw, 400), None),
        };
        changes.push(Change {
            change: ChangeKind::Deleted,
            id: Some(line.key.0.clone()),
            file: line.file.clone(),
            line: line.number,
            kind,
            content: None,
            author: author.map(|a| shown(&a, 200)),
            target: None,
            was: Some(Was {
                file: line.file.clone(),
                line: line.number,
                content,
            }),
            introduced: commit.map(provenance),
            trust: None,
            trust_reasons: vec![DELETED_IN_PLACE.to_owned()],
            flags: Vec::new(),
            stops: true,
            note: None,
        });
    }

    // Each judged under BASE's policy, as the memories are.
    let (_, policy_steps) = policy_history::walk(
        &steps,
        |commit| policies.seed(*commit),
        |index, _, _| judge(&commits[index], &Claim::default()),
    );
    let mut policy_changes = Vec::new();
    for change in policy_steps {
        let commit = &commits[change.step];
        let mut reasons: Vec<String> = if policy.is_some() {
            judge(commit, &Claim::default())
                .into_iter()
                .map(str::to_owned)
                .collect()
        } else {
            Vec::new()
        };
        if matches!(change.after, Raw::Unusable(_)) {
            reasons.push(POLICY_UNUSABLE.to_owned());
        }
        policy_changes.push(PolicyChange {
            commit: provenance(commit),
            before: TrustPolicy::describe(change.before.as_ref()),
            after: describe_raw(&change.after),
            stops: !reasons.is_empty(),
            reasons,
        });
    }

    // Memory files taken from the driver (`-merge`, `merge=union`, a
    // `.gitattributes` of their own): concurrent appends then conflict and
    // a text merge may drop lines.
    let mut attribute_changes = Vec::new();
    if let (Some(before), Some(after)) = (
        since.and_then(|id| workspace.memory_merge_at(id)),
        workspace.memory_merge_at(head_id),
    ) && before != after
    {
        attribute_changes.push(AttributeChange {
            attribute: "merge",
            stops: before == "goldfish",
            before,
            after,
        });
    }

    let signers_change = workspace.signers_file_in_repo().and_then(|path| {
        let before = since.and_then(|id| workspace.object_in_commit(id, &path));
        let after = workspace.object_in_commit(head_id, &path);
        (before != after).then(|| SignersChange {
            path,
            before: before.map(|id| id.to_string()),
            after: after.map(|id| id.to_string()),
            stops: true,
        })
    });

    let stopping = changes.iter().filter(|change| change.stops).count()
        + policy_changes.iter().filter(|change| change.stops).count()
        + attribute_changes
            .iter()
            .filter(|change| change.stops)
            .count()
        + usize::from(signers_change.is_some());
    Ok(Review {
        base: base.to_owned(),
        base_commit: base_id.to_string(),
        head: head.to_owned(),
        head_commit: head_id.to_string(),
        since_commit: since.map(|id| id.to_string()),
        commits: commits.len(),
        policy: PolicyUsed {
            commit: base_id.to_string(),
            authors: policy.as_ref().map(|policy| policy.authors.clone()),
            signed: policy.as_ref().is_some_and(|policy| policy.signed),
            note: base_config.err(),
        },
        changes,
        policy_changes,
        attribute_changes,
        signers_change,
        stopping,
    })
}

/// How what a commit's config says of the policy reads in a line.
fn describe_raw(raw: &Raw) -> String {
    match raw {
        Raw::Absent => TrustPolicy::describe(None),
        Raw::Policy(policy) => TrustPolicy::describe(Some(policy)),
        Raw::Unusable(why) => format!("invalid ({why})"),
    }
}

/// How many memory changes the text of a review lists at most (the ones
/// that stop it first): a range that adds a million lines prints a page,
/// not a million (`--json` has them all).
pub const TEXT_CHANGES: usize = 200;

/// The changes the text lists: every stopping one (up to
/// [`TEXT_CHANGES`]), then the others in order up to that many.
fn shown_changes(changes: &[Change]) -> HashSet<usize> {
    let indexed = || changes.iter().enumerate();
    let stopping = indexed().filter(|(_, change)| change.stops);
    let others = indexed().filter(|(_, change)| !change.stops);
    stopping
        .chain(others)
        .take(TEXT_CHANGES)
        .map(|(index, _)| index)
        .collect()
}

/// What `goldfish review` prints: a header (the range, the policy used),
/// each change with its commit and verdict (at most [`TEXT_CHANGES`]), each
/// policy change, and a summary line.
pub fn text(review: &Review) -> String {
    let mut out = String::new();
    let named = |name: &str, commit: &str| {
        if commit.starts_with(name) {
            short(commit).to_owned()
        } else {
            format!("{name} ({})", short(commit))
        }
    };
    out.push_str(&format!(
        "review of {} commit{} from {} to {}",
        review.commits,
        if review.commits == 1 { "" } else { "s" },
        named(&review.base, &review.base_commit),
        named(&review.head, &review.head_commit),
    ));
    match &review.since_commit {
        Some(since) if *since != review.base_commit => out.push_str(&format!(
            " (BASE is not in HEAD's history: changes since their merge base {})",
            short(since)
        )),
        None => out.push_str(" (no history in common: every line of HEAD counts)"),
        _ => {}
    }
    out.push('\n');
    if review.commits == 0 && review.since_commit.as_deref() == Some(&review.head_commit) {
        out.push_str(&format!(
            "{} is behind {}: to review what a pull would bring, run `goldfish review {} {}`\n",
            review.head, review.base, review.head, review.base
        ));
    }
    let policy = match &review.policy.authors {
        Some(authors) => format!(
            "authors {}{}",
            authors.join(", "),
            if review.policy.signed {
                ", signed commits only"
            } else {
                ""
            }
        ),
        None => "none: every author is trusted; orders to agents, forged authors and edits still stop the review".to_owned(),
    };
    out.push_str(&format!(
        "trust policy of {}: {policy}\n",
        named(&review.base, &review.policy.commit)
    ));
    if let Some(note) = &review.policy.note {
        out.push_str(&format!("  note: {note}\n"));
    }
    let shown = shown_changes(&review.changes);
    for (_, change) in review
        .changes
        .iter()
        .enumerate()
        .filter(|(index, _)| shown.contains(index))
    {
        out.push('\n');
        out.push_str(&change_text(change));
    }
    if shown.len() < review.changes.len() {
        let hidden = review.changes.len() - shown.len();
        let stopping = review.changes.iter().filter(|change| change.stops).count();
        let hidden_stopping = stopping.saturating_sub(TEXT_CHANGES);
        out.push_str(&format!(
            "\n… {hidden} more memory changes not shown ({hidden_stopping} of them stopping the review): `goldfish review --json` lists every one\n",
        ));
    }
    for change in &review.policy_changes {
        out.push('\n');
        let commit = &change.commit;
        out.push_str(&format!(
            "policy     {REPO_CONFIG} [trust]  by {}  commit {}, signature {}\n    before: {}\n    after:  {}\n",
            commit.author,
            short(&commit.commit),
            commit.signature,
            change.before,
            change.after
        ));
        if change.stops {
            out.push_str(&format!(
                "    STOPS: its commit is outside the trust policy of {}: {}\n",
                review.base,
                reasons_text(&change.reasons)
            ));
        }
    }
    for change in &review.attribute_changes {
        out.push('\n');
        out.push_str(&format!(
            "attributes {MEMORY_PATTERN} {}: {} -> {}\n",
            change.attribute, change.before, change.after
        ));
        if change.stops {
            out.push_str(
                "    STOPS: memory files would no longer be merged by goldfish: concurrent memories conflict and a text merge may drop lines (`goldfish init` writes the attribute back)\n",
            );
        }
    }
    if let Some(change) = &review.signers_change {
        let blob = |id: &Option<String>| id.as_deref().map_or("none", short).to_owned();
        out.push_str(&format!(
            "\nsigners    {} (gpg.ssh.allowedSignersFile): {} -> {}\n    STOPS: its keys decide whose signatures are good under `signed = true`: check every key it adds and the name it gives it\n",
            change.path,
            blob(&change.before),
            blob(&change.after)
        ));
    }
    out.push('\n');
    let total = review.total();
    if total == 0 {
        out.push_str("no memory changes\n");
    } else if review.stopping == 0 {
        out.push_str(&format!(
            "{total} change{}; none would be quarantined\n",
            if total == 1 { "" } else { "s" }
        ));
    } else {
        out.push_str(&format!(
            "{total} change{}; {} would enter quarantine or rewrite the log: check {} before it spreads\n",
            if total == 1 { "" } else { "s" },
            review.stopping,
            if review.stopping == 1 { "it" } else { "them" }
        ));
    }
    crate::app::render::terminal_safe(&out).into_owned()
}

fn reasons_text(reasons: &[String]) -> String {
    reasons
        .iter()
        .map(|reason| match reason_text(reason) {
            "" => reason.clone(),
            text => format!("{reason} ({text})"),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// What a reason means, for people: the index's words, and review's own.
fn reason_text(reason: &str) -> &'static str {
    match reason {
        EDITED_IN_PLACE => {
            "a line BASE has, rewritten: memory lines are append-only, `store`, `forget` and `trust` never rewrite one"
        }
        DELETED_IN_PLACE => {
            "a line BASE has, removed: memories are forgotten with a tombstone (`goldfish forget`), never deleted"
        }
        UNATTRIBUTED => "no commit of the range made this line: it comes back from older history",
        other => trust_reason_text(other),
    }
}

/// One change as text: a header line, the content, the verdict.
fn change_text(change: &Change) -> String {
    let mut text = format!(
        "{:<10} {}:{}",
        change.change.name(),
        change.file,
        change.line
    );
    if let Some(id) = &change.id {
        text.push_str(&format!("  {id}"));
    }
    if let Some(kind) = &change.kind {
        text.push_str(&format!("  {kind}"));
    }
    match &change.introduced {
        Some(commit) => {
            text.push_str(&format!(
                "  by {}  commit {}, signature {}",
                commit.author,
                short(&commit.commit),
                commit.signature
            ));
            if !commit.signer.is_empty() {
                text.push_str(&format!(" by {}", commit.signer));
            }
        }
        None => text.push_str("  (no commit of the range made it)"),
    }
    if let Some(author) = &change.author {
        text.push_str(&format!("  author field: {author}"));
    }
    if !change.flags.is_empty() {
        text.push_str(&format!("  (flagged: {})", change.flags.join(", ")));
    }
    text.push('\n');
    if let Some(was) = &change.was {
        text.push_str(&format!("    was ({}:{}): ", was.file, was.line));
        text.push_str(&indented(&was.content));
    }
    if let Some(content) = &change.content {
        if change.was.is_some() {
            text.push_str("    now: ");
        } else {
            text.push_str("    ");
        }
        text.push_str(&indented(content));
    }
    if let Some(note) = &change.note {
        text.push_str(&format!("    {note}\n"));
    }
    match (change.stops, change.trust) {
        (true, _) => text.push_str(&format!(
            "    {}: {}\n",
            if change.trust == Some(Trust::Untrusted) {
                "WOULD BE QUARANTINED"
            } else {
                "STOPS"
            },
            reasons_text(&change.trust_reasons)
        )),
        (false, Some(Trust::Trusted)) => text.push_str(&format!(
            "    trusted: {}\n",
            change.trust_reasons.join(", ")
        )),
        _ => {}
    }
    text
}

/// `text` on lines after the first indented by four spaces, ending in a
/// newline.
fn indented(text: &str) -> String {
    let mut out = text.lines().collect::<Vec<_>>().join("\n        ");
    out.push('\n');
    out
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
