//! Every environment variable goldfish reads or sets, in one place (the
//! test and bench harness variables, `GOLDFISH_TEST_MODEL_HOME` and
//! `GOLDFISH_BENCH_*`, live with the harness).
//!
//! Adapters and the application layer read them through the functions
//! below, nowhere else (`tests/it/layers.rs`); the core takes values as
//! arguments.

/// Fixes "now" (RFC 3339, e.g. `2026-11-21T09:00:00Z`) for stores, forgets and
/// `--since`: tests and demos use it to get reproducible timestamps.
pub const GOLDFISH_NOW: &str = "GOLDFISH_NOW";

/// Where the personal index, locks and logs live (default `~/.goldfish`).
pub const GOLDFISH_HOME: &str = "GOLDFISH_HOME";

/// The embedding model to use (a folder name under `$GOLDFISH_HOME/models/`);
/// default `all-MiniLM-L6-v2-int8`. Changing it re-embeds on the next sync.
pub const GOLDFISH_MODEL: &str = "GOLDFISH_MODEL";

/// Intra-op threads for the embedding model (default: all cores).
pub const GOLDFISH_THREADS: &str = "GOLDFISH_THREADS";

/// A command that distils digests (`recall --budget`), e.g. `claude -p`: the
/// prompt goes to its stdin, the digest comes from its stdout. Overrides
/// `distill.command` in `$GOLDFISH_HOME/config.toml`.
pub const GOLDFISH_DISTILL_COMMAND: &str = "GOLDFISH_DISTILL_COMMAND";

/// Seconds the distill command may take (default 30), overriding
/// `distill.timeout_secs`.
pub const GOLDFISH_DISTILL_TIMEOUT: &str = "GOLDFISH_DISTILL_TIMEOUT";

/// A GGUF model (llama, qwen2 or qwen3 architecture) for capture, instead
/// of the one `goldfish model install --capture` installs.
pub const GOLDFISH_CAPTURE_MODEL: &str = "GOLDFISH_CAPTURE_MODEL";

/// A command that judges capture events instead of a model in process (e.g.
/// `ollama run qwen3:0.6b`): the prompt on its stdin, the answer (a
/// `<tool_call>` or not) on its stdout.
pub const GOLDFISH_CAPTURE_COMMAND: &str = "GOLDFISH_CAPTURE_COMMAND";

/// Seconds the capture command may take per event (default 60).
pub const GOLDFISH_CAPTURE_TIMEOUT: &str = "GOLDFISH_CAPTURE_TIMEOUT";

/// `rules` makes the capture worker use its rules only, even with a model
/// installed.
pub const GOLDFISH_CAPTURE: &str = "GOLDFISH_CAPTURE";

/// Fault injection for the crash-safety tests: `sync-abort` makes a sync abort
/// the process after writing its changes but before committing them;
/// `sync-slow` makes a sync that has something to do take 3 s longer,
/// holding its lock (as a sync of a large history does); `warm-abort`
/// makes the warm process abort when a request arrives.
pub const GOLDFISH_FAULT: &str = "GOLDFISH_FAULT";

/// Bytes of changed memory files above which a git hook syncs in a detached
/// background process (logging to `$GOLDFISH_HOME/logs/`) instead of making
/// the git command wait. Default 1 MiB; `0` always goes to the background.
pub const GOLDFISH_HOOK_BACKGROUND_BYTES: &str = "GOLDFISH_HOOK_BACKGROUND_BYTES";

/// `0` turns goldfish off in git: the merge driver falls back to
/// `git merge-file` and hooks do nothing.
pub const GOLDFISH: &str = "GOLDFISH";

/// Set (to anything) to let git hooks print what they do; silent otherwise.
pub const GOLDFISH_HOOK_VERBOSE: &str = "GOLDFISH_HOOK_VERBOSE";

/// The Python (3.11 or newer) the model installers build with (default
/// `python3`); read by the install scripts `goldfish model install` runs.
pub const GOLDFISH_PYTHON: &str = "GOLDFISH_PYTHON";

