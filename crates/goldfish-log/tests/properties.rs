//! Property tests of the merge on random logs.
//!
//! Logs are drawn so that the interesting cases happen often: ids come from a
//! small pool (so sides rewrite each other's records), timestamps from a
//! coarse grid (so ties are sorted by id), content mixes unicode, quotes,
//! backslashes and control characters, keys come in random order with random
//! whitespace, optional fields are sometimes `null` or empty, and lines are
//! sometimes tombstones, garbage, conflict markers or truncated records, with
//! LF or CRLF endings and sometimes no final newline. A side sometimes has a
//! line twice: the merge counts lines, it does not collapse them.
//!
//! The number of cases is proptest's default: 256, or `PROPTEST_CASES` when
//! set (CI sets 1000). `ProptestConfig::default()` reads that variable.

use std::collections::{BTreeSet, HashMap, HashSet};

use goldfish_log::merge::{Merged, Notice, merge};
use goldfish_log::record::{Entry, split_lines};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// Generated logs
// ---------------------------------------------------------------------------

const IDS: &[&str] = &[
    "01M7PX2H4MBHP5N40BAQPAAQSP",
    "01M7QFFFFZP7FT4Y5M95EDQ0PV",
    "01M7SNJ1BK1DCB8GQQRVXVG1EF",
    "01M7TF56HTXYSYX7ZQ4S7XNK6B",
    "01M7W3NP8FKCG0SQYKM1Y8T8YE",
    "01M7YP4PBRKK3GZ42K3C3D22CR",
];

/// One line of a generated log.
#[derive(Debug, Clone)]
enum Line {
    /// A JSON object written with its keys in this order.
    Record {
        fields: Vec<(String, Value)>,
        spaced: bool,
    },
    /// Raw bytes, without `\n`.
    Garbage(Vec<u8>),
}

impl Line {
    fn to_bytes(&self) -> Vec<u8> {
        match self {
            Line::Record { fields, spaced } => {
                let (comma, colon) = if *spaced { (", ", ": ") } else { (",", ":") };
                let body: Vec<String> = fields
                    .iter()
                    .map(|(key, value)| format!("{}{colon}{value}", Value::from(key.as_str())))
                    .collect();
                format!("{{{}}}", body.join(comma)).into_bytes()
            }
            Line::Garbage(bytes) => bytes.clone(),
        }
    }

    fn set_content(&mut self, content: &str) {
        if let Line::Record { fields, .. } = self {
            match fields.iter_mut().find(|(key, _)| key == "content") {
                Some((_, value)) => *value = Value::from(content),
                None => fields.push(("content".to_owned(), Value::from(content))),
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Eol {
    Lf,
    Crlf,
    /// CRLF on the lines whose bit (index mod 8) is set.
    Mixed(u8),
}

/// How one file is written out.
#[derive(Debug, Clone, Copy)]
struct Layout {
    eol: Eol,
    final_newline: bool,
}

fn encode(lines: &[Line], layout: Layout) -> Vec<u8> {
    let mut out = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        out.extend(line.to_bytes());
        let crlf = match layout.eol {
            Eol::Lf => false,
            Eol::Crlf => true,
            Eol::Mixed(bits) => bits >> (index % 8) & 1 == 1,
        };
        let last = index + 1 == lines.len();
        if !last || layout.final_newline {
            out.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
        }
    }
    out
}

/// What one side did to the base.
#[derive(Debug, Clone)]
struct Edit {
    /// Whether base line `i` is kept (cycled over the base).
    keep: Vec<bool>,
    /// Rewrite the content of one kept line.
    rewrite: Option<(Index, String)>,
    /// Append a second copy of one of this side's lines.
    repeat: Option<Index>,
    /// Whether this side also got the lines both sides added.
    with_shared: bool,
    added: Vec<Line>,
    layout: Layout,
}

impl Edit {
    fn apply(&self, base: &[Line], shared: &[Line]) -> Vec<u8> {
        let mut lines: Vec<Line> = base
            .iter()
            .enumerate()
            .filter(|(i, _)| self.keep[i % self.keep.len()])
            .map(|(_, line)| line.clone())
            .collect();
        if let Some((index, content)) = &self.rewrite
            && !lines.is_empty()
        {
            let at = index.index(lines.len());
            lines[at].set_content(content);
        }
        if self.with_shared {
            lines.extend_from_slice(shared);
        }
        lines.extend_from_slice(&self.added);
        if let Some(index) = &self.repeat
            && !lines.is_empty()
        {
            let copy = lines[index.index(lines.len())].clone();
            lines.push(copy);
        }
        encode(&lines, self.layout)
    }
}

/// The three inputs of a merge.
#[derive(Debug, Clone)]
struct Inputs {
    base: Vec<u8>,
    ours: Vec<u8>,
    theirs: Vec<u8>,
}

fn id() -> impl Strategy<Value = String> {
    prop::sample::select(IDS).prop_map(str::to_owned)
}

fn timestamp() -> impl Strategy<Value = String> {
    (
        20u8..23,
        8u8..10,
        prop::sample::select(&["03.512", "17.204", "59.999"][..]),
    )
        .prop_map(|(day, hour, seconds)| format!("2026-11-{day}T{hour:02}:14:{seconds}Z"))
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(
            &[
                "Use sqlx offline mode; run `cargo sqlx prepare` before committing.",
                "Paths like C:\\Users\\maya\\\"quoted\" must be escaped",
                "naïve café — ✓ 日本語 🦀",
                "line one\nline two\ttabbed",
                "nul \u{0} and bell \u{7} and del \u{7f}",
                "</script> \u{2028} \u{feff}",
            ][..]
        )
        .prop_map(str::to_owned),
        2 => "[a-z ]{1,12}",
        2 => "[\"\\\\/ aé🦀\r\n\t\u{0}\u{1f}]{1,8}",
        1 => any::<String>(),
    ]
}

/// An optional string field: absent, `null`, empty, or set.
fn optional_text() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        4 => Just(None),
        1 => Just(Some(Value::Null)),
        1 => Just(Some(Value::from(""))),
        4 => text().prop_map(|s| Some(Value::from(s))),
    ]
}

