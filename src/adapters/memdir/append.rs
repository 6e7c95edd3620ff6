//! Appending: the day file and the work tree's tag, and one `write` under
//! an exclusive lock, cut back on failure.

use super::*;

/// The day file of an entry's timestamp, with the work tree's tag when
/// there is one (`2026-11-28-k3m9qz.jsonl`).
pub(super) fn day_file(entry: &Entry, tag: Option<&str>) -> Result<String, LogError> {
    let timestamp: jiff::Timestamp = entry
        .timestamp()
        .parse()
        .map_err(|_| LogError::Timestamp(entry.timestamp().to_owned()))?;
    let name = memory::file_name_for(timestamp);
    // `%Y` of a year before 0 or after 9999 has a sign or a fifth digit.
    if !(name.len() == "YYYY-MM-DD.jsonl".len() && name.as_bytes()[0].is_ascii_digit()) {
        return Err(LogError::Timestamp(entry.timestamp().to_owned()));
    }
    Ok(match tag {
        Some(tag) => format!("{}-{tag}.jsonl", &name[.."YYYY-MM-DD".len()]),
        None => name,
    })
}

/// The tag kept in `git_dir` ([`TAG_FILE`]), made the first time: random,
/// written with `create_new` so concurrent first stores agree on it. A
/// file that is not a tag (edited, truncated) is replaced; a link or a
/// FIFO in its place is refused.
pub(super) fn tag_in(git_dir: &Path) -> Result<String, LogError> {
    let path = git_dir.join(TAG_FILE);
    // An empty file is another store's, about to hold its tag; one that
    // stays empty this long was left by a crash and is replaced.
    const EMPTY_WAITS: usize = 100;
    let mut empty = 0;
    for _ in 0..EMPTY_WAITS + ATTEMPTS {
        match read_regular_prefix(&path, 64) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let tag = text.trim();
                if is_tag(tag) {
                    return Ok(tag.to_owned());
                }
                if bytes.is_empty() && empty < EMPTY_WAITS {
                    empty += 1;
                    std::thread::sleep(GIT_POLL);
                    continue;
                }
                write_atomically(&path, format!("{}\n", new_tag()).as_bytes())
                    .map_err(io_error("write", &path))?;
            }
            Err(OpenError::Io(err)) if err.kind() == io::ErrorKind::NotFound => {
                let made = open_regular(
                    &path,
                    OpenOptions::new().write(true).create_new(true).mode(0o644),
                );
                match made {
                    Ok(mut file) => {
                        let tag = new_tag();
                        file.write_all(format!("{tag}\n").as_bytes())
                            .and_then(|()| file.sync_data())
                            .map_err(io_error("write", &path))?;
                        return Ok(tag);
                    }
                    Err(OpenError::Io(err)) if err.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(err) => return Err(err.into_log_error(&path)),
                }
            }
            Err(err) => return Err(err.into_log_error(&path)),
        }
    }
    Err(LogError::Unsafe {
        path,
        reason: "stays empty or is rewritten while goldfish reads it".to_owned(),
    })
}

pub(super) fn is_tag(text: &str) -> bool {
    text.len() == TAG_LEN
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
}

/// A new random tag: the random part of a ULID, lowercased.
pub(super) fn new_tag() -> String {
    let id = ulid::Ulid::generate().to_string().to_ascii_lowercase();
    id[id.len() - TAG_LEN..].to_owned()
}

/// Opens the memory file for appending, creating it (never over anything)
/// when missing. Returns the file and whether this call created it.
pub(super) fn open_or_create(file_path: &Path) -> Result<(File, bool), LogError> {
    loop {
        match open_regular(file_path, OpenOptions::new().read(true).append(true)) {
            Ok(file) => return Ok((file, false)),
            Err(OpenError::Io(err)) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(err.into_log_error(file_path)),
        }
        match OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(file_path)
        {
            Ok(file) => return Ok((file, true)),
            // Created by someone else in between: append to theirs.
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(io_error("create", file_path)(err)),
        }
    }
}

