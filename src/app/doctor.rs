//! `goldfish doctor`: every health check of a clone, its index and the
//! embedding model, each problem with the command that fixes it.
//!
//! Doctor only looks: it never writes, syncs or repairs. A corrupt index is
//! reported, not moved aside and rebuilt as [`Index::open`] would.
//!
//! What the next goldfish command sets up by itself in a clone (the merge
//! driver's declaration and missing hooks, see [`crate::app::heal`]; the
//! index, at its first sync) is a note, not a problem: a fresh clone of a
//! repository that uses goldfish is healthy.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde::Serialize;

use crate::adapters::git::{MEMORY_DIR, Workspace};
use crate::adapters::index::{Index, Inspection};
use crate::adapters::memdir::{LogError, MemoryDir, OpenError};
use crate::adapters::sync;
use crate::app::session::ModelState;
use crate::app::{heal, init};
use crate::domain::citation;
use crate::domain::config::{RepoConfig, TrustPolicy};
use crate::domain::memory::trust;
use crate::domain::memory::view::LogView;

/// How many unreadable lines a finding lists by name.
const LISTED_LINES: usize = 10;

/// How bad a finding is. Only problems make doctor fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Ok,
    /// Fine as it is, but worth a look (a trust policy absent or loose), or
    /// set up by the next goldfish command by itself (see
    /// [`sets_itself_up`]).
    Note,
    /// Worth knowing; goldfish works.
    Warning,
    /// Something is broken or out of date until the fix runs.
    Problem,
}

/// One check's result. Field names are stable (`doctor --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable name: `merge-driver`, `gitattributes`, `hooks`, `repo-config`,
    /// `goldfish-on-path`, `memory-folder`, `journal`,
    /// `memory-conflicts`, `log`, `suspect-memories`, `trust-policy`,
    /// `agent-server`, `index`, `index-sync`, `keyword-index`,
    /// `quarantine`, `stale-memories`, `cited-code`, `policy-changes`,
    /// `model`.
    pub check: &'static str,
    pub status: Severity,
    /// What was found.
    pub message: String,
    /// The command (or step) that fixes it; `None` when ok.
    pub fix: Option<String>,
}

impl Finding {
    fn ok(check: &'static str, message: impl Into<String>) -> Finding {
        Finding {
            check,
            status: Severity::Ok,
            message: message.into(),
            fix: None,
        }
    }

    fn bad(
        check: &'static str,
        status: Severity,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        Finding {
            check,
            status,
            message: message.into(),
            fix: Some(fix.into()),
        }
    }
}

/// What doctor looks at besides the workspace.
pub struct Inputs<'a> {
    /// `$GOLDFISH_HOME/index.db`.
    pub index_path: &'a Path,
    /// `PATH`, where git's hooks and merge driver look for `goldfish`.
    pub path_var: Option<&'a OsStr>,
    pub model: ModelState,
    /// "Now", for timestamps too far ahead (`GOLDFISH_NOW` or the clock).
    pub now: jiff::Timestamp,
    /// Whether goldfish commands set this clone up by themselves (not with
    /// `GOLDFISH=0`): then what they would set up is a note.
    pub heals: bool,
}

/// What a note about something the next command sets up tells to do.
const NEXT_COMMAND_FIX: &str =
    "none needed: the next goldfish command does it by itself (or `goldfish sync` now)";

/// Whether `finding` is a note about what the next goldfish command sets up
/// by itself (driver, hooks, the index and this workspace in it).
pub fn sets_itself_up(finding: &Finding) -> bool {
    finding.status == Severity::Note
        && matches!(
            finding.check,
            "merge-driver" | "hooks" | "index" | "index-sync"
        )
}

/// The `PATH` of this process, for [`Inputs::path_var`].
pub fn search_path() -> Option<std::ffi::OsString> {
    crate::adapters::env::search_path()
}

