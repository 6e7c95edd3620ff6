//! `goldfish import`: notes in the old Goldfish formats (markdown files with
//! YAML frontmatter, e.g. `checkpoints/2026-10-14/1530-auth-refactor.md` and
//! `plans/billing-v2.md`) turned into memories.
//!
//! Step by step:
//!
//! 1. `goldfish::adapters::notes::find_notes` lists the `*.md` / `*.markdown`
//!    files under a folder (the only I/O of an import), sorted by path.
//! 2. [`parse_note`] (`note.rs`) reads one file: frontmatter, timestamp,
//!    type, tags, branch, files, author, title, and the normalised body.
//! 3. [`note_contents`] (`note.rs`; `markdown.rs` cuts with a CommonMark
//!    parser) builds the memory text: the title as a first line, then
//!    the body; over [`MAX_CONTENT_BYTES`](crate::memory::MAX_CONTENT_BYTES) it is split into parts at headings
//!    (then paragraphs, then lines), each part headed `TITLE (part i/n)`.
//! 4. [`plan`] turns every file into memories or a reason to skip it: bad
//!    frontmatter, a secret, already imported (a memory of the log has the
//!    same [`IMPORTED_FROM`]), or the same content as a memory of the log.
//!
//! Every memory records where it came from in `extra`: [`IMPORTED_FROM`] (the
//! file's path relative to the imported folder) and, for a split file,
//! [`IMPORTED_PART`] (`"2/3"`). Frontmatter keys goldfish does not know are
//! not imported (they are reported); they could hold anything, and the
//! secret scan covers the content and every frontmatter field imported.

mod markdown;
mod note;

use std::collections::{BTreeMap, HashMap};

use crate::memory::kinds::Kinds;
use crate::memory::{self, ContentError, Memory};

pub use markdown::normalize;
pub use note::{Note, NoteError, note_contents, parse_note};

/// One markdown file found under the imported folder.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceFile {
    /// Relative to the imported folder, `/`-separated.
    pub path: String,
    /// Its bytes, or why they could not be read.
    pub bytes: Result<Vec<u8>, String>,
}

/// The `extra` key naming the file a memory was imported from.
pub const IMPORTED_FROM: &str = "imported_from";
/// The `extra` key of a memory imported from part of a split file: `"i/n"`.
pub const IMPORTED_PART: &str = "imported_part";

/// What import knows of a repository's log: every memory it has, forgotten
/// or not (a forgotten import must not come back on the next run).
#[derive(Debug, Default)]
pub struct Known {
    /// `imported_from` → how many memories came from that file, and their contents.
    by_source: HashMap<String, Vec<String>>,
    /// Content → the id of a memory with it.
    by_content: HashMap<String, String>,
    /// Content → the file imported in this run that has it.
    by_content_here: HashMap<String, String>,
}

impl Known {
    pub fn new<'a>(memories: impl IntoIterator<Item = &'a Memory>) -> Known {
        let mut known = Known::default();
        for memory in memories {
            known.add(memory, None);
        }
        known
    }

    fn add(&mut self, memory: &Memory, imported_now: Option<&str>) {
        if let Some(serde_json::Value::String(from)) = memory.extra.get(IMPORTED_FROM) {
            self.by_source
                .entry(from.clone())
                .or_default()
                .push(memory.content.clone());
        }
        self.by_content
            .entry(memory.content.clone())
            .or_insert_with(|| memory.id.clone());
        if let Some(path) = imported_now {
            self.by_content_here
                .entry(memory.content.clone())
                .or_insert_with(|| path.to_owned());
        }
    }
}

/// How [`plan`] builds records.
#[derive(Debug, Clone)]
pub struct Options {
    pub kinds: Kinds,
    pub allow_secret: bool,
    /// The author of notes whose frontmatter names none (the importer).
    pub author: Option<String>,
}

/// What happens to one file.
#[derive(Debug, PartialEq)]
pub struct FileOutcome {
    pub path: String,
    pub result: Result<Imported, Skip>,
    /// Frontmatter keys not imported.
    pub ignored_keys: Vec<String>,
}

/// The records a file becomes.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub memories: Vec<Memory>,
    /// How many parts the file was split into (1: not split).
    pub parts: usize,
    /// Parts left out because the log already has their content.
    pub repeated_parts: usize,
}

