//! Plain-text pieces both front ends (and the operations' messages) use:
//! one-line excerpts of memories, counts, and the escaping that keeps what a
//! memory holds from acting on a terminal.

use crate::index::search::IndexedMemory;

/// `ID  DATE TIME  TYPE  AUTHOR  [tags]  (flagged: …)` then the content,
/// indented, then the files: one memory as text.
pub fn memory_text(m: &IndexedMemory, show_workspace: bool) -> String {
    let when = m
        .timestamp
        .get(..16)
        .unwrap_or(&m.timestamp)
        .replace('T', " ");
    let mut text = format!("{}  {when}  {}", m.id, m.kind);
    if show_workspace {
        text.push_str(&format!("  @{}", m.workspace));
    }
    if let Some(author) = &m.author {
        text.push_str(&format!("  {author}"));
    }
    if !m.tags.is_empty() {
        text.push_str(&format!("  [{}]", m.tags.join(", ")));
    }
    if !m.flags.is_empty() {
        // Marked, so a reader does not take it at face value: see
        // `goldfish doctor`.
        text.push_str(&format!("  (flagged: {})", m.flags.join(", ")));
    }
    text.push('\n');
    for line in m.content.lines() {
        text.push_str(&format!("    {line}\n"));
    }
    if !m.files.is_empty() {
        text.push_str(&format!("    files: {}\n", m.files.join(", ")));
    }
    text
}

/// `0.97 similar to ID (DATE): excerpt`: a near-duplicate `store` found.
pub fn near_duplicate(m: &IndexedMemory, width: usize) -> String {
    format!(
        "{:.2} similar to {} ({}): {}",
        m.similarity.unwrap_or(0.0),
        m.id,
        m.timestamp.get(..10).unwrap_or(&m.timestamp),
        excerpt(&m.content, width)
    )
}

/// `SIMILARITY  ID  DATE  excerpt` for `similar`.
pub fn similar_line(m: &IndexedMemory, width: usize) -> String {
    format!(
        "{:.2}  {}  {}  {}",
        m.similarity.unwrap_or(0.0),
        m.id,
        m.timestamp.get(..10).unwrap_or(&m.timestamp),
        excerpt(&m.content, width)
    )
}

/// The first `max` characters of `text`, on one line.
fn excerpt(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    // Printed on stderr too (a near duplicate at store): never raw controls.
    let flat = terminal_safe(&flat).into_owned();
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max).collect();
    format!("{cut}…")
}

/// Whether a character would act on a terminal instead of showing: C0
/// controls other than newline and tab, DEL, C1 controls, and the marks that
/// reorder text (bidi overrides, isolates and marks).
fn acts_on_terminal(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every character that would act on a terminal written as a
/// visible escape: `\r`, or `\uXXXX` (as JSON writes it, so a JSON line stays
/// valid and means the same).
pub fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(acts_on_terminal) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            c if acts_on_terminal(c) => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `n` and the noun in the number it takes: "1 memory", "2 memories".
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// [`count`] of memories.
pub fn memories(n: impl Into<u64>) -> String {
    count(n, "memory", "memories")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_marks_are_escaped_visibly() {
        assert_eq!(terminal_safe("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(
            terminal_safe("a\u{1b}[2Jb\rc\u{7}\u{9b}d\u{202e}e"),
            "a\\u001b[2Jb\\rc\\u0007\\u009bd\\u202ee"
        );
    }
}
