//! Recall from the index: filters in SQL; keyword candidates from the keyword
//! index (tantivy, `keyword.rs`: the one keyword engine, or a copy of it in
//! memory when it cannot be written), vector candidates from `vectors.rs`;
//! the fusion policy is the core's (`crate::domain::recall`).

use rusqlite::types::Value;
use serde::Serialize;

use super::{Index, IndexError, LINE_PROVENANCE};
use crate::domain::config::TrustPolicy;
use crate::domain::memory::injection::visible;
use crate::domain::recall::{Evidence, Request, Spread, TimeCue, fuse, ranked_before};
use crate::domain::relevance::Judgement;

/// Which workspaces a recall searches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// These workspace ids.
    Workspaces(Vec<i64>),
    /// Every workspace in the index.
    All,
}

/// The commit that introduced a memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Provenance {
    pub commit: String,
    /// `Name <email>` of the commit's author.
    pub author: String,
    pub date: String,
    /// `Name <email>` of the commit's committer.
    pub committer: String,
    /// The commit's signature as git verified it at sync time: `unsigned`,
    /// `good`, `unknown-key`, `bad`, `expired`, `revoked`, `unchecked`
    /// ([`crate::adapters::git::SignatureState`]).
    pub signature: String,
    /// Who signed it, as git names them (an email); absent when unsigned
    /// or unverified.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub signer: String,
}

impl Provenance {
    /// The name of a `Name <email>` identity (the whole text without an
    /// email part).
    pub fn name_of(identity: &str) -> &str {
        match identity.rfind(" <") {
            Some(at) if identity.ends_with('>') => identity[..at].trim(),
            _ => identity.trim(),
        }
    }
}

/// A change of the trust policy by a commit whose author was outside the
/// policy before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyChange {
    pub commit: String,
    pub author: String,
    pub date: String,
    /// Why its author was outside: "whose author (…) is outside the policy
    /// before it".
    pub why: String,
}

/// An indexed line that reuses the id of a memory a line of another text
/// introduced, and that memory's commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReusedId {
    pub id: String,
    pub file: String,
    pub line: i64,
    pub original_commit: String,
    pub original_author: String,
}

/// Whether agents receive a memory unmarked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
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

/// The reasons that quarantine a memory, as `trust_reasons` spells them:
/// comma-separated, in [`crate::domain::memory::verdict::quarantine`]'s
/// order, empty when none. Weighed when a sync writes what they depend on
/// and stored on the row ([`super::verdicts`]), so a recall that leaves
/// quarantined memories out reads two columns of `m`, the memory.
const UNTRUSTED_REASONS: &str = "m.quarantine";

/// Whether a `goldfish trust` line that counts releases the memory
/// ([`crate::domain::memory::verdict::releases`]), stored with the reasons.
const RELEASED: &str = "m.released";

/// The memories `s` whose `supersedes` hides the memory `m`: of the same
/// workspace, not `m` itself, and one agents would receive unmarked (live,
/// not quarantined, not flagged, not dated ahead of now), so a line that
/// arrived through git from outside the trust policy cannot hide good
/// memories by claiming to replace them. `{now}` is replaced by the
/// latest timestamp (ms) that is not ahead. The unary `+` keeps SQLite off
/// `memories_by_time` for these terms: without statistics it took that
/// index over `memories_by_supersedes` and scanned every memory per row
/// (1.3 s instead of 3 ms for a recall over 3,000 memories).
const SUPERSEDER: &str = "FROM memories s
 WHERE s.workspace_id = m.workspace_id AND s.supersedes = m.id AND s.id <> m.id
   AND (s.quarantine = '' OR s.released) AND s.flags = ''
   AND +s.ts_ms IS NOT NULL AND +s.ts_ms <= {now}
   AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = s.workspace_id AND t.forgets = s.id AND t.counts)";

/// [`SUPERSEDER`] as of `now`.
fn superseder(now: jiff::Timestamp) -> String {
    let latest = now
        .checked_add(crate::domain::memory::trust::FUTURE_SLACK)
        .unwrap_or(now)
        .as_millisecond();
    SUPERSEDER.replace("{now}", &latest.to_string())
}

/// Why a memory is stale (`recall --json`'s `stale`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stale {
    /// `file-deleted`, `reverted` or `branch-deleted`.
    pub reason: String,
    /// The path deleted (`file-deleted`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The branch deleted without being merged (`branch-deleted`): the
    /// memory's `branch`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The commit that deleted the file, that reverted the memory's
    /// commit, or the deleted branch's last tip.
    pub commit: String,
    /// That commit's author is outside the trust policy: `brief` keeps the
    /// memory.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub outside_policy: bool,
}

/// A file of a memory renamed since it was stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
        "author-mismatch" => "its `author` field names someone other than the author of its commit",
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

/// One recalled memory, as stored in the index. Field names are stable
/// (`recall --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IndexedMemory {
    pub id: String,
    pub timestamp: String,
    #[serde(rename = "type")]
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
    /// The commit that introduced the memory; `null` while uncommitted.
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
    /// BM25 relevance mapped into [0, 1) by x/(1+x); `null` when the memory
    /// did not match the query's words.
    pub keyword: Option<f64>,
    /// Cosine similarity to the query; `null` without a model.
    pub similarity: Option<f64>,
    /// What hybrid recall's `score` is made of; absent in the other modes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranking: Option<Ranking>,
    /// What is suspect about the record (`secret`, `future-timestamp`,
    /// `bad-timestamp`, `unknown-type`); left out when nothing is. A
    /// secret is masked in every field.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// The id of the older memory this one declares it replaces; absent
    /// when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<String>,
    /// The newest memory that supersedes this one and counts (live,
    /// trusted, unflagged); absent when none. Such a memory is left out of
    /// `brief` and default recall.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// Why it is hidden by default, when `superseded_by` is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_why: Option<&'static str>,
    /// What made it stale (a file it names deleted since, its commit
    /// reverted); absent when live. Left out of `brief`, ranked lower by
    /// recall.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<Stale>,
    /// Its files renamed since it was stored, each with the path it is at
    /// now; absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moved: Vec<Moved>,
    /// The older result this one probably updates, and why: recall moved
    /// it just above that one (newer wins when facts collide); absent when
    /// none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newer_than: Option<NewerThan>,
    /// blake3 of the content: the key of its embedding.
    #[serde(skip)]
    pub content_hash: String,
}

/// The older result a newer one was moved above (`IndexedMemory::newer_than`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewerThan {
    pub id: String,
    /// Why it probably updates it: the similarity of the two, the facts
    /// that differ.
    #[serde(flatten)]
    pub why: crate::domain::supersede::Candidate,
}

impl IndexedMemory {
    /// Masks every secret of every field (what a memory flagged `secret`
    /// holds never leaves the index unmasked).
    fn mask_secrets(&mut self) {
        use crate::domain::memory::secrets::redact;
        self.content = redact(&self.content);
        self.source = self.source.as_deref().map(redact);
        for item in self.tags.iter_mut().chain(self.files.iter_mut()) {
            *item = redact(item);
        }
        self.author = self.author.as_deref().map(redact);
        self.branch = self.branch.as_deref().map(redact);
        self.commit = self.commit.as_deref().map(redact);
    }
}

