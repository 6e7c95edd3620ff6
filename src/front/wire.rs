//! The JSON the front ends write of what recall returns and what review
//! finds: field names, order and what is left out are stable
//! (`recall --json`, `similar --json`, `tidy --json`, `review --json`). The
//! core's types carry no serde; each shape here borrows one of them.

use serde::Serialize;

use crate::app::review::{
    AttributeChange, ChangeKind, FolderChange, PolicyUsed, Review as Reviewed, SignersChange, Was,
};
use crate::domain::recall::Ranking;
use crate::domain::recalled::{self, IndexedMemory};
use crate::domain::supersede::Candidate;

/// One memory (`recall --json`'s line).
#[derive(Debug, Serialize)]
pub struct Memory<'a> {
    id: &'a str,
    timestamp: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    content: &'a str,
    source: Option<&'a str>,
    tags: &'a [String],
    author: Option<&'a str>,
    branch: Option<&'a str>,
    commit: Option<&'a str>,
    files: &'a [String],
    workspace: &'a str,
    file: &'a str,
    line: i64,
    introduced: Option<Provenance<'a>>,
    trust: &'static str,
    trust_reasons: &'a [String],
    score: f64,
    keyword: Option<f64>,
    similarity: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ranking: Option<Ranking>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    flags: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    supersedes: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    superseded_by: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    superseded_why: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stale: Option<Stale<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    moved: Vec<Moved<'a>>,
    /// The spans of code it cites, each with its verdict at HEAD.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    cites: Vec<Cite<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    newer_than: Option<NewerThan<'a>>,
    /// The agent session a captured memory came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a str>,
}

impl<'a> From<&'a IndexedMemory> for Memory<'a> {
    fn from(m: &'a IndexedMemory) -> Self {
        Memory {
            id: &m.id,
            timestamp: &m.timestamp,
            kind: &m.kind,
            content: &m.content,
            source: m.source.as_deref(),
            tags: &m.tags,
            author: m.author.as_deref(),
            branch: m.branch.as_deref(),
            commit: m.commit.as_deref(),
            files: &m.files,
            workspace: &m.workspace,
            file: &m.file,
            line: m.line,
            introduced: m.introduced.as_ref().map(Provenance::from),
            trust: m.trust.name(),
            trust_reasons: &m.trust_reasons,
            score: m.score,
            keyword: m.keyword,
            similarity: m.similarity,
            ranking: m.ranking,
            flags: &m.flags,
            supersedes: m.supersedes.as_deref(),
            superseded_by: m.superseded_by.as_deref(),
            superseded_why: m.superseded_why,
            stale: m.stale.as_ref().map(Stale::from),
            moved: m.moved.iter().map(Moved::from).collect(),
            cites: m.cites.iter().map(Cite::from).collect(),
            newer_than: m.newer_than.as_ref().map(|newer| NewerThan {
                id: &newer.id,
                why: &newer.why,
            }),
            session: m.session.as_deref(),
        }
    }
}

impl Memory<'_> {
    /// The same, its scores rounded to four decimals (what `recall --json`
    /// shows).
    pub fn rounded(mut self) -> Self {
        let round = |x: f64| (x * 10_000.0).round() / 10_000.0;
        self.score = round(self.score);
        self.keyword = self.keyword.map(round);
        self.similarity = self.similarity.map(round);
        if let Some(ranking) = &mut self.ranking {
            ranking.keyword = round(ranking.keyword);
            ranking.coverage = round(ranking.coverage);
            ranking.semantic = round(ranking.semantic);
            ranking.time_cue = round(ranking.time_cue);
            ranking.keyword_weight = ranking.keyword_weight.map(round);
            ranking.semantic_weight = ranking.semantic_weight.map(round);
        }
        self
    }
}

/// Memories as a JSON array's elements.
pub fn memories(memories: &[IndexedMemory]) -> Vec<Memory<'_>> {
    memories.iter().map(Memory::from).collect()
}

/// A cited span: its path, the lines it cited, its verdict at HEAD
/// (`holds`, `moved`, `changed`, `gone`; `unchecked` while its memory is
/// not committed), its lines now when known, and who changed it.
#[derive(Debug, Serialize)]
pub struct Cite<'a> {
    path: &'a str,
    lines: [u32; 2],
    verdict: &'a str,
    now: Option<[u32; 2]>,
    /// The path a rename took its file to.
    #[serde(skip_serializing_if = "Option::is_none")]
    now_path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    changed_by: Option<ChangedBy<'a>>,
}

/// The commit that changed a cited span, its author and date.
#[derive(Debug, Serialize)]
pub struct ChangedBy<'a> {
    commit: &'a str,
    author: &'a str,
    date: &'a str,
}

impl<'a> From<&'a crate::domain::citation::Checked> for Cite<'a> {
    fn from(c: &'a crate::domain::citation::Checked) -> Self {
        Cite {
            path: &c.path,
            lines: [c.cited.0, c.cited.1],
            verdict: if c.verdict.is_empty() {
                "unchecked"
            } else {
                &c.verdict
            },
            now: c.lines.map(|(start, end)| [start, end]),
            now_path: c.now_path.as_deref(),
            changed_by: c.change.as_ref().map(|change| ChangedBy {
                commit: &change.commit,
                author: &change.author,
                date: &change.date,
            }),
        }
    }
}

