//! `store`: a memory checked (content, types, secrets, near-duplicates,
//! the older memories it replaces), appended to the log, then indexed and
//! embedded. It never prints: notes and warnings are left on the
//! [`Session`] for the front end to show, and errors name the argument at
//! fault as an [`Arg`].

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::session::{ModelState, Need, Session};
use super::sync::{
    READ_EMBED_LIMIT, READ_EMBEDS, embed_pending, lags, repo_config, scope_of, sync_after_store,
};
use super::{AppError, Arg, Hint, render};
use crate::adapters::git::Workspace;
use crate::adapters::memdir::{Appended, MemoryDir};
use crate::domain::citation;
use crate::domain::memory::view::Lookup;
use crate::domain::memory::{self, Entry, Memory, label, trust, verdict};
use crate::domain::recall::Request;
use crate::domain::recalled::IndexedMemory;
use crate::domain::supersede;

pub struct StoreInput {
    pub content: Vec<u8>,
    pub kind: String,
    pub tags: Vec<String>,
    pub files: Vec<String>,
    pub source: Option<String>,
    pub allow_secret: bool,
    /// Refuse, before writing, a text this similar to a memory the
    /// workspace has (a person at a terminal, an agent): `--force` not given.
    pub refuse_similar: bool,
    /// The agent session it comes from (capture), recorded with it (the
    /// record's `session`).
    pub agent_session: Option<String>,
    /// The content's vector, when the caller computed it already (capture's
    /// own near-duplicate check): the index takes it as it is.
    pub vector: Option<ContentVector>,
    /// The live memory of this repository (an id or a unique prefix) the
    /// new one replaces (`--supersedes`, MCP `supersedes`).
    pub supersedes: Option<String>,
    /// Whether to look for older memories the new one probably replaces
    /// when `supersedes` names none, and what to do with them.
    pub replaced: FindReplaced,
}

/// Whether and when `store` looks for the older memories a new one
/// probably replaces (`domain::supersede`; never when it declares one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FindReplaced {
    /// Not at all (capture looks itself, before it stores).
    #[default]
    Skip,
    /// After the write, for [`Stored::replaceable`]: a script is never
    /// stopped nor asked.
    Report,
    /// Before the write, refusing the store when some are found (MCP: the
    /// agent decides and calls again with `supersedes`, or `force`).
    Refuse,
    /// Before the write, asking [`store_asking`]'s `ask` about each, best
    /// first; the first it confirms is recorded as `supersedes` (one a
    /// memory: the log's field holds one id).
    Ask,
}

/// An older memory the new one probably replaces, and why.
#[derive(Debug, Clone)]
pub struct Replaceable {
    pub memory: IndexedMemory,
    pub why: supersede::Candidate,
}

/// A text's vector under a model: computed once per store, for the
/// near-duplicate check and for the index.
#[derive(Debug, Clone)]
pub struct ContentVector {
    pub model: String,
    pub vector: Vec<f32>,
}

/// A stored memory.
pub struct Stored {
    pub entry: Entry,
    /// The log file it went to, relative to the repository root.
    pub file: PathBuf,
    /// Why it waits in the journal instead (git was busy), when it does.
    pub journaled: Option<String>,
    /// Memories the workspace already has that say nearly the same.
    pub similar: Vec<IndexedMemory>,
    /// Older memories it probably replaces (with [`FindReplaced`] other
    /// than `Skip`): the one it supersedes when it was asked and confirmed
    /// (see the entry's `supersedes`), and those it does not.
    pub replaceable: Vec<Replaceable>,
    /// Why it is not indexed yet (the next sync catches up).
    pub not_indexed: Option<String>,
    /// Why agents will receive it only marked, when they will
    /// ([`foreseen_quarantine`]): stored all the same, the user's memory
    /// is never lost, but said at once.
    pub quarantine: Option<Quarantine>,
}

/// Why a memory just stored is or will be quarantined: the verdict sync
/// gives it ([`verdict::quarantine`]), for its text now and for the commit
/// that will bring it to the team.
#[derive(Debug, Clone)]
pub struct Quarantine {
    /// The reasons, as `trust_reasons` spells them (`instruction-like`,
    /// `author-outside-policy`, `unsigned`, …).
    pub reasons: Vec<&'static str>,
    /// Whether the memory is quarantined already in this clone (its text
    /// reads as an order); otherwise only once committed.
    pub now: bool,
    /// Who the commit will be by, as git will write it (`Name <email>`,
    /// each bounded and escaped: [`label::shown`]).
    pub committed_as: String,
    /// What the detector found, when the text reads as an order (the
    /// field, the rule and an excerpt).
    pub finding: Option<String>,
}

