//! The merge of one memory file, for the merge driver git runs
//! (`crate::front::driver`): reads the three versions, merges them with
//! [`goldfish_log::merge`], writes the result to `%A` atomically, and hands
//! anything that is not a memory file (or cannot be read) to `git merge-file`.
//!
//! Git's contract: the result goes to `%A`; exit 0 is clean, 1–128 a conflict,
//! above 128 a crash. This merge never answers above 128 and never loses a
//! line.
//!
//! `.gitattributes` comes through git, from anyone: it may route any path to
//! the driver. Only a memory file (`%P` matched by
//! [`crate::app::init::MEMORY_PATTERN`]) gets the memory merge, which sorts
//! lines; any other path, or none, is merged as git would merge it without
//! the driver, by `git merge-file`.

use std::ffi::OsStr;
use std::fs;
use std::path::Path;

use goldfish_log::merge::merge;

/// What a merge did: the exit status for git (0 merged cleanly, 1 a
/// conflict left for the user) and the lines to tell the user, each about
/// `label` (`%P`, else `%A`).
#[derive(Debug)]
pub struct Merged {
    pub status: u8,
    pub label: String,
    pub messages: Vec<String>,
}

/// Merges `theirs` into `ours` (git's `%O %A %B %P`).
pub fn merge_file(base: &Path, ours: &Path, theirs: &Path, name: Option<&OsStr>) -> Merged {
    let label = name.map_or_else(
        || ours.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    let mut messages = Vec::new();
    let status = merge_into(base, ours, theirs, name, &mut messages);
    Merged {
        status,
        label,
        messages,
    }
}

fn merge_into(
    base: &Path,
    ours: &Path,
    theirs: &Path,
    name: Option<&OsStr>,
    messages: &mut Vec<String>,
) -> u8 {
    if crate::adapters::env::disabled() {
        return fallback(base, ours, theirs, "GOLDFISH=0", messages);
    }
    // `init` has always declared the driver with `%P`: without it there is
    // no telling a memory file from source code.
    let Some(name) = name else {
        let reason = "git passed no path (%P), so this may not be a memory file: the driver is not declared as `goldfish init` declares it (run `goldfish init`)";
        return fallback(base, ours, theirs, reason, messages);
    };
    if !name.to_str().is_some_and(crate::app::init::is_memory_path) {
        let reason = format!(
            "not a memory file (the driver merges {} only; remove the .gitattributes line that routes this path to merge=goldfish)",
            crate::app::init::MEMORY_PATTERN
        );
        return fallback(base, ours, theirs, &reason, messages);
    }
    let read = |path: &Path| {
        fs::read(path).map_err(|err| format!("cannot read {}: {err}", path.display()))
    };
    let inputs = read(base).and_then(|b| Ok((b, read(ours)?, read(theirs)?)));
    let (base_bytes, ours_bytes, theirs_bytes) = match inputs {
        Ok(inputs) => inputs,
        Err(reason) => return fallback(base, ours, theirs, &reason, messages),
    };
    let merged = merge(&base_bytes, &ours_bytes, &theirs_bytes);
    messages.extend(merged.notices.iter().map(ToString::to_string));
    match crate::adapters::memdir::write_atomically(ours, &merged.bytes) {
        Ok(()) => 0,
        Err(err) => {
            messages.push(format!(
                "cannot write the merged file ({err}); leaving a conflict"
            ));
            1
        }
    }
}

/// `git merge-file` on the three files: a text merge that leaves conflict
/// markers rather than drop anything.
fn fallback(
    base: &Path,
    ours: &Path,
    theirs: &Path,
    reason: &str,
    messages: &mut Vec<String>,
) -> u8 {
    messages.push(format!("{reason}; falling back to git merge-file"));
    // Only the base may stand in as empty: git then keeps every line of both
    // sides, in a conflict. A side that cannot be read cannot be merged: an
    // empty "theirs" would read as "theirs deleted every line" and a clean
    // merge would drop ours. So `%A` stays as it is, with a conflict, and
    // their lines stay in their commit.
    let readable = |path: &Path| {
        fs::metadata(path).is_ok_and(|metadata| metadata.is_file()) && fs::File::open(path).is_ok()
    };
    if let Some(side) = [ours, theirs].into_iter().find(|path| !readable(path)) {
        messages.push(format!(
            "cannot read {}; leaving {} as it is, with a conflict",
            side.display(),
            ours.display()
        ));
        return 1;
    }
    let empty = tempfile::NamedTempFile::new().ok();
    let base = match &empty {
        Some(empty) if !readable(base) => empty.path(),
        _ => base,
    };
    // merge-file exits with the number of conflicts, or negative on error:
    // either way, a conflict for git, never a crash code.
    match crate::adapters::git::git_merge_file(ours, base, theirs) {
        Ok(0) => 0,
        _ => 1,
    }
}
