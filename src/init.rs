//! `goldfish init`: sets a clone up so memory files merge without conflicts
//! and the index follows every pull. Every step is idempotent; running it
//! twice changes nothing.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::git::{GitError, MEMORY_DIR, Workspace};

/// The hooks goldfish installs.
pub const HOOKS: [&str; 3] = ["post-merge", "post-checkout", "post-rewrite"];
/// What marks a hook file as ours.
pub const HOOK_MARKER: &str = "# goldfish-hook:";
/// The `.gitattributes` line that routes memory files to the driver.
pub const ATTRIBUTES_LINE: &str = ".goldfish/memories/*.jsonl merge=goldfish";
pub const DRIVER_NAME_KEY: &str = "merge.goldfish.name";
pub const DRIVER_NAME: &str = "goldfish memory log merge";
pub const DRIVER_KEY: &str = "merge.goldfish.driver";
pub const DRIVER_COMMAND: &str = "goldfish merge-driver %O %A %B %P";

const HOOK_TEMPLATE: &str = include_str!("../git-hooks/hook.sh");

/// The shim installed as hook `name`.
pub fn hook_script(name: &str) -> String {
    HOOK_TEMPLATE.replace("@HOOK@", name)
}

#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("could not {action} {}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Unsafe(crate::log::LogError),
    #[error("{} is a symbolic link; goldfish does not write through it (it could point out of the repository): replace it with a regular file", .0.display())]
    LinkedFile(PathBuf),
    #[error("core.hooksPath points outside this repository ({}); installing there would affect other repositories. Pass --force to install anyway", .0.display())]
    HooksOutside(PathBuf),
    #[error("{} is not a goldfish hook and {} already exists; move one of them away and run init again", .hook.display(), .legacy.display())]
    LegacyTaken { hook: PathBuf, legacy: PathBuf },
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> InitError {
    let path = path.to_owned();
    move |source| InitError::Io {
        action,
        path,
        source,
    }
}

/// Sets `workspace` up and returns what changed, one sentence each (empty when
/// all was already in place). `force` allows a `core.hooksPath` outside the
/// repository.
pub fn init(workspace: &Workspace, force: bool) -> Result<Vec<String>, InitError> {
    // What can refuse or fail for a reason the user has to fix is checked
    // before anything is written, so a failed init leaves the clone as it was.
    let hooks = checked_hooks_dir(workspace, force)?;
    // A committed link in place of `.goldfish`, its memory folder or
    // `.gitattributes` would have init write outside the repository.
    if let Err(err @ crate::log::LogError::Unsafe { .. }) =
        crate::log::MemoryDir::of(workspace).check_folder()
    {
        return Err(InitError::Unsafe(err));
    }
    let attributes = workspace.root().join(".gitattributes");
    if fs::symlink_metadata(&attributes).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(InitError::LinkedFile(attributes));
    }
    let mut changes = Vec::new();
    create_memory_dir(workspace, &mut changes)?;
    add_attributes(workspace, &mut changes)?;
    declare_driver(workspace, &mut changes)?;
    install_hooks(&hooks, &mut changes)?;
    Ok(changes)
}

fn create_memory_dir(workspace: &Workspace, changes: &mut Vec<String>) -> Result<(), InitError> {
    let dir = workspace.memory_dir();
    if !dir.is_dir() {
        fs::create_dir_all(&dir).map_err(io_error("create", &dir))?;
        changes.push(format!("created {MEMORY_DIR}/"));
    }
    // Git does not track empty folders: keep one file so a fresh clone has it.
    let keep = dir.join(".gitkeep");
    if !keep.exists() && !has_log_files(&dir) {
        fs::write(&keep, b"").map_err(io_error("create", &keep))?;
    }
    Ok(())
}

fn has_log_files(dir: &Path) -> bool {
    fs::read_dir(dir).is_ok_and(|mut entries| {
        entries.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".jsonl")))
    })
}

fn add_attributes(workspace: &Workspace, changes: &mut Vec<String>) -> Result<(), InitError> {
    let path = workspace.root().join(".gitattributes");
    let existing = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(io_error("read", &path)(err)),
    };
    if attributes_ok(&existing) {
        return Ok(());
    }
    let mut text = existing;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(ATTRIBUTES_LINE);
    text.push('\n');
    fs::write(&path, text).map_err(io_error("write", &path))?;
    changes.push(format!("added `{ATTRIBUTES_LINE}` to .gitattributes"));
    Ok(())
}