fn optional_list() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        3 => Just(None),
        1 => Just(Some(Value::Null)),
        3 => prop::collection::vec(text(), 0..3).prop_map(|items| Some(Value::from(items))),
    ]
}

fn extra_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON has no NaN or infinity", |f| f.is_finite())
            .prop_map(Value::from),
        prop::sample::select(&[0.1, 0.9, 0.30000000000000004, 1e21, -0.0, 5e-324][..])
            .prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
        text().prop_map(Value::from),
        (text(), any::<i32>()).prop_map(|(s, n)| json!({"z": s, "a": [n, null, {"y": 1, "b": 2}]})),
    ]
}

fn extras(keys: &'static [&'static str]) -> impl Strategy<Value = Vec<(String, Value)>> {
    prop::collection::vec((prop::sample::select(keys), extra_value()), 0..3).prop_map(|pairs| {
        // Unique keys: a JSON object with a repeated key is another matter.
        let mut seen = HashSet::new();
        pairs
            .into_iter()
            .filter(|(key, _)| seen.insert(*key))
            .map(|(key, value)| (key.to_owned(), value))
            .collect()
    })
}

/// Writes the fields in the given order, or shuffled.
fn record_line(fields: Vec<(String, Value)>) -> BoxedStrategy<Line> {
    (any::<bool>(), any::<bool>())
        .prop_flat_map(move |(shuffle, spaced)| {
            let ordered = if shuffle {
                Just(fields.clone()).prop_shuffle().boxed()
            } else {
                Just(fields.clone()).boxed()
            };
            ordered.prop_map(move |fields| Line::Record { fields, spaced })
        })
        .boxed()
}

fn memory() -> BoxedStrategy<Line> {
    let kind = prop::sample::select(&["decision", "bug-fix", "insight", "checkpoint"][..]);
    (
        (id(), timestamp(), kind, text()),
        (optional_text(), optional_list(), optional_text()),
        (optional_text(), optional_text(), optional_list()),
        extras(&["aa", "confidence", "links", "origin", "schema", "zz"]),
    )
        .prop_flat_map(
            |(
                (id, timestamp, kind, content),
                (source, tags, author),
                (branch, commit, files),
                extra,
            )| {
                let mut fields = vec![
                    ("id".to_owned(), Value::from(id)),
                    ("timestamp".to_owned(), Value::from(timestamp)),
                    ("type".to_owned(), Value::from(kind)),
                    ("content".to_owned(), Value::from(content)),
                ];
                let optional = [
                    ("source", source),
                    ("tags", tags),
                    ("author", author),
                    ("branch", branch),
                    ("commit", commit),
                    ("files", files),
                ];
                for (key, value) in optional {
                    if let Some(value) = value {
                        fields.push((key.to_owned(), value));
                    }
                }
                fields.extend(extra);
                record_line(fields)
            },
        )
        .boxed()
}

