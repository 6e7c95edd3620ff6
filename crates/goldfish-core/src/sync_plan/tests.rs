use super::*;

fn memory(id: &str, content: &str) -> Memory {
    Memory {
        id: id.to_owned(),
        timestamp: "2026-11-20T10:00:00Z".to_owned(),
        kind: "decision".to_owned(),
        content: content.to_owned(),
        ..Memory::default()
    }
}

fn line(memory: &Memory) -> String {
    Entry::Memory(memory.clone()).to_line()
}

fn tombstone(id: &str, forgets: &str) -> String {
    Entry::Tombstone(Tombstone {
        id: id.to_owned(),
        timestamp: "2026-11-20T11:00:00Z".to_owned(),
        forgets: forgets.to_owned(),
        ..Tombstone::default()
    })
    .to_line()
}

/// A file whose blob changed, with these lines.
fn changed(blob: &str, lines: &[String]) -> FileState {
    FileState::Listed {
        blob: blob.to_owned(),
        stat: None,
        racy: false,
        content: Some(Content::parse(lines.join("\n").as_bytes())),
    }
}

/// A file whose blob is the recorded one, not read.
fn unchanged(blob: &str) -> FileState {
    FileState::Listed {
        blob: blob.to_owned(),
        stat: None,
        racy: false,
        content: None,
    }
}

fn recorded_file(blob: &str) -> RecordedFile {
    RecordedFile {
        blob: blob.to_owned(),
        stat: None,
        racy: false,
    }
}

fn row(file: &str, memory: &Memory, line: i64) -> Row {
    Row {
        flags: String::new(),
        file: file.to_owned(),
        record_hash: record_hash(&super::tests::line(memory))
            .to_hex()
            .to_string(),
        line,
    }
}

fn found(files: Vec<(&str, FileState)>, recorded: Recorded) -> Found {
    Found {
        files: files
            .into_iter()
            .map(|(name, state)| (name.to_owned(), state))
            .collect(),
        recorded,
        now: "2026-11-21T09:30:00Z".parse().unwrap(),
        kinds: None,
    }
}

fn ready(found: &Found) -> SyncPlan<'_> {
    match plan(found) {
        Planned::Ready(plan) => plan,
        Planned::Read(names) => panic!("the plan asks for {names:?}"),
    }
}

/// The rows a plan writes, in a form a test can spell.
fn rows(plan: &SyncPlan<'_>) -> Vec<String> {
    plan.rows
        .iter()
        .map(|change| match change {
            RowChange::Write {
                file, line, memory, ..
            } => format!("write {} {file}:{line} {}", memory.id, memory.content),
            RowChange::MoveLine { id, line } => format!("move {id} to line {line}"),
            RowChange::Remove { id } => format!("remove {id}"),
        })
        .collect()
}

#[test]
fn a_changed_file_is_diffed_by_id() {
    let kept = memory("A", "kept");
    let edited = memory("B", "edited");
    let gone = memory("C", "gone");
    let added = memory("D", "added");
    let recorded = Recorded {
        files: HashMap::from([("a.jsonl".to_owned(), recorded_file("old"))]),
        rows: HashMap::from([
            ("A".to_owned(), row("a.jsonl", &kept, 1)),
            ("B".to_owned(), row("a.jsonl", &memory("B", "before"), 2)),
            ("C".to_owned(), row("a.jsonl", &gone, 3)),
        ]),
        duplicates: HashMap::from([("C".to_owned(), Vec::new())]),
    };
    let found = found(
        vec![(
            "a.jsonl",
            changed("new", &[line(&added), line(&kept), line(&edited)]),
        )],
        recorded,
    );
    let plan = ready(&found);
    assert_eq!(
        rows(&plan),
        [
            "write D a.jsonl:1 added",
            "move A to line 2",
            "write B a.jsonl:3 edited",
            "remove C",
        ]
    );
    assert_eq!(
        (
            plan.memories_added,
            plan.memories_updated,
            plan.memories_removed
        ),
        (1, 1, 1)
    );
    assert_eq!(plan.files_read.len(), 1);
    assert_eq!(
        plan.files_recorded,
        [FileRecord {
            name: "a.jsonl",
            blob: "new",
            stat: None,
            racy: false
        }]
    );
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
}

