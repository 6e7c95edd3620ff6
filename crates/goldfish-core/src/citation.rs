//! Citations: the spans of code a memory is about (`store --files
//! src/auth/jwt.rs:40-52`), anchored at store and located again, by code,
//! whenever the cited file changes.
//!
//! An anchor is what finding and judging the span later takes, kept in the
//! memory's line (its `cites` field, an array; a reader that does not know
//! it keeps it verbatim): the path, the line range, the blob it was read
//! from, and fingerprints of the span's text and of the lines just before
//! and after it. Text is compared normalised: blank lines are left out and
//! every run of whitespace reads as one space, so a re-indent or a blank
//! line changes nothing.
//!
//! [`locate`] judges an anchor against a version of its file: the span's
//! text where it was (`holds`); else the same text elsewhere (`moved`; of
//! several copies of a common line, the one a line diff from the anchored
//! version pairs it with, as git's would, else those whose neighbours read
//! as they did, the nearest of those to the old place); else the range as
//! the diff maps it (`changed`, or `gone` when the diff deleted every line
//! of it); else, without the anchored version, the lines between the old
//! neighbours (`changed`), else `changed` with no range. A file that is no
//! longer there is `gone`.

use serde_json::{Map, Value};

/// The record's field.
pub const FIELD: &str = "cites";

/// Citations a memory may hold (the first ones are read, the rest left).
pub const MAX_CITES: usize = 16;

/// Lines one citation may span: a function or a hunk, not a file.
pub const MAX_SPAN_LINES: u32 = 400;

/// Bytes of a cited file read at store and at every check (a larger file
/// is not cited: generated code, data).
pub const MAX_FILE_BYTES: usize = 4 << 20;

/// Non-blank lines before and after a span that its neighbours' fingerprints
/// cover.
pub const AROUND: usize = 3;

/// Line visits the search for a moved span may make in one file (the
/// span's length times the file's); a larger search goes straight to the
/// diff.
const SEARCH_BUDGET: usize = 4_000_000;

/// A verdict's name, as `--json` and the index spell it.
pub const HOLDS: &str = "holds";
pub const MOVED: &str = "moved";
pub const CHANGED: &str = "changed";
pub const GONE: &str = "gone";

/// A span as a person names it: `path:40-52` or `path:40`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub path: String,
    pub start: u32,
    pub end: u32,
}

/// Why a span cannot be cited.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CiteError {
    #[error("`{0}`: lines are numbered from 1, and a range is START-END with START ≤ END")]
    Range(String),
    #[error("`{spec}` spans {lines} lines; a citation may span at most {MAX_SPAN_LINES}")]
    TooLong { spec: String, lines: u32 },
    #[error(
        "`{spec}` is not a path inside the repository (relative, without `..`, outside `.git`)"
    )]
    Path { spec: String },
    #[error("`{spec}`: the file has {lines} lines")]
    PastEnd { spec: String, lines: u32 },
    #[error("`{0}` holds blank lines only")]
    Blank(String),
}

/// A span's anchor: what the record keeps of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Anchor {
    pub path: String,
    pub start: u32,
    pub end: u32,
    /// The git blob id of the version it was read from.
    pub blob: String,
    /// Fingerprint of the span's normalised text (its non-blank lines).
    pub text: Context,
    /// Fingerprints of up to [`AROUND`] non-blank lines before and after
    /// it, each with how many lines it covers.
    pub before: Context,
    pub after: Context,
}

/// A fingerprint of a few neighbouring lines.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Context {
    pub lines: usize,
    pub text: String,
}

/// Where a span is in a version of its file, and whether its text is the
/// anchored one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Holds,
    Moved { start: u32, end: u32 },
    Changed { lines: Option<(u32, u32)> },
    Gone,
}