#[cfg(test)]
impl IndexedMemory {
    /// A decision of 2026-11-20 with this id and content, for unit tests.
    pub(crate) fn sample(id: &str, content: &str) -> IndexedMemory {
        IndexedMemory {
            id: id.to_owned(),
            timestamp: "2026-11-20T10:00:00Z".to_owned(),
            kind: "decision".to_owned(),
            content: content.to_owned(),
            source: None,
            tags: Vec::new(),
            author: None,
            branch: None,
            commit: None,
            files: Vec::new(),
            workspace: "r".to_owned(),
            file: "2026-11-20.jsonl".to_owned(),
            line: 1,
            introduced: None,
            trust: Trust::Trusted,
            trust_reasons: vec!["uncommitted".to_owned()],
            score: 1.0,
            keyword: None,
            similarity: None,
            ranking: None,
            flags: Vec::new(),
            supersedes: None,
            superseded_by: None,
            superseded_why: None,
            newer_than: None,
            stale: None,
            moved: Vec::new(),
            content_hash: crate::adapters::index::sync::content_hash(content),
        }
    }
}

/// Hex digits of a commit that agent-facing output shows (as `git log
/// --oneline` does).
pub const SHORT_COMMIT: usize = 7;

impl From<&IndexedMemory> for crate::domain::digest::Source {
    fn from(memory: &IndexedMemory) -> Self {
        crate::domain::digest::Source {
            id: memory.id.clone(),
            date: memory
                .timestamp
                .get(..10)
                .unwrap_or(&memory.timestamp)
                .to_owned(),
            kind: memory.kind.clone(),
            content: visible(&memory.content).into_owned(),
            untrusted: memory.trust == Trust::Untrusted,
            author: memory
                .introduced
                .as_ref()
                .map(|p| visible(Provenance::name_of(&p.author)).into_owned()),
            commit: memory
                .introduced
                .as_ref()
                .map(|p| p.commit.chars().take(SHORT_COMMIT).collect()),
        }
    }
}

pub use crate::domain::recall::Ranking;

/// How recall ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// BM25 over content, tags and files.
    Keyword,
    /// Cosine similarity of embeddings.
    Semantic,
    /// Both rankings, fused.
    Hybrid,
}

/// What the vector stage needs: the model's id and the query's embedding.
#[derive(Debug, Clone, Copy)]
pub struct QueryVector<'a> {
    pub model: &'a str,
    pub vector: &'a [f32],
}

/// Vectors the vector stage re-ranks by exact cosine: measured to keep
/// ≥ 0.98 of the exact top 10 (tests/it/vectors.rs, `cargo bench --bench vectors`).
pub const VECTOR_CANDIDATES: usize = 2000;

/// Matches the two-stage keyword ranking fetches at least: enough
/// that filters leaving one in ten still fill a top 10.
const KEYWORD_FETCH: usize = 100;

/// Beyond this many (a `--limit` over 1,000), the exhaustive query answers:
/// each fetched match is two bound values of one statement.
const KEYWORD_FETCH_MAX: usize = 4_000;

/// A query for the keyword index: its words (stopwords left out) and the
/// workspaces it keeps to (`None`: every one).
struct KeywordQuery {
    words: Vec<String>,
    workspaces: Option<Vec<i64>>,
}

/// What the keyword stage found: the ranked memories, and the BM25 score of
/// a memory of average length holding each of the query's words once
/// ([`super::keyword::Matches::full`]; 0 when nothing matched).
#[derive(Debug, Default)]
struct KeywordHits {
    hits: Vec<IndexedMemory>,
    full: f64,
}

/// Why a keyword search failed: reading the keyword index (a copy in
/// memory may answer instead) or the database.
#[derive(Debug)]
enum KeywordError {
    Text(super::keyword::TextError),
    Index(IndexError),
}

impl From<super::keyword::TextError> for KeywordError {
    fn from(err: super::keyword::TextError) -> Self {
        KeywordError::Text(err)
    }
}

impl From<IndexError> for KeywordError {
    fn from(err: IndexError) -> Self {
        KeywordError::Index(err)
    }
}

impl From<KeywordError> for IndexError {
    fn from(err: KeywordError) -> Self {
        match err {
            KeywordError::Text(err) => IndexError::Keyword(err),
            KeywordError::Index(err) => err,
        }
    }
}

/// SQL conditions and their bound values, and "now" for the flags of what
/// they select.
struct Conditions {
    sql: Vec<String>,
    values: Vec<Value>,
    /// A row whose timestamp is ahead of it is flagged `future-timestamp`
    /// as it is read ([`crate::domain::memory::trust::ahead`]): the index never
    /// stores that flag.
    now: jiff::Timestamp,
    /// Superseded memories are left out: no row read can have a superseder
    /// that counts, so none is looked for.
    hides_superseded: bool,
}

impl Conditions {
    fn bind(&mut self, value: Value) -> String {
        self.values.push(value);
        format!("?{}", self.values.len())
    }

    /// The request's filters, the scope, and "not forgotten".
    fn filters(request: &Request, scope: &Scope) -> Conditions {
        let mut c = Conditions {
            sql: Vec::new(),
            values: Vec::new(),
            now: request.now.unwrap_or_else(jiff::Timestamp::now),
            hides_superseded: request.hide_superseded,
        };
        c.sql.push(
            "NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = m.workspace_id AND t.forgets = m.id AND t.counts)".into(),
        );
        if let Scope::Workspaces(ids) = scope {
            let list: Vec<String> = ids.iter().map(|id| c.bind(Value::Integer(*id))).collect();
            c.sql
                .push(format!("m.workspace_id IN ({})", list.join(", ")));
        }
        if let Some(since) = request.since {
            let p = c.bind(Value::Integer(since.as_millisecond()));
            c.sql.push(format!("m.ts_ms >= {p}"));
        }
        if let Some(until) = request.until {
            let p = c.bind(Value::Integer(until.as_millisecond()));
            c.sql.push(format!("m.ts_ms <= {p}"));
        }
        if !request.kinds.is_empty() {
            let list: Vec<String> = request
                .kinds
                .iter()
                .map(|k| c.bind(Value::Text(k.clone())))
                .collect();
            c.sql.push(format!("m.type IN ({})", list.join(", ")));
        }
        for tag in &request.tags {
            let p = c.bind(Value::Text(tag.to_lowercase()));
            c.sql.push(format!(
                "EXISTS (SELECT 1 FROM json_each(m.tags) WHERE {UNICODE_LOWER}(json_each.value) = {p})"
            ));
        }
        if request.unflagged_only {
            c.sql.push("m.flags = ''".into());
        }
        if request.trusted_only {
            c.sql
                .push(format!("({UNTRUSTED_REASONS} = '' OR {RELEASED})"));
        }
        if request.hide_stale {
            c.sql.push("(m.stale = '' OR m.stale_outside)".into());
        }
        if request.hide_superseded {
            // The first test does not depend on the row: SQLite runs it once
            // per statement, so while nothing in the index declares a
            // supersession no row pays for the probe.
            c.sql.push(format!(
                "(NOT EXISTS (SELECT 1 FROM memories x WHERE x.supersedes IS NOT NULL)
                  OR NOT EXISTS (SELECT 1 {}))",
                superseder(c.now)
            ));
        }
        let captured = || {
            let prefix = crate::domain::recall::Captured::SOURCE_PREFIX;
            format!(
                "substr(coalesce(m.source, ''), 1, {}) = '{prefix}'",
                prefix.len()
            )
        };
        match request.captured {
            crate::domain::recall::Captured::Include => {}
            crate::domain::recall::Captured::Exclude => c.sql.push(format!("NOT ({})", captured())),
            crate::domain::recall::Captured::Only => c.sql.push(captured()),
        }
        if let Some(author) = &request.author {
            let p = c.bind(Value::Text(format!("%{}%", author.to_lowercase())));
            c.sql.push(format!(
                "(lower(coalesce(m.author, '')) LIKE {p} OR lower(coalesce(p.author, '')) LIKE {p})"
            ));
        }
        c
    }
}

