//! Self-healing clones. Git copies `.gitattributes` through a clone but not
//! the merge driver's declaration nor the hooks, so a teammate who never ran
//! `goldfish init` gets text merges (conflicts, markers) in memory files.
//! [`heal`] declares what the committed `.gitattributes` already asks for;
//! [`resolve`] merges again, from git's index stages, the memory files a
//! merge left in conflict.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::PathBuf;

use crate::adapters::PathError;
use crate::adapters::git::{GitError, MEMORY_DIR, Workspace};
use crate::adapters::memdir::OpenError;
use crate::app::init::{DRIVER_KEY, HOOKS, InitError, hook_issue};

/// What [`heal`] did, and what it saw that a person should fix.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Healed {
    /// What changed, one sentence each.
    pub changes: Vec<String>,
    /// What a person should fix, one sentence each: a `.gitattributes` that
    /// is not a regular file (not read), or its lines that route other files
    /// to the driver this declared.
    pub warnings: Vec<String>,
}

/// Whether goldfish is switched off (`GOLDFISH=0`): then nothing heals a
/// clone before a command.
pub fn switched_off() -> bool {
    crate::adapters::env::disabled()
}

/// Sets up what the repository's `.gitattributes` routes to goldfish and
/// this clone lacks: the driver's declaration (local git config) and the
/// hooks that are missing from a hooks folder inside the repository. A hook
/// that exists is never touched (`init` handles foreign ones); nothing is
/// written outside the repository.
pub fn heal(workspace: &Workspace) -> Result<Healed, InitError> {
    let mut healed = Healed::default();
    let Some(attributes) = routed_attributes(workspace, &mut healed.warnings) else {
        return Ok(healed);
    };
    if crate::app::init::declare_driver(workspace, &mut healed.changes)? {
        // Said when the driver starts taking merges in this clone; status
        // and doctor keep saying it.
        for route in crate::app::init::foreign_routes(&attributes) {
            healed.warnings.push(format!(
                "{route}: the merge driver merges only memory files and leaves `{}` to git's text merge; remove that line from .gitattributes",
                route.pattern
            ));
        }
    }
    let Some((hooks, missing)) = missing_hooks(workspace)? else {
        return Ok(healed);
    };
    if missing.is_empty() {
        return Ok(healed);
    }
    if !hooks.is_dir() {
        fs::create_dir_all(&hooks).map_err(PathError::at::<InitError>("create", &hooks))?;
    }
    for name in &missing {
        crate::app::init::write_hook(&hooks.join(name), &crate::app::init::hook_script(name))?;
    }
    healed.changes.push(format!(
        "installed the {} {} in {}",
        missing.join(", "),
        if missing.len() == 1 { "hook" } else { "hooks" },
        hooks.display()
    ));
    Ok(healed)
}

/// What [`heal`] would set up in this clone if a command ran now: what
/// `doctor` (which writes nothing, and heals nothing) reports as notes
/// rather than problems.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pending {
    /// `.gitattributes` routes memory files to goldfish and no git config
    /// declares the driver: the next command declares it.
    pub driver: bool,
    /// Hooks missing from a hooks folder inside the repository, when every
    /// other hook is goldfish's and executable: the next command installs
    /// them. Empty when a hook has an issue heal leaves to `init`.
    pub hooks: Vec<&'static str>,
}

/// What the next person-facing goldfish command sets up by itself here
/// (see [`heal`]); nothing when `.gitattributes` does not route memory
/// files to goldfish, since heal then does nothing.
pub fn pending(workspace: &Workspace) -> Pending {
    if routed_attributes(workspace, &mut Vec::new()).is_none() {
        return Pending::default();
    }
    let driver = workspace.config_string(DRIVER_KEY).is_none();
    let hooks = match missing_hooks(workspace) {
        Ok(Some((dir, missing)))
            if HOOKS
                .iter()
                .all(|name| missing.contains(name) || hook_issue(&dir.join(name)).is_none()) =>
        {
            missing
        }
        _ => Vec::new(),
    };
    Pending { driver, hooks }
}

/// The text of `.gitattributes` when it is a regular file in UTF-8 that
/// routes memory files to goldfish: what heal acts on. A link or a FIFO in
/// its place is not read, and named in `warnings`.
fn routed_attributes(workspace: &Workspace, warnings: &mut Vec<String>) -> Option<String> {
    // A link is not followed (the text could come from outside the
    // repository), a FIFO not waited on: both are named.
    let read = match crate::app::init::read_attributes(workspace) {
        Ok(bytes) => String::from_utf8(bytes).ok(),
        Err(OpenError::Link) => {
            warnings.push(
                ".gitattributes is a symbolic link; not followed, so memory files are not routed to the merge driver here".to_owned(),
            );
            None
        }
        Err(OpenError::NotRegular(kind)) => {
            warnings.push(format!(
                ".gitattributes is {kind}, not a regular file; not read, so memory files are not routed to the merge driver here"
            ));
            None
        }
        Err(OpenError::Io(_)) => None,
    };
    read.filter(|text| crate::app::init::attributes_ok(text))
}