impl Location {
    /// The verdict's name ([`HOLDS`], [`MOVED`], [`CHANGED`], [`GONE`]).
    pub fn name(&self) -> &'static str {
        match self {
            Location::Holds => HOLDS,
            Location::Moved { .. } => MOVED,
            Location::Changed { .. } => CHANGED,
            Location::Gone => GONE,
        }
    }

    /// The span's lines in that version, when known.
    pub fn lines(&self, anchor: &Anchor) -> Option<(u32, u32)> {
        match self {
            Location::Holds => Some((anchor.start, anchor.end)),
            Location::Moved { start, end } => Some((*start, *end)),
            Location::Changed { lines } => *lines,
            Location::Gone => None,
        }
    }

    /// Whether the cited text is still there (where it was or elsewhere).
    pub fn intact(&self) -> bool {
        matches!(self, Location::Holds | Location::Moved { .. })
    }
}

/// The commit that changed a cited span (the first after its anchor whose
/// version of the file no longer has the text), its author and date.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    pub commit: String,
    /// `Name <email>`.
    pub author: String,
    pub author_name: String,
    pub author_email: String,
    /// RFC 3339 UTC.
    pub date: String,
}

/// A citation as the last check judged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub path: String,
    /// The lines it cited when it was stored.
    pub cited: (u32, u32),
    /// [`HOLDS`], [`MOVED`], [`CHANGED`] or [`GONE`]; empty while not
    /// checked (its memory is not committed yet).
    pub verdict: String,
    /// Its lines at HEAD, when known.
    pub lines: Option<(u32, u32)>,
    /// The path its file is at HEAD when a rename moved it there (`None`:
    /// where it was cited).
    pub now_path: Option<String>,
    /// Who changed it ([`CHANGED`], [`GONE`]).
    pub change: Option<Change>,
}

impl Checked {
    /// Its path and lines: where the last check found it, else where it
    /// was cited.
    pub fn now(&self) -> Lines<'_> {
        let (start, end) = self.lines.unwrap_or(self.cited);
        (self.now_path.as_deref().unwrap_or(&self.path), start, end)
    }

    /// Whether the cited text is not at HEAD any more.
    pub fn lost(&self) -> bool {
        self.verdict == CHANGED || self.verdict == GONE
    }
}

/// A span as a memory cites it: its path, first and last line.
pub type Lines<'a> = (&'a str, u32, u32);

impl Anchor {
    /// Its path and the lines it was read at.
    pub fn lines(&self) -> Lines<'_> {
        (&self.path, self.start, self.end)
    }
}

/// Whether two memories are about different code: both cite spans, and no
/// span of one shares a line with a span of the other in the same file.
/// Two fixes of different functions of one large file are not one fix
/// because both name the file.
pub fn apart(a: &[Lines<'_>], b: &[Lines<'_>]) -> bool {
    !a.is_empty()
        && !b.is_empty()
        && !a.iter().any(|&(path, start, end)| {
            b.iter()
                .any(|&(other, first, last)| path == other && start <= last && first <= end)
        })
}

/// Reads `path:START-END` or `path:START`; `None` when `spec` names no
/// lines (a plain path, as `--files` took before).
pub fn parse_span(spec: &str) -> Option<Result<Span, CiteError>> {
    let (path, range) = spec.rsplit_once(':')?;
    let (start, end) = match range.split_once('-') {
        Some((start, end)) => (start, end),
        None => (range, range),
    };
    let digits = |s: &str| !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(start) || !digits(end) || path.is_empty() {
        return None;
    }
    let (start, end): (u32, u32) = (start.parse().ok()?, end.parse().ok()?);
    Some(span(spec, path, start, end))
}

fn span(spec: &str, path: &str, start: u32, end: u32) -> Result<Span, CiteError> {
    if start == 0 || end < start {
        return Err(CiteError::Range(spec.to_owned()));
    }
    if end - start + 1 > MAX_SPAN_LINES {
        return Err(CiteError::TooLong {
            spec: spec.to_owned(),
            lines: end - start + 1,
        });
    }
    let path = path.strip_prefix("./").unwrap_or(path);
    if !inside(path) {
        return Err(CiteError::Path {
            spec: spec.to_owned(),
        });
    }
    Ok(Span {
        path: path.to_owned(),
        start,
        end,
    })
}

