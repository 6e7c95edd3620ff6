//! What repeats or no longer helps: `similar` and `tidy`.

use std::io::{IsTerminal, Write};

use anyhow::Context;

use super::output;
use super::session::{Bar, session, workspace};
use super::{CliError, EXIT_NO_RESULT, EXIT_OK};
use crate::app::render::similar_line;
use crate::app::show::{self, Target};
use crate::domain::memory::Entry;
use crate::front::wire;

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["id", "text", "scan"])))]
pub(super) struct SimilarArgs {
    /// The memory's id (or a unique prefix of it)
    #[arg(value_name = "ID")]
    id: Option<String>,
    /// Compare with this text instead of a stored memory
    #[arg(long, value_name = "TEXT")]
    text: Option<String>,
    /// Group every cluster of near-duplicates in this workspace
    #[arg(long)]
    scan: bool,
    /// Cosine similarity from which memories count as similar
    #[arg(long, value_name = "X", default_value_t = crate::app::show::SIMILAR)]
    threshold: f64,
    /// At most this many memories (per cluster with --scan)
    #[arg(long, short = 'n', value_name = "N", default_value_t = 10)]
    limit: usize,
    /// JSON Lines: one memory (or, with --scan, one cluster) per line
    #[arg(long)]
    json: bool,
}

