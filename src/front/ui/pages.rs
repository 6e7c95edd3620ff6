//! The viewer's pages. maud escapes every string it is handed; every
//! string that came with a memory (its text, type, tags, paths, branch,
//! authors) goes through the terminal escape first ([`safe`], [`label`]),
//! so a bidi override or a control character shows as `\u202e` instead of
//! acting. Nothing a memory holds becomes a link, an attribute name or a
//! script: links are built from ids the viewer checks.

use axum::response::Html;
use maud::{DOCTYPE, Markup, html};

use super::queries::{Filters, percent};
use super::{Action, Done, Near, Queue, Shown};
use crate::app::Notice;
use crate::app::keep::Keeping;
use crate::app::render::{cite_note, excerpt, stale_note, terminal_safe};
use crate::app::review::Review;
use crate::domain::memory::label::{self, LABEL_CHARS, PATH_CHARS};
use crate::domain::recall::Captured;
use crate::domain::recalled::{IndexedMemory, Trust, trust_reason_text};

/// What the timeline lists.
pub enum Listed {
    Memories(Vec<IndexedMemory>),
    Nothing,
    NothingRelevant(String),
}

/// A memory's text (or any long string of it), escaped for the eye.
fn safe(text: &str) -> String {
    terminal_safe(text).into_owned()
}

/// A short string beside a memory: bounded, escaped, withheld when it
/// reads as an order.
fn label(text: &str) -> String {
    label::shown(text, LABEL_CHARS)
}

fn memory_href(id: &str) -> String {
    format!("/memory/{}", percent(id))
}

fn action_href(id: &str, action: Action) -> String {
    format!("/memory/{}/{}", percent(id), action.name())
}

/// Seconds after which a page that follows the index loads again.
pub const REFRESH: u32 = 10;

fn page(title: &str, notices: &[Notice], body: Markup) -> Html<String> {
    page_following(title, notices, false, body)
}

/// A page; one that `follows` loads again every [`REFRESH`] seconds (a
/// `<meta http-equiv="refresh">`: no script), so it shows what a pull or
/// another process's store brought. Only pages where nothing is typed
/// follow.
fn page_following(title: &str, notices: &[Notice], follows: bool, body: Markup) -> Html<String> {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                @if follows { meta http-equiv="refresh" content=(REFRESH); }
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · goldfish" }
                link rel="stylesheet" href="/style.css";
            }
            body {
                header {
                    nav {
                        a href="/" accesskey="t" { "Timeline" }
                        a href="/review" accesskey="r" { "Review queue" }
                        a href="/review/branch" accesskey="b" { "Branch review" }
                    }
                }
                main {
                    @if !notices.is_empty() {
                        ul.notices {
                            @for notice in notices {
                                li { (safe(&notice.to_string())) }
                            }
                        }
                    }
                    (body)
                }
            }
        }
    };
    Html(markup.into_string())
}

/// Who a memory is by: its commit's author, else its `author` field (not
/// committed yet).
fn author_of(memory: &IndexedMemory) -> String {
    match (&memory.introduced, &memory.author) {
        (Some(provenance), _) => label::identity(&provenance.author),
        (None, Some(author)) => format!("{} (not committed)", label(author)),
        (None, None) => "not committed".to_owned(),
    }
}

fn is_captured(memory: &IndexedMemory) -> bool {
    memory
        .source
        .as_deref()
        .is_some_and(|source| source.starts_with(Captured::SOURCE_PREFIX))
}

/// The marks of a memory in a list: quarantined, stale, captured, not
/// committed, superseded, and its flags.
fn badges(memory: &IndexedMemory) -> Markup {
    html! {
        @if memory.trust == Trust::Untrusted { span.badge.quarantined { "quarantined" } }
        @if memory.stale.is_some() { span.badge.stale { "stale" } }
        @if is_captured(memory) { span.badge { "captured" } }
        @if memory.introduced.is_none() { span.badge { "not committed" } }
        @if memory.superseded_by.is_some() { span.badge { "superseded" } }
        @for flag in &memory.flags { span.badge.flag { (label(flag)) } }
    }
}

