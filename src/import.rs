//! `goldfish import`: notes in the old Goldfish formats (markdown files with
//! YAML frontmatter, e.g. `checkpoints/2026-10-14/1530-auth-refactor.md` and
//! `plans/billing-v2.md`) turned into memories.
//!
//! Step by step:
//!
//! 1. [`find_notes`] lists the `*.md` / `*.markdown` files under a folder (the
//!    only I/O here), sorted by path.
//! 2. [`parse_note`] reads one file: frontmatter, timestamp, type, tags,
//!    branch, files, author, title, and the normalised body.
//! 3. [`note_contents`] builds the memory text: the title as a first line, then
//!    the body; over [`MAX_CONTENT_BYTES`] it is split into parts at headings
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

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;
use serde_yaml_ng::Value as Yaml;

use crate::memory::kinds::{DEFAULT, Kinds};
use crate::memory::{self, ContentError, MAX_CONTENT_BYTES, Memory};

/// The `extra` key naming the file a memory was imported from.
pub const IMPORTED_FROM: &str = "imported_from";
/// The `extra` key of a memory imported from part of a split file: `"i/n"`.
pub const IMPORTED_PART: &str = "imported_part";

/// The frontmatter keys that may hold the note's time, in order of preference.
const TIME_KEYS: &[&str] = &["timestamp", "date", "created"];
/// Every frontmatter key import reads.
const KNOWN_KEYS: &[&str] = &[
    "timestamp",
    "date",
    "created",
    "type",
    "title",
    "tags",
    "branch",
    "commit",
    "files",
    "author",
    "source",
];

/// One markdown file found under the imported folder.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceFile {
    /// Relative to the imported folder, `/`-separated.
    pub path: String,
    /// Its bytes, or why they could not be read.
    pub bytes: Result<Vec<u8>, String>,
}

/// Why the imported folder cannot be read at all.
#[derive(Debug, thiserror::Error)]
pub enum FindError {
    #[error("{} does not exist", .0.display())]
    Missing(PathBuf),
    #[error("{} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("could not list {}", .path.display())]
    List {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// The markdown files under `dir` (recursively; hidden files and folders and
/// symlinked folders are left out), sorted by path. A file or subfolder that
/// cannot be read is listed with the reason, so the rest still imports.
pub fn find_notes(dir: &Path) -> Result<Vec<SourceFile>, FindError> {
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Err(FindError::NotADirectory(dir.to_owned())),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Err(FindError::Missing(dir.to_owned()));
        }
        Err(source) => {
            return Err(FindError::List {
                path: dir.to_owned(),
                source,
            });
        }
    }
    let mut found = Vec::new();
    walk(dir, "", &mut found).map_err(|source| FindError::List {
        path: dir.to_owned(),
        source,
    })?;
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

fn walk(dir: &Path, prefix: &str, found: &mut Vec<SourceFile>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let relative = format!("{prefix}{name}");
        let path = entry.path();
        let file_type = entry.file_type()?;
        if file_type.is_dir() {
            if let Err(err) = walk(&path, &format!("{relative}/"), found) {
                found.push(SourceFile {
                    path: format!("{relative}/"),
                    bytes: Err(format!("could not be listed ({err})")),
                });
            }
        } else if file_type.is_symlink() && (is_markdown(&name) || path.is_dir()) {
            // A link could point anywhere (a note folder may come from a
            // stranger's repository): named, never followed.
            let path = if path.is_dir() {
                format!("{relative}/")
            } else {
                relative
            };
            found.push(SourceFile {
                path,
                bytes: Err("is a symbolic link; not followed".to_owned()),
            });
        } else if is_markdown(&name) {
            // Never a FIFO or a device: opened without blocking, checked.
            let bytes = crate::log::read_regular(&path).map_err(|err| match err {
                crate::log::OpenError::Io(err) => format!("could not be read ({err})"),
                crate::log::OpenError::Link => "is a symbolic link; not followed".to_owned(),
                crate::log::OpenError::NotRegular(kind) => format!("is {kind}, not a note"),
            });
            found.push(SourceFile {
                path: relative,
                bytes,
            });
        }
    }
    Ok(())
}

fn is_markdown(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

/// One note, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    /// Relative to the imported folder, `/`-separated.
    pub path: String,
    pub title: Option<String>,
    pub timestamp: Timestamp,
    /// A type valid in the repository.
    pub kind: String,
    pub tags: Vec<String>,
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub files: Vec<String>,
    pub author: Option<String>,
    pub source: Option<String>,
    /// The markdown after the frontmatter, normalised (see [`normalize`]).
    pub body: String,
    /// Frontmatter keys that were not imported, in file order.
    pub ignored_keys: Vec<String>,
}