/// Why a file is not imported.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum Skip {
    #[error("{0}")]
    Unreadable(String),
    #[error("not valid UTF-8 (first bad byte at offset {offset})")]
    NotUtf8 { offset: usize },
    #[error("{0}")]
    Note(NoteError),
    #[error("nothing to import: no title and an empty body")]
    Empty,
    #[error("{0}")]
    Content(ContentError),
    #[error("already imported ({memories} {})", plural(*memories, "memory", "memories"))]
    AlreadyImported { memories: usize },
    #[error(
        "already imported ({memories} {}); the file changed since, and is not imported again",
        plural(*memories, "memory", "memories")
    )]
    ChangedSinceImport { memories: usize },
    #[error("same content as memory {id}")]
    DuplicateOfMemory { id: String },
    #[error("same content as {path}, imported above")]
    DuplicateOfFile { path: String },
}

impl Skip {
    /// A stable name for `--json`.
    pub fn code(&self) -> &'static str {
        match self {
            Skip::Unreadable(_) | Skip::NotUtf8 { .. } => "unreadable",
            Skip::Note(NoteError::Yaml { .. } | NoteError::Unclosed | NoteError::NotAMapping) => {
                "frontmatter"
            }
            Skip::Note(NoteError::Field { .. }) => "field",
            Skip::Note(NoteError::NoDate) => "no-date",
            Skip::Empty | Skip::Content(ContentError::Empty) => "empty",
            Skip::Content(ContentError::Secret { .. }) => "secret",
            Skip::Content(_) => "content",
            Skip::AlreadyImported { .. } | Skip::ChangedSinceImport { .. } => "already-imported",
            Skip::DuplicateOfMemory { .. } | Skip::DuplicateOfFile { .. } => "duplicate",
        }
    }

    /// The 1-based line of the file at fault, when there is one.
    pub fn line(&self) -> Option<usize> {
        match self {
            Skip::Note(err) => err.line(),
            _ => None,
        }
    }

    /// Whether the file is already in the log (rather than refused).
    pub fn is_in_log(&self) -> bool {
        self.code() == "already-imported" || self.code() == "duplicate"
    }
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// Every file's memories or the reason it is skipped, in file order. Parts of
/// a split file are 1 ms apart, in order. `known` learns what is imported, so
/// a second file with the same content is a duplicate.
pub fn plan(files: &[SourceFile], known: &mut Known, options: &Options) -> Vec<FileOutcome> {
    files
        .iter()
        .map(|file| {
            let mut ignored_keys = Vec::new();
            let result = plan_file(file, known, options, &mut ignored_keys);
            FileOutcome {
                path: file.path.clone(),
                result,
                ignored_keys,
            }
        })
        .collect()
}

fn plan_file(
    file: &SourceFile,
    known: &mut Known,
    options: &Options,
    ignored_keys: &mut Vec<String>,
) -> Result<Imported, Skip> {
    let bytes = file
        .bytes
        .as_ref()
        .map_err(|err| Skip::Unreadable(err.clone()))?;
    let text = std::str::from_utf8(bytes).map_err(|err| Skip::NotUtf8 {
        offset: err.valid_up_to(),
    })?;
    let note = parse_note(&file.path, text, &options.kinds).map_err(Skip::Note)?;
    ignored_keys.clone_from(&note.ignored_keys);
    let contents = note_contents(&note);
    if contents.iter().all(|content| content.trim().is_empty()) {
        return Err(Skip::Empty);
    }
    if let Some(earlier) = known.by_source.get(&note.path) {
        let memories = earlier.len();
        return Err(if *earlier == contents {
            Skip::AlreadyImported { memories }
        } else {
            Skip::ChangedSinceImport { memories }
        });
    }
    if !options.allow_secret {
        refuse_secrets(&note)?;
    }
    let mut checked = Vec::with_capacity(contents.len());
    for content in &contents {
        checked.push(
            memory::validate_content(content.as_bytes(), options.allow_secret)
                .map_err(Skip::Content)?,
        );
    }
    let parts = checked.len();
    let mut memories = Vec::new();
    let mut repeated_parts = 0;
    let mut first_repeat = None;
    for (index, content) in checked.into_iter().enumerate() {
        if let Some(path) = known.by_content_here.get(&content) {
            repeated_parts += 1;
            first_repeat.get_or_insert(Skip::DuplicateOfFile { path: path.clone() });
            continue;
        }
        if let Some(id) = known.by_content.get(&content) {
            repeated_parts += 1;
            first_repeat.get_or_insert(Skip::DuplicateOfMemory { id: id.clone() });
            continue;
        }
        memories.push(part_memory(&note, options, index, parts, content));
    }
    if memories.is_empty() {
        return Err(first_repeat.unwrap_or(Skip::Empty));
    }
    for memory in &memories {
        known.add(memory, Some(&note.path));
    }
    Ok(Imported {
        memories,
        parts,
        repeated_parts,
    })
}

