//! What a check's output says went wrong, read by rules: the failing tests'
//! names and their error messages, from cargo (both panic formats), Jest,
//! Vitest, pytest and go test, and the error lines of compilers and other
//! tools. A message spread over lines (a Rust panic's next line, Jest's
//! `Expected`/`Received`, pytest's `E` lines) is joined into one line.
//! Pure string work.

/// Failing test names kept per output.
pub const MAX_TESTS: usize = 10;

/// Error lines kept per output.
pub const MAX_ERRORS: usize = 5;

/// Bytes of a test name or an error line kept.
pub const MAX_LINE_BYTES: usize = 240;

/// Lines of one message (its first line and details) joined at most.
const MAX_MESSAGE_LINES: usize = 6;

/// The failing tests and error lines of an output, in the order printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Failures {
    pub tests: Vec<String>,
    pub errors: Vec<String>,
}

impl Failures {
    fn test(&mut self, name: &str) {
        let name = name.trim();
        if !name.is_empty()
            && name.len() <= MAX_LINE_BYTES
            && self.tests.len() < 4 * MAX_TESTS
            && !self.tests.iter().any(|n| n == name)
        {
            self.tests.push(name.to_owned());
        }
    }

    fn error(&mut self, line: String) {
        let line = clip(line.trim());
        if !line.is_empty() && !self.errors.contains(&line) && self.errors.len() < MAX_ERRORS {
            self.errors.push(line);
        }
    }
}

/// Reads an output (colours removed first).
pub fn read(output: &str) -> Failures {
    let text = strip_ansi(output);
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Failures::default();
    // Jest's `FAIL path` before its `●` blocks.
    let mut suite: Option<&str> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        i += 1;
        // cargo: `test a::b ... FAILED`, `---- a::b stdout ----` and the
        // closing `failures:` list.
        if let Some(name) = trimmed
            .strip_prefix("test ")
            .and_then(|rest| rest.strip_suffix(" ... FAILED"))
        {
            found.test(name);
        } else if let Some(name) = trimmed
            .strip_prefix("---- ")
            .and_then(|rest| rest.strip_suffix(" stdout ----"))
        {
            found.test(name);
        } else if trimmed == "failures:" {
            i = listed_tests(&lines, i, &mut found);
        } else if let Some(at) = trimmed.find("panicked at ") {
            i = rust_panic(&lines, i, &trimmed[at + "panicked at ".len()..], &mut found);
        }
        // Jest: `FAIL path`, then `● Suite › test` blocks.
        else if let Some(title) = trimmed.strip_prefix("● ") {
            let name = match (title.trim(), suite) {
                ("Test suite failed to run", Some(path)) => path,
                (title, _) => title,
            };
            i = test_and_message(&lines, i, name, false, &mut found);
        } else if let Some(rest) = trimmed
            .strip_prefix("FAIL ")
            .filter(|_| line.starts_with("FAIL ") || line.starts_with(" FAIL "))
        {
            let rest = rest.trim();
            // Vitest: ` FAIL  file > Suite > test` (or `file [ file ]` when
            // the file failed to run), its message on the next lines.
            if rest.contains(" > ") || rest.contains(" [ ") {
                let name = rest.split(" [ ").next().unwrap_or(rest);
                i = test_and_message(&lines, i, name, true, &mut found);
            } else {
                suite = Some(rest);
            }
        }
        // Jest's `✕ test (3 ms)` and Vitest's `× test 4ms` (the full name
        // comes with the block).
        else if let Some(rest) = trimmed
            .strip_prefix("✕ ")
            .or_else(|| trimmed.strip_prefix("× "))
        {
            found.test(without_duration(rest));
        }
        // pytest: `FAILED path::test - message`, and `E` lines.
        else if let Some(rest) = trimmed.strip_prefix("FAILED ") {
            found.test(rest.split(" - ").next().unwrap_or(rest));
        } else if line.starts_with("E ") {
            i = pytest_message(&lines, i, &mut found);
        }
        // go test: `--- FAIL: TestX (0.00s)`, `x_test.go:12: message`,
        // `panic: …`.
        else if let Some(rest) = trimmed.strip_prefix("--- FAIL: ") {
            found.test(rest.split(' ').next().unwrap_or(rest));
        } else if is_go_test_line(trimmed)
            || trimmed.starts_with("panic: ")
            || is_error_line(trimmed)
            || is_compiler_diagnostic(trimmed)
        {
            found.error(trimmed.to_owned());
        }
    }
    drop_partial_names(&mut found.tests);
    found.tests.truncate(MAX_TESTS);
    found
}