/// Runs every check, in a fixed order.
pub fn diagnose(workspace: &Workspace, inputs: &Inputs<'_>) -> Vec<Finding> {
    let pending = if inputs.heals {
        heal::pending(workspace)
    } else {
        heal::Pending::default()
    };
    let mut findings: Vec<Finding> = init::health(workspace)
        .into_iter()
        .map(|check| match (check.problem, check.fix) {
            (Some(_), Some(_)) if check.check == "merge-driver" && pending.driver => Finding::bad(
                check.check,
                Severity::Note,
                format!(
                    "the merge driver is not declared in this clone yet (git does not copy it through a clone): the next goldfish command declares it ({}), as .gitattributes asks; a memory file a merge leaves in conflict before then is merged again by that command",
                    init::DRIVER_KEY
                ),
                NEXT_COMMAND_FIX,
            ),
            (Some(_), Some(_)) if check.check == "hooks" && !pending.hooks.is_empty() => {
                let (them, are) = if pending.hooks.len() == 1 {
                    ("it", "is")
                } else {
                    ("them", "are")
                };
                Finding::bad(
                    check.check,
                    Severity::Note,
                    format!(
                        "{} {are} not installed in this clone yet (git does not copy hooks through a clone): the next goldfish command installs {them} (and syncs what a pull brings before then)",
                        pending.hooks.join(", ")
                    ),
                    NEXT_COMMAND_FIX,
                )
            }
            (Some(problem), Some(fix)) => {
                Finding::bad(check.check, Severity::Problem, problem, fix)
            }
            _ => Finding::ok(check.check, setup_ok_message(check.check)),
        })
        .collect();
    findings.push(goldfish_on_path(inputs.path_var));
    let memory_dir = MemoryDir::of(workspace);
    findings.push(memory_folder(&memory_dir));
    findings.push(journal(workspace));
    findings.push(match unmerged_memory_files(workspace).as_slice() {
        [] => Finding::ok("memory-conflicts", "no memory file in conflict"),
        files => Finding::bad(
            "memory-conflicts",
            Severity::Problem,
            conflict_message(files),
            remerge_fix(files),
        ),
    });
    let view = memory_dir.read();
    findings.push(log(&view));
    if let Ok(view) = &view {
        findings.push(suspect(view, workspace, inputs.now));
    }
    let (index_findings, in_effect) = index(workspace, inputs);
    findings.push(trust_policy(workspace, in_effect));
    findings.extend(signers(workspace));
    findings.extend(agent_servers(workspace));
    findings.extend(index_findings);
    findings
}

/// A `goldfish` MCP server entry in an agent's configuration file that
/// runs something other than goldfish (`.mcp.json`, `.gemini/settings.json`,
/// `.codex/config.toml` arrive through git): a problem, since the agent
/// starts it as goldfish. Nothing when every entry is goldfish's or there
/// is none.
fn agent_servers(workspace: &Workspace) -> Option<Finding> {
    let found = crate::app::agent::foreign_servers(workspace.root());
    if found.is_empty() {
        return None;
    }
    let list: Vec<String> = found
        .iter()
        .map(|(file, what)| format!("{file}: its `goldfish` MCP server {what}"))
        .collect();
    Some(Finding::bad(
        "agent-server",
        Severity::Problem,
        format!(
            "{}, not goldfish: the agent starts that program as goldfish",
            list.join("; ")
        ),
        r#"set the entry to `{"command": "goldfish", "args": ["mcp"]}` (Codex: `command = "goldfish"`, `args = ["mcp"]`), or delete it and run `goldfish init --agent …`"#,
    ))
}

/// The trust policy in effect (`in_effect`: the index's, as its sync found
/// it by the policy's history; else `[trust]` of `.goldfish/config`):
/// absent or loose is a note (goldfish works; agents receive what any
/// committer wrote). A config that cannot be used is a warning.
fn trust_policy(workspace: &Workspace, in_effect: Option<Option<TrustPolicy>>) -> Finding {
    const CHECK: &str = "trust-policy";
    let fix = "list who may write memories agents receive unmarked in .goldfish/config: `[trust]` `authors = [\"alice@example.com\", \"*@example.com\"]` (and `signed = true` for verified signatures only), then commit it";
    match RepoConfig::for_readers(crate::adapters::memdir::read_repo_config(workspace)) {
        // The repo-config check says why it cannot be read.
        Err(crate::domain::config::Unchecked::Unreadable(_)) => Finding::bad(
            CHECK,
            Severity::Warning,
            "the trust policy cannot be read (see repo-config): the index keeps the policy its last sync read",
            "fix .goldfish/config and commit it",
        ),
        Err(crate::domain::config::Unchecked::Invalid(err)) => Finding::bad(
            CHECK,
            Severity::Warning,
            format!(
                "{} is invalid ({err}): the index keeps the trust policy its last sync read",
                crate::adapters::git::REPO_CONFIG
            ),
            "fix .goldfish/config and commit it",
        ),
        Ok(config) => {
            let said = config.trust.map(|mut policy| {
                policy.authors.sort();
                policy
            });
            let differs = in_effect.as_ref().is_some_and(|policy| *policy != said);
            let policy = in_effect.unwrap_or(said);
            let mut finding = policy_finding(policy, fix);
            if differs {
                finding.message.push_str(&format!(
                    " (the policy in effect, by its history: {} says otherwise, see trust-in-effect)",
                    crate::adapters::git::REPO_CONFIG
                ));
            }
            finding
        }
    }
}