/// Whether `path` names a file inside a repository's tree: relative, `/`
/// separated, no empty, `.` or `..` component, not under `.git`.
pub fn inside(path: &str) -> bool {
    !path.is_empty()
        && path.len() <= 1024
        && !path.starts_with('/')
        && !path.contains('\\')
        && !path.contains('\0')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
        && !path
            .split('/')
            .next()
            .is_some_and(|first| first.eq_ignore_ascii_case(".git"))
}

/// The anchor of `span` in `file` (the text of the version whose blob id
/// is `blob`). Its range is narrowed to its first and last non-blank
/// lines; a span of blank lines only cites nothing.
pub fn anchor(span: &Span, file: &str, blob: String) -> Result<Anchor, CiteError> {
    let count = file.lines().count() as u32;
    let spec = || format!("{}:{}-{}", span.path, span.start, span.end);
    if span.end > count {
        return Err(CiteError::PastEnd {
            spec: spec(),
            lines: count,
        });
    }
    let text = Normalised::of(file);
    let (first, last) = text.range_of(span.start, span.end);
    let Some((start, end)) = text.span(first, last) else {
        return Err(CiteError::Blank(spec()));
    };
    Ok(Anchor {
        path: span.path.clone(),
        start,
        end,
        blob,
        text: context(&text.lines[first..last]),
        before: context(&text.lines[first.saturating_sub(AROUND)..first]),
        after: context(&text.lines[last..(last + AROUND).min(text.lines.len())]),
    })
}

/// Judges `anchor` against `now`, its file's current version (`None`: the
/// file is gone), with `then`, the anchored version when it can still be
/// read (its blob is in the repository). Each version is read once
/// ([`Normalised::of`]) however many citations of it are judged.
pub fn locate(anchor: &Anchor, now: Option<&Normalised>, then: Option<&Normalised>) -> Location {
    let Some(text) = now else {
        return Location::Gone;
    };
    let width = anchor.text.lines;
    let (first, _) = text.range_of(anchor.start, anchor.end);
    let at_lines = |at: usize| -> Option<Location> {
        let (start, end) = text.span(at, at + width)?;
        Some(if (start, end) == (anchor.start, anchor.end) {
            Location::Holds
        } else {
            Location::Moved { start, end }
        })
    };
    // Where it was, first: the common case costs one fingerprint.
    if text.holds(&anchor.text, first)
        && let Some(found) = at_lines(first)
    {
        return found;
    }
    // Then a copy elsewhere, moved there whole. Of several copies (a line
    // as common as `length = None`), the one a line diff from the anchored
    // version pairs it with, as git's would; else those whose neighbours
    // read as they did, the nearest of those.
    let copies = text.all(&anchor.text);
    if copies.len() > 1
        && let Some(then) = then
        && let found @ (Location::Holds | Location::Moved { .. }) = mapped(anchor, then, text)
    {
        return found;
    }
    if let Some(found) = text.nearest(anchor, copies, first).and_then(at_lines) {
        return found;
    }
    // Else the range as the diff maps it.
    match then {
        Some(then) => mapped(anchor, then, text),
        None => between_neighbours(anchor, text),
    }
}

/// The span as a diff of the normalised lines from `then` to `now` maps it
/// (Myers, git's default): the new lines its old ones became; `gone` when
/// every one was deleted with nothing put in their place.
fn mapped(anchor: &Anchor, then: &Normalised, now: &Normalised) -> Location {
    use similar::DiffOp;
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &then.lines, &now.lines);
    let (start, end) = then.range_of(anchor.start, anchor.end);
    let mut mapped: Option<(usize, usize)> = None;
    let mut extend = |from: usize, to: usize| {
        if to > from {
            mapped = Some(match mapped {
                Some((a, b)) => (a.min(from), b.max(to)),
                None => (from, to),
            });
        }
    };
    let mut changed = false;
    for op in &ops {
        let (old, new) = (op.old_range(), op.new_range());
        // An insertion just before or after the span is not in it.
        let before = if old.is_empty() {
            old.start <= start
        } else {
            old.end <= start
        };
        if before {
            continue;
        }
        if old.start >= end {
            break;
        }
        match *op {
            DiffOp::Equal { .. } => {
                let from = new.start + start.saturating_sub(old.start);
                let to = new.end - old.end.saturating_sub(end);
                extend(from, to);
            }
            DiffOp::Delete { .. } => changed = true,
            DiffOp::Insert { .. } | DiffOp::Replace { .. } => {
                changed = true;
                extend(new.start, new.end);
            }
        }
    }
    let lines = mapped.and_then(|(from, to)| now.span(from, to));
    match lines {
        None => Location::Gone,
        Some(lines) if changed => Location::Changed { lines: Some(lines) },
        Some(lines) if lines == (anchor.start, anchor.end) => Location::Holds,
        Some((start, end)) => Location::Moved { start, end },
    }
}