/// The names cargo lists after `failures:` from `lines[i]`. Returns the
/// index of the first line after them.
fn listed_tests(lines: &[&str], mut i: usize, found: &mut Failures) -> usize {
    while let Some(next) = lines.get(i).filter(|l| is_listed_test(l)) {
        found.test(next);
        i += 1;
    }
    i
}

/// A failing test and its message on the lines from `lines[i]` (Jest's
/// block, Vitest's; `vitest` as [`message_lines`] takes it). Returns the
/// index of the first line after the message.
fn test_and_message(
    lines: &[&str],
    i: usize,
    name: &str,
    vitest: bool,
    found: &mut Failures,
) -> usize {
    found.test(name);
    let (message, next) = message_lines(lines, i, vitest);
    found.error(joined(&message, None));
    next
}

/// pytest's `E` lines, the first at `lines[i - 1]`, joined into one error
/// with where it failed. Returns the index of the first line after them.
fn pytest_message(lines: &[&str], mut i: usize, found: &mut Failures) -> usize {
    let mut message = vec![lines[i - 1][1..].trim()];
    while let Some(next) = lines.get(i).filter(|l| l.starts_with("E ")) {
        message.push(next[1..].trim());
        i += 1;
    }
    message.truncate(MAX_MESSAGE_LINES);
    // `tests/test_auth.py:8: AssertionError`: where it failed.
    let location = lines[i..]
        .iter()
        .find(|l| !l.trim().is_empty())
        .and_then(|l| l.trim().rsplit_once(": "))
        .map(|(at, _)| at)
        .filter(|at| is_location(at));
    found.error(joined(&message, location));
    i
}

/// Leaves out a name another one holds: `TestX` when `TestX/case` failed;
/// Jest's short `✕` name when the block gave the full one.
fn drop_partial_names(tests: &mut Vec<String>) {
    let names = tests.clone();
    tests.retain(|name| {
        !names.iter().any(|other| {
            other != name
                && (other.starts_with(&format!("{name}/"))
                    || other.ends_with(&format!(" › {name}"))
                    || other.ends_with(&format!(" > {name}")))
        })
    });
}

/// A Rust panic whose header is at `lines[i - 1]`, `rest` what follows its
/// `panicked at `: before Rust 1.73 `'MESSAGE', FILE:LINE:COL` (the message
/// may go on over lines), since then `FILE:LINE:COL:` with the message on
/// the next lines. Returns the index of the first line after it.
fn rust_panic(lines: &[&str], mut i: usize, rest: &str, found: &mut Failures) -> usize {
    if let Some(quoted) = rest.strip_prefix('\'') {
        let mut message = Vec::new();
        let mut current = quoted;
        loop {
            if let Some((text, location)) = current.rsplit_once("', ")
                && is_location(location.trim())
            {
                message.push(text);
                message.truncate(MAX_MESSAGE_LINES);
                found.error(joined(&message, Some(location.trim())));
                return i;
            }
            message.push(current);
            match lines.get(i) {
                Some(next) if message.len() < 4 * MAX_MESSAGE_LINES => {
                    current = next.trim();
                    i += 1;
                }
                // No end: what was read, without a location.
                _ => {
                    message.truncate(MAX_MESSAGE_LINES);
                    found.error(joined(&message, None));
                    return i;
                }
            }
        }
    }
    let location = rest.trim().trim_end_matches(':');
    if !is_location(location) {
        found.error(format!("panicked at {}", rest.trim()));
        return i;
    }
    let mut message = Vec::new();
    while let Some(next) = lines.get(i).map(|l| l.trim()) {
        if next.is_empty()
            || next.starts_with("note: ")
            || next.starts_with("stack backtrace:")
            || message.len() == MAX_MESSAGE_LINES
        {
            break;
        }
        message.push(next);
        i += 1;
    }
    if message.is_empty() {
        found.error(format!("panicked at {location}"));
    } else {
        found.error(joined(&message, Some(location)));
    }
    i
}