/// The model installers' work folder: a Python environment and the PyPI
/// downloads, about 600 MB (default
/// `${XDG_CACHE_HOME:-$HOME/.cache}/goldfish/model-build`); read by the install
/// scripts.
pub const GOLDFISH_MODEL_CACHE: &str = "GOLDFISH_MODEL_CACHE";

/// candle's switch to dequantize a GGUF model to f32 at load: the capture
/// worker sets it for small models (candle's quantized kernels are several
/// times slower on a long prompt) unless the user set it.
pub const CANDLE_DEQUANTIZE_ALL: &str = "CANDLE_DEQUANTIZE_ALL";

/// `0` (or `off`) keeps commands from using or starting the warm process
/// that holds the embedding model loaded for a home (`goldfish model warm`).
pub const GOLDFISH_WARM: &str = "GOLDFISH_WARM";

/// Seconds without a request after which the warm process ends (default
/// 600).
pub const GOLDFISH_WARM_IDLE: &str = "GOLDFISH_WARM_IDLE";

/// Set (to anything) to have each command print its trace on stderr when it
/// ends: index opens, syncs, texts and queries embedded.
pub const GOLDFISH_TRACE: &str = "GOLDFISH_TRACE";

/// Set by Gemini CLI for each hook command it runs (beside
/// `GEMINI_PROJECT_DIR`): Gemini CLI shows such a hook's stderr to the
/// user, so goldfish's agent hooks keep their notes in
/// `$GOLDFISH_HOME/logs/agent-hook.log` instead.
pub const GEMINI_SESSION_ID: &str = "GEMINI_SESSION_ID";

/// Git's own overrides of the author identity, honoured by `store` and `forget`.
pub const GIT_AUTHOR_NAME: &str = "GIT_AUTHOR_NAME";
/// The email git commits with when set (else `user.email`): `trust` checks
/// it against the trust policy.
pub const GIT_AUTHOR_EMAIL: &str = "GIT_AUTHOR_EMAIL";

// The environment is read here only (a test in `tests/it/layers.rs` holds
// it): each variable through a function named for it, an empty value as
// unset.

/// Reads a variable, treating an empty value as unset.
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Whether a switch is turned off: `0` or `off` (any case), the one way
/// every switch reads it.
fn off(name: &str) -> bool {
    var(name).is_some_and(|v| v.trim() == "0" || v.trim().eq_ignore_ascii_case("off"))
}

/// Whether goldfish is switched off with `GOLDFISH=0`.
pub fn disabled() -> bool {
    off(GOLDFISH)
}

/// `GOLDFISH_NOW`, unparsed.
pub fn now() -> Option<String> {
    var(GOLDFISH_NOW)
}

/// `GOLDFISH_HOME`.
pub fn home() -> Option<String> {
    var(GOLDFISH_HOME)
}

/// `HOME`, the user's home folder (goldfish's default home is under it).
pub fn user_home() -> Option<String> {
    var("HOME")
}

/// `PATH` as the process has it (the folders git looks for `goldfish` in).
pub fn search_path() -> Option<std::ffi::OsString> {
    std::env::var_os("PATH")
}

/// `GOLDFISH_MODEL`.
pub fn model() -> Option<String> {
    var(GOLDFISH_MODEL)
}

/// `GOLDFISH_THREADS`, unparsed.
pub fn threads() -> Option<String> {
    var(GOLDFISH_THREADS)
}

/// `GOLDFISH_DISTILL_COMMAND`.
pub fn distill_command() -> Option<String> {
    var(GOLDFISH_DISTILL_COMMAND)
}

/// `GOLDFISH_DISTILL_TIMEOUT`, unparsed.
pub fn distill_timeout() -> Option<String> {
    var(GOLDFISH_DISTILL_TIMEOUT)
}

/// `GOLDFISH_CAPTURE`, as set (`rules`, `model`, `off`, or anything else).
pub fn capture() -> Option<String> {
    var(GOLDFISH_CAPTURE)
}

