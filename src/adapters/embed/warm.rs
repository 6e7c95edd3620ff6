//! The warm embedder: one `goldfish model warm` process per home and model
//! keeps the model loaded and embeds texts for the home's other commands
//! over a Unix socket, so that a command pays a connection instead of
//! loading the model (ONNX Runtime, the graph and its first run: most of a
//! cold `recall` or `store`, `cargo bench --bench recall`).
//!
//! The rules of its life (`tests/it/warm.rs` checks each):
//!
//! - **One per home and model.** The server holds `warm/<model>.lock`
//!   (`flock`) for its whole life; a second one finds it held (for a
//!   second) and exits before loading anything.
//! - **Ready when it answers.** The socket is bound under a temporary name
//!   and renamed to `warm/<model>.sock` only once the model is loaded, so a
//!   client that connects is served at once.
//! - **It ends by itself**: after `idle` without a request; when its socket
//!   is removed or replaced (the home was deleted); when its own executable
//!   changed on disk (an upgrade); and when a client of another build says
//!   hello (so the next command starts one of its own build). Never in the
//!   middle of a request.
//! - **Never required.** A client treats anything but a whole, well-formed
//!   answer (no server, a refused hello, a timeout, a server killed
//!   mid-request, a short or malformed reply) as "embed it yourself".
//! - **The home's owner only.** `warm/` is created `0700` and the socket
//!   `0600`; the server only embeds the texts it is sent, runs nothing and
//!   reads nothing else. A client believes an answer only from a folder
//!   and a socket of its own user that no one else may write to, with a
//!   process of that user at the other end (`SO_PEERCRED`); one vector for
//!   different texts is refused; a process that does not answer in time is
//!   not asked again, and its socket is removed so the next command does
//!   not wait for it.
//!
//! The wire: each side writes one JSON line, and an answer of vectors is
//! followed by `count × dims` little-endian `f32`s.
//!
//! ```text
//! client: {"protocol":1,"build":"…","model":"all-MiniLM-L6-v2@6fa4…"}
//! server: {"ok":true}                      (or {"ok":false,"error":"…"})
//! client: {"kind":"query","texts":["…"]}
//! server: {"ok":true,"count":1,"dims":384} + 1,536 bytes
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

use super::{EmbedError, Embedder, TextKind};

/// Bumped whenever the wire or what a vector means changes.
pub const PROTOCOL: u32 = 1;

/// The longest request line a server reads (texts are short memories and
/// questions; a sync sends batches of 128).
const MAX_REQUEST: u64 = 64 << 20;
/// The most texts one request may hold.
const MAX_TEXTS: usize = 4096;
/// How long a client waits for the hello's answer: the server answers it
/// at once, so a slower one is stuck or starved and the client goes on
/// without it.
const HELLO_TIMEOUT: Duration = Duration::from_secs(1);
/// How long the server waits for a client to take an answer: one that
/// does not read keeps no request, and so no server, alive past it.
const WRITE_TIMEOUT: Duration = if cfg!(test) {
    Duration::from_millis(300)
} else {
    Duration::from_secs(10)
};
/// The longest path a Unix socket can be bound or reached at.
const MAX_SOCKET_PATH: usize = 107;
/// How often the server checks whether it should end.
const TICK: Duration = Duration::from_millis(250);
/// How long a new server waits for the lock (a retiring one lets it go
/// within a tick) before it leaves the home to the one that holds it.
const LOCK_WAIT: Duration = Duration::from_secs(1);

/// Where a home's warm process for one model lives.
#[derive(Debug, Clone)]
pub struct Paths {
    pub dir: PathBuf,
    pub socket: PathBuf,
    pub lock: PathBuf,
    /// What the running server says of itself ([`Info`]).
    pub info: PathBuf,
}