/// The lines of a Jest or Vitest message from `lines[i]`: blank lines
/// before it skipped, up to its code frame, stack (`at …`, `❯ …`) or the
/// next block; Vitest's also up to the first blank line (its diff
/// follows). Returns them and the index after them.
fn message_lines<'a>(lines: &[&'a str], mut i: usize, vitest: bool) -> (Vec<&'a str>, usize) {
    let mut message = Vec::new();
    while let Some(next) = lines.get(i).map(|l| l.trim()) {
        if next.is_empty() {
            if vitest && !message.is_empty() {
                break;
            }
            i += 1;
            continue;
        }
        if is_code_frame(next)
            || next.starts_with("at ")
            || next.starts_with("❯ ")
            || next.starts_with("● ")
            || next.starts_with("FAIL ")
            || next.starts_with("PASS ")
            || next.starts_with("Test Suites:")
            || next.starts_with('⎯')
            || message.len() == MAX_MESSAGE_LINES
        {
            break;
        }
        message.push(next);
        i += 1;
    }
    (message, i)
}

/// One line of a message: its first line, the others in parentheses,
/// then where: `assertion failed: x (left: 1, right: 2), at src/a.rs:3:4`.
fn joined(message: &[&str], location: Option<&str>) -> String {
    let mut parts = message
        .iter()
        .map(|l| l.trim().trim_end_matches(','))
        .filter(|l| !l.is_empty());
    let mut line = parts.next().unwrap_or_default().to_owned();
    let details: Vec<&str> = parts.collect();
    if !details.is_empty() {
        line.push_str(&format!(" ({})", details.join(", ")));
    }
    if let Some(location) = location {
        if line.is_empty() {
            line = format!("failed at {location}");
        } else {
            line.push_str(&format!(", at {location}"));
        }
    }
    line
}

/// `src/a.rs:3:4`, `tests/test_a.py:8`: a path, a line, maybe a column.
fn is_location(text: &str) -> bool {
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let Some((rest, last)) = text.rsplit_once(':') else {
        return false;
    };
    if !numeric(last) {
        return false;
    }
    let path = match rest.rsplit_once(':') {
        Some((path, line)) if numeric(line) => path,
        _ => rest,
    };
    !path.is_empty() && !path.contains(char::is_whitespace)
}

/// A name of cargo's closing `failures:` list: four spaces, one word.
fn is_listed_test(line: &&str) -> bool {
    line.starts_with("    ")
        && !line.trim().is_empty()
        && !line.trim().contains(char::is_whitespace)
}

/// `  17 | code`, `> 19 | code`, `     |    ^`, Vitest's `18|   code`.
fn is_code_frame(line: &str) -> bool {
    let rest = line.trim_start_matches('>').trim_start();
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    rest.trim_start().starts_with('|')
}

/// `numbering_test.go:11: message`.
fn is_go_test_line(line: &str) -> bool {
    line.split_once(": ").is_some_and(|(at, _)| {
        at.rsplit_once(':')
            .is_some_and(|(file, n)| file.ends_with("_test.go") && n.parse::<u32>().is_ok())
    })
}

