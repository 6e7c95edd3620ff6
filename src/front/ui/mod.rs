//! `goldfish ui`: a viewer and review queue for the team's memory, served
//! to a browser on 127.0.0.1 from the binary (pages, style sheet; no
//! script). Every page is made by the application functions the command
//! line uses (`recall`, `show`, `similar`, `tidy`, `review`, `forget`,
//! `trust`, `store --supersedes`, and a commit to keep a captured memory), on one
//! long-lived [`Session`] behind a mutex, off the async runtime.
//!
//! `guard.rs` admits requests (Host, token and cookie, Origin), `pages.rs`
//! renders them (maud: every string escaped, every memory's text through
//! the terminal escape first), `queries.rs` turns a page's query into what
//! the application functions take.

mod guard;
mod pages;
mod queries;

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::app::forget::{self, Forgot, Released};
use crate::app::keep::{self, Keeping, shell_quoted};
use crate::app::recall::{self, Recalled};
use crate::app::session::Need;
use crate::app::store::{self, FindReplaced, StoreInput};
use crate::app::tidy::{self, TidyOptions};
use crate::app::{AppError, Kind, Notice, Session, Workspace, review as branch_review, show};
use crate::domain::recalled::IndexedMemory;

pub use guard::{CSP, TOKEN_LIFETIME};
pub use queries::percent;
use queries::{Branch, Confirm, Filters};

/// The style sheet, inside the binary.
const STYLE: &str = include_str!("style.css");

/// Memories a page lists at most.
pub const PAGE: usize = 50;

/// What the handlers share: the session and the repository's root, and the
/// secrets of this start.
pub struct Ui {
    world: Mutex<World>,
    guard: guard::Guard,
}

struct World {
    session: Session,
    root: PathBuf,
}

impl World {
    fn workspace(&self) -> Result<Workspace, AppError> {
        Workspace::discover(&self.root).map_err(AppError::input)
    }
}

/// Serves the viewer of the repository at `root` until the process is
/// stopped; the URL to open goes to `out` first. A browser is opened on it
/// when `open` says so and one is found.
pub fn serve(root: PathBuf, open: bool, out: &mut dyn Write) -> Result<(), AppError> {
    let session = Session::open()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|err| AppError::from(anyhow::Error::new(err).context("starting the viewer")))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|err| anyhow::Error::new(err).context("binding 127.0.0.1"))?;
        let port = listener
            .local_addr()
            .map_err(|err| anyhow::Error::new(err).context("reading the bound port"))?
            .port();
        let guard = guard::Guard::new(port)
            .map_err(|err| anyhow::anyhow!("no randomness for the viewer's token: {err}"))?;
        let url = guard.url();
        let ui = Arc::new(Ui {
            world: Mutex::new(World { session, root }),
            guard,
        });
        writeln!(
            out,
            "goldfish ui: {url}\n(the link works once, for a minute; stop the viewer with Ctrl-C)"
        )
        .and_then(|()| out.flush())
        .map_err(|err| anyhow::Error::new(err).context("writing the URL"))?;
        if open {
            crate::app::background::open_browser(&url);
        }
        axum::serve(listener, router(ui))
            .await
            .map_err(|err| anyhow::Error::new(err).context("serving the viewer"))?;
        Ok::<(), AppError>(())
    })
}

fn router(ui: Arc<Ui>) -> Router {
    Router::new()
        .route("/", get(timeline))
        .route("/review", get(review))
        .route("/review/tidy", get(proposals))
        .route("/review/similar", get(clusters))
        .route("/review/branch", get(branches))
        .route("/memory/{id}", get(memory))
        .route("/memory/{id}/{action}", get(confirm).post(act))
        .route("/style.css", get(style))
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&ui),
            guard::check,
        ))
        .with_state(ui)
}

/// Runs `op` on the world off the async runtime; the notices it left come
/// back with its answer.
async fn run<T, F>(ui: &Arc<Ui>, op: F) -> (Result<T, AppError>, Vec<Notice>)
where
    F: FnOnce(&mut World) -> Result<T, AppError> + Send + 'static,
    T: Send + 'static,
{
    let ui = Arc::clone(ui);
    let joined = tokio::task::spawn_blocking(move || {
        let mut world = ui
            .world
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let outcome = op(&mut world);
        world.session.end_command();
        (outcome, world.session.take_notices())
    })
    .await;
    match joined {
        Ok(answer) => answer,
        Err(err) => (
            Err(AppError::from(anyhow::anyhow!("the request failed: {err}"))),
            Vec::new(),
        ),
    }
}