impl Paths {
    /// The files for `model` (a folder name under the home's `models/`) in
    /// `dir` (the home's `warm/`); `None` for a name that is not a plain
    /// file name, or a socket path too long to bind.
    pub fn new(dir: &Path, model: &str) -> Option<Paths> {
        let plain = !model.is_empty()
            && model.len() <= 64
            && !model.starts_with('.')
            && model
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        let socket = dir.join(format!("{model}.sock"));
        // A socket's path holds at most 107 bytes (Linux's `sun_path`): a
        // home deeper than that has no warm process.
        let fits = socket.as_os_str().len() <= MAX_SOCKET_PATH;
        (plain && fits).then(|| Paths {
            dir: dir.to_owned(),
            socket,
            lock: dir.join(format!("{model}.lock")),
            info: dir.join(format!("{model}.json")),
        })
    }
}

impl Paths {
    /// Removes the socket of a process that did not answer in time, so the
    /// next command starts a new one rather than wait as well (a server
    /// ends when its socket is removed). Best effort.
    pub fn abandon(&self) {
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// Who is talking: the first line of each connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    pub protocol: u32,
    /// This executable's identity ([`build_id`]): vectors are only
    /// exchanged between processes of one build.
    pub build: String,
    /// The model's id (`name@sha`): a reinstalled model is another one.
    pub model: String,
}

impl Hello {
    pub fn new(model: String) -> Hello {
        Hello {
            protocol: PROTOCOL,
            build: build_id(),
            model,
        }
    }
}

/// The running executable's version, size, inode and modification time: a
/// rebuilt or upgraded binary is another build (its embedding code may
/// differ), without a build script.
pub fn build_id() -> String {
    let stat = std::env::current_exe().and_then(std::fs::metadata);
    match stat {
        Ok(meta) => format!(
            "{}:{}:{}:{}.{}",
            env!("CARGO_PKG_VERSION"),
            meta.len(),
            meta.ino(),
            meta.mtime(),
            meta.mtime_nsec()
        ),
        // `/proc/self/exe` names a deleted file: this build is gone.
        Err(_) => format!("{}:gone", env!("CARGO_PKG_VERSION")),
    }
}

/// What a running server writes of itself for `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Info {
    pub pid: u32,
    pub model: String,
    /// When it became ready (Unix seconds).
    pub started: f64,
    /// Seconds without a request after which it ends.
    pub idle_secs: u64,
}

