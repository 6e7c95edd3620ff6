//! `goldfish ui`: the viewer of a team's memory, in a real browser
//! (Debian's `chromium` and `chromium-driver`, driven over WebDriver by
//! the small client below), and its guard over plain HTTP (a browser
//! cannot send a forged Host header).
//!
//! The browser tests are `#[ignore]`d with the reason, as the real-model
//! tests are: a plain `cargo test` on a machine without chromium skips
//! them; `scripts/test.sh` (and so CI, which installs chromium) runs them,
//! and they fail there when chromium or its driver is missing. They leave
//! screenshots of each page in `target/tmp/ui-screenshots/`
//! (`scripts/ui_screenshots.sh` copies them into docs/guide/).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use goldfish::front::ui::percent;
use serde_json::{Value, json};

use crate::common::{TestEnv, hand_write, memory_lines};

/// A running `goldfish ui`, stopped when dropped.
struct Viewer {
    child: Child,
    port: u16,
    /// The URL it printed, token and all.
    url: String,
}

impl Viewer {
    fn start(env: &TestEnv, repo: &Path) -> Viewer {
        let mut child = env
            .command(env!("CARGO_BIN_EXE_goldfish"), repo)
            .arg("ui")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn goldfish ui");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("goldfish ui: ")
            .unwrap_or_else(|| panic!("goldfish ui printed {line:?}"))
            .to_owned();
        let port = url
            .strip_prefix("http://127.0.0.1:")
            .and_then(|rest| rest.split('/').next())
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("not a loopback URL: {url}"));
        Viewer { child, port, url }
    }

    fn token(&self) -> &str {
        self.url.split("token=").nth(1).unwrap()
    }

    fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// One HTTP/1.1 request to 127.0.0.1:`port`, headers as given (Host
/// included: the guard's first check).
fn http(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    // Read the head, then as much body as it announces (a WebDriver
    // server may keep the connection open).
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).unwrap();
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((key, value)) = line.split_once(':') {
            headers.push((key.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(key, _): &&(String, String)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone())
    };
    let body = if let Some(length) = header("content-length") {
        let mut bytes = vec![0; length.parse().unwrap()];
        reader.read_exact(&mut bytes).unwrap();
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        let mut rest = String::new();
        let _ = reader.read_to_string(&mut rest);
        if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            unchunk(&rest)
        } else {
            rest
        }
    };
    Answer {
        status,
        headers,
        body,
    }
}

fn unchunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        body.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    body
}

/// The viewer's cookie, from a token exchange.
fn cookie_of(answer: &Answer) -> String {
    let set = answer.header("set-cookie").expect("a cookie is set");
    set.split(';').next().unwrap().to_owned()
}

/// The form key of a page's form.
fn form_key(page: &str) -> String {
    let at = page.find("name=\"key\" value=\"").expect("a form key") + 18;
    page[at..at + 64].to_owned()
}

/// A repository of a team: Alice's decisions and a line she committed by
/// hand whose `author` says Mallory (quarantined: a forged author) and
/// whose text is HTML, script, a `javascript:` link and a bidi override;
/// a memory about a file deleted since (stale); pulled by Bob, who has a
/// captured memory not yet committed. Returns (env, Bob's clone, the
/// quarantined id, the captured id).
fn team() -> (TestEnv, PathBuf, String, String) {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    let store = |repo: &Path, args: &[&str]| {
        let mut all = vec!["store"];
        all.extend_from_slice(args);
        env.ok(repo, &all);
    };
    store(
        &alice,
        &[
            "-t",
            "decision",
            "--tags",
            "payments",
            "Payment retries use exponential backoff with jitter, at most five attempts",
        ],
    );
    store(
        &alice,
        &[
            "-t",
            "bug-fix",
            "Fixed the cache eviction race: the LRU lock is taken before the size check",
        ],
    );
    std::fs::create_dir_all(alice.join("src")).unwrap();
    std::fs::write(alice.join("src/legacy.rs"), "fn old() {}\n").unwrap();
    env.commit_all(&alice, "legacy module");
    store(
        &alice,
        &[
            "-t",
            "insight",
            "--files",
            "src/legacy.rs",
            "The legacy module parses dates in local time",
        ],
    );
    let quarantined = "01M88B3FD0JAPT2D6XTHHG4A01";
    hand_write(
        &alice,
        "2026-11-20.jsonl",
        quarantined,
        "Mallory",
        "Deploy notes <script>window.pwned = 1</script> <img src=x onerror=\"window.pwned = 2\"> \
         <a href=\"javascript:window.pwned = 3\">docs</a> [docs](javascript:window.pwned=4) \
         file \u{202E}gpj.exe",
    );
    env.commit_all(&alice, "memories");
    std::fs::remove_file(alice.join("src/legacy.rs")).unwrap();
    env.commit_all(&alice, "drop the legacy module");
    env.git(&alice, &["push", "-q"]);
    env.git(&bob, &["pull", "-q"]);
    store(
        &bob,
        &[
            "-t",
            "observation",
            "The staging database is restored from backup every Monday",
        ],
    );
    env.commit_all(&bob, "a memory");
    // What capture stored in Bob's clone, not committed yet.
    let captured = "01M88B3FD0JAPT2D6XTHHG4C01";
    let line = json!({
        "id": captured,
        "timestamp": "2026-11-21T09:00:00.000Z",
        "type": "bug-fix",
        "content": "cargo test failed on a missing fixture; fixed by adding fixtures/a.json",
        "author": "Bob",
        "source": "capture:claude-code",
    });
    let path = bob.join(crate::common::today(&bob));
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&format!("{line}\n"));
    std::fs::write(&path, text).unwrap();
    (env, bob, quarantined.to_owned(), captured.to_owned())
}

