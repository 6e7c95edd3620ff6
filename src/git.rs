//! The git adapter: finds the repository (with gix, honouring `GIT_DIR` and
//! linked worktrees), reads identity and HEAD, and runs the `git` CLI for the
//! few things gix does not write (config, `merge-file`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Where the memory log lives inside a work tree.
pub const MEMORY_DIR: &str = ".goldfish/memories";
/// The repository's own goldfish settings.
pub const REPO_CONFIG: &str = ".goldfish/config";

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("not inside a git repository ({}): run goldfish in a clone, or `git init` first", .path.display())]
    NotARepository {
        path: PathBuf,
        #[source]
        source: Box<gix::Error>,
    },
    #[error("{} is a bare repository: goldfish needs a work tree (run it in a clone)", .0.display())]
    Bare(PathBuf),
    #[error("could not run `git {args}`")]
    Spawn {
        args: String,
        #[source]
        source: std::io::Error,
    },
    #[error("`git {args}` failed: {stderr}")]
    Failed { args: String, stderr: String },
}

/// A git repository with a work tree: the unit goldfish calls a workspace.
pub struct Workspace {
    repo: gix::Repository,
    root: PathBuf,
}

/// What HEAD points to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    /// Short branch name; `None` when detached.
    pub branch: Option<String>,
    /// Full commit id; `None` in a repository without commits.
    pub commit: Option<String>,
}

impl Workspace {
    /// Finds the repository containing `dir`, like git does (`GIT_DIR` and
    /// `GIT_WORK_TREE` win).
    pub fn discover(dir: &Path) -> Result<Workspace, GitError> {
        let repo = gix::discover_with_environment_overrides(dir).map_err(|source| {
            GitError::NotARepository {
                path: dir.to_owned(),
                source: Box::new(source),
            }
        })?;
        let Some(root) = repo.workdir().map(Path::to_path_buf) else {
            return Err(GitError::Bare(repo.git_dir().to_owned()));
        };
        let root = root.canonicalize().unwrap_or(root);
        Ok(Workspace { repo, root })
    }

    /// The top of the work tree.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder of this worktree's git data (`.git`, or
    /// `.git/worktrees/<name>` in a linked worktree).
    pub fn git_dir(&self) -> &Path {
        self.repo.git_dir()
    }

    /// The git data shared by all worktrees of this repository.
    pub fn common_dir(&self) -> &Path {
        self.repo.common_dir()
    }

    pub fn memory_dir(&self) -> PathBuf {
        self.root.join(MEMORY_DIR)
    }

    pub fn repo_config_path(&self) -> PathBuf {
        self.root.join(REPO_CONFIG)
    }

    /// A string from git's configuration (all scopes, as git resolves them).
    pub fn config_string(&self, key: &str) -> Option<String> {
        self.repo
            .config_snapshot()
            .string(key)
            .map(|value| value.to_string())
    }

    /// The author name goldfish stamps on records: `GIT_AUTHOR_NAME`,
    /// else `user.name`, else `user.email`.
    pub fn author(&self) -> Option<String> {
        crate::env::var(crate::env::GIT_AUTHOR_NAME)
            .or_else(|| self.config_string("user.name"))
            .or_else(|| self.config_string("user.email"))
            .map(|name| name.trim().to_owned())
            .filter(|name| !name.is_empty())
    }

    pub fn head(&self) -> Head {
        let branch = self
            .repo
            .head_name()
            .ok()
            .flatten()
            .map(|name| name.shorten().to_string());
        let commit = self.repo.head_id().ok().map(|id| id.to_string());
        Head { branch, commit }
    }

    /// Runs `git` in the work tree root.
    pub fn git(&self, args: &[&str]) -> Result<String, GitError> {
        run_git(&self.root, args)
    }
}

/// Runs `git args…` in `dir` and returns its trimmed stdout.
pub fn run_git(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let output = git_command(dir, args)?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .to_owned())
    } else {
        Err(GitError::Failed {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        })
    }
}

/// Runs `git args…` in `dir`, whatever its exit status.
pub fn git_command(dir: &Path, args: &[&str]) -> Result<Output, GitError> {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|source| GitError::Spawn {
            args: args.join(" "),
            source,
        })
}
