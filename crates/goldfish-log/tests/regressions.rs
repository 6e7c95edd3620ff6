//! Bugs found by the property tests, pinned down as plain examples.

use goldfish_log::merge::{Notice, merge};

fn canonical(log: &[u8]) -> Vec<u8> {
    merge(log, log, log).bytes
}

fn memory(id: &str, timestamp: &str, content: &str) -> String {
    format!(
        r#"{{"id":"{id}","timestamp":"{timestamp}","type":"checkpoint","content":"{content}"}}"#
    )
}

/// serde_json's default float parser may be off by one ulp, so a float written
/// by the canonical serializer could read back as a neighbour and print
/// differently: every merge would rewrite the line. Needs `float_roundtrip`.
#[test]
fn a_float_in_an_unknown_field_survives_repeated_merges() {
    for value in [
        "1.6180339887498947",
        "0.30000000000000004",
        "8.646303513953718e-193",
    ] {
        let line = format!(
            r#"{{"id":"01M7PX2H4MBHP5N40BAQPAAQSP","timestamp":"2026-11-21T09:14:03.512Z","type":"insight","content":"c","score":{value}}}"#
        );
        let log = format!("{line}\n").into_bytes();
        assert_eq!(
            String::from_utf8_lossy(&canonical(&log)),
            format!("{line}\n")
        );
    }
}

/// A line ending in `\r\r\n` (a CRLF file converted twice) used to keep one
/// `\r`; written back with `\n` it became `\r\n`, which the next read strips:
/// the output was not a fixed point.
#[test]
fn an_invalid_line_with_extra_carriage_returns_is_stable() {
    let once = canonical(b"<<<<<<< HEAD\r\r\n");
    assert_eq!(once, b"<<<<<<< HEAD\n");
    assert_eq!(canonical(&once), once);
}

/// Both sides rewrote a record and one also changed its timestamp, so the two
/// versions are not adjacent once sorted: the divergence must still be
/// reported, once.
#[test]
fn divergent_versions_with_different_timestamps_are_reported() {
    let id = "01M7TF56HTXYSYX7ZQ4S7XNK6B";
    let other = memory(
        "01M7W3NP8FKCG0SQYKM1Y8T8YE",
        "2026-11-20T09:12:48.655Z",
        "between",
    );
    let base = format!(
        "{}\n{other}\n",
        memory(id, "2026-11-19T17:55:02.330Z", "v1")
    );
    let ours = format!(
        "{}\n{other}\n",
        memory(id, "2026-11-19T17:55:02.330Z", "v2")
    );
    let theirs = format!(
        "{}\n{other}\n{}\n",
        memory(id, "2026-11-20T18:30:00.000Z", "v3"),
        memory(id, "2026-11-21T08:00:00.000Z", "v4")
    );
    let merged = merge(base.as_bytes(), ours.as_bytes(), theirs.as_bytes());
    assert_eq!(merged.bytes.iter().filter(|&&b| b == b'\n').count(), 4);
    assert_eq!(
        merged.notices,
        vec![Notice::DivergentRecord { id: id.into() }]
    );
}