/// Why a note cannot be read. [`NoteError::line`] is the line of the file at
/// fault, when there is one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoteError {
    #[error("the frontmatter is not valid YAML: {message}")]
    Yaml { line: usize, message: String },
    #[error("the frontmatter opened on line 1 is never closed (no `---` line after it)")]
    Unclosed,
    #[error("the frontmatter is not a mapping of keys to values")]
    NotAMapping,
    #[error("frontmatter `{key}`: {problem}")]
    Field {
        key: String,
        line: usize,
        problem: String,
    },
    #[error(
        "no date: add `date:` to the frontmatter, or put the file in a dated folder (YYYY-MM-DD)"
    )]
    NoDate,
}

impl NoteError {
    /// The 1-based line of the file at fault.
    pub fn line(&self) -> Option<usize> {
        match self {
            NoteError::Yaml { line, .. } | NoteError::Field { line, .. } => Some(*line),
            NoteError::Unclosed | NoteError::NotAMapping => Some(1),
            NoteError::NoDate => None,
        }
    }
}

/// Reads one note. `path` (relative, `/`-separated) supplies the date and time
/// when the frontmatter has none, and the type when it has none.
///
/// Time: `timestamp`, `date` or `created` (RFC 3339, `YYYY-MM-DD HH:MM[:SS]`
/// read as UTC, or `YYYY-MM-DD`); a plain date takes its time from a file name
/// `HHMM-…`, else 00:00 UTC. Without one, the innermost folder (or the file
/// name) starting with `YYYY-MM-DD` gives the date, again with the `HHMM-`
/// time or 00:00 UTC. Never the file's modification time: an import must give
/// the same records on every machine.
pub fn parse_note(path: &str, text: &str, kinds: &Kinds) -> Result<Note, NoteError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = text.replace("\r\n", "\n");
    let (frontmatter, body) = split_frontmatter(&text)?;
    let fields = match frontmatter {
        Some(yaml) => parse_frontmatter(yaml)?,
        None => Fields::default(),
    };
    let (path_date, path_time) = date_from_path(path);
    let timestamp = match fields.time()? {
        Some(When::Instant(at)) => at,
        Some(When::Day(date)) => at_utc(date, path_time),
        None => at_utc(path_date.ok_or(NoteError::NoDate)?, path_time),
    };
    let kind = match fields.get("type") {
        Some(value) => {
            let given = fields.text("type", value)?.unwrap_or_default();
            kinds
                .resolve(&given)
                .map_err(|err| {
                    fields.problem("type", format!("{err} (or add it to .goldfish/config)"))
                })?
                .to_owned()
        }
        None => infer_kind(path, kinds),
    };
    let title = fields.optional_text("title")?;
    let tags = fields.list("tags")?;
    let files = fields.list("files")?;
    let branch = fields.optional_text("branch")?;
    let commit = fields.optional_text("commit")?;
    let author = fields.optional_text("author")?;
    let source = fields.optional_text("source")?;
    Ok(Note {
        path: path.to_owned(),
        title,
        timestamp,
        kind,
        tags,
        branch,
        commit,
        files,
        author,
        source,
        body: normalize(body),
        ignored_keys: fields.ignored,
    })
}

/// The frontmatter's YAML (if the file opens with a `---` line) and the body.
fn split_frontmatter(text: &str) -> Result<(Option<&str>, &str), NoteError> {
    let Some(first_end) = text.find('\n') else {
        return if text.trim_end() == "---" {
            Err(NoteError::Unclosed)
        } else {
            Ok((None, text))
        };
    };
    if text[..first_end].trim_end() != "---" {
        return Ok((None, text));
    }
    let yaml_start = first_end + 1;
    let mut offset = yaml_start;
    for line in text[yaml_start..].split_inclusive('\n') {
        let bare = line.trim_end();
        if bare == "---" || bare == "..." {
            return Ok((
                Some(&text[yaml_start..offset]),
                &text[offset + line.len()..],
            ));
        }
        offset += line.len();
    }
    Err(NoteError::Unclosed)
}

/// The frontmatter's keys, with the file line each starts on.
#[derive(Debug, Default)]
struct Fields {
    values: Vec<(String, Yaml, usize)>,
    ignored: Vec<String>,
}

