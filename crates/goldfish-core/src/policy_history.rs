//! The trust policy as a history, not a diff: which `[trust]` policy is in
//! effect at each commit, given the policy each commit's
//! `.goldfish/config` holds and a judge of whether a commit's author (and
//! signature) is inside a policy.
//!
//! A commit whose config reads as another policy than the one in effect at
//! its first parent changes it, merges included (a merge can take a side
//! that never had a policy). The change takes effect only when the commit
//! is inside the policy in effect before it; a change by someone outside
//! it, or to a config that cannot be used, leaves the last good policy in
//! effect (fail closed) and is reported. A merge that takes the policy in
//! effect on another of its parents, of the same history (the same
//! adopting commit), takes that one's effect as it is: its own commits
//! were judged.
//!
//! With no policy in effect anyone may set one; a config that cannot be
//! used then gives a policy that admits nobody.
//!
//! When the allowed-signers file that verifies signatures is kept in the
//! repository, its version is part of the policy: a commit that changes it
//! is judged the same way (its signature against the version before it),
//! so a pull request cannot add a key and sign with it.

use std::collections::HashMap;
use std::hash::Hash;

use crate::config::{REPO_CONFIG, RepoConfig, TrustPolicy};

/// What a commit's `.goldfish/config` says of the trust policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Raw {
    /// No config, or one without a `[trust]` section.
    Absent,
    Policy(TrustPolicy),
    /// A config that cannot be used, and why.
    Unusable(String),
}

impl Raw {
    /// What a config's bytes say (`None`: no config).
    pub fn of(bytes: Option<&[u8]>) -> Raw {
        match bytes.map(RepoConfig::trust_of) {
            None | Some(Ok(None)) => Raw::Absent,
            Some(Ok(Some(policy))) => Raw::Policy(policy),
            Some(Err(err)) => Raw::Unusable(format!("{REPO_CONFIG} is invalid: {err}")),
        }
    }

    fn policy(&self) -> Option<&TrustPolicy> {
        match self {
            Raw::Policy(policy) => Some(policy),
            _ => None,
        }
    }

    /// The policy it puts in effect (`Some(None)`: none); `None` for a
    /// config that cannot be used.
    fn effect(&self) -> Option<Option<&TrustPolicy>> {
        match self {
            Raw::Absent => Some(None),
            Raw::Policy(policy) => Some(Some(policy)),
            Raw::Unusable(_) => None,
        }
    }
}

/// The policy in effect at a commit.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Effective {
    /// `None`: every author is trusted.
    pub policy: Option<TrustPolicy>,
    /// The commit that first set a policy in this history (`None`: none
    /// ever did): two parents' policies are of one history when it is the
    /// same.
    pub root: Option<String>,
    /// The version of the allowed-signers file kept in the repository
    /// (its blob id) in effect; `None`: none (or the file lives outside
    /// the repository).
    pub signers: Option<String>,
}

impl Effective {
    /// A policy that admits nobody: what a config that cannot be used gives
    /// when no good policy came before it.
    pub fn nobody() -> TrustPolicy {
        TrustPolicy {
            authors: Vec::new(),
            signed: false,
        }
    }
}

/// A commit of the walk: its id, its parents' ids (first parent first),
/// what its config says, its version of an allowed-signers file kept in
/// the repository, and whether either differs from its first parent's
/// (their bytes: a root commit's when it has them).
#[derive(Debug, Clone)]
pub struct Step<C> {
    pub commit: C,
    pub parents: Vec<C>,
    pub raw: Raw,
    pub signers: Option<String>,
    pub changed: bool,
}

impl<C> Step<C> {
    /// Whether its commit touched the config or the signers file: only
    /// such a commit is judged
    /// (so [`walk`]'s judge needs the signatures of those alone).
    pub fn changes(&self) -> bool {
        self.changed
    }
}

/// What became of a commit that changed the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It takes effect: its commit is inside the policy before it, or there
    /// was none.
    Taken,
    /// Its commit is outside the policy before it (the judge's reasons):
    /// the policy before it stays in effect.
    Outside(Vec<&'static str>),
    /// The config cannot be used (why): the policy before it stays in
    /// effect, or, with none before, a policy that admits nobody.
    Unusable(String),
}