/// Refuses a note that holds a secret: its whole text at once, so no part
/// boundary can cut one, then every frontmatter field that becomes part of
/// a record.
fn refuse_secrets(note: &Note) -> Result<(), Skip> {
    let whole = format!("{}\n{}", note.title.as_deref().unwrap_or(""), note.body);
    let fields = [&note.source, &note.branch, &note.commit, &note.author]
        .into_iter()
        .flatten()
        .chain(&note.tags)
        .chain(&note.files)
        .chain(std::iter::once(&note.path));
    let found = memory::secrets::scan(&whole).or_else(|| {
        fields
            .into_iter()
            .find_map(|field| memory::secrets::scan(field))
    });
    match found {
        Some(found) => Err(Skip::Content(ContentError::Secret {
            rule: found.rule,
            excerpt: found.redacted(),
        })),
        None => Ok(()),
    }
}

/// The memory of part `index` (of `parts`) of a note: the note's time plus
/// `index` ms, its fields, and where it was imported from.
fn part_memory(
    note: &Note,
    options: &Options,
    index: usize,
    parts: usize,
    content: String,
) -> Memory {
    let at = note
        .timestamp
        .checked_add(jiff::SignedDuration::from_millis(index as i64))
        .unwrap_or(note.timestamp);
    let mut extra = BTreeMap::new();
    extra.insert(
        IMPORTED_FROM.to_owned(),
        serde_json::Value::String(note.path.clone()),
    );
    if parts > 1 {
        extra.insert(
            IMPORTED_PART.to_owned(),
            serde_json::Value::String(format!("{}/{parts}", index + 1)),
        );
    }
    Memory {
        id: memory::new_id(at),
        timestamp: memory::format_timestamp(at),
        kind: note.kind.clone(),
        content,
        source: note.source.clone(),
        tags: note.tags.clone(),
        author: note.author.clone().or_else(|| options.author.clone()),
        branch: note.branch.clone(),
        commit: note.commit.clone(),
        files: note.files.clone(),
        session: None,
        supersedes: None,
        extra,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MAX_CONTENT_BYTES;

    fn kinds() -> Kinds {
        Kinds::with_extra(["meeting"]).unwrap()
    }

    fn options() -> Options {
        Options {
            kinds: kinds(),
            allow_secret: false,
            author: Some("Importer".into()),
        }
    }

    fn file(path: &str, text: &str) -> SourceFile {
        SourceFile {
            path: path.into(),
            bytes: Ok(text.as_bytes().to_vec()),
        }
    }

    #[test]
    fn plan_records_the_source_and_skips_what_the_log_has() {
        let files = vec![
            file(
                "checkpoints/2026-10-14/1530-a.md",
                "---\ntags: x\n---\nAuth refactor halfway\n",
            ),
            file(
                "checkpoints/2026-10-14/1600-copy.md",
                "Auth refactor halfway\n",
            ),
            file("bad.md", "---\ntitle: [\n---\n"),
            file(
                "secret.md",
                "---\ndate: 2026-10-14\n---\ntoken ghp_9fT2kLmQ8xR4vW1zY6bN3cH7jD0sA5eG2uKp\n",
            ),
            SourceFile {
                path: "latin1.md".into(),
                bytes: Ok(b"caf\xe9".to_vec()),
            },
        ];
        let mut known = Known::default();
        let first = plan(&files, &mut known, &options());
        let imported = first[0].result.as_ref().unwrap();
        let memory = &imported.memories[0];
        assert_eq!(memory.timestamp, "2026-10-14T15:30:00.000Z");
        assert_eq!(memory.kind, "checkpoint");
        assert_eq!(memory.author.as_deref(), Some("Importer"));
        assert_eq!(
            memory.extra[IMPORTED_FROM],
            serde_json::json!("checkpoints/2026-10-14/1530-a.md")
        );
        assert!(!memory.extra.contains_key(IMPORTED_PART));
        assert_eq!(
            first[1].result,
            Err(Skip::DuplicateOfFile {
                path: "checkpoints/2026-10-14/1530-a.md".into()
            })
        );
        let bad = first[2].result.as_ref().unwrap_err();
        assert_eq!((bad.code(), bad.line()), ("frontmatter", Some(2)));
        let secret = first[3].result.as_ref().unwrap_err();
        assert_eq!(secret.code(), "secret");
        assert!(secret.to_string().contains("github-token"), "{secret}");
        assert_eq!(first[4].result, Err(Skip::NotUtf8 { offset: 3 }));
        // A token in the frontmatter alone is refused too.
        for frontmatter in [
            "tags: [deploy, npm_EjhRFyya1q79VfsecC5d8q⁞k0FKE3FcGdE1fK]",
            "source: postgres://app:Xq7vRt2⁞pLm9sK@db.internal/app",
            "files: [config/sk_live_9naHVck6pbd4⁞ZRj2SxphvDTw.env]",
        ] {
            let text = format!("---\ndate: 2026-10-14\n{frontmatter}\n---\nDeploy notes\n")
                .replace('⁞', "");
            let planned = plan(&[file("fm.md", &text)], &mut Known::default(), &options());
            let skip = planned[0].result.as_ref().unwrap_err();
            assert_eq!(skip.code(), "secret", "{frontmatter}");
        }
        let empty = [file("2026-10-14/empty.md", "---\ntags: [x]\n---\n\n")];
        assert_eq!(
            plan(&empty, &mut Known::default(), &options())[0].result,
            Err(Skip::Empty)
        );

        // A second run over the log the first one wrote imports nothing.
        let mut known = Known::new(&imported.memories);
        let second = plan(&files[..2], &mut known, &options());
        assert_eq!(second[0].result, Err(Skip::AlreadyImported { memories: 1 }));
        assert_eq!(
            second[1].result,
            Err(Skip::DuplicateOfMemory {
                id: memory.id.clone()
            })
        );
        // An edited file is reported, not imported again.
        let edited = [file(
            "checkpoints/2026-10-14/1530-a.md",
            "Auth refactor done\n",
        )];
        let third = plan(&edited, &mut known, &options());
        assert_eq!(
            third[0].result,
            Err(Skip::ChangedSinceImport { memories: 1 })
        );
        // --allow-secret lets a false positive through.
        let allow = Options {
            allow_secret: true,
            ..options()
        };
        assert!(
            plan(&files[3..4], &mut Known::default(), &allow)[0]
                .result
                .is_ok()
        );
    }

    #[test]
    fn split_parts_are_ordered_and_numbered() {
        let body = (1..=6)
            .map(|i| format!("## Step {i}\n\n{}", "lorem ipsum dolor ".repeat(100)))
            .collect::<Vec<_>>()
            .join("\n\n");
        let files = [file(
            "plans/long.md",
            &format!("---\ntitle: Long\ndate: 2026-10-01T09:00:00Z\n---\n{body}"),
        )];
        let outcome = plan(&files, &mut Known::default(), &options());
        let imported = outcome[0].result.as_ref().unwrap();
        assert_eq!(imported.parts, 2);
        let stamps: Vec<_> = imported
            .memories
            .iter()
            .map(|m| m.timestamp.as_str())
            .collect();
        assert_eq!(
            stamps,
            ["2026-10-01T09:00:00.000Z", "2026-10-01T09:00:00.001Z"]
        );
        assert_eq!(
            imported.memories[1].extra[IMPORTED_PART],
            serde_json::json!("2/2")
        );
        assert!(
            imported
                .memories
                .iter()
                .all(|m| m.content.len() <= MAX_CONTENT_BYTES)
        );
    }
}