/// Where the span's old neighbours are, the lines between them: the
/// nearest place to the old one where the lines before and after it both
/// read as they did.
fn between_neighbours(anchor: &Anchor, text: &Normalised) -> Location {
    let (first, _) = text.range_of(anchor.start, anchor.end);
    let ends = |context: &Context, after: usize| -> Vec<usize> {
        text.all(context).into_iter().map(|at| at + after).collect()
    };
    // The span starts where the lines before it end (the file's start when
    // none were) and ends where the lines after it start (or the end).
    let froms = match anchor.before.lines {
        0 => vec![0],
        lines => ends(&anchor.before, lines),
    };
    let tos = match anchor.after.lines {
        0 => vec![text.lines.len()],
        _ => ends(&anchor.after, 0),
    };
    let best = froms
        .iter()
        .filter_map(|&from| Some((from, tos.iter().copied().find(|&to| to >= from)?)))
        .min_by_key(|(from, _)| from.abs_diff(first));
    match best {
        Some((from, to)) if to == from => Location::Gone,
        Some((from, to)) => Location::Changed {
            lines: text.span(from, to),
        },
        None => Location::Changed { lines: None },
    }
}

/// A file's version as citations read it: its non-blank lines, normalised
/// for whitespace, with the line number of each.
#[derive(Debug)]
pub struct Normalised {
    lines: Vec<String>,
    numbers: Vec<u32>,
}

impl Normalised {
    pub fn of(text: &str) -> Normalised {
        let mut lines = Vec::new();
        let mut numbers = Vec::new();
        for (at, line) in text.lines().enumerate() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.is_empty() {
                continue;
            }
            lines.push(words.join(" "));
            numbers.push(at as u32 + 1);
        }
        Normalised { lines, numbers }
    }

    /// The non-blank lines (as indexes into `lines`) from line `start` to
    /// line `end`.
    fn range_of(&self, start: u32, end: u32) -> (usize, usize) {
        let first = self.numbers.partition_point(|&n| n < start);
        let last = self.numbers.partition_point(|&n| n <= end);
        (first, last.max(first))
    }

    /// The line numbers of non-blank lines `first..last`.
    fn span(&self, first: usize, last: usize) -> Option<(u32, u32)> {
        (last > first && last <= self.numbers.len())
            .then(|| (self.numbers[first], self.numbers[last - 1]))
    }

    /// Whether the lines from `at` fingerprint as `context`.
    fn holds(&self, context: &Context, at: usize) -> bool {
        at + context.lines <= self.lines.len()
            && fingerprint(&self.lines[at..at + context.lines]) == context.text
    }

    /// Of `copies` of the anchor's text, those whose neighbours read as the
    /// anchor's did (both, else one), the nearest to `near` of those.
    fn nearest(&self, anchor: &Anchor, copies: Vec<usize>, near: usize) -> Option<usize> {
        copies.into_iter().min_by_key(|&at| {
            (
                std::cmp::Reverse(self.neighbours(anchor, at)),
                at.abs_diff(near),
            )
        })
    }

    /// How many of the anchor's neighbours (the lines before it, the lines
    /// after it) read as they did around its text at `at`: none, one or
    /// both. No lines before (after) it read as the file's start (end).
    fn neighbours(&self, anchor: &Anchor, at: usize) -> usize {
        let end = at + anchor.text.lines;
        let before = match anchor.before.lines {
            0 => at == 0,
            lines => at >= lines && self.holds(&anchor.before, at - lines),
        };
        let after = match anchor.after.lines {
            0 => end == self.lines.len(),
            _ => self.holds(&anchor.after, end),
        };
        usize::from(before) + usize::from(after)
    }

    /// Every place the lines fingerprint as `context` (none of a search
    /// past the budget, nor of no lines).
    fn all(&self, context: &Context) -> Vec<usize> {
        let width = context.lines;
        if width == 0
            || width > self.lines.len()
            || width.saturating_mul(self.lines.len()) > SEARCH_BUDGET
        {
            return Vec::new();
        }
        (0..=self.lines.len() - width)
            .filter(|&at| self.holds(context, at))
            .collect()
    }
}

