//! The viewer's pages. maud escapes every string it is handed; every
//! string that came with a memory (its text, type, tags, paths, branch,
//! authors) goes through the terminal escape first ([`safe`], [`label`]),
//! so a bidi override or a control character shows as `\u202e` instead of
//! acting. Nothing a memory holds becomes a link, an attribute name or a
//! script: links are built from ids the viewer checks.

use axum::response::Html;
use maud::{DOCTYPE, Markup, html};

use super::queries::{Filters, percent};
use super::{Action, Done, Queue, Shown};
use crate::app::Notice;
use crate::app::render::{cite_note, excerpt, stale_note, terminal_safe};
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

fn page(title: &str, notices: &[Notice], body: Markup) -> Html<String> {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · goldfish" }
                link rel="stylesheet" href="/style.css";
            }
            body {
                header {
                    nav {
                        a href="/" accesskey="t" { "Timeline" }
                        a href="/review" accesskey="r" { "Review queue" }
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
    page("Timeline", notices, body)
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

pub fn memory(shown: &Shown, notices: &[Notice]) -> Html<String> {
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
            @if m.trust == Trust::Untrusted {
                " " a.button href=(action_href(&m.id, Action::Trust)) { "Trust…" }
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
    };
    page(&excerpt(&m.content, 60), notices, body)
}

pub fn confirm(
    memory: &IndexedMemory,
    action: Action,
    form_key: &str,
    notices: &[Notice],
) -> Html<String> {
    let what = match action {
        Action::Forget => {
            "Forget this memory? A tombstone line is appended to the log; history is not rewritten, and a `git revert` of its commit brings the memory back."
        }
        Action::Trust => {
            "Release this quarantined memory? A trust line is appended to the log; it counts for the team once committed by someone inside the trust policy."
        }
    };
    let body = html! {
        h1 { (if action == Action::Forget { "Forget" } else { "Trust" }) }
        div.summary { (row(memory)) }
        p { (what) }
        p { "The same as " code.command { (action.command(&safe(&memory.id))) } }
        form method="post" action=(action_href(&memory.id, action)) {
            input type="hidden" name="key" value=(form_key);
            button type="submit" autofocus { (if action == Action::Forget { "Forget it" } else { "Trust it" }) }
            " " a href=(memory_href(&memory.id)) { "cancel" }
        }
    };
    page(action.name(), notices, body)
}

pub fn done(action: Action, done: &Done, notices: &[Notice]) -> Html<String> {
    let body = match done {
        Done::Appended { target, line } => html! {
            h1 { (if action == Action::Forget { "Forgotten" } else { "Released" }) }
            p.done { (if action == Action::Forget { "forgot " } else { "released " }) code { (safe(target)) } }
            p { "Appended to the log:" }
            pre.line { (safe(line)) }
            p { "The same as " code.command { (action.command(&safe(target))) } "; commit " code { ".goldfish/memories" } " to share it." }
            p { a href="/review" { "back to the review queue" } " · " a href="/" { "timeline" } }
        },
        Done::Nothing(why) => html! {
            h1 { "Nothing to do" }
            p.done { (safe(why)) }
            p { a href="/review" { "back to the review queue" } }
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
        (queue_section("Captured, not committed", "captured", "memories an agent's tool use made in this clone: commit .goldfish/memories to keep them for the team, or forget them", &queue.captured.iter().map(|memory| (memory, None)).collect::<Vec<_>>()))
        (queue_section("Quarantined", "quarantined", "kept from agents: outside the trust policy, a forged author, or text that reads as an order", &quarantined))
        (queue_section("Stale", "stale", "what they are about changed or went away since", &stale))
        section id="tidy" {
            h2 { "Tidy's proposals" }
            p.why { "what `goldfish tidy` would forget: superseded memories, checkpoints a later one covers, near-duplicates, stale ones; " a href="/review/tidy" { "weigh every memory" } }
        }
    };
    page("Review queue", notices, body)
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
