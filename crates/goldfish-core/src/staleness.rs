//! Whether a memory is stale, judged from what the code's history shows: a
//! path it names deleted after it was stored (and not there at HEAD), its
//! commit reverted, or its branch deleted without being merged; a path
//! renamed since is followed instead (`moved`).
//!
//! The judgement is pure: what it needs to know comes through [`Code`]
//! (HEAD's tree and the commits' order, from history) and [`Records`] (the
//! deletions, reverts and gone branches the index recorded), asked only for
//! the paths and commits a memory names.

use crate::citation::Checked;
use crate::config::TrustPolicy;
use crate::memory::verdict::{self, Claim, Origin};

/// The reason of a memory whose file was deleted.
pub const FILE_DELETED: &str = "file-deleted";
/// The reason of a memory whose commit was reverted.
pub const REVERTED: &str = "reverted";
/// The reason of a memory whose branch was deleted without being merged.
pub const BRANCH_DELETED: &str = "branch-deleted";
/// The reason of a memory some of whose cited code changed since
/// ([`crate::citation`]).
pub const CODE_CHANGED: &str = "code-changed";
/// The reason of a memory every span of which it cites is gone.
pub const CODE_GONE: &str = "code-gone";

/// Renames followed from one path, at most (a chain longer than that is
/// judged where it stops).
pub const MAX_RENAMES: usize = 16;

/// A commit that deleted a path or reverted another, and its author.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    pub commit: String,
    /// The path it renamed the deleted one to.
    pub renamed_to: Option<String>,
    pub author: String,
    pub author_name: String,
    pub author_email: String,
}

/// A branch deleted without being merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gone {
    /// Its last tip.
    pub tip: String,
    /// Last seen as a local branch: deleted here, by the user. A branch
    /// known only from the remote was deleted there, by anyone who can
    /// push.
    pub local: bool,
}

/// What history answers of the code at HEAD, asked lazily.
pub trait Code {
    /// Whether HEAD's tree holds `path`.
    fn holds(&mut self, path: &str) -> bool;
    /// Whether `commit` is `of` or one of its ancestors (an unreadable id
    /// counts as one).
    fn is_ancestor(&mut self, commit: &str, of: &str) -> bool;
}

/// What a walked commit did that staleness records: the paths it deleted
/// (each with the path it renamed it to) and the commit it reverts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitChanges {
    pub commit: String,
    pub reverts: Option<String>,
    pub deleted: Vec<(String, Option<String>)>,
    pub author: String,
    pub author_name: String,
    pub author_email: String,
}

/// What the index recorded of the history walked, asked lazily.
pub trait Records {
    type Error;
    /// The latest recorded deletion of `path`.
    fn deletion(&mut self, path: &str) -> Result<Option<Event>, Self::Error>;
    /// The commits that revert `introduced` or the commit `commit_field`
    /// names (abbreviated: 7 digits at least), not reverted themselves.
    fn reverts(
        &mut self,
        commit_field: Option<&str>,
        introduced: Option<&str>,
    ) -> Result<Vec<Event>, Self::Error>;
    /// The branch `name`, when it was deleted without being merged.
    fn gone_unmerged(&self, name: &str) -> Option<Gone>;
}

/// What of a memory staleness reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct Judged<'a> {
    pub files: &'a [String],
    /// Its citations as the last check judged them: a cited file is judged
    /// by them, not by its deletion.
    pub cites: &'a [Checked],
    /// Its `commit` field.
    pub commit_field: Option<&'a str>,
    /// The commit that introduced its line; `None` while uncommitted.
    pub introduced: Option<&'a str>,
    pub branch: Option<&'a str>,
}

/// A memory's verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// The reason ([`FILE_DELETED`], [`REVERTED`], [`CODE_CHANGED`],
    /// [`CODE_GONE`], [`BRANCH_DELETED`]); empty when live.
    pub stale: String,
    /// The file deleted, or the file of the first cited span lost.
    pub file: Option<String>,
    /// The commit that made it stale (for a branch, its last tip).
    pub commit: Option<String>,
    /// That commit's author is outside the trust policy.
    pub outside: bool,
    /// Files renamed since, each with the path it is at now.
    pub moved: Vec<(String, String)>,
}

