//! What `goldfish tidy` proposes to forget, and why: superseded memories,
//! checkpoints a later one covers, near-duplicates of a newer memory,
//! stale memories (a file they name deleted since, their commit
//! reverted). Pure:
//! the memories come in as plain facts, the proposals go out with their
//! reason; the application layer reads the index and appends the
//! tombstones.
//!
//! **Architecture Invariant:** a memory is proposed only because of another
//! memory agents receive unmarked (`Fact::counts`: trusted, unflagged, not
//! forgotten), or because of a commit from inside the trust policy (a
//! stale memory whose deletion or revert is an outsider's is not
//! proposed), so a stranger's commit cannot make tidy forget the team's
//! memories, as it cannot hide them from recall.

/// What tidy knows of one memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    pub id: String,
    /// Milliseconds since the epoch.
    pub ts_ms: i64,
    pub kind: String,
    pub branch: Option<String>,
    /// The live memory that supersedes it and counts (see the index's
    /// superseder rule), if any.
    pub superseded_by: Option<String>,
    /// Agents receive it unmarked: trusted (or released) and unflagged.
    pub counts: bool,
    /// Why it is stale, when a commit from inside the trust policy made it
    /// so.
    pub stale: Option<Staleness>,
}

/// What made a memory stale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Staleness {
    /// `file-deleted`, `reverted` or `branch-deleted`.
    pub reason: String,
    /// The path deleted (`file-deleted`).
    pub file: Option<String>,
    /// The branch deleted without being merged (`branch-deleted`).
    pub branch: Option<String>,
    /// The commit that deleted the file or reverted the memory's commit,
    /// or the deleted branch's last tip.
    pub commit: String,
}

/// Why tidy proposes to forget a memory.
#[derive(Debug, Clone, PartialEq)]
pub enum Why {
    /// A later memory declares it replaces this one.
    Superseded { by: String },
    /// A checkpoint older than the cut-off, and a later checkpoint of the
    /// same branch (or of no branch, for one with none) exists.
    CoveredCheckpoint {
        by: String,
        branch: Option<String>,
        older_than_days: u64,
    },
    /// At least `threshold` similar to a newer memory of its cluster, which
    /// is kept.
    NearDuplicate { of: String, threshold: f64 },
    /// Stale: a file it names was deleted since, its commit reverted, or
    /// its branch deleted without being merged.
    Stale(Staleness),
}

impl Why {
    /// A stable name (`tidy --json`'s `why`).
    pub fn name(&self) -> &'static str {
        match self {
            Why::Superseded { .. } => "superseded",
            Why::CoveredCheckpoint { .. } => "covered-checkpoint",
            Why::NearDuplicate { .. } => "near-duplicate",
            Why::Stale(_) => "stale",
        }
    }

    /// The memory whose presence makes this one redundant (for a stale
    /// one, the commit that made it stale).
    pub fn because_of(&self) -> &str {
        match self {
            Why::Superseded { by } | Why::CoveredCheckpoint { by, .. } => by,
            Why::NearDuplicate { of, .. } => of,
            Why::Stale(staleness) => &staleness.commit,
        }
    }

    /// For people.
    pub fn explain(&self) -> String {
        match self {
            Why::Superseded { by } => {
                format!("superseded by {by}, a later memory that declares it replaces this one")
            }
            Why::CoveredCheckpoint {
                by,
                branch,
                older_than_days,
            } => format!(
                "a checkpoint older than {older_than_days} days; {by} is a later checkpoint of {}",
                match branch {
                    Some(branch) => format!("branch {branch}"),
                    None => "no branch".to_owned(),
                }
            ),
            Why::NearDuplicate { of, threshold } => {
                format!(
                    "a near-duplicate (similarity {threshold:.2} or more) of {of}, which is newer and kept"
                )
            }
            Why::Stale(Staleness {
                reason,
                file,
                branch,
                commit,
            }) => {
                let short = commit.get(..10).unwrap_or(commit);
                match (file, branch) {
                    (Some(file), _) if reason == crate::staleness::CODE_GONE => format!(
                        "stale: every span of code it cites is gone (in {file}, by commit {short})"
                    ),
                    (Some(file), _) => format!("stale: {file} was deleted by commit {short}"),
                    (None, Some(branch)) => format!(
                        "stale: its branch {branch} was deleted without being merged (last at {short})"
                    ),
                    (None, None) => format!("stale: its commit was reverted by {short}"),
                }
            }
        }
    }
}

/// A memory to forget, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub id: String,
    pub why: Why,
}

