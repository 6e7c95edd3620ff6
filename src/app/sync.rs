//! The one path to the index: a keyword sync under the workspace's lock,
//! then as much embedding as the caller's [`Embed`] policy asks for, under
//! the home's embedding lock.

use anyhow::Context;

use super::AppError;
use super::notice::Notice;
use super::session::{Need, Session};
use crate::adapters::env;
use crate::adapters::git::{MEMORY_DIR, REPO_CONFIG, Workspace};
use crate::adapters::index::Index;
use crate::adapters::index::locks::{self, Exclusive, Waited};
use crate::adapters::memdir::{Drained, LogError, MemoryDir};
use crate::adapters::sync::{self as index_sync, SyncOptions, SyncProblem, SyncReport};
use crate::domain::config::RepoConfig;
use crate::domain::recall::Scope;

/// How much a sync embeds after its keyword part (nothing without a model).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embed {
    /// Keywords only.
    Keywords,
    /// At most this many texts; the rest waits for `goldfish sync`, and is
    /// left to another process that is embedding.
    UpTo(usize),
    /// Everything pending, waiting for another embedder (with the
    /// session's progress, if it has one).
    All,
}

/// How many texts a read (`store`, `recall`) embeds on its way.
pub const READ_EMBED_LIMIT: usize = 64;

/// What a read (`store`, `recall`) embeds on its way.
pub const READ_EMBEDS: Embed = Embed::UpTo(READ_EMBED_LIMIT);

/// How long a read waits for another sync of its workspace to finish.
const READS_WAIT_FOR_SYNC: std::time::Duration = std::time::Duration::from_secs(10);

/// The workspace the process runs in.
pub fn current_workspace() -> Result<Workspace, AppError> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Workspace::discover(&cwd).map_err(AppError::input)
}

/// The current workspace as a recall scope (empty when never synced).
pub fn scope_of(index: &Index, workspace: &Workspace) -> Result<Scope, AppError> {
    let row = index.workspace_by_root(workspace.root())?;
    Ok(Scope::Workspaces(
        row.map(|row| vec![row.id]).unwrap_or_default(),
    ))
}

/// Syncs `workspace` under its sync lock, then embeds as `embed` says
/// under the home's embedding lock. `None` when another sync holds the
/// workspace's lock: it will pick up whatever this one would have seen.
///
/// Embedding runs after the workspace's lock is released, so a reader
/// waiting for a running sync ([`locks::wait_for_running`]) waits for
/// the keyword part (milliseconds), never for the model (seconds).
pub fn sync_workspace(
    session: &mut Session,
    workspace: &Workspace,
    embed: Embed,
) -> Result<Option<SyncReport>, AppError> {
    Ok(sync_or_hand(session, workspace, embed, false)?.ran())
}

/// [`sync_workspace`] for a store: the keyword index is left for the next
/// reader to catch up ([`SyncOptions::keywords_later`]), so memories
/// stored one after another are written to it together.
pub fn sync_after_store(
    session: &mut Session,
    workspace: &Workspace,
    embed: Embed,
) -> Result<Option<SyncReport>, AppError> {
    Ok(sync_or_hand(session, workspace, embed, true)?.ran())
}

