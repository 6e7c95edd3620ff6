//! The markdown files under a folder `goldfish import` reads (the only I/O
//! of an import; the plan is `crate::domain::import`).

use std::io;
use std::path::{Path, PathBuf};

use crate::domain::import::SourceFile;

/// Why the imported folder cannot be read at all.
#[derive(Debug, thiserror::Error)]
pub enum FindError {
    #[error("{} does not exist", .0.display())]
    Missing(PathBuf),
    #[error("{} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("could not list {}", .path.display())]
    List {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// The markdown files under `dir` (recursively; hidden files and folders and
/// symlinked folders are left out), sorted by path. A file or subfolder that
/// cannot be read is listed with the reason, so the rest still imports.
pub fn find_notes(dir: &Path) -> Result<Vec<SourceFile>, FindError> {
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Err(FindError::NotADirectory(dir.to_owned())),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Err(FindError::Missing(dir.to_owned()));
        }
        Err(source) => {
            return Err(FindError::List {
                path: dir.to_owned(),
                source,
            });
        }
    }
    let mut found = Vec::new();
    walk(dir, "", &mut found).map_err(|source| FindError::List {
        path: dir.to_owned(),
        source,
    })?;
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

fn walk(dir: &Path, prefix: &str, found: &mut Vec<SourceFile>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let relative = format!("{prefix}{name}");
        let path = entry.path();
        let file_type = entry.file_type()?;
        if file_type.is_dir() {
            if let Err(err) = walk(&path, &format!("{relative}/"), found) {
                found.push(SourceFile {
                    path: format!("{relative}/"),
                    bytes: Err(format!("could not be listed ({err})")),
                });
            }
        } else if file_type.is_symlink() && (is_markdown(&name) || path.is_dir()) {
            // A link could point anywhere (a note folder may come from a
            // stranger's repository): named, never followed.
            let path = if path.is_dir() {
                format!("{relative}/")
            } else {
                relative
            };
            found.push(SourceFile {
                path,
                bytes: Err("is a symbolic link; not followed".to_owned()),
            });
        } else if is_markdown(&name) {
            // Never a FIFO or a device: opened without blocking, checked.
            let bytes = crate::adapters::memdir::read_regular(&path).map_err(|err| match err {
                crate::adapters::memdir::OpenError::Io(err) => format!("could not be read ({err})"),
                crate::adapters::memdir::OpenError::Link => {
                    "is a symbolic link; not followed".to_owned()
                }
                crate::adapters::memdir::OpenError::NotRegular(kind) => {
                    format!("is {kind}, not a note")
                }
            });
            found.push(SourceFile {
                path: relative,
                bytes,
            });
        }
    }
    Ok(())
}

fn is_markdown(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_markdown_files_sorted_and_skips_hidden_ones() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("plans")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join("plans/b.md"), "b").unwrap();
        std::fs::write(root.join("a.MARKDOWN"), "a").unwrap();
        std::fs::write(root.join("notes.txt"), "t").unwrap();
        std::fs::write(root.join(".git/x.md"), "x").unwrap();
        let paths: Vec<_> = find_notes(root)
            .unwrap()
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert_eq!(paths, ["a.MARKDOWN", "plans/b.md"]);
        assert!(matches!(
            find_notes(&root.join("nope")),
            Err(FindError::Missing(_))
        ));
        assert!(matches!(
            find_notes(&root.join("notes.txt")),
            Err(FindError::NotADirectory(_))
        ));
    }
}
