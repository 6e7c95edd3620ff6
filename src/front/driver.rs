//! `goldfish merge-driver %O %A %B %P`: the entry point git calls to merge a
//! memory file. The work is [`crate::app::merge`]; this prints what it says,
//! one `goldfish merge-driver: PATH: …` line each, and answers git.

use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;

use crate::app::merge::merge_file;

/// Exit status for git: 0 merged cleanly, 1 conflict left for the user.
/// `name` is `%P`, the file's path in the repository.
pub fn run(
    base: &Path,
    ours: &Path,
    theirs: &Path,
    name: Option<&OsStr>,
    stderr: &mut dyn Write,
) -> u8 {
    let merged = merge_file(base, ours, theirs, name);
    for message in &merged.messages {
        let _ = writeln!(stderr, "goldfish merge-driver: {}: {message}", merged.label);
    }
    merged.status
}