/// What the trust policy in effect lets in.
fn policy_finding(policy: Option<TrustPolicy>, fix: &str) -> Finding {
    const CHECK: &str = "trust-policy";
    match policy {
        None => Finding::bad(
            CHECK,
            Severity::Note,
            "no trust policy: memories from every committer reach agents (orders to agents and forged authors are still quarantined)",
            fix,
        ),
        Some(policy) => {
            let loose = policy.loose();
            let signed = if policy.signed {
                ", signed commits only"
            } else {
                " (unsigned: git author emails can be set by anyone; `signed = true` checks signatures)"
            };
            if loose.is_empty() {
                Finding::ok(
                    CHECK,
                    format!(
                        "memories agents receive unmarked come from {} author pattern{}{signed}",
                        policy.authors.len(),
                        if policy.authors.len() == 1 { "" } else { "s" }
                    ),
                )
            } else {
                Finding::bad(
                    CHECK,
                    Severity::Note,
                    format!(
                        "the trust policy is loose: {} let{} almost any author in{signed}",
                        loose
                            .iter()
                            .map(|pattern| format!("`{pattern}`"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        if loose.len() == 1 { "s" } else { "" }
                    ),
                    "name the team's domain or people in `[trust] authors` (\"*@example.com\", not \"*\")",
                )
            }
        }
    }
}

/// Under `signed = true` with SSH signatures (`gpg.format = ssh`), git
/// verifies a signature only against `gpg.ssh.allowedSignersFile`: without
/// one every signed commit is `unchecked`, and every committed memory is
/// quarantined. One inside the repository is part of the policy (a change
/// counts only from a commit inside the policy, signed with a key it held
/// before), which a note says. Said with its fix.
fn signers(workspace: &Workspace) -> Option<Finding> {
    let config =
        RepoConfig::for_readers(crate::adapters::memdir::read_repo_config(workspace)).ok()?;
    if !config.trust.is_some_and(|policy| policy.signed)
        || workspace.config_string("gpg.format").as_deref() != Some("ssh")
    {
        return None;
    }
    if let Some(path) = workspace.signers_file_in_repo() {
        return Some(Finding::bad(
            "trust-signers",
            Severity::Note,
            format!(
                "the allowed-signers file git checks signatures against is {path}, inside the repository: goldfish verifies signatures against its committed version in effect, which only a commit inside the policy, signed with a key that version holds, can change (the work tree's copy is not read)"
            ),
            "review every change to it (`goldfish review` stops on one: `signers_change`), or keep it outside the repository (`git config gpg.ssh.allowedSignersFile ~/.config/git/allowed_signers`)",
        ));
    }
    if workspace
        .config_string("gpg.ssh.allowedSignersFile")
        .is_some_and(|file| !file.trim().is_empty())
    {
        return None;
    }
    Some(Finding::bad(
        "trust-signers",
        Severity::Warning,
        "the trust policy asks for signed commits (`signed = true`) and signatures are SSH ones, but this clone has no gpg.ssh.allowedSignersFile: git can verify none, so every committed memory is quarantined (`signature-unchecked`)",
        "point git at the team's allowed signers: `git config gpg.ssh.allowedSignersFile PATH` (a file of `email key` lines, kept outside the repository or reviewed like the policy)",
    ))
}

/// Lines with a reused id `doctor` names one by one.
const LISTED_REUSED: usize = 5;

/// Quarantined memories of this workspace, lines that reuse an id, and
/// changes of the trust policy by someone outside it, as the index found
/// them.
fn trust_findings(workspace: &Workspace, index: &Index) -> Vec<Finding> {
    let Ok(Some(row)) = index.workspace_by_root(workspace.root()) else {
        return Vec::new();
    };
    let mut findings = Vec::new();
    quarantine_finding(index, row.id, &mut findings);
    shallow_finding(index, row.id, &mut findings);
    stale_finding(index, row.id, &mut findings);
    cited_code_finding(index, row.id, &mut findings);
    policy_in_effect_finding(workspace, index, row.id, &mut findings);
    reused_finding(index, row.id, &mut findings);
    policy_changes_finding(index, row.id, &mut findings);
    findings
}

/// How many memories are quarantined.
fn quarantine_finding(index: &Index, workspace_id: i64, findings: &mut Vec<Finding>) {
    match index.quarantined(workspace_id) {
        Ok(0) => findings.push(Finding::ok(
            "quarantine",
            "no memory is quarantined",
        )),
        Ok(count) => findings.push(Finding::bad(
            "quarantine",
            Severity::Warning,
            format!(
                "{} quarantined: left out of the briefing and of recall (outside the trust policy, a forged author, or an order to agents)",
                crate::app::render::memories(count)
            ),
            "see them and why with `goldfish recall --include-untrusted --json` (`trust_reasons`); forget what is wrong (`goldfish forget ID`), release a false alarm (`goldfish trust ID`, then commit)",
        )),
        // An index of an older schema: the index check says so.
        Err(_) => {}
    }
}

/// How many memories a shallow clone cannot tell the author of.
fn shallow_finding(index: &Index, workspace_id: i64, findings: &mut Vec<Finding>) {
    if let Ok(count) = index.shallow_count(workspace_id)
        && count > 0
    {
        findings.push(Finding::bad(
            "shallow",
            Severity::Warning,
            crate::adapters::sync::shallow_message(count as usize),
            "fetch the history (`git fetch --unshallow`), then run any goldfish command",
        ));
    }
}

/// How many memories are stale.
fn stale_finding(index: &Index, workspace_id: i64, findings: &mut Vec<Finding>) {
    // An index of an older schema has no count: the index check says so.
    if let Ok(count) = index.stale_count(workspace_id)
        && count > 0
    {
        findings.push(Finding::bad(
            "stale-memories",
            Severity::Note,
            format!(
                "{} stale: a file named in `files` was deleted since, the commit was reverted, or the branch deleted without being merged; still recalled (ranked lower, marked), left out of the briefing",
                crate::app::render::memories(count)
            ),
            "see them with `goldfish tidy` (or `recall --json`: `stale`); forget those that no longer hold (`goldfish forget ID`) or store what replaces them (`store --supersedes ID`)",
        ));
    }
}

/// How the code memories cite stands at HEAD: citations by verdict. A
/// note when some cited code changed or went, else ok; nothing when no
/// memory cites code.
fn cited_code_finding(index: &Index, workspace_id: i64, findings: &mut Vec<Finding>) {
    let Ok((memories, counts)) = index.cite_counts(workspace_id) else {
        return;
    };
    if memories == 0 {
        return;
    }
    let of = |verdict: &str| {
        counts
            .iter()
            .find(|(name, _)| name == verdict)
            .map_or(0, |(_, n)| *n)
    };
    let parts: Vec<String> = [
        (citation::HOLDS, "hold"),
        (citation::MOVED, "moved"),
        (citation::CHANGED, "changed"),
        (citation::GONE, "gone"),
        ("", "not checked yet (not committed)"),
    ]
    .iter()
    .filter(|(verdict, _)| of(verdict) > 0)
    .map(|(verdict, said)| format!("{} {said}", of(verdict)))
    .collect();
    let message = format!(
        "{} {} code: citations {}",
        crate::app::render::memories(memories),
        if memories == 1 { "cites" } else { "cite" },
        parts.join(", ")
    );
    if of(citation::CHANGED) + of(citation::GONE) == 0 {
        findings.push(Finding::ok("cited-code", message));
    } else {
        findings.push(Finding::bad(
            "cited-code",
            Severity::Note,
            message,
            "see them with `goldfish recall --json` (`cites`) or `goldfish tidy`; store what holds now with `store --supersedes ID`, or forget what no longer does",
        ));
    }
}

/// Whether the policy in effect is what the config says.
fn policy_in_effect_finding(
    workspace: &Workspace,
    index: &Index,
    workspace_id: i64,
    findings: &mut Vec<Finding>,
) {
    let in_file = RepoConfig::for_readers(crate::adapters::memdir::read_repo_config(workspace))
        .map(|config| config.trust);
    if let (Ok(in_effect), Ok(in_file)) = (index.policy_in_effect(workspace_id), in_file) {
        let sorted = in_file.map(|mut policy| {
            policy.authors.sort();
            policy
        });
        if in_effect != sorted {
            let said = |policy: &Option<crate::domain::config::TrustPolicy>| {
                crate::domain::config::TrustPolicy::describe(policy.as_ref())
            };
            findings.push(Finding::bad(
                "trust-in-effect",
                Severity::Warning,
                format!(
                    "the trust policy in effect is the last one set from inside it ({}), not what {} says ({}): a change by someone outside the policy, or to a config that cannot be used, does not take effect",
                    said(&in_effect),
                    crate::adapters::git::REPO_CONFIG,
                    said(&sorted)
                ),
                "see policy-changes; to change the policy, have someone inside it commit the change",
            ));
        }
    }
}

/// The lines that reuse the id of a memory of another text.
fn reused_finding(index: &Index, workspace_id: i64, findings: &mut Vec<Finding>) {
    if let Ok(reused) = index.reused_ids(workspace_id, LISTED_REUSED + 1)
        && !reused.is_empty()
    {
        let mut listed: Vec<String> = reused
            .iter()
            .take(LISTED_REUSED)
            .map(|line| {
                format!(
                    "{}:{}: memory {} reuses the id of a memory of another text, introduced by commit {} ({}): quarantined (`id-reused`), it has none of that memory's provenance",
                    line.file,
                    line.line,
                    line.id,
                    line.original_commit.get(..10).unwrap_or(&line.original_commit),
                    line.original_author
                )
            })
            .collect();
        if reused.len() > LISTED_REUSED {
            listed.push("… and more (`goldfish recall --include-untrusted --json`)".to_owned());
        }
        findings.push(Finding::bad(
            "id-reused",
            Severity::Warning,
            listed.join("\n"),
            "a memory's id is its own: see who added the line (`goldfish review`, `git log -S ID -- .goldfish/memories`) and revert that commit",
        ));
    }
}

/// The changes of the trust policy that did not take effect.
fn policy_changes_finding(index: &Index, workspace_id: i64, findings: &mut Vec<Finding>) {
    if let Ok(changes) = index.refused_policy_changes(workspace_id)
        && !changes.is_empty()
    {
        let listed: Vec<String> = changes
            .iter()
            .map(|change| {
                crate::adapters::history::provenance::policy_change_message(
                    &change.commit,
                    &change.author,
                    &change.why,
                )
            })
            .collect();
        findings.push(Finding::bad(
            "policy-changes",
            Severity::Warning,
            listed.join("\n"),
            "review each change; revert what the team did not decide, or have someone inside the policy commit it again",
        ));
    }
}

/// Whether nothing needs fixing (warnings allowed).
pub fn healthy(findings: &[Finding]) -> bool {
    findings.iter().all(|f| f.status != Severity::Problem)
}

fn setup_ok_message(check: &str) -> &'static str {
    match check {
        "merge-driver" => "declared in this clone's git config",
        "gitattributes" => "routes memory files to the merge driver",
        "hooks" => "post-merge, post-checkout and post-rewrite installed and executable",
        "repo-config" => "none (the built-in types), or a valid one",
        _ => "ok",
    }
}

/// Git runs the hooks and the merge driver as `goldfish`, found on PATH.
fn goldfish_on_path(path_var: Option<&OsStr>) -> Finding {
    let found = path_var
        .map(std::env::split_paths)
        .into_iter()
        .flatten()
        .map(|dir| dir.join("goldfish"))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        });
    match found {
        Some(path) => Finding::ok("goldfish-on-path", path.display().to_string()),
        None => Finding::bad(
            "goldfish-on-path",
            Severity::Problem,
            "`goldfish` is not on PATH: git runs the hooks and the merge driver by that name, so the index would not follow pulls, and a merge of a memory file both sides changed stops with a conflict that leaves the file as your side, without markers",
            "put the goldfish binary on PATH (`cargo install --locked --path .` in goldfish's source); then merge a memory file left in conflict again with `goldfish resolve`",
        ),
    }
}