impl Info {
    /// The running server's info: `None` when none runs (nobody holds the
    /// lock; the lock is taken for an instant to find out).
    pub fn running(paths: &Paths) -> Option<Info> {
        let lock = std::fs::File::open(&paths.lock).ok()?;
        match lock.try_lock() {
            Ok(()) => None,
            Err(std::fs::TryLockError::WouldBlock) => {
                let text = std::fs::read_to_string(&paths.info).ok()?;
                serde_json::from_str(&text).ok()
            }
            Err(std::fs::TryLockError::Error(_)) => None,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Request {
    kind: Kind,
    texts: Vec<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Query,
    Document,
}

impl From<TextKind> for Kind {
    fn from(kind: TextKind) -> Kind {
        match kind {
            TextKind::Query => Kind::Query,
            TextKind::Document => Kind::Document,
        }
    }
}

impl From<Kind> for TextKind {
    fn from(kind: Kind) -> TextKind {
        match kind {
            Kind::Query => TextKind::Query,
            Kind::Document => TextKind::Document,
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Answer {
    ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    count: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dims: Option<usize>,
}

impl Answer {
    fn refused(why: impl Into<String>) -> Answer {
        Answer {
            ok: false,
            error: Some(why.into()),
            ..Answer::default()
        }
    }
}

/// Why a client could not use the warm process (the caller embeds in its
/// own process; the reason is for logs and tests).
#[derive(Debug, thiserror::Error)]
pub enum WarmError {
    #[error("no warm process answers at {}", .0.display())]
    Absent(PathBuf),
    #[error("the warm process refused: {0}")]
    Refused(String),
    #[error("the warm process's answer was unusable: {0}")]
    Malformed(String),
    #[error("{} is not this user's own: {}", .0.display(), .1)]
    Foreign(PathBuf, String),
    #[error("talking to the warm process: {0}")]
    Io(#[from] std::io::Error),
}

impl WarmError {
    /// The process took longer than the client waits: it is stuck, or
    /// something else sits at the socket.
    pub fn timed_out(&self) -> bool {
        matches!(self, WarmError::Io(err) if matches!(err.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
    }
}

/// Refuses a warm folder or socket that is not this user's alone (a home
/// shared or set up by someone else): vectors from it would decide what
/// every recall finds.
fn check_owner(paths: &Paths) -> Result<(), WarmError> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let foreign = |path: &Path, why: &str| WarmError::Foreign(path.to_owned(), why.to_owned());
    let socket = std::fs::symlink_metadata(&paths.socket)
        .map_err(|_| WarmError::Absent(paths.socket.clone()))?;
    let dir = std::fs::symlink_metadata(&paths.dir)
        .map_err(|_| WarmError::Absent(paths.socket.clone()))?;
    // Others could put a socket of their own in a folder they may write to.
    if !dir.is_dir() || dir.uid() != me || dir.mode() & 0o022 != 0 {
        return Err(foreign(
            &paths.dir,
            "owned by another user, a link, or writable by others",
        ));
    }
    if !std::os::unix::fs::FileTypeExt::is_socket(&socket.file_type()) || socket.uid() != me {
        return Err(foreign(&paths.socket, "not a socket of this user"));
    }
    Ok(())
}

/// The user id of the process at the other end of `stream`.
fn peer_uid(stream: &UnixStream) -> std::io::Result<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the sizes given.
    let done = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut cred).cast(),
            &raw mut len,
        )
    };
    if done != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(cred.uid)
}

/// A connection to a warm process that said yes to our hello.
pub struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    dims: usize,
}

impl Client {
    /// Connects and says hello; `dims` is what every vector must have.
    pub fn connect(paths: &Paths, hello: &Hello, dims: usize) -> Result<Client, WarmError> {
        check_owner(paths)?;
        let stream = UnixStream::connect(&paths.socket)
            .map_err(|_| WarmError::Absent(paths.socket.clone()))?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        if peer_uid(&stream)? != unsafe { libc::geteuid() } {
            return Err(WarmError::Foreign(
                paths.socket.clone(),
                "the process behind it is another user's".into(),
            ));
        }
        stream.set_read_timeout(Some(HELLO_TIMEOUT))?;
        stream.set_write_timeout(Some(HELLO_TIMEOUT))?;
        let mut client = Client {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
            dims,
        };
        client.send(hello)?;
        let answer = client.answer()?;
        if !answer.ok {
            return Err(WarmError::Refused(answer.error.unwrap_or_default()));
        }
        Ok(client)
    }

    /// The vectors of `texts`, computed by the warm process.
    pub fn embed(&mut self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, WarmError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        // Generous: a batch of 128 long texts takes about a second on two
        // busy cores; a server that takes longer is treated as gone.
        let timeout = Duration::from_secs(10) + Duration::from_millis(100) * texts.len() as u32;
        self.embed_within(texts, kind, timeout)
    }

    /// [`Client::embed`], waiting at most `timeout` for each read and write.
    fn embed_within(
        &mut self,
        texts: &[&str],
        kind: TextKind,
        timeout: Duration,
    ) -> Result<Vec<Vec<f32>>, WarmError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        self.writer.set_read_timeout(Some(timeout))?;
        self.writer.set_write_timeout(Some(timeout))?;
        let request = Request {
            kind: kind.into(),
            texts: texts.iter().map(|t| (*t).to_owned()).collect(),
        };
        self.send(&request)?;
        let answer = self.answer()?;
        if !answer.ok {
            return Err(WarmError::Refused(answer.error.unwrap_or_default()));
        }
        let (count, dims) = (answer.count.unwrap_or(0), answer.dims.unwrap_or(0));
        if count != texts.len() || dims != self.dims {
            return Err(WarmError::Malformed(format!(
                "{count} vectors of {dims} numbers for {} texts of {} numbers",
                texts.len(),
                self.dims
            )));
        }
        let mut bytes = vec![0u8; count * dims * 4];
        self.reader.read_exact(&mut bytes)?;
        let numbers: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if numbers.iter().any(|x| !x.is_finite()) {
            return Err(WarmError::Malformed("a number that is not finite".into()));
        }
        // One vector for different texts makes every similarity 1.0.
        let distinct = texts.iter().any(|t| *t != texts[0]);
        if distinct && dims > 0 && numbers.chunks_exact(dims).all(|v| v == &numbers[..dims]) {
            return Err(WarmError::Malformed(
                "the same vector for different texts".into(),
            ));
        }
        Ok(numbers
            .chunks_exact(dims.max(1))
            .map(<[f32]>::to_vec)
            .collect())
    }

    fn send(&mut self, value: &impl Serialize) -> Result<(), WarmError> {
        let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
        line.push(b'\n');
        self.writer.write_all(&line)?;
        self.writer.flush()?;
        Ok(())
    }

    fn answer(&mut self) -> Result<Answer, WarmError> {
        let mut line = String::new();
        let read = (&mut self.reader).take(64 << 10).read_line(&mut line)?;
        if read == 0 || !line.ends_with('\n') {
            return Err(WarmError::Malformed("the answer ended early".into()));
        }
        serde_json::from_str(&line).map_err(|err| WarmError::Malformed(err.to_string()))
    }
}

/// How a server ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Another server holds the lock for this home and model.
    AlreadyRunning,
    /// No request for the idle time.
    Idle,
    /// Its socket was removed or replaced.
    SocketGone,
    /// Its executable changed on disk.
    Upgraded,
    /// A client of another build or protocol said hello.
    Retired(String),
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended::AlreadyRunning => f.write_str("another warm process runs for this model"),
            Ended::Idle => f.write_str("no request for the idle time"),
            Ended::SocketGone => f.write_str("its socket was removed"),
            Ended::Upgraded => f.write_str("its executable changed"),
            Ended::Retired(why) => write!(f, "retired: {why}"),
        }
    }
}

