//! `goldfish doctor`: the health checks of [`crate::app::doctor`], printed with
//! their fixes; exit 1 when something needs fixing. Changes nothing. What
//! the next goldfish command sets up by itself (a fresh clone) is a note:
//! exit 0.

use std::io::Write;

use anyhow::Context;

use super::{CliError, EXIT_OK};
use crate::app::doctor::{self, Finding, Inputs, Severity};

/// Exit code: a check found a problem (warnings alone exit 0).
const EXIT_PROBLEM: u8 = 1;

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct DoctorArgs {
    /// Print the findings as one JSON object: healthy, problems, warnings, checks
    #[arg(long)]
    json: bool,
}

pub(super) fn doctor(args: DoctorArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = super::session::workspace()?;
    let session = super::session::session()?;
    let home = session.home.clone();
    let model = session.model_state();
    let path_var = doctor::search_path();
    let findings = doctor::diagnose(
        &workspace,
        &Inputs {
            index_path: &home.index_path(),
            path_var: path_var.as_deref(),
            model,
            now: session.now()?,
            heals: !crate::app::heal::switched_off(),
        },
    );
    let healthy = doctor::healthy(&findings);
    if args.json {
        let count = |status| findings.iter().filter(|f| f.status == status).count();
        let value = serde_json::json!({
            "healthy": healthy,
            "root": workspace.root().display().to_string(),
            "problems": count(Severity::Problem),
            "warnings": count(Severity::Warning),
            "notes": count(Severity::Note),
            "checks": findings,
        });
        writeln!(out, "{value}").context("writing output")?;
    } else {
        print(&findings, out)?;
    }
    Ok(if healthy { EXIT_OK } else { EXIT_PROBLEM })
}

/// `ok|warning|problem  CHECK  message`, the fix underneath, then a summary.
fn print(findings: &[Finding], out: &mut dyn Write) -> Result<(), CliError> {
    let mut text = String::new();
    let width = findings.iter().map(|f| f.check.len()).max().unwrap_or(0);
    for finding in findings {
        let status = match finding.status {
            Severity::Ok => "ok",
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Problem => "problem",
        };
        let mut lines = finding.message.lines();
        text.push_str(&format!(
            "{status:<8} {:<width$}  {}\n",
            finding.check,
            lines.next().unwrap_or_default()
        ));
        let indent = " ".repeat(8 + 1 + width + 2);
        for line in lines {
            text.push_str(&format!("{indent}{line}\n"));
        }
        if let Some(fix) = &finding.fix {
            text.push_str(&format!("{indent}fix: {fix}\n"));
        }
    }
    let problems = findings
        .iter()
        .filter(|f| f.status == Severity::Problem)
        .count();
    let warnings = findings
        .iter()
        .filter(|f| f.status == Severity::Warning)
        .count();
    // A fresh clone: healthy, and the notes say what the next command does.
    let setting_up = if findings.iter().any(doctor::sets_itself_up) {
        "; the next goldfish command finishes setting up this clone (see the notes)"
    } else {
        ""
    };
    text.push_str(&match (problems, warnings) {
        (0, 0) => format!("healthy{setting_up}\n"),
        (0, w) => format!("healthy, {w} warning{}{setting_up}\n", plural(w)),
        (p, w) => format!(
            "{p} problem{}, {w} warning{}: run the fixes above\n",
            plural(p),
            plural(w)
        ),
    });
    out.write_all(text.as_bytes()).context("writing output")?;
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