/// The hooks folder and the hooks missing from it (nothing at their path,
/// not even a link), or `None` when the folder is outside the repository:
/// heal writes nothing there.
fn missing_hooks(workspace: &Workspace) -> Result<Option<(PathBuf, Vec<&'static str>)>, GitError> {
    let hooks = workspace.hooks_dir()?;
    let inside = [workspace.root(), workspace.common_dir()]
        .iter()
        .any(|base| crate::app::init::lexically_within(&hooks, base));
    if !inside {
        return Ok(None);
    }
    let missing = HOOKS
        .into_iter()
        .filter(|name| fs::symlink_metadata(hooks.join(name)).is_err())
        .collect();
    Ok(Some((hooks, missing)))
}

#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Unsafe(crate::adapters::memdir::LogError),
    #[error("{path}: {reason}; merge it by hand")]
    Refused { path: String, reason: String },
    #[error("could not write {}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// A memory file merged again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Its path in the repository.
    pub path: String,
    /// What the merge reported (lines that are not records, kept).
    pub notices: Vec<String>,
}

/// One entry of `git ls-files -u`: the blob of each stage (1 base, 2 ours,
/// 3 theirs) a path has.
#[derive(Debug, Default)]
struct Stages {
    blobs: [Option<gix::ObjectId>; 3],
}

/// Merges every memory file left in conflict again, with the merge driver's
/// own merge over git's index stages (a missing stage is an empty file: an
/// add/add conflict has no base), writes the result to the work tree and
/// `git add`s it. The work-tree file is never read: after a text merge it
/// holds conflict markers, after a failed driver only our side. Returns the
/// files merged; a file that cannot be merged is an error and the others
/// are left as they are.
pub fn resolve(workspace: &Workspace) -> Result<Vec<Resolved>, ResolveError> {
    let conflicted = conflicted_memory_files(workspace)?;
    if conflicted.is_empty() {
        return Ok(Vec::new());
    }
    crate::adapters::memdir::MemoryDir::of(workspace)
        .check_folder()
        .map_err(ResolveError::Unsafe)?;
    let mut resolved = Vec::new();
    for (path, stages) in conflicted {
        let [base, ours, theirs] = stages.blobs.each_ref().map(|blob| {
            blob.map_or(Ok(Vec::new()), |id| {
                workspace.read_blob(id).map_err(ResolveError::from)
            })
        });
        let merged = goldfish_log::merge::merge(&base?, &ours?, &theirs?);
        let file = workspace.root().join(&path);
        match fs::symlink_metadata(&file) {
            Ok(metadata) if !metadata.is_file() => {
                return Err(ResolveError::Refused {
                    path,
                    reason: "the work-tree file is not a regular file (a link is never followed)"
                        .to_owned(),
                });
            }
            _ => {}
        }
        crate::adapters::memdir::write_atomically(&file, &merged.bytes).map_err(|source| {
            ResolveError::Io {
                path: file.clone(),
                source,
            }
        })?;
        workspace.git(&["add", "--", &path])?;
        resolved.push(Resolved {
            path,
            notices: merged.notices.iter().map(ToString::to_string).collect(),
        });
    }
    Ok(resolved)
}

/// Memory files with unmerged index entries, and their stages. Only regular
/// files directly in the memory folder count; a link staged as a memory file
/// is refused.
fn conflicted_memory_files(
    workspace: &Workspace,
) -> Result<BTreeMap<String, Stages>, ResolveError> {
    let mut files: BTreeMap<String, Stages> = BTreeMap::new();
    for entry in workspace.unmerged_in(MEMORY_DIR)? {
        if !crate::app::init::is_memory_path(&entry.path) {
            continue;
        }
        if entry.mode != 0o100644 && entry.mode != 0o100755 {
            return Err(ResolveError::Refused {
                path: entry.path,
                reason: format!(
                    "a side of the merge is not a regular file (mode {:06o})",
                    entry.mode
                ),
            });
        }
        let slot = match entry.stage {
            1 => 0,
            2 => 1,
            3 => 2,
            _ => continue,
        };
        files.entry(entry.path).or_default().blobs[slot] = Some(entry.id);
    }
    Ok(files)
}
