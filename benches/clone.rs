//! A teammate's clone (issue 27): a workspace of N memories (synthetic team
//! log, `common/workspace.rs`) committed and pushed to a bare repository,
//! then cloned into a new home with the real model installed, as a newcomer
//! does. Timed from the end of `git clone`:
//!
//! - to the answer of the first `goldfish recall` (hybrid, the default): the
//!   clone sets itself up, indexes the log, embeds a few and starts the
//!   background embedder; keyword recall is ready;
//! - to the last embedding: the background embedder has emptied the queue
//!   (polled in the index every 100 ms; nobody runs `goldfish sync`).
//!
//! Sizes 10k and 100k (`GOLDFISH_BENCH_SIZES`); with the fp32 and the int8
//! model (the default first), or each of the comma-separated
//! `GOLDFISH_BENCH_MODELS`.
//!
//! Run: `cargo bench --bench clone`.

use std::path::Path;
use std::time::{Duration, Instant};

mod common;

use common::report::{Row, emit};
use common::workspace::{Workspace, questions, run};
use goldfish::adapters::embed::DEFAULT_MODEL;

fn main() {
    let sizes = common::sizes("GOLDFISH_BENCH_SIZES", &[1000], &[10_000, 100_000]);
    let models = common::compared_models();
    println!("machine: {}", common::machine());
    println!();
    println!("| memories | model | keyword recall ready | every memory embedded | texts/s |");
    println!("|---:|---|---:|---:|---:|");
    for &n in &sizes {
        let source = Workspace::create(n, true);
        let remote = source.repo.with_file_name("remote.git");
        let mut bare = std::process::Command::new("git");
        bare.args(["clone", "-q", "--bare"])
            .arg(&source.repo)
            .arg(&remote)
            .env("GIT_CONFIG_GLOBAL", "/dev/null");
        run(&mut bare);
        for model in &models {
            let (ready, embedded) = measure(&source, &remote, model);
            println!(
                "| {n} | {model} | {} | {} | {:.0} |",
                common::ms(ready),
                common::ms(embedded),
                n as f64 / (embedded - ready).as_secs_f64()
            );
            let name = |what: &str| {
                if model == DEFAULT_MODEL {
                    what.to_owned()
                } else {
                    format!("{what} [{model}]")
                }
            };
            emit(Row::time("clone", name("keyword recall ready"), ready).at(n));
            emit(Row::time("clone", name("every memory embedded"), embedded).at(n));
        }
    }
}

/// Clones `remote` into a new home with `model`; (time to the first
/// recall's answer, time to the last embedding), both from the end of the
/// clone.
fn measure(source: &Workspace, remote: &Path, model: &str) -> (Duration, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let (clone, home) = (dir.path().join("clone"), dir.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    for sub in ["models", "runtime"] {
        std::os::unix::fs::symlink(common::model_home().join(sub), home.join(sub)).unwrap();
    }
    let mut git = std::process::Command::new("git");
    git.args(["clone", "-q"])
        .arg(remote)
        .arg(&clone)
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    run(&mut git);
    let start = Instant::now();
    // The synthetic authors are outside any trust policy: asked for anyway,
    // as the recall bench does.
    let question = questions(1, 0).remove(0);
    let mut recall = source.goldfish(&["recall", "--include-untrusted", "--", &question]);
    recall
        .current_dir(&clone)
        .env("GOLDFISH_HOME", &home)
        .env("GOLDFISH_MODEL", model);
    run(&mut recall);
    let ready = start.elapsed();
    let index = home.join("index.db");
    let conn =
        rusqlite::Connection::open_with_flags(&index, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    conn.busy_timeout(Duration::from_secs(5)).unwrap();
    loop {
        let pending: i64 = conn
            .query_row("SELECT count(*) FROM embed_queue", [], |row| row.get(0))
            .unwrap();
        if pending == 0 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(3600),
            "{pending} still pending after an hour"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let embedded = start.elapsed();
    // The embedder exits after its last batch: let it go before the folder does.
    let lock = home.join("locks");
    while goldfish::adapters::index::locks::embedding_running(&lock) {
        std::thread::sleep(Duration::from_millis(50));
    }
    (ready, embedded)
}
