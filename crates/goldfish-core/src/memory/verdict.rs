//! The trust verdict: whether agents may receive a memory unmarked, and
//! every reason why, from what its line says of itself, the commit that
//! introduced it and the repository's trust policy (`[trust]` of
//! `.goldfish/config`). One place decides: the index applies it when a sync
//! records a memory's provenance (and again to every memory when the policy
//! changes), `goldfish review` applies it to the lines a range of commits
//! adds or edits.

use crate::config::TrustPolicy;

/// The commit that introduced a memory, as the policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin<'a> {
    /// `Name <email>` of the commit's author.
    pub author: &'a str,
    pub author_name: &'a str,
    pub author_email: &'a str,
    /// Its signature's state as git checked it: `good`, `unsigned`,
    /// `unknown-key`, `bad`, `expired`, `revoked`, `unchecked`.
    pub signature: &'a str,
    /// The email (or SSH principal) of who signed a `good` signature.
    pub signer: &'a str,
    /// The commit is a shallow clone's boundary: its parents are missing,
    /// so it may not be the commit that introduced the memory, and who did
    /// is unknown.
    pub shallow: bool,
}

/// What a memory's line says of itself that the verdict weighs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Claim<'a> {
    /// Its `author` field.
    pub author: Option<&'a str>,
    /// Brought in by `goldfish import` (`imported_from`): the author is the
    /// note's, whom its committer vouches for.
    pub imported: bool,
    /// Its text reads as an order to an agent (the `instruction-like` flag).
    pub instruction_like: bool,
}

impl Claim<'_> {
    /// Whether the `author` field names someone other than the author of
    /// the commit: neither its name nor its email nor `Name <email>` (ASCII
    /// case and surrounding blanks ignored). An empty field claims nobody;
    /// an imported note is its committer's word.
    pub fn mismatches(&self, origin: &Origin<'_>) -> bool {
        let Some(claimed) = self.author.map(str::trim) else {
            return false;
        };
        !self.imported
            && !claimed.is_empty()
            && ![origin.author_name, origin.author_email, origin.author]
                .iter()
                .any(|known| known.trim().eq_ignore_ascii_case(claimed))
    }
}

/// A reason that quarantines a memory, as `trust_reasons` spells it.
pub const INSTRUCTION_LIKE: &str = "instruction-like";
pub const AUTHOR_MISMATCH: &str = "author-mismatch";
/// The commit's author name or email reads as an order to an agent.
pub const AUTHOR_INSTRUCTION_LIKE: &str = "author-instruction-like";
pub const AUTHOR_OUTSIDE_POLICY: &str = "author-outside-policy";
pub const SIGNER_OUTSIDE_POLICY: &str = "signer-outside-policy";
/// A line with the id of a memory whose line (another text, still in the
/// log) was committed first: whoever wrote it, it is not that memory.
pub const ID_REUSED: &str = "id-reused";
/// The memory is in a shallow clone's boundary commit: the history that
/// would tell who introduced it is not in this clone (`git fetch
/// --unshallow` brings it).
pub const SHALLOW: &str = "shallow";

/// Why a memory is quarantined, in the order `trust_reasons` lists them;
/// empty when agents may receive it unmarked. `origin` is `None` for a
/// memory not committed yet (the local user's own: only its text can
/// quarantine it); `policy` is `None` when the repository has no `[trust]`
/// section (every author is trusted).
pub fn quarantine(
    claim: &Claim<'_>,
    origin: Option<&Origin<'_>>,
    policy: Option<&TrustPolicy>,
) -> Vec<&'static str> {
    let mut reasons = Vec::new();
    if claim.instruction_like {
        reasons.push(INSTRUCTION_LIKE);
    }
    let Some(origin) = origin else {
        return reasons;
    };
    // The boundary commit claims what its parents held: its author, its
    // signature and the policy say nothing of who wrote the memory.
    if origin.shallow {
        reasons.push(SHALLOW);
        return reasons;
    }
    if claim.mismatches(origin) {
        reasons.push(AUTHOR_MISMATCH);
    }
    // `git config user.name` takes any text, and headers show it: a name
    // that reads as an order is an order, whoever's policy admits the email.
    if super::label::reads_as_order(origin.author_name)
        || super::label::reads_as_order(origin.author_email)
    {
        reasons.push(AUTHOR_INSTRUCTION_LIKE);
    }
    if let Some(policy) = policy {
        reasons.extend(outside(origin, policy));
    }
    reasons
}