fn parse_frontmatter(yaml: &str) -> Result<Fields, NoteError> {
    // The YAML starts on line 2 of the file, after the opening `---`.
    const FIRST_LINE: usize = 2;
    if yaml.trim().is_empty() {
        return Ok(Fields::default());
    }
    let value: Yaml = serde_yaml_ng::from_str(yaml).map_err(|err| {
        // An error at the end of the YAML is on its last line, not on `---`.
        let last = yaml.trim_end().lines().count().max(1);
        let yaml_line = err.location().map_or(1, |at| at.line()).min(last);
        NoteError::Yaml {
            line: yaml_line + FIRST_LINE - 1,
            message: yaml_message(&err.to_string(), FIRST_LINE - 1),
        }
    })?;
    let mapping = match value {
        Yaml::Mapping(mapping) => mapping,
        Yaml::Null => return Ok(Fields::default()),
        _ => return Err(NoteError::NotAMapping),
    };
    let lines: Vec<&str> = yaml.lines().collect();
    let mut fields = Fields::default();
    for (key, value) in mapping {
        let key = match key {
            Yaml::String(key) => key,
            other => scalar_text(&other).unwrap_or_else(|| "?".to_owned()),
        };
        let line = lines
            .iter()
            .position(|line| {
                line.strip_prefix(key.as_str())
                    .is_some_and(|rest| rest.trim_start().starts_with(':'))
            })
            .map_or(FIRST_LINE - 1, |index| index + FIRST_LINE);
        if !KNOWN_KEYS.contains(&key.as_str()) {
            fields.ignored.push(key.clone());
        }
        fields.values.push((key, value, line));
    }
    Ok(fields)
}

/// A libyaml message with its positions counted in lines of the file:
/// `did not find expected key at line 3 column 1, …`.
fn yaml_message(message: &str, lines_before: usize) -> String {
    static LINE: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\bline (\d+)\b").expect("a valid pattern"));
    LINE.replace_all(message, |caps: &regex::Captures<'_>| {
        let line: usize = caps[1].parse().unwrap_or(0);
        format!("line {}", line + lines_before)
    })
    .into_owned()
}

/// A note's time as the frontmatter gives it.
enum When {
    Instant(Timestamp),
    Day(Date),
}

impl Fields {
    fn get(&self, key: &str) -> Option<&Yaml> {
        self.values
            .iter()
            .find(|(name, _, _)| name == key)
            .map(|(_, value, _)| value)
    }

    fn problem(&self, key: &str, problem: impl Into<String>) -> NoteError {
        let line = self
            .values
            .iter()
            .find(|(name, _, _)| name == key)
            .map_or(1, |(_, _, line)| *line);
        NoteError::Field {
            key: key.to_owned(),
            line,
            problem: problem.into(),
        }
    }

    /// A scalar as text (`None` for null or empty).
    fn text(&self, key: &str, value: &Yaml) -> Result<Option<String>, NoteError> {
        match untagged(value) {
            Yaml::Null => Ok(None),
            Yaml::Sequence(_) | Yaml::Mapping(_) => {
                Err(self.problem(key, "must be a single value, not a list or a mapping"))
            }
            scalar => Ok(scalar_text(scalar).filter(|text| !text.is_empty())),
        }
    }

    fn optional_text(&self, key: &str) -> Result<Option<String>, NoteError> {
        match self.get(key) {
            Some(value) => self.text(key, value),
            None => Ok(None),
        }
    }

    /// A YAML list or a comma-separated text; items trimmed, empty ones and
    /// repeats dropped.
    fn list(&self, key: &str) -> Result<Vec<String>, NoteError> {
        let Some(value) = self.get(key) else {
            return Ok(Vec::new());
        };
        let wrong = || self.problem(key, "must be a list or a comma-separated text");
        match untagged(value) {
            Yaml::Null => Ok(Vec::new()),
            Yaml::Sequence(items) => {
                let mut texts = Vec::new();
                for item in items {
                    match untagged(item) {
                        Yaml::Null => {}
                        Yaml::Sequence(_) | Yaml::Mapping(_) => return Err(wrong()),
                        scalar => texts.extend(scalar_text(scalar)),
                    }
                }
                Ok(dedup(texts))
            }
            Yaml::Mapping(_) => Err(wrong()),
            scalar => Ok(memory::split_list(&scalar_text(scalar).unwrap_or_default())),
        }
    }

    /// The first of `timestamp`, `date`, `created` that is set.
    fn time(&self) -> Result<Option<When>, NoteError> {
        for &key in TIME_KEYS {
            let Some(value) = self.get(key) else { continue };
            let Some(text) = self.text(key, value)? else {
                continue;
            };
            return parse_when(&text).map(Some).ok_or_else(|| {
                self.problem(
                    key,
                    format!(
                        "`{text}` is not a date (use RFC 3339, YYYY-MM-DD HH:MM[:SS] or YYYY-MM-DD)"
                    ),
                )
            });
        }
        Ok(None)
    }
}