impl Index {
    /// Runs `request` over `scope`, ranked by `mode`. Semantic and hybrid
    /// modes need `query_vector` (keyword ranking is used without one).
    pub fn recall(
        &self,
        request: &Request,
        scope: &Scope,
        mode: Mode,
        query_vector: Option<QueryVector<'_>>,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        let has_query = request
            .query
            .as_deref()
            .is_some_and(|q| !content_words(q).is_empty());
        let mut hits = match (mode, query_vector) {
            _ if request.query.is_none() => self.newest(request, scope)?,
            (Mode::Semantic, Some(vector)) => {
                self.semantic(request, scope, vector, request.limit)?
            }
            (Mode::Hybrid, vector) if has_query || vector.is_some() => {
                self.hybrid(request, scope, vector)?
            }
            _ if !has_query => Vec::new(),
            _ => self.keyword(request, scope, request.limit)?.hits,
        };
        if let (Some(floor), Mode::Semantic | Mode::Hybrid) = (request.floor, mode) {
            hits.retain(|hit| floor.keeps(hit.similarity, hit.keyword.is_some()));
        }
        if let Some(min) = request.min_score {
            hits.retain(|hit| hit.score >= min);
        }
        hits.truncate(request.limit);
        Ok(hits)
    }

    /// Whether `question` is about anything the log of `scope` holds
    /// ([`crate::domain::relevance`]): which of its words the keyword index
    /// finds in the scope's memories (a prefix look-up per word), and, only
    /// when few enough of them are found to refuse the question, the log's
    /// distinct words, read memory by memory from the database until there
    /// are enough (a few hundred memories in a log of varied text; every
    /// memory of a smaller or repetitive one). The memories of
    /// the scope count whatever the request's filters: the question is
    /// judged against the log, not the part a filter keeps.
    pub fn relevance(&self, question: &str, scope: &Scope) -> Result<Judgement, IndexError> {
        use crate::domain::relevance::{Asked, Vocabulary, judge, needs_vocabulary, words};
        let asked = words(question);
        if asked.is_empty() {
            return Ok(judge(Vec::new(), None));
        }
        let workspaces = match scope {
            Scope::All => None,
            Scope::Workspaces(ids) => Some(ids.as_slice()),
        };
        let held = self.with_keyword_index(|index| Ok(index.holds(&asked, workspaces)?))?;
        let asked: Vec<Asked> = asked
            .into_iter()
            .zip(held)
            .map(|(word, in_log)| Asked { word, in_log })
            .collect();
        if !needs_vocabulary(&asked) {
            return Ok(judge(asked, None));
        }
        let mut vocabulary = Vocabulary::default();
        let (sql, values) = match scope {
            Scope::All => ("SELECT content, tags FROM memories".to_owned(), Vec::new()),
            Scope::Workspaces(ids) => (
                format!(
                    "SELECT content, tags FROM memories WHERE workspace_id IN ({})",
                    vec!["?"; ids.len()].join(", ")
                ),
                ids.clone(),
            ),
        };
        let mut statement = self.conn.prepare(&sql).map_err(self.sqlite())?;
        let mut rows = statement
            .query(rusqlite::params_from_iter(values))
            .map_err(self.sqlite())?;
        while let Some(row) = rows.next().map_err(self.sqlite())? {
            let content: String = row.get(0).map_err(self.sqlite())?;
            let tags: String = row.get(1).map_err(self.sqlite())?;
            if vocabulary.add(&content) || vocabulary.add(&tags) {
                break;
            }
        }
        Ok(judge(asked, Some(vocabulary.size())))
    }

    /// Memories of `scope` whose embedding is at least `threshold` similar to
    /// `vector`, most similar first.
    pub fn similar(
        &self,
        model: &str,
        vector: &[f32],
        scope: &Scope,
        threshold: f64,
        limit: usize,
        now: jiff::Timestamp,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        let among = Request {
            now: Some(now),
            ..Request::default()
        };
        self.similar_among(model, vector, scope, threshold, limit, among)
    }

    /// [`Index::similar`] among the memories `among`'s filters let through
    /// (types, trust, flags, superseded; its `now` too); the limit and the
    /// threshold are the arguments'.
    pub fn similar_among(
        &self,
        model: &str,
        vector: &[f32],
        scope: &Scope,
        threshold: f64,
        limit: usize,
        among: Request,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        let request = Request {
            limit,
            min_score: Some(threshold),
            ..among
        };
        let mut hits = self.semantic(&request, scope, QueryVector { model, vector }, limit)?;
        hits.retain(|hit| hit.score >= threshold);
        Ok(hits)
    }

    /// Groups the memories of `scope` into clusters whose members are at
    /// least `threshold` similar to another member (single linkage), largest
    /// first; within a cluster, most similar to the first member first.
    pub fn duplicate_clusters(
        &self,
        model: &str,
        scope: &Scope,
        threshold: f64,
        limit: usize,
        now: jiff::Timestamp,
    ) -> Result<Vec<Vec<IndexedMemory>>, IndexError> {
        let everything = Request {
            limit: usize::MAX,
            now: Some(now),
            ..Request::default()
        };
        let memories = self.newest(&everything, scope)?;
        let index_of: std::collections::HashMap<&str, usize> = memories
            .iter()
            .enumerate()
            .map(|(i, m)| (m.id.as_str(), i))
            .collect();
        let mut parent: Vec<usize> = (0..memories.len()).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        let mut vectors: std::collections::HashMap<String, Vec<f32>> =
            std::collections::HashMap::new();
        for (i, memory) in memories.iter().enumerate() {
            let Some(vector) = self.vector_of(model, &memory.content_hash)? else {
                continue;
            };
            for neighbour in self.similar(model, &vector, scope, threshold, 20, now)? {
                if let Some(&j) = index_of.get(neighbour.id.as_str()) {
                    let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                    parent[a] = b;
                }
            }
            vectors.insert(memory.id.clone(), vector);
        }
        let mut groups: std::collections::BTreeMap<usize, Vec<usize>> =
            std::collections::BTreeMap::new();
        for i in 0..memories.len() {
            let r = root(&mut parent, i);
            groups.entry(r).or_default().push(i);
        }
        let mut clusters: Vec<Vec<IndexedMemory>> = groups
            .into_values()
            .filter(|members| members.len() > 1)
            .map(|members| {
                let first = &vectors[&memories[members[0]].id];
                let mut cluster: Vec<IndexedMemory> = members
                    .iter()
                    .map(|&i| {
                        let mut m = memories[i].clone();
                        m.similarity = vectors
                            .get(&m.id)
                            .map(|v| f64::from(crate::adapters::embed::cosine(first, v)));
                        m.score = m.similarity.unwrap_or(0.0);
                        m
                    })
                    .collect();
                cluster.sort_by(|a, b| {
                    b.score
                        .total_cmp(&a.score)
                        .then_with(|| a.timestamp.cmp(&b.timestamp))
                });
                cluster.truncate(limit);
                cluster
            })
            .collect();
        clusters.sort_by_key(|c| std::cmp::Reverse(c.len()));
        Ok(clusters)
    }