fn row(memory: &IndexedMemory) -> Markup {
    html! {
        a.title href=(memory_href(&memory.id)) {
            (excerpt(&memory.content, 140))
        }
        div.meta {
            span.date { (safe(memory.timestamp.get(..16).unwrap_or(&memory.timestamp))) }
            " · "
            span.kind { (label(&memory.kind)) }
            " · "
            span.author { (author_of(memory)) }
            " "
            (badges(memory))
        }
    }
}

pub fn timeline(filters: &Filters, listed: &Listed, notices: &[Notice]) -> Html<String> {
    let selected = |value: &str, option: &str| value == option;
    let body = html! {
        h1 { "Timeline" }
        form.filters method="get" action="/" role="search" {
            input type="search" name="q" value=(filters.q) placeholder="search as recall does" aria-label="search" accesskey="s";
            label { "type " input type="text" name="type" value=(filters.kind) size="10"; }
            label { "author " input type="text" name="author" value=(filters.author) size="12"; }
            label { "since " input type="text" name="since" value=(filters.since) size="8" placeholder="3d"; }
            label { "branch " input type="text" name="branch" value=(filters.branch) size="10"; }
            label { "made "
                select name="captured" {
                    option value="include" selected[selected(&filters.captured, "include")] { "captured or written" }
                    option value="only" selected[selected(&filters.captured, "only")] { "captured" }
                    option value="exclude" selected[selected(&filters.captured, "exclude")] { "written" }
                }
            }
            label { "trust "
                select name="verdict" {
                    option value="trusted" selected[selected(&filters.verdict, "trusted")] { "trusted" }
                    option value="all" selected[selected(&filters.verdict, "all")] { "all" }
                    option value="quarantined" selected[selected(&filters.verdict, "quarantined")] { "quarantined" }
                }
            }
            label { input type="checkbox" name="stale" value="on" checked[filters.stale == "on"]; " stale only" }
            button type="submit" { "Filter" }
            @if filters.any() { " " a href="/" { "clear" } }
        }
        p.live {
            @if filters.live == "on" {
                "following: this page loads again every " (REFRESH) " s · "
                a href={ "/?" (filters.query_after(None)) } { "stop following (to type a filter)" }
            } @else {
                a href={ "/?" (filters.query_following()) } { "follow" } " (load again every " (REFRESH) " s)"
            }
        }
        @match listed {
            Listed::Nothing => p.empty { "no memories match" },
            Listed::NothingRelevant(reason) => p.empty { "nothing relevant: " (safe(reason)) },
            Listed::Memories(hits) => {
                ol.memories {
                    @for memory in hits {
                        li { (row(memory)) }
                    }
                }
                @if filters.q.trim().is_empty() && hits.len() == super::PAGE {
                    @if let Some(last) = hits.last() {
                        p.more {
                            a rel="next" href={ "/?" (filters.query_after(Some((&last.timestamp, &last.id)))) } { "older →" }
                        }
                    }
                }
            }
        }
    };
    page_following("Timeline", notices, filters.live == "on", body)
}

/// A `dt`/`dd` pair when there is something to show.
fn field(name: &str, value: Option<String>) -> Markup {
    html! {
        @if let Some(value) = value {
            dt { (name) }
            dd { (value) }
        }
    }
}

fn chain_list(title: &str, memories: &[IndexedMemory]) -> Markup {
    html! {
        @if !memories.is_empty() {
            h3 { (title) }
            ol.chain {
                @for memory in memories { li { (row(memory)) } }
            }
        }
    }
}

/// Whether the memory is one capture made that is not committed yet:
/// keeping it commits its file.
fn keepable(memory: &IndexedMemory) -> bool {
    is_captured(memory) && memory.introduced.is_none()
}

