//! What a sync records of the branches, judged from what the index
//! recorded and what the repository shows now: a branch deleted without
//! being merged makes the memories stored on it `branch-deleted` (the
//! index's staleness).
//!
//! A deletion changes refs, not commits, so every sync compares the
//! branches with the last tips it recorded ([`compare`]). A branch that
//! vanished while a memory names it is kept as gone with its last tip and
//! judged against HEAD (whether its work landed: history's answer, given to
//! [`settle`]); one no memory names is forgotten. A gone branch is judged
//! again when HEAD moves (a merge may bring it in, a reset take it out)
//! while its tip can still be read; once git has collected the tip the last
//! verdict stands. Only a branch the index saw is known to have been
//! deleted: a memory naming one it never saw is not judged.

use std::collections::BTreeMap;

/// A branch as the last sync recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// Its last tip (a commit id, hex).
    pub tip: String,
    /// Last seen as a local branch (else only as a remote-tracking one).
    pub local: bool,
    /// Gone from the repository since.
    pub gone: bool,
    /// Whether its work is in HEAD, when it is gone and was judged.
    pub merged: Option<bool>,
}

/// A branch as the repository shows it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tip {
    pub id: String,
    pub local: bool,
}

/// A branch's row, to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub name: String,
    pub tip: String,
    pub local: bool,
    pub gone: bool,
    pub merged: Option<bool>,
}

/// What the comparison found before any branch is judged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Compared {
    /// Rows of branches that are there: new, moved, or back.
    pub write: Vec<Row>,
    /// Gone branches no memory names: their rows go.
    pub forget: Vec<String>,
    /// Gone branches to judge against HEAD: those that just went, and all
    /// of them when HEAD moved.
    pub judge: Vec<String>,
    /// Branches whose memories' verdict may have changed.
    pub due: Vec<String>,
}

/// What a sync records of the branches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    pub write: Vec<Row>,
    pub forget: Vec<String>,
    /// The branches whose memories' verdict may have changed: gone, back,
    /// or judged otherwise than before.
    pub due: Vec<String>,
}

impl Seen {
    /// Whether a row is written or forgotten.
    pub fn changed(&self) -> bool {
        !self.write.is_empty() || !self.forget.is_empty()
    }
}

/// Compares the branches now (`tips`) with those recorded; `named` tells
/// whether a memory names a branch (asked only of one that just went).
pub fn compare<E>(
    recorded: &BTreeMap<String, Recorded>,
    tips: &BTreeMap<String, Tip>,
    head_moved: bool,
    named: &mut dyn FnMut(&str) -> Result<bool, E>,
) -> Result<Compared, E> {
    let mut compared = Compared::default();
    for (name, now) in tips {
        match recorded.get(name) {
            Some(row) if row.tip == now.id && row.local == now.local && !row.gone => continue,
            Some(row) if row.gone => compared.due.push(name.clone()),
            _ => {}
        }
        compared.write.push(Row {
            name: name.clone(),
            tip: now.id.clone(),
            local: now.local,
            gone: false,
            merged: None,
        });
    }
    for (name, row) in recorded
        .iter()
        .filter(|(name, _)| !tips.contains_key(*name))
    {
        let went = !row.gone;
        if !went && !head_moved {
            continue;
        }
        if went && !named(name)? {
            compared.forget.push(name.clone());
        } else {
            compared.judge.push(name.clone());
        }
    }
    Ok(compared)
}