    /// How many live memories of a workspace are quarantined
    /// ([`Trust::Untrusted`]).
    pub fn quarantined(&self, workspace_id: i64) -> Result<u64, IndexError> {
        let sql = format!(
            "SELECT count(*) FROM memories m
             JOIN workspaces w ON w.id = m.workspace_id
             LEFT JOIN provenance p ON {LINE_PROVENANCE}
             WHERE m.workspace_id = ?1
               AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = m.workspace_id AND t.forgets = m.id AND t.counts)
               AND {UNTRUSTED_REASONS} <> '' AND NOT {RELEASED}"
        );
        self.conn
            .query_row(&sql, rusqlite::params![workspace_id], |row| {
                row.get::<_, i64>(0)
            })
            .map(|count| count as u64)
            .map_err(self.sqlite())
    }

    /// How many live memories of a workspace are stale (a file they name
    /// deleted since, their commit reverted).
    pub fn stale_count(&self, workspace_id: i64) -> Result<u64, IndexError> {
        self.conn
            .query_row(
                "SELECT count(*) FROM memories m
                 WHERE m.workspace_id = ?1 AND m.stale <> ''
                   AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = m.workspace_id AND t.forgets = m.id AND t.counts)",
                rusqlite::params![workspace_id],
                |row| row.get::<_, i64>(0),
            )
            .map(|count| count as u64)
            .map_err(self.sqlite())
    }

    /// The commits that changed a workspace's trust policy while their
    /// author was outside the policy before them, oldest first.
    pub fn policy_changes(&self, workspace_id: i64) -> Result<Vec<PolicyChange>, IndexError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT commit_id, author, date, why FROM policy_changes WHERE workspace_id = ?1
                 ORDER BY date, commit_id",
            )
            .map_err(self.sqlite())?;
        statement
            .query_map(rusqlite::params![workspace_id], |row| {
                Ok(PolicyChange {
                    commit: row.get(0)?,
                    author: row.get(1)?,
                    date: row.get(2)?,
                    why: row.get(3)?,
                })
            })
            .and_then(|rows| rows.collect())
            .map_err(self.sqlite())
    }

    /// The lines of a workspace that reuse the id of a memory a line of
    /// another text introduced first: waiting as duplicates behind it (sync
    /// gives the row to the first line), or indexed and quarantined
    /// `id-reused` (the first line could not be read back); at most
    /// `limit`, by file and line.
    pub fn reused_ids(&self, workspace_id: i64, limit: usize) -> Result<Vec<ReusedId>, IndexError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT id, file, line, commit_id, author FROM (
                   SELECT m.id, m.file, m.line, pd.commit_id, pd.author, pd.seq FROM memories m
                   JOIN duplicates d ON d.workspace_id = m.workspace_id AND d.id = m.id
                   JOIN provenance pd ON pd.workspace_id = d.workspace_id AND pd.id = d.id
                     AND pd.record_hash = d.record_hash
                   WHERE m.workspace_id = ?1 AND ',' || m.quarantine || ',' LIKE '%,id-reused,%'
                   GROUP BY m.id HAVING pd.seq = min(pd.seq)
                   UNION ALL
                   SELECT d.id, d.file, d.line, p.commit_id, p.author, p.seq FROM duplicates d
                   JOIN memories m ON m.workspace_id = d.workspace_id AND m.id = d.id
                     AND m.record_hash <> d.record_hash
                   JOIN provenance p ON p.workspace_id = m.workspace_id AND p.id = m.id
                     AND p.record_hash = m.record_hash
                   LEFT JOIN provenance pd ON pd.workspace_id = d.workspace_id AND pd.id = d.id
                     AND pd.record_hash = d.record_hash
                   WHERE d.workspace_id = ?1 AND (pd.seq IS NULL OR p.seq < pd.seq))
                 ORDER BY file, line LIMIT ?2",
            )
            .map_err(self.sqlite())?;
        statement
            .query_map(rusqlite::params![workspace_id, limit as i64], |row| {
                Ok(ReusedId {
                    id: row.get(0)?,
                    file: row.get(1)?,
                    line: row.get(2)?,
                    original_commit: row.get(3)?,
                    original_author: row.get(4)?,
                })
            })
            .and_then(|rows| rows.collect())
            .map_err(self.sqlite())
    }

    /// The trust policy the last sync of a workspace stored (`None`: none,
    /// every author trusted).
    pub fn policy_in_effect(&self, workspace_id: i64) -> Result<Option<TrustPolicy>, IndexError> {
        let (has, signed): (bool, bool) = self
            .conn
            .query_row(
                "SELECT trust_policy, trust_signed FROM workspaces WHERE id = ?1",
                rusqlite::params![workspace_id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .map_err(self.sqlite())?;
        if !has {
            return Ok(None);
        }
        let mut authors: Vec<String> = self
            .conn
            .prepare("SELECT pattern FROM trust_authors WHERE workspace_id = ?1")
            .and_then(|mut statement| {
                statement
                    .query_map(rusqlite::params![workspace_id], |row| row.get(0))?
                    .collect()
            })
            .map_err(self.sqlite())?;
        authors.sort();
        Ok(Some(TrustPolicy { authors, signed }))
    }

    /// The live memories of `scope` whose id starts with `prefix` (ASCII
    /// case ignored), at most `limit`, by id, flagged as of `now`.
    pub fn by_id_prefix(
        &self,
        scope: &Scope,
        prefix: &str,
        limit: usize,
        now: jiff::Timestamp,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        let request = Request {
            now: Some(now),
            ..Request::default()
        };
        let mut c = Conditions::filters(&request, scope);
        let p = c.bind(Value::Text(prefix.to_ascii_uppercase()));
        c.sql
            .push(format!("upper(substr(m.id, 1, length({p}))) = {p}"));
        let limit = c.bind(Value::Integer(limit_value(limit)));
        self.select(c, "memories m", "NULL", &format!("m.id LIMIT {limit}"))
    }

    /// Newest first, filters only.
    fn newest(&self, request: &Request, scope: &Scope) -> Result<Vec<IndexedMemory>, IndexError> {
        let mut c = Conditions::filters(request, scope);
        let limit = c.bind(Value::Integer(limit_value(request.limit)));
        self.select(
            c,
            "memories m",
            "NULL",
            &format!("m.timestamp DESC, m.id DESC LIMIT {limit}"),
        )
    }

    /// BM25 ranking of the query's words (FTS5's formula and weights) by
    /// the keyword index (`super::keyword`, the one keyword engine), in two
    /// stages: it ranks its matches alone, and only the best few (4 ×
    /// `limit`, at least `KEYWORD_FETCH`) are joined with the memories for
    /// the filters and the row (`join_ranked`); 8 times more while they do
    /// not prove the top `limit`, and past `KEYWORD_FETCH_MAX` every match
    /// is sorted against the rows the filters pass (`keyword_exhaustive`).
    /// All give the same list.
    fn keyword(
        &self,
        request: &Request,
        scope: &Scope,
        limit: usize,
    ) -> Result<KeywordHits, IndexError> {
        let Some(query) = self.keyword_query(request, scope)? else {
            return Ok(KeywordHits::default());
        };
        self.with_keyword_index(|index| {
            let mut fetch = (limit * 4).max(KEYWORD_FETCH);
            while fetch <= KEYWORD_FETCH_MAX {
                if let Some(hits) =
                    self.keyword_fetched(index, &query, request, scope, limit, fetch)?
                {
                    return Ok(hits);
                }
                if fetch == KEYWORD_FETCH_MAX {
                    break;
                }
                fetch = (fetch * 8).min(KEYWORD_FETCH_MAX);
            }
            self.keyword_exhaustive(index, &query, request, scope, limit)
        })
    }

    /// The query's words for the keyword index, and the workspaces it
    /// keeps to (`None`: every one; the scope is checked inside the keyword
    /// index, a fast field read per match, only when it leaves workspaces
    /// out). `None` when the query has no words.
    fn keyword_query(
        &self,
        request: &Request,
        scope: &Scope,
    ) -> Result<Option<KeywordQuery>, IndexError> {
        let words = content_words(request.query.as_deref().unwrap_or_default());
        if words.is_empty() {
            return Ok(None);
        }
        let workspaces = match scope {
            Scope::All => None,
            Scope::Workspaces(ids) => {
                let known: i64 = self
                    .conn
                    .query_row("SELECT count(*) FROM workspaces", [], |row| row.get(0))
                    .map_err(self.sqlite())?;
                (usize::try_from(known).unwrap_or(usize::MAX) > ids.len()).then(|| ids.clone())
            }
        };
        Ok(Some(KeywordQuery { words, workspaces }))
    }

    /// The top `limit` from the keyword index's best `fetch` matches, or
    /// `None` when they may not hold it (too few pass the filters, or ties
    /// at the edge past what one statement binds).
    fn keyword_fetched(
        &self,
        index: &super::keyword::TextIndex,
        query: &KeywordQuery,
        request: &Request,
        scope: &Scope,
        limit: usize,
        fetch: usize,
    ) -> Result<Option<KeywordHits>, KeywordError> {
        let found = index.search(&query.words, query.workspaces.as_deref(), fetch)?;
        if found.rows.len() > 2 * KEYWORD_FETCH_MAX {
            return Ok(None);
        }
        // bm25()'s convention: lower ranks better.
        let ranked = found
            .rows
            .into_iter()
            .map(|(row, score)| (row, -score))
            .collect();
        Ok(self
            .join_ranked(request, scope, limit, fetch, ranked, true)?
            .map(|hits| KeywordHits {
                hits,
                full: found.full,
            }))
    }

    /// Runs `search` with the keyword index: the one on disk when it holds
    /// every row; else, after bringing it up to date (a connection that can
    /// write, once per connection: a catch-up that failed is not tried
    /// again);
    /// else (or when reading it fails: damage its checksums did not show) a
    /// copy in memory of every row ([`super::keyword::TextIndex::in_memory`]),
    /// kept while nothing changes. Never a different ranking: only slower.
    fn with_keyword_index<R>(
        &self,
        search: impl Fn(&super::keyword::TextIndex) -> Result<R, KeywordError>,
    ) -> Result<R, IndexError> {
        let mut text = self.text.lock().unwrap_or_else(|p| p.into_inner());
        if self.keyword_index_ready(&mut text) {
            match search(text.as_ref().expect("ready")) {
                Err(KeywordError::Text(_)) => {}
                answer => return answer.map_err(IndexError::from),
            }
        }
        let copy = super::keyword::TextIndex::in_memory(&self.conn, &self.path)?;
        let answer = search(&copy);
        *text = Some(copy);
        answer.map_err(IndexError::from)
    }

    /// Whether `text` holds a keyword index that holds every row (a copy
    /// in memory, or the one on disk), after opening the one on disk and,
    /// on a connection that can write, bringing it up to date (once per
    /// connection: a catch-up that failed is not tried again).
    fn keyword_index_ready(&self, text: &mut Option<super::keyword::TextIndex>) -> bool {
        use super::keyword::{TextIndex, catch_up};
        use std::sync::atomic::Ordering::Relaxed;
        let fresh = |text: &Option<TextIndex>| {
            text.as_ref()
                .is_some_and(|index| index.fresh(&self.conn).unwrap_or(false))
        };
        if fresh(text) {
            return true;
        }
        // Unreadable is as good as absent.
        *text = TextIndex::open(&self.path).ok().flatten();
        if fresh(text)
            || self.conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(true)
            || self.keyword_catch_up_failed.load(Relaxed)
        {
            return fresh(text);
        }
        if catch_up(&self.conn, &self.path).is_err() {
            self.keyword_catch_up_failed.store(true, Relaxed);
        }
        *text = TextIndex::open(&self.path).ok().flatten();
        fresh(text)
    }

    /// The top `limit` of every match of the query that pass the filters
    /// and the scope, ordered as
    /// `join_ranked` orders them: the rows the filters pass are read
    /// (rowid, timestamp, id only), the matches among them sorted, the
    /// first `limit` joined.
    fn keyword_exhaustive(
        &self,
        index: &super::keyword::TextIndex,
        query: &KeywordQuery,
        request: &Request,
        scope: &Scope,
        limit: usize,
    ) -> Result<KeywordHits, KeywordError> {
        let found = index.search(&query.words, query.workspaces.as_deref(), usize::MAX)?;
        let full = found.full;
        let scores: std::collections::HashMap<i64, f64> = found.rows.into_iter().collect();
        let c = Conditions::filters(request, scope);
        let sql = format!(
            "SELECT m.rowid, m.timestamp, m.id FROM memories m
             JOIN workspaces w ON w.id = m.workspace_id
             LEFT JOIN provenance p ON {LINE_PROVENANCE}
             WHERE {}",
            c.sql.join(" AND ")
        );
        register_unicode_lower(&self.conn).map_err(self.sqlite())?;
        let mut statement = self.conn.prepare(&sql).map_err(self.sqlite())?;
        let mut passing: Vec<(f64, String, String, i64)> = Vec::new();
        let mut rows = statement
            .query(rusqlite::params_from_iter(c.values))
            .map_err(self.sqlite())?;
        while let Some(row) = rows.next().map_err(self.sqlite())? {
            let rowid: i64 = row.get(0).map_err(self.sqlite())?;
            if let Some(score) = scores.get(&rowid) {
                passing.push((
                    *score,
                    row.get(1).map_err(self.sqlite())?,
                    row.get(2).map_err(self.sqlite())?,
                    rowid,
                ));
            }
        }
        drop(rows);
        // Best score first, then newer, then the greater id: the order of
        // `join_ranked`'s SQL (bytewise, as SQLite compares text).
        passing.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then_with(|| b.1.cmp(&a.1))
                .then_with(|| b.2.cmp(&a.2))
        });
        passing.truncate(limit);
        let ranked = passing
            .into_iter()
            .map(|(score, _, _, rowid)| (rowid, -score))
            .collect();
        Ok(KeywordHits {
            hits: self
                .join_ranked(request, scope, limit, usize::MAX, ranked, true)?
                .expect("every passing match is there"),
            full,
        })
    }

    /// The top `limit` of `ranked` (the best `fetch` matches of every
    /// workspace as (rowid, rank), lower ranking better) that pass the
    /// filters and the scope, or `None` when they may not hold it. Exact
    /// when it answers: every match ranking strictly better than the
    /// `fetch`-th is among them, so a top `limit` whose last ranks strictly
    /// better than the `fetch`-th (or fewer than `fetch` matches in all)
    /// is the one a query over every match finds, ties broken the same
    /// way. With `ties` (`ranked` holds every match ranking as well as its
    /// last), whatever was not fetched ranks strictly worse than all that
    /// was, so a full top `limit` is proof enough.
    fn join_ranked(
        &self,
        request: &Request,
        scope: &Scope,
        limit: usize,
        fetch: usize,
        ranked: Vec<(i64, f64)>,
        ties: bool,
    ) -> Result<Option<Vec<IndexedMemory>>, IndexError> {
        let complete = ranked.len() < fetch;
        let Some(&(_, edge)) = ranked.last() else {
            return Ok(Some(Vec::new()));
        };
        let mut c = Conditions::filters(request, scope);
        let rows: Vec<String> = ranked
            .iter()
            .map(|(rowid, rank)| {
                let rowid = c.bind(Value::Integer(*rowid));
                let rank = c.bind(Value::Real(*rank));
                format!("({rowid}, {rank})")
            })
            .collect();
        let limit_param = c.bind(Value::Integer(limit_value(limit)));
        let mut hits = self.select(
            c,
            &format!(
                "(SELECT column1 AS r, column2 AS s FROM (VALUES {})) k
                 JOIN memories m ON m.rowid = k.r",
                rows.join(", ")
            ),
            "k.s",
            &format!("rank_value ASC, m.timestamp DESC, m.id DESC LIMIT {limit_param}"),
        )?;
        // The relevance is monotone in the rank, so a last hit more relevant
        // than the edge ranks strictly before it.
        let proven = complete
            || (hits.len() == limit
                && (ties
                    || hits
                        .last()
                        .and_then(|hit| hit.keyword)
                        .is_some_and(|keyword| keyword > keyword_relevance(edge))));
        if !proven {
            return Ok(None);
        }
        for hit in &mut hits {
            hit.score = hit.keyword.unwrap_or(0.0);
        }
        Ok(Some(hits))
    }

    /// Cosine ranking: the vector stage proposes content hashes, SQL keeps
    /// the memories that have them and pass the filters. When the filters
    /// leave too few, the vector stage is asked for more.
    fn semantic(
        &self,
        request: &Request,
        scope: &Scope,
        query: QueryVector<'_>,
        limit: usize,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        let mut k = (limit * 4).max(50);
        loop {
            let vector_hits =
                self.vector_search(query.model, query.vector, k, VECTOR_CANDIDATES.max(k))?;
            let exhausted = vector_hits.len() < k;
            let similarity: std::collections::HashMap<&str, f32> = vector_hits
                .iter()
                .map(|h| (h.content_hash.as_str(), h.similarity))
                .collect();
            let mut hits = Vec::new();
            for chunk in vector_hits.chunks(500) {
                let mut c = Conditions::filters(request, scope);
                let list: Vec<String> = chunk
                    .iter()
                    .map(|h| c.bind(Value::Text(h.content_hash.clone())))
                    .collect();
                c.sql
                    .push(format!("m.content_hash IN ({})", list.join(", ")));
                // Look memories up by hash: left alone, the planner may walk the
                // workspace's index instead, scanning every memory.
                hits.extend(self.select(
                    c,
                    "memories m INDEXED BY memories_by_hash",
                    "NULL",
                    "m.timestamp DESC",
                )?);
            }
            for hit in &mut hits {
                let s = f64::from(similarity[hit.content_hash.as_str()]);
                hit.similarity = Some(s);
                hit.score = s.max(0.0);
            }
            hits.sort_by(|a, b| {
                ranked_before(a.score, &a.timestamp, &a.id, b.score, &b.timestamp, &b.id)
            });
            if hits.len() >= limit || exhausted {
                hits.truncate(limit);
                return Ok(hits);
            }
            k *= 4;
        }
    }

    /// Keyword and vector rankings fused as `request.fusion` says (the
    /// keyword ranking alone, normalised the same way, without a vector);
    /// `score` is the fused score and `ranking` says what made it.
    fn hybrid(
        &self,
        request: &Request,
        scope: &Scope,
        query: Option<QueryVector<'_>>,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        let depth = (request.limit * 5).max(50);
        let (keyword, semantic) = match query {
            // The keyword stage on the second connection, beside the vector
            // stage on this one: same queries, same lists, in the time of
            // the slower.
            Some(query) if self.parallel => {
                // The side connection only reads: the keyword index is
                // brought up to date here, if it lags.
                self.keyword_index_ready(&mut self.text.lock().unwrap_or_else(|p| p.into_inner()));
                let side = self.take_side()?;
                let (side, keyword, semantic) = std::thread::scope(|s| {
                    let keyword = s.spawn(move || {
                        let hits = side.keyword(request, scope, depth);
                        (side, hits)
                    });
                    let semantic = self.semantic(request, scope, query, depth);
                    let (side, hits) = keyword.join().expect("the keyword stage panicked");
                    (side, hits, semantic)
                });
                self.put_side(side);
                (keyword?, semantic?)
            }
            Some(query) => (
                self.keyword(request, scope, depth)?,
                self.semantic(request, scope, query, depth)?,
            ),
            None => (self.keyword(request, scope, depth)?, Vec::new()),
        };
        let full_bm25 = keyword.full;
        let keyword = keyword.hits;
        let mut candidates: Vec<(Evidence, IndexedMemory)> = Vec::new();
        let mut position: std::collections::HashMap<String, usize> =
            std::collections::HashMap::new();
        for (list, is_keyword) in [(semantic, false), (keyword, true)] {
            for (rank, hit) in list.into_iter().enumerate() {
                let i = *position.entry(hit.id.clone()).or_insert_with(|| {
                    candidates.push((Evidence::default(), hit.clone()));
                    candidates.len() - 1
                });
                let (evidence, memory) = &mut candidates[i];
                if is_keyword {
                    evidence.keyword_rank = Some(rank);
                    evidence.bm25 = hit.keyword.map_or(0.0, bm25_of);
                    memory.keyword = hit.keyword;
                } else {
                    evidence.semantic_rank = Some(rank);
                }
            }
        }
        for (evidence, hit) in &mut candidates {
            if let (None, Some(query)) = (hit.similarity, query) {
                hit.similarity = self
                    .vector_of(query.model, &hit.content_hash)?
                    .map(|v| f64::from(crate::adapters::embed::cosine(query.vector, &v)));
            }
            evidence.similarity = hit.similarity;
        }
        let spread = Spread {
            full_bm25,
            ..Spread::of(candidates.iter().map(|(evidence, _)| evidence))
        };
        let cue = request
            .query
            .as_deref()
            .zip(request.now)
            .and_then(|(query, now)| TimeCue::find(query, now));
        let mut fused: Vec<IndexedMemory> = candidates
            .into_iter()
            .map(|(evidence, mut hit)| {
                let (score, ranking) = fuse(
                    request,
                    &evidence,
                    &spread,
                    cue,
                    &hit.timestamp,
                    // A deletion or revert by someone outside the trust
                    // policy marks the memory but costs it nothing.
                    hit.stale
                        .as_ref()
                        .is_some_and(|stale| !stale.outside_policy),
                );
                hit.score = score;
                hit.ranking = Some(ranking);
                hit
            })
            .collect();
        fused.sort_by(|a, b| {
            ranked_before(a.score, &a.timestamp, &a.id, b.score, &b.timestamp, &b.id)
        });
        Ok(fused)
    }

    fn select(
        &self,
        c: Conditions,
        from: &str,
        rank: &str,
        order: &str,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        // SQLite computes the columns of every row it sorts, not only of
        // those the limit keeps: the superseder of each row is looked for
        // only when superseded rows are shown.
        let superseded_by = if c.hides_superseded {
            "NULL".to_owned()
        } else {
            format!(
                "(SELECT s.id {} ORDER BY s.timestamp DESC, s.id DESC LIMIT 1)",
                superseder(c.now)
            )
        };
        let sql = format!(
            "SELECT m.id, m.timestamp, m.type, m.content, m.source, m.tags, m.author, m.branch, m.commit_id,
                    m.files, w.name, m.file, m.line, p.commit_id, p.author, p.date, m.content_hash,
                    {rank} AS rank_value, m.flags, p.committer, p.signature, p.signer,
                    w.trust_policy, w.trust_signed, {UNTRUSTED_REASONS}, {RELEASED}, m.supersedes,
                    {superseded_by} AS superseded_by,
                    m.stale, m.stale_file, m.stale_commit, m.stale_outside, m.moved
             FROM {from}
             JOIN workspaces w ON w.id = m.workspace_id
             LEFT JOIN provenance p ON {LINE_PROVENANCE}
             WHERE {}
             ORDER BY {order}",
            c.sql.join(" AND ")
        );
        let now = c.now;
        register_unicode_lower(&self.conn).map_err(self.sqlite())?;
        let mut statement = self.conn.prepare(&sql).map_err(self.sqlite())?;
        let rows = statement
            .query_map(rusqlite::params_from_iter(c.values), |row| {
                let list = |index: usize| -> rusqlite::Result<Vec<String>> {
                    let text: String = row.get(index)?;
                    Ok(serde_json::from_str(&text).unwrap_or_default())
                };
                let introduced = match row.get::<_, Option<String>>(13)? {
                    Some(commit) => Some(Provenance {
                        commit,
                        author: row.get(14)?,
                        date: row.get(15)?,
                        committer: row.get(19)?,
                        signature: row.get(20)?,
                        signer: row.get(21)?,
                    }),
                    None => None,
                };
                let keyword = row.get::<_, Option<f64>>(17)?.map(keyword_relevance);
                let flags: String = row.get(18)?;
                let (policy, signed): (bool, bool) = (row.get(22)?, row.get(23)?);
                let untrusted: String = row.get(24)?;
                let released: bool = row.get(25)?;
                let (trust, trust_reasons) =
                    trust_of(&untrusted, released, introduced.as_ref(), policy, signed);
                let mut memory = IndexedMemory {
                    id: row.get(0)?,
                    timestamp: row.get(1)?,
                    kind: row.get(2)?,
                    content: row.get(3)?,
                    source: row.get(4)?,
                    tags: list(5)?,
                    author: row.get(6)?,
                    branch: row.get(7)?,
                    commit: row.get(8)?,
                    files: list(9)?,
                    workspace: row.get(10)?,
                    file: row.get(11)?,
                    line: row.get(12)?,
                    introduced,
                    trust,
                    trust_reasons,
                    score: 1.0,
                    keyword,
                    similarity: None,
                    ranking: None,
                    flags: flags
                        .split(',')
                        .filter(|flag| !flag.is_empty())
                        .map(str::to_owned)
                        .collect(),
                    supersedes: row.get(26)?,
                    superseded_by: row.get(27)?,
                    superseded_why: None,
                    newer_than: None,
                    stale: None,
                    moved: Vec::new(),
                    content_hash: row.get(16)?,
                };
                let reason: String = row.get(28)?;
                if !reason.is_empty() {
                    let branch = (reason == super::staleness::BRANCH_DELETED)
                        .then(|| memory.branch.clone())
                        .flatten();
                    memory.stale = Some(Stale {
                        reason,
                        file: row.get(29)?,
                        branch,
                        commit: row.get::<_, Option<String>>(30)?.unwrap_or_default(),
                        outside_policy: row.get(31)?,
                    });
                }
                let moved: String = row.get(32)?;
                memory.moved = serde_json::from_str::<Vec<(String, String)>>(&moved)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(file, now)| Moved { file, now })
                    .collect();
                if memory.superseded_by.is_some() {
                    memory.superseded_why = Some(SUPERSEDED_WHY);
                }
                if crate::domain::memory::trust::ahead(&memory.timestamp, now) {
                    memory
                        .flags
                        .push(crate::domain::memory::trust::FUTURE_FLAG.to_owned());
                    memory.flags.sort_unstable();
                }
                // Like the future timestamp, a mismatching author is read,
                // not stored: it depends on the commit, found after the row.
                if memory.trust_reasons.iter().any(|r| r == AUTHOR_MISMATCH) {
                    memory.flags.push(AUTHOR_MISMATCH.to_owned());
                    memory.flags.sort_unstable();
                }
                if memory.flags.iter().any(|flag| flag == "secret") {
                    memory.mask_secrets();
                }
                Ok(memory)
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(self.sqlite())?;
        Ok(rows)
    }
}