/// The commit that introduced a memory or made a change.
#[derive(Debug, Serialize)]
pub struct Provenance<'a> {
    commit: &'a str,
    author: &'a str,
    date: &'a str,
    committer: &'a str,
    signature: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    signer: &'a str,
}

impl<'a> From<&'a recalled::Provenance> for Provenance<'a> {
    fn from(p: &'a recalled::Provenance) -> Self {
        Provenance {
            commit: &p.commit,
            author: &p.author,
            date: &p.date,
            committer: &p.committer,
            signature: &p.signature,
            signer: &p.signer,
        }
    }
}

/// Why a memory is stale.
#[derive(Debug, Serialize)]
pub struct Stale<'a> {
    reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    branch: Option<&'a str>,
    commit: &'a str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    outside_policy: bool,
}

impl<'a> From<&'a recalled::Stale> for Stale<'a> {
    fn from(stale: &'a recalled::Stale) -> Self {
        Stale {
            reason: &stale.reason,
            file: stale.file.as_deref(),
            branch: stale.branch.as_deref(),
            commit: &stale.commit,
            outside_policy: stale.outside_policy,
        }
    }
}

/// A file of a memory renamed since it was stored.
#[derive(Debug, Serialize)]
pub struct Moved<'a> {
    file: &'a str,
    now: &'a str,
}

impl<'a> From<&'a recalled::Moved> for Moved<'a> {
    fn from(moved: &'a recalled::Moved) -> Self {
        Moved {
            file: &moved.file,
            now: &moved.now,
        }
    }
}

/// The older result a newer one was moved above, and why.
#[derive(Debug, Serialize)]
pub struct NewerThan<'a> {
    id: &'a str,
    #[serde(flatten)]
    why: &'a Candidate,
}

/// What a reviewed range brings (`review --json`).
#[derive(Debug, Serialize)]
pub struct Review<'a> {
    base: &'a str,
    base_commit: &'a str,
    head: &'a str,
    head_commit: &'a str,
    since_commit: Option<&'a str>,
    commits: usize,
    policy: &'a PolicyUsed,
    changes: Vec<Change<'a>>,
    policy_changes: Vec<PolicyChange<'a>>,
    attribute_changes: &'a [AttributeChange],
    signers_change: Option<&'a SignersChange>,
    folder_changes: &'a [FolderChange],
    cited: Vec<CitedChange<'a>>,
    stopping: usize,
}

/// A memory whose cited code a reviewed range changes.
#[derive(Debug, Serialize)]
pub struct CitedChange<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    content: &'a str,
    cites: Vec<Cite<'a>>,
    handled: Option<&'a str>,
}

impl<'a> From<&'a Reviewed> for Review<'a> {
    fn from(review: &'a Reviewed) -> Self {
        Review {
            base: &review.base,
            base_commit: &review.base_commit,
            head: &review.head,
            head_commit: &review.head_commit,
            since_commit: review.since_commit.as_deref(),
            commits: review.commits,
            policy: &review.policy,
            changes: review.changes.iter().map(Change::from).collect(),
            policy_changes: review
                .policy_changes
                .iter()
                .map(|change| PolicyChange {
                    commit: Provenance::from(&change.commit),
                    before: &change.before,
                    after: &change.after,
                    reasons: &change.reasons,
                    stops: change.stops,
                })
                .collect(),
            attribute_changes: &review.attribute_changes,
            signers_change: review.signers_change.as_ref(),
            folder_changes: &review.folder_changes,
            cited: review
                .cited
                .iter()
                .map(|memory| CitedChange {
                    id: &memory.id,
                    kind: &memory.kind,
                    content: &memory.content,
                    cites: memory.cites.iter().map(Cite::from).collect(),
                    handled: memory.handled.as_deref(),
                })
                .collect(),
            stopping: review.stopping,
        }
    }
}

/// One changed line of a review.
#[derive(Debug, Serialize)]
pub struct Change<'a> {
    change: ChangeKind,
    id: Option<&'a str>,
    file: &'a str,
    line: usize,
    #[serde(rename = "type")]
    kind: Option<&'a str>,
    content: Option<&'a str>,
    author: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    was: Option<&'a Was>,
    introduced: Option<Provenance<'a>>,
    trust: Option<&'static str>,
    trust_reasons: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    flags: &'a [String],
    stops: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
}

impl<'a> From<&'a crate::app::review::Change> for Change<'a> {
    fn from(change: &'a crate::app::review::Change) -> Self {
        Change {
            change: change.change,
            id: change.id.as_deref(),
            file: &change.file,
            line: change.line,
            kind: change.kind.as_deref(),
            content: change.content.as_deref(),
            author: change.author.as_deref(),
            target: change.target.as_deref(),
            was: change.was.as_ref(),
            introduced: change.introduced.as_ref().map(Provenance::from),
            trust: change.trust.map(recalled::Trust::name),
            trust_reasons: &change.trust_reasons,
            flags: &change.flags,
            stops: change.stops,
            note: change.note.as_deref(),
        }
    }
}

/// A commit of a reviewed range that changed the `[trust]` section.
#[derive(Debug, Serialize)]
pub struct PolicyChange<'a> {
    commit: Provenance<'a>,
    before: &'a str,
    after: &'a str,
    reasons: &'a [String],
    stops: bool,
}