/// [`sync_workspace`], with the ticket of a request handed to a running
/// sync.
fn sync_or_hand(
    session: &mut Session,
    workspace: &Workspace,
    embed: Embed,
    keywords_later: bool,
) -> Result<Exclusive<SyncReport>, AppError> {
    let options = SyncOptions {
        keywords_later,
        abort_before_commit: env::fault("sync-abort"),
        now: session.now().ok(),
        // A sync that embeds everything (`goldfish sync`, `reindex`,
        // `import`, `similar --scan`) checks every file too.
        every_file: embed == Embed::All,
    };
    // What a store set aside while git was busy goes into the log first.
    drain_journal(session, workspace, false)?;
    let locks_dir = session.home.locks_dir();
    let config = session.repo_config_read(workspace);
    let index = session.index()?;
    let slow = env::fault("sync-slow") && index_lags(index, workspace).unwrap_or(true);
    let mut report = match locks::exclusive(&locks_dir, workspace.root(), || {
        if slow {
            std::thread::sleep(std::time::Duration::from_secs(3));
        }
        index_sync::sync(index, workspace, &config, options).map_err(AppError::from)
    })? {
        Exclusive::Ran(report) => report,
        handed @ Exclusive::Handed(_) => return Ok(handed),
    };
    session.trace.syncs += 1;
    session.trace.folder_unchanged += usize::from(report.folder_unchanged);
    // The sync checked no type against a config it could not read.
    if let Err(err) = repo_config(session, workspace) {
        session.notice(Notice::warning(format!(
            "{:#}; memory types were not checked, and recall applies the trust policy the index last read",
            err.error
        )));
    }
    let limit = match embed {
        Embed::Keywords => return Ok(Exclusive::Ran(report)),
        Embed::UpTo(limit) => Some(limit),
        Embed::All => None,
    };
    if let Some(embedded) = embed_pending(session, limit)? {
        report.embedded = embedded.0;
        report.pending_embeddings = Some(embedded.1);
        // A read embeds a few; the rest (a fresh clone: all of them) goes to
        // one background embedder for the home, so semantic recall becomes
        // whole without anyone running `goldfish sync`.
        if limit.is_some() && embedded.1 > 0 {
            report.embedding_in_background = start_background_embedding(session, workspace);
        }
    }
    Ok(Exclusive::Ran(report))
}

/// Starts a background `goldfish sync` of `workspace` to embed what is
/// queued, unless an embedder already runs for the home (it will embed the
/// queue, which every workspace shares). Whether one runs now; a failure to
/// start one is a notice, never an error of the read.
pub fn start_background_embedding(session: &mut Session, workspace: &Workspace) -> bool {
    if locks::embedding_running(&session.home.locks_dir()) {
        return true;
    }
    match super::background::start_sync(&session.home, workspace) {
        Ok(_) => true,
        Err(err) => {
            session.notice(Notice::warning(format!(
                "{err:#}; run `goldfish sync` to embed the rest"
            )));
            false
        }
    }
}

/// Appends what a store set aside in the journal while git was busy (see
/// `MemoryDir::drain_journal`), once per command and work tree.
pub fn drain_journal(
    session: &mut Session,
    workspace: &Workspace,
    rewriting: bool,
) -> Result<(), AppError> {
    if session.drained.iter().any(|root| root == workspace.root()) {
        return Ok(());
    }
    let drained = MemoryDir::of(workspace).drain_journal(rewriting)?;
    session.drained.push(workspace.root().to_owned());
    for notice in journal_notices(&drained) {
        session.notice(notice);
    }
    Ok(())
}

/// What a drain of the journal tells the user: a line the store had placed
/// and git took out again is back (and how to discard a store for good); a
/// line the user restored away is left out.
pub fn journal_notices(drained: &Drained) -> Vec<Notice> {
    let mut notices = Vec::new();
    for line in &drained.put_back {
        let (what, discard) = match line.record {
            "memory" => (
                "memory",
                format!(" To discard it for good: `goldfish forget {}`.", line.id),
            ),
            "tombstone" => ("the forget line", String::new()),
            _ => ("the trust line", String::new()),
        };
        notices.push(Notice::note(format!(
            "{what} {} is back in {MEMORY_DIR}/{}: git rewrote the file without it {} after its store, and a store is kept for a minute against git commands racing it (a pull, a checkout, a stash).{discard}",
            line.id,
            line.file,
            age(line.age_ms)
        )));
    }
    for line in &drained.left_out {
        let what = match line.record {
            "memory" => "memory",
            "tombstone" => "the forget line",
            _ => "the trust line",
        };
        notices.push(Notice::note(format!(
            "{what} {} is left out of {MEMORY_DIR}/{}: the file was restored to HEAD's version {} after its store (`git restore`), so the store is discarded, not put back",
            line.id,
            line.file,
            age(line.age_ms)
        )));
    }
    notices
}

/// "12 s", "850 ms".
fn age(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{} s", ms / 1000)
    }
}

/// Whether the index lags `workspace`: a memory file changed or went (stat
/// data), or HEAD moved, since its last sync (what a store set aside in
/// the journal goes into its file first). Reads no memory file.
pub fn lags(session: &mut Session, workspace: &Workspace) -> Result<bool, AppError> {
    drain_journal(session, workspace, false)?;
    index_lags(session.index()?, workspace)
}