/// The flag of a record whose `author` field names someone other than the
/// author of the commit that introduced it.
pub const AUTHOR_MISMATCH: &str = "author-mismatch";

/// A memory's trust and every reason for it, from the reasons the index
/// found to quarantine it (comma-separated), its provenance and whether its
/// workspace has a policy (and asks for signatures).
fn trust_of(
    untrusted: &str,
    released: bool,
    introduced: Option<&Provenance>,
    policy: bool,
    signed: bool,
) -> (Trust, Vec<String>) {
    let reasons: Vec<String> = untrusted
        .split(',')
        .filter(|reason| !reason.is_empty())
        .map(str::to_owned)
        .collect();
    if !reasons.is_empty() {
        if released {
            return (Trust::Trusted, vec!["released".to_owned()]);
        }
        return (Trust::Untrusted, reasons);
    }
    use crate::domain::memory::verdict;
    let why = verdict::trusted_because(
        introduced.is_some(),
        policy.then_some(signed),
        introduced.is_some_and(|p| {
            verdict::signed_by_another(&p.signature, &p.signer, TrustPolicy::email_of(&p.author))
        }),
    );
    (
        Trust::Trusted,
        why.iter().map(|reason| (*reason).to_owned()).collect(),
    )
}

/// The SQL function that lowercases text as Rust does, in every script
/// (SQLite's `lower()` folds ASCII only): tags match `--tag` whatever their case.
const UNICODE_LOWER: &str = "goldfish_lower";