/// A compiler's or checker's diagnostic in the form most of them share,
/// `PATH:LINE:COL: message` (go build, gofmt, go vet, gcc, clang, javac's
/// `-Xdiags`, eslint's unix format), or `PATH:LINE: error: message`
/// (mypy): a source file's path, numbers, and a message that is not a
/// warning or a note.
fn is_compiler_diagnostic(line: &str) -> bool {
    let numeric = |s: &str| !s.is_empty() && s.len() <= 7 && s.bytes().all(|b| b.is_ascii_digit());
    let mut parts = line.splitn(4, ':');
    let (Some(path), Some(row), Some(third)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let (has_column, message) = match parts.next() {
        Some(message) if numeric(third) => (true, message),
        _ => (false, line.splitn(3, ':').nth(2).unwrap_or("")),
    };
    let message = message.trim();
    let lower = message.to_ascii_lowercase();
    // A source file: no spaces, a name with a short extension.
    let source = !path.contains(char::is_whitespace)
        && path
            .rsplit('/')
            .next()
            .and_then(|name| name.rsplit_once('.'))
            .is_some_and(|(stem, extension)| {
                !stem.is_empty()
                    && (1..=5).contains(&extension.len())
                    && extension.bytes().all(|b| b.is_ascii_alphanumeric())
                    && extension.bytes().any(|b| b.is_ascii_alphabetic())
            });
    source
        && numeric(row)
        && !message.is_empty()
        && !["warning", "note", "info", "hint"]
            .iter()
            .any(|quiet| lower.starts_with(quiet))
        && (has_column || lower.starts_with("error"))
}

/// `applies the discount once 4ms` → `applies the discount once`;
/// `(3 ms)` too.
fn without_duration(name: &str) -> &str {
    let name = name.trim();
    if let Some((head, tail)) = name.rsplit_once(" (")
        && tail.ends_with("ms)")
    {
        return head;
    }
    match name.rsplit_once(' ') {
        Some((head, tail))
            if tail.ends_with("ms")
                && tail
                    .trim_end_matches("ms")
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b == b'.') =>
        {
            head
        }
        _ => name,
    }
}

/// Lines that say what went wrong, whoever printed them: compiler errors
/// (`error[E0599]: …`), `TypeError: …`, `…Exception: …`, failed
/// assertions, git's `fatal:`.
fn is_error_line(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    let named_error = line.split_once(": ").is_some_and(|(name, _)| {
        (name.ends_with("Error") || name.ends_with("Exception"))
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_')
    });
    (lower.starts_with("error") && !lower.starts_with("error: test failed"))
        || named_error
        || lower.contains("exception:")
        || lower.contains("assertion") && lower.contains("failed")
        || lower.starts_with("fatal:")
}

/// Terminal colours and other escape sequences removed.
pub fn strip_ansi(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\u{1b}') {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.clone().next() == Some('[') {
            chars.next();
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
    }
    out.into()
}