/// `GOLDFISH_CAPTURE_MODEL`.
pub fn capture_model() -> Option<String> {
    var(GOLDFISH_CAPTURE_MODEL)
}

/// `GOLDFISH_CAPTURE_COMMAND`.
pub fn capture_command() -> Option<String> {
    var(GOLDFISH_CAPTURE_COMMAND)
}

/// `GOLDFISH_CAPTURE_TIMEOUT`, unparsed.
pub fn capture_timeout() -> Option<String> {
    var(GOLDFISH_CAPTURE_TIMEOUT)
}

/// Whether `CANDLE_DEQUANTIZE_ALL` is set (the user's choice stands).
pub fn candle_dequantize_all_set() -> bool {
    var(CANDLE_DEQUANTIZE_ALL).is_some()
}

/// Whether `GOLDFISH_FAULT` asks for this fault (`sync-abort`, …).
pub fn fault(name: &str) -> bool {
    var(GOLDFISH_FAULT).as_deref() == Some(name)
}

/// `GOLDFISH_HOOK_BACKGROUND_BYTES`, unparsed.
pub fn hook_background_bytes() -> Option<String> {
    var(GOLDFISH_HOOK_BACKGROUND_BYTES)
}

/// Whether `GOLDFISH_WARM` turns the warm process off.
pub fn warm_off() -> bool {
    off(GOLDFISH_WARM)
}

/// `GOLDFISH_WARM_IDLE`, unparsed.
pub fn warm_idle() -> Option<String> {
    var(GOLDFISH_WARM_IDLE)
}

/// Whether `GOLDFISH_TRACE` is set.
pub fn trace() -> bool {
    var(GOLDFISH_TRACE).is_some()
}

/// Whether `GEMINI_SESSION_ID` is set (Gemini CLI runs this hook).
pub fn gemini_session() -> bool {
    var(GEMINI_SESSION_ID).is_some()
}

/// `GIT_AUTHOR_NAME`.
pub fn git_author_name() -> Option<String> {
    var(GIT_AUTHOR_NAME)
}

/// `GIT_AUTHOR_EMAIL`.
pub fn git_author_email() -> Option<String> {
    var(GIT_AUTHOR_EMAIL)
}

/// Variables of the registry the guide's environment table leaves out: a
/// test harness's switch, another crate's that the worker sets.
pub const UNDOCUMENTED: [&str; 2] = [GOLDFISH_FAULT, CANDLE_DEQUANTIZE_ALL];

#[cfg(test)]
mod tests {
    /// The names this file registers (`pub const NAME: &str = "NAME";`).
    fn registered() -> Vec<&'static str> {
        include_str!("env.rs")
            .lines()
            .filter_map(|line| line.strip_prefix("pub const "))
            .filter_map(|rest| rest.split_once(": &str = \""))
            .map(|(name, _)| name)
            .collect()
    }

    /// The names the guide's environment table gives (its first column).
    fn documented() -> Vec<String> {
        let reference = include_str!("../../docs/guide/reference.md");
        let table = reference
            .split("## Environment")
            .nth(1)
            .expect("the guide has an Environment section");
        let mut names = Vec::new();
        for row in table.lines().skip_while(|l| !l.starts_with('|')) {
            let Some(first) = row.strip_prefix('|').and_then(|r| r.split('|').next()) else {
                break;
            };
            for span in first.split('`').skip(1).step_by(2) {
                let name: String = span
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    names.push(name);
                }
            }
        }
        names
    }

    #[test]
    fn the_guides_environment_table_is_the_registry() {
        let registered = registered();
        let documented = documented();
        assert!(registered.len() > 20, "{registered:?}");
        for name in &registered {
            assert_eq!(
                documented.iter().any(|d| d == name),
                !super::UNDOCUMENTED.contains(name),
                "{name}: in the guide's table (docs/guide/reference.md) exactly when not UNDOCUMENTED"
            );
        }
        for name in &documented {
            assert!(
                registered.contains(&name.as_str()),
                "{name} is in the guide's table but not in src/adapters/env.rs"
            );
        }
    }
}
