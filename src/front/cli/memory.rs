//! The memory commands: `store`, `recall`, `brief`, `show`, `forget` and
//! `trust`.

use std::io::{IsTerminal, Read, Write};

use anyhow::Context;

use super::output;
use super::session::{session, workspace};
use super::{CliError, EXIT_NO_RESULT, EXIT_OK};
use crate::app::Notice;
use crate::app::forget::{self, Forgot, Released};
use crate::app::recall::{self, RecallInput, Recalled};
use crate::app::render::{index_line, near_duplicate};
use crate::app::show;
use crate::app::store::{self, StoreInput};
use crate::app::{brief, digest};
use crate::domain::memory::Entry;

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct StoreArgs {
    /// The memory: a few sentences; `-` reads it from stdin
    #[arg(value_name = "CONTENT|-", required = true, num_args = 1..)]
    content: Vec<String>,
    /// decision, bug-fix, feature, insight, observation, refactor, checkpoint, plan (or a type from .goldfish/config)
    #[arg(long = "type", short = 't', value_name = "TYPE", default_value = crate::domain::memory::kinds::DEFAULT)]
    kind: String,
    /// Comma-separated tags
    #[arg(long, value_name = "A,B")]
    tags: Option<String>,
    /// Who or what stored it: agent, user, system, …
    #[arg(long, value_name = "SOURCE")]
    source: Option<String>,
    /// Comma-separated paths the memory is about; PATH:START-END cites those lines, checked against the code at every sync
    #[arg(long, value_name = "P,Q:40-52")]
    files: Option<String>,
    /// Store even though the content looks like it holds a secret
    #[arg(long)]
    allow_secret: bool,
    /// Store even though the workspace has a memory saying nearly the same (asked only when stdin is a terminal)
    #[arg(long)]
    force: bool,
    /// The id (or a unique prefix) of a memory the new one replaces: it leaves `brief` and default recall
    #[arg(long, value_name = "ID")]
    supersedes: Option<String>,
    /// Print the stored record as JSON
    #[arg(long)]
    json: bool,
}

pub(super) fn store(args: StoreArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let content = if args.content == ["-"] {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("cannot read the memory from stdin")?;
        bytes
    } else {
        args.content.join(" ").into_bytes()
    };
    let workspace = workspace()?;
    let mut session = session()?;
    let at_terminal = std::io::stdin().is_terminal();
    let mut asked: Vec<String> = Vec::new();
    let stored = store::store_asking(
        &mut session,
        &workspace,
        StoreInput {
            content,
            kind: args.kind,
            tags: args.tags.into_iter().collect(),
            files: args.files.into_iter().collect(),
            source: args.source,
            allow_secret: args.allow_secret,
            // A script keeps today's behaviour (write, then warn); a person
            // at a terminal is asked first.
            refuse_similar: !args.force && at_terminal,
            agent_session: None,
            vector: None,
            supersedes: args.supersedes,
            replaced: if at_terminal {
                store::FindReplaced::Ask
            } else {
                store::FindReplaced::Report
            },
        },
        &mut |candidate| {
            asked.push(candidate.memory.id.clone());
            ask_replaces(candidate)
        },
    );
    output::notices(&mut session);
    let stored = stored?;
    stored_notices(&stored, &asked);
    let superseded = match &stored.entry {
        Entry::Memory(m) => m.supersedes.clone(),
        _ => None,
    };
    if args.json {
        writeln!(out, "{}", stored.entry.to_line()).context("writing output")?;
        for candidate in &stored.replaceable {
            let id = &candidate.memory.id;
            let decision = if superseded.as_ref() == Some(id) {
                "superseded"
            } else if asked.contains(id) {
                "declined"
            } else {
                "not-asked"
            };
            output::replaceable_json(candidate, decision, out)?;
        }
        if let Some(quarantine) = &stored.quarantine {
            output::quarantine_json(stored.entry.id(), quarantine, out)?;
        }
    } else {
        writeln!(out, "{}", stored_line(&stored)).context("writing output")?;
    }
    Ok(EXIT_OK)
}