/// Judges a memory at a HEAD (a repository with no commit yet holds
/// nothing stale: the caller does not ask).
pub fn judge<R: Records>(
    memory: Judged<'_>,
    code: &mut dyn Code,
    records: &mut R,
    policy: Option<&TrustPolicy>,
) -> Result<Verdict, R::Error> {
    let mut verdict = Verdict::default();
    for file in memory.files {
        let path = file.strip_prefix("./").unwrap_or(file);
        if memory.cites.iter().any(|cite| cite.path == path) || code.holds(path) {
            continue;
        }
        let mut at = path.to_owned();
        for _ in 0..MAX_RENAMES {
            let Some(event) = records.deletion(&at)? else {
                // Never deleted in the history walked (never there, or not
                // a path of the repository): nothing to say.
                break;
            };
            if let Some(to) = &event.renamed_to {
                if code.holds(to) {
                    verdict.moved.push((file.clone(), to.clone()));
                    break;
                }
                at = to.clone();
                continue;
            }
            if verdict.stale.is_empty() && after(code, &event.commit, memory.introduced) {
                verdict.stale = FILE_DELETED.to_owned();
                verdict.file = Some(file.clone());
                verdict.outside = outside(&event, policy);
                verdict.commit = Some(event.commit);
            }
            break;
        }
    }
    if verdict.stale.is_empty() {
        for event in records.reverts(memory.commit_field, memory.introduced)? {
            if after(code, &event.commit, memory.introduced) {
                verdict.stale = REVERTED.to_owned();
                verdict.outside = outside(&event, policy);
                verdict.commit = Some(event.commit);
                break;
            }
        }
    }
    // Cited code: gone when every span is, changed when one is lost; the
    // first one lost says by whom.
    let lost: Vec<&Checked> = memory.cites.iter().filter(|cite| cite.lost()).collect();
    if verdict.stale.is_empty()
        && let Some(first) = lost.first()
    {
        let every_gone = lost.len() == memory.cites.len()
            && lost
                .iter()
                .all(|cite| cite.verdict == crate::citation::GONE);
        verdict.stale = if every_gone { CODE_GONE } else { CODE_CHANGED }.to_owned();
        verdict.file = Some(first.path.clone());
        if let Some(change) = &first.change {
            verdict.commit = Some(change.commit.clone());
            let event = Event {
                commit: change.commit.clone(),
                renamed_to: None,
                author: change.author.clone(),
                author_name: change.author_name.clone(),
                author_email: change.author_email.clone(),
            };
            verdict.outside = outside(&event, policy);
        }
    }
    // A deletion of refs has no author to weigh against the policy: one
    // made here is the user's own; one seen only on the remote may be
    // anyone's who can push, so under a policy it counts as outside.
    if verdict.stale.is_empty()
        && let Some(gone) = memory
            .branch
            .and_then(|branch| records.gone_unmerged(branch))
    {
        verdict.stale = BRANCH_DELETED.to_owned();
        verdict.commit = Some(gone.tip);
        verdict.outside = !gone.local && policy.is_some();
    }
    Ok(verdict)
}

/// Whether `commit` came after the memory's introducing commit: not that
/// commit nor one of its ancestors. A memory not committed yet was stored
/// after every commit.
fn after(code: &mut dyn Code, commit: &str, introduced: Option<&str>) -> bool {
    match introduced {
        None => false,
        Some(introduced) if introduced == commit => false,
        Some(introduced) => !code.is_ancestor(commit, introduced),
    }
}