/// Defines [`UNICODE_LOWER`] on `conn` (again: defining it twice is harmless,
/// and it keeps the function next to the only SQL that uses it).
fn register_unicode_lower(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        UNICODE_LOWER,
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            Ok(ctx
                .get::<Option<String>>(0)?
                .map(|text| text.to_lowercase()))
        },
    )
}

/// bm25() is lower for better matches; its relevance (the negated rank)
/// mapped into [0, 1) by x/(1+x), monotone: a smaller rank, a relevance at
/// least as high.
fn keyword_relevance(rank: f64) -> f64 {
    let relevance = (-rank).max(0.0);
    relevance / (1.0 + relevance)
}

/// BM25 relevance back from its mapping into [0, 1) by x/(1+x).
fn bm25_of(keyword: f64) -> f64 {
    if keyword < 1.0 {
        keyword / (1.0 - keyword)
    } else {
        f64::MAX
    }
}

fn limit_value(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// Words too common in questions to be keyword evidence ("what did we
/// decide about …"). A query made only of these still matches on them.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "an", "and", "any", "are", "as", "at", "be", "been", "before",
    "but", "by", "can", "could", "did", "do", "does", "for", "from", "get", "got", "had", "has",
    "have", "how", "i", "if", "in", "into", "is", "it", "its", "last", "made", "make", "me",
    "more", "my", "no", "not", "now", "of", "on", "or", "our", "out", "over", "should", "so",
    "some", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to",
    "up", "us", "use", "used", "was", "we", "were", "what", "when", "where", "which", "while",
    "who", "why", "will", "with", "would", "you", "your",
];

