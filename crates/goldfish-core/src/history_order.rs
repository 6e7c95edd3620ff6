//! The order in which history shows commits, the same on every machine
//! that has the same HEAD: what decides which of two lines of one id came
//! first.
//!
//! A commit's place follows the first-parent line of the branch it
//! reached: HEAD's first parents, oldest first; before each merge on that
//! line, what the merge brought in (its other parents, in order, each by
//! its own first-parent line, recursively); then the merge. It is a
//! depth-first post-order that visits a commit's first parent before its
//! other parents. A pull request merged into `main` therefore comes after
//! everything `main` held when it was merged, however old the commit its
//! author branched from, and however a walker happens to order commits of
//! equal depth.
//!
//! When HEAD moves along its first-parent line (a fast-forward, a merge
//! whose first parent is the old HEAD), the order of the old HEAD is a
//! prefix of the new one: what an earlier sync numbered keeps its numbers
//! ([`extends`] tells).

use std::collections::HashSet;
use std::hash::Hash;

/// The commits reachable from `head` through `parents`, oldest first in
/// history's order (see the module). `parents` gives a commit's parents in
/// their order, `None` for a commit outside the set walked (an older sync's,
/// or missing in a shallow clone): those are neither visited nor returned.
pub fn order<'p, Id, P>(head: Id, parents: P) -> Vec<Id>
where
    Id: Copy + Eq + Hash + 'p,
    P: Fn(Id) -> Option<&'p [Id]>,
{
    let mut ordered = Vec::new();
    let Some(first) = parents(head) else {
        return ordered;
    };
    let mut seen: HashSet<Id> = HashSet::from([head]);
    // (commit, its parents, the next parent to visit): iterative, so a
    // history of any depth cannot overflow the stack.
    let mut stack: Vec<(Id, &[Id], usize)> = vec![(head, first, 0)];
    while let Some((commit, its_parents, next)) = stack.last_mut() {
        match its_parents.get(*next) {
            Some(&parent) => {
                *next += 1;
                if let Some(grand) = parents(parent)
                    && seen.insert(parent)
                {
                    stack.push((parent, grand, 0));
                }
            }
            None => {
                ordered.push(*commit);
                stack.pop();
            }
        }
    }
    ordered
}

/// Whether `known` is on `head`'s first-parent line: then [`order`] of
/// `head` begins with [`order`] of `known`. `first_parent` gives a
/// commit's first parent when it is among the commits new since `known`
/// (`None` otherwise), so the check reads only those.
pub fn extends<Id: Copy + Eq>(
    head: Id,
    known: Id,
    first_parent: impl Fn(Id) -> Option<Option<Id>>,
) -> bool {
    let mut commit = head;
    loop {
        if commit == known {
            return true;
        }
        match first_parent(commit) {
            Some(Some(parent)) => commit = parent,
            // A root, or a commit outside the new ones that is not `known`:
            // the line entered the old history elsewhere.
            Some(None) | None => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn graph(edges: &[(u32, &[u32])]) -> HashMap<u32, Vec<u32>> {
        edges.iter().map(|(c, p)| (*c, p.to_vec())).collect()
    }

    fn ordered(graph: &HashMap<u32, Vec<u32>>, head: u32) -> Vec<u32> {
        order(head, |c| graph.get(&c).map(Vec::as_slice))
    }

    /// main: 1 - 2 (bob) - 4 (merge of the PR); the PR: 3, branched from 1.
    /// The PR's commit is as deep as bob's, and comes after it.
    #[test]
    fn a_merged_branch_comes_after_what_its_first_parent_held() {
        let g = graph(&[(1, &[]), (2, &[1]), (3, &[1]), (4, &[2, 3])]);
        assert_eq!(ordered(&g, 4), [1, 2, 3, 4]);
        // The same commits merged the other way round (the PR's side first).
        let g = graph(&[(1, &[]), (2, &[1]), (3, &[1]), (4, &[3, 2])]);
        assert_eq!(ordered(&g, 4), [1, 3, 2, 4]);
    }

    #[test]
    fn a_branch_is_followed_by_its_own_first_parents_recursively() {
        // main 1-2-7(merge of 6); feature 3-6(merge of 5), 5 branched from 1.
        let g = graph(&[
            (1, &[]),
            (2, &[1]),
            (3, &[1]),
            (5, &[1]),
            (6, &[3, 5]),
            (7, &[2, 6]),
        ]);
        assert_eq!(ordered(&g, 7), [1, 2, 3, 5, 6, 7]);
    }

    #[test]
    fn commits_outside_the_set_are_neither_visited_nor_returned() {
        // 1 and 2 are known; 3 and 4 are new.
        let g = graph(&[(3, &[2]), (4, &[3, 1])]);
        assert_eq!(ordered(&g, 4), [3, 4]);
        assert!(ordered(&g, 9).is_empty());
    }

    #[test]
    fn a_fast_forward_along_the_first_parents_extends_the_order() {
        let all = graph(&[(1, &[]), (2, &[1]), (3, &[1]), (4, &[2, 3]), (5, &[4])]);
        let before = ordered(&all, 2);
        let after = ordered(&all, 5);
        assert_eq!(&after[..before.len()], &before[..]);
        let new = graph(&[(3, &[1]), (4, &[2, 3]), (5, &[4])]);
        let first = |c: u32| new.get(&c).map(|p| p.first().copied());
        assert!(extends(5, 2, first));
        // The old HEAD was the merge's second parent: the order changes.
        let new = graph(&[(2, &[1]), (4, &[2, 3]), (5, &[4])]);
        let first = |c: u32| new.get(&c).map(|p| p.first().copied());
        assert!(!extends(5, 3, first));
        let before = ordered(&all, 3);
        assert_ne!(&ordered(&all, 5)[..before.len()], &before[..]);
    }

    #[test]
    fn a_deep_history_does_not_overflow() {
        let g: HashMap<u32, Vec<u32>> = (0..200_000u32)
            .map(|c| (c, if c == 0 { vec![] } else { vec![c - 1] }))
            .collect();
        let ordered = ordered(&g, 199_999);
        assert_eq!(ordered.len(), 200_000);
        assert_eq!(ordered[0], 0);
    }
}
