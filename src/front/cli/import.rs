//! `goldfish import DIR`: old Goldfish notes into the log, with a report of
//! what was imported and what was skipped, and why.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use serde_json::{Value, json};

use super::session::{self, Bar};
use super::{CliError, EXIT_OK};
use crate::app::MEMORY_DIR;
use crate::app::import::{self as app_import, ImportInput};
use crate::domain::import::{FileOutcome, Imported};
use crate::domain::memory::Entry;

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct ImportArgs {
    /// A folder of notes: *.md files with optional YAML frontmatter (checkpoints/YYYY-MM-DD/HHMM-*.md, plans/*.md, …)
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Show what would be imported, and write nothing
    #[arg(long)]
    dry_run: bool,
    /// Import notes even though they look like they hold a secret
    #[arg(long)]
    allow_secret: bool,
    /// Print the report as one JSON object
    #[arg(long)]
    json: bool,
}

pub(super) fn import(args: ImportArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = session::workspace()?;
    let mut session = session::session()?;
    Bar::install(&mut session, !args.json);
    let imported = app_import::import(
        &mut session,
        &workspace,
        &ImportInput {
            dir: args.dir.clone(),
            allow_secret: args.allow_secret,
            dry_run: args.dry_run,
        },
    );
    super::output::notices(&mut session);
    let imported = imported?;
    if let Some(reason) = &imported.not_indexed {
        crate::front::stderr::notice(&crate::app::Notice::warning(format!(
            "imported, but not indexed yet: {reason}"
        )));
    }
    if args.json {
        let report = json_report(&args, &imported.outcomes);
        writeln!(out, "{report}").context("writing output")?;
    } else {
        text_report(&args, &imported.outcomes, out)?;
    }
    if !imported.any_in_log() {
        return Err(CliError::usage(anyhow::anyhow!(
            "nothing could be imported from {}: every file was skipped",
            args.dir.display()
        )));
    }
    Ok(EXIT_OK)
}

fn text_report(
    args: &ImportArgs,
    outcomes: &[FileOutcome],
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let verb = if args.dry_run {
        "would import"
    } else {
        "imported"
    };
    let mut memories = 0;
    let mut imported_files = 0;
    let mut skipped = 0;
    let mut in_log = 0;
    let mut ignored: Vec<(String, usize)> = Vec::new();
    for outcome in outcomes {
        for key in &outcome.ignored_keys {
            match ignored.iter_mut().find(|(name, _)| name == key) {
                Some((_, count)) => *count += 1,
                None => ignored.push((key.clone(), 1)),
            }
        }
        let line = match &outcome.result {
            Ok(imported) => {
                memories += imported.memories.len();
                imported_files += 1;
                imported_line(verb, &outcome.path, imported)
            }
            Err(skip) => {
                skipped += 1;
                if skip.is_in_log() {
                    in_log += 1;
                }
                let at = skip.line().map(|n| format!(":{n}")).unwrap_or_default();
                format!("skipped {}{at}: {skip}", outcome.path)
            }
        };
        writeln!(out, "{line}").context("writing output")?;
    }
    if !ignored.is_empty() {
        ignored.sort();
        let keys: Vec<String> = ignored
            .iter()
            .map(|(key, n)| format!("{key} ({n} {})", if *n == 1 { "file" } else { "files" }))
            .collect();
        writeln!(out, "frontmatter keys not imported: {}", keys.join(", "))
            .context("writing output")?;
    }
    let mut summary = if memories == 0 {
        format!("{verb} nothing")
    } else {
        format!(
            "{verb} {memories} {} from {imported_files} {} into {MEMORY_DIR}",
            if memories == 1 { "memory" } else { "memories" },
            if imported_files == 1 { "file" } else { "files" },
        )
    };
    if skipped > 0 {
        summary.push_str(&format!(
            "; skipped {skipped} {}",
            if skipped == 1 { "file" } else { "files" }
        ));
        if in_log > 0 {
            summary.push_str(&format!(" ({in_log} already in the log)"));
        }
    }
    if args.dry_run {
        summary.push_str(" (dry run: nothing written)");
    }
    writeln!(out, "{summary}").context("writing output")?;
    Ok(())
}

/// A file imported: its first memory's type and time, its parts.
fn imported_line(verb: &str, path: &str, imported: &Imported) -> String {
    let first = &imported.memories[0];
    let when = first.timestamp.get(..16).unwrap_or(&first.timestamp);
    let mut line = format!("{verb} {path}: {}, {}", first.kind, when.replace('T', " "));
    if imported.parts > 1 {
        line.push_str(&format!(", split into {} parts", imported.parts));
    }
    if imported.repeated_parts > 0 {
        line.push_str(&format!(
            " ({} already in the log)",
            imported.repeated_parts
        ));
    }
    line
}

/// One object: totals, then every file with its records (without ids in a
/// dry run) or the reason it was skipped.
fn json_report(args: &ImportArgs, outcomes: &[FileOutcome]) -> Value {
    let mut files = Vec::new();
    let (mut memories, mut imported_files, mut skipped, mut in_log) = (0, 0, 0, 0);
    for outcome in outcomes {
        let file = match &outcome.result {
            Ok(imported) => {
                memories += imported.memories.len();
                imported_files += 1;
                let records: Vec<Value> = imported
                    .memories
                    .iter()
                    .map(|memory| {
                        let line = Entry::Memory(memory.clone()).to_line();
                        let mut record: Value =
                            serde_json::from_str(&line).expect("a record is JSON");
                        if args.dry_run
                            && let Some(map) = record.as_object_mut()
                        {
                            map.remove("id");
                        }
                        record
                    })
                    .collect();
                json!({
                    "file": outcome.path,
                    "status": "imported",
                    "parts": imported.parts,
                    "repeated_parts": imported.repeated_parts,
                    "memories": records,
                    "ignored_keys": outcome.ignored_keys,
                })
            }
            Err(skip) => {
                skipped += 1;
                if skip.is_in_log() {
                    in_log += 1;
                }
                json!({
                    "file": outcome.path,
                    "status": "skipped",
                    "reason": skip.code(),
                    "line": skip.line(),
                    "message": skip.to_string(),
                    "ignored_keys": outcome.ignored_keys,
                })
            }
        };
        files.push(file);
    }
    json!({
        "dir": args.dir.display().to_string(),
        "dry_run": args.dry_run,
        "memories_imported": memories,
        "files_imported": imported_files,
        "files_skipped": skipped,
        "files_already_in_log": in_log,
        "files": files,
    })
}
