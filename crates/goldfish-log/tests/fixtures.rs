//! Golden-file tests: every directory under `fixtures/merge/` (at the
//! repository root) is one merge case.
//!
//! A case holds `base.jsonl`, `ours.jsonl`, `theirs.jsonl` and
//! `expected.jsonl` (the exact bytes the merge must produce), and, when the
//! merge reports something, `notices.txt`: the expected `Notice` Display lines,
//! one per line, in order. A case without `notices.txt` must merge silently.
//!
//! Each case is merged twice, the second time with ours and theirs swapped;
//! both must give the expected bytes. Notices name a side and a line, so they
//! are compared exactly for the given order only; the swapped merge must just
//! agree on whether there is anything to report.
//!
//! To regenerate the expected files after an intended change, run with
//! `GOLDFISH_BLESS_FIXTURES=1`, then read every changed file before committing.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use goldfish_log::merge::merge;

const INPUTS: [&str; 3] = ["base.jsonl", "ours.jsonl", "theirs.jsonl"];
const EXPECTED: &str = "expected.jsonl";
const NOTICES: &str = "notices.txt";
const BLESS_VAR: &str = "GOLDFISH_BLESS_FIXTURES";

struct Case {
    name: String,
    base: Vec<u8>,
    ours: Vec<u8>,
    theirs: Vec<u8>,
    expected: Vec<u8>,
    /// `None` when the case has no `notices.txt`.
    notices: Option<Vec<String>>,
}

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/merge")
}

fn case_dirs(root: &Path) -> Vec<PathBuf> {
    let entries = fs::read_dir(root)
        .unwrap_or_else(|err| panic!("cannot list fixtures in {}: {err}", root.display()));
    let mut dirs: Vec<PathBuf> = entries
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn read_required(dir: &Path, file: &str) -> Result<Vec<u8>, String> {
    let path = dir.join(file);
    fs::read(&path).map_err(|err| format!("missing or unreadable {}: {err}", path.display()))
}

fn load_case(dir: &Path) -> Result<Case, String> {
    let name = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let [base, ours, theirs] = INPUTS.map(|file| read_required(dir, file));
    let expected = read_required(dir, EXPECTED);
    let notices = match fs::read_to_string(dir.join(NOTICES)) {
        Ok(text) => Some(text.lines().map(str::to_owned).collect()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => return Err(format!("unreadable {}: {err}", dir.join(NOTICES).display())),
    };
    Ok(Case {
        name,
        base: base?,
        ours: ours?,
        theirs: theirs?,
        expected: expected?,
        notices,
    })
}

/// Everything wrong with one case, or `None` if it passes.
fn check_case(case: &Case) -> Option<String> {
    let mut report = String::new();

    let merged = merge(&case.base, &case.ours, &case.theirs);
    if merged.bytes != case.expected {
        let _ = writeln!(
            report,
            "merge(base, ours, theirs) differs from {EXPECTED} (- expected, + actual):\n{}",
            line_diff(&case.expected, &merged.bytes)
        );
    }
    let swapped = merge(&case.base, &case.theirs, &case.ours);
    if swapped.bytes != case.expected {
        let _ = writeln!(
            report,
            "merge(base, theirs, ours) differs from {EXPECTED} (- expected, + actual):\n{}",
            line_diff(&case.expected, &swapped.bytes)
        );
    }

    let actual: Vec<String> = merged.notices.iter().map(ToString::to_string).collect();
    match &case.notices {
        None if !actual.is_empty() => {
            let _ = writeln!(
                report,
                "the merge reported notices but the case has no {NOTICES}:\n{}",
                indent(&actual)
            );
        }
        Some(expected) if expected.is_empty() => {
            let _ = writeln!(
                report,
                "{NOTICES} is empty; delete it for a case that reports nothing"
            );
        }
        Some(expected) if *expected != actual => {
            let _ = writeln!(
                report,
                "notices differ from {NOTICES}:\nexpected:\n{}actual:\n{}",
                indent(expected),
                indent(&actual)
            );
        }
        _ => {}
    }
    if merged.notices.is_empty() != swapped.notices.is_empty() {
        let _ = writeln!(
            report,
            "swapping ours and theirs changed whether there are notices: {:?} vs {:?}",
            merged.notices, swapped.notices
        );
    }

    (!report.is_empty()).then_some(report)
}

/// Writes `expected.jsonl` and `notices.txt` from what the merge produces now.
fn bless_case(dir: &Path) -> Result<(), String> {
    let [base, ours, theirs] = INPUTS.map(|file| read_required(dir, file));
    let merged = merge(&base?, &ours?, &theirs?);
    let write = |file: &str, bytes: &[u8]| {
        let path = dir.join(file);
        fs::write(&path, bytes).map_err(|err| format!("cannot write {}: {err}", path.display()))
    };
    write(EXPECTED, &merged.bytes)?;
    if merged.notices.is_empty() {
        match fs::remove_file(dir.join(NOTICES)) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("cannot remove {NOTICES}: {err}"));
            }
            _ => {}
        }
    } else {
        let text: String = merged.notices.iter().map(|n| format!("{n}\n")).collect();
        write(NOTICES, text.as_bytes())?;
    }
    Ok(())
}

