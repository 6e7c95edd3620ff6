//! `goldfish init`: sets a clone up so memory files merge without conflicts
//! and the index follows every pull. Every step is idempotent; running it
//! twice changes nothing.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::adapters::PathError;
use crate::adapters::git::{GitError, MEMORY_DIR, REPO_CONFIG, Workspace};
use crate::adapters::memdir::OpenError;

/// The hooks goldfish installs.
pub const HOOKS: [&str; 3] = ["post-merge", "post-checkout", "post-rewrite"];
/// What marks a hook file as ours.
pub const HOOK_MARKER: &str = "# goldfish-hook:";
/// The `.gitattributes` pattern of memory files.
pub const MEMORY_PATTERN: &str = ".goldfish/memories/*.jsonl";
/// The `.gitattributes` line that routes memory files to the driver.
pub const ATTRIBUTES_LINE: &str = ".goldfish/memories/*.jsonl merge=goldfish";
pub const DRIVER_NAME_KEY: &str = "merge.goldfish.name";
pub const DRIVER_NAME: &str = "goldfish memory log merge";
pub const DRIVER_KEY: &str = "merge.goldfish.driver";
pub const DRIVER_COMMAND: &str = "goldfish merge-driver %O %A %B %P";

const HOOK_TEMPLATE: &str = include_str!("../../git-hooks/hook.sh");

/// The opt-in pre-push hook (`init --review-on-push`): it runs `goldfish
/// review` on what a push sends and stops the push on exit 1. Not one of
/// [`HOOKS`]: `heal` never installs it, doctor never asks for it.
pub const REVIEW_HOOK: &str = "pre-push";
pub const REVIEW_HOOK_SCRIPT: &str = include_str!("../../git-hooks/pre-push.sh");

/// The shim installed as hook `name`.
pub fn hook_script(name: &str) -> String {
    HOOK_TEMPLATE.replace("@HOOK@", name)
}

#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Io(#[from] PathError),
    #[error(transparent)]
    Unsafe(crate::adapters::memdir::LogError),
    #[error("{} is a symbolic link; goldfish does not write through it (it could point out of the repository): replace it with a regular file", .0.display())]
    LinkedFile(PathBuf),
    #[error("{} is {kind}, not a regular file; goldfish does not read or write it: replace it with a regular file", .path.display())]
    NotRegularFile { path: PathBuf, kind: &'static str },
    #[error("core.hooksPath points outside this repository ({}); installing there would affect other repositories. Pass --force to install anyway", .0.display())]
    HooksOutside(PathBuf),
    #[error("{} is not a goldfish hook and {} already exists; move one of them away and run init again", .hook.display(), .legacy.display())]
    LegacyTaken { hook: PathBuf, legacy: PathBuf },
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> InitError {
    PathError::at(action, path)
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
    if let Err(err @ crate::adapters::memdir::LogError::Unsafe { .. }) =
        crate::adapters::memdir::MemoryDir::of(workspace).check_folder()
    {
        return Err(InitError::Unsafe(err));
    }
    // Nor would it read through a link, or wait on a FIFO forever.
    match read_attributes(workspace) {
        Err(OpenError::Link) => {
            return Err(InitError::LinkedFile(
                workspace.root().join(".gitattributes"),
            ));
        }
        Err(OpenError::NotRegular(kind)) => {
            return Err(InitError::NotRegularFile {
                path: workspace.root().join(".gitattributes"),
                kind,
            });
        }
        _ => {}
    }
    let mut changes = Vec::new();
    create_memory_dir(workspace, &mut changes)?;
    write_config_example(workspace, &mut changes)?;
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

/// What `init` writes to `.goldfish/config` when there is none: every
/// setting commented out, so it changes nothing until the team decides.
pub const CONFIG_EXAMPLE: &str = r#"# goldfish settings for this repository (TOML), shared through git.

# [memory]
# types = ["incident", "meeting"]   # memory types beyond the built-in ones

# Who may write memories that agents receive unmarked. Without this section
# every committer is trusted (orders to agents and forged authors are still
# quarantined). A memory whose commit author is outside `authors` (or, with
# `signed = true`, whose commit signature does not verify against
# gpg.ssh.allowedSignersFile) is quarantined: left out of the briefing and of
# recall unless asked for (`goldfish recall --include-untrusted`).
# [trust]
# authors = ["alice@example.com", "*@example.com"]   # commit author emails; * and ? are wildcards
# signed = true
"#;

/// Writes [`CONFIG_EXAMPLE`] unless `.goldfish/config` exists (whatever it
/// is: a link or a folder is left for `doctor` to name).
fn write_config_example(workspace: &Workspace, changes: &mut Vec<String>) -> Result<(), InitError> {
    let path = workspace.repo_config_path();
    match fs::symlink_metadata(&path) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            let mut file = match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => file,
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => return Ok(()),
                Err(err) => return Err(io_error("create", &path)(err)),
            };
            io::Write::write_all(&mut file, CONFIG_EXAMPLE.as_bytes())
                .map_err(io_error("write", &path))?;
            changes.push(format!(
                "wrote {REPO_CONFIG} (settings, all commented out: see its [trust] section)"
            ));
            Ok(())
        }
        _ => Ok(()),
    }
}

