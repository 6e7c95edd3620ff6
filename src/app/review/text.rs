//! The review as text.

use super::*;

/// How many memory changes the text of a review lists at most (the ones
/// that stop it first): a range that adds a million lines prints a page,
/// not a million (`--json` has them all).
pub const TEXT_CHANGES: usize = 200;

/// The changes the text lists: every stopping one (up to
/// [`TEXT_CHANGES`]), then the others in order up to that many.
pub(super) fn shown_changes(changes: &[Change]) -> HashSet<usize> {
    let indexed = || changes.iter().enumerate();
    let stopping = indexed().filter(|(_, change)| change.stops);
    let others = indexed().filter(|(_, change)| !change.stops);
    stopping
        .chain(others)
        .take(TEXT_CHANGES)
        .map(|(index, _)| index)
        .collect()
}

/// What `goldfish review` prints: a header (the range, the policy used),
/// each change with its commit and verdict (at most [`TEXT_CHANGES`]), each
/// policy change, and a summary line.
pub fn text(review: &Review) -> String {
    let mut out = header_text(review);
    out.push_str(&changes_text(review));
    out.push_str(&config_changes_text(review));
    out.push_str(&cited_text(review));
    out.push_str(&summary_text(review));
    crate::app::render::terminal_safe(&out).into_owned()
}

/// The range reviewed and the trust policy used.
fn header_text(review: &Review) -> String {
    let mut out = String::new();
    let named = |name: &str, commit: &str| {
        if commit.starts_with(name) {
            short(commit).to_owned()
        } else {
            format!("{name} ({})", short(commit))
        }
    };
    out.push_str(&format!(
        "review of {} commit{} from {} to {}",
        review.commits,
        if review.commits == 1 { "" } else { "s" },
        named(&review.base, &review.base_commit),
        named(&review.head, &review.head_commit),
    ));
    match &review.since_commit {
        Some(since) if *since != review.base_commit => out.push_str(&format!(
            " (BASE is not in HEAD's history: changes since their merge base {})",
            short(since)
        )),
        None => out.push_str(" (no history in common: every line of HEAD counts)"),
        _ => {}
    }
    out.push('\n');
    // Behind only when BASE has commits HEAD lacks: equal commits are not.
    if review.commits == 0
        && review.base_commit != review.head_commit
        && review.since_commit.as_deref() == Some(&review.head_commit)
    {
        out.push_str(&format!(
            "{} is behind {}: to review what a pull would bring, run `goldfish review {} {}`\n",
            review.head, review.base, review.head, review.base
        ));
    }
    let policy = match &review.policy.authors {
        Some(authors) => format!(
            "authors {}{}",
            authors.join(", "),
            if review.policy.signed {
                ", signed commits only"
            } else {
                ""
            }
        ),
        None => "none: every author is trusted; orders to agents, forged authors and edits still stop the review".to_owned(),
    };
    out.push_str(&format!(
        "trust policy of {}: {policy}\n",
        named(&review.base, &review.policy.commit)
    ));
    if let Some(note) = &review.policy.note {
        out.push_str(&format!("  note: {note}\n"));
    }
    out
}

/// Each memory change shown, and how many more there are.
fn changes_text(review: &Review) -> String {
    let mut out = String::new();
    let shown = shown_changes(&review.changes);
    for (_, change) in review
        .changes
        .iter()
        .enumerate()
        .filter(|(index, _)| shown.contains(index))
    {
        out.push('\n');
        out.push_str(&change_text(change));
    }
    if shown.len() < review.changes.len() {
        let hidden = review.changes.len() - shown.len();
        let stopping = review.changes.iter().filter(|change| change.stops).count();
        let hidden_stopping = stopping.saturating_sub(TEXT_CHANGES);
        out.push_str(&format!(
            "\n… {hidden} more memory changes not shown ({hidden_stopping} of them stopping the review): `goldfish review --json` lists every one\n",
        ));
    }
    out
}

/// Each change of the trust policy, the attributes and the signers file.
fn config_changes_text(review: &Review) -> String {
    let mut out = String::new();
    for change in &review.policy_changes {
        out.push('\n');
        let commit = &change.commit;
        out.push_str(&format!(
            "policy     {REPO_CONFIG} [trust]  by {}  commit {}, signature {}\n    before: {}\n    after:  {}\n",
            commit.author,
            short(&commit.commit),
            commit.signature,
            change.before,
            change.after
        ));
        if change.stops {
            out.push_str(&format!(
                "    STOPS: its commit is outside the trust policy of {}: {}\n",
                review.base,
                reasons_text(&change.reasons)
            ));
        }
    }
    for change in &review.attribute_changes {
        out.push('\n');
        out.push_str(&format!(
            "attributes {MEMORY_PATTERN} {}: {} -> {}\n",
            change.attribute, change.before, change.after
        ));
        if change.stops {
            out.push_str(
                "    STOPS: memory files would no longer be merged by goldfish: concurrent memories conflict and a text merge may drop lines (`goldfish init` writes the attribute back)\n",
            );
        }
    }
    for change in &review.folder_changes {
        out.push_str(&format!(
            "\nnot a file {}: {} ({})\n    STOPS: goldfish reads memories from regular files in a real folder only: readers skip it, `store` refuses to write there{}; `git rm` it and keep memories as files in {MEMORY_DIR}/\n",
            change.path,
            change.kind,
            short(&change.object),
            if change.kind == "a submodule" {
                ", and what is stored in a submodule is committed in another repository"
            } else {
                ""
            }
        ));
    }
    if let Some(change) = &review.signers_change {
        let blob = |id: &Option<String>| id.as_deref().map_or("none", short).to_owned();
        out.push_str(&format!(
            "\nsigners    {} (gpg.ssh.allowedSignersFile): {} -> {}\n    STOPS: its keys decide whose signatures are good under `signed = true`: check every key it adds and the name it gives it\n",
            change.path,
            blob(&change.before),
            blob(&change.after)
        ));
    }
    out
}

