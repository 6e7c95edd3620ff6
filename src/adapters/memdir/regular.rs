//! Opening only what is a regular file (`O_NOFOLLOW | O_NONBLOCK`, then a
//! check), and writing a file atomically.

use super::*;

/// Writes `bytes` to a temporary file beside `path` and renames it over
/// `path` (keeping its permissions; a new file gets a plain file's, 0644):
/// a reader, or a failed write, never leaves half a file. The one atomic
/// writer: the merge driver's result, `resolve`'s, the journal, the agent
/// files `init --agent` writes.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_data()?;
    // A temporary file is private (0600).
    let permissions = match fs::metadata(path) {
        Ok(metadata) => metadata.permissions(),
        Err(_) => std::os::unix::fs::PermissionsExt::from_mode(0o644),
    };
    temp.as_file().set_permissions(permissions)?;
    temp.persist(path).map_err(|err| err.error)?;
    Ok(())
}

/// Why a memory file was not opened.
#[derive(Debug)]
pub enum OpenError {
    Link,
    NotRegular(&'static str),
    Io(io::Error),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Link => write!(f, "a symbolic link (not followed)"),
            OpenError::NotRegular(kind) => write!(f, "{kind}, not a regular file"),
            OpenError::Io(err) => write!(f, "{err}"),
        }
    }
}

impl OpenError {
    /// The reason as a problem says it, ending in "skipped".
    pub fn skipped(&self) -> String {
        match self {
            OpenError::Link => {
                "is a symbolic link; not followed, skipped (memory files must be regular files)"
                    .to_owned()
            }
            OpenError::NotRegular(kind) => {
                format!("is {kind}, not a memory file; skipped")
            }
            OpenError::Io(err) => format!("could not be read ({err}); skipped"),
        }
    }

    /// Why the store journal at `path` cannot be used, and what to do.
    pub(super) fn into_journal_error(self, path: &Path) -> LogError {
        let reason = match self {
            OpenError::Link => "is a symbolic link".to_owned(),
            OpenError::NotRegular(kind) => format!("is {kind}, not a regular file"),
            OpenError::Io(err) => format!("cannot be opened for appending ({err})"),
        };
        LogError::Journal {
            path: path.to_owned(),
            reason,
        }
    }

    pub(super) fn into_log_error(self, path: &Path) -> LogError {
        match self {
            OpenError::Link => LogError::Unsafe {
                path: path.to_owned(),
                reason: "is a symbolic link".to_owned(),
            },
            OpenError::NotRegular(kind) => LogError::Unsafe {
                path: path.to_owned(),
                reason: format!("is {kind}, not a regular file"),
            },
            OpenError::Io(err) => io_error("open", path)(err),
        }
    }
}

pub(super) fn kind_of(file_type: fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_block_device() || file_type.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

/// Opens `path` with `options` if it is a regular file: never through a link
/// (`O_NOFOLLOW`), never blocking on a FIFO (`O_NONBLOCK`), and checked on
/// the opened descriptor.
pub fn open_regular(path: &Path, options: &mut OpenOptions) -> Result<File, OpenError> {
    let file = options
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|err| match fs::symlink_metadata(path) {
            Ok(metadata) if metadata.file_type().is_symlink() => OpenError::Link,
            Ok(metadata) if !metadata.is_file() => {
                OpenError::NotRegular(kind_of(metadata.file_type()))
            }
            _ => OpenError::Io(err),
        })?;
    let metadata = file.metadata().map_err(OpenError::Io)?;
    if !metadata.is_file() {
        return Err(OpenError::NotRegular(kind_of(metadata.file_type())));
    }
    Ok(file)
}

/// The bytes of `path` if it is a regular file (see [`open_regular`]).
pub fn read_regular(path: &Path) -> Result<Vec<u8>, OpenError> {
    read_regular_prefix(path, u64::MAX)
}

/// At most `limit` bytes of `path` if it is a regular file (see
/// [`open_regular`]).
pub fn read_regular_prefix(path: &Path, limit: u64) -> Result<Vec<u8>, OpenError> {
    let file = open_regular(path, OpenOptions::new().read(true))?;
    let mut bytes = Vec::new();
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(OpenError::Io)?;
    Ok(bytes)
}

/// What reading `.goldfish/config` gave ([`read_repo_config`]): its bytes,
/// `None` when there is none, or why it could not be read.
pub type RepoConfigRead = Result<Option<Vec<u8>>, OpenError>;

/// `.goldfish/config` as it is read (by `store`, sync and doctor): at most
/// one byte more than [`crate::domain::config::MAX_BYTES`], so a larger file is
/// told apart without reading it; `None` when there is none. Never through
/// a link in place of `.goldfish` or of the file, never from a FIFO.
pub fn read_repo_config(workspace: &Workspace) -> RepoConfigRead {
    let path = workspace.repo_config_path();
    if let Some(folder) = path.parent() {
        match fs::symlink_metadata(folder) {
            Ok(metadata) if metadata.file_type().is_symlink() => return Err(OpenError::Link),
            Ok(metadata) if !metadata.is_dir() => {
                return Err(OpenError::NotRegular(kind_of(metadata.file_type())));
            }
            _ => {}
        }
    }
    match read_regular_prefix(&path, crate::domain::config::MAX_BYTES as u64 + 1) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(OpenError::Io(err)) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}
