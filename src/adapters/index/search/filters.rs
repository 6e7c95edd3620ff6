//! The SQL of a search: the conditions a request sets (filters, scope,
//! trust, superseded), the rows they select, and how a row's trust is read.

use super::*;

/// The reasons that quarantine a memory, as `trust_reasons` spells them:
/// comma-separated, in [`crate::domain::memory::verdict::quarantine`]'s
/// order, empty when none. Weighed when a sync writes what they depend on
/// and stored on the row ([`crate::adapters::index::verdicts`]), so a recall that leaves
/// quarantined memories out reads two columns of `m`, the memory.
pub(super) const UNTRUSTED_REASONS: &str = "m.quarantine";

/// Whether a `goldfish trust` line that counts releases the memory
/// ([`crate::domain::memory::verdict::releases`]), stored with the reasons.
pub(super) const RELEASED: &str = "m.released";

/// The memories `s` whose `supersedes` hides the memory `m`: of the same
/// workspace, not `m` itself, and one agents would receive unmarked (live,
/// not quarantined, not flagged, not dated ahead of now), so a line that
/// arrived through git from outside the trust policy cannot hide good
/// memories by claiming to replace them. `{now}` is replaced by the
/// latest timestamp (ms) that is not ahead. The unary `+` keeps SQLite off
/// `memories_by_time` for these terms: without statistics it took that
/// index over `memories_by_supersedes` and scanned every memory per row
/// (1.3 s instead of 3 ms for a recall over 3,000 memories); `INDEXED BY`
/// keeps it off `memories_newest`, which answers the probe's `ORDER BY`.
pub(super) const SUPERSEDER: &str = "FROM memories s INDEXED BY memories_by_supersedes
 WHERE s.workspace_id = m.workspace_id AND s.supersedes = m.id AND s.id <> m.id
   AND (s.quarantine = '' OR s.released) AND s.flags = ''
   AND +s.ts_ms IS NOT NULL AND +s.ts_ms <= {now}
   AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = s.workspace_id AND t.forgets = s.id AND t.counts)";

/// [`SUPERSEDER`] as of `now`.
pub(super) fn superseder(now: jiff::Timestamp) -> String {
    let latest = now
        .checked_add(crate::domain::memory::trust::FUTURE_SLACK)
        .unwrap_or(now)
        .as_millisecond();
    SUPERSEDER.replace("{now}", &latest.to_string())
}

/// SQL conditions and their bound values, and "now" for the flags of what
/// they select.
pub(super) struct Conditions {
    pub(super) sql: Vec<String>,
    pub(super) values: Vec<Value>,
    /// A row whose timestamp is ahead of it is flagged `future-timestamp`
    /// as it is read ([`crate::domain::memory::trust::ahead`]): the index never
    /// stores that flag.
    pub(super) now: jiff::Timestamp,
    /// Superseded memories are left out: no row read can have a superseder
    /// that counts, so none is looked for.
    pub(super) hides_superseded: bool,
}

impl Conditions {
    pub(super) fn bind(&mut self, value: Value) -> String {
        self.values.push(value);
        format!("?{}", self.values.len())
    }