/// [`lags`], without draining the journal first.
pub fn index_lags(index: &Index, workspace: &Workspace) -> Result<bool, AppError> {
    let Some(row) = index.workspace_by_root(workspace.root())? else {
        return Ok(true);
    };
    if row.head_commit != workspace.head_commit().map(|id| id.to_string()) {
        return Ok(true);
    }
    Ok(!index_sync::changed_files(index, workspace)?.is_empty())
}

/// Embeds what the index has queued, at most `limit` texts (all when
/// `None`, waiting for another embedder, with the session's progress):
/// how many it embedded and how many are left. `None` without a model.
pub fn embed_pending(
    session: &mut Session,
    limit: Option<usize>,
) -> Result<Option<(usize, u64)>, AppError> {
    let locks_dir = session.home.locks_dir();
    let mut progress = match limit {
        None => session.progress.take(),
        Some(_) => None,
    };
    let (index, Some(model)) = session.index_and_model(Need::Optional)? else {
        session.progress = progress;
        return Ok(None);
    };
    // Embeddings are shared by every workspace of the home. Who asked for
    // everything waits for another embedder; who asked for a few leaves the
    // queue to it.
    let embedded = locks::embedding(&locks_dir, limit.is_none(), || {
        // A new model queues everything again: vector spaces never mix.
        index.use_model(&model.id())?;
        let pending = index.pending_embeddings()?;
        if pending == 0 {
            return Ok::<usize, AppError>(0);
        }
        if let Some(progress) = progress.as_mut() {
            progress.start(pending);
        }
        // A pass over everything tells `status` how far it is.
        let mut record = limit.is_none().then(|| locks::EmbedProgress {
            started: locks::unix_now(),
            total: pending,
            done: 0,
            updated: locks::unix_now(),
        });
        if let Some(record) = &record {
            record.write(&locks_dir);
        }
        let embedder = model.embedder()?;
        let embedded = index
            .embed_pending(embedder, limit, &mut |done, _| {
                if let Some(progress) = progress.as_mut() {
                    progress.set(done as u64);
                }
                if let Some(record) = record.as_mut() {
                    record.done = done as u64;
                    record.updated = locks::unix_now();
                    record.write(&locks_dir);
                }
            })
            .context("embedding memories")?;
        if let Some(progress) = progress.as_mut() {
            progress.finish();
        }
        Ok(embedded.embedded)
    });
    let pending = index.pending_embeddings()?;
    session.progress = progress;
    let embedded = embedded?.unwrap_or(0);
    session.trace.texts_embedded += embedded;
    Ok(Some((embedded, pending)))
}

/// Syncs `workspace` before a read. A sync that finds another running hands
/// it its request and returns at once: this waits (a while) for the holder's
/// first pass after the request, so a read sees what was just stored.
pub fn sync_for_reading(
    session: &mut Session,
    workspace: &Workspace,
    embed: Embed,
) -> Result<Option<SyncReport>, AppError> {
    sync_waiting(session, workspace, embed, READS_WAIT_FOR_SYNC)
}

/// [`sync_for_reading`], waiting at most `wait` for a running sync.
pub fn sync_waiting(
    session: &mut Session,
    workspace: &Workspace,
    embed: Embed,
    wait: std::time::Duration,
) -> Result<Option<SyncReport>, AppError> {
    let deadline = std::time::Instant::now() + wait;
    loop {
        let ticket = match sync_or_hand(session, workspace, embed, false)? {
            Exclusive::Ran(report) => return Ok(Some(report)),
            Exclusive::Handed(ticket) => ticket,
        };
        let locks_dir = session.home.locks_dir();
        match locks::wait_for_running(&locks_dir, workspace.root(), ticket, deadline)? {
            Waited::Synced => return Ok(None),
            Waited::SyncAgain => {}
            Waited::TimedOut => {
                session.notice(Notice::note(
                    "another sync of this workspace is still running; results may miss what it has not indexed yet",
                ));
                return Ok(None);
            }
        }
    }
}

