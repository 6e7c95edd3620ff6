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
        // bun: `(fail) suite > test [0.12ms]`.
        else if let Some(rest) = trimmed.strip_prefix("(fail) ") {
            let name = rest.rsplit_once(" [").map_or(rest, |(name, _)| name);
            found.test(name);
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
            || is_tsc_error(trimmed)
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
    is_source_file(path)
        && numeric(row)
        && !message.is_empty()
        && !["warning", "note", "info", "hint"]
            .iter()
            .any(|quiet| lower.starts_with(quiet))
        && (has_column || lower.starts_with("error"))
}

/// An error as tsc (and vue-tsc) prints it: `PATH(LINE,COL): error
/// TSnnnn: message`, with `--pretty` (its default on a terminal) `PATH:
/// LINE:COL - error TSnnnn: message`, or `error TSnnnn: message` for the
/// project's configuration. Its warnings and prose naming a code are not.
fn is_tsc_error(line: &str) -> bool {
    let Some(at) = line.find("error TS") else {
        return false;
    };
    let (location, rest) = (&line[..at], &line[at + "error TS".len()..]);
    let code = rest.bytes().take_while(u8::is_ascii_digit).count();
    if code == 0 || !rest[code..].starts_with(':') {
        return false;
    }
    if location.is_empty() {
        return true;
    }
    let numbers = |text: &str, separator: char| {
        text.split_once(separator).is_some_and(|(row, column)| {
            [row, column]
                .iter()
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    // `src/a.ts(3,5): `
    let plain = location
        .strip_suffix("): ")
        .and_then(|head| head.rsplit_once('('))
        .is_some_and(|(path, at)| is_source_file(path) && numbers(at, ','));
    // `src/a.ts:3:5 - `
    let pretty = location
        .strip_suffix(" - ")
        .and_then(|head| head.split_once(':'))
        .is_some_and(|(path, at)| is_source_file(path) && numbers(at, ':'));
    plain || pretty
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

/// Where an output says a check went wrong: the source files its
/// diagnostics and tracebacks name, the identifiers its error lines quote,
/// and the source lines it shows (rustc's and Vitest's code frames, a
/// Python traceback's lines). What a session compares with the text it
/// added: an error in code the session itself just wrote is its own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sites {
    pub files: Vec<String>,
    pub names: Vec<String>,
    pub code: Vec<String>,
}

/// Sites kept of each kind.
const MAX_SITES: usize = 20;

/// Reads the [`Sites`] of an output (colours removed first).
pub fn sites(output: &str) -> Sites {
    let text = strip_ansi(output);
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Sites::default();
    let push = |list: &mut Vec<String>, item: &str| {
        let item = item.trim();
        if !item.is_empty()
            && item.len() <= MAX_LINE_BYTES
            && list.len() < MAX_SITES
            && !list.iter().any(|i| i == item)
        {
            list.push(item.to_owned());
        }
    };
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        // `--> src/a.rs:3:5`, `src/a.ts(3,5): error`, `a.go:3:5: msg`.
        let located = trimmed.strip_prefix("--> ").unwrap_or(trimmed);
        if let Some(path) = source_path(located) {
            push(&mut found.files, path);
        }
        // Python: `File "pkg/a.py", line 3, in f` and the code under it.
        if let Some(rest) = trimmed.strip_prefix("File \"")
            && let Some((path, after)) = rest.split_once('"')
            && after.trim_start().starts_with(", line ")
        {
            push(&mut found.files, path);
            if let Some(code) = lines.get(i + 1).map(|l| l.trim())
                && !code.is_empty()
                && !code.starts_with("File \"")
                && !code.starts_with('^')
            {
                push(&mut found.code, code);
            }
        }
        if is_code_frame(trimmed) {
            let code = trimmed.trim_start_matches('>').trim_start();
            let code = code
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .trim_start();
            let code = code.trim_start_matches('|');
            if !code.trim().is_empty() && !code.trim().starts_with(['^', '-', '~', '|']) {
                push(&mut found.code, code);
            }
        }
        let lower = trimmed.to_ascii_lowercase();
        if lower.starts_with("error")
            || lower.contains(" error")
            || lower.contains("error:")
            || lower.contains("undefined:")
            || lower.contains("exception")
            || is_compiler_diagnostic(trimmed)
        {
            for name in quoted_names(trimmed) {
                push(&mut found.names, name);
            }
        }
    }
    found
}

/// The path of a `PATH:LINE…` or `PATH(LINE,COL)` location at the start of
/// `text`, when it names a source file.
fn source_path(text: &str) -> Option<&str> {
    let end = text.find([':', '(']).filter(|end| *end > 0)?;
    let (path, rest) = text.split_at(end);
    let digits = rest[1..].bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    is_source_file(path).then_some(path.trim_start_matches("./"))
}

/// A path without spaces whose name has a short extension: `src/a.ts`.
fn is_source_file(path: &str) -> bool {
    !path.contains(char::is_whitespace)
        && path
            .rsplit('/')
            .next()
            .and_then(|name| name.rsplit_once('.'))
            .is_some_and(|(stem, extension)| {
                !stem.is_empty()
                    && (1..=5).contains(&extension.len())
                    && extension.bytes().all(|b| b.is_ascii_alphanumeric())
                    && extension.bytes().any(|b| b.is_ascii_alphabetic())
            })
}

/// The identifiers an error line quotes (`` `a::b` ``, `'x'`, `"x"`, go's
/// `undefined: x`), split at `::` and `.`, of 3 characters or more.
fn quoted_names(line: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let code = |c: char| c.is_alphanumeric() || "_:.<>&*".contains(c);
    for (start, quote) in line.char_indices().filter(|(_, c)| "`'\"".contains(*c)) {
        let inside = &line[start + 1..];
        let end = inside.find(|c: char| !code(c)).unwrap_or(inside.len());
        if end > 0 && inside[end..].starts_with(quote) {
            names.extend(identifiers(&inside[..end]));
        }
    }
    if let Some((_, rest)) = line.split_once("undefined: ") {
        names.extend(identifiers(
            rest.split_whitespace().next().unwrap_or_default(),
        ));
    }
    names
}

/// The identifiers of `text` of 3 characters or more.
pub fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| word.len() >= 3 && !word.starts_with(|c: char| c.is_ascii_digit()))
}