/// Why a commit is outside `policy`: its author, and under `signed` its
/// signature and its signer.
fn outside(origin: &Origin<'_>, policy: &TrustPolicy) -> Vec<&'static str> {
    let mut reasons = Vec::new();
    if !policy.admits(origin.author_email) {
        reasons.push(AUTHOR_OUTSIDE_POLICY);
    }
    if policy.signed {
        match origin.signature {
            "good" if !policy.admits(origin.signer) => reasons.push(SIGNER_OUTSIDE_POLICY),
            "good" => {}
            other => reasons.push(signature_reason(other)),
        }
    }
    reasons
}

/// The reason a signature that is not `good` gives under `signed = true`.
fn signature_reason(state: &str) -> &'static str {
    match state {
        "unsigned" => "unsigned",
        "unknown-key" => "signature-unknown-key",
        "bad" => "signature-bad",
        "expired" => "signature-expired",
        "revoked" => "signature-revoked",
        _ => "signature-unchecked",
    }
}

/// Whether a `goldfish trust` line committed by `origin` releases the
/// memory it names: one not committed yet (the local user's own), or
/// committed inside the policy. Without a policy a committed release counts
/// for nothing: anyone could commit one next to the memory it releases.
pub fn releases(origin: Option<&Origin<'_>>, policy: Option<&TrustPolicy>) -> bool {
    match (origin, policy) {
        (None, _) => true,
        (Some(origin), Some(policy)) => !origin.shallow && outside(origin, policy).is_empty(),
        (Some(_), None) => false,
    }
}

/// Whether a tombstone committed by `origin` forgets the memory it names:
/// one not committed yet (the local user's own), any without a policy,
/// and under a policy one committed inside it. A stranger's tombstone hides
/// nothing, as a stranger's `supersedes` does not.
pub fn forgets(origin: Option<&Origin<'_>>, policy: Option<&TrustPolicy>) -> bool {
    match (origin, policy) {
        (None, _) | (Some(_), None) => true,
        (Some(origin), Some(policy)) => !origin.shallow && outside(origin, policy).is_empty(),
    }
}

/// Said of a trusted memory whose commit a teammate inside the policy
/// signed for another (a rebase, a squash merge, a cherry-pick): the
/// signer vouches for it, and is named in its provenance. Not a reason to
/// quarantine: that would quarantine every signed rebase.
pub const SIGNER_NOT_AUTHOR: &str = "signer-not-author";

/// Why a memory that nothing quarantines is trusted: whether it is
/// committed, `Some(signed)` when the repository has a policy (and
/// whether it asks for signatures), and whether its good signature is by
/// someone other than its commit's author. What else the verdict weighed
/// found nothing, so nothing else is needed.
pub fn trusted_because(
    committed: bool,
    policy_signed: Option<bool>,
    signed_by_another: bool,
) -> &'static [&'static str] {
    match (committed, policy_signed) {
        (false, _) => &["uncommitted"],
        (true, None) => &["no-policy"],
        (true, Some(true)) if signed_by_another => {
            &["author-in-policy", "signed-in-policy", SIGNER_NOT_AUTHOR]
        }
        (true, Some(true)) => &["author-in-policy", "signed-in-policy"],
        (true, Some(false)) => &["author-in-policy"],
    }
}