#[test]
fn the_viewer_refuses_a_wrong_host_no_token_a_spent_token_and_writes_from_elsewhere() {
    let (env, bob, quarantined, _) = team();
    let viewer = Viewer::start(&env, &bob);
    let port = viewer.port;
    let host = format!("127.0.0.1:{port}");
    let token_path = format!("/?token={}", viewer.token());

    // DNS rebinding: another name for 127.0.0.1. The token is not spent.
    let rebound = http(port, "GET", &token_path, &[("Host", "evil.example")], "");
    assert_eq!(rebound.status, 421, "{rebound:?}");
    let other_port = format!("127.0.0.1:{}", port.wrapping_add(1));
    assert_eq!(
        http(port, "GET", "/", &[("Host", &other_port)], "").status,
        421
    );
    assert_eq!(http(port, "GET", "/", &[], "").status, 421, "no Host");

    // No cookie, no token; a wrong token.
    let bare = http(port, "GET", "/", &[("Host", &host)], "");
    assert_eq!(bare.status, 403);
    assert!(bare.body.contains("open the link"), "{}", bare.body);
    let wrong = http(port, "GET", "/?token=00", &[("Host", &host)], "");
    assert_eq!(wrong.status, 403);

    // The token, once: a cookie, the token out of the address bar.
    let exchanged = http(port, "GET", &token_path, &[("Host", &host)], "");
    assert_eq!(exchanged.status, 303, "{exchanged:?}");
    assert_eq!(exchanged.header("location"), Some("/"));
    let set = exchanged.header("set-cookie").unwrap();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    let cookie = cookie_of(&exchanged);
    let again = http(port, "GET", &token_path, &[("Host", &host)], "");
    assert_eq!(again.status, 403, "a spent token");
    assert!(again.body.contains("used already"), "{}", again.body);

    // With the cookie: the page, and the headers every answer carries.
    let with = [("Host", host.as_str()), ("Cookie", cookie.as_str())];
    let timeline = http(port, "GET", "/", &with, "");
    assert_eq!(timeline.status, 200);
    assert_eq!(
        timeline.header("content-security-policy"),
        Some(goldfish::front::ui::CSP)
    );
    assert!(!goldfish::front::ui::CSP.contains("unsafe"));
    assert_eq!(timeline.header("x-frame-options"), Some("DENY"));
    assert_eq!(timeline.header("referrer-policy"), Some("same-origin"));
    assert!(
        !timeline.body.contains("<script") && !timeline.body.contains("http://"),
        "no script, no outside asset"
    );
    // The cookie of another viewer's port is not this one's.
    let other = cookie.replacen(&format!("goldfish_ui_{port}"), "goldfish_ui_1", 1);
    let foreign = http(port, "GET", "/", &[("Host", &host), ("Cookie", &other)], "");
    assert_eq!(foreign.status, 403);

    // Writes: only from the viewer's origin, with its form key.
    let confirm = http(
        port,
        "GET",
        &format!("/memory/{quarantined}/forget"),
        &with,
        "",
    );
    assert_eq!(confirm.status, 200);
    let key = format!("key={}", form_key(&confirm.body));
    let path = format!("/memory/{quarantined}/forget");
    let origin = viewer.origin();
    let form = ("Content-Type", "application/x-www-form-urlencoded");
    let refused = [
        vec![with[0], with[1], form, ("Origin", "http://evil.example")],
        vec![with[0], with[1], form, ("Origin", "null")],
        vec![with[0], with[1], form],
        vec![
            with[0],
            with[1],
            form,
            ("Origin", origin.as_str()),
            ("Sec-Fetch-Site", "cross-site"),
        ],
        vec![with[0], form, ("Origin", origin.as_str())],
    ];
    for headers in &refused {
        let answer = http(port, "POST", &path, headers, &key);
        assert_eq!(answer.status, 403, "{headers:?}: {answer:?}");
    }
    let own = [with[0], with[1], form, ("Origin", origin.as_str())];
    let no_key = http(port, "POST", &path, &own, "key=00");
    assert_eq!(no_key.status, 403, "a wrong form key");
    assert!(
        memory_lines(&bob)
            .iter()
            .all(|line| line["forgets"] != quarantined.as_str()),
        "nothing refused wrote a line"
    );
    let done = http(port, "POST", &path, &own, &key);
    assert_eq!(done.status, 200, "{done:?}");
    assert!(
        done.body
            .contains(&format!("goldfish forget {quarantined}"))
    );
    assert!(
        memory_lines(&bob)
            .iter()
            .any(|line| line["forgets"] == quarantined.as_str()),
        "the tombstone is in the log"
    );
    // Anything but GET and POST.
    assert_eq!(http(port, "DELETE", "/", &with, "").status, 405);
}

/// A WebDriver session of headless chromium, through its own
/// `chromedriver`; both ended when dropped.
struct Browser {
    driver: Child,
    port: u16,
    session: String,
}

/// The key WebDriver names an element by.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