/// A fingerprint of normalised lines: blake3, 128 bits, hex.
fn fingerprint(lines: &[String]) -> String {
    let mut hasher = blake3::Hasher::new();
    for line in lines {
        hasher.update(line.as_bytes());
        hasher.update(b"\n");
    }
    hasher.finalize().to_hex()[..32].to_owned()
}

impl Context {
    /// Reads `N:hex` as [`Context`]'s `Display` writes it.
    pub fn parse(s: &str) -> Option<Context> {
        let (lines, text) = s.split_once(':')?;
        let lines = lines
            .parse()
            .ok()
            .filter(|&n| n <= MAX_SPAN_LINES as usize)?;
        is_hex(text, 32).then(|| Context {
            lines,
            text: text.to_owned(),
        })
    }
}

/// The fingerprint of a piece of code as a citation keeps a span's text
/// (its non-blank lines, normalised): what capture notes of an edit's new
/// text, to find its lines in the file later ([`find_text`]). `None` for
/// text of no non-blank line or of more lines than a citation may span.
pub fn text_fingerprint(text: &str) -> Option<Context> {
    let text = Normalised::of(text);
    (!text.lines.is_empty() && text.lines.len() <= MAX_SPAN_LINES as usize)
        .then(|| context(&text.lines))
}

/// Where text fingerprinted as `context` ([`text_fingerprint`]) is in
/// `file`, the version of `path` it was written into: its first place, as
/// a span to cite.
pub fn find_text(path: &str, file: &str, context: &Context) -> Option<Span> {
    let text = Normalised::of(file);
    let at = *text.all(context).first()?;
    let (start, end) = text.span(at, at + context.lines)?;
    Some(Span {
        path: path.to_owned(),
        start,
        end,
    })
}

impl std::fmt::Display for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.lines, self.text)
    }
}

fn context(lines: &[String]) -> Context {
    Context {
        lines: lines.len(),
        text: fingerprint(lines),
    }
}

impl Anchor {
    /// The anchor as the record keeps it.
    pub fn to_value(&self) -> Value {
        serde_json::json!({
            "path": self.path,
            "lines": [self.start, self.end],
            "blob": self.blob,
            "text": self.text.to_string(),
            "before": self.before.to_string(),
            "after": self.after.to_string(),
        })
    }