#[test]
fn an_unchanged_blob_is_not_read_and_new_stat_data_is_recorded() {
    let stat = Stat {
        size: 10,
        mtime_ns: 1,
        ctime_ns: 1,
        inode: 7,
    };
    let recorded = Recorded {
        files: HashMap::from([("a.jsonl".to_owned(), recorded_file("same"))]),
        ..Recorded::default()
    };
    let touched = FileState::Listed {
        blob: "same".to_owned(),
        stat: Some(stat),
        racy: false,
        content: None,
    };
    let found = found(vec![("a.jsonl", touched)], recorded.clone());
    let plan = ready(&found);
    assert!(plan.files_read.is_empty() && plan.rows.is_empty());
    assert_eq!(plan.files_recorded[0].stat, Some(stat));

    let found = super::tests::found(vec![("a.jsonl", unchanged("same"))], recorded);
    assert!(!ready(&found).writes(), "nothing changed, nothing written");
}

#[test]
fn a_file_that_left_the_log_takes_its_rows_and_the_next_file_takes_its_ids() {
    let first = memory("X", "in a");
    let second = memory("X", "in b");
    let recorded = Recorded {
        files: HashMap::from([
            ("a.jsonl".to_owned(), recorded_file("a")),
            ("b.jsonl".to_owned(), recorded_file("b")),
        ]),
        rows: HashMap::from([("X".to_owned(), row("a.jsonl", &first, 1))]),
        duplicates: HashMap::from([(
            "X".to_owned(),
            vec![Waiting::parse(Duplicate {
                id: "X".to_owned(),
                file: "b.jsonl".to_owned(),
                line: 4,
                record: line(&second),
            })],
        )]),
    };
    let found = found(vec![("b.jsonl", unchanged("b"))], recorded);
    let plan = ready(&found);
    assert_eq!(plan.files_removed, ["a.jsonl"]);
    assert_eq!(rows(&plan), ["remove X", "write X b.jsonl:4 in b"]);
    assert_eq!(plan.duplicates_taken, [("X", "b.jsonl")]);
    assert_eq!(plan.memories_removed, 1);
    assert!(plan.files_read.is_empty() && plan.files_recorded.is_empty());
    assert!(plan.writes());
}

#[test]
fn an_id_in_two_files_is_indexed_from_the_first_by_name() {
    let first = memory("X", "in a");
    let second = memory("X", "in b");
    let found = found(
        vec![
            ("a.jsonl", changed("a", &[line(&first)])),
            (
                "b.jsonl",
                changed("b", &[line(&memory("Y", "y")), line(&second)]),
            ),
        ],
        Recorded::default(),
    );
    let plan = ready(&found);
    assert_eq!(
        rows(&plan),
        ["write X a.jsonl:1 in a", "write Y b.jsonl:1 y"]
    );
    assert_eq!(plan.memories_added, 2);
    assert_eq!(
        plan.files_read[1].duplicates,
        [Duplicate {
            id: "X".to_owned(),
            file: "b.jsonl".to_owned(),
            line: 2,
            record: line(&second),
        }]
    );
    assert_eq!(
        plan.problems,
        [FileProblem::line(
            "b.jsonl",
            2,
            "id X is already indexed from another file (a.jsonl); skipped".to_owned()
        )]
    );
}

