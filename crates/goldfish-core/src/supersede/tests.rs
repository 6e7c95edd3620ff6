use super::*;

#[test]
fn a_newer_result_that_says_what_it_changes_moves_above_a_less_similar_older_one() {
    let files: Vec<String> = Vec::new();
    let memo = |content| Memo {
        kind: "decision",
        content,
        files: &files,
        spans: &[],
    };
    let older = Ranked {
        memo: memo("Deploys are blue/green: two Helm releases, and make flip switches traffic"),
        timestamp: "2026-01-01T00:00:00Z",
        trusted: true,
    };
    let reason = Ranked {
        memo: memo(
            "Deploy strategy changes from blue/green to an Argo Rollouts canary, with an analysis that aborts on errors",
        ),
        timestamp: "2026-02-01T00:00:00Z",
        trusted: true,
    };
    // 0.6 similar and much it does not restate: not a link, but it says
    // it changes what the older says.
    let (order, updates) = newer_first(&[older, reason], |_, _| Some(0.6));
    assert_eq!(order, vec![1, 0]);
    assert!(
        updates[0]
            .why
            .differences
            .iter()
            .any(|d| d.explain() == "change blue/green → an Argo Rollouts canary"),
        "{:?}",
        updates[0].why.differences
    );
    // Under the asking threshold, or with no change said, it stays.
    assert_eq!(
        newer_first(&[older, reason], |_, _| Some(0.5)).0,
        vec![0, 1]
    );
    let other = Ranked {
        memo: memo("Deploy previews run on Argo Rollouts with an analysis that aborts on errors"),
        ..reason
    };
    assert_eq!(newer_first(&[older, other], |_, _| Some(0.6)).0, vec![0, 1]);
}

#[test]
fn a_moving_result_never_passes_a_newer_one() {
    let files: Vec<String> = Vec::new();
    let memo = |content| Memo {
        kind: "decision",
        content,
        files: &files,
        spans: &[],
    };
    let at = |content, timestamp| Ranked {
        memo: memo(content),
        timestamp,
        trusted: true,
    };
    // The oldest first, then the newest, then the middle one, which
    // updates the oldest but must not pass the newest.
    let results = [
        at("The API pool holds 20 connections", "2026-01-01T00:00:00Z"),
        at(
            "PgBouncer now sits in front of the database",
            "2026-03-01T00:00:00Z",
        ),
        at("The API pool holds 28 connections", "2026-02-01T00:00:00Z"),
    ];
    let (order, updates) = newer_first(&results, |_, _| Some(0.9));
    assert_eq!((order, updates.len()), (vec![0, 1, 2], 0));
}

#[test]
fn a_newer_result_that_updates_an_older_one_moves_above_it() {
    let files: Vec<String> = Vec::new();
    let memo = |content| Memo {
        kind: "decision",
        content,
        files: &files,
        spans: &[],
    };
    let results = [
        Ranked {
            memo: memo("The API pool holds 20 connections"),
            timestamp: "2026-01-01T00:00:00Z",
            trusted: true,
        },
        Ranked {
            memo: memo("Deploys go out on Tuesdays"),
            timestamp: "2026-02-01T00:00:00Z",
            trusted: true,
        },
        Ranked {
            memo: memo("The API pool holds 50 connections"),
            timestamp: "2026-03-01T00:00:00Z",
            trusted: true,
        },
        Ranked {
            memo: memo("The API pool holds 80 connections"),
            timestamp: "2026-04-01T00:00:00Z",
            trusted: false,
        },
    ];
    // The pool memories are close to each other, the deploy one to none.
    let pool = [0, 2, 3];
    let cosine = |i: usize, j: usize| {
        Some(if pool.contains(&i) && pool.contains(&j) {
            0.9
        } else {
            0.1
        })
    };
    let (order, updates) = newer_first(&results, cosine);
    assert_eq!(
        order,
        vec![2, 0, 1, 3],
        "the newer pool size first; an untrusted one stays"
    );
    assert_eq!(updates.len(), 1);
    assert_eq!((updates[0].newer, updates[0].older), (2, 0));
    assert_eq!(updates[0].why.differences[0].explain(), "number 20 → 50");
    // A value changed twice: newest, then the middle one, then the oldest.
    let twice = [results[0], results[2], {
        let mut third = results[3];
        third.trusted = true;
        third
    }];
    let (order, updates) = newer_first(&twice, |_, _| Some(0.9));
    assert_eq!(order, vec![2, 1, 0]);
    assert_eq!(updates.len(), 2);
    // An older result ranked below a newer one stays where it is.
    let (order, updates) = newer_first(&[results[2], results[0]], |_, _| Some(0.9));
    assert_eq!((order, updates.len()), (vec![0, 1], 0));
    // Without vectors nothing moves.
    assert_eq!(newer_first(&results, |_, _| None).0, vec![0, 1, 2, 3]);
}