/// What to forget among `facts` (the live memories of a workspace), in this
/// order (each group oldest first): superseded memories; checkpoints older than `cutoff_ms` (and
/// `older_than_days` for the reason) with a later checkpoint of the same
/// branch that counts; then, per cluster of near-duplicates (`clusters`, ids
/// at least `threshold` similar), every member but the newest that counts;
/// then stale memories. A memory is proposed once, for its first reason. A supersession loop
/// (each memory of it declared to replace the next) proposes none of it.
pub fn propose(
    facts: &[Fact],
    cutoff_ms: i64,
    older_than_days: u64,
    clusters: &[Vec<String>],
    threshold: f64,
) -> Vec<Proposal> {
    let by_id: std::collections::HashMap<&str, &Fact> =
        facts.iter().map(|fact| (fact.id.as_str(), fact)).collect();
    // Oldest first, whatever order they came in.
    let mut sorted: Vec<&Fact> = facts.iter().collect();
    sorted.sort_by(|a, b| (a.ts_ms, &a.id).cmp(&(b.ts_ms, &b.id)));
    let facts = sorted;
    let mut picks = Picks::default();
    for fact in &facts {
        if let Some(by) = &fact.superseded_by
            && !in_a_cycle(fact, &by_id)
        {
            picks.add(&fact.id, Why::Superseded { by: by.clone() });
        }
    }
    // The newest checkpoint that counts, per branch.
    let mut newest: std::collections::HashMap<Option<&str>, &Fact> =
        std::collections::HashMap::new();
    for fact in facts.iter().filter(|f| f.kind == "checkpoint" && f.counts) {
        let entry = newest.entry(fact.branch.as_deref()).or_insert(fact);
        if (fact.ts_ms, &fact.id) > (entry.ts_ms, &entry.id) {
            *entry = fact;
        }
    }
    for fact in facts.iter().filter(|f| f.kind == "checkpoint") {
        let Some(latest) = newest.get(&fact.branch.as_deref()) else {
            continue;
        };
        if fact.ts_ms < cutoff_ms && latest.id != fact.id && latest.ts_ms > fact.ts_ms {
            picks.add(
                &fact.id,
                Why::CoveredCheckpoint {
                    by: latest.id.clone(),
                    branch: fact.branch.clone(),
                    older_than_days,
                },
            );
        }
    }
    for cluster in clusters {
        let members: Vec<&Fact> = cluster
            .iter()
            .filter_map(|id| by_id.get(id.as_str()).copied())
            .collect();
        let Some(keep) = members
            .iter()
            .filter(|f| f.counts && !picks.proposed.contains(&f.id))
            .max_by(|a, b| (a.ts_ms, &a.id).cmp(&(b.ts_ms, &b.id)))
        else {
            continue;
        };
        let keep = keep.id.clone();
        for member in members {
            if member.id != keep {
                picks.add(
                    &member.id,
                    Why::NearDuplicate {
                        of: keep.clone(),
                        threshold,
                    },
                );
            }
        }
    }
    for fact in &facts {
        if let Some(staleness) = &fact.stale {
            picks.add(&fact.id, Why::Stale(staleness.clone()));
        }
    }
    picks.proposals
}

/// The proposals so far, and the memories they name.
#[derive(Default)]
struct Picks {
    proposals: Vec<Proposal>,
    proposed: std::collections::HashSet<String>,
}

impl Picks {
    /// Proposes `id` for `why`, unless it was proposed already.
    fn add(&mut self, id: &str, why: Why) {
        if self.proposed.insert(id.to_owned()) {
            self.proposals.push(Proposal {
                id: id.to_owned(),
                why,
            });
        }
    }
}