/// An error as a page: 400 for what the request got wrong, else 500.
fn failed(err: &AppError) -> Response {
    let status = match err.kind {
        Kind::Input => StatusCode::BAD_REQUEST,
        Kind::Failure => StatusCode::INTERNAL_SERVER_ERROR,
    };
    (status, pages::failed(&format!("{:#}", err.error))).into_response()
}

async fn timeline(State(ui): State<Arc<Ui>>, Query(filters): Query<Filters>) -> Response {
    let input = filters.recall_input();
    let (found, notices) = run(&ui, move |world| {
        recall::recall(&mut world.session, &world.root.clone(), input)
    })
    .await;
    let listed = match found {
        Ok(Recalled::Memories { hits, .. }) => pages::Listed::Memories(hits),
        Ok(Recalled::Nothing) => pages::Listed::Nothing,
        Ok(Recalled::NothingRelevant(judgement)) => {
            pages::Listed::NothingRelevant(judgement.reason())
        }
        Ok(Recalled::Digest(_)) => pages::Listed::Nothing,
        Err(err) => return failed(&err),
    };
    pages::timeline(&filters, &listed, &notices).into_response()
}

/// What the review queue lists.
pub struct Queue {
    pub captured: Vec<IndexedMemory>,
    pub quarantined: Vec<IndexedMemory>,
    pub stale: Vec<IndexedMemory>,
}

/// How many a section of the review queue lists at most.
const QUEUE: usize = 200;

async fn review(State(ui): State<Arc<Ui>>) -> Response {
    let (found, notices) = run(&ui, |world| {
        let root = world.root.clone();
        let mut list =
            |narrow: fn(&mut recall::RecallInput)| -> Result<Vec<IndexedMemory>, AppError> {
                let mut input = recall::RecallInput::plain(None, QUEUE);
                input.include_untrusted = true;
                narrow(&mut input);
                match recall::recall(&mut world.session, &root, input)? {
                    Recalled::Memories { hits, .. } => Ok(hits),
                    _ => Ok(Vec::new()),
                }
            };
        let mut captured = list(|input| input.captured = crate::domain::recall::Captured::Only)?;
        captured.retain(|memory| memory.introduced.is_none());
        let quarantined = list(|input| input.narrow.quarantined_only = true)?;
        let stale = list(|input| input.narrow.stale_only = true)?;
        Ok(Queue {
            captured,
            quarantined,
            stale,
        })
    })
    .await;
    match found {
        Ok(queue) => pages::review(&queue, &notices).into_response(),
        Err(err) => failed(&err),
    }
}

/// Tidy's proposals, on a page of their own: they weigh every memory of
/// the workspace (`tidy::find`), which the queue's page does not wait for.
async fn proposals(State(ui): State<Arc<Ui>>) -> Response {
    let (found, notices) = run(&ui, |world| {
        let workspace = world.workspace()?;
        let options = TidyOptions {
            older_than_days: 30,
        };
        Ok(tidy::find(&mut world.session, &workspace, options)?.proposals)
    })
    .await;
    match found {
        Ok(proposals) => pages::proposals(&proposals, &notices).into_response(),
        Err(err) => failed(&err),
    }
}

/// Near-duplicates the embedding model finds, or the sentence that says
/// why there are none to show.
pub type Near<T> = Result<T, String>;

/// Whether the embedding model is there; the sentence a page shows
/// instead of near-duplicates when it is not.
fn model_missing(session: &mut Session) -> Result<Option<String>, AppError> {
    Ok(session.model(Need::Optional)?.is_none().then(|| {
        "near-duplicates need the embedding model: `goldfish model install` installs it".to_owned()
    }))
}

/// Clusters of near-duplicates (`goldfish similar --scan`), on a page of
/// their own: they compare every memory's vector.
async fn clusters(State(ui): State<Arc<Ui>>) -> Response {
    let (found, notices) = run(&ui, |world| {
        if let Some(missing) = model_missing(&mut world.session)? {
            return Ok(Err(missing));
        }
        let workspace = world.workspace()?;
        Ok(Ok(show::duplicate_clusters(
            &mut world.session,
            &workspace,
            show::SIMILAR,
            10,
        )?))
    })
    .await;
    match found {
        Ok(clusters) => pages::clusters(&clusters, &notices).into_response(),
        Err(err) => failed(&err),
    }
}