/// The lowercased words of `text` without repeats, stopwords left out unless
/// nothing else is left.
pub fn content_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
    {
        if !words.contains(&word) {
            words.push(word);
        }
    }
    if words.iter().all(|w| STOPWORDS.contains(&w.as_str())) {
        return words;
    }
    words.retain(|w| !STOPWORDS.contains(&w.as_str()));
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_words_leave_stopwords_out_unless_nothing_else_is_left() {
        assert_eq!(content_words("WAL mode, wal!"), ["wal", "mode"]);
        assert_eq!(content_words("what is the pool size"), ["pool", "size"]);
        assert_eq!(content_words("what is it"), ["what", "is", "it"]);
        assert_eq!(
            content_words("src/auth.rs NEAR"),
            ["src", "auth", "rs", "near"]
        );
        assert!(content_words(" -- ").is_empty());
    }

    /// An index of 300 memories over two workspaces, with repeated texts
    /// (ties in BM25), types and days to filter on.
    fn seeded() -> (tempfile::TempDir, Index) {
        let (dir, index) = crate::adapters::index::two_workspaces();
        let words = [
            "pool", "size", "deadlock", "sqlite", "wal", "retry", "cache", "auth", "token", "merge",
        ];
        let kinds = ["decision", "bug-fix", "insight"];
        for n in 0..300_usize {
            // Texts repeat every 37 memories: the same text scores the same.
            let k = n % 37;
            let content = format!(
                "{} {} {} note {}",
                words[k % words.len()],
                words[(k * 3 + 1) % words.len()],
                if k % 4 == 0 {
                    words[(k + 5) % words.len()]
                } else {
                    "and more words here"
                },
                if k % 2 == 0 { "pool pool" } else { "" },
            );
            index
                .conn
                .execute(
                    "INSERT INTO memories (workspace_id, id, file, line, record_hash, content_hash,
                        timestamp, ts_ms, type, content)
                     VALUES (?1, ?2, 'f.jsonl', ?3, ?2, ?4, ?5, ?6, ?7, ?8)",
                    rusqlite::params![
                        1 + (n % 3 == 0) as i64,
                        format!("01M{n:05}"),
                        n as i64,
                        format!("c{k}"),
                        format!("2026-11-{:02}T10:00:00.000Z", 1 + n % 20),
                        1_793_000_000_000_i64 + (n % 20) as i64 * 86_400_000,
                        kinds[n % kinds.len()],
                        content,
                    ],
                )
                .unwrap();
        }
        (dir, index)
    }

    /// The superseder probe is an index search on `supersedes`, never a
    /// scan of a time range (quadratic: 1.3 s for 3,000 memories).
    #[test]
    fn the_superseder_probe_searches_by_supersedes() {
        let (_dir, index) = seeded();
        let now: jiff::Timestamp = "2026-11-21T09:30:00Z".parse().unwrap();
        let sql = format!(
            "EXPLAIN QUERY PLAN SELECT m.id, (SELECT s.id {0} LIMIT 1) FROM memories m
             WHERE NOT EXISTS (SELECT 1 {0}) ORDER BY m.timestamp DESC LIMIT 10",
            superseder(now)
        );
        let plan: Vec<String> = index
            .conn
            .prepare(&sql)
            .unwrap()
            .query_map([], |row| row.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let probes: Vec<&String> = plan
            .iter()
            .filter(|step| step.contains("SEARCH s "))
            .collect();
        assert_eq!(probes.len(), 2, "{plan:?}");
        assert!(
            probes
                .iter()
                .all(|step| step.contains("memories_by_supersedes")),
            "{plan:?}"
        );
    }

    fn ids(hits: &[IndexedMemory]) -> Vec<(String, f64)> {
        hits.iter().map(|hit| (hit.id.clone(), hit.score)).collect()
    }

    /// A hybrid recall gives the same list whether its keyword stage runs
    /// on the second connection beside the vector stage or before it on
    /// this one; the second connection is kept for the next recall.
    #[test]
    fn hybrid_stages_at_once_rank_as_one_after_the_other() {
        let (_dir, mut index) = seeded();
        let mut seed = 7_u64;
        let mut unit = |dims: usize| -> Vec<f32> {
            let mut v: Vec<f32> = (0..dims)
                .map(|_| {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                })
                .collect();
            crate::adapters::embed::normalize(&mut v);
            v
        };
        let vectors: Vec<(String, Vec<f32>)> =
            (0..37).map(|k| (format!("c{k}"), unit(16))).collect();
        index
            .insert_embeddings("m", vectors.iter().map(|(h, v)| (h.as_str(), v.as_slice())))
            .unwrap();
        let query = unit(16);
        for (text, scope) in [
            ("pool size", Scope::All),
            ("deadlock sqlite wal", Scope::Workspaces(vec![1])),
            ("zebra", Scope::All),
        ] {
            let request = Request {
                query: Some(text.to_owned()),
                limit: 10,
                ..Request::default()
            };
            let mut run = |parallel: bool| {
                index.set_parallel(parallel);
                let vector = QueryVector {
                    model: "m",
                    vector: &query,
                };
                index
                    .recall(&request, &scope, Mode::Hybrid, Some(vector))
                    .unwrap()
            };
            let apart = run(false);
            let together = run(true);
            assert!(!apart.is_empty(), "{text}");
            assert_eq!(ids(&together), ids(&apart), "{text}");
            assert_eq!(
                together.iter().map(|h| h.ranking).collect::<Vec<_>>(),
                apart.iter().map(|h| h.ranking).collect::<Vec<_>>(),
                "{text}"
            );
            assert!(index.side.lock().unwrap().is_some(), "kept for the next");
        }
    }

    /// The two-stage keyword ranking answers exactly what the exhaustive
    /// ranking answers, whatever it fetches, or declines (and `keyword` then
    /// asks for more): with filters, another workspace, ties at the edge;
    /// and a copy of the keyword index in memory answers as the one on disk.
    #[test]
    fn the_two_stage_keyword_ranking_is_the_exhaustive_one_or_declines() {
        let (_dir, index) = seeded();
        let requests = [
            ("pool size", vec![], Scope::All),
            ("deadlock sqlite wal", vec![], Scope::Workspaces(vec![1])),
            (
                "pool",
                vec!["bug-fix".to_owned()],
                Scope::Workspaces(vec![2]),
            ),
            ("token merge cache", vec!["insight".to_owned()], Scope::All),
            ("zebra", vec![], Scope::All),
        ];
        let on_disk = {
            let mut text = None;
            assert!(index.keyword_index_ready(&mut text));
            let text = text.unwrap();
            assert!(!text.is_in_memory());
            text
        };
        let in_memory =
            super::super::keyword::TextIndex::in_memory(&index.conn, &index.path).unwrap();
        assert!(in_memory.is_in_memory() && in_memory.fresh(&index.conn).unwrap());
        let (mut answered, mut declined) = (0, 0);
        for (query, kinds, scope) in &requests {
            let request = Request {
                query: Some((*query).to_owned()),
                kinds: kinds.clone(),
                ..Request::default()
            };
            let words = index.keyword_query(&request, scope).unwrap().unwrap();
            for limit in [1, 5, 10, 50] {
                let exhaustive = index
                    .keyword_exhaustive(&on_disk, &words, &request, scope, limit)
                    .unwrap();
                let keyword = index.keyword(&request, scope, limit).unwrap();
                assert_eq!(
                    ids(&keyword.hits),
                    ids(&exhaustive.hits),
                    "{query} {kinds:?} {scope:?} limit {limit}"
                );
                // One whole-question score, however the matches were found.
                assert_eq!(keyword.full, exhaustive.full);
                assert_eq!(
                    ids(&index
                        .keyword_exhaustive(&in_memory, &words, &request, scope, limit)
                        .unwrap()
                        .hits),
                    ids(&exhaustive.hits),
                    "in memory: {query} {kinds:?} {scope:?} limit {limit}"
                );
                for fetch in [limit, limit + 3, 2 * limit, 120, 1000] {
                    match index
                        .keyword_fetched(&on_disk, &words, &request, scope, limit, fetch)
                        .unwrap()
                    {
                        Some(found) => {
                            answered += 1;
                            assert_eq!(found.full, exhaustive.full);
                            assert_eq!(
                                ids(&found.hits),
                                ids(&exhaustive.hits),
                                "{query} {kinds:?} {scope:?} limit {limit} fetch {fetch}"
                            );
                        }
                        None => declined += 1,
                    }
                }
            }
        }
        assert!(answered > 20 && declined > 5, "{answered} {declined}");
    }
}