fn clip(line: &str) -> String {
    let mut end = line.len().min(MAX_LINE_BYTES);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(output: &str, tests: &[&str], first_error: &str) {
        let found = read(output);
        assert_eq!(found.tests, tests, "{found:#?}");
        assert_eq!(
            found.errors.first().map(String::as_str),
            Some(first_error),
            "{found:#?}"
        );
    }

    #[test]
    fn cargo_since_1_73_keeps_the_message_after_the_panic_line() {
        check(
            include_str!("../../../../fixtures/capture/outputs/cargo-test.txt"),
            &["billing::invoice::tests::numbers_are_unique_across_retries"],
            "assertion `left != right` failed: duplicate invoice number 1042 (left: 1042, right: 1042), at src/billing/invoice.rs:38:9",
        );
    }

    #[test]
    fn cargo_before_1_73_reads_quoted_messages_over_lines() {
        let output = include_str!("../../../../fixtures/capture/outputs/cargo-test-rust-1.72.txt");
        check(
            output,
            &[
                "billing::invoice::tests::empty_amount_is_zero",
                "billing::invoice::tests::numbers_are_unique_across_retries",
            ],
            "called `Result::unwrap()` on an `Err` value: ParseIntError { kind: Empty }, at src/billing/invoice.rs:23:42",
        );
        assert_eq!(
            read(output).errors[1],
            "assertion failed: `(left != right)` (left: `1042`, right: `1042`: duplicate invoice number 1042), at src/billing/invoice.rs:38:9"
        );
        // The one-line form, alone.
        check(
            "thread 'x' panicked at 'msg', src/a.rs:1:2\n",
            &[],
            "msg, at src/a.rs:1:2",
        );
    }

    #[test]
    fn jest_blocks_name_the_test_and_keep_expected_and_received() {
        let output = include_str!("../../../../fixtures/capture/outputs/jest.txt");
        check(
            output,
            &[
                "Cart › total › applies the discount once",
                "a missing item has no price",
            ],
            "expect(received).toBe(expected) // Object.is equality (Expected: 90, Received: 81)",
        );
        assert_eq!(
            read(output).errors[1..],
            ["TypeError: Cannot read properties of undefined (reading 'price')"]
        );
    }

    #[test]
    fn vitest_names_the_test_with_its_file() {
        check(
            include_str!("../../../../fixtures/capture/outputs/vitest.txt"),
            &["src/cart/total.test.js > Cart > total > applies the discount once"],
            "AssertionError: expected 81 to be 90 // Object.is equality",
        );
    }

    /// Vitest colours its output even through a pipe (as in Claude Code's
    /// Bash tool): read the same as without.
    #[test]
    fn vitest_in_colour_reads_the_same() {
        let plain = read(include_str!(
            "../../../../fixtures/capture/outputs/vitest.txt"
        ));
        let coloured = read(include_str!(
            "../../../../fixtures/capture/outputs/vitest-color.txt"
        ));
        assert_eq!(coloured, plain);
    }

    #[test]
    fn pytest_joins_its_e_lines() {
        check(
            include_str!("../../../../fixtures/capture/outputs/pytest.txt"),
            &["tests/test_auth.py::test_expired_token_is_rejected"],
            "AssertionError: token expired 100 s ago (assert False, +  where False = is_expired({'exp': 1000}, now=1100)), at tests/test_auth.py:8",
        );
    }

    #[test]
    fn go_test_names_subtests_and_keeps_their_lines() {
        let output = include_str!("../../../../fixtures/capture/outputs/go-test.txt");
        check(
            output,
            &[
                "TestNumbersAreUniqueAcrossRetries",
                "TestNumbersStartAt/thousand",
            ],
            "numbering_test.go:11: duplicate invoice number 1042: issued twice after a retry",
        );
        assert_eq!(read(output).errors.len(), 2);
    }

    #[test]
    fn compiler_errors_and_colours() {
        check(
            "\u{1b}[1m\u{1b}[31merror[E0599]\u{1b}[0m: no method named `journal` found\nerror: could not compile `goldfish`\nerror: test failed, to rerun pass `--lib`\n",
            &[],
            "error[E0599]: no method named `journal` found",
        );
        assert_eq!(read("Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: bad port\n").errors, ["ValueError: bad port"]);
        assert!(read("warning: unused import\nall good\n").errors.is_empty());
        // `PATH:LINE:COL: message`, as go, gofmt and gcc print it; mypy's
        // `PATH:LINE: error:`.
        assert_eq!(
            read("[fmt] $ gofmt -w .\ncmd/cli/trailers.go:11:18: expected ';', found entire\n[fmt] ERROR task failed\n").errors,
            ["cmd/cli/trailers.go:11:18: expected ';', found entire"]
        );
        assert_eq!(
            read("src/a.c:3:5: error: unknown type name 'sizet'\n").errors,
            ["src/a.c:3:5: error: unknown type name 'sizet'"]
        );
        assert_eq!(
            read("app/models.py:12: error: Incompatible return value type\n").errors,
            ["app/models.py:12: error: Incompatible return value type"]
        );
        // Not diagnostics: warnings, notes, clock times, prose.
        for quiet in [
            "src/a.c:3:5: warning: unused variable 'x'",
            "src/a.c:3:5: note: declared here",
            "12:30:01: build started",
            "see docs/setup.md:4 for details",
            "app/models.py:12: Incompatible return value type",
        ] {
            assert!(read(quiet).errors.is_empty(), "{quiet}");
        }
    }
}