fn tombstone() -> BoxedStrategy<Line> {
    (
        id(),
        timestamp(),
        id(),
        optional_text(),
        extras(&["content", "tags", "zz"]),
    )
        .prop_flat_map(|(id, timestamp, forgets, author, extra)| {
            let mut fields = vec![
                ("id".to_owned(), Value::from(id)),
                ("timestamp".to_owned(), Value::from(timestamp)),
                ("type".to_owned(), Value::from("tombstone")),
                ("forgets".to_owned(), Value::from(forgets)),
            ];
            if let Some(author) = author {
                fields.push(("author".to_owned(), author));
            }
            fields.extend(extra);
            record_line(fields)
        })
        .boxed()
}

fn garbage() -> BoxedStrategy<Line> {
    let fixed = prop::sample::select(
        &[
            "<<<<<<< HEAD",
            "=======",
            ">>>>>>> feature/sessions",
            "not json at all",
            "[\"an\",\"array\"]",
            "{\"id\":\"01M7PX2H4MBHP5N40BAQPAAQSP\",\"content\":\"no timestamp\"}",
            "null",
        ][..],
    )
    .prop_map(|s| s.as_bytes().to_vec());
    // A record cut short, as a killed writer leaves it.
    let truncated = (memory(), any::<Index>()).prop_map(|(line, at)| {
        let bytes = line.to_bytes();
        bytes[..at.index(bytes.len())].to_vec()
    });
    let noise = prop::collection::vec(any::<u8>().prop_filter("one line", |b| *b != b'\n'), 1..12);
    prop_oneof![2 => fixed, 2 => truncated, 1 => noise]
        .prop_map(Line::Garbage)
        .boxed()
}

fn line() -> BoxedStrategy<Line> {
    prop_oneof![6 => memory(), 2 => tombstone(), 1 => garbage()].boxed()
}

fn layout() -> impl Strategy<Value = Layout> {
    let eol = prop_oneof![
        4 => Just(Eol::Lf),
        1 => Just(Eol::Crlf),
        1 => any::<u8>().prop_map(Eol::Mixed),
    ];
    (eol, prop::bool::weighted(0.85)).prop_map(|(eol, final_newline)| Layout { eol, final_newline })
}

fn edit() -> impl Strategy<Value = Edit> {
    (
        prop::collection::vec(prop::bool::weighted(0.8), 1..8),
        prop::option::weighted(0.2, (any::<Index>(), text())),
        prop::option::weighted(0.15, any::<Index>()),
        any::<bool>(),
        prop::collection::vec(line(), 0..4),
        layout(),
    )
        .prop_map(|(keep, rewrite, repeat, with_shared, added, layout)| Edit {
            keep,
            rewrite,
            repeat,
            with_shared,
            added,
            layout,
        })
}

fn inputs() -> impl Strategy<Value = Inputs> {
    (
        prop::collection::vec(line(), 0..8),
        layout(),
        prop::collection::vec(line(), 0..3),
        edit(),
        edit(),
    )
        .prop_map(|(base, base_layout, shared, ours, theirs)| Inputs {
            base: encode(&base, base_layout),
            ours: ours.apply(&base, &shared),
            theirs: theirs.apply(&base, &shared),
        })
}

// ---------------------------------------------------------------------------
// Reading logs back, independently of the merge
// ---------------------------------------------------------------------------

/// The record a line spells: its canonical line, or the raw bytes of a line
/// that is not a record.
fn element(raw: &[u8]) -> Vec<u8> {
    match Entry::parse(raw) {
        Ok(entry) => entry.to_line().into_bytes(),
        Err(_) => raw.to_vec(),
    }
}

/// How many times each line occurs, by its raw bytes.
fn line_counts(bytes: &[u8]) -> HashMap<Vec<u8>, usize> {
    let mut counts = HashMap::new();
    for (_, raw) in split_lines(bytes) {
        *counts.entry(raw.to_vec()).or_default() += 1;
    }
    counts
}