/// Whether a test runner's or a checker's summary in `output` reports
/// failures, whatever the command's exit code (a pipe into `tail`, a
/// `|| true`): bun's and node's `N fail`, cargo's `test result: FAILED`,
/// pytest's `= N failed`, Jest's and Vitest's `Tests: N failed`, mocha's
/// `N failing`, rspec's and ExUnit's `N failures`, go's `FAIL`, tsc's
/// `Found N errors`, ESLint's `✖ N problems`, rustc's `could not compile`.
/// A count of 0 reports none. tsc's error lines report failures on their
/// own: a `| head` cuts its summary, which comes last.
pub fn reports_failures(output: &str) -> bool {
    let text = strip_ansi(output);
    text.lines()
        .map(str::trim)
        .any(|line| summary_line_fails(line) || is_tsc_error(line))
}

fn summary_line_fails(line: &str) -> bool {
    // `N word` anywhere in the line, N > 0, for one of `words`.
    let counts = |words: &[&str]| {
        let tokens: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == ',' || c == '|' || c == '(' || c == ')')
            .filter(|t| !t.is_empty())
            .collect();
        tokens.windows(2).any(|pair| {
            pair[0].parse::<u64>().is_ok_and(|n| n > 0)
                && words
                    .iter()
                    .any(|word| pair[1].trim_end_matches(['.', ';', ':', '!']) == *word)
        })
    };
    line.starts_with("test result: FAILED")
        || line.starts_with("error: could not compile")
        || line == "FAIL"
        || line.starts_with("FAIL\t")
        || line.starts_with("--- FAIL:")
        // bun: ` 3 fail`; node --test: `# fail 3`; mocha: `3 failing`.
        || (line.ends_with(" fail") || line.ends_with(" failing")) && counts(&["fail", "failing"])
        || line
            .strip_prefix("# fail ")
            .is_some_and(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0))
        // pytest: `==== 1 failed, 2 passed in 0.1s ====`.
        || line.starts_with('=') && counts(&["failed", "error", "errors"])
        // Jest: `Tests: 3 failed, 10 passed`; Vitest: `Tests  3 failed | 10 passed`.
        || (line.starts_with("Tests:") || line.starts_with("Tests ") || line.starts_with("Test Files ")
            || line.starts_with("Test Suites:"))
            && counts(&["failed"])
        // rspec: `10 examples, 3 failures`; ExUnit: `10 tests, 3 failures`.
        || (line.contains(" examples, ") || line.contains(" tests, ") || line.contains(" test, "))
            && counts(&["failure", "failures"])
        // tsc: `Found 3 errors in 2 files.`; ESLint: `✖ 3 problems (3 errors, 0 warnings)`.
        || line.starts_with("Found ") && counts(&["error", "errors"])
        || line.starts_with("✖ ") && counts(&["error", "errors"])
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

    #[test]
    fn tsc_errors_are_read_and_fail_the_check_without_its_summary() {
        // tsc's two formats: `PATH(LINE,COL): error TSnnnn:` and, with
        // `--pretty` (its default on a terminal), `PATH:LINE:COL - error
        // TSnnnn:` in colour; here through `| head`, which cut the
        // closing `Found N errors` and left the exit code 0.
        let plain = "src/index.ts(22,5): error TS2322: Type 'string | undefined' is not assignable to type 'string'.\n  Type 'undefined' is not assignable to type 'string'.\n";
        let pretty = "\u{1b}[96msrc/api.test.ts\u{1b}[0m:\u{1b}[93m29\u{1b}[0m:\u{1b}[93m39\u{1b}[0m - \u{1b}[91merror\u{1b}[0m\u{1b}[90m TS2345: \u{1b}[0mArgument of type 'null' is not assignable to parameter of type 'NextMiddleware'.\n\n\u{1b}[7m29\u{1b}[0m     vi.mocked(auth).mockResolvedValue(null);\n";
        assert_eq!(
            read(plain).errors,
            [
                "src/index.ts(22,5): error TS2322: Type 'string | undefined' is not assignable to type 'string'."
            ]
        );
        assert_eq!(
            read(pretty).errors,
            [
                "src/api.test.ts:29:39 - error TS2345: Argument of type 'null' is not assignable to parameter of type 'NextMiddleware'."
            ]
        );
        // A config error has no location.
        let config = "error TS5023: Unknown compiler option 'strictest'.\n";
        for failing in [plain, pretty, config] {
            assert!(reports_failures(failing), "{failing}");
        }
        // Prose that names a code, a warning-free run, a path with a
        // number: no error.
        for quiet in [
            "Fixed error TS2322 in src/index.ts",
            "see src/a.ts(3,5) for the call",
            "src/a.ts:3:5 - warning TS6133: 'x' is declared but never read.",
        ] {
            assert!(!reports_failures(quiet), "{quiet}");
        }
        assert!(read("see src/a.ts(3,5) for the call").errors.is_empty());
    }

    #[test]
    fn a_summary_that_reports_failures_is_failing_whatever_the_exit_code() {
        for failing in [
            " 1348 pass\n 3 fail\n 2402 expect() calls\nRan 1351 tests across 88 files. [4.21s]",
            "test result: FAILED. 10 passed; 1 failed; 0 ignored",
            "===== 1 failed, 12 passed in 0.31s =====",
            "Tests:       3 failed, 10 passed, 13 total",
            " Test Files  1 failed | 4 passed (5)\n      Tests  2 failed | 40 passed (42)",
            "  12 passing (40ms)\n  3 failing",
            "10 examples, 3 failures",
            "Finished in 0.1 seconds\n1 doctest, 10 tests, 2 failures",
            "# tests 4\n# pass 3\n# fail 1",
            "--- FAIL: TestReset (0.00s)\nFAIL\nFAIL\tentire.io/cli/cmd 0.2s",
            "Found 3 errors in 2 files.",
            "✖ 3 problems (3 errors, 0 warnings)",
            "\x1b[31m 2 fail\x1b[0m",
        ] {
            assert!(reports_failures(failing), "{failing}");
        }
        for passing in [
            " 1351 pass\n 0 fail\nRan 1351 tests across 88 files.",
            "test result: ok. 12 passed; 0 failed",
            "===== 12 passed in 0.31s =====",
            "Tests:       13 passed, 13 total",
            "10 examples, 0 failures",
            "# fail 0",
            "ok  \tentire.io/cli/cmd\t0.2s",
            "Found 0 errors. Watching for file changes.",
            "grep: 3 fail lines would be odd but this is prose about failures",
        ] {
            assert!(!reports_failures(passing), "{passing}");
        }
    }

    #[test]
    fn sites_name_the_files_the_names_and_the_code_an_output_blames() {
        let rust = "error[E0603]: module `rules` is private\n  --> src/app/capture.rs:12:30\n   |\n12 | use crate::domain::capture::rules::Pending;\n   |                              ^^^^^ private module\n";
        let found = sites(rust);
        assert_eq!(found.files, ["src/app/capture.rs"]);
        assert_eq!(found.names, ["rules"]);
        assert_eq!(found.code, ["use crate::domain::capture::rules::Pending;"]);
        let python = "Traceback (most recent call last):\n  File \"pkg/more.py\", line 40, in sliced\n    return seq[n:]\nNameError: name 'seqq' is not defined\n";
        let found = sites(python);
        assert_eq!(found.files, ["pkg/more.py"]);
        assert_eq!(found.code, ["return seq[n:]"]);
        assert_eq!(found.names, ["seqq"]);
        let go = "./cmd/reset.go:41:2: undefined: resetShadow\nsrc/a.ts(3,5): error TS2304: Cannot find name 'cartTotal'.";
        let found = sites(go);
        assert_eq!(found.files, ["cmd/reset.go", "src/a.ts"]);
        assert_eq!(found.names, ["resetShadow", "cartTotal"]);
    }
}