#[test]
fn every_fixture_merges_to_its_expected_bytes() {
    let root = fixtures_root();
    let dirs = case_dirs(&root);
    assert!(!dirs.is_empty(), "no merge fixtures in {}", root.display());
    let bless = std::env::var_os(BLESS_VAR).is_some();

    let mut failures = Vec::new();
    for dir in &dirs {
        let blessed = if bless { bless_case(dir) } else { Ok(()) };
        let outcome = blessed
            .and_then(|()| load_case(dir))
            .and_then(|case| check_case(&case).map_or(Ok(()), Err));
        if let Err(report) = outcome {
            failures.push(format!("=== {} ===\n{report}", dir.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} merge fixtures failed:\n\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n")
    );
}

/// The cases this crate promises to cover; a missing one is a deleted fixture.
#[test]
fn the_documented_cases_exist() {
    let required = [
        "both-append",
        "same-record-added-both-sides",
        "deleted-on-one-side",
        "rewritten-on-one-side",
        "tombstone-on-one-side",
        "empty-base",
        "garbage-lines",
        "conflict-markers",
        "crlf",
        "missing-final-newline",
        "non-canonical-key-order",
        "unsorted-input",
        "divergent-same-id",
        "duplicate-garbage-lines",
        "duplicate-key",
        "big-integer",
        "empty-fields",
    ];
    let root = fixtures_root();
    let present: Vec<String> = case_dirs(&root)
        .iter()
        .filter_map(|dir| load_case(dir).ok().map(|case| case.name))
        .collect();
    let missing: Vec<&str> = required
        .into_iter()
        .filter(|name| !present.iter().any(|p| p == name))
        .collect();
    assert!(
        missing.is_empty(),
        "missing or incomplete fixture cases: {missing:?}"
    );
}

fn indent(lines: &[String]) -> String {
    lines.iter().map(|line| format!("    {line}\n")).collect()
}

/// A unified-style line diff (`-` expected only, `+` actual only, ` ` both),
/// from a longest common subsequence; fixtures are small. Line endings are
/// shown, since CRLF and a missing final newline are what some cases test.
fn line_diff(expected: &[u8], actual: &[u8]) -> String {
    let expected = lines_with_endings(expected);
    let actual = lines_with_endings(actual);
    let (n, m) = (expected.len(), actual.len());
    // lcs[i][j]: length of the LCS of expected[i..] and actual[j..].
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if expected[i] == actual[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = String::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && expected[i] == actual[j] {
            let _ = writeln!(out, "  {}", show(expected[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            let _ = writeln!(out, "+ {}", show(actual[j]));
            j += 1;
        } else {
            let _ = writeln!(out, "- {}", show(expected[i]));
            i += 1;
        }
    }
    out
}

fn lines_with_endings(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split_inclusive(|&b| b == b'\n').collect()
}

fn show(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    match text.strip_suffix('\n') {
        Some(body) => match body.strip_suffix('\r') {
            Some(body) => format!("{body}⏎(CRLF)"),
            None => body.to_owned(),
        },
        None => format!("{text}⌀(no final newline)"),
    }
}