/// How many times each record (canonically) or invalid line occurs.
fn element_counts(bytes: &[u8]) -> HashMap<Vec<u8>, usize> {
    let mut counts = HashMap::new();
    for (_, raw) in split_lines(bytes) {
        *counts.entry(element(raw)).or_default() += 1;
    }
    counts
}

/// The multiset rule: what both sides have, plus what the side with more
/// added beyond the base.
fn expected_copies(base: usize, ours: usize, theirs: usize) -> usize {
    let (low, high) = (ours.min(theirs), ours.max(theirs));
    low + high.saturating_sub(base.max(low))
}

fn count(counts: &HashMap<Vec<u8>, usize>, key: &[u8]) -> usize {
    counts.get(key).copied().unwrap_or(0)
}

/// The output's lines, each with its terminating `\n` removed.
fn output_lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes
        .strip_suffix(b"\n")
        .map(|body| body.split(|&b| b == b'\n').collect())
        .unwrap_or_default()
}

fn canonical(log: &[u8]) -> Vec<u8> {
    merge(log, log, log).bytes
}

fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    #[test]
    fn merge_is_commutative(inputs in inputs()) {
        let Inputs { base, ours, theirs } = &inputs;
        prop_assert_eq!(
            show(&merge(base, ours, theirs).bytes),
            show(&merge(base, theirs, ours).bytes)
        );
    }

    #[test]
    fn merging_a_side_with_itself_or_the_base_gives_the_side_sorted(inputs in inputs()) {
        let Inputs { base, ours, theirs } = &inputs;
        for side in [ours, theirs] {
            let expected = show(&canonical(side));
            prop_assert_eq!(show(&merge(base, side, side).bytes), expected.clone());
            prop_assert_eq!(show(&merge(base, base, side).bytes), expected.clone());
            prop_assert_eq!(show(&merge(base, side, base).bytes), expected);
        }
    }

    #[test]
    fn merge_is_lossless(inputs in inputs()) {
        let Inputs { base, ours, theirs } = &inputs;
        let out_bytes = merge(base, ours, theirs).bytes;
        let (out, b, o, t) = (
            element_counts(&out_bytes),
            element_counts(base),
            element_counts(ours),
            element_counts(theirs),
        );
        let (out_lines, b_lines, o_lines, t_lines) = (
            line_counts(&out_bytes),
            line_counts(base),
            line_counts(ours),
            line_counts(theirs),
        );
        // A record (whatever its spelling) or an invalid line is kept exactly
        // as often as the multiset rule says, unless its spellings, each
        // counted alone, add up to fewer.
        for element in o.keys().chain(t.keys()).chain(b.keys()) {
            let wanted = expected_copies(count(&b, element), count(&o, element), count(&t, element));
            let spelled: usize = o_lines
                .keys()
                .chain(t_lines.keys().filter(|line| !o_lines.contains_key(*line)))
                .filter(|line| &self::element(line) == element)
                .map(|line| expected_copies(count(&b_lines, line), count(&o_lines, line), count(&t_lines, line)))
                .sum();
            prop_assert_eq!(
                count(&out, element),
                wanted.min(spelled),
                "wrong number of copies of {}",
                show(element)
            );
        }
        // Nothing else.
        for element in out.keys() {
            prop_assert!(o.contains_key(element) || t.contains_key(element), "invented {}", show(element));
        }
        // No spelling is kept more often than the rule allows it alone.
        for (line, &copies) in &out_lines {
            let allowed = expected_copies(count(&b_lines, line), count(&o_lines, line), count(&t_lines, line));
            prop_assert!(copies <= allowed, "{} kept {} times, allowed {}", show(line), copies, allowed);
        }
    }

    #[test]
    fn every_output_line_is_a_line_of_a_side_byte_for_byte(inputs in inputs()) {
        let Inputs { base, ours, theirs } = &inputs;
        let merged = merge(base, ours, theirs);
        let (o_lines, t_lines) = (line_counts(ours), line_counts(theirs));
        prop_assert!(merged.bytes.is_empty() || merged.bytes.ends_with(b"\n"));
        for line in output_lines(&merged.bytes) {
            prop_assert!(!line.ends_with(b"\r"), "CR left at the end of {:?}", show(line));
            prop_assert!(!line.iter().all(u8::is_ascii_whitespace), "blank output line");
            prop_assert!(
                o_lines.contains_key(line) || t_lines.contains_key(line),
                "output line {:?} is in neither side",
                show(line)
            );
        }
    }

    #[test]
    fn every_line_of_a_side_that_survives_is_byte_identical(inputs in inputs()) {
        let Inputs { base, ours, theirs } = &inputs;
        let out = line_counts(&merge(base, ours, theirs).bytes);
        let (b_lines, o_lines, t_lines) = (line_counts(base), line_counts(ours), line_counts(theirs));
        // How many spellings each record has across the three inputs.
        let mut spellings: HashMap<Vec<u8>, HashSet<Vec<u8>>> = HashMap::new();
        for line in b_lines.keys().chain(o_lines.keys()).chain(t_lines.keys()) {
            spellings.entry(element(line)).or_default().insert(line.clone());
        }
        for line in o_lines.keys().chain(t_lines.keys()) {
            let (n_base, n_ours, n_theirs) =
                (count(&b_lines, line), count(&o_lines, line), count(&t_lines, line));
            let unchanged = n_base == n_ours && n_base == n_theirs;
            let added_and_unique = n_base == 0 && spellings[&element(line)].len() == 1;
            if unchanged {
                prop_assert_eq!(count(&out, line), n_base, "unchanged line not kept as is: {}", show(line));
            } else if added_and_unique {
                prop_assert_eq!(
                    count(&out, line),
                    n_ours.max(n_theirs),
                    "added line lost or rewritten: {}",
                    show(line)
                );
            }
        }
    }

    #[test]
    fn output_is_a_fixed_point(inputs in inputs()) {
        let Inputs { base, ours, theirs } = &inputs;
        let out = merge(base, ours, theirs).bytes;
        prop_assert_eq!(show(&canonical(&out)), show(&out));
    }

    #[test]
    fn output_is_sorted(inputs in inputs()) {
        let Inputs { base, ours, theirs } = &inputs;
        let out = merge(base, ours, theirs).bytes;
        // Records by (timestamp, id, line), then the other lines by bytes;
        // a line repeats only as often as a side has it.
        let keys: Vec<(u8, String, String, &[u8])> = output_lines(&out)
            .into_iter()
            .map(|line| match Entry::parse(line) {
                Ok(entry) => (0, entry.timestamp().to_owned(), entry.id().to_owned(), line),
                Err(_) => (1, String::new(), String::new(), line),
            })
            .collect();
        for pair in keys.windows(2) {
            prop_assert!(pair[0] <= pair[1], "out of order: {:?} then {:?}",
                show(pair[0].3), show(pair[1].3));
        }
        let (o_lines, t_lines) = (line_counts(ours), line_counts(theirs));
        for (line, copies) in line_counts(&out) {
            let most = count(&o_lines, &line).max(count(&t_lines, &line));
            prop_assert!(copies <= most, "{} kept {} times, a side has it {} times", show(&line), copies, most);
        }
    }

    #[test]
    fn notices_name_each_kept_invalid_line_and_divergent_id(inputs in inputs()) {
        let Inputs { base, ours, theirs } = &inputs;
        let Merged { bytes, notices } = merge(base, ours, theirs);
        let mut versions_per_id: HashMap<String, HashSet<String>> = HashMap::new();
        let mut invalid = HashSet::new();
        for line in output_lines(&bytes) {
            match Entry::parse(line) {
                Ok(entry) => {
                    versions_per_id.entry(entry.id().to_owned()).or_default().insert(entry.to_line());
                }
                Err(_) => {
                    invalid.insert(line);
                }
            }
        }
        let divergent: BTreeSet<&str> = versions_per_id
            .iter()
            .filter(|(_, versions)| versions.len() > 1)
            .map(|(id, _)| id.as_str())
            .collect();
        let reported: Vec<&str> = notices
            .iter()
            .filter_map(|notice| match notice {
                Notice::DivergentRecord { id } => Some(id.as_str()),
                Notice::KeptInvalidLine { .. } => None,
            })
            .collect();
        prop_assert_eq!(
            reported.len(),
            divergent.len(),
            "divergence notices for {:?}, ids with several versions: {:?}",
            reported,
            divergent
        );
        prop_assert_eq!(reported.into_iter().collect::<BTreeSet<_>>(), divergent);
        let kept_invalid = notices
            .iter()
            .filter(|notice| matches!(notice, Notice::KeptInvalidLine { .. }))
            .count();
        prop_assert_eq!(kept_invalid, invalid.len());
    }
}