fn kinds(older: &str, newer: &str) -> Vec<FactKind> {
    let mut kinds: Vec<FactKind> = differences(older, newer).iter().map(|d| d.kind).collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

fn explained(older: &str, newer: &str) -> Vec<String> {
    differences(older, newer)
        .iter()
        .map(Difference::explain)
        .collect()
}

#[test]
fn a_changed_number_is_a_difference_and_the_same_number_spelled_otherwise_is_not() {
    assert_eq!(
        explained(
            "The pool size is 20 per instance",
            "The pool size is 50 per instance"
        ),
        ["number 20 → 50"]
    );
    assert_eq!(
        explained(
            "The gateway timeout is 30 seconds",
            "The gateway timeout is 1 minute"
        ),
        ["number 30 seconds → 1 minute"]
    );
    for (older, newer) in [
        ("Retries three times", "Retries 3 times"),
        ("Cached for 60 seconds", "cached for a minute"),
        (
            "Sessions expire after 30 minutes",
            "Sessions expire after half an hour",
        ),
        (
            "Uploads are capped at 10 MB",
            "Uploads are capped at 10 megabytes",
        ),
        ("Run the dev server on port 3000", "open localhost:3000"),
        (
            "The backup runs at 02:00 UTC",
            "At 02:00 UTC the backup runs",
        ),
    ] {
        assert_eq!(differences(older, newer), [], "{older} / {newer}");
    }
    // Quantities of different kinds are not compared.
    assert_eq!(
        differences(
            "Pool of 20 connections",
            "Idle connections close after 10 minutes"
        ),
        []
    );
    assert_eq!(
        kinds("The backup runs at 02:00", "The backup runs at 04:00"),
        [FactKind::Number]
    );
    assert_eq!(
        kinds(
            "My daughter is in third grade",
            "My daughter is in fourth grade now"
        ),
        [FactKind::Number]
    );
}

#[test]
fn a_changed_version_is_a_version_difference() {
    assert_eq!(
        explained("Depends on stripe-go v74", "Upgraded to stripe-go v76"),
        ["version v74 → v76", "change `upgraded` only in the newer"]
    );
    assert_eq!(
        explained(
            "The toolchain is pinned to 1.78.0",
            "The toolchain is pinned to 1.82.0"
        ),
        ["version 1.78.0 → 1.82.0"]
    );
    assert_eq!(
        explained("We pin Node 20 in .nvmrc", "We pin Node 22 in .nvmrc"),
        ["version 20 → 22"]
    );
    assert_eq!(
        differences("tonic 0.10 in Cargo.toml", "Cargo.toml has tonic 0.10"),
        []
    );
}

#[test]
fn a_name_only_each_side_says_is_a_difference() {
    assert_eq!(
        explained("Logs are shipped to Loki", "Logs are shipped to Datadog"),
        ["name `Loki` → `Datadog`"]
    );
    assert_eq!(
        explained(
            "Session cookies are SameSite=Lax",
            "Session cookies are SameSite=Strict"
        ),
        ["name `SameSite=Lax` → `SameSite=Strict`"]
    );
    assert_eq!(
        kinds(
            "The primary database is in us-east-1",
            "The primary database is in eu-west-1"
        ),
        [FactKind::Name]
    );
    // A name the other text mentions, in any case, is no difference; a
    // name added next to the same ones is no change either.
    assert_eq!(
        differences(
            "We use Postgres for billing",
            "Billing data lives in postgres"
        ),
        []
    );
    assert_eq!(
        differences("I live in Denver", "I'm based in Denver, Colorado"),
        []
    );
}

#[test]
fn a_negation_on_one_side_only_is_a_difference() {
    assert_eq!(
        explained("We do not ship Windows builds", "We ship Windows builds"),
        ["negation `not` only in the older"]
    );
    assert_eq!(
        explained(
            "The flag is enabled for all tenants",
            "The flag is disabled for all tenants"
        ),
        ["negation `disabled` only in the newer"]
    );
    assert_eq!(
        kinds(
            "The CLI supports Windows",
            "The CLI doesn't support Windows"
        ),
        [FactKind::Negation]
    );
    assert_eq!(
        differences("Never log tokens", "Tokens are never logged"),
        []
    );
}

#[test]
fn words_of_change_in_the_newer_text_are_a_difference() {
    assert_eq!(
        explained(
            "Feature flags are cached",
            "Feature flags are no longer cached"
        ),
        [
            "negation `no` only in the newer",
            "change `no longer` only in the newer"
        ]
    );
    assert_eq!(
        explained(
            "Thumbnails use ImageMagick",
            "Thumbnails use libvips instead of ImageMagick"
        ),
        ["change `instead of` only in the newer"]
    );
    assert_eq!(
        explained(
            "Sessions are stored in Redis",
            "Sessions moved from Redis to Postgres"
        ),
        ["change Redis → Postgres"]
    );
    assert_eq!(
        explained(
            "I live in Denver",
            "I moved from Denver to Austin last month"
        ),
        ["change Denver → Austin last month"]
    );
    assert_eq!(
        explained(
            "Use Jest for the frontend unit tests",
            "Switched the frontend unit tests from Jest to Vitest"
        ),
        ["change Jest → Vitest"]
    );
    // The same words on both sides say no change.
    assert_eq!(
        differences(
            "We switched to Vitest last year",
            "Last year we switched to Vitest"
        ),
        []
    );
    // `from` with what the older never mentioned is no change of it.
    assert_eq!(
        kinds(
            "Staging is reset every Sunday",
            "Staging is restored from a snapshot to save time"
        ),
        []
    );
}

fn memo<'a>(kind: &'a str, content: &'a str, files: &'a [String]) -> Memo<'a> {
    Memo {
        kind,
        content,
        files,
        spans: &[],
    }
}