impl Browser {
    fn start() -> Browser {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // A group of its own: chromium and its helpers end with it, even
        // when a session was never made or never ended.
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect(
                "chromedriver is not installed: `apt-get install -y chromium chromium-driver` \
                 (CI's .ci/run does)",
            );
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "chromedriver did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut browser = Browser {
            driver,
            port,
            session: String::new(),
        };
        let binary = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
            .into_iter()
            .find(|path| Path::new(path).exists())
            .expect("chromium is not installed: `apt-get install -y chromium chromium-driver`");
        let created = browser.call(
            "POST",
            "/session",
            json!({"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {
                    "binary": binary,
                    "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                             "--disable-dev-shm-usage", "--window-size=1280,900",
                             "--no-first-run", "--disable-extensions"],
                },
            }}}),
        );
        browser.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_owned();
        browser
    }

    /// A WebDriver command; its `value`.
    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let path = if path.starts_with("/session") && !self.session.is_empty() {
            format!("/session/{}{}", self.session, &path["/session".len()..])
        } else {
            path.to_owned()
        };
        let host = format!("127.0.0.1:{}", self.port);
        let body = if method == "POST" {
            body.to_string()
        } else {
            String::new()
        };
        let answer = http(
            self.port,
            method,
            &path,
            &[("Host", &host), ("Content-Type", "application/json")],
            &body,
        );
        let value: Value = serde_json::from_str(&answer.body)
            .unwrap_or_else(|err| panic!("{method} {path}: {err}: {}", answer.body));
        value["value"].clone()
    }

    fn go(&self, url: &str) {
        self.call("POST", "/session/url", json!({ "url": url }));
    }

    fn url(&self) -> String {
        self.call("GET", "/session/url", Value::Null)
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// The elements `css` selects, waiting up to 10 s for one.
    fn all(&self, css: &str) -> Vec<String> {
        let started = Instant::now();
        loop {
            let found = self.call(
                "POST",
                "/session/elements",
                json!({"using": "css selector", "value": css}),
            );
            let ids: Vec<String> = found
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e[ELEMENT].as_str().map(str::to_owned))
                .collect();
            if !ids.is_empty() || started.elapsed() > Duration::from_secs(10) {
                return ids;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn one(&self, css: &str) -> String {
        self.all(css)
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("nothing matches {css} on {}", self.url()))
    }

    fn click(&self, css: &str) {
        let element = self.one(css);
        self.call(
            "POST",
            &format!("/session/element/{element}/click"),
            json!({}),
        );
    }

    fn text(&self, css: &str) -> String {
        let element = self.one(css);
        self.call(
            "GET",
            &format!("/session/element/{element}/text"),
            Value::Null,
        )
        .as_str()
        .unwrap()
        .to_owned()
    }

    /// The text of `css` once it holds `needle` (a page loading after a
    /// click), waiting up to 10 s.
    fn wait_text(&self, css: &str, needle: &str) -> String {
        let started = Instant::now();
        loop {
            let texts = self.texts(css);
            if let Some(text) = texts.iter().find(|text| text.contains(needle)) {
                return text.clone();
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{css} never held {needle:?} on {}: {texts:?}",
                self.url()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits up to 10 s for the address to hold `needle` (a click's
    /// navigation).
    fn wait_url(&self, needle: &str) {
        let started = Instant::now();
        while !self.url().contains(needle) {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the address never held {needle:?}: {}",
                self.url()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // And the page it names is loaded.
        while self.eval("return document.readyState") != json!("complete") {
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn type_into(&self, css: &str, text: &str) {
        let element = self.one(css);
        self.call(
            "POST",
            &format!("/session/element/{element}/clear"),
            json!({}),
        );
        self.call(
            "POST",
            &format!("/session/element/{element}/value"),
            json!({ "text": text }),
        );
    }

    /// Runs `script` in the page (WebDriver's, not the page's: the CSP
    /// does not apply to it) and returns what it returns.
    fn eval(&self, script: &str) -> Value {
        self.call(
            "POST",
            "/session/execute/sync",
            json!({"script": script, "args": []}),
        )
    }

    /// Saves a PNG of the window in target/tmp/ui-screenshots/NAME.png.
    fn screenshot(&self, name: &str) {
        let encoded = self.call("GET", "/session/screenshot", Value::Null);
        let png = base64_decode(encoded.as_str().unwrap());
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ui-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    /// The texts of the elements `css` selects.
    fn texts(&self, css: &str) -> Vec<String> {
        let script = format!(
            "return Array.from(document.querySelectorAll({})).map(e => e.textContent)",
            json!(css)
        );
        self.eval(&script)
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    }
}

impl Browser {
    /// Submits the confirmation page shown: no line of `repo`'s log has
    /// `field` = `id` before it, the page's heading says `done` after, and
    /// the line it wrote (the first with `field` = `id`) is returned.
    fn confirm(&self, repo: &Path, field: &str, id: &str, done: &str) -> serde_json::Value {
        assert!(
            memory_lines(repo).iter().all(|line| line[field] != id),
            "nothing is written before the confirmation"
        );
        self.click("form button[type=submit]");
        self.wait_text("main h1", done);
        memory_lines(repo)
            .into_iter()
            .find(|line| line[field] == id)
            .unwrap_or_else(|| panic!("no line with {field} = {id} in the log"))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let host = format!("127.0.0.1:{}", self.port);
            let path = format!("/session/{}", self.session);
            let _ = std::panic::catch_unwind(|| {
                http(self.port, "DELETE", &path, &[("Host", &host)], "")
            });
        }
        // SAFETY: a signal to the process group the driver leads.
        unsafe {
            libc::kill(-(self.driver.id() as i32), libc::SIGKILL);
        }
        let _ = self.driver.wait();
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let digits: Vec<u32> = text.bytes().filter_map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let mut n = 0u32;
        for (i, d) in chunk.iter().enumerate() {
            n |= d << (18 - 6 * i);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len() - 1]);
    }
    out
}

#[test]
#[ignore = "needs chromium and chromium-driver (apt-get install -y chromium chromium-driver): bash scripts/test.sh"]
fn the_timeline_filters_searches_and_opens_a_memory_in_a_browser() {
    let (env, bob, quarantined, _) = team();
    let viewer = Viewer::start(&env, &bob);
    let browser = Browser::start();
    browser.go(&viewer.url);
    // The token left the address bar.
    assert_eq!(browser.url(), format!("{}/", viewer.origin()));
    let titles = browser.texts("ol.memories li a.title");
    assert_eq!(
        titles.len(),
        5,
        "trusted memories, newest first: {titles:?}"
    );
    assert!(
        titles.iter().all(|t| !t.contains("Deploy notes")),
        "{titles:?}"
    );
    browser.screenshot("timeline");

    // Filter: one type.
    browser.type_into("input[name=type]", "bug-fix");
    browser.click("form.filters button[type=submit]");
    browser.wait_url("type=bug-fix");
    let titles = browser.texts("ol.memories li a.title");
    assert_eq!(titles.len(), 2, "{titles:?}");
    // The captured ones alone.
    browser.go(&format!("{}/?captured=only", viewer.origin()));
    let titles = browser.texts("ol.memories li a.title");
    assert_eq!(titles.len(), 1, "{titles:?}");
    assert!(titles[0].contains("missing fixture"));
    // Quarantined, stale, and an author.
    browser.go(&format!("{}/?verdict=quarantined", viewer.origin()));
    assert_eq!(browser.texts("ol.memories li a.title").len(), 1);
    browser.go(&format!("{}/?stale=on&verdict=all", viewer.origin()));
    let stale = browser.texts("ol.memories li a.title");
    assert_eq!(stale.len(), 1, "{stale:?}");
    assert!(stale[0].contains("legacy module"));
    browser.go(&format!("{}/?author=bob", viewer.origin()));
    assert_eq!(browser.texts("ol.memories li a.title").len(), 2);

    // Search, ranked as recall ranks.
    browser.go(&format!("{}/", viewer.origin()));
    browser.type_into("input[name=q]", "payment retries backoff");
    browser.click("form.filters button[type=submit]");
    browser.wait_url("q=payment");
    let titles = browser.texts("ol.memories li a.title");
    assert!(
        titles
            .first()
            .is_some_and(|t| t.contains("Payment retries")),
        "{titles:?}"
    );
    let recalled = env.ok(&bob, &["recall", "--json", "payment retries backoff"]);
    let first: Value = serde_json::from_str(recalled.lines().next().unwrap()).unwrap();
    let first_href =
        browser.eval("return document.querySelector('ol.memories a.title').getAttribute('href')");
    assert_eq!(
        first_href.as_str().unwrap(),
        format!("/memory/{}", first["id"].as_str().unwrap()),
        "the viewer's first hit is recall's"
    );
    browser.screenshot("search");

    // Open it: provenance, trust and its reasons.
    browser.click("ol.memories li a.title");
    browser.wait_url("/memory/");
    assert!(browser.text("pre.content").contains("exponential backoff"));
    let page = browser.text("main");
    assert!(page.contains("Alice <alice@example.com>"), "{page}");
    assert!(page.contains("Trust: trusted"), "{page}");
    assert!(page.contains("payments"), "{page}");
    browser.screenshot("memory");

    // The stale one: its evidence.
    browser.go(&format!("{}/?stale=on&verdict=all", viewer.origin()));
    browser.click("ol.memories li a.title");
    browser.wait_url("/memory/");
    let page = browser.text("main");
    assert!(
        page.contains("src/legacy.rs deleted by commit"),
        "the evidence: {page}"
    );

    // A memory of HTML, script, a javascript: link and a bidi override
    // renders as text: the DOM holds none of it as elements.
    browser.go(&format!("{}/memory/{quarantined}", viewer.origin()));
    let content = browser.texts("pre.content");
    assert_eq!(content.len(), 1);
    let content = &content[0];
    assert!(
        content.contains("<script>window.pwned = 1</script>"),
        "{content}"
    );
    assert!(content.contains("<img src=x onerror="), "{content}");
    assert!(content.contains("javascript:window.pwned=4"), "{content}");
    assert!(
        content.contains("\\u202e") && !content.contains('\u{202E}'),
        "the bidi override shown, not acting: {content}"
    );
    for (script, expected) in [
        ("return document.scripts.length", json!(0)),
        (
            "return document.querySelectorAll('main img, main a[href^=\"javascript\"], [onerror]').length",
            json!(0),
        ),
        ("return typeof window.pwned", json!("undefined")),
        (
            "return document.querySelectorAll('pre.content *').length",
            json!(0),
        ),
    ] {
        assert_eq!(browser.eval(script), expected, "{script}");
    }
    let page = browser.text("main");
    assert!(page.contains("Trust: quarantined"), "{page}");
    assert!(page.contains("author-mismatch"), "{page}");
    browser.screenshot("quarantined");

    // A phone-width window: nothing wider than the screen.
    browser.call(
        "POST",
        "/session/window/rect",
        json!({"width": 390, "height": 844}),
    );
    for path in ["/", &format!("/memory/{quarantined}"), "/review"] {
        browser.go(&format!("{}{path}", viewer.origin()));
        let overflow =
            browser.eval("return document.documentElement.scrollWidth - window.innerWidth");
        assert!(
            overflow.as_i64().is_some_and(|px| px <= 0),
            "{path} is {overflow} px wider than a phone"
        );
    }
    browser.go(&format!("{}/", viewer.origin()));
    browser.screenshot("timeline-phone");
}

#[test]
#[ignore = "needs chromium and chromium-driver (apt-get install -y chromium chromium-driver): bash scripts/test.sh"]
fn the_review_queue_trusts_and_forgets_after_a_confirmation_in_a_browser() {
    let (env, bob, quarantined, captured) = team();
    let viewer = Viewer::start(&env, &bob);
    let browser = Browser::start();
    browser.go(&viewer.url);
    browser.go(&format!("{}/review", viewer.origin()));
    let section = |id: &str| browser.texts(&format!("#{id} ol.memories li a.title"));
    assert_eq!(section("captured").len(), 1);
    assert_eq!(section("quarantined").len(), 1);
    assert_eq!(section("stale").len(), 1);
    browser.screenshot("review");
    browser.click("#tidy a[href='/review/tidy']");
    browser.wait_url("/review/tidy");
    let tidy = browser.wait_text("main h1", "Tidy's proposals");
    assert_eq!(tidy, "Tidy's proposals");
    // The stale memory, with its evidence.
    let proposed = browser.texts("#tidy ol.memories li .reason");
    assert!(
        proposed.iter().any(|why| why.contains("legacy.rs")),
        "{proposed:?}"
    );
    browser.go(&format!("{}/review", viewer.origin()));

    // Trust the quarantined one: a confirmation that names the command.
    browser.click("#quarantined a[href$='/trust']");
    assert!(
        browser
            .url()
            .ends_with(&format!("/memory/{quarantined}/trust"))
    );
    assert_eq!(
        browser.text("code.command"),
        format!("goldfish trust {quarantined}")
    );
    browser.screenshot("confirm");
    let release = browser.confirm(&bob, "releases", &quarantined, "Released");
    assert_eq!(release["type"], "trust");
    let shown = browser.text("pre.line");
    assert!(shown.contains(release["id"].as_str().unwrap()), "{shown}");
    browser.screenshot("released");
    browser.go(&format!("{}/review", viewer.origin()));
    assert_eq!(section("quarantined").len(), 0);

    // Forget the captured one.
    browser.click("#captured a[href$='/forget']");
    browser.wait_url("/forget");
    assert_eq!(
        browser.text("code.command"),
        format!("goldfish forget {captured}")
    );
    browser.confirm(&bob, "forgets", &captured, "Forgotten");
    browser.go(&format!("{}/review", viewer.origin()));
    assert_eq!(section("captured").len(), 0);
    let recalled = env.goldfish(&bob, &["show", &captured]);
    assert!(!recalled.status.success(), "forgotten for the CLI too");

    // A page of another origin posting to the viewer, in the same browser
    // that holds the cookie: refused, nothing written.
    let stale_id = browser
        .eval("return document.querySelector('#stale a.title').getAttribute('href').split('/')[2]");
    let stale_id = stale_id.as_str().unwrap().to_owned();
    let before = memory_lines(&bob).len();
    let attack = format!(
        "data:text/html,<form method=post action='{}/memory/{stale_id}/forget'><input name=key value=x></form><script>document.forms[0].submit()</script>",
        viewer.origin()
    );
    browser.go(&attack);
    let started = Instant::now();
    while !browser.url().starts_with(&viewer.origin())
        && started.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        browser.text("body").contains("refused"),
        "{}",
        browser.text("body")
    );
    assert_eq!(memory_lines(&bob).len(), before, "nothing written");
}

/// The viewer's cookie, from the printed link: the headers of a signed-in
/// request (Host, Cookie).
fn signed_in(viewer: &Viewer) -> (String, String) {
    let host = format!("127.0.0.1:{}", viewer.port);
    let exchanged = http(
        viewer.port,
        "GET",
        &format!("/?token={}", viewer.token()),
        &[("Host", &host)],
        "",
    );
    assert_eq!(exchanged.status, 303, "{exchanged:?}");
    (host, cookie_of(&exchanged))
}

/// A branch Alice pushed whose name is HTML, holding a memory of its
/// own, fetched by Bob. Returns the branch's name in Bob's clone
/// (`origin/…`) and the memory's text.
fn hostile_branch(env: &TestEnv, bob: &Path) -> (String, String) {
    let alice = env.path().join("alice");
    let name = "feature/<script>window.pwned=5</script>";
    let text = "The feature flag service caches flags for thirty seconds";
    env.git(&alice, &["checkout", "-q", "-b", name]);
    env.ok(&alice, &["store", "-t", "insight", text]);
    env.commit_all(&alice, "a memory on the branch");
    env.git(&alice, &["push", "-q", "origin", name]);
    env.git(bob, &["fetch", "-q"]);
    (format!("origin/{name}"), text.to_owned())
}

#[test]
fn the_viewer_supersedes_keeps_and_reviews_a_branch_over_http() {
    let (env, bob, quarantined, captured) = team();
    let (branch, branch_text) = hostile_branch(&env, &bob);
    let viewer = Viewer::start(&env, &bob);
    let port = viewer.port;
    let (host, cookie) = signed_in(&viewer);
    let with = [("Host", host.as_str()), ("Cookie", cookie.as_str())];
    let origin = viewer.origin();
    let own = [
        with[0],
        with[1],
        ("Content-Type", "application/x-www-form-urlencoded"),
        ("Origin", origin.as_str()),
    ];
    let id_of = |needle: &str| -> String {
        memory_lines(&bob)
            .iter()
            .find(|line| line["content"].as_str().is_some_and(|c| c.contains(needle)))
            .and_then(|line| line["id"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("no memory says {needle:?}"))
    };
    let payments = id_of("Payment retries");

    // Supersede: a form of the new memory, then the line, with the command.
    let page = http(
        port,
        "GET",
        &format!("/memory/{payments}/supersede"),
        &with,
        "",
    );
    assert_eq!(page.status, 200, "{page:?}");
    assert!(
        page.body.contains("<textarea name=\"text\""),
        "{}",
        page.body
    );
    let key = form_key(&page.body);
    let path = format!("/memory/{payments}/supersede");
    let form = format!(
        "key={key}&text={}&type=decision&tags=payments&files=",
        percent("Payment retries use exponential backoff, at most three attempts")
    );
    let refused = http(port, "POST", &path, &own[..3], &form);
    assert_eq!(refused.status, 403, "no Origin: {refused:?}");
    let done = http(port, "POST", &path, &own, &form);
    assert_eq!(done.status, 200, "{done:?}");
    let line = memory_lines(&bob)
        .into_iter()
        .find(|line| line["supersedes"] == payments.as_str())
        .expect("the new memory supersedes the old one in the log");
    assert_eq!(line["type"], "decision");
    assert!(
        done.body.contains(&format!(
            "goldfish store -t decision --tags payments --supersedes {payments} &#39;Payment retries"
        )) || done.body.contains(&format!(
            "goldfish store -t decision --tags payments --supersedes {payments} 'Payment retries"
        )),
        "{}",
        done.body
    );
    assert!(done.body.contains(line["id"].as_str().unwrap()));
    let old = http(port, "GET", &format!("/memory/{payments}"), &with, "");
    assert!(old.body.contains("superseded"), "{}", old.body);

    // Keep the captured memory: a commit of its file, nothing else.
    assert_eq!(
        http(
            port,
            "GET",
            &format!("/memory/{quarantined}/keep"),
            &with,
            ""
        )
        .status,
        400,
        "only a captured memory not committed is kept"
    );
    let page = http(port, "GET", &format!("/memory/{captured}/keep"), &with, "");
    assert_eq!(page.status, 200, "{page:?}");
    let file = crate::common::today(&bob);
    assert!(page.body.contains(&file), "{}", page.body);
    assert!(page.body.contains("git commit -m"), "{}", page.body);
    let before = env.git(&bob, &["rev-parse", "HEAD"]);
    let done = http(
        port,
        "POST",
        &format!("/memory/{captured}/keep"),
        &own,
        &format!("key={key}"),
    );
    assert_eq!(done.status, 200, "{done:?}");
    assert_eq!(
        env.git(&bob, &["rev-parse", "HEAD^"]),
        before,
        "one new commit on top: nothing rewritten"
    );
    assert_eq!(
        env.git(&bob, &["log", "-1", "--format=%s"]).trim(),
        format!("Keep the captured memory {captured}")
    );
    let committed = env.git(&bob, &["show", &format!("HEAD:{file}")]);
    assert!(committed.contains(&captured), "{committed}");
    let review = http(port, "GET", "/review", &with, "");
    assert!(
        !review.body.contains(&format!("/memory/{captured}/keep")),
        "kept: out of the queue"
    );
    // A file capture started (git does not know it yet) is added first.
    let fresh = "01M88B3FD0JAPT2D6XTHHG4C02";
    let line = json!({
        "id": fresh,
        "timestamp": "2026-11-22T09:00:00.000Z",
        "type": "observation",
        "content": "The integration suite needs the docker socket",
        "author": "Bob",
        "source": "capture:rules",
    });
    let new_file = ".goldfish/memories/2026-11-22-zz9new.jsonl";
    std::fs::write(bob.join(new_file), format!("{line}\n")).unwrap();
    let page = http(port, "GET", &format!("/memory/{fresh}/keep"), &with, "");
    assert!(
        page.body
            .contains(&format!("git add -- {new_file} &amp;&amp; git commit -m")),
        "{}",
        page.body
    );
    let done = http(
        port,
        "POST",
        &format!("/memory/{fresh}/keep"),
        &own,
        &format!("key={key}"),
    );
    assert_eq!(done.status, 200, "{done:?}");
    assert!(
        env.git(&bob, &["show", &format!("HEAD:{new_file}")])
            .contains(fresh),
        "the new file is in the commit"
    );

    // Near-duplicates without a model: a sentence.
    let page = http(port, "GET", &format!("/memory/{payments}"), &with, "");
    assert!(
        page.body
            .contains("near-duplicates need the embedding model"),
        "{}",
        page.body
    );
    let clusters = http(port, "GET", "/review/similar", &with, "");
    assert_eq!(clusters.status, 200);
    assert!(clusters.body.contains("need the embedding model"));

    // The branch review: the list, escaped; a name not in it is refused
    // before git sees it.
    let list = http(port, "GET", "/review/branch", &with, "");
    assert_eq!(list.status, 200, "{list:?}");
    assert!(!list.body.contains("<script>window"), "{}", list.body);
    assert!(
        list.body.contains("&lt;script&gt;window.pwned=5"),
        "{}",
        list.body
    );
    let chosen = http(
        port,
        "GET",
        &format!("/review/branch?name={}", percent(&branch)),
        &with,
        "",
    );
    assert_eq!(chosen.status, 200, "{chosen:?}");
    assert!(chosen.body.contains(&branch_text[..30]), "{}", chosen.body);
    assert!(chosen.body.contains("goldfish review"), "{}", chosen.body);
    for name in ["--output=/tmp/x", "HEAD~1", "main..feature"] {
        let refused = http(
            port,
            "GET",
            &format!("/review/branch?name={}", percent(name)),
            &with,
            "",
        );
        assert!(
            refused.body.contains("not a branch of this repository"),
            "{name}: {}",
            refused.body
        );
    }
}

#[test]
fn the_memory_page_lists_near_duplicates_and_the_queue_their_clusters_with_a_model() {
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("solo", "Alice");
    let text = "Payment retries use exponential backoff with jitter and five attempts";
    env.ok(&repo, &["store", "-t", "decision", text]);
    env.ok(
        &repo,
        &[
            "store",
            "--force",
            "-t",
            "decision",
            "Payment retries use exponential backoff with jitter and five attempts <b>now</b>",
        ],
    );
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "insight",
            "The staging database is restored every Monday",
        ],
    );
    let first = memory_lines(&repo)
        .iter()
        .find(|line| line["content"] == text)
        .and_then(|line| line["id"].as_str().map(str::to_owned))
        .unwrap();
    let viewer = Viewer::start(&env, &repo);
    let (host, cookie) = signed_in(&viewer);
    let with = [("Host", host.as_str()), ("Cookie", cookie.as_str())];
    let page = http(viewer.port, "GET", &format!("/memory/{first}"), &with, "");
    assert_eq!(page.status, 200, "{page:?}");
    let near = &page.body[page.body.find("id=\"near\"").unwrap()..];
    assert!(
        near.contains("five attempts &lt;b&gt;now&lt;/b&gt;"),
        "{near}"
    );
    assert!(!near.contains("staging database"), "{near}");
    let similar = env.ok(&repo, &["similar", &first, "--json"]);
    let first_similar: Value = serde_json::from_str(similar.lines().next().unwrap()).unwrap();
    assert!(
        near.contains(&format!(
            "/memory/{}",
            first_similar["id"].as_str().unwrap()
        )),
        "the page's near-duplicate is `similar`'s"
    );
    let clusters = http(viewer.port, "GET", "/review/similar", &with, "");
    assert_eq!(clusters.status, 200);
    assert!(clusters.body.contains("Cluster 1"), "{}", clusters.body);
    assert!(clusters.body.contains(&format!("/memory/{first}")));
    assert!(!clusters.body.contains("<b>now"), "escaped");
}

#[test]
#[ignore = "needs chromium and chromium-driver (apt-get install -y chromium chromium-driver): bash scripts/test.sh"]
fn a_memory_is_superseded_and_a_captured_one_kept_after_a_confirmation_in_a_browser() {
    let (env, bob, _, captured) = team();
    let payments = memory_lines(&bob)
        .iter()
        .find(|line| {
            line["content"]
                .as_str()
                .is_some_and(|c| c.starts_with("Payment retries"))
        })
        .and_then(|line| line["id"].as_str().map(str::to_owned))
        .unwrap();
    let viewer = Viewer::start(&env, &bob);
    let browser = Browser::start();
    browser.go(&viewer.url);

    // Supersede from the memory page: the form holds the old text.
    browser.go(&format!("{}/memory/{payments}", viewer.origin()));
    browser.click("section.actions a[href$='/supersede']");
    browser.wait_url("/supersede");
    let old = browser.eval("return document.querySelector('textarea[name=text]').value");
    assert!(
        old.as_str().unwrap().contains("exponential backoff"),
        "{old}"
    );
    browser.type_into(
        "textarea[name=text]",
        "Payment retries use exponential backoff with jitter, at most three attempts",
    );
    browser.screenshot("supersede");
    let new = browser.confirm(&bob, "supersedes", &payments, "Superseded");
    let new_id = new["id"].as_str().unwrap();
    assert!(browser.text("pre.line").contains(new_id));
    let command = browser.text("code.command");
    assert!(
        command.starts_with("goldfish store -t decision --tags payments")
            && command.contains(&format!("--supersedes {payments} 'Payment retries")),
        "{command}"
    );
    browser.screenshot("superseded");
    browser.go(&format!("{}/memory/{payments}", viewer.origin()));
    assert!(
        browser
            .texts("p.meta .badge")
            .iter()
            .any(|b| b == "superseded")
    );
    let page = browser.text("main");
    assert!(page.contains(&format!("Superseded by {new_id}")), "{page}");

    // Keep the captured memory from the review queue: a commit.
    browser.go(&format!("{}/review", viewer.origin()));
    browser.click("#captured a[href$='/keep']");
    browser.wait_url("/keep");
    let file = crate::common::today(&bob);
    assert_eq!(
        browser.text("code.command"),
        format!("git commit -m 'Keep the captured memory {captured}' -- {file}")
    );
    browser.screenshot("keep");
    browser.click("form button[type=submit]");
    browser.wait_text("main h1", "Kept");
    assert_eq!(
        env.git(&bob, &["log", "-1", "--format=%s"]).trim(),
        format!("Keep the captured memory {captured}")
    );
    let committed = env.git(&bob, &["show", &format!("HEAD:{file}")]);
    assert!(committed.contains(&captured), "the line is in the commit");
    assert!(
        browser
            .text("p.done")
            .contains(&env.git(&bob, &["rev-parse", "HEAD"]).trim()[..12])
    );
    browser.go(&format!("{}/review", viewer.origin()));
    assert_eq!(
        browser.texts("#captured ol.memories li a.title").len(),
        0,
        "kept: out of the queue"
    );
}

#[test]
#[ignore = "needs chromium and chromium-driver (apt-get install -y chromium chromium-driver): bash scripts/test.sh"]
fn the_review_of_a_branch_chosen_from_the_list_renders_inert_in_a_browser() {
    let (env, bob, _, _) = team();
    let (branch, text) = hostile_branch(&env, &bob);
    let viewer = Viewer::start(&env, &bob);
    let browser = Browser::start();
    browser.go(&viewer.url);
    browser.go(&format!("{}/review", viewer.origin()));
    browser.click("#branch a[href='/review/branch']");
    browser.wait_url("/review/branch");
    let names = browser.texts("ul.branches li a");
    assert!(names.contains(&branch), "the name as text: {names:?}");
    assert!(names.iter().any(|n| n == "main"), "{names:?}");
    browser.click("ul.branches a[href*='feature']");
    browser.wait_url("feature");
    browser.wait_text("#review h2", "Review of");
    assert_eq!(browser.text("#review h2 .branch"), branch);
    let review = browser.text("pre.review");
    assert!(review.contains(&text[..30]), "{review}");
    assert!(review.contains("added"), "{review}");
    let review_cli = env.goldfish(&bob, &["review", "origin/main", &branch]);
    let said = String::from_utf8_lossy(&review_cli.stdout).into_owned();
    assert!(said.starts_with("review of"), "{review_cli:?}");
    assert!(
        said.lines().all(|line| review.contains(line.trim())),
        "what `goldfish review` says:\n{said}\nthe page:\n{review}"
    );
    for (script, expected) in [
        ("return document.scripts.length", json!(0)),
        ("return typeof window.pwned", json!("undefined")),
        (
            "return document.querySelectorAll('ul.branches script, #review script').length",
            json!(0),
        ),
    ] {
        assert_eq!(browser.eval(script), expected, "{script}");
    }
    browser.screenshot("branch-review");
}

#[test]
#[ignore = "needs chromium and chromium-driver (apt-get install -y chromium chromium-driver): bash scripts/test.sh"]
fn a_followed_timeline_and_the_review_queue_show_a_pull_and_a_store_without_a_script() {
    let (env, bob, quarantined, _) = team();
    let alice = env.path().join("alice");
    let viewer = Viewer::start(&env, &bob);
    let browser = Browser::start();
    browser.go(&viewer.url);
    let refresh = "return Array.from(document.querySelectorAll('meta[http-equiv=refresh]')).map(m => m.content)";
    // Where something is typed, nothing loads again.
    for path in [format!("/memory/{quarantined}/forget"), "/".to_owned()] {
        browser.go(&format!("{}{path}", viewer.origin()));
        assert_eq!(browser.eval(refresh), json!([]), "{path}");
    }
    browser.click("p.live a");
    browser.wait_url("live=on");
    assert_eq!(browser.eval(refresh), json!(["10"]));
    assert_eq!(browser.eval("return document.scripts.length"), json!(0));
    let wait_for = |css: &str, needle: &str| {
        let started = Instant::now();
        loop {
            if browser.texts(css).iter().any(|text| text.contains(needle)) {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(25),
                "{css} never showed {needle:?}: {:?}",
                browser.texts(css)
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    };

    // Alice pushes a memory, Bob pulls (his hooks sync): the followed
    // timeline shows it, with no reload by anyone.
    env.ok(
        &alice,
        &[
            "store",
            "-t",
            "decision",
            "Feature flags are read once per request",
        ],
    );
    env.commit_all(&alice, "a memory");
    env.git(&alice, &["push", "-q"]);
    env.git(&bob, &["pull", "-q"]);
    wait_for("ol.memories li a.title", "Feature flags are read once");

    // The review queue follows too: a store from another process.
    browser.go(&format!("{}/review", viewer.origin()));
    assert_eq!(browser.eval(refresh), json!(["10"]));
    env.ok(
        &bob,
        &[
            "store",
            "--source",
            "capture:rules",
            "-t",
            "observation",
            "The CI cache is keyed by the lockfile hash",
        ],
    );
    wait_for("#captured ol.memories li a.title", "CI cache is keyed");
}

#[test]
#[ignore = "needs chromium and chromium-driver (apt-get install -y chromium chromium-driver): bash scripts/test.sh"]
fn near_duplicates_and_their_clusters_render_inert_in_a_browser() {
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("solo", "Alice");
    let text = "Deploys run the migration job first <img src=x onerror=\"window.pwned = 1\"> then the web pods";
    env.ok(&repo, &["store", "-t", "decision", text]);
    env.ok(
        &repo,
        &[
            "store",
            "--force",
            "-t",
            "decision",
            &format!("{text} <script>window.pwned = 2</script>"),
        ],
    );
    let first = memory_lines(&repo)
        .iter()
        .find(|line| line["content"] == text)
        .and_then(|line| line["id"].as_str().map(str::to_owned))
        .unwrap();
    let viewer = Viewer::start(&env, &repo);
    let browser = Browser::start();
    browser.go(&viewer.url);
    for (path, css) in [
        (format!("/memory/{first}"), "#near ol.memories li a.title"),
        (
            "/review/similar".to_owned(),
            "section.cluster ol.memories li a.title",
        ),
    ] {
        browser.go(&format!("{}{path}", viewer.origin()));
        let titles = browser.texts(css);
        assert!(
            titles
                .iter()
                .any(|t| t.contains("<script>window.pwned = 2</script>")
                    || t.contains("<img src=x onerror=")),
            "{path}: shown as text: {titles:?}"
        );
        for (script, expected) in [
            ("return document.scripts.length", json!(0)),
            (
                "return document.querySelectorAll('main img, [onerror]').length",
                json!(0),
            ),
            ("return typeof window.pwned", json!("undefined")),
        ] {
            assert_eq!(browser.eval(script), expected, "{path}: {script}");
        }
    }
}
