//! `goldfish ui`: a viewer and review queue for the team's memory, served
//! to a browser on 127.0.0.1 from the binary (pages, style sheet; no
//! script). Every page is made by the application functions the command
//! line uses (`recall`, `show`, `tidy`, `forget`, `trust`), on one
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
use crate::app::recall::{self, Recalled};
use crate::app::tidy::{self, TidyOptions};
use crate::app::{AppError, Kind, Notice, Session, Workspace, show};
use crate::domain::recalled::IndexedMemory;

pub use guard::{CSP, TOKEN_LIFETIME};
use queries::{Confirm, Filters};

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
    let (found, notices) = run(&ui, move |world| shown(world, &id)).await;
    match found {
        Ok(shown) => pages::memory(&shown, &notices).into_response(),
        Err(err) => failed(&err),
    }
}

/// An action of the viewer, and the command a person could have typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Forget,
    Trust,
}

impl Action {
    fn parse(name: &str) -> Option<Action> {
        match name {
            "forget" => Some(Action::Forget),
            "trust" => Some(Action::Trust),
            _ => None,
        }
    }

    /// Its name in the URL and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Action::Forget => "forget",
            Action::Trust => "trust",
        }
    }

    /// The command line that does the same.
    pub fn command(self, id: &str) -> String {
        format!("goldfish {} {id}", self.name())
    }
}

async fn confirm(
    State(ui): State<Arc<Ui>>,
    Path((id, action)): Path<(String, String)>,
) -> Response {
    let Some(action) = Action::parse(&action).filter(|_| id_ok(&id)) else {
        return not_found().await;
    };
    let (found, notices) = run(&ui, move |world| shown(world, &id)).await;
    match found {
        Ok(shown) => {
            pages::confirm(&shown.memory, action, &ui.guard.form_key, &notices).into_response()
        }
        Err(err) => failed(&err),
    }
}

/// What an action did: a line appended (shown as the log has it), or why
/// nothing was.
pub enum Done {
    Appended { target: String, line: String },
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
                    target,
                    line: release.to_line(),
                },
                Released::NotQuarantined { id, reasons } => Done::Nothing(format!(
                    "{id} is not quarantined ({}): nothing to release",
                    reasons.join(", ")
                )),
            },
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
