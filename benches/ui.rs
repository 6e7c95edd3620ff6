//! The viewer's pages (`goldfish ui`): the time from request to the last
//! byte of each page, p50 / p95 over loopback, at 10k and 100k memories
//! (1k when run as a test): the timeline's first page, a page deep in a
//! long list (after the middle memory: keyset pagination, the cost of any
//! page), a filtered page, a search, a memory page, the review queue and
//! tidy's proposals (every memory weighed, as `goldfish tidy` does).
//!
//! The workspace is the synthetic team log of `common/workspace.rs`,
//! committed and synced before the viewer starts; without a model, so
//! recall ranks by keywords (a model adds the query's embedding, a few
//! milliseconds once loaded: `--bench recall`). Every request syncs first,
//! as recall does (nothing changed: a check of HEAD and the files).
//!
//! Run: `cargo bench --bench ui` (`GOLDFISH_BENCH_SIZES=10000`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

mod common;

use common::report::{Row, emit};
use common::workspace::{Workspace, questions, run};
use common::{ms, percentile};
use goldfish::adapters::index::Index;
use goldfish::adapters::index::search::{Mode, Scope};
use goldfish::domain::recall::Request;

const SAMPLES: usize = 20;

fn main() {
    let sizes = common::sizes("GOLDFISH_BENCH_SIZES", &[1000], &[10_000, 100_000]);
    println!("machine: {}", common::machine());
    println!();
    println!(
        "| memories | timeline | deep page | type filter | search | memory | review queue | tidy's proposals |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for n in sizes {
        measure(n);
    }
}

/// One GET with the viewer's cookie; the status and the body.
fn get(port: u16, path: &str, cookie: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let status = raw.split(' ').nth(1).unwrap().parse().unwrap();
    let body = raw.split_once("\r\n\r\n").map(|(_, b)| b.to_owned());
    (status, body.unwrap_or_default())
}

fn percent(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn measure(n: usize) {
    let workspace = Workspace::create(n, true);
    run(&mut workspace.sync_keywords());
    // The middle memory, for a page deep in the list.
    let index = Index::open(&workspace.home.join("index.db")).unwrap();
    let request = Request {
        limit: n / 2,
        now: Some(jiff::Timestamp::now()),
        ..Request::default()
    };
    let middle = index
        .recall(&request, &Scope::All, Mode::Keyword, None)
        .unwrap()
        .pop()
        .unwrap();
    drop(index);

    let mut viewer = workspace.goldfish(&["ui"]);
    viewer.stdout(Stdio::piped());
    let mut child = viewer.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("goldfish ui: ")
        .unwrap()
        .to_owned();
    let port: u16 = url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.split('/').next())
        .unwrap()
        .parse()
        .unwrap();
    let token = url.split("token=").nth(1).unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET /?token={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let cookie = raw
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .and_then(|c| c.split(';').next())
        .unwrap_or_else(|| panic!("no cookie from {url}: {raw}"))
        .to_owned();

    // The synthetic authors are not the committer's: every memory is
    // quarantined (`author-mismatch`), so the pages list all verdicts.
    let (_, first) = get(port, "/?verdict=all", &cookie);
    let at = first
        .find("href=\"/memory/")
        .unwrap_or_else(|| panic!("{first}"))
        + 6;
    let memory_path = first[at..].split('"').next().unwrap().to_owned();
    let question = questions(1, 0).remove(0);
    let pages = [
        ("timeline", "/?verdict=all".to_owned()),
        (
            "deep page",
            format!(
                "/?verdict=all&after={}",
                percent(&format!("{} {}", middle.timestamp, middle.id))
            ),
        ),
        ("type filter", "/?verdict=all&type=decision".to_owned()),
        ("search", format!("/?verdict=all&q={}", percent(&question))),
        ("memory", memory_path),
        ("review queue", "/review".to_owned()),
        ("tidy's proposals", "/review/tidy".to_owned()),
    ];
    let mut cells = Vec::new();
    for (name, path) in &pages {
        let (status, body) = get(port, path, &cookie);
        assert_eq!(status, 200, "{path}: {body}");
        if *name == "deep page" {
            assert!(
                body.contains("rel=\"next\""),
                "a full page deep in the list"
            );
        }
        let mut samples: Vec<Duration> = (0..SAMPLES)
            .map(|_| {
                let started = Instant::now();
                get(port, path, &cookie);
                started.elapsed()
            })
            .collect();
        let p50 = percentile(&mut samples, 50);
        let p95 = percentile(&mut samples, 95);
        cells.push(format!("{} / {}", ms(p50), ms(p95)));
        emit(Row::latency("viewer", format!("{name} page"), p50, p95).at(n));
    }
    let _ = child.kill();
    let _ = child.wait();
    println!("| {n} | {} |", cells.join(" | "));
}