/// One append of `lines` (each ending in a newline) to `file_path`, in a
/// single write under the file's lock; with `git`, verified afterwards.
/// Returns the verdict and how many lines were written.
///
/// With `skip_present`, a line the file already holds (read under the lock,
/// just before the write) is not written again: a retry or a drain never
/// doubles a line that git, or an earlier attempt, put there. A write that
/// fails (a full disk, a file size limit) is undone: the file is cut back to
/// its length before it, or removed when this call created it, so no torn
/// line is left for git to commit.
pub(super) fn append_once(
    file_path: &Path,
    lines: &[&[u8]],
    git: Option<&GitSide>,
    skip_present: bool,
) -> Result<(Verified, Vec<usize>), LogError> {
    let (mut file, created) = open_or_create(file_path)?;
    file.lock().map_err(io_error("lock", file_path))?;
    let before = file.metadata().map_err(io_error("read", file_path))?.len();
    let mut bytes = Vec::new();
    if created {
        // HEAD's version first: a created file never drops what HEAD has.
        if let Some(head) = git.and_then(|git| git.head_file(&file_name(file_path))) {
            bytes.extend_from_slice(&head);
            if !head.is_empty() && !head.ends_with(b"\n") {
                bytes.push(b'\n');
            }
        }
    } else if skip_present {
        file.seek(SeekFrom::Start(0))
            .and_then(|_| file.read_to_end(&mut bytes))
            .map_err(io_error("read", file_path))?;
    }
    let mut present: HashSet<Vec<u8>> = if skip_present {
        bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
    } else {
        HashSet::new()
    };
    if !created {
        // Only the new bytes are written; what was read stays as it is.
        let ends_in_newline = match bytes.last() {
            _ if before == 0 => true,
            Some(&last) if skip_present => last == b'\n',
            _ => ends_with_newline(&mut file).map_err(io_error("read", file_path))?,
        };
        bytes.clear();
        if !ends_in_newline {
            bytes.push(b'\n');
        }
    }
    let mut written = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let bare = line.strip_suffix(b"\n").unwrap_or(line);
        if skip_present && !present.insert(bare.to_vec()) {
            continue;
        }
        bytes.extend_from_slice(line);
        written.push(index);
    }
    if !written.is_empty() || created {
        write_whole(&mut file, file_path, &bytes, before, created)?;
    }
    let Some(git) = git else {
        return Ok((Verified::Yes, written));
    };
    // Git idle now, and the path still names the file written: any git
    // command that starts later sees the line (and refuses to overwrite a
    // changed file). Otherwise git may have read the file before the write
    // and be replacing it.
    let same = same_file(file_path, &file);
    if same && git.activity() == GitActivity::Idle {
        return Ok((Verified::Yes, written));
    }
    if created && same {
        // Out of the way of git's own create of this file; the line is
        // appended again once git is done.
        let _ = fs::remove_file(file_path);
    }
    // The lock is released when `file` is closed.
    Ok((Verified::Unsure, written))
}

/// Writes `bytes` at the end of the locked `file` (of length `before`), and
/// syncs it: whole or not at all. A failed write leaves the file as it was
/// before it (removed when this append created it); still under the lock,
/// so no other append is cut.
fn write_whole(
    file: &mut File,
    file_path: &Path,
    bytes: &[u8],
    before: u64,
    created: bool,
) -> Result<(), LogError> {
    let outcome = file.write_all(bytes).and_then(|()| file.sync_data());
    if let Err(err) = outcome {
        if created && same_file(file_path, file) {
            let _ = fs::remove_file(file_path);
        } else {
            let _ = file.set_len(before).and_then(|()| file.sync_data());
        }
        return Err(io_error("append to", file_path)(err));
    }
    if !created {
        mark_folder_changed(file_path);
    }
    Ok(())
}

/// Sets the memory folder's times to now: an append changes a file in
/// place, which leaves the folder's own stat as it was, and a sync of a
/// large folder trusts an unchanged stat for a while
/// (`sync::FOLDER_TRUSTED_NS`). Creating a file changes the folder
/// by itself.
pub(super) fn mark_folder_changed(file_path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let Some(dir) = file_path.parent() else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return;
    };
    // SAFETY: `path` is a NUL-terminated string that lives through the
    // call; null `times` asks for both times set to now, which needs only
    // write access to the folder (the append had it).
    unsafe {
        libc::utimensat(libc::AT_FDCWD, path.as_ptr(), std::ptr::null(), 0);
    }
}

pub(super) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether `path` (not followed) is the file `file` has open.
pub(super) fn same_file(path: &Path, file: &File) -> bool {
    match (fs::symlink_metadata(path), file.metadata()) {
        (Ok(at_path), Ok(open)) => at_path.dev() == open.dev() && at_path.ino() == open.ino(),
        _ => false,
    }
}

pub(super) fn ends_with_newline(file: &mut File) -> io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}