/// The review of a branch as a pull request of it would get
/// (`goldfish review`), for a branch chosen from the repository's list.
async fn branches(State(ui): State<Arc<Ui>>, Query(branch): Query<Branch>) -> Response {
    let chosen = branch.name.filter(|name| !name.is_empty());
    let (found, notices) = run(&ui, move |world| {
        let workspace = world.workspace()?;
        let names = branch_review::branches(&workspace)?;
        let reviewed = match chosen {
            // Only a name of the list is reviewed; `review_branch` looks
            // it up again and hands git the tip's id alone.
            Some(name) if names.contains(&name) => {
                let now = world.session.now()?;
                let review = branch_review::review_branch(&workspace, &name, now)
                    .map_err(|err| format!("{:#}", err.error));
                Some((name, review))
            }
            Some(name) => Some((
                name,
                Err("not a branch of this repository: choose one of the list".to_owned()),
            )),
            None => None,
        };
        Ok((names, reviewed))
    })
    .await;
    match found {
        Ok((names, reviewed)) => {
            pages::branches(&names, reviewed.as_ref(), &notices).into_response()
        }
        Err(err) => failed(&err),
    }
}

/// A memory id as the viewer accepts it in a path: a ULID or a prefix.
fn id_ok(id: &str) -> bool {
    !id.is_empty() && id.len() <= 26 && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The memory `id` names and the chain of those it supersedes and that
/// supersede it, oldest first.
pub struct Shown {
    pub memory: IndexedMemory,
    pub older: Vec<IndexedMemory>,
    pub newer: Vec<IndexedMemory>,
}

/// Near-duplicates a memory page lists at most.
const NEAR: usize = 10;

/// The near-duplicates of the memory `id`, as `goldfish similar ID` finds
/// them; a sentence instead when the model is missing or the memory has no
/// vector yet.
fn near_duplicates(world: &mut World, id: &str) -> Result<Near<Vec<IndexedMemory>>, AppError> {
    if let Some(missing) = model_missing(&mut world.session)? {
        return Ok(Err(missing));
    }
    let workspace = world.workspace()?;
    let target = show::Target::Id(id.to_owned());
    Ok(
        show::similar(&mut world.session, &workspace, target, show::SIMILAR, NEAR)
            .map_err(|err| format!("{:#}", err.error)),
    )
}

/// Links of a supersession chain followed at most.
const CHAIN: usize = 8;

fn shown(world: &mut World, id: &str) -> Result<Shown, AppError> {
    let root = world.root.clone();
    let mut one = |id: &str| -> Result<IndexedMemory, AppError> {
        let mut found = show::show(&mut world.session, &root, &[id.to_owned()])?;
        found
            .pop()
            .ok_or_else(|| AppError::input(anyhow::anyhow!("no memory has the id `{id}`")))
    };
    let memory = one(id)?;
    let mut older = Vec::new();
    let mut next = memory.supersedes.clone();
    while let Some(id) = next.take()
        && older.len() < CHAIN
    {
        let Ok(found) = one(&id) else { break };
        next = found.supersedes.clone();
        older.insert(0, found);
    }
    let mut newer = Vec::new();
    let mut next = memory.superseded_by.clone();
    while let Some(id) = next.take()
        && newer.len() < CHAIN
    {
        let Ok(found) = one(&id) else { break };
        next = found.superseded_by.clone();
        newer.push(found);
    }
    Ok(Shown {
        memory,
        older,
        newer,
    })
}

async fn memory(State(ui): State<Arc<Ui>>, Path(id): Path<String>) -> Response {
    if !id_ok(&id) {
        return not_found().await;
    }
    let (found, notices) = run(&ui, move |world| {
        let shown = shown(world, &id)?;
        let near = near_duplicates(world, &shown.memory.id)?;
        Ok((shown, near))
    })
    .await;
    match found {
        Ok((shown, near)) => pages::memory(&shown, &near, &notices).into_response(),
        Err(err) => failed(&err),
    }
}

/// An action of the viewer, and the command a person could have typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Forget,
    Trust,
    /// A new memory that replaces this one (`store --supersedes`).
    Supersede,
    /// Commit a captured memory's log file.
    Keep,
}

impl Action {
    fn parse(name: &str) -> Option<Action> {
        match name {
            "forget" => Some(Action::Forget),
            "trust" => Some(Action::Trust),
            "supersede" => Some(Action::Supersede),
            "keep" => Some(Action::Keep),
            _ => None,
        }
    }

    /// Its name in the URL and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Action::Forget => "forget",
            Action::Trust => "trust",
            Action::Supersede => "supersede",
            Action::Keep => "keep",
        }
    }
}