/// The memory folder is a real folder holding regular files only: a link
/// committed in its place, or in place of a memory file, would have goldfish
/// write or read outside the repository.
fn memory_folder(dir: &MemoryDir) -> Finding {
    let unsafe_fix = "remove it, or replace it with a real folder or regular file (`git rm` a committed link, commit, then `goldfish init`)";
    match dir.check_folder() {
        Ok(()) => {}
        Err(LogError::NotInitialized(_)) => {
            return Finding::bad(
                "memory-folder",
                Severity::Problem,
                format!("{MEMORY_DIR}/ does not exist: `store` has nowhere to write"),
                "goldfish init",
            );
        }
        Err(err @ LogError::Unsafe { .. }) => {
            return Finding::bad("memory-folder", Severity::Problem, chain(&err), unsafe_fix);
        }
        Err(err) => {
            return Finding::bad(
                "memory-folder",
                Severity::Problem,
                chain(&err),
                "check the permissions of the memory folder",
            );
        }
    }
    let mut odd: Vec<String> = std::fs::read_dir(dir.path())
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().ends_with(".jsonl"))
        .filter_map(|entry| {
            let file_type = entry.file_type().ok()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if file_type.is_symlink() {
                Some(format!(
                    "{MEMORY_DIR}/{name} is a symbolic link (not followed)"
                ))
            } else if file_type.is_dir() && entry.path().join(".git").symlink_metadata().is_ok() {
                Some(format!(
                    "{MEMORY_DIR}/{name} is a git submodule, another repository (skipped)"
                ))
            } else if !file_type.is_file() {
                Some(format!(
                    "{MEMORY_DIR}/{name} is not a regular file (skipped)"
                ))
            } else {
                None
            }
        })
        .collect();
    if odd.is_empty() {
        return Finding::ok("memory-folder", format!("{MEMORY_DIR}/ exists"));
    }
    odd.sort();
    Finding::bad(
        "memory-folder",
        Severity::Problem,
        odd.join("\n"),
        unsafe_fix,
    )
}

