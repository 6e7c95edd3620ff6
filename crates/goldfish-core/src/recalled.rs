//! What recall returns: a memory as the index holds it, with the commit
//! that introduced it, whether agents receive it unmarked, what made it
//! stale and the files renamed since. Plain data: how a front end spells
//! it (`recall --json`) is the front end's.

use crate::memory::injection::visible;
use crate::supersede::Candidate;

pub use crate::recall::Ranking;

/// The commit that introduced a memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    pub commit: String,
    /// `Name <email>` of the commit's author.
    pub author: String,
    pub date: String,
    /// `Name <email>` of the commit's committer.
    pub committer: String,
    /// The commit's signature as git verified it at sync time: `unsigned`,
    /// `good`, `unknown-key`, `bad`, `expired`, `revoked`, `unchecked`
    /// (`goldfish::adapters::git::SignatureState`).
    pub signature: String,
    /// Who signed it, as git names them (an email); empty when unsigned or
    /// unverified.
    pub signer: String,
}

/// Whether agents receive a memory unmarked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Trust {
    /// Uncommitted (the local user's own), or committed within the
    /// repository's trust policy (or with none), with no content flag that
    /// quarantines it.
    #[default]
    Trusted,
    /// Quarantined: out of the briefing and of default recall; shown only
    /// when asked for (`--include-untrusted`), marked with its reasons.
    Untrusted,
}

impl Trust {
    /// Its name: `trusted` or `untrusted`.
    pub fn name(self) -> &'static str {
        match self {
            Trust::Trusted => "trusted",
            Trust::Untrusted => "untrusted",
        }
    }
}

/// Why a memory is stale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stale {
    /// `file-deleted`, `reverted` or `branch-deleted`.
    pub reason: String,
    /// The path deleted (`file-deleted`).
    pub file: Option<String>,
    /// The branch deleted without being merged (`branch-deleted`): the
    /// memory's `branch`.
    pub branch: Option<String>,
    /// The commit that deleted the file, that reverted the memory's
    /// commit, or the deleted branch's last tip.
    pub commit: String,
    /// That commit's author is outside the trust policy: `brief` keeps the
    /// memory.
    pub outside_policy: bool,
}

/// A file of a memory renamed since it was stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// The path as the memory names it.
    pub file: String,
    /// The path it is at now.
    pub now: String,
}

/// Why a memory [`IndexedMemory::superseded_by`] names is hidden, for
/// people and `--json`.
pub const SUPERSEDED_WHY: &str = "a later memory declares it replaces this one (`store --supersedes`), and that memory is live, trusted and unflagged: left out of `brief` and of recall unless asked for (`--include-superseded`)";

/// What each reason of `trust_reasons` means, for people.
pub fn trust_reason_text(reason: &str) -> &'static str {
    match reason {
        "instruction-like" => "its text reads as an order to an agent, not a fact",
        "author-instruction-like" => {
            "its commit's author name or email reads as an order to an agent, not a name"
        }
        "author-mismatch" => "its `author` field names someone other than the author of its commit",
        "id-reused" => {
            "its id is the one of a memory of another text that history shows first: it is not that memory"
        }
        "shallow" => {
            "this clone is shallow and the memory is in its oldest commit, so who wrote it is unknown (`git fetch --unshallow`, then any goldfish command, tells)"
        }
        "author-outside-policy" => {
            "its commit's author is not in the `[trust] authors` of .goldfish/config"
        }
        "unsigned" => "its commit is not signed, and the trust policy asks for signed commits",
        "signature-unknown-key" => {
            "its commit is signed by a key git does not accept (not in gpg.ssh.allowedSignersFile or the keyring)"
        }
        "signature-bad" => "its commit's signature does not verify",
        "signature-expired" => "its commit's signature or key has expired",
        "signature-revoked" => "its commit is signed by a revoked key",
        "signature-unchecked" => {
            "its commit's signature could not be checked (is gpg.ssh.allowedSignersFile set?)"
        }
        "signer-outside-policy" => "its commit's signer is not in the `[trust] authors`",
        "uncommitted" => "not committed yet: the local user's own",
        "no-policy" => "no `[trust]` section in .goldfish/config: every author is trusted",
        "author-in-policy" => "its commit's author is in the `[trust] authors`",
        "signed-in-policy" => {
            "its commit is signed by a key git accepts, of a signer in the policy"
        }
        "released" => {
            "quarantined, then released by a `goldfish trust` line of someone inside the trust policy (or not committed yet)"
        }
        _ => "",
    }
}