/// What the server needs to run.
pub struct Serve<'a> {
    pub paths: &'a Paths,
    /// The build and model it serves (from [`Hello::new`]).
    pub hello: Hello,
    pub idle: Duration,
}

/// State shared by the server's threads.
struct Shared {
    embedder: Mutex<Box<dyn Embedder + Send>>,
    hello: Hello,
    /// Requests being served now.
    active: AtomicUsize,
    /// Milliseconds since `start` at the last request's end.
    last: AtomicU64,
    start: Instant,
    /// Why it should end, once known.
    ending: Mutex<Option<Ended>>,
    stop: AtomicBool,
}

impl Shared {
    fn end(&self, why: Ended) {
        let mut ending = self.ending.lock().unwrap_or_else(|e| e.into_inner());
        ending.get_or_insert(why);
    }

    fn touch(&self) {
        let now = self.start.elapsed().as_millis() as u64;
        self.last.store(now, Ordering::SeqCst);
    }
}

/// Runs a warm server until one of the rules above ends it. `load` loads
/// the model; it is called only once this process holds the lock.
pub fn serve(
    serve: Serve<'_>,
    load: impl FnOnce() -> Result<Box<dyn Embedder + Send>, EmbedError>,
) -> anyhow::Result<Ended> {
    use anyhow::Context;
    let paths = serve.paths;
    std::fs::create_dir_all(&paths.dir)
        .with_context(|| format!("cannot create {}", paths.dir.display()))?;
    std::fs::set_permissions(&paths.dir, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("cannot make {} private", paths.dir.display()))?;
    let Some(_lock) = take_lock(&paths.lock)? else {
        return Ok(Ended::AlreadyRunning);
    };
    // Bound under a temporary name first: a path too long for a socket
    // fails here, before the model is loaded for nothing.
    let loading = paths.dir.join(format!(".{}.loading", std::process::id()));
    let _ = std::fs::remove_file(&loading);
    let listener = UnixListener::bind(&loading)
        .with_context(|| format!("cannot listen at {}", loading.display()))?;
    std::fs::set_permissions(&loading, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot make {} private", loading.display()))?;
    let mut embedder = match load() {
        Ok(embedder) => embedder,
        Err(err) => {
            let _ = std::fs::remove_file(&loading);
            return Err(err).context("cannot load the model");
        }
    };
    // It stays between calls: what a batch needed goes back after it.
    embedder.keep_memory_low();
    std::fs::rename(&loading, &paths.socket)
        .with_context(|| format!("cannot move the socket to {}", paths.socket.display()))?;
    let socket_inode = std::fs::metadata(&paths.socket)
        .with_context(|| format!("cannot read {}", paths.socket.display()))?
        .ino();
    let info = Info {
        pid: std::process::id(),
        model: serve.hello.model.clone(),
        started: SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
        idle_secs: serve.idle.as_secs(),
    };
    let _ = std::fs::write(&paths.info, serde_json::to_vec(&info)?);

    let shared = Arc::new(Shared {
        embedder: Mutex::new(embedder),
        hello: serve.hello,
        active: AtomicUsize::new(0),
        last: AtomicU64::new(0),
        start: Instant::now(),
        ending: Mutex::new(None),
        stop: AtomicBool::new(false),
    });
    let watchdog = {
        let shared = Arc::clone(&shared);
        let paths = paths.clone();
        let idle = serve.idle;
        let exe = build_id();
        let listener_fd = listener.as_raw_fd();
        std::thread::spawn(move || watch(&shared, &paths, socket_inode, idle, &exe, listener_fd))
    };
    accept(&listener, &shared);
    let _ = watchdog.join();
    // The socket goes only if it is still ours.
    if std::fs::metadata(&paths.socket).is_ok_and(|m| m.ino() == socket_inode) {
        let _ = std::fs::remove_file(&paths.socket);
        let _ = std::fs::remove_file(&paths.info);
    }
    let ended = shared
        .ending
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    Ok(ended.unwrap_or(Ended::Idle))
}

/// The server's lock file at `path`, locked: `None` when another server
/// holds it. A server that is retiring lets the lock go within a tick or
/// two.
fn take_lock(path: &Path) -> anyhow::Result<Option<std::fs::File>> {
    use anyhow::Context;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        match lock.try_lock() {
            Ok(()) => return Ok(Some(lock)),
            Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(err)) => {
                return Err(err).with_context(|| format!("cannot lock {}", path.display()));
            }
        }
    }
}