/// The store journal in the git folder (`log::JOURNAL`): every sync opens
/// it when it exists, so one that cannot be opened for appending makes every
/// command fail. Opened here to check, never written.
fn journal(workspace: &Workspace) -> Finding {
    let path = workspace.git_dir().join(crate::adapters::memdir::JOURNAL);
    let shown = path.display();
    let opened = crate::adapters::memdir::open_regular(
        &path,
        std::fs::OpenOptions::new().read(true).append(true),
    );
    let reason = match opened {
        Ok(_) => return Finding::ok("journal", format!("{shown} can take stores")),
        Err(OpenError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => {
            return Finding::ok("journal", "no store waiting in the journal");
        }
        Err(err) => err,
    };
    let (immutable, what) = match &reason {
        OpenError::Link => (false, "is a symbolic link (not followed)".to_owned()),
        OpenError::NotRegular(kind) => (false, format!("is {kind}, not a regular file")),
        OpenError::Io(err) => (
            err.kind() == std::io::ErrorKind::PermissionDenied,
            format!("cannot be opened for appending ({err})"),
        ),
    };
    let fix = if immutable {
        format!(
            "make it writable again (`chattr -i {shown}` if it is immutable, else its permissions or owner), or move it aside (`mv {shown} {shown}.aside`); it is not tracked by git"
        )
    } else {
        format!(
            "move it aside (`mv {shown} {shown}.aside`): it lives in the git folder and git does not track it; the next store creates a new one"
        )
    };
    Finding::bad(
        "journal",
        Severity::Problem,
        format!(
            "{shown}, goldfish's store journal, {what}: `store` and every command that syncs fail until then"
        ),
        fix,
    )
}

/// Memory files git left unmerged (entries at a conflict stage in the
/// index): a merge whose driver could not run, as when `goldfish` was not on
/// git's PATH. Git then keeps the file as ours, with no markers, so nothing
/// in it shows the conflict. Paths relative to the repository; none when git
/// cannot be asked.
pub fn unmerged_memory_files(workspace: &Workspace) -> Vec<String> {
    let Ok(entries) = workspace.unmerged_in(MEMORY_DIR) else {
        return Vec::new();
    };
    let mut files: Vec<String> = entries
        .into_iter()
        .map(|entry| entry.path)
        .filter(|path| path.ends_with(".jsonl"))
        .collect();
    files.dedup();
    files
}

/// What an unmerged memory file means, for doctor and the CLI's warning.
pub fn conflict_message(files: &[String]) -> String {
    format!(
        "{} {} in conflict: git merged without the goldfish merge driver (not declared in this clone, or `goldfish` not on git's PATH)",
        files.join(", "),
        if files.len() == 1 { "is" } else { "are" },
    )
}

/// How to merge them again: from git's index stages, never the file (which
/// holds one side, or conflict markers).
pub fn remerge_fix(_files: &[String]) -> String {
    "goldfish resolve (merges them again from git's index with the driver, keeping both sides, and stages them)".to_owned()
}

/// Lines of the log readers skip: not a misconfiguration of this clone, but
/// worth a look (committed conflict markers come from a clone without the
/// driver).
fn log(view: &Result<LogView, LogError>) -> Finding {
    let view = match view {
        Ok(view) => view,
        Err(err @ LogError::Unsafe { .. }) => {
            return Finding::bad(
                "log",
                Severity::Problem,
                chain(err),
                "see memory-folder: its memories are read once it is a real folder of this repository",
            );
        }
        Err(err) => {
            return Finding::bad(
                "log",
                Severity::Problem,
                chain(err),
                "check the permissions of the memory folder",
            );
        }
    };
    if view.problems.is_empty() {
        return Finding::ok(
            "log",
            format!(
                "{}, every line readable",
                crate::app::render::memories(view.memories.len() as u64)
            ),
        );
    }
    let mut listed: Vec<String> = view
        .problems
        .iter()
        .take(LISTED_LINES)
        .map(|problem| format!("{MEMORY_DIR}/{problem}"))
        .collect();
    if view.problems.len() > LISTED_LINES {
        listed.push(format!("… and {} more", view.problems.len() - LISTED_LINES));
    }
    Finding::bad(
        "log",
        Severity::Warning,
        format!(
            "{}; {} not readable records and skipped (kept in the file):\n{}",
            crate::app::render::memories(view.memories.len() as u64),
            crate::app::render::count(view.problems.len() as u64, "line is", "lines are"),
            listed.join("\n")
        ),
        "edit or remove those lines by hand; conflict markers mean a clone merged without the driver: run `goldfish init` there",
    )
}

/// Memories not to take at face value ([`trust::check`]): readers index
/// them, recall marks them, `brief` leaves them out. Each is listed with its
/// file, line and fix. Types are not checked when `.goldfish/config`
/// cannot be used: a warning that says why.
fn suspect(view: &LogView, workspace: &Workspace, now: jiff::Timestamp) -> Finding {
    let kinds = RepoConfig::kinds_for_readers(crate::adapters::memdir::read_repo_config(workspace));
    let (kinds, unchecked) = match kinds {
        Ok(kinds) => (Some(kinds), None),
        Err(why) => (None, Some(format!("types are not checked: {why}"))),
    };
    let mut listed = Vec::new();
    let mut fixes: Vec<&'static str> = Vec::new();
    if unchecked.is_some() {
        fixes.push(
            "fix .goldfish/config (`store` refuses to write until it can use it) and commit it",
        );
    }
    let mut count = 0;
    for located in &view.memories {
        for suspicion in trust::check(&located.memory, now, kinds.as_ref()) {
            count += 1;
            if listed.len() < LISTED_LINES {
                listed.push(format!(
                    "{MEMORY_DIR}/{}:{}: memory {}: {suspicion}",
                    located.file, located.line, located.memory.id
                ));
            }
            if !fixes.contains(&suspicion.fix()) {
                fixes.push(suspicion.fix());
            }
        }
    }
    if count == 0 {
        return match unchecked {
            None => Finding::ok(
                "suspect-memories",
                "no memory holds a secret, an odd timestamp or an unknown type",
            ),
            Some(unchecked) => Finding::bad(
                "suspect-memories",
                Severity::Warning,
                format!("no memory holds a secret or an odd timestamp; {unchecked}"),
                fixes.join("; "),
            ),
        };
    }
    if count > listed.len() {
        listed.push(format!("… and {} more", count - listed.len()));
    }
    listed.extend(unchecked);
    Finding::bad(
        "suspect-memories",
        Severity::Warning,
        format!(
            "{count} findings in memories (`store` refuses these but orders to agents, which it stores with a warning: the others were written by hand, by another tool or with --allow-secret; recall marks them and masks secrets; the briefing leaves them out):\n{}",
            listed.join("\n")
        ),
        fixes.join("; "),
    )
}

/// The index file, whether it follows this workspace, and the embeddings;
/// and the trust policy in effect its last sync of the workspace stored
/// (`None`: no index, or the workspace is not in it).
fn index(
    workspace: &Workspace,
    inputs: &Inputs<'_>,
) -> (Vec<Finding>, Option<Option<TrustPolicy>>) {
    let path = inputs.index_path.display();
    let mut findings = Vec::new();
    let model = |index: Option<&Index>| model_finding(&inputs.model, index);
    let index = match Index::inspect(inputs.index_path) {
        Ok(Inspection::Intact(index)) => {
            findings.push(intact(&index, &path.to_string()));
            index
        }
        Ok(Inspection::Missing) => {
            findings.push(Finding::bad(
                "index",
                Severity::Note,
                format!(
                    "no index at {path} yet: nothing was synced; the next goldfish command that reads memories (recall, brief, store, sync) builds it from git"
                ),
                NEXT_COMMAND_FIX,
            ));
            findings.push(model(None));
            return (findings, None);
        }
        Ok(Inspection::Corrupt(why)) => {
            findings.push(Finding::bad(
                "index",
                Severity::Problem,
                format!("{path} is corrupt ({why}); it is only a cache of git"),
                "goldfish reindex",
            ));
            findings.push(model(None));
            return (findings, None);
        }
        Ok(Inspection::TooNew { found, supported }) => {
            findings.push(Finding::bad(
                "index",
                Severity::Problem,
                format!(
                    "{path} has schema version {found}, newer than this goldfish understands ({supported})"
                ),
                format!("upgrade goldfish, or delete {path} (it is rebuilt from git)"),
            ));
            findings.push(model(None));
            return (findings, None);
        }
        Err(err) => {
            findings.push(Finding::bad(
                "index",
                Severity::Problem,
                format!("cannot read the index: {}", chain(&err)),
                format!("check the permissions of {path}"),
            ));
            findings.push(model(None));
            return (findings, None);
        }
    };
    findings.push(index_sync(workspace, &index));
    if let Some(finding) = keyword_index(&index, inputs.index_path) {
        findings.push(finding);
    }
    findings.extend(trust_findings(workspace, &index));
    findings.push(model(Some(&index)));
    let in_effect = match index.workspace_by_root(workspace.root()) {
        Ok(Some(row)) => index.policy_in_effect(row.id).ok(),
        _ => None,
    };
    (findings, in_effect)
}

/// The embedding model: missing, unusable, or installed with how many
/// memories are not embedded yet.
fn model_finding(model: &ModelState, index: Option<&Index>) -> Finding {
    match model {
        ModelState::Missing => Finding::bad(
            "model",
            Severity::Warning,
            "no embedding model is installed: recall matches keywords only",
            "goldfish model install",
        ),
        ModelState::Unusable(why) => Finding::bad(
            "model",
            Severity::Problem,
            why.clone(),
            "goldfish model install",
        ),
        ModelState::Installed(id) => match index.map(Index::pending_embeddings) {
            Some(Ok(pending)) if pending > 0 => Finding::bad(
                "model",
                Severity::Warning,
                format!(
                    "{id}: {} not embedded yet (found by keywords only)",
                    crate::app::render::memories(pending)
                ),
                "goldfish sync",
            ),
            _ => Finding::ok("model", id.clone()),
        },
    }
}

/// Whether the keyword index holds every row, or the next sync or recall
/// must write it (a copy in memory ranks meanwhile where it cannot be
/// written: the same ranking, slower at scale). Nothing
/// for an index of an older schema: its next sync upgrades it and writes
/// the keyword index.
fn keyword_index(index: &Index, index_path: &std::path::Path) -> Option<Finding> {
    use crate::adapters::index::keyword::{self, Standing};
    if index.schema_version().ok()? < Index::current_schema_version() {
        return None;
    }
    let dir = keyword::dir_of(index_path);
    // When it cannot be written, keyword recall ranks with a copy in
    // memory: the same ranking, slower.
    let fallback = "the next sync or recall";
    Some(match index.keyword_index() {
        Ok(Standing::Fresh { rows }) => Finding::ok(
            "keyword-index",
            format!(
                "{}: up to date ({}; word rarity {})",
                dir.display(),
                crate::app::render::memories(rows),
                keyword::RARITY_TABLE
            ),
        ),
        // A store leaves the keyword index to the next read: behind is
        // how it waits, not a fault.
        Ok(Standing::Behind { changes }) => Finding::ok(
            "keyword-index",
            format!(
                "{}: {} stored since it was written; {fallback} writes them",
                dir.display(),
                crate::app::render::memories(changes)
            ),
        ),
        Ok(Standing::Unwritten) => Finding::bad(
            "keyword-index",
            Severity::Warning,
            format!(
                "{}: not written for this index yet; {fallback} writes it",
                dir.display()
            ),
            "goldfish sync",
        ),
        Ok(Standing::Damaged(damage)) => Finding::bad(
            "keyword-index",
            Severity::Warning,
            format!(
                "{}: {}; {fallback} writes it again",
                damage.file.display(),
                damage.reason
            ),
            "goldfish sync",
        ),
        Err(err) => Finding::bad(
            "keyword-index",
            Severity::Warning,
            format!("{}; {fallback} writes it again", chain(&err)),
            "goldfish sync",
        ),
    })
}

/// An intact index, as this goldfish would use it. One written by an older
/// goldfish is upgraded by the next command that opens it for writing; some
/// of them also hold queued content no memory has, which made a sync after a
/// branch switch fail for as long as no model emptied the queue.
fn intact(index: &Index, path: &str) -> Finding {
    let version = match index.schema_version() {
        Ok(version) => version,
        Err(err) => {
            return Finding::bad(
                "index",
                Severity::Problem,
                format!("cannot read the index: {}", chain(&err)),
                format!("check the permissions of {path}"),
            );
        }
    };
    let current = Index::current_schema_version();
    if version >= current {
        return Finding::ok("index", format!("{path}: intact"));
    }
    match index.stale_embeddings() {
        Ok(0) => Finding::bad(
            "index",
            Severity::Warning,
            format!(
                "{path}: intact, written by an older goldfish (schema {version}, now {current}); the next sync upgrades it and reads every memory file again"
            ),
            "goldfish sync",
        ),
        Ok(stale) => Finding::bad(
            "index",
            Severity::Problem,
            format!(
                "{path}: written by an older goldfish (schema {version}), its embedding queue holds {stale} texts no memory has: a sync that brings one back (a branch switch, a revert) fails until the index is upgraded"
            ),
            "goldfish sync (upgrades the index and repairs the queue)",
        ),
        Err(err) => Finding::bad(
            "index",
            Severity::Problem,
            format!("cannot read the index: {}", chain(&err)),
            format!("check the permissions of {path}"),
        ),
    }
}

/// Whether the index saw this workspace's HEAD and memory files as they are.
fn index_sync(workspace: &Workspace, index: &Index) -> Finding {
    let stale =
        |message: String| Finding::bad("index-sync", Severity::Problem, message, "goldfish sync");
    let row = match index.workspace_by_root(workspace.root()) {
        Ok(Some(row)) => row,
        Ok(None) => {
            return Finding::bad(
                "index-sync",
                Severity::Note,
                "this workspace was never synced into the index: the next goldfish command that reads memories (recall, brief, store, sync) adds it",
                NEXT_COMMAND_FIX,
            );
        }
        Err(err) => return stale(chain(&err)),
    };
    let head = workspace.head_commit().map(|id| id.to_string());
    let changed = match sync::changed_files(index, workspace) {
        Ok(changed) => changed,
        Err(err) => return stale(chain(&err)),
    };
    if row.head_commit != head {
        let moved = format!(
            "HEAD moved since the last sync ({} → {})",
            short(row.head_commit.as_deref()),
            short(head.as_deref())
        );
        // A commit moves HEAD and runs no hook; with the memory files as the
        // index saw them, only the commits that introduced memories are new.
        if changed.is_empty() {
            return Finding::bad(
                "index-sync",
                Severity::Warning,
                format!(
                    "{moved}, memory files unchanged: the commits that introduced memories are recorded at the next sync"
                ),
                "goldfish sync",
            );
        }
        return stale(format!(
            "{moved} and memory files changed ({}); recall syncs first, hooks did not",
            changed.join(", ")
        ));
    }
    if changed.is_empty() {
        Finding::ok(
            "index-sync",
            format!(
                "up to date with {} (last sync {})",
                match head.as_deref() {
                    Some(_) => format!("HEAD {}", short(head.as_deref())),
                    None => "the work tree (no commit yet)".to_owned(),
                },
                row.synced_at.as_deref().unwrap_or("never")
            ),
        )
    } else {
        stale(format!(
            "memory files changed since the last sync: {}",
            changed.join(", ")
        ))
    }
}

fn short(commit: Option<&str>) -> &str {
    commit.map_or("no commit yet", |id| id.get(..12).unwrap_or(id))
}

/// An error and its causes, `: `-separated.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