/// One recalled memory, as stored in the index.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedMemory {
    pub id: String,
    pub timestamp: String,
    pub kind: String,
    pub content: String,
    pub source: Option<String>,
    pub tags: Vec<String>,
    pub author: Option<String>,
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub files: Vec<String>,
    pub workspace: String,
    /// File inside the memory folder, and 1-based line.
    pub file: String,
    pub line: i64,
    /// The commit that introduced the memory; `None` while uncommitted.
    pub introduced: Option<Provenance>,
    /// Whether agents receive it unmarked; `untrusted` ones are left out of
    /// the briefing and of recall unless asked for.
    pub trust: Trust,
    /// Why, every one: for an untrusted memory what quarantines it
    /// (`instruction-like`, `author-mismatch`, `author-outside-policy`,
    /// `unsigned`, `signature-…`, `signer-outside-policy`), for a trusted
    /// one what lets it in (`uncommitted`, `no-policy`, `author-in-policy`,
    /// `signed-in-policy`).
    pub trust_reasons: Vec<String>,
    /// The score the ranking used, what `--min-score` filters on: the fused
    /// score in hybrid mode (see `ranking`), the cosine similarity (clamped
    /// to [0, 1]) in semantic mode, the keyword relevance in keyword mode, 1
    /// without a query.
    pub score: f64,
    /// BM25 relevance mapped into [0, 1) by x/(1+x); `None` when the memory
    /// did not match the query's words.
    pub keyword: Option<f64>,
    /// Cosine similarity to the query; `None` without a model.
    pub similarity: Option<f64>,
    /// What hybrid recall's `score` is made of; `None` in the other modes.
    pub ranking: Option<Ranking>,
    /// What is suspect about the record (`secret`, `future-timestamp`,
    /// `bad-timestamp`, `unknown-type`); empty when nothing is. A secret is
    /// masked in every field.
    pub flags: Vec<String>,
    /// The id of the older memory this one declares it replaces.
    pub supersedes: Option<String>,
    /// The newest memory that supersedes this one and counts (live,
    /// trusted, unflagged). Such a memory is left out of `brief` and
    /// default recall.
    pub superseded_by: Option<String>,
    /// Why it is hidden by default ([`SUPERSEDED_WHY`]), when
    /// `superseded_by` is set.
    pub superseded_why: Option<&'static str>,
    /// What made it stale (a file it names deleted since, its commit
    /// reverted); `None` when live. Left out of `brief`, ranked lower by
    /// recall.
    pub stale: Option<Stale>,
    /// Its files renamed since it was stored, each with the path it is at
    /// now.
    pub moved: Vec<Moved>,
    /// The spans of code it cites, each as the last sync judged it at HEAD
    /// ([`crate::citation`]).
    pub cites: Vec<crate::citation::Checked>,
    /// The older result this one probably updates, and why: recall moved
    /// it just above that one (newer wins when facts collide).
    pub newer_than: Option<NewerThan>,
    /// blake3 of the content: the key of its embedding.
    pub content_hash: String,
    /// The agent session it was captured in; `None` for a memory a person
    /// or an agent stored by hand.
    pub session: Option<String>,
}

/// The older result a newer one was moved above (`IndexedMemory::newer_than`).
#[derive(Debug, Clone, PartialEq)]
pub struct NewerThan {
    pub id: String,
    /// Why it probably updates it: the similarity of the two, the facts
    /// that differ.
    pub why: Candidate,
}

impl IndexedMemory {
    /// Masks every secret of every field (what a memory flagged `secret`
    /// holds never leaves the index unmasked).
    pub fn mask_secrets(&mut self) {
        use crate::memory::secrets::redact;
        self.content = redact(&self.content);
        self.source = self.source.as_deref().map(redact);
        for item in self.tags.iter_mut().chain(self.files.iter_mut()) {
            *item = redact(item);
        }
        self.author = self.author.as_deref().map(redact);
        self.branch = self.branch.as_deref().map(redact);
        self.commit = self.commit.as_deref().map(redact);
        self.session = self.session.as_deref().map(redact);
    }
}

/// Hex digits of a commit that agent-facing output shows (as `git log
/// --oneline` does).
pub const SHORT_COMMIT: usize = 7;

impl From<&IndexedMemory> for crate::digest::Source {
    fn from(memory: &IndexedMemory) -> Self {
        crate::digest::Source {
            id: memory.id.clone(),
            date: memory
                .timestamp
                .get(..10)
                .unwrap_or(&memory.timestamp)
                .to_owned(),
            kind: crate::memory::label::shown(&memory.kind, crate::memory::label::LABEL_CHARS),
            content: visible(&memory.content).into_owned(),
            untrusted: memory.trust == Trust::Untrusted,
            author: memory
                .introduced
                .as_ref()
                .map(|p| crate::memory::label::identity(&p.author)),
            commit: memory
                .introduced
                .as_ref()
                .map(|p| p.commit.chars().take(SHORT_COMMIT).collect()),
        }
    }
}