    /// Reads an anchor from a record, which came from a stranger: every
    /// field checked and bounded.
    pub fn from_value(value: &Value) -> Result<Anchor, String> {
        let object = value.as_object().ok_or("not an object")?;
        let string = |key: &str| -> Result<&str, String> {
            object
                .get(key)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("`{key}` is not a string"))
        };
        let path = string("path")?;
        let lines = object
            .get("lines")
            .and_then(Value::as_array)
            .filter(|lines| lines.len() == 2)
            .and_then(|lines| Some((lines[0].as_u64()?, lines[1].as_u64()?)))
            .ok_or("`lines` is not [START, END]")?;
        let (start, end) = (
            u32::try_from(lines.0).map_err(|_| "`lines` out of range")?,
            u32::try_from(lines.1).map_err(|_| "`lines` out of range")?,
        );
        let span = span(path, path, start, end).map_err(|err| err.to_string())?;
        let blob = string("blob")?;
        if !is_hex(blob, 40) && !is_hex(blob, 64) {
            return Err("`blob` is not a git object id".into());
        }
        let context = |key: &str, most: usize| -> Result<Context, String> {
            let (lines, text) = string(key)?
                .split_once(':')
                .ok_or_else(|| format!("`{key}` is not LINES:FINGERPRINT"))?;
            let lines: usize = lines
                .parse()
                .ok()
                .filter(|&n| n <= most)
                .ok_or_else(|| format!("`{key}` covers more than {most} lines"))?;
            if !is_hex(text, 32) {
                return Err(format!("`{key}` is not a fingerprint"));
            }
            Ok(Context {
                lines,
                text: text.to_owned(),
            })
        };
        Ok(Anchor {
            path: span.path,
            start: span.start,
            end: span.end,
            blob: blob.to_owned(),
            text: context("text", MAX_SPAN_LINES as usize)?,
            before: context("before", AROUND)?,
            after: context("after", AROUND)?,
        })
    }
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The anchors a record's `cites` holds, each read as [`Anchor::from_value`]
/// does, with the problems of those it cannot read (their place and why);
/// at most [`MAX_CITES`].
pub fn of_record(extra: &std::collections::BTreeMap<String, Value>) -> Cited {
    let mut cited = Cited::default();
    let Some(value) = extra.get(FIELD) else {
        return cited;
    };
    let Some(items) = value.as_array() else {
        cited.problems.push(format!("`{FIELD}` is not an array"));
        return cited;
    };
    for (at, item) in items.iter().enumerate() {
        if cited.anchors.len() == MAX_CITES {
            cited.problems.push(format!(
                "`{FIELD}` holds {} citations; the first {MAX_CITES} are read",
                items.len()
            ));
            break;
        }
        match Anchor::from_value(item) {
            Ok(anchor) => cited.anchors.push(anchor),
            Err(why) => cited.problems.push(format!("`{FIELD}[{at}]`: {why}")),
        }
    }
    cited
}

/// What [`of_record`] read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cited {
    pub anchors: Vec<Anchor>,
    pub problems: Vec<String>,
}

/// The anchors as the record's `cites` keeps them.
pub fn to_record(anchors: &[Anchor]) -> Value {
    Value::Array(anchors.iter().map(Anchor::to_value).collect())
}