/// The rows of the judged branches: `landed` has, for each of
/// [`Compared::judge`], whether its work is in HEAD (`None`: history cannot
/// tell now, its tip collected; the last verdict stands).
pub fn settle(
    compared: Compared,
    recorded: &BTreeMap<String, Recorded>,
    landed: &BTreeMap<String, Option<bool>>,
) -> Seen {
    let mut seen = Seen {
        write: compared.write,
        forget: compared.forget,
        due: compared.due,
    };
    for name in compared.judge {
        let Some(row) = recorded.get(&name) else {
            continue;
        };
        let went = !row.gone;
        let merged = landed.get(&name).copied().flatten().or(row.merged);
        if went || merged != row.merged {
            seen.write.push(Row {
                name: name.clone(),
                tip: row.tip.clone(),
                local: row.local,
                gone: true,
                merged,
            });
            seen.due.push(name);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(rows: &[(&str, &str, bool, Option<bool>)]) -> BTreeMap<String, Recorded> {
        rows.iter()
            .map(|(name, tip, gone, merged)| {
                (
                    name.to_string(),
                    Recorded {
                        tip: tip.to_string(),
                        local: true,
                        gone: *gone,
                        merged: *merged,
                    },
                )
            })
            .collect()
    }

    /// `compare` where memories name every branch but `scratch`.
    fn compare_named(
        recorded: &BTreeMap<String, Recorded>,
        tips: &BTreeMap<String, Tip>,
        head_moved: bool,
    ) -> Compared {
        compare::<()>(
            recorded,
            tips,
            head_moved,
            &mut |name| Ok(name != "scratch"),
        )
        .unwrap()
    }

    fn tips(tips: &[(&str, &str)]) -> BTreeMap<String, Tip> {
        tips.iter()
            .map(|(name, id)| {
                (
                    name.to_string(),
                    Tip {
                        id: id.to_string(),
                        local: true,
                    },
                )
            })
            .collect()
    }

    fn names(rows: &[Row]) -> Vec<(&str, bool, Option<bool>)> {
        rows.iter()
            .map(|row| (row.name.as_str(), row.gone, row.merged))
            .collect()
    }

    #[test]
    fn a_branch_that_went_is_judged_when_a_memory_names_it_and_forgotten_else() {
        let before = recorded(&[
            ("main", "a1", false, None),
            ("spike", "b1", false, None),
            ("scratch", "c1", false, None),
        ]);
        let compared = compare_named(&before, &tips(&[("main", "a1")]), false);
        assert!(compared.write.is_empty(), "main did not move");
        assert_eq!(compared.forget, ["scratch"]);
        assert_eq!(compared.judge, ["spike"]);
        let landed = BTreeMap::from([("spike".to_owned(), Some(false))]);
        let seen = settle(compared, &before, &landed);
        assert_eq!(names(&seen.write), [("spike", true, Some(false))]);
        assert_eq!(seen.due, ["spike"]);
        assert!(seen.changed());
    }

    #[test]
    fn a_gone_branch_is_judged_again_only_when_head_moved_and_keeps_its_verdict_when_history_cannot_tell()
     {
        let before = recorded(&[
            ("main", "a1", false, None),
            ("spike", "b1", true, Some(false)),
        ]);
        let now = tips(&[("main", "a1")]);
        let still = compare_named(&before, &now, false);
        assert_eq!(still, Compared::default(), "nothing to do");
        // HEAD moved: a merge brought the branch's work in.
        let moved = compare_named(&before, &now, true);
        assert_eq!(moved.judge, ["spike"]);
        let merged = settle(
            moved.clone(),
            &before,
            &BTreeMap::from([("spike".to_owned(), Some(true))]),
        );
        assert_eq!(names(&merged.write), [("spike", true, Some(true))]);
        assert_eq!(merged.due, ["spike"]);
        // The tip was collected: the last verdict stands, nothing written.
        let collected = settle(
            moved,
            &before,
            &BTreeMap::from([("spike".to_owned(), None)]),
        );
        assert_eq!(collected, Seen::default());
    }

    #[test]
    fn a_branch_new_moved_or_back_is_written_and_one_back_is_due() {
        let before = recorded(&[
            ("moved", "a1", false, None),
            ("back", "b1", true, Some(false)),
        ]);
        let now = tips(&[("moved", "a2"), ("back", "b1"), ("new", "c1")]);
        let compared = compare_named(&before, &now, false);
        assert_eq!(
            names(&compared.write),
            [
                ("back", false, None),
                ("moved", false, None),
                ("new", false, None)
            ]
        );
        assert_eq!(compared.due, ["back"]);
        assert!(compared.judge.is_empty() && compared.forget.is_empty());
    }
}