/// A row a retake moved to a later file (its line was committed first)
/// goes back to the first file by name once that line changes, as a
/// rebuild places it; the changed line waits.
#[test]
fn a_retaken_row_whose_line_changes_goes_back_to_the_first_file() {
    let first = memory("X", "in a, not committed");
    let committed = memory("X", "in b, committed first");
    let edited = memory("X", "in b, edited");
    let recorded = Recorded {
        files: HashMap::from([
            ("a.jsonl".to_owned(), recorded_file("a")),
            ("b.jsonl".to_owned(), recorded_file("b")),
        ]),
        rows: HashMap::from([("X".to_owned(), row("b.jsonl", &committed, 1))]),
        duplicates: HashMap::from([(
            "X".to_owned(),
            vec![Waiting::parse(Duplicate {
                id: "X".to_owned(),
                file: "a.jsonl".to_owned(),
                line: 1,
                record: line(&first),
            })],
        )]),
    };
    let found = found(
        vec![
            ("a.jsonl", unchanged("a")),
            ("b.jsonl", changed("b2", &[line(&edited)])),
        ],
        recorded,
    );
    let plan = ready(&found);
    assert_eq!(
        rows(&plan),
        ["remove X", "write X a.jsonl:1 in a, not committed"]
    );
    assert_eq!(plan.duplicates_taken, [("X", "a.jsonl")]);
    assert_eq!(plan.memories_updated, 1);
    assert_eq!(
        plan.files_read[0].duplicates,
        [Duplicate {
            id: "X".to_owned(),
            file: "b.jsonl".to_owned(),
            line: 1,
            record: line(&edited),
        }]
    );
}

#[test]
fn a_file_that_takes_an_id_over_has_the_later_file_read_again() {
    let first = memory("X", "in a");
    let second = memory("X", "in b");
    let recorded = Recorded {
        files: HashMap::from([("b.jsonl".to_owned(), recorded_file("b"))]),
        rows: HashMap::from([("X".to_owned(), row("b.jsonl", &second, 1))]),
        ..Recorded::default()
    };
    let mut found = found(
        vec![
            ("a.jsonl", changed("a", &[line(&first)])),
            ("b.jsonl", unchanged("b")),
        ],
        recorded,
    );
    match plan(&found) {
        Planned::Read(names) => assert_eq!(names, BTreeSet::from(["b.jsonl".to_owned()])),
        Planned::Ready(plan) => panic!("planned without b.jsonl's lines: {plan:?}"),
    }
    found
        .files
        .insert("b.jsonl".to_owned(), changed("b", &[line(&second)]));
    let plan = ready(&found);
    assert_eq!(rows(&plan), ["write X a.jsonl:1 in a"]);
    assert_eq!((plan.memories_added, plan.memories_updated), (0, 1));
    let read: Vec<&str> = plan.files_read.iter().map(|file| file.name).collect();
    assert_eq!(read, ["a.jsonl", "b.jsonl"]);
    assert_eq!(plan.files_read[1].duplicates[0].record, line(&second));
}

#[test]
fn tombstones_and_releases_are_kept_per_file_and_index_no_row() {
    let kept = memory("A", "kept");
    let release = Entry::Release(Release {
        id: "R".to_owned(),
        timestamp: "2026-11-20T12:00:00Z".to_owned(),
        releases: "A".to_owned(),
        ..Release::default()
    })
    .to_line();
    let found = found(
        vec![(
            "a.jsonl",
            changed("a", &[line(&kept), tombstone("T", "A"), release]),
        )],
        Recorded::default(),
    );
    let plan = ready(&found);
    assert_eq!(rows(&plan), ["write A a.jsonl:1 kept"]);
    let read = &plan.files_read[0];
    let forgets: Vec<(&str, &str)> = read
        .tombstones
        .iter()
        .map(|t| (t.id.as_str(), t.forgets.as_str()))
        .collect();
    assert_eq!(forgets, [("T", "A")]);
    assert_eq!(read.releases[0].releases, "A");
}