/// A commit that changed the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Its index in the steps.
    pub step: usize,
    /// The policy in effect at its first parent.
    pub before: Option<TrustPolicy>,
    pub after: Raw,
    /// Whether it changed the allowed-signers file in effect (and the
    /// policy not).
    pub signers_only: bool,
    pub outcome: Outcome,
}

/// The policy in effect at each step's commit (steps oldest first: a
/// commit after its parents), and the changes. `seed` gives the policy in
/// effect at a parent that is not among the steps. `judge` says why a
/// step's commit is outside a policy (empty: inside), its signature checked
/// against the signers file in effect before it.
pub fn walk<C: Clone + Eq + Hash + ToString>(
    steps: &[Step<C>],
    mut seed: impl FnMut(&C) -> Effective,
    mut judge: impl FnMut(usize, &TrustPolicy, Option<&str>) -> Vec<&'static str>,
) -> (HashMap<C, Effective>, Vec<Change>) {
    let mut effective: HashMap<C, Effective> = HashMap::new();
    let mut changes = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        let mut at = |commit: &C| -> Effective {
            effective
                .get(commit)
                .cloned()
                .unwrap_or_else(|| seed(commit))
        };
        let before = step.parents.first().map(&mut at).unwrap_or_default();
        // A commit that leaves the config as its first parent had it keeps
        // what is in effect there: a refused change stays refused under the
        // commits that follow it. One that brings back the policy in effect
        // changes nothing either.
        let policy_same = match &step.raw {
            Raw::Absent => before.policy.is_none(),
            Raw::Policy(policy) => before.policy.as_ref() == Some(policy),
            Raw::Unusable(_) => false,
        };
        if !step.changes() || (policy_same && step.signers == before.signers) {
            effective.insert(step.commit.clone(), before);
            continue;
        }
        // A merge taking another parent's policy of the same history.
        let side = step.parents.iter().skip(1).map(&mut at).find(|side| {
            side.root.is_some()
                && side.root == before.root
                && Some(side.policy.as_ref()) == step.raw.effect()
                && side.signers == step.signers
        });
        if let Some(side) = side {
            effective.insert(step.commit.clone(), side);
            continue;
        }
        let (after, outcome) = judge_change(step, index, &before, &mut judge);
        // Setting a policy where there was none changes nothing anyone
        // relied on: not reported.
        if before.policy.is_some() || !matches!(outcome, Outcome::Taken) {
            changes.push(Change {
                step: index,
                before: before.policy.clone(),
                after: step.raw.clone(),
                signers_only: policy_same,
                outcome,
            });
        }
        effective.insert(step.commit.clone(), after);
    }
    (effective, changes)
}

