//! The memory folder's tests: appends, the journal, tags and files that
//! are not regular.

use super::*;
use crate::domain::memory::Memory;

fn memory(id: &str) -> Entry {
    Entry::Memory(Memory {
        id: id.into(),
        timestamp: "2026-11-21T10:00:00.000Z".into(),
        kind: "insight".into(),
        content: "c".into(),
        ..Memory::default()
    })
}

#[test]
fn a_work_tree_gets_one_tag_however_many_stores_ask_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let tags: Vec<String> = std::thread::scope(|scope| {
        let asking: Vec<_> = (0..8)
            .map(|_| scope.spawn(|| tag_in(dir.path()).unwrap()))
            .collect();
        asking.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert!(is_tag(&tags[0]), "{tags:?}");
    assert!(tags.iter().all(|t| *t == tags[0]), "{tags:?}");
    assert_eq!(tag_in(dir.path()).unwrap(), tags[0], "kept");
    // Another work tree gets another.
    let other = tempfile::tempdir().unwrap();
    assert_ne!(tag_in(other.path()).unwrap(), tags[0]);
    // Not a tag: replaced.
    fs::write(dir.path().join(TAG_FILE), "../../etc\n").unwrap();
    let replaced = tag_in(dir.path()).unwrap();
    assert!(is_tag(&replaced) && replaced != tags[0], "{replaced}");
    // A link in its place is refused, not followed.
    let linked = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(dir.path().join(TAG_FILE), linked.path().join(TAG_FILE)).unwrap();
    assert!(matches!(
        tag_in(linked.path()),
        Err(LogError::Unsafe { .. })
    ));
}

#[test]
fn day_files_carry_the_tag() {
    let entry = memory("01KAJ00000000000000000000A");
    assert_eq!(day_file(&entry, None).unwrap(), "2026-11-21.jsonl");
    assert_eq!(
        day_file(&entry, Some("k3m9qz")).unwrap(),
        "2026-11-21-k3m9qz.jsonl"
    );
}

#[test]
fn the_atomic_writer_keeps_permissions_and_gives_a_new_file_a_plain_files() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let new = dir.path().join("new.json");
    write_atomically(&new, b"{}").unwrap();
    assert_eq!(
        (fs::read(&new).unwrap(), mode(&new)),
        (b"{}".to_vec(), 0o644)
    );
    let script = dir.path().join("hook.sh");
    fs::write(&script, "old").unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    write_atomically(&script, b"new").unwrap();
    assert_eq!(
        (fs::read(&script).unwrap(), mode(&script)),
        (b"new".to_vec(), 0o755)
    );
}

fn memory_dir() -> (tempfile::TempDir, MemoryDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".goldfish/memories");
    fs::create_dir_all(&path).unwrap();
    (dir, MemoryDir::new(path))
}

#[test]
fn append_repairs_a_missing_final_newline() {
    let (_dir, log) = memory_dir();
    let file = log.path().join("2026-11-21.jsonl");
    fs::write(&file, b"{\"half").unwrap();
    log.append(&memory("01A")).unwrap();
    let text = fs::read_to_string(&file).unwrap();
    assert_eq!(text, format!("{{\"half\n{}\n", memory("01A").to_line()));
    let view = log.read().unwrap();
    assert_eq!(view.memories.len(), 1);
    assert_eq!(view.problems.len(), 1);
}

#[test]
fn append_needs_an_initialized_folder() {
    let dir = tempfile::tempdir().unwrap();
    let log = MemoryDir::new(dir.path().join("missing"));
    assert!(matches!(
        log.append(&memory("01A")),
        Err(LogError::NotInitialized(_))
    ));
}

#[test]
fn links_and_fifos_are_neither_followed_nor_opened() {
    let (dir, log) = memory_dir();
    let outside = dir.path().join("outside");
    fs::write(&outside, b"secret\n").unwrap();
    let day = log.path().join("2026-11-21.jsonl");
    std::os::unix::fs::symlink(&outside, &day).unwrap();
    let fifo = log.path().join("2026-11-20.jsonl");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    let err = log.append(&memory("01A")).unwrap_err();
    assert!(err.to_string().contains("is a symbolic link"), "{err}");
    assert_eq!(fs::read(&outside).unwrap(), b"secret\n");
    let view = log.read().unwrap();
    let reasons: Vec<String> = view.problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        reasons,
        [
            "2026-11-20.jsonl: is a FIFO, not a memory file; skipped",
            "2026-11-21.jsonl: is a symbolic link; not followed, skipped (memory files must be regular files)",
        ]
    );
}

#[test]
fn a_linked_memory_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::create_dir_all(dir.path().join(".goldfish")).unwrap();
    let path = dir.path().join(".goldfish/memories");
    std::os::unix::fs::symlink(&outside, &path).unwrap();
    let log = MemoryDir::new(path);
    assert!(matches!(
        log.append(&memory("01A")),
        Err(LogError::Unsafe { .. })
    ));
    assert!(matches!(log.read(), Err(LogError::Unsafe { .. })));
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
}