#[test]
fn bad_lines_and_suspect_records_are_problems_with_their_line() {
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(line(&memory("A", "first")).as_bytes());
    bytes.extend_from_slice(b"\nnot json\n");
    for again in ["again", "once more"] {
        bytes.extend_from_slice(line(&memory("A", again)).as_bytes());
        bytes.push(b'\n');
    }
    let mut suspect = memory("S", "the deploy password is hunter2!");
    suspect.timestamp = "yesterday".to_owned();
    bytes.extend_from_slice(line(&suspect).as_bytes());
    let state = FileState::Listed {
        blob: "a".to_owned(),
        stat: None,
        racy: false,
        content: Some(Content::parse(&bytes)),
    };
    let found = found(vec![("a.jsonl", state)], Recorded::default());
    let plan = ready(&found);
    let problems: Vec<(Option<i64>, &str)> = plan
        .problems
        .iter()
        .map(|problem| (problem.line, problem.reason.as_str()))
        .collect();
    assert_eq!(problems.len(), 5, "{problems:#?}");
    assert_eq!(problems[0].0, Some(1));
    assert!(problems[0].1.contains("byte order mark"), "{problems:?}");
    assert_eq!(problems[1].0, Some(2));
    assert!(problems[1].1.starts_with("not a memory record"));
    assert_eq!(
        problems[2],
        (Some(4), "id A appears twice in this file; skipped")
    );
    assert!(problems[3].1.contains("flagged `secret`"), "{problems:?}");
    assert!(
        problems[4].1.contains("flagged `bad-timestamp`"),
        "{problems:?}"
    );
    assert!(problems[3..].iter().all(|(line, _)| *line == Some(5)));
    assert_eq!(
        rows(&plan),
        [
            "write A a.jsonl:3 again",
            "write S a.jsonl:5 the deploy password is hunter2!"
        ]
    );
    let RowChange::Write { flags, .. } = &plan.rows[1] else {
        panic!("{:?}", plan.rows)
    };
    assert_eq!(flags, "bad-timestamp,secret");
}

#[test]
fn a_file_refused_or_vanished_is_left_as_recorded() {
    let recorded = Recorded {
        files: HashMap::from([
            ("a.jsonl".to_owned(), recorded_file("a")),
            ("b.jsonl".to_owned(), recorded_file("b")),
        ]),
        ..Recorded::default()
    };
    let found = found(
        vec![
            ("a.jsonl", FileState::Refused("is a link".to_owned())),
            ("b.jsonl", FileState::Vanished),
        ],
        recorded,
    );
    let plan = ready(&found);
    assert!(!plan.writes());
    assert_eq!(
        plan.problems,
        [FileProblem {
            file: "a.jsonl".to_owned(),
            line: None,
            reason: "is a link".to_owned()
        }]
    );
}

/// Issue 59: a record the index holds unchanged and found clean is not
/// scanned again when its file is read (the scans are pure functions of
/// the record); one it flagged is, and so is a changed one.
#[test]
fn an_unchanged_clean_record_is_not_scanned_again() {
    let secret = "the deploy password is hunter2!";
    let kept = memory("K", secret);
    let flagged = memory("F", secret);
    let edited = memory("E", secret);
    let mut flagged_row = row("a.jsonl", &flagged, 2);
    flagged_row.flags = "secret".to_owned();
    let recorded = Recorded {
        files: HashMap::from([("a.jsonl".to_owned(), recorded_file("a"))]),
        rows: HashMap::from([
            // Recorded clean (say, by a build whose rules missed it).
            ("K".to_owned(), row("a.jsonl", &kept, 1)),
            ("F".to_owned(), flagged_row),
            (
                "E".to_owned(),
                row("a.jsonl", &memory("E", "an older text"), 3),
            ),
        ]),
        ..Recorded::default()
    };
    let found = found(
        vec![(
            "a.jsonl",
            changed("a2", &[line(&kept), line(&flagged), line(&edited)]),
        )],
        recorded,
    );
    let plan = ready(&found);
    let flagged_lines: Vec<Option<i64>> = plan
        .problems
        .iter()
        .filter(|problem| problem.reason.contains("flagged `secret`"))
        .map(|problem| problem.line)
        .collect();
    assert_eq!(flagged_lines, [Some(2), Some(3)], "{:?}", plan.problems);
    assert_eq!(rows(&plan), [format!("write E a.jsonl:3 {secret}")]);
}
