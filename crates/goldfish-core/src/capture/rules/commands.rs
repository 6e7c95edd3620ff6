//! What a command is: a check (a test run, a build, a linter, a task of
//! the project's runner), whether one run covers another, a trivial one.

pub(super) fn normalize(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Commands whose failure is a finding and whose later success a fix:
/// tests, builds, type checks and linters (a program and its subcommand).
const CHECKS: &[&str] = &[
    "cargo test",
    "cargo nextest",
    "cargo build",
    "cargo check",
    "cargo clippy",
    "cargo run",
    "pytest",
    "python -m pytest",
    "python3 -m pytest",
    "npm test",
    "npm run test",
    "npm run build",
    "npm run lint",
    "yarn test",
    "pnpm test",
    "npx jest",
    "npx vitest",
    "jest",
    "vitest",
    "go test",
    "go build",
    "go vet",
    "make",
    "mvn test",
    "mvn verify",
    "gradle test",
    "./gradlew test",
    "tsc",
    "npx tsc",
    "mypy",
    "ruff",
    "rspec",
    "bundle exec rspec",
    "dotnet test",
    "dotnet build",
    "ctest",
    "bash scripts/test.sh",
    "scripts/test.sh",
];

/// Flags that change what a run prints, not what it runs.
const OUTPUT_ONLY: &[&str] = &[
    "-q",
    "--quiet",
    "-v",
    "-vv",
    "-vvv",
    "--verbose",
    "-s",
    "--nocapture",
    "--no-capture",
    "--show-output",
];

/// Whether `command` runs a check: a test run, a build, a linter.
pub fn is_check(command: &str) -> bool {
    check_of(command).is_some()
}

/// The check `command` runs (its [`CHECKS`] entry) and its arguments but
/// [`OUTPUT_ONLY`] flags: the last command of a `cd x && …` chain, without
/// leading `A=1` assignments.
fn check_of(command: &str) -> Option<(&'static str, Vec<&str>)> {
    let last = strip_env(command.rsplit("&&").next().unwrap_or(command).trim());
    let last = before_pipe(last);
    let known = |last: &str| {
        CHECKS
            .iter()
            .filter(|check| last == **check || last.starts_with(&format!("{check} ")))
            .max_by_key(|check| check.len())
            .copied()
    };
    let check = match known(last) {
        Some(check) => check,
        None => {
            // A task of the project's own runner named like a check
            // (`mise run test:ci`, `just lint`, `pnpm test`), or one that
            // runs a known check (`uv run pytest`).
            let runner = RUNNERS
                .iter()
                .filter(|runner| last.starts_with(&format!("{runner} ")))
                .max_by_key(|runner| runner.len())?;
            let rest = strip_env(last[runner.len()..].trim_start());
            let task = rest.split_whitespace().next()?;
            let named = task
                .split([':', '-', '_', '/', '.'])
                .any(|word| CHECK_WORDS.contains(&word.to_ascii_lowercase().as_str()));
            if !named && known(rest).is_none() {
                return None;
            }
            runner
        }
    };
    let arguments = last[check.len()..]
        .split_whitespace()
        .filter(|arg| {
            !OUTPUT_ONLY.contains(arg) && !arg.starts_with("--color") && !is_redirect(arg)
        })
        .collect();
    Some((check, arguments))
}

/// Programs that run a project's own tasks (package.json scripts, a
/// Makefile, a justfile, mise, pyproject's tools, mix): a task of theirs
/// is a check when [`CHECK_WORDS`] names it, or it runs a known check.
const RUNNERS: &[&str] = &[
    "mise run",
    "mise r",
    "just",
    "make",
    "task",
    "npm run",
    "pnpm run",
    "pnpm",
    "yarn run",
    "yarn",
    "bun run",
    "bun",
    "mix",
    "rake",
    "uv run",
    "poetry run",
    "pipenv run",
    "hatch run",
    "rye run",
    "pdm run",
    "npx",
    "bunx",
    "deno task",
    "deno",
    "tox -e",
    "nox -s",
];

/// The words that name a check among a task's name's parts
/// (`test:integration`, `lint-go`, `type_check`).
const CHECK_WORDS: &[&str] = &[
    "test",
    "tests",
    "spec",
    "specs",
    "lint",
    "linter",
    "build",
    "check",
    "checks",
    "typecheck",
    "types",
    "vet",
    "clippy",
    "ci",
    "verify",
    "compile",
    "e2e",
    "integration",
    "unit",
];

/// Checks whose findings are style, not behaviour: linters and formatters
/// (by program, or a task named so), whose failure is no project bug.
const LINTERS: &[&str] = &[
    "cargo clippy",
    "cargo fmt",
    "ruff",
    "eslint",
    "npx eslint",
    "golangci-lint",
    "gofmt",
    "go vet",
    "prettier",
    "npx prettier",
    "biome",
    "npx biome",
    "rubocop",
    "black",
    "flake8",
    "pylint",
    "stylelint",
    "mix format",
    "mix credo",
    "shellcheck",
];

/// The words that name a lint or format task (`lint:go`, `fmt`, `format-check`).
const LINT_WORDS: &[&str] = &[
    "lint", "linter", "fmt", "format", "clippy", "vet", "style", "prettier",
];

/// Whether `command` runs a linter or formatter, or a task of the project's
/// runner named so (and not also a test).
pub(super) fn is_lint(command: &str) -> bool {
    let last = strip_env(command.rsplit("&&").next().unwrap_or(command).trim());
    let last = before_pipe(last);
    if LINTERS
        .iter()
        .any(|linter| last == *linter || last.starts_with(&format!("{linter} ")))
    {
        return true;
    }
    let Some(runner) = RUNNERS
        .iter()
        .filter(|runner| last.starts_with(&format!("{runner} ")))
        .max_by_key(|runner| runner.len())
    else {
        return false;
    };
    let task = last[runner.len()..]
        .split_whitespace()
        .next()
        .unwrap_or_default();
    let words: Vec<String> = task
        .split([':', '-', '_', '/', '.'])
        .map(str::to_ascii_lowercase)
        .collect();
    words.iter().any(|word| LINT_WORDS.contains(&word.as_str()))
        && !words
            .iter()
            .any(|word| matches!(word.as_str(), "test" | "tests" | "ci" | "all"))
}

/// The command a pipeline's output comes from: what precedes the first
/// `|` that is not `||` (a `| tail -50` or `| grep FAIL` shows less of
/// the same check).
fn before_pipe(command: &str) -> &str {
    let bytes = command.as_bytes();
    let mut quote = None;
    for (i, &b) in bytes.iter().enumerate() {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(b),
            (None, b'|') if bytes.get(i + 1) != Some(&b'|') && (i == 0 || bytes[i - 1] != b'|') => {
                return command[..i].trim_end();
            }
            _ => {}
        }
    }
    command
}