#[test]
fn capture_links_a_restated_update_of_what_capture_wrote_and_nothing_else() {
    let none: Vec<String> = Vec::new();
    let older = memo("decision", "The pool size is 20 in the API", &none);
    let newer = memo("decision", "The pool size is 50 in the API", &none);
    let close = judge(older, newer, 0.95, ASK).unwrap();
    let captured = Some("capture:rules");
    assert_eq!(capture_links(&close, "decision", captured, false), Ok(()));
    let far = judge(older, newer, LINK - 0.01, ASK).unwrap();
    assert_eq!(
        capture_links(&far, "decision", captured, false),
        Err("under the link threshold")
    );
    let elsewhere = judge(
        older,
        memo("decision", "The pool size is 50 in the worker", &none),
        0.95,
        ASK,
    )
    .unwrap();
    assert!(capture_links(&elsewhere, "decision", captured, false).is_err());
    assert!(capture_links(&close, "checkpoint", captured, false).is_err());
    for stored_by_hand in [None, Some("agent"), Some("user")] {
        assert_eq!(
            capture_links(&close, "decision", stored_by_hand, false),
            Err("capture replaces only what capture wrote")
        );
    }
    assert!(capture_links(&close, "decision", captured, true).is_err());
}

#[test]
fn a_candidate_has_the_type_the_threshold_a_shared_file_and_a_difference() {
    let none: Vec<String> = Vec::new();
    let pool = vec!["src/db/pool.rs".to_owned()];
    let mail = vec!["src/mail.rs".to_owned()];
    let older = memo("decision", "The pool size is 20", &pool);
    let newer = memo("decision", "The pool size is 50", &pool);
    let found = judge(older, newer, 0.9, ASK).expect("a candidate");
    assert_eq!(found.shared_files, pool);
    assert_eq!(
        found.explain(),
        "0.90 similar, same type, shared files src/db/pool.rs, number 20 → 50"
    );
    assert_eq!(
        serde_json::to_value(&found).unwrap()["differences"][0],
        serde_json::json!({"kind": "number", "older": "20", "newer": "50"})
    );
    // Another type, under the threshold, other files, no difference.
    assert!(
        judge(
            older,
            memo("insight", "The pool size is 50", &pool),
            0.9,
            ASK
        )
        .is_none()
    );
    assert!(judge(older, newer, ASK - 0.01, ASK).is_none());
    assert!(
        judge(
            older,
            memo("decision", "The pool size is 50", &mail),
            0.9,
            ASK
        )
        .is_none()
    );
    assert!(
        judge(
            older,
            memo("decision", "The pool size is 20 still", &pool),
            0.9,
            ASK
        )
        .is_none()
    );
    // One side naming no files: the meaning decides.
    assert!(
        judge(
            older,
            memo("decision", "The pool size is 50", &none),
            0.9,
            ASK
        )
        .is_some()
    );
}

#[test]
fn code_in_a_memory_is_read_as_the_names_it_is_made_of() {
    // A call is cut at its brackets, commas and quotes; each name is shown
    // as written, as code; `None` in code negates nothing.
    assert_eq!(
        explained(
            "Fixed `list(sliced('abcdefg', 3))` raising when strict=True: the last slice abcdef is kept",
            "Fixed `windowed(seq, 0)` returning `[()]`: it now yields `None` for an empty window",
        ),
        [
            "number 3 → 0",
            "name `list`, `sliced`, `abcdefg`, `strict=True` → `windowed`, `seq`, `None`"
        ]
    );
    assert_eq!(
        explained(
            "foo() in src/a.rs returned Err(Timeout) after 3 tries",
            "bar() in src/a.rs returned Ok(None) after 3 tries"
        ),
        ["name `foo`, `Err`, `Timeout` → `bar`, `Ok`, `None`"]
    );
    // A long list is cut.
    assert_eq!(
        explained("Uses `a1`, `b1`, `c1`, `d1`, `e1` and `f1`", "Uses `g1`"),
        ["name `a1`, `b1`, `c1`, `d1`, 2 more → `g1`"]
    );
    // Words spread over a code span with spaces are code too.
    assert_eq!(
        kinds("Call `if x is not None` first", "Call `if x is None` first"),
        []
    );
}