fn has_log_files(dir: &Path) -> bool {
    fs::read_dir(dir).is_ok_and(|mut entries| {
        entries.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".jsonl")))
    })
}

fn add_attributes(workspace: &Workspace, changes: &mut Vec<String>) -> Result<(), InitError> {
    let path = workspace.root().join(".gitattributes");
    let existing = match read_attributes(workspace) {
        // Written back whole: text that is not UTF-8 is refused, not mangled.
        Ok(bytes) => String::from_utf8(bytes).map_err(|err| {
            io_error("read", &path)(io::Error::new(io::ErrorKind::InvalidData, err))
        })?,
        Err(OpenError::Io(err)) if err.kind() == io::ErrorKind::NotFound => String::new(),
        Err(OpenError::Io(err)) => return Err(io_error("read", &path)(err)),
        Err(OpenError::Link) => return Err(InitError::LinkedFile(path)),
        Err(OpenError::NotRegular(kind)) => return Err(InitError::NotRegularFile { path, kind }),
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
        words.next() == Some(MEMORY_PATTERN) && words.any(|w| w == "merge=goldfish")
    })
}

/// Whether `path` (relative to the repository, as git's `%P`) is a memory
/// file: one [`MEMORY_PATTERN`] matches. In `.gitattributes` a pattern with a
/// slash is anchored at the file's folder and `*` never crosses a `/`, so a
/// name directly in the memory folder ending in `.jsonl`.
pub fn is_memory_path(path: &str) -> bool {
    path.strip_prefix(MEMORY_DIR)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|name| !name.contains('/') && name.ends_with(".jsonl"))
}

/// A `.gitattributes` line that routes paths other than memory files to the
/// merge driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignRoute {
    /// Its line number, from 1.
    pub line: usize,
    /// Its pattern, as written.
    pub pattern: String,
}

impl std::fmt::Display for ForeignRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            ".gitattributes line {} routes `{}` to merge=goldfish",
            self.line, self.pattern
        )
    }
}

/// The lines of a `.gitattributes` text that set `merge=goldfish` (or a
/// macro, `[attr]name …`, that sets it) on a pattern other than
/// [`MEMORY_PATTERN`]. The driver merges those files as text, but the line
/// has no business there: a stranger's commit can add it.
pub fn foreign_routes(text: &str) -> Vec<ForeignRoute> {
    let mut macros: Vec<&str> = Vec::new();
    let mut routes = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (pattern, attributes) = split_pattern(line);
        // Left to right, as git applies them: a later one overrides.
        let sets_driver = attributes.split_whitespace().fold(false, |set, word| {
            if word == "merge=goldfish" || macros.contains(&word) {
                true
            } else if word == "binary"
                || ["merge", "-merge", "!merge"].contains(&word)
                || word.starts_with("merge=")
            {
                false
            } else {
                set
            }
        });
        if !sets_driver {
            continue;
        }
        if let Some(name) = pattern.strip_prefix("[attr]") {
            macros.push(name);
        } else if pattern != MEMORY_PATTERN && pattern.strip_prefix('/') != Some(MEMORY_PATTERN) {
            routes.push(ForeignRoute {
                line: index + 1,
                pattern: pattern.to_owned(),
            });
        }
    }
    routes
}

/// A `.gitattributes` line's pattern (a quoted one with its quotes) and the
/// rest.
fn split_pattern(line: &str) -> (&str, &str) {
    let end = if line.starts_with('"') {
        let mut escaped = false;
        line.char_indices()
            .skip(1)
            .find(|&(_, c)| {
                let closes = c == '"' && !escaped;
                escaped = c == '\\' && !escaped;
                closes
            })
            .map_or(line.len(), |(at, _)| at + 1)
    } else {
        line.find(char::is_whitespace).unwrap_or(line.len())
    };
    line.split_at(end)
}