/// Whether a command's output ends like a test runner's run: go's `ok`
/// and `PASS` lines, cargo's `test result:`, pytest's, jest's and
/// vitest's counts, rspec's and ExUnit's `examples`/`tests, 0 failures`.
pub(super) fn runner_summary(output: &str) -> bool {
    output.lines().map(str::trim).any(|line| {
        line == "PASS"
            || line.starts_with("ok  \t")
            || line.starts_with("ok \t")
            || line.starts_with("test result: ")
            || line.starts_with("Tests:")
            || line.starts_with("Test Files ")
            || (line.starts_with('=') && (line.contains(" passed") || line.contains(" failed")))
            || ((line.contains(" examples, ") || line.contains(" tests, "))
                && line.contains(" failure"))
    })
}

/// A redirection (`2>&1`, `>/dev/null`, `2> err.log`'s first word).
fn is_redirect(word: &str) -> bool {
    let word = word.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&');
    word.starts_with('>') || word.starts_with('<')
}

/// `A=1 B=2 cmd` → `cmd`.
fn strip_env(command: &str) -> &str {
    let mut rest = command;
    while let Some((word, tail)) = rest.split_once(' ') {
        if word.contains('=') && !word.starts_with('-') {
            rest = tail.trim_start();
        } else {
            break;
        }
    }
    rest
}

/// Whether the run `passed` covers the run `failed`, so that the tests
/// that failed then pass now: the same check (program and subcommand), and
/// every argument of `passed` (its filters, targets, paths) one of
/// `failed`, or a prefix of one up to `::` or `/`. `cargo test` covers
/// `cargo test t0` (a superset run), `cargo test sync` covers `cargo test
/// sync::branch_switch`, `pytest tests` covers `pytest tests/test_a.py`;
/// `cargo test t48` does not cover `cargo test t0`, nor `cargo test t0`
/// `cargo test` (t48 may still fail). Output flags (`-q`, `-v`) do not
/// count. Arguments are compared as words, not parsed: an approximation
/// that errs towards "not the same check" when they differ.
pub(super) fn covers(passed: &str, failed: &str) -> bool {
    let (Some((check, passed)), Some((failed_check, failed))) =
        (check_of(passed), check_of(failed))
    else {
        // A check known by its output only: the same command.
        return before_pipe(passed) == before_pipe(failed);
    };
    check == failed_check
        && passed.iter().all(|p| {
            failed.iter().any(|f| {
                *f == *p
                    || (f.starts_with(p)
                        && (p.ends_with('/') || matches!(f.as_bytes()[p.len()], b'/' | b':')))
            })
        })
}

pub(super) fn is_trivial(command: &str) -> bool {
    const TRIVIAL: &[&str] = &[
        "ls",
        "cd",
        "pwd",
        "cat",
        "head",
        "tail",
        "echo",
        "which",
        "find",
        "grep",
        "rg",
        "wc",
        "tree",
        "less",
        "file",
        "stat",
        "du",
        "df",
        "env",
        "date",
        "whoami",
        "sed -n",
        "git status",
        "git log",
        "git diff",
        "git show",
        "git branch",
        "git remote",
    ];
    let last = strip_env(command.rsplit("&&").next().unwrap_or(command).trim());
    TRIVIAL
        .iter()
        .any(|t| last == *t || last.starts_with(&format!("{t} ")))
}