pub(super) fn similar(args: SimilarArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let mut session = session()?;
    Bar::install(&mut session, !args.json);
    if args.scan {
        let clusters =
            show::duplicate_clusters(&mut session, &workspace, args.threshold, args.limit);
        output::notices(&mut session);
        let clusters = clusters?;
        if clusters.is_empty() {
            crate::front::stderr::line(&format!(
                "no near-duplicates at similarity {} or more",
                args.threshold
            ));
            return Ok(EXIT_NO_RESULT);
        }
        for (n, cluster) in clusters.iter().enumerate() {
            if args.json {
                let line = serde_json::to_string(
                    &serde_json::json!({ "cluster": n + 1, "memories": wire::memories(cluster) }),
                )
                .context("serializing a cluster")?;
                writeln!(out, "{line}").context("writing output")?;
            } else {
                writeln!(out, "cluster {}:", n + 1).context("writing output")?;
                for m in cluster {
                    writeln!(out, "  {}", similar_line(m, 70)).context("writing output")?;
                }
            }
        }
        return Ok(EXIT_OK);
    }
    let target = match (args.id, args.text) {
        (Some(id), _) => Target::Id(id),
        (None, Some(text)) => Target::Text(text),
        (None, None) => unreachable!("clap requires an id, --text or --scan"),
    };
    let hits = show::similar(&mut session, &workspace, target, args.threshold, args.limit);
    output::notices(&mut session);
    let hits = hits?;
    if hits.is_empty() {
        crate::front::stderr::line(&format!("nothing at similarity {} or more", args.threshold));
        return Ok(EXIT_NO_RESULT);
    }
    if args.json {
        output::memories_json(&hits, out)?;
    } else {
        for m in &hits {
            writeln!(out, "{}", similar_line(m, 90)).context("writing output")?;
        }
    }
    Ok(EXIT_OK)
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct TidyArgs {
    /// Checkpoints older than this many days are candidates
    #[arg(long, value_name = "DAYS", default_value_t = 30)]
    older_than: u64,
    /// Forget what is listed, after asking
    #[arg(long)]
    apply: bool,
    /// With --apply: forget without asking
    #[arg(long, requires = "apply")]
    yes: bool,
    /// JSON Lines: one object per memory listed (`why`, `because_of`, `reason`, `memory`, and with --apply `forgotten`)
    #[arg(long)]
    json: bool,
}

pub(super) fn tidy(args: TidyArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    use crate::app::tidy::{self, TidyOptions};
    let workspace = workspace()?;
    let mut session = session()?;
    Bar::install(&mut session, !args.json);
    let asks = args.apply && !args.yes;
    if asks && !std::io::stdin().is_terminal() {
        return Err(CliError::usage(anyhow::anyhow!(
            "tidy --apply asks before it forgets, and no terminal can answer: pass --yes to forget everything it lists (`goldfish tidy` lists it first)"
        )));
    }
    let found = tidy::find(
        &mut session,
        &workspace,
        TidyOptions {
            older_than_days: args.older_than,
        },
    );
    output::notices(&mut session);
    let found = found?;
    let mut forget: Vec<String> = Vec::new();
    for (name, members) in &groups_of(&found.proposals) {
        if !args.json {
            write_group(out, name, members)?;
        }
        if !args.apply {
            continue;
        }
        let confirmed = !asks || {
            crate::front::stderr::text(&format!(
                "Forget {} listed above? [y/N] ",
                crate::app::render::memories(members.len() as u64)
            ));
            let mut answer = String::new();
            std::io::stdin()
                .read_line(&mut answer)
                .context("reading the answer")?;
            matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
        };
        if confirmed {
            forget.extend(members.iter().map(|p| p.memory.id.clone()));
        }
    }
    let forgotten: Vec<String> = if forget.is_empty() {
        Vec::new()
    } else {
        let written = tidy::forget_all(&mut session, &workspace, &forget);
        output::notices(&mut session);
        written?
            .iter()
            .filter_map(|entry| match entry {
                Entry::Tombstone(t) => Some(t.forgets.clone()),
                _ => None,
            })
            .collect()
    };
    if args.json {
        write_json(out, &found.proposals, args.apply.then_some(&forgotten))?;
    }
    let listed = crate::app::render::memories(found.proposals.len() as u64);
    if found.proposals.is_empty() {
        crate::front::stderr::line(&format!(
            "nothing to tidy among {}",
            crate::app::render::memories(found.memories as u64)
        ));
    } else if !args.apply {
        crate::front::stderr::line(&format!(
            "nothing changed: `goldfish tidy --apply` forgets these {listed} (it asks first; tombstones, which `git revert` undoes)"
        ));
    } else {
        crate::front::stderr::line(&format!(
            "forgot {} of {listed}: tombstones in .goldfish/memories/, shared once committed; `git revert` of that commit brings them back",
            forgotten.len()
        ));
    }
    Ok(EXIT_OK)
}

/// The proposals by why, groups in the order found: superseded, covered
/// checkpoints, near-duplicates, stale.
fn groups_of(
    proposals: &[crate::app::tidy::Proposal],
) -> Vec<(&'static str, Vec<&crate::app::tidy::Proposal>)> {
    let mut groups: Vec<(&'static str, Vec<&crate::app::tidy::Proposal>)> = Vec::new();
    for proposal in proposals {
        let name = proposal.why.name();
        match groups.iter_mut().find(|(group, _)| *group == name) {
            Some((_, members)) => members.push(proposal),
            None => groups.push((name, vec![proposal])),
        }
    }
    groups
}

/// A group of the list, for people: its heading, then each memory and why.
fn write_group(
    out: &mut dyn Write,
    name: &str,
    members: &[&crate::app::tidy::Proposal],
) -> Result<(), CliError> {
    writeln!(out, "{} ({}):", heading(name), members.len()).context("writing output")?;
    for proposal in members {
        let m = &proposal.memory;
        // Ids and types arrive through git too: never raw controls.
        let safe = crate::app::render::terminal_safe;
        writeln!(
            out,
            "  {}  {}  {}\n      {}",
            safe(&m.id),
            safe(&m.kind),
            crate::app::render::excerpt(&m.content, 70),
            safe(&proposal.why.explain())
        )
        .context("writing output")?;
    }
    Ok(())
}

/// Each proposal as a JSON line; with `--apply`, whether it was forgotten.
fn write_json(
    out: &mut dyn Write,
    proposals: &[crate::app::tidy::Proposal],
    forgotten: Option<&Vec<String>>,
) -> Result<(), CliError> {
    for proposal in proposals {
        let mut line = serde_json::json!({
            "why": proposal.why.name(),
            "because_of": proposal.why.because_of(),
            "reason": proposal.why.explain(),
            "memory": wire::Memory::from(&proposal.memory),
        });
        if let Some(forgotten) = forgotten {
            line["forgotten"] = forgotten.contains(&proposal.memory.id).into();
        }
        let line = serde_json::to_string(&line).context("serializing a proposal")?;
        writeln!(out, "{line}").context("writing output")?;
    }
    Ok(())
}

/// A group of `tidy`'s list, for people.
fn heading(why: &str) -> &'static str {
    match why {
        "superseded" => "superseded: a later memory replaces each",
        "covered-checkpoint" => "checkpoints a later one covers",
        "near-duplicate" => "near-duplicates of a newer memory",
        "stale" => {
            "stale: a file each names was deleted, its commit reverted, or its branch deleted unmerged"
        }
        _ => "other",
    }
}