fn untagged(value: &Yaml) -> &Yaml {
    match value {
        Yaml::Tagged(tagged) => untagged(&tagged.value),
        other => other,
    }
}

fn scalar_text(value: &Yaml) -> Option<String> {
    match untagged(value) {
        Yaml::String(text) => Some(text.trim().to_owned()),
        Yaml::Number(number) => Some(number.to_string()),
        Yaml::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

fn dedup(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        if !item.is_empty() && !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// RFC 3339; `YYYY-MM-DD HH:MM[:SS]` or `YYYY-MM-DDTHH:MM[:SS]` without an
/// offset (UTC); `YYYY-MM-DD`.
fn parse_when(text: &str) -> Option<When> {
    if let Ok(at) = text.parse::<Timestamp>() {
        return Some(When::Instant(at));
    }
    if text.len() == 10 {
        return text.parse::<Date>().ok().map(When::Day);
    }
    let civil = text.parse::<jiff::civil::DateTime>().ok()?;
    civil
        .to_zoned(TimeZone::UTC)
        .ok()
        .map(|zoned| When::Instant(zoned.timestamp()))
}

fn at_utc(date: Date, time: Option<Time>) -> Timestamp {
    date.to_datetime(time.unwrap_or(Time::midnight()))
        .to_zoned(TimeZone::UTC)
        .map(|zoned| zoned.timestamp())
        // Only a date beyond jiff's range (year 9999) could fail.
        .unwrap_or(Timestamp::UNIX_EPOCH)
}

/// The date of the innermost folder (or the file name) that starts with
/// `YYYY-MM-DD`, and the time of a file name that starts with `HHMM` (after
/// the date, if it has one).
fn date_from_path(path: &str) -> (Option<Date>, Option<Time>) {
    let mut parts: Vec<&str> = path.split('/').collect();
    let file = parts.pop().unwrap_or_default();
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    let (file_date, rest) = match leading_date(stem) {
        Some(date) => (
            Some(date),
            stem[10..].trim_start_matches(['-', '_', 'T', ' ']),
        ),
        None => (None, stem),
    };
    let date = file_date.or_else(|| parts.iter().rev().find_map(|dir| leading_date(dir)));
    (date, leading_time(rest))
}

fn leading_date(text: &str) -> Option<Date> {
    let head = text.get(..10)?;
    let next = text[10..].chars().next();
    if next.is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    let bytes = head.as_bytes();
    let shaped = bytes.iter().enumerate().all(|(i, b)| match i {
        4 | 7 => *b == b'-',
        _ => b.is_ascii_digit(),
    });
    shaped.then(|| head.parse().ok()).flatten()
}

fn leading_time(text: &str) -> Option<Time> {
    let head = text.get(..4)?;
    if !head.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if text[4..]
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric())
    {
        return None;
    }
    let hour: i8 = head[..2].parse().ok()?;
    let minute: i8 = head[2..].parse().ok()?;
    Time::new(hour, minute, 0, 0).ok()
}

/// The type of a note without `type:`: the innermost folder whose name is a
/// type, or a type plus `s` (`checkpoints/` → `checkpoint`, `plans/` →
/// `plan`); else the default type.
fn infer_kind(path: &str, kinds: &Kinds) -> String {
    let mut dirs: Vec<&str> = path.split('/').collect();
    dirs.pop();
    dirs.iter()
        .rev()
        .find_map(|dir| {
            let dir = dir.to_ascii_lowercase();
            let singular = dir.strip_suffix('s').unwrap_or(&dir);
            kinds
                .resolve(&dir)
                .or_else(|_| kinds.resolve(singular))
                .ok()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| DEFAULT.to_owned())
}

/// Markdown with `\n` endings, no trailing spaces, at most one blank line in a
/// row outside code blocks, and no blank lines at either end.
pub fn normalize(markdown: &str) -> String {
    let code = code_blocks(markdown);
    let mut out = String::with_capacity(markdown.len());
    let mut blank_lines = 0;
    let mut blank_in_code = false;
    for (start, line) in lines_at(markdown) {
        let line = line.trim_end();
        if line.is_empty() {
            blank_lines += 1;
            blank_in_code |= code.iter().any(|block| block.contains(&start));
            continue;
        }
        if !out.is_empty() {
            let keep = if blank_in_code {
                blank_lines
            } else {
                blank_lines.min(1)
            };
            out.push('\n');
            for _ in 0..keep {
                out.push('\n');
            }
        }
        blank_lines = 0;
        blank_in_code = false;
        out.push_str(line);
    }
    out
}

/// The lines of `text` (without their `\n`) and the byte each starts at.
fn lines_at(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_inclusive('\n').scan(0, |start, line| {
        let at = *start;
        *start += line.len();
        Some((at, line.strip_suffix('\n').unwrap_or(line)))
    })
}

/// The byte ranges of `markdown`'s code blocks, fenced or indented, as a
/// CommonMark parser reads them: a fence closes only with a fence of its own
/// character at least as long (a `~~~` line inside a ``` block is code).
fn code_blocks(markdown: &str) -> Vec<std::ops::Range<usize>> {
    use pulldown_cmark::{Event, Parser, Tag};
    Parser::new(markdown)
        .into_offset_iter()
        .filter_map(|(event, range)| {
            matches!(event, Event::Start(Tag::CodeBlock(_))).then_some(range)
        })
        .collect()
}

/// Where the headings of `markdown` that open a line start (ATX `#` and
/// setext underlined ones; not in code, a list or a quote), as a CommonMark
/// parser reads them.
fn heading_starts(markdown: &str) -> std::collections::HashSet<usize> {
    use pulldown_cmark::{Event, Parser, Tag};
    Parser::new(markdown)
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Heading { .. }) => {
                let line_start = markdown[..range.start].rfind('\n').map_or(0, |at| at + 1);
                markdown[line_start..range.start]
                    .trim()
                    .is_empty()
                    .then_some(line_start)
            }
            _ => None,
        })
        .collect()
}

