//! `goldfish merge-driver %O %A %B %P`: the entry point git calls to merge a
//! memory file. Reads the three versions, merges them with
//! [`goldfish_log::merge`], writes the result to `%A` atomically.
//!
//! Git's contract: the result goes to `%A`; exit 0 is clean, 1–128 a conflict,
//! above 128 a crash. This driver never exits above 128 and never loses a
//! line: if it cannot read its input (or `GOLDFISH=0`), it hands the merge to
//! `git merge-file`, git's own text merge.
//!
//! `.gitattributes` comes through git, from anyone: it may route any path to
//! this driver. Only a memory file (`%P` matched by
//! [`crate::init::ATTRIBUTES_LINE`]'s pattern) gets the memory merge, which
//! sorts lines; any other path, or none, is merged as git would merge it
//! without the driver, by `git merge-file`.

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::Command;

use goldfish_log::merge::merge;

/// Exit status for git: 0 merged cleanly, 1 conflict left for the user.
/// `name` is `%P`, the file's path in the repository.
pub fn run(
    base: &Path,
    ours: &Path,
    theirs: &Path,
    name: Option<&OsStr>,
    stderr: &mut dyn Write,
) -> u8 {
    let label = name.map_or_else(
        || ours.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    if crate::env::disabled() {
        return fallback(base, ours, theirs, &label, "GOLDFISH=0", stderr);
    }
    // `init` has always declared the driver with `%P`: without it there is
    // no telling a memory file from source code.
    let Some(name) = name else {
        let reason = "git passed no path (%P), so this may not be a memory file: the driver is not declared as `goldfish init` declares it (run `goldfish init`)";
        return fallback(base, ours, theirs, &label, reason, stderr);
    };
    if !name.to_str().is_some_and(crate::init::is_memory_path) {
        let reason = format!(
            "not a memory file (the driver merges {} only; remove the .gitattributes line that routes this path to merge=goldfish)",
            crate::init::MEMORY_PATTERN
        );
        return fallback(base, ours, theirs, &label, &reason, stderr);
    }
    let read = |path: &Path| {
        fs::read(path).map_err(|err| format!("cannot read {}: {err}", path.display()))
    };
    let inputs = read(base).and_then(|b| Ok((b, read(ours)?, read(theirs)?)));
    let (base_bytes, ours_bytes, theirs_bytes) = match inputs {
        Ok(inputs) => inputs,
        Err(reason) => return fallback(base, ours, theirs, &label, &reason, stderr),
    };
    let merged = merge(&base_bytes, &ours_bytes, &theirs_bytes);
    for notice in &merged.notices {
        let _ = writeln!(stderr, "goldfish merge-driver: {label}: {notice}");
    }
    match crate::log::write_atomically(ours, &merged.bytes) {
        Ok(()) => 0,
        Err(err) => {
            let _ = writeln!(
                stderr,
                "goldfish merge-driver: {label}: cannot write the merged file ({err}); leaving a conflict"
            );
            1
        }
    }
}

/// Runs `git merge-file` on the three files: a text merge that leaves
/// conflict markers rather than drop anything.
fn fallback(
    base: &Path,
    ours: &Path,
    theirs: &Path,
    label: &str,
    reason: &str,
    stderr: &mut dyn Write,
) -> u8 {
    let _ = writeln!(
        stderr,
        "goldfish merge-driver: {label}: {reason}; falling back to git merge-file"
    );
    // Only the base may stand in as empty: git then keeps every line of both
    // sides, in a conflict. A side that cannot be read cannot be merged: an
    // empty "theirs" would read as "theirs deleted every line" and a clean
    // merge would drop ours. So `%A` stays as it is, with a conflict, and
    // their lines stay in their commit.
    let readable = |path: &Path| {
        fs::metadata(path).is_ok_and(|metadata| metadata.is_file()) && fs::File::open(path).is_ok()
    };
    if let Some(side) = [ours, theirs].into_iter().find(|path| !readable(path)) {
        let _ = writeln!(
            stderr,
            "goldfish merge-driver: {label}: cannot read {}; leaving {} as it is, with a conflict",
            side.display(),
            ours.display()
        );
        return 1;
    }
    let empty = tempfile::NamedTempFile::new().ok();
    let base = match &empty {
        Some(empty) if !readable(base) => empty.path(),
        _ => base,
    };
    let status = Command::new("git")
        .args(["merge-file", "-L", "ours", "-L", "base", "-L", "theirs"])
        .arg(ours)
        .arg(base)
        .arg(theirs)
        .status();
    match status.map(|s| s.code()) {
        Ok(Some(0)) => 0,
        // merge-file exits with the number of conflicts, or negative on error:
        // either way, a conflict for git, never a crash code.
        _ => 1,
    }
}