/// How long a catch-up waits for a sync that holds the workspace's lock
/// (the prompt whose lookup ran out of time may still hold it an instant;
/// a git hook's background sync, minutes).
const CATCH_UP_WAITS_FOR_SYNC: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// `goldfish sync --catch-up`, the background sync a prompt left a lagging
/// index to ([`super::background::start_catch_up`]): syncs and embeds
/// everything, and when another sync holds the lock waits for a pass of
/// it that began after this one asked, or for the lock to fall free with
/// none (its holder was killed: a prompt cut off at its budget), and then
/// syncs itself. `None` when the holder's pass did the work.
pub fn catch_up(
    session: &mut Session,
    workspace: &Workspace,
) -> Result<Option<SyncReport>, AppError> {
    sync_waiting(session, workspace, Embed::All, CATCH_UP_WAITS_FOR_SYNC)
}

/// What a sync skipped or could not do, as warnings (each names what it is
/// about: [`SyncProblem`]'s `Display`).
pub fn problems(session: &mut Session, problems: &[SyncProblem]) {
    for problem in problems {
        session.notice(Notice::warning(problem.to_string()));
    }
}

/// The repository's `.goldfish/config` (the default when there is none),
/// as the command read it ([`Session::repo_config_read`]).
pub fn repo_config(session: &mut Session, workspace: &Workspace) -> Result<RepoConfig, AppError> {
    use crate::adapters::memdir::OpenError;
    let path = workspace.repo_config_path();
    // `.goldfish` itself a link: the config would come from outside.
    if let Err(err @ LogError::Unsafe { .. }) = MemoryDir::of(workspace).check_config_folder() {
        return Err(AppError::input(err));
    }
    match &*session.repo_config_read(workspace) {
        Ok(Some(bytes)) => RepoConfig::from_file(bytes)
            .with_context(|| format!("{REPO_CONFIG} is invalid"))
            .map_err(AppError::input),
        Ok(None) => Ok(RepoConfig::default()),
        // The read is kept for the command: its error, told again.
        Err(OpenError::Io(err)) => Err(anyhow::Error::new(std::io::Error::new(
            err.kind(),
            err.to_string(),
        ))
        .context(format!("cannot read {}", path.display()))
        .into()),
        Err(OpenError::Link) => Err(AppError::input(anyhow::anyhow!(
            "{REPO_CONFIG} is a symbolic link, not followed (it could point out of the repository); replace it with a regular file"
        ))),
        Err(OpenError::NotRegular(kind)) => Err(AppError::input(anyhow::anyhow!(
            "{REPO_CONFIG} is {kind}, not a regular file; replace it with one"
        ))),
    }
}

/// What a rebuild did with one workspace the index knew (or the current one).
#[derive(Debug)]
pub enum Rebuilt {
    /// Synced from scratch.
    Synced(SyncReport),
    /// No longer a repository (why): dropped from the index.
    Dropped {
        root: std::path::PathBuf,
        reason: String,
    },
}

/// Rebuilds the index from the logs: forgets everything, then syncs every
/// workspace it knew and `current` again, in that order. A workspace
/// another sync holds is left to it.
pub fn rebuild(
    session: &mut Session,
    current: Option<&Workspace>,
) -> Result<Vec<Rebuilt>, AppError> {
    let index = session.index()?;
    let mut roots: Vec<std::path::PathBuf> = index
        .workspaces()?
        .into_iter()
        .map(|row| std::path::PathBuf::from(row.root))
        .collect();
    index.clear()?;
    if let Some(current) = current
        && !roots.iter().any(|root| root == current.root())
    {
        roots.push(current.root().to_owned());
    }
    let mut rebuilt = Vec::new();
    for root in roots {
        let workspace = match Workspace::discover(&root) {
            Ok(workspace) => workspace,
            Err(err) => {
                rebuilt.push(Rebuilt::Dropped {
                    root,
                    reason: err.to_string(),
                });
                continue;
            }
        };
        if workspace.root() != root {
            continue;
        }
        // An installed model that cannot be used stops a rebuild: it says why.
        session.model(Need::Usable)?;
        if let Some(report) = sync_workspace(session, &workspace, Embed::All)? {
            rebuilt.push(Rebuilt::Synced(report));
        }
    }
    Ok(rebuilt)
}