/// A map with the anchors under [`FIELD`], for a record's `extra`.
pub fn extra_of(anchors: &[Anchor]) -> Map<String, Value> {
    let mut map = Map::new();
    if !anchors.is_empty() {
        map.insert(FIELD.to_owned(), to_record(anchors));
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`locate`] on texts.
    fn judge(anchor: &Anchor, now: Option<&str>, then: Option<&str>) -> Location {
        let (now, then) = (now.map(Normalised::of), then.map(Normalised::of));
        locate(anchor, now.as_ref(), then.as_ref())
    }

    const BLOB: &str = "0123456789abcdef0123456789abcdef01234567";

    const FILE: &str = "\
use std::time::Duration;

/// How long a token outlives its expiry.
pub fn leeway() -> Duration {
    Duration::from_secs(60)
}

pub fn issuer() -> &'static str {
    \"goldfish\"
}
";

    #[test]
    fn an_edits_new_text_is_found_again_in_its_file() {
        let new = "pub fn leeway() -> Duration {\n        Duration::from_secs(60)\n}";
        let print = text_fingerprint(new).unwrap();
        assert_eq!(Context::parse(&print.to_string()), Some(print.clone()));
        let span = find_text("src/jwt.rs", FILE, &print).unwrap();
        assert_eq!((span.start, span.end), (4, 6));
        let cited = anchor(&span, FILE, BLOB.into()).unwrap();
        assert_eq!(judge(&cited, Some(FILE), Some(FILE)), Location::Holds);
        assert_eq!(find_text("src/jwt.rs", "fn other() {}\n", &print), None);
        assert_eq!(text_fingerprint("  \n\n"), None);
        assert_eq!(Context::parse("3:nothex"), None);
    }

    #[test]
    fn memories_citing_other_lines_of_one_file_are_apart() {
        let leeway = [("src/jwt.rs", 3, 6)];
        assert!(apart(&leeway, &[("src/jwt.rs", 8, 10)]));
        assert!(apart(&leeway, &[("src/other.rs", 3, 6)]));
        // A shared line, or one side citing no span, is not apart.
        assert!(!apart(&leeway, &[("src/jwt.rs", 6, 10)]));
        assert!(!apart(&leeway, &[("src/jwt.rs", 1, 3)]));
        assert!(!apart(&leeway, &[("src/x.rs", 1, 2), ("src/jwt.rs", 4, 4)]));
        assert!(!apart(&leeway, &[]));
        assert!(!apart(&[], &leeway));
    }

    fn anchor_of(start: u32, end: u32) -> Anchor {
        let span = Span {
            path: "src/jwt.rs".into(),
            start,
            end,
        };
        anchor(&span, FILE, BLOB.into()).unwrap()
    }

    fn check(now: Option<&str>, then: Option<&str>, expect: Location) {
        assert_eq!(judge(&anchor_of(3, 6), now, then), expect);
    }

    #[test]
    fn a_span_is_named_as_path_and_lines() {
        let parsed = |s: &str| parse_span(s).map(|r| r.map_err(|e| e.to_string()));
        assert_eq!(
            parsed("src/a.rs:40-52"),
            Some(Ok(Span {
                path: "src/a.rs".into(),
                start: 40,
                end: 52
            }))
        );
        assert_eq!(
            parsed("./src/a.rs:7"),
            Some(Ok(Span {
                path: "src/a.rs".into(),
                start: 7,
                end: 7
            }))
        );
        assert_eq!(parsed("src/a.rs"), None);
        assert_eq!(parsed("C:notes"), None);
        assert!(matches!(parsed("src/a.rs:9-3"), Some(Err(_))));
        assert!(matches!(parsed("src/a.rs:0"), Some(Err(_))));
        let long = parsed("src/a.rs:1-401").unwrap().unwrap_err();
        assert!(long.contains("401 lines"), "{long}");
        for outside in [
            "../etc/passwd:1",
            "/etc/passwd:1",
            ".git/config:1",
            "a//b:1",
        ] {
            let err = parsed(outside).unwrap().unwrap_err();
            assert!(err.contains("inside the repository"), "{outside}: {err}");
        }
    }

    #[test]
    fn an_anchor_past_the_end_of_its_file_is_refused() {
        let span = parse_span("src/jwt.rs:10-20").unwrap().unwrap();
        assert_eq!(
            anchor(&span, FILE, BLOB.into()),
            Err(CiteError::PastEnd {
                spec: "src/jwt.rs:10-20".into(),
                lines: 10
            })
        );
    }

    #[test]
    fn the_same_text_holds_whatever_its_whitespace() {
        check(Some(FILE), Some(FILE), Location::Holds);
        let reindented = FILE.replace("    Duration::from_secs(60)", "\tDuration::from_secs( 60)");
        // One space inside the call is a change of text: only runs of
        // whitespace read as one, none is dropped.
        check(
            Some(&reindented),
            Some(FILE),
            Location::Changed {
                lines: Some((3, 6)),
            },
        );
        let tabbed = FILE.replace("    Duration::from_secs(60)", "\t\tDuration::from_secs(60)");
        check(Some(&tabbed), None, Location::Holds);
    }

    #[test]
    fn text_moved_down_the_file_is_followed_to_its_new_lines() {
        let moved = format!("// header\n\n{FILE}");
        check(
            Some(&moved),
            Some(FILE),
            Location::Moved { start: 5, end: 8 },
        );
        // Without the old version: found by its fingerprint all the same.
        check(Some(&moved), None, Location::Moved { start: 5, end: 8 });
        // Moved below another function: deleted and inserted for a diff.
        let below = "use std::time::Duration;\n\npub fn issuer() -> &'static str {\n    \"goldfish\"\n}\n\n/// How long a token outlives its expiry.\npub fn leeway() -> Duration {\n    Duration::from_secs(60)\n}\n";
        check(
            Some(below),
            Some(FILE),
            Location::Moved { start: 7, end: 10 },
        );
    }

    #[test]
    fn of_copies_of_moved_text_the_one_with_its_old_neighbours_is_followed() {
        // A line common in the file, cited in the tests module; the module
        // moves down past a nearer copy. The nearest copy has other
        // neighbours: the module's copy is the cited one.
        let module = "#[cfg(test)]\nmod tests {\n    use regex::Regex;\n\n    #[test]\n    fn glob() {}\n}\n";
        let then = format!("fn a() {{}}\n\n{module}");
        let span = Span {
            path: "src/glob.rs".into(),
            start: 5,
            end: 5,
        };
        let anchor = anchor(&span, &then, BLOB.into()).unwrap();
        let body: String = (0..12).map(|n| format!("fn f{n}() {{}}\n")).collect();
        let now = format!("use regex::Regex;\n\nfn a() {{}}\n{body}\n{module}");
        assert_eq!(
            judge(&anchor, Some(&now), Some(&then)),
            Location::Moved { start: 19, end: 19 }
        );
        assert_eq!(
            judge(&anchor, Some(&now), None),
            Location::Moved { start: 19, end: 19 }
        );
    }

    #[test]
    fn of_copies_whose_neighbours_changed_the_one_the_diff_keeps_is_followed() {
        // The cited line's neighbours both changed and code came in above
        // it: no copy has its old neighbours, the nearest is another, and
        // the diff keeps the cited one.
        let then =
            "use regex::Regex;\nfn a() {}\nmod tests {\n    use regex::Regex;\n    fn t1() {}\n}\n";
        let span = Span {
            path: "src/glob.rs".into(),
            start: 4,
            end: 4,
        };
        let anchor = anchor(&span, then, BLOB.into()).unwrap();
        let body: String = (0..10).map(|n| format!("fn f{n}() {{}}\n")).collect();
        let now = format!(
            "use regex::Regex;\nfn a() {{}}\n{body}mod tests {{\n    use std::path::Path;\n    use regex::Regex;\n    fn t1() {{ x }}\n}}\n"
        );
        assert_eq!(
            judge(&anchor, Some(&now), Some(then)),
            Location::Moved { start: 15, end: 15 }
        );
    }

    #[test]
    fn an_edited_line_is_changed_at_the_lines_the_diff_maps_it_to() {
        let edited = format!(
            "// header\n{}",
            FILE.replace("from_secs(60)", "from_secs(300)")
        );
        check(
            Some(&edited),
            Some(FILE),
            Location::Changed {
                lines: Some((4, 7)),
            },
        );
        // Without the old version: the lines between its old neighbours.
        check(
            Some(&edited),
            None,
            Location::Changed {
                lines: Some((4, 7)),
            },
        );
    }

    #[test]
    fn a_span_deleted_or_its_file_removed_is_gone() {
        let without =
            "use std::time::Duration;\n\npub fn issuer() -> &'static str {\n    \"goldfish\"\n}\n";
        check(Some(without), Some(FILE), Location::Gone);
        check(None, Some(FILE), Location::Gone);
        check(
            Some("fn other() {}\n"),
            None,
            Location::Changed { lines: None },
        );
    }

    #[test]
    fn a_record_s_anchors_are_read_back_and_a_stranger_s_checked() {
        let anchor = anchor_of(3, 6);
        let extra = std::collections::BTreeMap::from([(
            FIELD.to_owned(),
            serde_json::json!([
                anchor.to_value(),
                {"path": "../../etc/passwd", "lines": [1, 2], "blob": BLOB},
                {"path": "a.rs", "lines": [1, 100000], "blob": BLOB},
                {"path": "a.rs", "lines": [1, 2], "blob": "HEAD"},
                "src/a.rs:1-2",
            ]),
        )]);
        let cited = of_record(&extra);
        assert_eq!(cited.anchors, vec![anchor]);
        assert_eq!(cited.problems.len(), 4, "{:?}", cited.problems);
        assert!(cited.problems[0].contains("inside the repository"));
        assert!(cited.problems[1].contains("at most 400"));
        assert!(cited.problems[2].contains("git object id"));
        assert!(cited.problems[3].contains("not an object"));
    }
}