/// The text of an ATX heading line (`## Rollout` → `Rollout`).
fn heading_text(line: &str) -> Option<&str> {
    let hashes = line.len() - line.trim_start_matches('#').len();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &line[hashes..];
    (rest.is_empty() || rest.starts_with(' ')).then(|| rest.trim().trim_end_matches('#').trim())
}

/// The memory text of a note: the title as the first line (unless the body
/// opens with it as a heading), then the body. Longer than
/// [`MAX_CONTENT_BYTES`], it is split into parts, each opening with
/// `TITLE (part i/n)`; parts end at headings where they can, else between
/// paragraphs, else between lines.
pub fn note_contents(note: &Note) -> Vec<String> {
    note_contents_within(note, MAX_CONTENT_BYTES)
}

fn note_contents_within(note: &Note, limit: usize) -> Vec<String> {
    let (first_line, rest) = note.body.split_once('\n').unwrap_or((&note.body, ""));
    let opening = heading_text(first_line).filter(|text| !text.is_empty());
    let opens_with_title = |title: &str| opening.is_some_and(|h| h.eq_ignore_ascii_case(title));
    let whole = match &note.title {
        Some(title) if opens_with_title(title) => note.body.clone(),
        Some(title) if note.body.is_empty() => title.clone(),
        Some(title) => format!("{title}\n\n{}", note.body),
        None => note.body.clone(),
    };
    if whole.len() <= limit {
        return vec![whole];
    }
    // Each part opens with a label: the title, the opening heading, or the
    // file name.
    let (label, body) = match (&note.title, opening) {
        (Some(title), _) if opens_with_title(title) => (title.clone(), rest.trim_start()),
        (Some(title), _) => (title.clone(), note.body.as_str()),
        (None, Some(heading)) => (heading.to_owned(), rest.trim_start()),
        (None, None) => {
            let name = note.path.rsplit('/').next().unwrap_or(&note.path);
            (name.to_owned(), note.body.as_str())
        }
    };
    split_labelled(&label, body, limit)
}

/// `body` in parts of at most `limit` bytes headed `label (part i/n)`.
fn split_labelled(label: &str, body: &str, limit: usize) -> Vec<String> {
    let label: String = label.chars().take(200).collect();
    let header_room = label.len() + " (part 999/999)\n\n".len();
    let room = limit.saturating_sub(header_room).max(64);
    let chunks = pack(pieces(body, room), room);
    let total = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(index, chunk)| format!("{label} (part {}/{total})\n\n{chunk}", index + 1))
        .collect()
}

