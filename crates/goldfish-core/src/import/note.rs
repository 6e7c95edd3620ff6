//! One note read: its frontmatter (YAML), time, type and body.

use jiff::Timestamp;
use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;
use serde_yaml_ng::Value as Yaml;

use crate::memory::kinds::{DEFAULT, Kinds};
use crate::memory::{self, MAX_CONTENT_BYTES};

use super::markdown::{heading_text, normalize, split_labelled};

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
    // The limits `store` keeps: a note over them is named, not imported.
    let limited = |key: &str, limit: memory::ListLimit| {
        let items = fields.list(key)?;
        limit
            .check(&items)
            .map(|()| items)
            .map_err(|err| fields.problem(key, err.to_string()))
    };
    let tags = limited("tags", memory::TAGS)?;
    let files = limited("files", memory::FILES)?;
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
        // Tags and files over `store`'s limits.
        let tags: Vec<String> = (0..33).map(|i| format!("t{i}")).collect();
        let many = error(
            "a.md",
            &format!(
                "---\ndate: 2026-10-14\ntags: [{}]\n---\nx\n",
                tags.join(", ")
            ),
        );
        assert_eq!(many.to_string(), "frontmatter `tags`: 33 tags, at most 32");
        assert_eq!(many.line(), Some(3));
        // No frontmatter, a thematic break later, CRLF and a BOM.
        let plain = note(
            "2026-10-14/a.md",
            "\u{feff}# Title\r\n\r\n\r\n\r\ntext  \r\n---\r\nmore\r\n",
        );
        assert_eq!(plain.body, "# Title\n\ntext\n---\nmore");
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
}