/// Whether `event`'s author is outside the trust policy (signatures are not
/// checked for these commits: under a `signed` policy every one is
/// outside).
fn outside(event: &Event, policy: Option<&TrustPolicy>) -> bool {
    let origin = Origin {
        author: &event.author,
        author_name: &event.author_name,
        author_email: &event.author_email,
        signature: "unsigned",
        signer: "",
        shallow: false,
    };
    !verdict::quarantine(&Claim::default(), Some(&origin), policy).is_empty()
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;

    /// A history: what HEAD holds, each commit's ancestors, the deletions
    /// and reverts recorded, the gone branches.
    #[derive(Clone, Default)]
    struct History {
        head: BTreeSet<&'static str>,
        ancestors: BTreeMap<&'static str, Vec<&'static str>>,
        deleted: BTreeMap<&'static str, Event>,
        reverts: Vec<(&'static str, Event)>,
        gone: BTreeMap<&'static str, Gone>,
    }

    impl Code for History {
        fn holds(&mut self, path: &str) -> bool {
            self.head.contains(path)
        }
        fn is_ancestor(&mut self, commit: &str, of: &str) -> bool {
            self.ancestors
                .get(of)
                .is_some_and(|before| before.contains(&commit))
        }
    }

    /// The same history, as the index recorded it.
    struct Recorded<'h>(&'h History);

    impl Records for Recorded<'_> {
        type Error = ();
        fn deletion(&mut self, path: &str) -> Result<Option<Event>, ()> {
            Ok(self.0.deleted.get(path).cloned())
        }
        fn reverts(&mut self, _: Option<&str>, introduced: Option<&str>) -> Result<Vec<Event>, ()> {
            Ok(self
                .0
                .reverts
                .iter()
                .filter(|(reverted, _)| Some(*reverted) == introduced)
                .map(|(_, event)| event.clone())
                .collect())
        }
        fn gone_unmerged(&self, name: &str) -> Option<Gone> {
            self.0.gone.get(name).cloned()
        }
    }

    fn event(commit: &str, renamed_to: Option<&str>) -> Event {
        Event {
            commit: commit.to_owned(),
            renamed_to: renamed_to.map(str::to_owned),
            author: "Ann <ann@example.com>".to_owned(),
            author_name: "Ann".to_owned(),
            author_email: "ann@example.com".to_owned(),
        }
    }

    fn check(history: &mut History, files: &[&str], introduced: Option<&str>, expect: Verdict) {
        let files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        let memory = Judged {
            files: &files,
            introduced,
            branch: Some("spike"),
            ..Judged::default()
        };
        let recorded = history.clone();
        assert_eq!(
            judge(memory, history, &mut Recorded(&recorded), None),
            Ok(expect)
        );
    }

    #[test]
    fn a_file_deleted_after_the_memory_makes_it_stale_and_one_deleted_before_does_not() {
        let mut history = History {
            deleted: BTreeMap::from([("src/old.rs", event("c3", None))]),
            ancestors: BTreeMap::from([("c2", vec!["c1"]), ("c4", vec!["c1", "c2", "c3"])]),
            ..History::default()
        };
        check(
            &mut history,
            &["./src/old.rs"],
            Some("c2"),
            Verdict {
                stale: FILE_DELETED.into(),
                file: Some("./src/old.rs".into()),
                commit: Some("c3".into()),
                ..Verdict::default()
            },
        );
        // Stored after the deletion: about the code as it is.
        check(
            &mut history,
            &["src/old.rs"],
            Some("c4"),
            Verdict::default(),
        );
        // Not committed yet: stored after every commit.
        check(&mut history, &["src/old.rs"], None, Verdict::default());
    }

    #[test]
    fn a_rename_is_followed_to_the_path_head_holds() {
        let mut history = History {
            head: BTreeSet::from(["src/c.rs"]),
            deleted: BTreeMap::from([
                ("src/a.rs", event("c2", Some("src/b.rs"))),
                ("src/b.rs", event("c3", Some("src/c.rs"))),
            ]),
            ..History::default()
        };
        check(
            &mut history,
            &["src/a.rs"],
            Some("c1"),
            Verdict {
                moved: vec![("src/a.rs".into(), "src/c.rs".into())],
                ..Verdict::default()
            },
        );
    }

    #[test]
    fn a_revert_after_the_memory_and_a_branch_gone_unmerged_make_it_stale() {
        let mut history = History {
            head: BTreeSet::from(["src/a.rs"]),
            reverts: vec![("c1", event("c5", None))],
            ..History::default()
        };
        check(
            &mut history,
            &["src/a.rs"],
            Some("c1"),
            Verdict {
                stale: REVERTED.into(),
                commit: Some("c5".into()),
                ..Verdict::default()
            },
        );
        let mut history = History {
            gone: BTreeMap::from([(
                "spike",
                Gone {
                    tip: "t1".into(),
                    local: false,
                },
            )]),
            ..History::default()
        };
        check(
            &mut history,
            &[],
            Some("c1"),
            Verdict {
                stale: BRANCH_DELETED.into(),
                commit: Some("t1".into()),
                ..Verdict::default()
            },
        );
    }
}