/// Declares the driver in the clone's git config unless it is; returns
/// whether it changed anything.
pub(crate) fn declare_driver(
    workspace: &Workspace,
    changes: &mut Vec<String>,
) -> Result<bool, InitError> {
    let mut changed = false;
    for (key, value) in [(DRIVER_NAME_KEY, DRIVER_NAME), (DRIVER_KEY, DRIVER_COMMAND)] {
        let current = workspace.local_config_string(key);
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
    Ok(changed)
}

/// The hooks folder, once it is known to be inside the repository (or
/// `force`) and writable.
fn checked_hooks_dir(workspace: &Workspace, force: bool) -> Result<PathBuf, InitError> {
    let dir = workspace.hooks_dir()?;
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

/// Installs the pre-push hook that reviews what a push sends
/// ([`REVIEW_HOOK`]), as [`init`] installs its hooks: a foreign one is kept
/// as `pre-push.legacy` and runs first. Returns what changed.
pub fn install_review_hook(workspace: &Workspace, force: bool) -> Result<Vec<String>, InitError> {
    let hooks = checked_hooks_dir(workspace, force)?;
    let mut changes = Vec::new();
    install(
        &hooks,
        [(REVIEW_HOOK, REVIEW_HOOK_SCRIPT.to_owned())],
        &mut changes,
    )?;
    Ok(changes)
}

fn install_hooks(dir: &Path, changes: &mut Vec<String>) -> Result<(), InitError> {
    install(
        dir,
        HOOKS.into_iter().map(|name| (name, hook_script(name))),
        changes,
    )
}

fn install(
    dir: &Path,
    hooks: impl IntoIterator<Item = (&'static str, String)>,
    changes: &mut Vec<String>,
) -> Result<(), InitError> {
    if !dir.is_dir() {
        fs::create_dir_all(dir).map_err(io_error("create", dir))?;
    }
    for (name, script) in hooks {
        let path = dir.join(name);
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
    /// Stable name: `merge-driver`, `gitattributes`, `hooks`, `repo-config`.
    pub check: &'static str,
    pub ok: bool,
    /// What is wrong, when not ok.
    pub problem: Option<String>,
    /// The command that fixes it, when not ok.
    pub fix: Option<String>,
}

/// Checks that this clone merges memory files with the driver (and nothing
/// else), runs the hooks and has a usable `.goldfish/config`: what `status`
/// and `doctor` report.
pub fn health(workspace: &Workspace) -> Vec<Check> {
    let check = |name, found: Option<(String, String)>| Check {
        check: name,
        ok: found.is_none(),
        problem: found.as_ref().map(|(problem, _)| problem.clone()),
        fix: found.map(|(_, fix)| fix),
    };
    let init = |problem: String| (problem, "goldfish init".to_owned());
    let driver = workspace.config_string(DRIVER_KEY);
    let driver_problem = match driver.as_deref() {
        Some(DRIVER_COMMAND) => None,
        Some(other) => Some(format!("{DRIVER_KEY} is `{other}`, not `{DRIVER_COMMAND}`")),
        None => Some(format!(
            "the merge driver is not declared in this clone's git config ({DRIVER_KEY}): memory files would merge as text and conflict"
        )),
    };
    let hooks_problem = match workspace.hooks_dir() {
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
        check("merge-driver", driver_problem.map(init)),
        check("gitattributes", attributes_problem(workspace)),
        check("hooks", hooks_problem.map(init)),
        check("repo-config", repo_config_problem(workspace)),
    ]
}

/// What is wrong with `.goldfish/config`, and its fix: `store`, `recall` and
/// `import` refuse to run while it is there but not a readable regular file
/// of valid TOML.
pub fn repo_config_problem(workspace: &Workspace) -> Option<(String, String)> {
    let problem = |message: String, fix: &str| {
        Some((
            format!("{message}: store, recall and import refuse to run until it is fixed"),
            fix.to_owned(),
        ))
    };
    let replace = "replace it with a regular file (`git rm` a committed link, then commit the file), or remove it to use the built-in types";
    // Read as `store` and the readers read it: bounded, never through a
    // link in place of the file or of `.goldfish`.
    let bytes = match crate::adapters::memdir::read_repo_config(workspace) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return None,
        Err(OpenError::Link) => {
            return problem(
                format!(
                    "{REPO_CONFIG} is a symbolic link, not followed (it could point out of the repository)"
                ),
                replace,
            );
        }
        Err(OpenError::NotRegular(kind)) => {
            return problem(
                format!("{REPO_CONFIG} is {kind}, not a regular file"),
                replace,
            );
        }
        Err(OpenError::Io(err)) => {
            return problem(
                format!("cannot read {REPO_CONFIG} ({err})"),
                "check the permissions of the file",
            );
        }
    };
    match crate::domain::config::RepoConfig::from_file(&bytes) {
        Ok(_) => None,
        Err(err) => problem(
            format!("{REPO_CONFIG} is invalid: {err}"),
            "edit it (see README: `[memory] types = [...]`)",
        ),
    }
}

/// The work tree's `.gitattributes`, if it is a regular file: never through
/// a link, never blocking on a FIFO.
pub(crate) fn read_attributes(workspace: &Workspace) -> Result<Vec<u8>, OpenError> {
    crate::adapters::memdir::read_regular(&workspace.root().join(".gitattributes"))
}

/// What is wrong with `.gitattributes`, and its fix: unreadable, lacking
/// [`ATTRIBUTES_LINE`], or routing other files to the driver.
fn attributes_problem(workspace: &Workspace) -> Option<(String, String)> {
    let replace = "replace .gitattributes with a regular file (`git rm` it if committed), then `goldfish init`";
    let text = match read_attributes(workspace) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(OpenError::Io(err)) if err.kind() == io::ErrorKind::NotFound => String::new(),
        Err(OpenError::Link) => {
            return Some((
                ".gitattributes is a symbolic link; not followed (it could point out of the repository)".to_owned(),
                replace.to_owned(),
            ));
        }
        Err(OpenError::NotRegular(kind)) => {
            return Some((
                format!(".gitattributes is {kind}, not a regular file; not read"),
                replace.to_owned(),
            ));
        }
        Err(OpenError::Io(err)) => {
            return Some((
                format!("cannot read .gitattributes: {err}"),
                "check the permissions of .gitattributes".to_owned(),
            ));
        }
    };
    let mut problems = Vec::new();
    let mut fixes = Vec::new();
    if !attributes_ok(&text) {
        problems.push(format!(".gitattributes lacks `{ATTRIBUTES_LINE}`"));
        fixes.push("goldfish init".to_owned());
    }
    let foreign = foreign_routes(&text);
    if !foreign.is_empty() {
        let lines: Vec<String> = foreign.iter().map(ToString::to_string).collect();
        problems.push(format!(
            "{}: the driver merges only memory files ({MEMORY_PATTERN}) and hands any other file to git merge-file",
            lines.join("; ")
        ));
        let numbers: Vec<String> = foreign.iter().map(|route| route.line.to_string()).collect();
        fixes.push(format!(
            "remove {} {} from .gitattributes (or its merge=goldfish) and commit",
            if foreign.len() == 1 { "line" } else { "lines" },
            numbers.join(", ")
        ));
    }
    (!problems.is_empty()).then(|| (problems.join("; "), fixes.join("; ")))
}

/// What keeps the hook at `path` from running goldfish, if anything.
pub(crate) fn hook_issue(path: &Path) -> Option<&'static str> {
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
    fn the_example_init_writes_parses_to_the_defaults() {
        assert_eq!(
            crate::domain::config::RepoConfig::parse(CONFIG_EXAMPLE).unwrap(),
            crate::domain::config::RepoConfig::default()
        );
        let uncommented: String = CONFIG_EXAMPLE
            .lines()
            .map(|line| line.strip_prefix("# ").unwrap_or(line))
            .filter(|line| {
                line.starts_with('[')
                    || line
                        .split_once(" = ")
                        .is_some_and(|(key, _)| key.chars().all(|c| c.is_ascii_lowercase()))
            })
            .map(|line| format!("{line}\n"))
            .collect();
        let config = crate::domain::config::RepoConfig::parse(&uncommented).unwrap();
        assert!(config.trust.is_some_and(|policy| policy.signed));
    }

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
    fn memory_paths_are_what_the_attributes_line_matches() {
        assert!(ATTRIBUTES_LINE.starts_with(&format!("{MEMORY_PATTERN} ")));
        assert!(is_memory_path(".goldfish/memories/2026-11-21.jsonl"));
        assert!(is_memory_path(".goldfish/memories/.jsonl"));
        for path in [
            "app.py",
            "m.jsonl",
            ".goldfish/memories/sub/2026-11-21.jsonl",
            ".goldfish/memories/2026-11-21.json",
            ".goldfish/memories",
            ".goldfish/memories/",
            "sub/.goldfish/memories/2026-11-21.jsonl",
            ".goldfish/config",
        ] {
            assert!(!is_memory_path(path), "{path}");
        }
    }

    #[test]
    fn foreign_routes_are_lines_that_route_other_paths_to_goldfish() {
        let text = "*.png binary\n\
                    .goldfish/memories/*.jsonl merge=goldfish\n\
                    /.goldfish/memories/*.jsonl merge=goldfish\n\
                    *.py text merge=goldfish\n\
                    # *.rs merge=goldfish\n\
                    *.md merge=goldfish -merge\n\
                    [attr]memory merge=goldfish\n\
                    \"with space.txt\" memory\r\n\
                    *.go merge=union\n";
        let routes = foreign_routes(text);
        let found: Vec<(usize, &str)> = routes
            .iter()
            .map(|route| (route.line, route.pattern.as_str()))
            .collect();
        assert_eq!(found, [(4, "*.py"), (8, "\"with space.txt\"")]);
        assert_eq!(
            foreign_routes("a.py merge=goldfish")[0].to_string(),
            ".gitattributes line 1 routes `a.py` to merge=goldfish"
        );
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