/// Whether following what supersedes `fact` comes back to it: then no
/// memory of the loop replaces the others, and none is proposed.
fn in_a_cycle(fact: &Fact, by_id: &std::collections::HashMap<&str, &Fact>) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut next = fact.superseded_by.as_deref();
    while let Some(id) = next {
        if id == fact.id || !seen.insert(id) {
            return true;
        }
        next = by_id.get(id).and_then(|f| f.superseded_by.as_deref());
    }
    false
}
#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;

    fn fact(id: &str, day: i64, kind: &str, branch: Option<&str>) -> Fact {
        Fact {
            id: id.to_owned(),
            ts_ms: day * DAY,
            kind: kind.to_owned(),
            branch: branch.map(str::to_owned),
            superseded_by: None,
            counts: true,
            stale: None,
        }
    }

    #[test]
    fn a_stale_memory_is_proposed_last_and_once() {
        let stale = Staleness {
            reason: "file-deleted".to_owned(),
            file: Some("src/a.rs".to_owned()),
            branch: None,
            commit: "0123456789abcdef".to_owned(),
        };
        let mut old = fact("A", 1, "decision", None);
        old.superseded_by = Some("B".to_owned());
        old.stale = Some(stale.clone());
        let mut other = fact("C", 2, "decision", None);
        other.stale = Some(stale);
        let facts = vec![old, fact("B", 3, "decision", None), other];
        let proposals = propose(&facts, 0, 30, &[], 0.9);
        assert_eq!(
            ids(&proposals),
            [("A", "superseded", "B"), ("C", "stale", "0123456789abcdef")]
        );
        assert_eq!(
            proposals[1].why.explain(),
            "stale: src/a.rs was deleted by commit 0123456789"
        );
    }

    fn ids(proposals: &[Proposal]) -> Vec<(&str, &'static str, &str)> {
        proposals
            .iter()
            .map(|p| (p.id.as_str(), p.why.name(), p.why.because_of()))
            .collect()
    }

    #[test]
    fn superseded_memories_and_covered_checkpoints_per_branch() {
        let mut old = fact("A", 1, "decision", None);
        old.superseded_by = Some("B".to_owned());
        let facts = vec![
            old,
            fact("B", 2, "decision", None),
            fact("C1", 1, "checkpoint", Some("main")),
            fact("C2", 5, "checkpoint", Some("main")),
            fact("C3", 50, "checkpoint", Some("main")),
            // The only checkpoint of its branch: nothing covers it.
            fact("D1", 1, "checkpoint", Some("topic")),
            // Covered, but newer than the cut-off.
            fact("C4", 45, "checkpoint", Some("main")),
        ];
        let proposals = propose(&facts, 40 * DAY, 30, &[], 0.85);
        assert_eq!(
            ids(&proposals),
            [
                ("A", "superseded", "B"),
                ("C1", "covered-checkpoint", "C3"),
                ("C2", "covered-checkpoint", "C3"),
            ]
        );
        assert_eq!(
            proposals[1].why.explain(),
            "a checkpoint older than 30 days; C3 is a later checkpoint of branch main"
        );
    }

    #[test]
    fn a_memory_that_does_not_count_covers_nothing_and_keeps_nothing() {
        let mut untrusted = fact("C9", 60, "checkpoint", Some("main"));
        untrusted.counts = false;
        let mut newer_untrusted = fact("N2", 9, "insight", None);
        newer_untrusted.counts = false;
        let facts = vec![
            fact("C1", 1, "checkpoint", Some("main")),
            untrusted,
            fact("N1", 3, "insight", None),
            newer_untrusted,
        ];
        // The untrusted checkpoint is the newest, yet covers nothing; the
        // untrusted near-duplicate is newer, yet the trusted one is kept.
        let clusters = vec![vec!["N1".to_owned(), "N2".to_owned()]];
        assert_eq!(
            ids(&propose(&facts, 40 * DAY, 30, &clusters, 0.85)),
            [("N2", "near-duplicate", "N1")]
        );
    }

    #[test]
    fn a_cluster_keeps_its_newest_member_and_each_memory_is_proposed_once() {
        let mut superseded = fact("X", 1, "insight", None);
        superseded.superseded_by = Some("Y".to_owned());
        let facts = vec![
            superseded,
            fact("Y", 2, "insight", None),
            fact("Z", 3, "insight", None),
        ];
        // Z is the newest: Y is a near-duplicate of it. X is superseded by
        // Y and proposed once, for that.
        let clusters = vec![vec!["X".to_owned(), "Y".to_owned(), "Z".to_owned()]];
        assert_eq!(
            ids(&propose(&facts, 0, 30, &clusters, 0.85)),
            [("X", "superseded", "Y"), ("Y", "near-duplicate", "Z")]
        );
    }

    #[test]
    fn a_supersession_loop_proposes_none_of_it_and_a_chain_all_but_its_head() {
        let mut a = fact("A", 1, "decision", None);
        a.superseded_by = Some("B".to_owned());
        let mut b = fact("B", 2, "decision", None);
        b.superseded_by = Some("A".to_owned());
        assert!(propose(&[a, b], 0, 30, &[], 0.85).is_empty());
        let mut a = fact("A", 1, "decision", None);
        a.superseded_by = Some("B".to_owned());
        let mut b = fact("B", 2, "decision", None);
        b.superseded_by = Some("C".to_owned());
        let c = fact("C", 3, "decision", None);
        assert_eq!(
            ids(&propose(&[a, b, c], 0, 30, &[], 0.85)),
            [("A", "superseded", "B"), ("B", "superseded", "C")]
        );
    }
}