pub fn memory(shown: &Shown, near: &Near<Vec<IndexedMemory>>, notices: &[Notice]) -> Html<String> {
    let m = &shown.memory;
    let joined = |items: &[String], max: usize| {
        (!items.is_empty()).then(|| {
            items
                .iter()
                .map(|item| label::shown(item, max))
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    let body = html! {
        h1 { (label(&m.kind)) " · " (safe(m.timestamp.get(..10).unwrap_or(&m.timestamp))) }
        p.meta { (badges(m)) }
        pre.content { (safe(&m.content)) }
        section.actions {
            a.button href=(action_href(&m.id, Action::Forget)) { "Forget…" }
            " " a.button href=(action_href(&m.id, Action::Supersede)) { "Supersede…" }
            @if m.trust == Trust::Untrusted {
                " " a.button href=(action_href(&m.id, Action::Trust)) { "Trust…" }
            }
            @if keepable(m) {
                " " a.button href=(action_href(&m.id, Action::Keep)) { "Keep…" }
            }
        }
        h2 { "The memory" }
        dl {
            (field("id", Some(safe(&m.id))))
            (field("time", Some(safe(&m.timestamp))))
            (field("type", Some(label(&m.kind))))
            (field("tags", joined(&m.tags, LABEL_CHARS)))
            (field("files", joined(&m.files, PATH_CHARS)))
            (field("branch", m.branch.as_deref().map(label)))
            (field("source", m.source.as_deref().map(label)))
            (field("author field", m.author.as_deref().map(label)))
            (field("log", Some(format!("{}:{}", label::shown(&m.file, PATH_CHARS), m.line))))
            (field("workspace", Some(label(&m.workspace))))
            (field("agent session", m.session.as_deref().map(label)))
        }
        h2 { "Provenance" }
        @match &m.introduced {
            Some(p) => dl {
                (field("commit", Some(safe(&p.commit))))
                (field("author", Some(label::identity(&p.author))))
                (field("date", Some(safe(&p.date))))
                (field("committer", Some(label::identity(&p.committer))))
                (field("signature", Some(safe(&p.signature))))
                (field("signer", (!p.signer.is_empty()).then(|| label(&p.signer))))
            },
            None => p { "not committed yet: the local user's own" },
        }
        h2 { "Trust: " span.verdict { (if m.trust == Trust::Untrusted { "quarantined" } else { "trusted" }) } }
        ul.reasons {
            @for reason in &m.trust_reasons {
                li { code { (label(reason)) } " " (trust_reason_text(reason)) }
            }
        }
        @if !m.flags.is_empty() {
            h3 { "Flags" }
            ul { @for flag in &m.flags { li { code { (label(flag)) } } } }
        }
        h2 { "Staleness" }
        @match &m.stale {
            Some(stale) => p.stale { "stale (" (label(&stale.reason)) "): " (safe(&stale_note(stale))) },
            None => p { "live: nothing in history since makes it stale" },
        }
        @if !m.moved.is_empty() {
            ul { @for moved in &m.moved {
                li { (label::shown(&moved.file, PATH_CHARS)) " is now " (label::shown(&moved.now, PATH_CHARS)) }
            } }
        }
        @if !m.cites.is_empty() {
            h2 { "Citations" }
            ul.cites { @for cite in &m.cites { li { (safe(&cite_note(cite))) } } }
        }
        @if m.supersedes.is_some() || m.superseded_by.is_some() {
            h2 { "Supersession" }
            (chain_list("It replaces", &shown.older))
            (chain_list("Replaced by", &shown.newer))
            @if let Some(by) = &m.superseded_by {
                p { "Superseded by " a href=(memory_href(by)) { (safe(by)) } }
            }
        }
        @if let Some(newer) = &m.newer_than {
            p { "Probably updates " a href=(memory_href(&newer.id)) { (safe(&newer.id)) } }
        }
        section id="near" {
            h2 { "Near-duplicates" }
            @match near {
                Err(why) => p.empty { (safe(why)) },
                Ok(hits) if hits.is_empty() => p.empty { "none: no memory of this workspace says nearly the same (`goldfish similar " (safe(&m.id)) "`)" },
                Ok(hits) => ol.memories {
                    @for hit in hits {
                        li {
                            (row(hit))
                            div.reason { "similarity " (format!("{:.2}", hit.similarity.unwrap_or(hit.score))) }
                        }
                    }
                },
            }
        }
    };
    page_following(&excerpt(&m.content, 60), notices, true, body)
}

pub fn confirm(
    memory: &IndexedMemory,
    action: Action,
    keeping: Option<&Keeping>,
    form_key: &str,
    notices: &[Notice],
) -> Html<String> {
    let id = safe(&memory.id);
    let (title, what, button) = match action {
        Action::Forget => (
            "Forget",
            "Forget this memory? A tombstone line is appended to the log; history is not rewritten, and a `git revert` of its commit brings the memory back.",
            "Forget it",
        ),
        Action::Trust => (
            "Trust",
            "Release this quarantined memory? A trust line is appended to the log; it counts for the team once committed by someone inside the trust policy.",
            "Trust it",
        ),
        Action::Supersede => (
            "Supersede",
            "Replace this memory with a new one? The new memory is appended to the log with `supersedes` naming this one, which then leaves the briefing and default recall; nothing is rewritten, and forgetting the new one brings this one back.",
            "Store the replacement",
        ),
        Action::Keep => (
            "Keep",
            "Keep this captured memory for the team? Its log file is committed as it is in your work tree (a new commit of that file alone; what else is staged stays staged); nothing is rewritten.",
            "Commit it",
        ),
    };
    let tags = memory.tags.join(",");
    let files = memory.files.join(",");
    let body = html! {
        h1 { (title) }
        div.summary { (row(memory)) }
        p { (what) }
        form method="post" action=(action_href(&memory.id, action)) {
            input type="hidden" name="key" value=(form_key);
            @match action {
                Action::Supersede => {
                    label.wide { "The new memory" textarea name="text" rows="6" required autofocus { (safe(&memory.content)) } }
                    label { "type " input type="text" name="type" value=(safe(&memory.kind)) size="12" required; }
                    label { "tags " input type="text" name="tags" value=(safe(&tags)) size="20"; }
                    label { "files " input type="text" name="files" value=(safe(&files)) size="24"; }
                    p { "The same as " code.command { "goldfish store -t TYPE --tags TAGS --files FILES --supersedes " (id) " 'TEXT'" } }
                    button type="submit" { (button) }
                }
                Action::Keep => {
                    @if let Some(keeping) = keeping {
                        p { "It commits " code { (label::shown(&keeping.path, PATH_CHARS)) } @if keeping.others.is_empty() && keeping.unreadable == 0 {
                            ", whose only line not committed yet is this memory."
                        } @else {
                            ", with the other lines of it not committed yet:"
                        } }
                        @if !keeping.others.is_empty() || keeping.unreadable > 0 {
                            ul.others {
                                @for other in &keeping.others { li { a href=(memory_href(other)) { (safe(other)) } } }
                                @if keeping.unreadable > 0 { li { (keeping.unreadable) " line(s) that are not records" } }
                            }
                        }
                        p { "The same as " code.command { (safe(&keeping.command())) } }
                    }
                    button type="submit" autofocus { (button) }
                }
                _ => {
                    p { "The same as " code.command { "goldfish " (action.name()) " " (id) } }
                    button type="submit" autofocus { (button) }
                }
            }
            " " a href=(memory_href(&memory.id)) { "cancel" }
        }
    };
    page(action.name(), notices, body)
}

pub fn done(action: Action, done: &Done, notices: &[Notice]) -> Html<String> {
    let (title, verb) = match action {
        Action::Forget => ("Forgotten", "forgot "),
        Action::Trust => ("Released", "released "),
        Action::Supersede => ("Superseded", "stored "),
        Action::Keep => ("Kept", "committed "),
    };
    let back = html! {
        p { a href="/review" { "back to the review queue" } " · " a href="/" { "timeline" } }
    };
    let body = match done {
        Done::Appended {
            target,
            line,
            command,
        } => html! {
            h1 { (title) }
            p.done { (verb) a href=(memory_href(target)) { code { (safe(target)) } } }
            p { "Appended to the log:" }
            pre.line { (safe(line)) }
            p { "The same as " code.command { (safe(command)) } "; commit " code { ".goldfish/memories" } " to share it." }
            (back)
        },
        Done::Committed {
            kept,
            commit,
            command,
        } => html! {
            h1 { (title) }
            p.done { (verb) code { (label::shown(&kept.path, PATH_CHARS)) } " in " code.commit { (safe(commit)) } }
            p { "The same as " code.command { (safe(command)) } "; push it to share it." }
            (back)
        },
        Done::Nothing(why) => html! {
            h1 { "Nothing to do" }
            p.done { (safe(why)) }
            (back)
        },
    };
    page(action.name(), notices, body)
}

fn queue_section(
    title: &str,
    id: &str,
    why: &str,
    memories: &[(&IndexedMemory, Option<String>)],
) -> Markup {
    html! {
        section id=(id) {
            h2 { (title) " " span.count { "(" (memories.len()) ")" } }
            p.why { (why) }
            @if memories.is_empty() {
                p.empty { "nothing" }
            } @else {
                ol.memories {
                    @for (memory, reason) in memories {
                        li {
                            (row(memory))
                            @if let Some(reason) = reason { div.reason { (safe(reason)) } }
                            div.actions {
                                a href=(action_href(&memory.id, Action::Forget)) { "forget…" }
                                @if memory.trust == Trust::Untrusted {
                                    " " a href=(action_href(&memory.id, Action::Trust)) { "trust…" }
                                }
                                @if keepable(memory) {
                                    " " a href=(action_href(&memory.id, Action::Keep)) { "keep…" }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

pub fn review(queue: &Queue, notices: &[Notice]) -> Html<String> {
    let quarantined: Vec<_> = queue
        .quarantined
        .iter()
        .map(|memory| (memory, Some(crate::app::render::untrusted_note(memory))))
        .collect();
    let stale: Vec<_> = queue
        .stale
        .iter()
        .map(|memory| (memory, memory.stale.as_ref().map(stale_note)))
        .collect();
    let body = html! {
        h1 { "Review queue" }
        p.live { "this page loads again every " (REFRESH) " s" }
        (queue_section("Captured, not committed", "captured", "memories an agent's tool use made in this clone: keep them (a commit of their log file) for the team, or forget them", &queue.captured.iter().map(|memory| (memory, None)).collect::<Vec<_>>()))
        (queue_section("Quarantined", "quarantined", "kept from agents: outside the trust policy, a forged author, or text that reads as an order", &quarantined))
        (queue_section("Stale", "stale", "what they are about changed or went away since", &stale))
        section id="tidy" {
            h2 { "Tidy's proposals" }
            p.why { "what `goldfish tidy` would forget: superseded memories, checkpoints a later one covers, near-duplicates, stale ones; " a href="/review/tidy" { "weigh every memory" } }
        }
        section id="similar" {
            h2 { "Near-duplicate clusters" }
            p.why { "memories that say nearly the same, as `goldfish similar --scan` groups them (with the embedding model); " a href="/review/similar" { "compare every memory" } }
        }
        section id="branch" {
            h2 { "A branch or pull request" }
            p.why { "what `goldfish review` says of a branch's memory changes before they spread; " a href="/review/branch" { "choose a branch" } }
        }
    };
    page_following("Review queue", notices, true, body)
}

pub fn proposals(proposals: &[crate::app::tidy::Proposal], notices: &[Notice]) -> Html<String> {
    let listed: Vec<_> = proposals
        .iter()
        .map(|proposal| (&proposal.memory, Some(proposal.why.explain())))
        .collect();
    let body = html! {
        h1 { "Tidy's proposals" }
        (queue_section("What tidy would forget", "tidy", "the same as `goldfish tidy` (checkpoints older than 30 days)", &listed))
        p { a href="/review" { "back to the review queue" } }
    };
    page("Tidy's proposals", notices, body)
}

pub fn clusters(clusters: &Near<Vec<Vec<IndexedMemory>>>, notices: &[Notice]) -> Html<String> {
    let body = html! {
        h1 { "Near-duplicate clusters" }
        p.why { "the same as " code.command { "goldfish similar --scan" } " (similarity " (crate::app::show::SIMILAR) " or more): forget what another memory says already, or supersede it" }
        @match clusters {
            Err(why) => p.empty { (safe(why)) },
            Ok(clusters) if clusters.is_empty() => p.empty { "none: no two memories say nearly the same" },
            Ok(clusters) => {
                @for (n, cluster) in clusters.iter().enumerate() {
                    section.cluster {
                        h2 { "Cluster " (n + 1) " " span.count { "(" (cluster.len()) ")" } }
                        ol.memories {
                            @for memory in cluster {
                                li {
                                    (row(memory))
                                    div.actions {
                                        a href=(action_href(&memory.id, Action::Forget)) { "forget…" }
                                        " " a href=(action_href(&memory.id, Action::Supersede)) { "supersede…" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        p { a href="/review" { "back to the review queue" } }
    };
    page("Near-duplicate clusters", notices, body)
}

/// The branch review page: the repository's branches, and the review of
/// the one chosen (or why there is none).
pub fn branches(
    names: &[String],
    reviewed: Option<&(String, Result<Review, String>)>,
    notices: &[Notice],
) -> Html<String> {
    let body = html! {
        h1 { "Branch review" }
        p.why { "what " code { "goldfish review" } " says of a branch's memory changes, as a pull request of it would bring them: each line added, forgotten, released, edited or deleted, the commit that made it, and the verdict agents would get under the base's trust policy" }
        @if names.is_empty() {
            p.empty { "this repository has no branch" }
        } @else {
            ul.branches {
                @for name in names {
                    li { a href={ "/review/branch?name=" (percent(name)) } { (label::shown(name, LABEL_CHARS)) } }
                }
            }
        }
        @if let Some((name, review)) = reviewed {
            section id="review" {
                h2 { "Review of " span.branch { (label::shown(name, LABEL_CHARS)) } }
                @match review {
                    Err(why) => p.error { (safe(why)) },
                    Ok(review) => {
                        p.verdict { @if review.stopping > 0 {
                            span.badge.quarantined { "stops" } " " (review.stopping) " change(s) would enter quarantine or rewrite the log"
                        } @else {
                            span.badge { "passes" } " nothing would be quarantined"
                        } }
                        p { "The same as " code.command { (safe(&format!("goldfish review {} {}", crate::app::keep::shell_quoted(&review.base), crate::app::keep::shell_quoted(name)))) } }
                        pre.review { (safe(&crate::app::review::text(review))) }
                    }
                }
            }
        }
    };
    page("Branch review", notices, body)
}

pub fn refused(text: &str) -> Html<String> {
    page(
        "refused",
        &[],
        html! { h1 { "Refused" } p.refused { (text) } },
    )
}

pub fn failed(text: &str) -> Html<String> {
    page(
        "error",
        &[],
        html! { h1 { "Error" } p.error { (safe(text)) } },
    )
}