/// Serves each connection on its own thread until the watchdog sets
/// `stop`.
fn accept(listener: &UnixListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else {
            // Not woken on purpose (a signal, a full table of files):
            // breathe and accept again.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        let shared = Arc::clone(shared);
        std::thread::spawn(move || {
            let _ = connection(&shared, stream);
        });
    }
}

/// Ends the server when a rule says so and no request is being served:
/// sets `stop` and wakes the accepting thread.
fn watch(
    shared: &Shared,
    paths: &Paths,
    socket_inode: u64,
    idle: Duration,
    exe: &str,
    listener: RawFd,
) {
    loop {
        std::thread::sleep(TICK);
        let idle_for = shared
            .start
            .elapsed()
            .saturating_sub(Duration::from_millis(shared.last.load(Ordering::SeqCst)));
        if idle_for >= idle {
            shared.end(Ended::Idle);
        }
        if std::fs::metadata(&paths.socket).map_or(true, |m| m.ino() != socket_inode) {
            shared.end(Ended::SocketGone);
        }
        if build_id() != exe {
            shared.end(Ended::Upgraded);
        }
        let ending = shared
            .ending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some();
        if ending && shared.active.load(Ordering::SeqCst) == 0 {
            shared.stop.store(true, Ordering::SeqCst);
            // Shutting a listening socket down makes a blocked `accept`
            // return (Linux), whether or not its path still exists.
            // SAFETY: `listener` is the listening socket `serve` owns and
            // keeps open until this thread is joined.
            unsafe { libc::shutdown(listener, libc::SHUT_RDWR) };
            return;
        }
    }
}