/// `body` cut into pieces of at most `room` bytes: its sections (a heading
/// and what follows; a CommonMark parser tells headings from code); a longer section by paragraphs,
/// a longer paragraph by lines, a longer line by words or characters.
fn pieces(body: &str, room: usize) -> Vec<String> {
    let headings = heading_starts(body);
    let mut sections: Vec<String> = Vec::new();
    let mut current = String::new();
    for (start, line) in lines_at(body) {
        if headings.contains(&start) && !current.trim().is_empty() {
            sections.push(std::mem::take(&mut current));
        }
        current.push_str(line);
        current.push('\n');
    }
    sections.push(current);
    let mut out = Vec::new();
    for section in sections {
        let section = section.trim();
        if section.is_empty() {
            continue;
        }
        if section.len() <= room {
            out.push(section.to_owned());
            continue;
        }
        for paragraph in section.split("\n\n") {
            if paragraph.trim().is_empty() {
                continue;
            }
            if paragraph.len() <= room {
                out.push(paragraph.to_owned());
                continue;
            }
            let lines = pack(
                paragraph
                    .lines()
                    .flat_map(|line| cut_line(line, room))
                    .collect(),
                room,
            );
            // Lines of one paragraph stay on single newlines.
            out.extend(lines.into_iter().map(|chunk| chunk.replace("\n\n", "\n")));
        }
    }
    out
}

/// A line longer than `room` cut at spaces (or anywhere, at a character
/// boundary, when a word is longer).
fn cut_line(line: &str, room: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while rest.len() > room {
        let mut end = room;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let cut = rest[..end].rfind(' ').filter(|&at| at > 0).unwrap_or(end);
        out.push(rest[..cut].trim_end().to_owned());
        rest = rest[cut..].trim_start();
    }
    if !rest.is_empty() {
        out.push(rest.to_owned());
    }
    out
}