/// The command line of `goldfish store` that stores `form`'s memory in
/// place of `id`.
pub fn store_command(id: &str, form: &Confirm) -> String {
    let mut words = vec!["goldfish store".to_owned()];
    let kind = form.kind.trim();
    if !kind.is_empty() {
        words.push(format!("-t {}", shell_quoted(kind)));
    }
    for (flag, value) in [("--tags", &form.tags), ("--files", &form.files)] {
        if !value.trim().is_empty() {
            words.push(format!("{flag} {}", shell_quoted(value.trim())));
        }
    }
    words.push(format!("--supersedes {}", shell_quoted(id)));
    words.push(shell_quoted(&form.text));
    words.join(" ")
}

async fn confirm(
    State(ui): State<Arc<Ui>>,
    Path((id, action)): Path<(String, String)>,
) -> Response {
    let Some(action) = Action::parse(&action).filter(|_| id_ok(&id)) else {
        return not_found().await;
    };
    let (found, notices) = run(&ui, move |world| {
        let shown = shown(world, &id)?;
        let keeping = match action {
            Action::Keep => {
                let workspace = world.workspace()?;
                Some(keep::keeping(
                    &mut world.session,
                    &workspace,
                    &shown.memory.id,
                )?)
            }
            _ => None,
        };
        Ok((shown, keeping))
    })
    .await;
    match found {
        Ok((shown, keeping)) => pages::confirm(
            &shown.memory,
            action,
            keeping.as_ref(),
            &ui.guard.form_key,
            &notices,
        )
        .into_response(),
        Err(err) => failed(&err),
    }
}

/// What an action did: a line appended (shown as the log has it), or why
/// nothing was.
pub enum Done {
    /// A line appended to the log, and the command that appends it.
    Appended {
        target: String,
        line: String,
        command: String,
    },
    /// A captured memory's file committed.
    Committed {
        kept: Box<Keeping>,
        commit: String,
        command: String,
    },
    Nothing(String),
}

async fn act(
    State(ui): State<Arc<Ui>>,
    Path((id, action)): Path<(String, String)>,
    Form(form): Form<Confirm>,
) -> Response {
    let Some(action) = Action::parse(&action).filter(|_| id_ok(&id)) else {
        return not_found().await;
    };
    if !ui.guard.form_key_ok(&form.key) {
        return guard::refusal_page(guard::Refusal::Origin);
    }
    let (done, notices) = run(&ui, move |world| {
        let workspace = world.workspace()?;
        Ok(match action {
            Action::Forget => match forget::forget(&mut world.session, &workspace, &id)? {
                Forgot::Done { target, tombstone } => Done::Appended {
                    command: format!("goldfish forget {target}"),
                    target,
                    line: tombstone.to_line(),
                },
                Forgot::Already { id, at } => {
                    Done::Nothing(format!("{id} is already forgotten (since {at})"))
                }
            },
            Action::Trust => match forget::release(&mut world.session, &workspace, &id)? {
                Released::Done {
                    target, release, ..
                } => Done::Appended {
                    command: format!("goldfish trust {target}"),
                    target,
                    line: release.to_line(),
                },
                Released::NotQuarantined { id, reasons } => Done::Nothing(format!(
                    "{id} is not quarantined ({}): nothing to release",
                    reasons.join(", ")
                )),
            },
            Action::Supersede => {
                let list = |text: &str| -> Vec<String> {
                    text.split(',')
                        .map(str::trim)
                        .filter(|item| !item.is_empty())
                        .map(str::to_owned)
                        .collect()
                };
                let stored = store::store(
                    &mut world.session,
                    &workspace,
                    StoreInput {
                        content: form.text.clone().into_bytes(),
                        kind: form.kind.trim().to_owned(),
                        tags: list(&form.tags),
                        files: list(&form.files),
                        source: None,
                        allow_secret: false,
                        // The person chose to replace this memory: a
                        // near-duplicate of it is what they mean.
                        refuse_similar: false,
                        agent_session: None,
                        vector: None,
                        supersedes: Some(id.clone()),
                        replaced: FindReplaced::Skip,
                    },
                )?;
                Done::Appended {
                    command: store_command(&id, &form),
                    target: stored.entry.id().to_owned(),
                    line: stored.entry.to_line(),
                }
            }
            Action::Keep => {
                let kept = keep::keep(&mut world.session, &workspace, &id)?;
                Done::Committed {
                    command: kept.keeping.command(),
                    commit: kept.commit,
                    kept: Box::new(kept.keeping),
                }
            }
        })
    })
    .await;
    match done {
        Ok(done) => pages::done(action, &done, &notices).into_response(),
        Err(err) => failed(&err),
    }
}

async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
}

async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, pages::failed("no such page")).into_response()
}