/// Similarity from which a new memory counts as a near-duplicate: `store`
/// refuses it (at a terminal, over MCP) or warns. Chosen on the default
/// (int8) model as the lowest cosine as precise as fp32's 0.85 was on
/// public labelled pairs (`scripts/eval/thresholds_public.py`'s tuning
/// half; docs/BENCHMARKS.md, "Thresholds on public pairs"). No pair of
/// `fixtures/similar/` that states another fact reaches it, and it finds
/// the closest of the paraphrases (`tests/it/similarity.rs`).
pub const DUPLICATE: f64 = 0.87;

/// Appends a memory to the log, then indexes and embeds it.
/// Compiles the rules of the checks every store runs (secrets, orders to
/// an agent) on another thread, while this one asks git and opens the
/// index; the checks wait for it when they come first.
pub fn prepare_checks() {
    // Best effort: without the thread the first check compiles them.
    let _ = std::thread::Builder::new()
        .name("prepare-checks".to_owned())
        .spawn(trust::prepare);
}

pub fn store(
    session: &mut Session,
    workspace: &Workspace,
    input: StoreInput,
) -> Result<Stored, AppError> {
    store_asking(session, workspace, input, &mut |_| false)
}

/// [`store`], with `ask` deciding (under [`FindReplaced::Ask`]) whether the
/// new memory replaces each older one found, before the write.
pub fn store_asking(
    session: &mut Session,
    workspace: &Workspace,
    input: StoreInput,
    ask: &mut dyn FnMut(&Replaceable) -> bool,
) -> Result<Stored, AppError> {
    let fields = checked_fields(session, workspace, &input)?;
    let supersedes = match input.supersedes.as_deref() {
        Some(id) => Some(superseded(workspace, id.trim())?),
        None => None,
    };
    let replaced = if supersedes.is_some() {
        FindReplaced::Skip
    } else {
        input.replaced
    };
    let (vector, before, mut replaceable) = look_before_write(
        session,
        workspace,
        &fields,
        input.vector,
        input.refuse_similar,
        replaced,
        supersedes.as_ref(),
    )?;
    let supersedes = settle_replaced(replaced, &replaceable, supersedes, ask)?;
    let entry = new_entry(
        session,
        workspace,
        fields,
        input.source,
        input.agent_session,
        supersedes,
    )?;
    if !input.allow_secret {
        refuse_secret_fields(&entry)?;
    }
    let (file, journaled) = append_entry(workspace, &entry)?;
    // The memory is safely in the log; indexing it is best effort (the next
    // sync catches up), so a broken index or model never loses a store.
    let (similar, not_indexed) = match index_stored(session, workspace, &entry, vector, before) {
        Ok((similar, vector)) => {
            let similar = similar_after_write(
                session,
                workspace,
                &entry,
                similar,
                vector,
                replaced,
                &mut replaceable,
            );
            (similar, None)
        }
        Err(err) => (Vec::new(), Some(format!("{:#}", err.error))),
    };
    let quarantine = foreseen_quarantine(session, workspace, &entry, not_indexed.is_none());
    Ok(Stored {
        entry,
        file,
        journaled,
        similar,
        replaceable,
        not_indexed,
        quarantine,
    })
}