/// Whether a `.gitattributes` text routes memory files to the driver.
pub fn attributes_ok(text: &str) -> bool {
    text.lines().any(|line| {
        let mut words = line.split_whitespace();
        words.next() == Some(".goldfish/memories/*.jsonl") && words.any(|w| w == "merge=goldfish")
    })
}

pub(crate) fn declare_driver(
    workspace: &Workspace,
    changes: &mut Vec<String>,
) -> Result<(), InitError> {
    let mut changed = false;
    for (key, value) in [(DRIVER_NAME_KEY, DRIVER_NAME), (DRIVER_KEY, DRIVER_COMMAND)] {
        let current = workspace.git(&["config", "--local", "--get", key]).ok();
        if current.as_deref() != Some(value) {
            workspace.git(&["config", "--local", key, value])?;
            changed = true;
        }
    }
    if changed {
        changes.push(format!(
            "declared the merge driver in git config (`{DRIVER_KEY} = {DRIVER_COMMAND}`)"
        ));
    }
    Ok(())
}

/// The folder git runs hooks from (honouring `core.hooksPath` and worktrees).
pub fn hooks_dir(workspace: &Workspace) -> Result<PathBuf, GitError> {
    let dir = PathBuf::from(workspace.git(&["rev-parse", "--git-path", "hooks"])?);
    Ok(if dir.is_absolute() {
        dir
    } else {
        workspace.root().join(dir)
    })
}

/// The hooks folder, once it is known to be inside the repository (or
/// `force`) and writable.
fn checked_hooks_dir(workspace: &Workspace, force: bool) -> Result<PathBuf, InitError> {
    let dir = hooks_dir(workspace)?;
    let inside = [workspace.root(), workspace.common_dir()]
        .iter()
        .any(|base| lexically_within(&dir, base));
    if !inside && !force {
        return Err(InitError::HooksOutside(dir));
    }
    // Write a file and remove it in the folder, or in the nearest existing
    // folder above it when it is still to be created.
    let mut probe_dir = dir.as_path();
    while !probe_dir.exists()
        && let Some(parent) = probe_dir.parent()
    {
        probe_dir = parent;
    }
    tempfile::Builder::new()
        .prefix(".goldfish-init")
        .tempfile_in(probe_dir)
        .map(drop)
        .map_err(io_error("write in", probe_dir))?;
    Ok(dir)
}

fn install_hooks(dir: &Path, changes: &mut Vec<String>) -> Result<(), InitError> {
    if !dir.is_dir() {
        fs::create_dir_all(dir).map_err(io_error("create", dir))?;
    }
    for name in HOOKS {
        let path = dir.join(name);
        let script = hook_script(name);
        match fs::read_to_string(&path) {
            Ok(current) if current == script && is_executable(&path) => continue,
            Ok(current) if current == script => {
                fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
                    .map_err(io_error("make executable", &path))?;
                changes.push(format!(
                    "made the {name} hook in {} executable",
                    dir.display()
                ));
            }
            Ok(current) if current.contains(HOOK_MARKER) => {
                write_hook(&path, &script)?;
                changes.push(format!("updated the {name} hook in {}", dir.display()));
            }
            Ok(_) | Err(_) if path.exists() => {
                let legacy = dir.join(format!("{name}.legacy"));
                if legacy.exists() {
                    return Err(InitError::LegacyTaken { hook: path, legacy });
                }
                fs::rename(&path, &legacy).map_err(io_error("move", &path))?;
                write_hook(&path, &script)?;
                changes.push(format!(
                    "installed the {name} hook in {}; the existing one runs first, from {name}.legacy",
                    dir.display()
                ));
            }
            _ => {
                write_hook(&path, &script)?;
                changes.push(format!("installed the {name} hook in {}", dir.display()));
            }
        }
    }
    Ok(())
}

fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|metadata| metadata.permissions().mode() & 0o111 != 0)
}