/// What a step that changes the policy leaves in effect, and why: an
/// unusable config keeps the policy before it (nobody's when there was
/// none); a first policy is taken; a change is taken when its commit is
/// inside the policy before it, else refused.
fn judge_change<C: Clone + Eq + Hash + ToString>(
    step: &Step<C>,
    index: usize,
    before: &Effective,
    judge: &mut impl FnMut(usize, &TrustPolicy, Option<&str>) -> Vec<&'static str>,
) -> (Effective, Outcome) {
    let root = || {
        before
            .root
            .clone()
            .or_else(|| Some(step.commit.to_string()))
    };
    let taken = || Effective {
        policy: step.raw.policy().cloned(),
        root: root(),
        signers: step.signers.clone(),
    };
    match (&before.policy, &step.raw) {
        (_, Raw::Unusable(why)) => {
            let kept = if before.policy.is_some() {
                before.clone()
            } else {
                Effective {
                    policy: Some(Effective::nobody()),
                    root: root(),
                    signers: before.signers.clone(),
                }
            };
            (kept, Outcome::Unusable(why.clone()))
        }
        (None, _) => (taken(), Outcome::Taken),
        (Some(policy), _) => {
            let reasons = judge(index, policy, before.signers.as_deref());
            if reasons.is_empty() {
                (taken(), Outcome::Taken)
            } else {
                (before.clone(), Outcome::Outside(reasons))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn team() -> TrustPolicy {
        TrustPolicy {
            authors: vec!["*@team.example".to_owned()],
            signed: false,
        }
    }

    fn wider() -> TrustPolicy {
        TrustPolicy {
            authors: vec!["*@team.example".to_owned(), "*@other.example".to_owned()],
            signed: false,
        }
    }

    /// A step; `changed` is filled by [`linked`].
    fn step(commit: &str, parents: &[&str], raw: Raw) -> Step<String> {
        Step {
            commit: commit.to_owned(),
            parents: parents.iter().map(|p| (*p).to_owned()).collect(),
            raw,
            signers: None,
            changed: true,
        }
    }

    /// A step with a version of the signers file.
    fn signed_step(commit: &str, parents: &[&str], raw: Raw, signers: &str) -> Step<String> {
        Step {
            signers: Some(signers.to_owned()),
            ..step(commit, parents, raw)
        }
    }

    /// Whether each step's config differs from its first parent's (among
    /// the steps before it, `Absent` otherwise), as the adapter compares
    /// blobs.
    fn linked(mut steps: Vec<Step<String>>) -> Vec<Step<String>> {
        for index in 0..steps.len() {
            let first = steps[index].parents.first().cloned();
            let before = first
                .and_then(|first| {
                    steps[..index]
                        .iter()
                        .find(|s| s.commit == first)
                        .map(|s| (s.raw.clone(), s.signers.clone()))
                })
                .unwrap_or((Raw::Absent, None));
            steps[index].changed =
                (steps[index].raw.clone(), steps[index].signers.clone()) != before;
        }
        steps
    }

    /// Judges by the commit's name: those starting with `m` (mallory) are
    /// outside every policy.
    fn by_name(
        steps: &[Step<String>],
    ) -> impl FnMut(usize, &TrustPolicy, Option<&str>) -> Vec<&'static str> {
        let names: Vec<String> = steps.iter().map(|s| s.commit.clone()).collect();
        move |index, _, _| {
            if names[index].starts_with('m') {
                vec!["author-outside-policy"]
            } else {
                vec![]
            }
        }
    }

    fn run(steps: &[Step<String>]) -> (HashMap<String, Effective>, Vec<Change>) {
        let steps = linked(steps.to_vec());
        walk(&steps, |_| Effective::default(), by_name(&steps))
    }

    #[test]
    fn a_merge_that_takes_a_side_without_a_policy_changes_nothing_when_its_author_is_outside() {
        // c0 predates goldfish; a1 sets the policy; m2 merges c0 back and
        // takes its tree (no config).
        let steps = [
            step("c0", &[], Raw::Absent),
            step("a1", &["c0"], Raw::Policy(team())),
            step("m2", &["a1", "c0"], Raw::Absent),
        ];
        let (effective, changes) = run(&steps);
        assert_eq!(effective["m2"].policy, Some(team()));
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].step, 2);
        assert_eq!(
            changes[0].outcome,
            Outcome::Outside(vec!["author-outside-policy"])
        );
    }

    #[test]
    fn a_side_that_set_its_own_policy_is_not_of_the_same_history() {
        // m1 branches from before goldfish and sets a policy of its own;
        // m2 merges it: judged, refused.
        let steps = [
            step("c0", &[], Raw::Absent),
            step("a1", &["c0"], Raw::Policy(team())),
            step("m1", &["c0"], Raw::Policy(wider())),
            step("m2", &["a1", "m1"], Raw::Policy(wider())),
        ];
        let (effective, changes) = run(&steps);
        assert_eq!(effective["m1"].policy, Some(wider()), "nobody before it");
        assert_eq!(effective["m2"].policy, Some(team()));
        assert_eq!(changes.len(), 1);
        assert!(matches!(changes[0].outcome, Outcome::Outside(_)));
    }

    #[test]
    fn a_merge_taking_a_change_made_inside_the_policy_takes_it() {
        // b2 widens the policy on a branch (inside), m3 (outside, say a
        // contributor's merge of main into their branch, fast-forwarded)
        // takes it: of the same history.
        let steps = [
            step("a1", &[], Raw::Policy(team())),
            step("m2", &["a1"], Raw::Absent),
            step("b2", &["a1"], Raw::Policy(wider())),
            step("m3", &["m2", "b2"], Raw::Policy(wider())),
        ];
        let (effective, changes) = run(&steps);
        assert_eq!(
            effective["m2"].policy,
            Some(team()),
            "a deletion from outside"
        );
        assert_eq!(effective["b2"].policy, Some(wider()));
        assert_eq!(effective["m3"].policy, Some(wider()));
        let steps_changed: Vec<usize> = changes.iter().map(|c| c.step).collect();
        assert_eq!(steps_changed, vec![1, 2]);
        assert_eq!(changes[1].outcome, Outcome::Taken);
    }

    #[test]
    fn a_refused_change_stays_refused_under_the_commits_after_it() {
        let steps = [
            step("a1", &[], Raw::Policy(team())),
            step("m2", &["a1"], Raw::Policy(wider())),
            step("a3", &["m2"], Raw::Policy(wider())),
            step("a4", &["a3"], Raw::Policy(team())),
        ];
        let (effective, changes) = run(&steps);
        assert_eq!(effective["a3"].policy, Some(team()));
        assert_eq!(effective["a4"].policy, Some(team()));
        assert_eq!(changes.len(), 1, "{changes:?}");
    }

    #[test]
    fn an_unusable_config_keeps_the_last_good_policy_or_admits_nobody() {
        let steps = [
            step("a1", &[], Raw::Policy(team())),
            step("a2", &["a1"], Raw::Unusable("trust.authors: oops".into())),
        ];
        let (effective, changes) = run(&steps);
        assert_eq!(effective["a2"].policy, Some(team()));
        assert!(matches!(changes[0].outcome, Outcome::Unusable(_)));

        let fresh = [step("a1", &[], Raw::Unusable("larger than 64 KiB".into()))];
        let (effective, changes) = run(&fresh);
        assert_eq!(effective["a1"].policy, Some(Effective::nobody()));
        assert_eq!(changes.len(), 1);
    }

    #[test]
    fn a_parent_outside_the_walk_is_seeded() {
        let steps = [step("m5", &["a4"], Raw::Absent)];
        let seeded = Effective {
            policy: Some(team()),
            root: Some("a1".into()),
            signers: None,
        };
        let (effective, changes) = walk(&steps, |_| seeded.clone(), by_name(&steps));
        assert_eq!(effective["m5"], seeded);
        assert_eq!(changes.len(), 1);
    }

    /// The signers file kept in the repository is part of the policy: a
    /// change by an outsider keeps the version before it, and the next
    /// change is judged against that version.
    #[test]
    fn a_change_of_the_signers_file_is_judged_like_the_policy() {
        let policy = || Raw::Policy(team());
        let steps = linked(vec![
            signed_step("a1", &[], policy(), "keys-1"),
            signed_step("m2", &["a1"], policy(), "keys-with-mallory"),
            signed_step("a3", &["m2"], policy(), "keys-2"),
        ]);
        let mut judged_against = Vec::new();
        let mut by_name = by_name(&steps);
        let (effective, changes) = walk(
            &steps,
            |_| Effective::default(),
            |index, policy, signers| {
                judged_against.push(signers.map(str::to_owned));
                by_name(index, policy, signers)
            },
        );
        assert_eq!(effective["a1"].signers.as_deref(), Some("keys-1"));
        assert_eq!(effective["m2"].signers.as_deref(), Some("keys-1"));
        assert_eq!(effective["a3"].signers.as_deref(), Some("keys-2"));
        assert_eq!(
            judged_against,
            [Some("keys-1".to_owned()), Some("keys-1".to_owned())]
        );
        assert_eq!(changes.len(), 2);
        assert!(changes.iter().all(|change| change.signers_only));
        assert!(matches!(changes[0].outcome, Outcome::Outside(_)));
        assert_eq!(changes[1].outcome, Outcome::Taken);
    }
}