/// The memories whose cited code the range changes, each with what to do
/// about it.
fn cited_text(review: &Review) -> String {
    let mut out = String::new();
    let count = review.cited.len();
    if count == 0 {
        return out;
    }
    out.push_str(&format!(
        "\ncited code: this change alters lines that {count} memor{} describe{}\n",
        if count == 1 { "y" } else { "ies" },
        if count == 1 { "s" } else { "" }
    ));
    for memory in review.cited.iter().take(TEXT_CHANGES) {
        out.push_str(&format!("  {}  {}\n    ", memory.id, memory.kind));
        out.push_str(&indented(&memory.content));
        for cite in &memory.cites {
            let now = match cite.lines {
                Some((start, end)) => format!(", now lines {start}-{end}"),
                None => String::new(),
            };
            out.push_str(&format!(
                "    {}:{}-{}: {}{now}\n",
                cite.path, cite.cited.0, cite.cited.1, cite.verdict
            ));
        }
        match &memory.handled {
            Some(handled) => out.push_str(&format!("    {handled} in this change\n")),
            None => out.push_str(&format!(
                "    still true? `goldfish store --supersedes {} …` says what holds now; `goldfish forget {}` if nothing does\n",
                memory.id, memory.id
            )),
        }
    }
    if count > TEXT_CHANGES {
        out.push_str(&format!(
            "  … {} more: `goldfish review --json` lists every one\n",
            count - TEXT_CHANGES
        ));
    }
    out
}

/// The summary line: how many changes, and how many stop the review.
fn summary_text(review: &Review) -> String {
    let mut out = String::new();
    out.push('\n');
    let total = review.total();
    if total == 0 {
        out.push_str("no memory changes\n");
    } else if review.stopping == 0 {
        out.push_str(&format!(
            "{total} change{}; none would be quarantined\n",
            if total == 1 { "" } else { "s" }
        ));
    } else {
        out.push_str(&format!(
            "{total} change{}; {} would enter quarantine or rewrite the log: check {} before it spreads\n",
            if total == 1 { "" } else { "s" },
            review.stopping,
            if review.stopping == 1 { "it" } else { "them" }
        ));
    }
    out
}

pub(super) fn reasons_text(reasons: &[String]) -> String {
    reasons
        .iter()
        .map(|reason| match reason_text(reason) {
            "" => reason.clone(),
            text => format!("{reason} ({text})"),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// What a reason means, for people: the index's words, and review's own.
pub(super) fn reason_text(reason: &str) -> &'static str {
    match reason {
        EDITED_IN_PLACE => {
            "a line BASE has, rewritten: memory lines are append-only, `store`, `forget` and `trust` never rewrite one"
        }
        DELETED_IN_PLACE => {
            "a line BASE has, removed: memories are forgotten with a tombstone (`goldfish forget`), never deleted"
        }
        UNATTRIBUTED => "no commit of the range made this line: it comes back from older history",
        BINARY_LINE => {
            "bytes that are not text (a NUL, or not UTF-8): readers skip the line, no memory is binary, and what it holds cannot be reviewed"
        }
        other => trust_reason_text(other),
    }
}

/// One change as text: a header line, the content, the verdict.
pub(super) fn change_text(change: &Change) -> String {
    let mut text = format!(
        "{:<10} {}:{}",
        change.change.name(),
        change.file,
        change.line
    );
    if let Some(id) = &change.id {
        text.push_str(&format!("  {id}"));
    }
    if let Some(kind) = &change.kind {
        text.push_str(&format!("  {kind}"));
    }
    match &change.introduced {
        Some(commit) => {
            text.push_str(&format!(
                "  by {}  commit {}, signature {}",
                commit.author,
                short(&commit.commit),
                commit.signature
            ));
            if !commit.signer.is_empty() {
                text.push_str(&format!(" by {}", commit.signer));
            }
        }
        None => text.push_str("  (no commit of the range made it)"),
    }
    if let Some(author) = &change.author {
        text.push_str(&format!("  author field: {author}"));
    }
    if !change.flags.is_empty() {
        text.push_str(&format!("  (flagged: {})", change.flags.join(", ")));
    }
    text.push('\n');
    if let Some(was) = &change.was {
        text.push_str(&format!("    was ({}:{}): ", was.file, was.line));
        text.push_str(&indented(&was.content));
    }
    if let Some(content) = &change.content {
        if change.was.is_some() {
            text.push_str("    now: ");
        } else {
            text.push_str("    ");
        }
        text.push_str(&indented(content));
    }
    if let Some(note) = &change.note {
        text.push_str(&format!("    {note}\n"));
    }
    match (change.stops, change.trust) {
        (true, _) => text.push_str(&format!(
            "    {}: {}\n",
            if change.trust == Some(Trust::Untrusted) {
                "WOULD BE QUARANTINED"
            } else {
                "STOPS"
            },
            reasons_text(&change.trust_reasons)
        )),
        (false, Some(Trust::Trusted)) => text.push_str(&format!(
            "    trusted: {}\n",
            change.trust_reasons.join(", ")
        )),
        _ => {}
    }
    text
}

/// `text` on lines after the first indented by four spaces, ending in a
/// newline.
pub(super) fn indented(text: &str) -> String {
    let mut out = text.lines().collect::<Vec<_>>().join("\n        ");
    out.push('\n');
    out
}