/// Pieces joined by blank lines into as few chunks of at most `room` bytes as
/// a greedy pass gives.
fn pack(pieces: Vec<String>, room: usize) -> Vec<String> {
    let mut chunks: Vec<String> = Vec::new();
    for piece in pieces {
        match chunks.last_mut() {
            Some(last) if last.len() + 2 + piece.len() <= room => {
                last.push_str("\n\n");
                last.push_str(&piece);
            }
            _ => chunks.push(piece),
        }
    }
    chunks
}

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
        // The whole text at once, so no part boundary can cut a secret.
        let whole = format!("{}\n{}", note.title.as_deref().unwrap_or(""), note.body);
        // And every frontmatter field that becomes part of a record.
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
        if let Some(found) = found {
            return Err(Skip::Content(ContentError::Secret {
                rule: found.rule,
                excerpt: found.redacted(),
            }));
        }
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
        memories.push(Memory {
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
            extra,
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds() -> Kinds {
        Kinds::with_extra(["meeting"]).unwrap()
    }

    fn note(path: &str, text: &str) -> Note {
        parse_note(path, text, &kinds()).unwrap()
    }

    fn error(path: &str, text: &str) -> NoteError {
        parse_note(path, text, &kinds()).unwrap_err()
    }

    fn ts(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn frontmatter_fields() {
        let n = note(
            "plans/billing-v2.md",
            "---\ntitle: Billing v2\ndate: 2026-09-30 14:05\ntags: [billing, stripe]\n\
             branch: feat/billing-v2\nfiles:\n  - src/billing/mod.rs\n  - src/billing/invoice.rs\n\
             author: Priya\nstatus: draft\n---\n\nMove invoices to Stripe.\n",
        );
        assert_eq!(n.title.as_deref(), Some("Billing v2"));
        assert_eq!(n.timestamp, ts("2026-09-30T14:05:00Z"));
        assert_eq!(n.kind, "plan");
        assert_eq!(n.tags, ["billing", "stripe"]);
        assert_eq!(n.branch.as_deref(), Some("feat/billing-v2"));
        assert_eq!(n.files, ["src/billing/mod.rs", "src/billing/invoice.rs"]);
        assert_eq!(n.author.as_deref(), Some("Priya"));
        assert_eq!(n.ignored_keys, ["status"]);
        assert_eq!(n.body, "Move invoices to Stripe.");
        assert_eq!(
            note_contents(&n),
            ["Billing v2\n\nMove invoices to Stripe."]
        );
    }

    #[test]
    fn tags_as_a_comma_string_and_types_mapped() {
        let n = note(
            "notes/x.md",
            "---\ntype: Meeting\ntags: auth, perf , auth\ndate: 2026-10-01\n---\nbody\n",
        );
        assert_eq!(n.kind, "meeting");
        assert_eq!(n.tags, ["auth", "perf"]);
        let err = error(
            "notes/x.md",
            "---\ndate: 2026-10-01\ntype: idea\n---\nbody\n",
        );
        assert_eq!(err.line(), Some(3));
        assert!(
            err.to_string()
                .starts_with("frontmatter `type`: unknown memory type `idea`"),
            "{err}"
        );
    }

    #[test]
    fn timestamps() {
        let at = |path: &str, front: &str| note(path, &format!("---\n{front}\n---\nx\n")).timestamp;
        assert_eq!(
            at("a.md", "timestamp: 2026-10-14T15:30:00+02:00"),
            ts("2026-10-14T13:30:00Z")
        );
        assert_eq!(
            at("a.md", "created: 2026-10-14 15:30:12"),
            ts("2026-10-14T15:30:12Z")
        );
        assert_eq!(
            at("a.md", "date: '2026-10-14T08:00'"),
            ts("2026-10-14T08:00:00Z")
        );
        assert_eq!(at("a.md", "date: 2026-10-14"), ts("2026-10-14T00:00:00Z"));
        // A plain date takes the file name's time.
        assert_eq!(
            at("c/0915-x.md", "date: 2026-10-14"),
            ts("2026-10-14T09:15:00Z")
        );
        // `timestamp` wins over `date`.
        assert_eq!(
            at("a.md", "date: 2026-01-01\ntimestamp: 2026-10-14T15:30:00Z"),
            ts("2026-10-14T15:30:00Z")
        );
        // From the path.
        let path = |path: &str| note(path, "x\n").timestamp;
        assert_eq!(
            path("checkpoints/2026-10-14/1530-auth.md"),
            ts("2026-10-14T15:30:00Z")
        );
        assert_eq!(
            path("checkpoints/2026-10-14/auth.md"),
            ts("2026-10-14T00:00:00Z")
        );
        assert_eq!(
            path("2026-10-14-standup/notes/2359_late.md"),
            ts("2026-10-14T23:59:00Z")
        );
        assert_eq!(
            path("journal/2026-10-15-0800-standup.md"),
            ts("2026-10-15T08:00:00Z")
        );
        // 2460 is not a time: midnight.
        assert_eq!(path("2026-10-14/2460-x.md"), ts("2026-10-14T00:00:00Z"));
        assert_eq!(error("plans/x.md", "x\n"), NoteError::NoDate);
        let bad = error("a.md", "---\ntitle: t\ndate: next week\n---\nx\n");
        assert_eq!(bad.line(), Some(3));
        assert!(
            bad.to_string().contains("`next week` is not a date"),
            "{bad}"
        );
    }

    #[test]
    fn types_inferred_from_folders() {
        assert_eq!(
            note("checkpoints/2026-10-14/1530-a.md", "x").kind,
            "checkpoint"
        );
        assert_eq!(note("old/Plans/2026-10-14-a.md", "x").kind, "plan");
        assert_eq!(note("decisions/2026-10-14-a.md", "x").kind, "decision");
        assert_eq!(note("notes/2026-10-14-a.md", "x").kind, "observation");
    }

    #[test]
    fn bad_frontmatter_names_the_line() {
        let err = error(
            "a.md",
            "---\ntitle: ok\ntags: [a, b\ndate: 2026-10-14\n---\nx\n",
        );
        let NoteError::Yaml { line, message } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(*line, 4, "{message}");
        assert!(message.contains("line 4"), "{message}");
        assert_eq!(error("a.md", "---\ntitle: x\nbody\n"), NoteError::Unclosed);
        assert_eq!(
            error("a.md", "---\n- a\n- b\n---\nx\n"),
            NoteError::NotAMapping
        );
        let wrong = error("a.md", "---\ndate: 2026-10-14\n\nbranch: [a]\n---\nx\n");
        assert_eq!(wrong.line(), Some(4));
        // No frontmatter, a thematic break later, CRLF and a BOM.
        let plain = note(
            "2026-10-14/a.md",
            "\u{feff}# Title\r\n\r\n\r\n\r\ntext  \r\n---\r\nmore\r\n",
        );
        assert_eq!(plain.body, "# Title\n\ntext\n---\nmore");
    }

    #[test]
    fn normalizing_keeps_code_blocks() {
        assert_eq!(
            normalize("\n\n a  \n\n\n\nb\n```\nx\n\n\ny\n```\n\n\n"),
            " a\n\nb\n```\nx\n\n\ny\n```"
        );
    }

    /// A fence closes only with its own kind: a `~~~` line inside a ```
    /// block (a shell heredoc, a nested example) is code, so blank lines
    /// after it stay and a `#` line after it is no section. Read line by
    /// line with a flag, the `~~~` closed the block.
    #[test]
    fn a_tilde_line_inside_a_backtick_block_is_code() {
        let body = "intro\n\n```md\n~~~\n# not a heading\n\n\n\nstill code\n```\n\n\n\nafter";
        assert_eq!(
            normalize(body),
            "intro\n\n```md\n~~~\n# not a heading\n\n\n\nstill code\n```\n\nafter"
        );
        let text = format!(
            "# Guide\n\n```md\n~~~\n# not a heading\n{}```\n\n## Real section\n\nend\n",
            "x\n".repeat(150)
        );
        let parts = note_contents_within(&note("2026-10-14/g.md", &text), 330);
        assert!(parts.len() > 1);
        assert!(
            parts.iter().all(|p| !p.contains("\n\n# not a heading")),
            "no part starts a section at the line in the block: {parts:#?}"
        );
        assert!(
            parts.iter().any(|p| p.contains("\n\n## Real section")),
            "{parts:#?}"
        );
    }

    /// Setext headings (a line underlined with `===` or `---`) open sections
    /// too; a `#` line in a list or a quote does not.
    #[test]
    fn sections_start_at_headings_a_markdown_parser_sees() {
        let starts =
            heading_starts("Title\n=====\n\ntext\n\n- # in a list\n\n> # quoted\n\n## Two\n");
        let mut starts: Vec<usize> = starts.into_iter().collect();
        starts.sort();
        let text = "Title\n=====\n\ntext\n\n- # in a list\n\n> # quoted\n\n## Two\n";
        assert_eq!(starts, vec![0, text.find("## Two").unwrap()]);
    }

    #[test]
    fn a_title_the_body_already_opens_with_is_not_repeated() {
        let n = note(
            "2026-10-14/a.md",
            "---\ntitle: Auth refactor\n---\n# Auth Refactor\n\nDone.\n",
        );
        assert_eq!(note_contents(&n), ["# Auth Refactor\n\nDone."]);
        let n = note("2026-10-14/a.md", "---\ntitle: Auth refactor\n---\n");
        assert_eq!(note_contents(&n), ["Auth refactor"]);
    }

    #[test]
    fn long_notes_split_at_headings() {
        let section = |name: &str| format!("## {name}\n\n{}", "word ".repeat(40).trim_end());
        let body = [section("One"), section("Two"), section("Three")].join("\n\n");
        let n = note(
            "plans/p.md",
            &format!("---\ntitle: Plan\ndate: 2026-10-01\n---\n{body}\n"),
        );
        let parts = note_contents_within(&n, 480);
        assert_eq!(parts.len(), 2, "{parts:#?}");
        assert!(
            parts[0].starts_with("Plan (part 1/2)\n\n## One\n"),
            "{}",
            parts[0]
        );
        assert!(parts[0].contains("## Two"));
        assert!(
            parts[1].starts_with("Plan (part 2/2)\n\n## Three\n"),
            "{}",
            parts[1]
        );
        assert!(parts.iter().all(|p| p.len() <= 480));
        // A heading inside a code fence is not a section.
        let fenced = format!(
            "# Runbook\n\n```sh\n# not a heading\n{}\n```\n",
            "ls\n".repeat(300)
        );
        let n = note("2026-10-14/r.md", &fenced);
        let parts = note_contents_within(&n, 400);
        assert!(
            parts
                .iter()
                .all(|p| p.starts_with("Runbook (part ") && p.len() <= 400)
        );
        assert!(parts.len() > 1);
        // Nothing is lost: every word of the body is in some part.
        let words = |text: &str| text.split_whitespace().filter(|w| *w == "ls").count();
        assert_eq!(parts.iter().map(|p| words(p)).sum::<usize>(), 300);
        // One very long line, no title: the file name labels the parts.
        let n = note("2026-10-14/log.md", &"é".repeat(500));
        let parts = note_contents_within(&n, 300);
        assert!(parts[0].starts_with("log.md (part 1/"), "{}", parts[0]);
        assert!(parts.iter().all(|p| p.len() <= 300));
        assert_eq!(
            parts.iter().map(|p| p.matches('é').count()).sum::<usize>(),
            500
        );
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

    #[test]
    fn finds_markdown_files_sorted_and_skips_hidden_ones() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("plans")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join("plans/b.md"), "b").unwrap();
        std::fs::write(root.join("a.MARKDOWN"), "a").unwrap();
        std::fs::write(root.join("notes.txt"), "t").unwrap();
        std::fs::write(root.join(".git/x.md"), "x").unwrap();
        let paths: Vec<_> = find_notes(root)
            .unwrap()
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert_eq!(paths, ["a.MARKDOWN", "plans/b.md"]);
        assert!(matches!(
            find_notes(&root.join("nope")),
            Err(FindError::Missing(_))
        ));
        assert!(matches!(
            find_notes(&root.join("notes.txt")),
            Err(FindError::NotADirectory(_))
        ));
    }
}