/// Whether a good signature's signer is someone other than the author
/// (`author_email`), emails compared without case.
pub fn signed_by_another(signature: &str, signer: &str, author_email: &str) -> bool {
    signature == "good" && !signer.is_empty() && !signer.eq_ignore_ascii_case(author_email)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin<'a>(email: &'a str, signature: &'a str, signer: &'a str) -> Origin<'a> {
        Origin {
            author: "Ann <ann@example.com>",
            author_name: "Ann",
            author_email: email,
            signature,
            signer,
            shallow: false,
        }
    }

    fn policy(signed: bool) -> TrustPolicy {
        TrustPolicy {
            authors: vec!["*@example.com".to_owned()],
            signed,
        }
    }

    #[test]
    fn uncommitted_memories_are_quarantined_only_for_their_text() {
        let forged = Claim {
            author: Some("Mallory"),
            ..Claim::default()
        };
        assert!(quarantine(&forged, None, Some(&policy(true))).is_empty());
        let order = Claim {
            instruction_like: true,
            ..Claim::default()
        };
        assert_eq!(quarantine(&order, None, None), [INSTRUCTION_LIKE]);
        assert_eq!(trusted_because(false, Some(true), false), ["uncommitted"]);
    }

    #[test]
    fn an_author_field_naming_someone_else_is_a_mismatch_whatever_the_policy() {
        let ann = origin("ann@example.com", "unsigned", "");
        for claimed in [
            "Ann",
            " ann ",
            "ANN@example.com",
            "Ann <ann@example.com>",
            "",
        ] {
            let claim = Claim {
                author: Some(claimed),
                ..Claim::default()
            };
            assert!(quarantine(&claim, Some(&ann), None).is_empty(), "{claimed}");
        }
        let forged = Claim {
            author: Some("Bob"),
            ..Claim::default()
        };
        assert_eq!(quarantine(&forged, Some(&ann), None), [AUTHOR_MISMATCH]);
        let imported = Claim {
            imported: true,
            ..forged
        };
        assert!(quarantine(&imported, Some(&ann), None).is_empty());
    }

    #[test]
    fn the_policy_weighs_author_signature_and_signer() {
        let none = Claim::default();
        let outsider = origin("eve@evil.test", "unsigned", "");
        assert_eq!(
            quarantine(&none, Some(&outsider), Some(&policy(false))),
            [AUTHOR_OUTSIDE_POLICY]
        );
        assert!(quarantine(&none, Some(&outsider), None).is_empty());
        let unsigned = origin("ann@example.com", "unsigned", "");
        assert!(quarantine(&none, Some(&unsigned), Some(&policy(false))).is_empty());
        assert_eq!(
            quarantine(&none, Some(&unsigned), Some(&policy(true))),
            ["unsigned"]
        );
        let unknown = origin("ann@example.com", "unknown-key", "");
        assert_eq!(
            quarantine(&none, Some(&unknown), Some(&policy(true))),
            ["signature-unknown-key"]
        );
        let good_outsider = origin("ann@example.com", "good", "eve@evil.test");
        assert_eq!(
            quarantine(&none, Some(&good_outsider), Some(&policy(true))),
            [SIGNER_OUTSIDE_POLICY]
        );
        let good = origin("ann@example.com", "good", "ann@example.com");
        assert!(quarantine(&none, Some(&good), Some(&policy(true))).is_empty());
        assert_eq!(
            trusted_because(true, Some(true), false),
            ["author-in-policy", "signed-in-policy"]
        );
        // Signed by a teammate for another: trusted, and said.
        assert!(signed_by_another(
            "good",
            "bob@example.com",
            "Ann@Example.com"
        ));
        assert!(!signed_by_another(
            "good",
            "ann@example.com",
            "Ann@Example.com"
        ));
        assert!(!signed_by_another(
            "unknown-key",
            "bob@example.com",
            "ann@example.com"
        ));
        assert_eq!(
            trusted_because(true, Some(true), true),
            ["author-in-policy", "signed-in-policy", SIGNER_NOT_AUTHOR]
        );
    }

    #[test]
    fn a_shallow_boundary_knows_no_author() {
        let boundary = Origin {
            shallow: true,
            ..origin("ann@example.com", "good", "ann@example.com")
        };
        let none = Claim::default();
        assert_eq!(quarantine(&none, Some(&boundary), None), [SHALLOW]);
        assert_eq!(
            quarantine(&none, Some(&boundary), Some(&policy(true))),
            [SHALLOW]
        );
        // Its `author` field is not checked against a commit that may not
        // be its own; its text still is.
        let forged = Claim {
            author: Some("Bob"),
            instruction_like: true,
            ..Claim::default()
        };
        assert_eq!(
            quarantine(&forged, Some(&boundary), None),
            [INSTRUCTION_LIKE, SHALLOW]
        );
        assert!(!releases(Some(&boundary), Some(&policy(false))));
        assert!(!forgets(Some(&boundary), Some(&policy(false))));
    }

    #[test]
    fn a_release_counts_only_from_inside_a_policy() {
        let ann = origin("ann@example.com", "unsigned", "");
        let eve = origin("eve@evil.test", "unsigned", "");
        assert!(releases(None, None));
        assert!(!releases(Some(&ann), None));
        assert!(releases(Some(&ann), Some(&policy(false))));
        assert!(!releases(Some(&eve), Some(&policy(false))));
        assert!(!releases(Some(&ann), Some(&policy(true))));
    }
}