/// `stored ID in FILE`, and what it supersedes.
fn stored_line(stored: &store::Stored) -> String {
    let superseding = match &stored.entry {
        Entry::Memory(m) => m
            .supersedes
            .as_deref()
            .map(|old| format!(", superseding {old}"))
            .unwrap_or_default(),
        _ => String::new(),
    };
    format!(
        "stored {} in {}{superseding}",
        stored.entry.id(),
        stored.file.display()
    )
}

/// What a store leaves on stderr: the journal's note, why it is not
/// indexed, why it is or will be quarantined, its near-duplicates, and each memory it may replace that was
/// not asked about (`asked`).
fn stored_notices(stored: &store::Stored, asked: &[String]) {
    if let Some(journaled) = &stored.journaled {
        crate::front::stderr::notice(&Notice::note(journaled.to_string()));
    }
    if let Some(reason) = &stored.not_indexed {
        crate::front::stderr::notice(&Notice::warning(format!(
            "stored, but not indexed yet: {reason}"
        )));
    }
    if let Some(quarantine) = &stored.quarantine {
        crate::front::stderr::notice(&Notice::warning(quarantine.message(stored.entry.id())));
    }
    for similar in &stored.similar {
        crate::front::stderr::notice(&Notice::warning(format!(
            "this is {}",
            near_duplicate(similar, 80)
        )));
    }
    for candidate in &stored.replaceable {
        if asked.contains(&candidate.memory.id) {
            continue;
        }
        crate::front::stderr::notice(&Notice::note(format!(
            "it may replace {}; if it does: `goldfish forget {}`, then store it again with `--supersedes {}`",
            store::replaceable_line(candidate, 80),
            stored.entry.id(),
            candidate.memory.id
        )));
    }
}

/// Asks on stderr whether the memory being stored replaces `candidate`
/// (default no); the answer is read from stdin, a terminal.
fn ask_replaces(candidate: &store::Replaceable) -> bool {
    crate::front::stderr::notice(&Notice::note(format!(
        "it may replace {}",
        store::replaceable_line(candidate, 100)
    )));
    crate::front::stderr::text("Does the new memory replace it? [y/N] ");
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct RecallArgs {
    /// Words to look for; without a query, the newest memories are listed
    #[arg(value_name = "QUERY", num_args = 0..)]
    query: Vec<String>,
    /// Only memories from this point on: 30m, 1h, 3d, 2w, 2026-11-01 or a timestamp
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Only memories up to this point (same forms as --since)
    #[arg(long, value_name = "WHEN")]
    until: Option<String>,
    /// Only memories of this type (repeatable)
    #[arg(long = "type", short = 't', value_name = "TYPE")]
    kinds: Vec<String>,
    /// Only memories with this tag (repeatable: all must match)
    #[arg(long = "tag", value_name = "TAG")]
    tags: Vec<String>,
    /// Only memories whose author contains this (case-insensitive)
    #[arg(long, value_name = "NAME")]
    author: Option<String>,
    /// Ranking: hybrid (default with a model), semantic, or keyword (default without)
    #[arg(long, value_enum, value_name = "MODE", hide_possible_values = true)]
    mode: Option<ModeArg>,
    /// Drop results scoring below this: cosine similarity in [0, 1] (semantic, hybrid) or keyword relevance
    #[arg(long, value_name = "X")]
    min_score: Option<f64>,
    /// Which workspaces to search: current, all, or a workspace's name
    #[arg(
        long,
        short = 'w',
        value_name = "current|all|NAME",
        default_value = "current"
    )]
    workspace: String,
    /// At most this many memories
    #[arg(long, short = 'n', value_name = "N", default_value_t = 10)]
    limit: usize,
    /// A digest of the recalled memories in at most N tokens instead of the memories
    #[arg(long, value_name = "N")]
    budget: Option<usize>,
    /// How to distil with --budget: llm (the configured command), extractive, or auto (llm when configured)
    #[arg(
        long,
        value_enum,
        value_name = "HOW",
        default_value = "auto",
        hide_possible_values = true
    )]
    distill: DistillMode,
    /// Do not use (or fill) the cache of LLM digests
    #[arg(long)]
    no_cache: bool,
    /// JSON Lines: one memory per line (with --budget, one digest object)
    #[arg(long)]
    json: bool,
    /// One line per memory: short id, date, type, author and title (open one with `goldfish show ID`)
    #[arg(long, conflicts_with_all = ["budget", "json"])]
    index: bool,
    /// Memories captured from an agent's tool use: include, exclude, or only
    #[arg(
        long,
        value_enum,
        value_name = "WHICH",
        default_value = "include",
        hide_possible_values = true
    )]
    captured: CapturedArg,
    /// Quarantined memories too (outside the trust policy, a forged author, an order to agents), marked with their provenance and reasons
    #[arg(long)]
    include_untrusted: bool,
    /// Memories a later one supersedes too, marked `(SUPERSEDED by ID)`
    #[arg(long)]
    include_superseded: bool,
    /// The closest memories even when the question looks unrelated to the log (most of its words occur nowhere in a log large enough for that to count)
    #[arg(long)]
    include_unrelated: bool,
}