    /// The request's filters, the scope, and "not forgotten".
    pub(super) fn filters(request: &Request, scope: &Scope) -> Conditions {
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
        if request.quarantined_only {
            c.sql
                .push(format!("({UNTRUSTED_REASONS} <> '' AND NOT {RELEASED})"));
        }
        if request.stale_only {
            c.sql.push("m.stale <> ''".into());
        }
        if let Some(branch) = &request.branch {
            let p = c.bind(Value::Text(branch.clone()));
            c.sql.push(format!("m.branch = {p}"));
        }
        if let Some((timestamp, id)) = &request.after {
            let t = c.bind(Value::Text(timestamp.clone()));
            let i = c.bind(Value::Text(id.clone()));
            c.sql.push(format!("(m.timestamp, m.id) < ({t}, {i})"));
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
    pub(super) fn select(
        &self,
        c: Conditions,
        from: &str,
        rank: &str,
        order: &str,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        // SQLite computes the columns of every row it sorts, not only of
        // those the limit keeps: the rows are chosen first, by their rowid
        // and rank alone, and only those kept are read whole.
        let kept_sql = format!(
            "SELECT m.rowid, {rank} AS rank_value
             FROM {from}
             JOIN workspaces w ON w.id = m.workspace_id
             LEFT JOIN provenance p ON {LINE_PROVENANCE}
             WHERE {}
             ORDER BY {order}",
            c.sql.join(" AND ")
        );
        register_unicode_lower(&self.conn).map_err(self.sqlite())?;
        let kept: Vec<(i64, Option<f64>)> = self
            .conn
            .prepare(&kept_sql)
            .and_then(|mut statement| {
                statement
                    .query_map(rusqlite::params_from_iter(c.values), |row| {
                        Ok((row.get(0)?, row.get(1)?))
                    })?
                    .collect()
            })
            .map_err(self.sqlite())?;
        if kept.is_empty() {
            return Ok(Vec::new());
        }
        // The superseder of each row is looked for only when superseded
        // rows are shown.
        let superseded_by = if c.hides_superseded {
            "NULL".to_owned()
        } else {
            format!(
                "(SELECT s.id {} ORDER BY s.timestamp DESC, s.id DESC LIMIT 1)",
                superseder(c.now)
            )
        };
        let cites = crate::adapters::index::cites::JUDGED;
        let sql = format!(
            "WITH kept AS (SELECT key AS place, json_extract(value, '$[0]') AS r,
                                  json_extract(value, '$[1]') AS rank_value FROM json_each(?1))
             SELECT m.id, m.timestamp, m.type, m.content, m.source, m.tags, m.author, m.branch, m.commit_id,
                    m.files, w.name, m.file, m.line, p.commit_id, p.author, p.date, m.content_hash,
                    kept.rank_value, m.flags, p.committer, p.signature, p.signer,
                    w.trust_policy, w.trust_signed, {UNTRUSTED_REASONS}, {RELEASED}, m.supersedes,
                    {superseded_by} AS superseded_by,
                    m.stale, m.stale_file, m.stale_commit, m.stale_outside, m.moved, m.session,
                    {cites} AS cites
             FROM kept
             JOIN memories m ON m.rowid = kept.r
             JOIN workspaces w ON w.id = m.workspace_id
             LEFT JOIN provenance p ON {LINE_PROVENANCE}
             ORDER BY kept.place"
        );
        let kept = serde_json::to_string(&kept).expect("numbers serialize");
        let now = c.now;
        let mut statement = self.conn.prepare(&sql).map_err(self.sqlite())?;
        let rows = statement
            .query_map([kept], |row| memory_of_row(row, now))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(self.sqlite())?;
        Ok(rows)
    }
}

/// A memory as a row of [`Index::select`] gives it, with what is read
/// rather than stored ([`read_marks`]).
fn memory_of_row(row: &rusqlite::Row<'_>, now: jiff::Timestamp) -> rusqlite::Result<IndexedMemory> {
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
        cites: Vec::new(),
        content_hash: row.get(16)?,
        session: row.get(33)?,
    };
    let reason: String = row.get(28)?;
    if !reason.is_empty() {
        let branch = (reason == crate::adapters::index::staleness::BRANCH_DELETED)
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
    if let Some(cites) = row.get::<_, Option<String>>(34)? {
        memory.cites = crate::adapters::index::cites::of(&cites);
    }
    read_marks(&mut memory, now);
    Ok(memory)
}

/// What is read, not stored: why a superseded memory is, a timestamp
/// ahead of `now` and a mismatching author as flags; secrets masked.
fn read_marks(memory: &mut IndexedMemory, now: jiff::Timestamp) {
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
}

/// A memory's trust and every reason for it, from the reasons the index
/// found to quarantine it (comma-separated), its provenance and whether its
/// workspace has a policy (and asks for signatures).
pub(super) fn trust_of(
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
pub(super) const UNICODE_LOWER: &str = "goldfish_lower";

/// Defines [`UNICODE_LOWER`] on `conn` (again: defining it twice is harmless,
/// and it keeps the function next to the only SQL that uses it).
pub(super) fn register_unicode_lower(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
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

pub(super) fn limit_value(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}