/// One health check of a clone's setup.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Check {
    /// Stable name: `merge-driver`, `gitattributes`, `hooks`.
    pub check: &'static str,
    pub ok: bool,
    /// What is wrong, when not ok.
    pub problem: Option<String>,
    /// The command that fixes it, when not ok.
    pub fix: Option<String>,
}

/// Checks that this clone merges memory files with the driver and runs the
/// hooks: what `status` and `doctor` report.
pub fn health(workspace: &Workspace) -> Vec<Check> {
    let check = |name, problem: Option<String>| Check {
        check: name,
        ok: problem.is_none(),
        fix: problem.as_ref().map(|_| "goldfish init".to_owned()),
        problem,
    };
    let driver = workspace.config_string(DRIVER_KEY);
    let driver_problem = match driver.as_deref() {
        Some(DRIVER_COMMAND) => None,
        Some(other) => Some(format!("{DRIVER_KEY} is `{other}`, not `{DRIVER_COMMAND}`")),
        None => Some(format!(
            "the merge driver is not declared in this clone's git config ({DRIVER_KEY}): memory files would merge as text and conflict"
        )),
    };
    let attributes =
        fs::read_to_string(workspace.root().join(".gitattributes")).unwrap_or_default();
    let attributes_problem =
        (!attributes_ok(&attributes)).then(|| format!(".gitattributes lacks `{ATTRIBUTES_LINE}`"));
    let hooks_problem = match hooks_dir(workspace) {
        Ok(dir) => {
            let issues: Vec<String> = HOOKS
                .iter()
                .filter_map(|name| {
                    hook_issue(&dir.join(name)).map(|issue| format!("{name} {issue}"))
                })
                .collect();
            (!issues.is_empty()).then(|| {
                format!(
                    "hooks in {}: {} (the index will not follow pulls)",
                    dir.display(),
                    issues.join(", ")
                )
            })
        }
        Err(err) => Some(format!("cannot find the hooks folder: {err}")),
    };
    vec![
        check("merge-driver", driver_problem),
        check("gitattributes", attributes_problem),
        check("hooks", hooks_problem),
    ]
}

/// What keeps the hook at `path` from running goldfish, if anything.
fn hook_issue(path: &Path) -> Option<&'static str> {
    match fs::read_to_string(path) {
        Ok(text) if text.contains(HOOK_MARKER) => {
            (!is_executable(path)).then_some("is not executable")
        }
        Ok(_) => Some("is not goldfish's (init keeps it running, from <hook>.legacy)"),
        Err(_) if path.exists() => Some("is unreadable"),
        Err(_) => Some("is missing"),
    }
}

pub(crate) fn write_hook(path: &Path, script: &str) -> Result<(), InitError> {
    fs::write(path, script).map_err(io_error("write", path))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .map_err(io_error("make executable", path))
}

/// Whether `path` is `base` or below it, after resolving symlinks where the
/// paths exist and `..` where they do not.
pub(crate) fn lexically_within(path: &Path, base: &Path) -> bool {
    let normalize = |p: &Path| -> PathBuf {
        if let Ok(real) = p.canonicalize() {
            return real;
        }
        let mut out = PathBuf::new();
        for component in p.components() {
            match component {
                std::path::Component::ParentDir => {
                    out.pop();
                }
                std::path::Component::CurDir => {}
                other => out.push(other),
            }
        }
        out
    };
    normalize(path).starts_with(normalize(base))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_line_detection() {
        assert!(attributes_ok(
            "*.png binary\n.goldfish/memories/*.jsonl merge=goldfish\n"
        ));
        assert!(attributes_ok(
            ".goldfish/memories/*.jsonl  text merge=goldfish"
        ));
        assert!(!attributes_ok(".goldfish/memories/*.jsonl merge=union\n"));
        assert!(!attributes_ok(
            "# .goldfish/memories/*.jsonl merge=goldfish"
        ));
    }

    #[test]
    fn hook_script_names_itself() {
        let script = hook_script("post-merge");
        assert!(script.starts_with("#!/bin/sh\n"));
        assert!(script.contains(HOOK_MARKER));
        assert!(script.contains("goldfish hook post-merge \"$@\""));
        assert!(!script.contains("@HOOK@"));
    }
}