/// `--mode`: how recall ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ModeArg {
    Keyword,
    Semantic,
    Hybrid,
}

impl From<ModeArg> for crate::domain::recall::Mode {
    fn from(mode: ModeArg) -> Self {
        match mode {
            ModeArg::Keyword => Self::Keyword,
            ModeArg::Semantic => Self::Semantic,
            ModeArg::Hybrid => Self::Hybrid,
        }
    }
}

/// How `--budget` distils.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum DistillMode {
    Llm,
    Extractive,
    Auto,
}

impl From<DistillMode> for crate::app::digest::Distill {
    fn from(mode: DistillMode) -> Self {
        match mode {
            DistillMode::Llm => Self::Llm,
            DistillMode::Extractive => Self::Extractive,
            DistillMode::Auto => Self::Auto,
        }
    }
}

/// `recall --captured`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CapturedArg {
    Include,
    Exclude,
    Only,
}

impl From<CapturedArg> for crate::domain::recall::Captured {
    fn from(which: CapturedArg) -> Self {
        match which {
            CapturedArg::Include => Self::Include,
            CapturedArg::Exclude => Self::Exclude,
            CapturedArg::Only => Self::Only,
        }
    }
}

pub(super) fn recall(args: RecallArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let mut session = session()?;
    let query = args.query.join(" ");
    let input = RecallInput {
        query: Some(query),
        since: args.since,
        until: args.until,
        kinds: args.kinds,
        tags: args.tags,
        author: args.author,
        mode: args.mode.map(Into::into),
        min_score: args.min_score,
        workspace: args.workspace,
        limit: args.limit,
        budget: args.budget,
        distill: args.distill.into(),
        no_cache: args.no_cache,
        captured: args.captured.into(),
        include_untrusted: args.include_untrusted,
        include_superseded: args.include_superseded,
        include_unrelated: args.include_unrelated,
        narrow: Default::default(),
    };
    let recalled = recall::recall(&mut session, &cwd, input);
    output::notices(&mut session);
    match recalled? {
        Recalled::Nothing => {
            crate::front::stderr::line("no memories match");
            Ok(EXIT_NO_RESULT)
        }
        Recalled::NothingRelevant(judgement) => {
            if args.json {
                output::nothing_relevant_json(&judgement, out)?;
            }
            crate::front::stderr::line(&format!("nothing relevant: {}", judgement.reason()));
            crate::front::stderr::line(
                "hint: --include-unrelated shows the closest memories anyway",
            );
            Ok(EXIT_NO_RESULT)
        }
        Recalled::Memories { hits, .. } if args.index => {
            let (mut counter, _) = digest::token_counter(&mut session)?;
            for memory in &hits {
                writeln!(out, "{}", index_line(memory, counter.as_mut()))
                    .context("writing output")?;
            }
            Ok(EXIT_OK)
        }
        Recalled::Memories {
            hits,
            all_workspaces,
        } => {
            if args.json {
                output::memories_json(&hits, out)?;
            } else {
                output::memories_text(&hits, all_workspaces, out)?;
            }
            Ok(EXIT_OK)
        }
        Recalled::Digest(digested) => {
            output::digest(&digested, args.json, out)?;
            Ok(EXIT_OK)
        }
    }
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct BriefArgs {
    /// At most this many tokens (counted with the model's tokenizer)
    #[arg(long, value_name = "N", default_value_t = 300)]
    budget: usize,
    /// One JSON object: the briefing, its tokens and its sources
    #[arg(long)]
    json: bool,
}

pub(super) fn brief(args: BriefArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let mut session = session()?;
    let briefed = brief::brief(&mut session, &workspace, args.budget, &brief::Moment::Start);
    output::notices(&mut session);
    match briefed? {
        Some(digested) => {
            output::digest(&digested, args.json, out)?;
            Ok(EXIT_OK)
        }
        None => {
            crate::front::stderr::line(
                "nothing to brief on yet: no checkpoints, plans, decisions or recent fixes",
            );
            Ok(EXIT_NO_RESULT)
        }
    }
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct ShowArgs {
    /// Memory ids (or unique prefixes of them)
    #[arg(value_name = "ID", required = true)]
    ids: Vec<String>,
    /// One JSON object per memory (the fields of `recall --json`)
    #[arg(long)]
    json: bool,
}

pub(super) fn show(args: ShowArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let mut session = session()?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let shown = show::show(&mut session, &cwd, &args.ids);
    output::notices(&mut session);
    let memories = shown?;
    if args.json {
        output::memories_json(&memories, out)?;
    } else {
        output::memories_text(&memories, false, out)?;
    }
    Ok(EXIT_OK)
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct ForgetArgs {
    /// The memory's id (or a unique prefix of it)
    #[arg(value_name = "ID")]
    id: String,
    /// Print the tombstone record as JSON
    #[arg(long)]
    json: bool,
}

pub(super) fn forget(args: ForgetArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let mut session = session()?;
    let forgot = forget::forget(&mut session, &workspace, &args.id);
    output::notices(&mut session);
    match forgot? {
        Forgot::Already { id, at } => {
            writeln!(out, "{id} is already forgotten (since {at})").context("writing output")?;
        }
        Forgot::Done { target, tombstone } => {
            if args.json {
                writeln!(out, "{}", tombstone.to_line()).context("writing output")?;
            } else {
                writeln!(out, "forgot {target}").context("writing output")?;
            }
        }
    }
    Ok(EXIT_OK)
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct TrustArgs {
    /// The quarantined memory's id (or a unique prefix of it); see `goldfish recall --include-untrusted`
    #[arg(value_name = "ID")]
    id: String,
    /// Print the trust record as JSON
    #[arg(long)]
    json: bool,
}

pub(super) fn trust(args: TrustArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let mut session = session()?;
    let released = forget::release(&mut session, &workspace, &args.id);
    output::notices(&mut session);
    match released? {
        Released::NotQuarantined { id, reasons } => {
            writeln!(
                out,
                "{id} is not quarantined ({}): nothing to release",
                reasons.join(", ")
            )
            .context("writing output")?;
        }
        Released::Done {
            target,
            reasons,
            release,
        } => {
            if args.json {
                writeln!(out, "{}", release.to_line()).context("writing output")?;
            } else {
                writeln!(
                    out,
                    "released {target} (quarantined for: {}); commit .goldfish/memories to release it for the team",
                    reasons.join(", ")
                )
                .context("writing output")?;
            }
        }
    }
    Ok(EXIT_OK)
}