fn connection(shared: &Shared, stream: UnixStream) -> std::io::Result<()> {
    let mut writer = stream.try_clone()?;
    writer.set_write_timeout(Some(WRITE_TIMEOUT))?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    let read = (&mut reader).take(64 << 10).read_line(&mut line)?;
    if read == 0 || shared.stop.load(Ordering::SeqCst) {
        return Ok(());
    }
    let hello: Hello = match serde_json::from_str(&line) {
        Ok(hello) => hello,
        Err(err) => return reply(&mut writer, &Answer::refused(format!("bad hello: {err}"))),
    };
    if hello.protocol != shared.hello.protocol || hello.build != shared.hello.build {
        // A client of another build: this server is the old one (or the
        // other is); it leaves so that the client's build can start its own.
        let why = format!(
            "another build ({} here, {} there)",
            shared.hello.build, hello.build
        );
        reply(&mut writer, &Answer::refused(why.clone()))?;
        shared.end(Ended::Retired(why));
        return Ok(());
    }
    if hello.model != shared.hello.model {
        let why = format!("serves {}, not {}", shared.hello.model, hello.model);
        reply(&mut writer, &Answer::refused(why.clone()))?;
        shared.end(Ended::Retired(why));
        return Ok(());
    }
    reply(
        &mut writer,
        &Answer {
            ok: true,
            ..Answer::default()
        },
    )?;
    loop {
        line.clear();
        let read = (&mut reader).take(MAX_REQUEST).read_line(&mut line)?;
        if read == 0 {
            return Ok(());
        }
        shared.active.fetch_add(1, Ordering::SeqCst);
        let served = request(shared, &line, &mut writer);
        shared.touch();
        shared.active.fetch_sub(1, Ordering::SeqCst);
        served?;
    }
}