impl Quarantine {
    /// What to tell whoever stored memory `id`: why, what it means, what
    /// to do.
    pub fn message(&self, id: &str) -> String {
        use crate::domain::recalled::trust_reason_text;
        let explained = |reasons: &[&str]| {
            reasons
                .iter()
                .map(|reason| format!("{reason} ({})", trust_reason_text(reason)))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let committed: Vec<&str> = self
            .reasons
            .iter()
            .copied()
            .filter(|reason| *reason != verdict::INSTRUCTION_LIKE)
            .collect();
        let once_committed = if committed.is_empty() {
            String::new()
        } else {
            format!(
                "; once committed as {}, also {}",
                self.committed_as,
                explained(&committed)
            )
        };
        if self.now {
            format!(
                "stored {id}, but quarantined ({}): {}{once_committed}. Agents get it only marked and never in the briefing, and `goldfish review` stops the change that brings it; if it is a fact, `goldfish forget {id}` and store it again as one; if it is a false alarm, `goldfish trust {id}`",
                verdict::INSTRUCTION_LIKE,
                self.finding
                    .as_deref()
                    .unwrap_or("its text reads as an order to an agent"),
            )
        } else {
            format!(
                "stored {id}, but once committed as {} it will be quarantined for the team: {}. Agents will get it only marked and never in the briefing, and `goldfish review` stops the change that brings it; have someone inside the trust policy commit it, or have them add you to `[trust]` in .goldfish/config",
                self.committed_as,
                explained(&committed)
            )
        }
    }
}

/// Whether the memory just stored is quarantined, or will be once
/// committed, and why: the one verdict sync gives ([`verdict::quarantine`]),
/// weighing its text as [`trust::check`] reads it and the commit git would
/// make now (the author `GIT_AUTHOR_NAME`/`user.name` and
/// `GIT_AUTHOR_EMAIL`/`user.email`, signed when `commit.gpgsign` is on)
/// under the policy in effect (the index's, as its sync found it by
/// history; the config's when the index was not reached).
pub fn foreseen_quarantine(
    session: &mut Session,
    workspace: &Workspace,
    entry: &Entry,
    indexed: bool,
) -> Option<Quarantine> {
    let Entry::Memory(memory) = entry else {
        return None;
    };
    let now = session.now().ok()?;
    let finding = trust::check(memory, now, None)
        .into_iter()
        .find(|suspicion| matches!(suspicion, trust::Suspicion::InstructionLike { .. }))
        .map(|suspicion| suspicion.to_string());
    let claim = verdict::Claim {
        author: memory.author.as_deref(),
        imported: false,
        instruction_like: finding.is_some(),
    };
    let policy = policy_in_effect(session, workspace, indexed);
    let name = memory.author.clone().unwrap_or_default();
    let email = crate::adapters::env::git_author_email()
        .or_else(|| workspace.config_string("user.email"))
        .unwrap_or_default();
    let committed_as = format!("{name} <{email}>");
    let signs = workspace
        .config_string("commit.gpgsign")
        .is_some_and(|value| matches!(value.trim(), "true" | "yes" | "on" | "1"));
    let origin = verdict::Origin {
        author: &committed_as,
        author_name: &name,
        author_email: &email,
        signature: if signs { "good" } else { "unsigned" },
        signer: if signs { &email } else { "" },
        // The commit git would make now has its parent here.
        shallow: false,
    };
    let reasons = verdict::quarantine(&claim, Some(&origin), policy.as_ref());
    if reasons.is_empty() {
        return None;
    }
    Some(Quarantine {
        now: claim.instruction_like,
        reasons,
        committed_as: format!(
            "{} <{}>",
            label::shown(&name, label::NAME_CHARS),
            label::shown(&email, label::LABEL_CHARS)
        ),
        finding,
    })
}

/// The trust policy in effect for `workspace`: the one its last sync
/// stored (by the policy's history), or, when the index was not reached,
/// `.goldfish/config`'s.
fn policy_in_effect(
    session: &mut Session,
    workspace: &Workspace,
    indexed: bool,
) -> Option<crate::domain::config::TrustPolicy> {
    if indexed
        && let Ok(index) = session.index()
        && let Ok(Some(row)) = index.workspace_by_root(workspace.root())
        && let Ok(policy) = index.policy_in_effect(row.id)
    {
        return policy;
    }
    repo_config(session, workspace).ok()?.trust
}

/// What the memories the new one probably replaces decide before the
/// write: under [`FindReplaced::Refuse`] the store is refused when there
/// are some; under [`FindReplaced::Ask`] the first one `ask` confirms is
/// the one it supersedes. Returns what it supersedes.
fn settle_replaced(
    replaced: FindReplaced,
    replaceable: &[Replaceable],
    supersedes: Option<String>,
    ask: &mut dyn FnMut(&Replaceable) -> bool,
) -> Result<Option<String>, AppError> {
    match replaced {
        FindReplaced::Refuse if !replaceable.is_empty() => {
            let listed: Vec<String> = replaceable
                .iter()
                .map(|r| replaceable_line(r, 100))
                .collect();
            Err(AppError::input(anyhow::anyhow!(
                "not stored: it may replace {}",
                listed.join("; or ")
            ))
            .with_hint(Hint::Supersede))
        }
        FindReplaced::Ask => Ok(replaceable
            .iter()
            .find(|r| ask(r))
            .map(|r| r.memory.id.clone())),
        _ => Ok(supersedes),
    }
}

/// What the caller gave, checked: the content, tags, files (each cited
/// span's path among them) and type, and the spans' anchors.
struct Fields {
    content: String,
    tags: Vec<String>,
    files: Vec<String>,
    kind: String,
    cites: Vec<citation::Anchor>,
}

/// Checks the content, tags, files and source the caller gave, and
/// resolves the type against the repository's types.
fn checked_fields(
    session: &mut Session,
    workspace: &Workspace,
    input: &StoreInput,
) -> Result<Fields, AppError> {
    let content = memory::validate_content(&input.content, input.allow_secret)
        .map_err(|err| refusal(Arg::Content, err))?;
    let list = |items: &[String], limit: memory::ListLimit, arg: Arg| {
        let items = memory::split_list(&items.join(","));
        limit
            .check(&items)
            .map(|()| items)
            .map_err(|err| AppError::arg(arg, err))
    };
    let tags = list(&input.tags, memory::TAGS, Arg::Tags)?;
    let files = list(&input.files, memory::FILES, Arg::Files)?;
    let (files, cites) = cited(workspace, files)?;
    if let Some(source) = &input.source
        && source.trim().len() > memory::MAX_SOURCE_BYTES
    {
        return Err(AppError::arg(
            Arg::Source,
            format!(
                "{} bytes, at most {}: where a memory came from is a URL or a name",
                source.trim().len(),
                memory::MAX_SOURCE_BYTES
            ),
        ));
    }
    let config = repo_config(session, workspace)?;
    let kind = config
        .kinds
        .resolve(&input.kind)
        .map_err(|err| AppError::arg(Arg::Type, err))?
        .to_owned();
    Ok(Fields {
        content,
        tags,
        files,
        kind,
        cites,
    })
}

/// The files with each span (`path:40-52`) read as its path, and the
/// spans' anchors: each read from the working tree, where the person or
/// agent storing it looks at the code. A path that names a file as it is
/// (`notes:1` existing) stays a path.
fn cited(
    workspace: &Workspace,
    files: Vec<String>,
) -> Result<(Vec<String>, Vec<citation::Anchor>), AppError> {
    let mut paths: Vec<String> = Vec::new();
    let mut anchors = Vec::new();
    for file in files {
        let span = match citation::parse_span(&file) {
            Some(_) if workspace.root().join(&file).is_file() => None,
            Some(span) => Some(span.map_err(|err| AppError::arg(Arg::Files, err))?),
            None => None,
        };
        let Some(span) = span else {
            if !paths.contains(&file) {
                paths.push(file);
            }
            continue;
        };
        if anchors.len() == citation::MAX_CITES {
            return Err(AppError::arg(
                Arg::Files,
                format!(
                    "more than {} spans cited; cite the lines that matter",
                    citation::MAX_CITES
                ),
            ));
        }
        let text = read_cited(workspace, &span.path)
            .map_err(|why| AppError::arg(Arg::Files, format!("`{file}`: {why}")))?;
        let blob = crate::adapters::git::blob_id(text.as_bytes()).to_string();
        let anchor =
            citation::anchor(&span, &text, blob).map_err(|err| AppError::arg(Arg::Files, err))?;
        if !paths.contains(&span.path) {
            paths.push(span.path.clone());
        }
        anchors.push(anchor);
    }
    Ok((paths, anchors))
}

/// A cited file's text in the working tree: a regular file inside the
/// repository (a symbolic link is not followed out of it), UTF-8, within
/// [`citation::MAX_FILE_BYTES`].
pub(super) fn read_cited(workspace: &Workspace, path: &str) -> Result<String, String> {
    let root = workspace
        .root()
        .canonicalize()
        .map_err(|err| format!("the repository's folder: {err}"))?;
    let full = root.join(path);
    let real = full
        .canonicalize()
        .map_err(|err| format!("cannot read it: {err}"))?;
    let in_git = workspace
        .git_dir()
        .canonicalize()
        .is_ok_and(|git| real.starts_with(git));
    if !real.starts_with(&root) || in_git {
        return Err("it leads outside the repository".into());
    }
    let meta = std::fs::metadata(&real).map_err(|err| format!("cannot read it: {err}"))?;
    if !meta.is_file() {
        return Err("not a file".into());
    }
    if meta.len() > citation::MAX_FILE_BYTES as u64 {
        return Err(format!(
            "{} bytes; a cited file may have at most {}",
            meta.len(),
            citation::MAX_FILE_BYTES
        ));
    }
    let bytes = std::fs::read(&real).map_err(|err| format!("cannot read it: {err}"))?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".into())
}

/// What [`look_before_write`] returns: the content's vector, what the
/// search saw, and the memories the new one probably replaces.
type BeforeWrite = (Option<ContentVector>, Option<Before>, Vec<Replaceable>);

/// Before the write: the near-duplicates (refused when the caller asked),
/// and the older memories the new one probably replaces when those are
/// looked for before it. Returns the content's vector, what the search saw
/// and the replaceable ones.
fn look_before_write(
    session: &mut Session,
    workspace: &Workspace,
    fields: &Fields,
    mut vector: Option<ContentVector>,
    refuse_similar: bool,
    replaced: FindReplaced,
    supersedes: Option<&String>,
) -> Result<BeforeWrite, AppError> {
    let look_before = matches!(replaced, FindReplaced::Refuse | FindReplaced::Ask);
    let mut similar = Vec::new();
    let mut before = None;
    if (refuse_similar || look_before) && vector.is_none() {
        // Best effort: an index or model that fails here never stops a store.
        let computed;
        (similar, computed, before) =
            near_duplicates_seen(session, workspace, &fields.content).unwrap_or_default();
        vector = computed;
    }
    let spans: Vec<citation::Lines<'_>> = fields.cites.iter().map(|a| a.lines()).collect();
    let memo = supersede::Memo {
        kind: &fields.kind,
        content: &fields.content,
        files: &fields.files,
        spans: &spans,
    };
    let replaceable = match (&vector, look_before) {
        (Some(vector), true) => {
            replaceable_by(session, workspace, memo, vector, None).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    if refuse_similar {
        // The memory it replaces says nearly the same: that is the point.
        // So may one it probably replaces, asked about below.
        similar.retain(|m| {
            Some(&m.id) != supersedes
                && !replaceable.iter().any(|r| r.memory.id == m.id)
                && !about_other_code(m, &spans)
        });
        if !similar.is_empty() {
            let listed: Vec<String> = similar
                .iter()
                .map(|m| render::near_duplicate(m, 100))
                .collect();
            return Err(AppError::input(anyhow::anyhow!(
                "not stored: this is {}",
                listed.join("; and ")
            ))
            .with_hint(Hint::Force));
        }
    }
    Ok((vector, before, replaceable))
}

/// The memory's line: the checked fields, now, and what git says of the
/// author, branch and commit.
fn new_entry(
    session: &mut Session,
    workspace: &Workspace,
    fields: Fields,
    source: Option<String>,
    agent_session: Option<String>,
    supersedes: Option<String>,
) -> Result<Entry, AppError> {
    let at = session.now()?;
    let head = workspace.head();
    Ok(Entry::Memory(Memory {
        id: memory::new_id(at),
        timestamp: memory::format_timestamp(at),
        kind: fields.kind,
        content: fields.content,
        source: source
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty()),
        tags: fields.tags,
        author: workspace.author(),
        branch: head.branch,
        commit: head.commit,
        files: fields.files,
        session: agent_session,
        supersedes,
        extra: citation::extra_of(&fields.cites).into_iter().collect(),
    }))
}

/// Refuses a memory a field of which looks like a secret. Content was
/// checked before: the options the caller gave, or what came from git
/// (author, branch).
fn refuse_secret_fields(entry: &Entry) -> Result<(), AppError> {
    let Entry::Memory(memory) = entry else {
        return Ok(());
    };
    let Some((field, found)) = memory::secret_in(memory) else {
        return Ok(());
    };
    let arg = match field.as_str() {
        "content" => Arg::Content,
        "tags" => Arg::Tags,
        "files" => Arg::Files,
        "source" => Arg::Source,
        "author" => Arg::Field("author"),
        "branch" => Arg::Field("branch"),
        "commit" => Arg::Field("commit"),
        _ => Arg::Field("field"),
    };
    let err = memory::ContentError::Secret {
        rule: found.rule,
        excerpt: found.redacted(),
    };
    Err(refusal(arg, err))
}

/// Appends the line to the log: the file it goes to, relative to the
/// repository root, and why it waits in the journal, when it does.
fn append_entry(
    workspace: &Workspace,
    entry: &Entry,
) -> Result<(PathBuf, Option<String>), AppError> {
    let appended = MemoryDir::of(workspace).append(entry)?;
    let relative = |path: &Path| {
        path.strip_prefix(workspace.root())
            .map(Path::to_owned)
            .unwrap_or_else(|_| path.to_owned())
    };
    let file = relative(appended.file());
    let journaled = match &appended {
        Appended::File(_) => None,
        Appended::Journaled {
            journal, operation, ..
        } => Some(format!(
            "git is in the middle of {operation}: the memory waits in {} and goes into {} at the next goldfish command after it",
            journal.display(),
            file.display()
        )),
    };
    Ok((file, journaled))
}

/// The near-duplicates the index found once the memory is in, but the one
/// it supersedes and those it may replace; under [`FindReplaced::Report`]
/// the memories it probably replaces are looked for now.
fn similar_after_write(
    session: &mut Session,
    workspace: &Workspace,
    entry: &Entry,
    mut similar: Vec<IndexedMemory>,
    vector: Option<ContentVector>,
    replaced: FindReplaced,
    replaceable: &mut Vec<Replaceable>,
) -> Vec<IndexedMemory> {
    let Entry::Memory(m) = entry else {
        return similar;
    };
    let anchors = citation::of_record(&m.extra).anchors;
    let spans: Vec<citation::Lines<'_>> = anchors.iter().map(|a| a.lines()).collect();
    similar.retain(|s| {
        Some(&s.id) != m.supersedes.as_ref()
            && !replaceable.iter().any(|r| r.memory.id == s.id)
            && !about_other_code(s, &spans)
    });
    if replaced == FindReplaced::Report
        && let Some(vector) = vector
    {
        let memo = supersede::Memo {
            kind: &m.kind,
            content: &m.content,
            files: &m.files,
            spans: &spans,
        };
        // Best effort, as the indexing.
        *replaceable =
            replaceable_by(session, workspace, memo, &vector, Some(&m.id)).unwrap_or_default();
        similar.retain(|s| !replaceable.iter().any(|r| r.memory.id == s.id));
    }
    similar
}

/// How many older memories `store` names as ones a new memory may replace.
const REPLACEABLE_LIMIT: usize = 3;

/// The older memories of the workspace that a new memory (`memo`, whose
/// vector is `vector`) probably replaces, best first (`domain::supersede`:
/// same type, at least [`supersede::ASK`] similar, a shared file when both
/// name files, a fact that differs). Only memories agents receive unmarked
/// are taken (trusted or released, unflagged, not superseded already): a
/// quarantined one is out of the briefing and recall already, and what is
/// shown here of a memory must be safe to show. `except` is the new
/// memory's own id once it is indexed.
pub fn replaceable_by(
    session: &mut Session,
    workspace: &Workspace,
    memo: supersede::Memo,
    vector: &ContentVector,
    except: Option<&str>,
) -> Result<Vec<Replaceable>, AppError> {
    let now = session.now()?;
    let index = session.index()?;
    let scope = scope_of(index, workspace)?;
    let among = Request {
        kinds: vec![memo.kind.to_owned()],
        unflagged_only: true,
        trusted_only: true,
        hide_superseded: true,
        now: Some(now),
        ..Request::default()
    };
    let near = index.similar_among(
        &vector.model,
        &vector.vector,
        &scope,
        supersede::ASK,
        REPLACEABLE_LIMIT + 2,
        among,
    )?;
    let mut found: Vec<Replaceable> = near
        .into_iter()
        .filter(|m| Some(m.id.as_str()) != except)
        .filter_map(|memory| {
            let spans: Vec<citation::Lines<'_>> = memory.cites.iter().map(|c| c.now()).collect();
            let older = supersede::Memo {
                kind: &memory.kind,
                content: &memory.content,
                files: &memory.files,
                spans: &spans,
            };
            let cosine = memory.similarity.unwrap_or(memory.score);
            let why = supersede::judge(older, memo, cosine, supersede::ASK)?;
            Some(Replaceable { memory, why })
        })
        .collect();
    found.truncate(REPLACEABLE_LIMIT);
    Ok(found)
}

/// `ID (DATE, 0.83 similar, …, number 20 → 50): "excerpt"`, one older
/// memory a new one may replace.
pub fn replaceable_line(replaceable: &Replaceable, width: usize) -> String {
    let m = &replaceable.memory;
    format!(
        "{} ({}, {}): \"{}\"",
        render::terminal_safe(&m.id),
        m.timestamp.get(..10).unwrap_or(&m.timestamp),
        render::terminal_safe(&replaceable.why.explain()),
        render::excerpt(&m.content, width)
    )
}

/// The full id of the live memory `id` (an id or a unique prefix) names,
/// for `store --supersedes`: an empty, unknown, ambiguous or forgotten id
/// is an error naming it. A memory superseded already may be superseded
/// again (a chain).
fn superseded(workspace: &Workspace, id: &str) -> Result<String, AppError> {
    let shown = render::terminal_safe(id);
    if id.is_empty() {
        return Err(AppError::arg(Arg::Supersedes, "the id is empty"));
    }
    let view = MemoryDir::of(workspace).read()?;
    match view.find(id) {
        Lookup::Found(located) => Ok(located.memory.id.clone()),
        Lookup::Forgotten { id: full, at } => Err(AppError::arg(
            Arg::Supersedes,
            format!(
                "`{shown}` names {full}, forgotten at {at}: a forgotten memory cannot be superseded"
            ),
        )),
        Lookup::Missing => Err(AppError::arg(
            Arg::Supersedes,
            format!("no memory of this repository has the id `{shown}` (see `goldfish recall`)"),
        )),
        Lookup::Ambiguous(ids) => Err(AppError::arg(
            Arg::Supersedes,
            format!(
                "`{shown}` matches several memories ({}); give more of the id",
                ids.join(", ")
            ),
        )),
    }
}

/// Why `store` refused content: a secret comes with the hint the front end
/// words (only a person can pass `--allow-secret`).
fn refusal(arg: Arg, err: memory::ContentError) -> AppError {
    match err {
        memory::ContentError::Secret { rule, excerpt } => AppError::arg(
            arg,
            format!("the memory looks like it contains a secret ({rule}: {excerpt})"),
        )
        .with_hint(Hint::AllowSecret),
        other => AppError::arg(arg, other),
    }
}

/// Memories of the workspace at least [`DUPLICATE`] similar to `content`,
/// before it is written, and the content's vector (none without a model).
/// The index is synced first only when it lags the workspace (the hooks
/// keep it current): a store syncs once, after its append.
pub fn near_duplicates(
    session: &mut Session,
    workspace: &Workspace,
    content: &str,
) -> Result<(Vec<IndexedMemory>, Option<ContentVector>), AppError> {
    let (similar, vector, _) = near_duplicates_seen(session, workspace, content)?;
    Ok((similar, vector))
}

/// What [`near_duplicates`] found before the write, and in which state of
/// the index: after the write, `store` takes it as it is when nothing but
/// its own memory entered the index since.
struct Before {
    similar: Vec<IndexedMemory>,
    /// The index's `data_version` just before the search.
    data_version: i64,
}

/// What [`near_duplicates`] returns, with what its search saw.
type Seen = (Vec<IndexedMemory>, Option<ContentVector>, Option<Before>);

/// [`near_duplicates`], with what the search saw (none when there was no
/// search).
fn near_duplicates_seen(
    session: &mut Session,
    workspace: &Workspace,
    content: &str,
) -> Result<Seen, AppError> {
    if session.model(Need::Optional)?.is_none() {
        return Ok((Vec::new(), None, None));
    }
    if lags(session, workspace)? {
        sync_after_store(session, workspace, READ_EMBEDS)?;
    } else if session.index()?.pending_embeddings()? > 0 {
        // Current, but memories a hook left to a background embedder would
        // escape the comparison: as many as a read embeds, from the queue.
        embed_pending(session, Some(READ_EMBED_LIMIT))?;
    }
    let now = session.now()?;
    let Some(vector) = content_vector(session, content)? else {
        return Ok((Vec::new(), None, None));
    };
    let index = session.index()?;
    let scope = scope_of(index, workspace)?;
    // Read before the search: a commit by another process in between makes
    // the search look newer than it is, never older.
    let data_version = index.data_version()?;
    let similar = index.similar(&vector.model, &vector.vector, &scope, DUPLICATE, 3, now)?;
    session.trace.similarity_searches += 1;
    let before = Before {
        similar: similar.clone(),
        data_version,
    };
    Ok((similar, Some(vector), Some(before)))
}

/// Whether a near-duplicate is about other code than the spans a new
/// memory cites: both cite spans, and none shares a line
/// ([`citation::apart`]). Alike words about two functions are two memories.
fn about_other_code(similar: &IndexedMemory, spans: &[citation::Lines<'_>]) -> bool {
    let theirs: Vec<citation::Lines<'_>> = similar.cites.iter().map(|c| c.now()).collect();
    citation::apart(&theirs, spans)
}

/// `content` embedded as a memory text (`None` without a model).
fn content_vector(session: &mut Session, content: &str) -> Result<Option<ContentVector>, AppError> {
    let Some(model) = session.model(Need::Optional)? else {
        return Ok(None);
    };
    let vector = model
        .embedder()?
        .embed(&[content], crate::adapters::embed::TextKind::Document)
        .context("embedding the memory")?
        .remove(0);
    let model = model.id();
    session.trace.texts_embedded += 1;
    Ok(Some(ContentVector { model, vector }))
}

/// Indexes (and embeds, unless `vector` is its vector already) what
/// `store` appended, with one sync; returns the memories it nearly repeats
/// and its vector (none without a model).
///
/// The memories it nearly repeats are searched for once a store: those
/// `before` found (the check before the write) are the answer when the
/// index holds nothing new but the stored memory since, else (nothing
/// searched before, or another process, a pull or a teammate's store came
/// in between) the index is searched again.
fn index_stored(
    session: &mut Session,
    workspace: &Workspace,
    entry: &Entry,
    vector: Option<ContentVector>,
    before: Option<Before>,
) -> Result<(Vec<IndexedMemory>, Option<ContentVector>), AppError> {
    let Entry::Memory(memory) = entry else {
        return Ok((Vec::new(), None));
    };
    let hash = crate::adapters::index::writing::content_hash(&memory.content);
    if let Some(ContentVector { model, vector }) = &vector
        && session.model_state().id() == Some(model.as_str())
    {
        // In before the sync queues the text: its embedding step finds it
        // done.
        let index = session.index()?;
        index.use_model(model)?;
        index.insert_embeddings(model, [(hash.as_str(), vector.as_slice())])?;
    }
    let report = sync_after_store(session, workspace, READ_EMBEDS)?;
    let ModelState::Installed(model_id) = session.model_state() else {
        return Ok((Vec::new(), None));
    };
    let now = session.now()?;
    let index = session.index()?;
    let Some(vector) = index.vector_of(&model_id, &hash)? else {
        return Ok((Vec::new(), None));
    };
    // Only this memory came in: its own sync added it and nothing else
    // (no other line, no other vector), and no other process wrote to the
    // index since the search before the write.
    let unchanged = |before: &Before| -> Result<bool, AppError> {
        let only_this = report.as_ref().is_some_and(|report| {
            report.memories_added == 1
                && report.memories_updated == 0
                && report.memories_removed == 0
                && report.files_removed == 0
                && report.embedded == 0
        });
        Ok(only_this && index.data_version()? == before.data_version)
    };
    let similar = match before {
        Some(before) if unchanged(&before)? => before.similar,
        _ => {
            let scope = scope_of(index, workspace)?;
            let mut similar = index.similar(&model_id, &vector, &scope, DUPLICATE, 4, now)?;
            session.trace.similarity_searches += 1;
            similar.retain(|m| m.id != memory.id);
            similar.truncate(3);
            similar
        }
    };
    Ok((
        similar,
        Some(ContentVector {
            model: model_id,
            vector,
        }),
    ))
}