fn request(shared: &Shared, line: &str, writer: &mut UnixStream) -> std::io::Result<()> {
    if crate::adapters::env::fault("warm-abort") {
        // The fault tests' stand-in for a kill in the middle of a request.
        std::process::abort();
    }
    let request: Request = match serde_json::from_str(line) {
        Ok(request) => request,
        Err(err) => return reply(writer, &Answer::refused(format!("bad request: {err}"))),
    };
    if request.texts.len() > MAX_TEXTS {
        let why = format!(
            "{} texts; at most {MAX_TEXTS} a request",
            request.texts.len()
        );
        return reply(writer, &Answer::refused(why));
    }
    let texts: Vec<&str> = request.texts.iter().map(String::as_str).collect();
    let embedded = {
        let mut embedder = shared.embedder.lock().unwrap_or_else(|e| e.into_inner());
        let embedded = embedder.embed(&texts, request.kind.into());
        // A process that stays gives back what the batch needed.
        super::onnx::release_memory();
        embedded
    };
    match embedded {
        Ok(vectors) => {
            let dims = vectors.first().map_or(0, Vec::len);
            let answer = Answer {
                ok: true,
                count: Some(vectors.len()),
                dims: Some(dims),
                ..Answer::default()
            };
            let mut bytes = serde_json::to_vec(&answer).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            bytes.reserve(vectors.len() * dims * 4);
            for x in vectors.iter().flatten() {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
            writer.write_all(&bytes)?;
            writer.flush()
        }
        Err(err) => reply(writer, &Answer::refused(err.to_string())),
    }
}

fn reply(writer: &mut UnixStream, answer: &Answer) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(answer).map_err(std::io::Error::other)?;
    line.push(b'\n');
    writer.write_all(&line)?;
    writer.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vectors from the texts' lengths, so a test can tell them apart.
    struct Lengths;

    impl Embedder for Lengths {
        fn model_id(&self) -> &str {
            "lengths"
        }
        fn dims(&self) -> usize {
            2
        }
        fn embed(&mut self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
            let sign = if matches!(kind, TextKind::Query) {
                -1.0
            } else {
                1.0
            };
            Ok(texts.iter().map(|t| vec![t.len() as f32, sign]).collect())
        }
    }

    fn start(dir: &Path, idle: Duration) -> (Paths, std::thread::JoinHandle<Ended>) {
        let paths = Paths::new(dir, "lengths").unwrap();
        let server = {
            let paths = paths.clone();
            std::thread::spawn(move || {
                let serve = Serve {
                    paths: &paths,
                    hello: Hello::new("lengths@1".into()),
                    idle,
                };
                serve_for_test(serve)
            })
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !paths.socket.exists() {
            assert!(Instant::now() < deadline, "the server never became ready");
            std::thread::sleep(Duration::from_millis(5));
        }
        (paths, server)
    }

    fn serve_for_test(serve: Serve<'_>) -> Ended {
        super::serve(serve, || Ok(Box::new(Lengths))).unwrap()
    }

    /// A stand-in for whatever may sit at the socket: says yes to the
    /// hello, then answers each request with `answer` (or never).
    fn impostor(paths: &Paths, answer: Option<Vec<u8>>) -> std::thread::JoinHandle<()> {
        let listener = UnixListener::bind(&paths.socket).unwrap();
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut writer = stream;
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            writer.write_all(b"{\"ok\":true}\n").unwrap();
            line.clear();
            reader.read_line(&mut line).unwrap();
            match answer {
                Some(bytes) => writer.write_all(&bytes).unwrap(),
                None => std::thread::sleep(Duration::from_millis(600)),
            }
        })
    }

    /// Regression (issue 39, LOW): a fake process answering one vector for
    /// every text made every similarity 1.0; one that never answered held
    /// each command for the whole timeout, twice; a warm folder another
    /// user can write to was used.
    #[test]
    fn what_sits_at_the_socket_is_checked_before_it_is_believed() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::new(dir.path(), "lengths").unwrap();
        let hello = Hello::new("lengths@1".into());

        let mut same = b"{\"ok\":true,\"count\":2,\"dims\":2}\n".to_vec();
        for _ in 0..2 {
            for x in [0.6f32, 0.8] {
                same.extend_from_slice(&x.to_le_bytes());
            }
        }
        let fake = impostor(&paths, Some(same));
        let mut client = Client::connect(&paths, &hello, 2).unwrap();
        let refused = client.embed(&["deploys", "the cache"], TextKind::Document);
        assert!(
            matches!(&refused, Err(WarmError::Malformed(why)) if why.contains("same vector")),
            "{refused:?}"
        );
        fake.join().unwrap();
        std::fs::remove_file(&paths.socket).unwrap();

        let silent = impostor(&paths, None);
        let mut client = Client::connect(&paths, &hello, 2).unwrap();
        let waited = client.embed_within(&["a"], TextKind::Query, Duration::from_millis(100));
        assert!(
            waited.as_ref().is_err_and(WarmError::timed_out),
            "{waited:?}"
        );
        paths.abandon();
        assert!(
            !paths.socket.exists(),
            "the next command does not wait for it"
        );
        silent.join().unwrap();

        let (paths, server) = start(dir.path(), Duration::from_millis(300));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let open = Client::connect(&paths, &hello, 2);
        assert!(
            matches!(&open, Err(WarmError::Foreign(..))),
            "{:?}",
            open.err()
        );
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(Client::connect(&paths, &hello, 2).is_ok());
        server.join().unwrap();
    }

    /// Regression (issue 39, LOW): a client that sends requests and never
    /// reads the answers kept the server in the middle of a request, past
    /// its idle time, for good.
    #[test]
    fn a_client_that_never_reads_does_not_keep_the_server_alive() {
        let dir = tempfile::tempdir().unwrap();
        let (paths, server) = start(dir.path(), Duration::from_millis(300));
        let stream = UnixStream::connect(&paths.socket).unwrap();
        let mut writer = stream.try_clone().unwrap();
        writer
            .set_write_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let hello = serde_json::to_string(&Hello::new("lengths@1".into())).unwrap();
        writeln!(writer, "{hello}").unwrap();
        let texts = vec!["word"; MAX_TEXTS];
        let request = serde_json::to_string(&Request {
            kind: TextKind::Document.into(),
            texts: texts.iter().map(|t| (*t).to_owned()).collect(),
        })
        .unwrap();
        // Answers of 32 KiB each, none read: the server's writes block.
        for _ in 0..40 {
            if writeln!(writer, "{request}").is_err() {
                break;
            }
        }
        // Before, this join never returned.
        assert_eq!(server.join().unwrap(), Ended::Idle);
        drop(stream);
    }

    #[test]
    fn a_client_gets_the_servers_vectors_and_the_server_ends_when_idle() {
        let dir = tempfile::tempdir().unwrap();
        let (paths, server) = start(dir.path(), Duration::from_millis(600));
        let mut client = Client::connect(&paths, &Hello::new("lengths@1".into()), 2).unwrap();
        let vectors = client.embed(&["a", "abc"], TextKind::Query).unwrap();
        assert_eq!(vectors, vec![vec![1.0, -1.0], vec![3.0, -1.0]]);
        let vectors = client.embed(&["ab"], TextKind::Document).unwrap();
        assert_eq!(vectors, vec![vec![2.0, 1.0]]);
        assert!(Info::running(&paths).is_some_and(|info| info.pid == std::process::id()));
        drop(client);
        assert_eq!(server.join().unwrap(), Ended::Idle);
        assert!(!paths.socket.exists(), "the socket goes with the server");
        assert!(Info::running(&paths).is_none());
    }

    #[test]
    fn a_second_server_for_the_same_model_does_not_start() {
        let dir = tempfile::tempdir().unwrap();
        // Idle for longer than a new server waits for the lock.
        let (paths, first) = start(dir.path(), LOCK_WAIT * 3);
        let serve = Serve {
            paths: &paths,
            hello: Hello::new("lengths@1".into()),
            idle: Duration::from_secs(60),
        };
        let loaded = std::cell::Cell::new(false);
        let ended = super::serve(serve, || {
            loaded.set(true);
            Ok(Box::new(Lengths))
        })
        .unwrap();
        assert_eq!(ended, Ended::AlreadyRunning);
        assert!(!loaded.get(), "the second one loads nothing");
        assert_eq!(first.join().unwrap(), Ended::Idle);
    }

    #[test]
    fn another_model_or_build_is_refused_and_retires_the_server() {
        let dir = tempfile::tempdir().unwrap();
        let (paths, server) = start(dir.path(), Duration::from_secs(60));
        let other_model = Client::connect(&paths, &Hello::new("lengths@2".into()), 2);
        assert!(matches!(other_model, Err(WarmError::Refused(why)) if why.contains("lengths@2")));
        assert!(matches!(server.join().unwrap(), Ended::Retired(_)));

        let (paths, server) = start(dir.path(), Duration::from_secs(60));
        let mut hello = Hello::new("lengths@1".into());
        hello.build.push_str("-other");
        let other_build = Client::connect(&paths, &hello, 2);
        assert!(
            matches!(other_build, Err(WarmError::Refused(why)) if why.contains("another build"))
        );
        assert!(matches!(server.join().unwrap(), Ended::Retired(_)));
    }

    #[test]
    fn no_server_and_wrong_sizes_are_errors_the_caller_recovers_from() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::new(dir.path(), "lengths").unwrap();
        let absent = Client::connect(&paths, &Hello::new("lengths@1".into()), 2);
        assert!(matches!(absent, Err(WarmError::Absent(_))));

        let (paths, server) = start(dir.path(), Duration::from_millis(500));
        let mut client = Client::connect(&paths, &Hello::new("lengths@1".into()), 3).unwrap();
        let wrong = client.embed(&["a"], TextKind::Query);
        assert!(matches!(wrong, Err(WarmError::Malformed(_))), "{wrong:?}");
        drop(client);
        assert_eq!(server.join().unwrap(), Ended::Idle);
    }

    #[test]
    fn only_plain_model_names_get_a_socket() {
        let dir = Path::new("/home/x/.goldfish/warm");
        assert!(Paths::new(dir, "all-MiniLM-L6-v2-int8").is_some());
        for name in ["", "../x", "a/b", ".hidden", "a b", &"x".repeat(65)] {
            assert!(Paths::new(dir, name).is_none(), "{name:?}");
        }
        let deep = Path::new("/home").join("d".repeat(100));
        assert!(
            Paths::new(&deep, "all-MiniLM-L6-v2").is_none(),
            "too long for a socket"
        );
    }
}
