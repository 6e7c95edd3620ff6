//! What never leaves the agent's machine: `<private>…</private>` spans and
//! anything the secret rules of `store` flag.

use crate::domain::memory::secrets;

const OPEN: &str = "<private>";
const CLOSE: &str = "</private>";

/// `text` without its `<private>…</private>` spans (tags in any case); an
/// unclosed span hides everything after it.
pub fn strip_private(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut kept = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(start) = lower[at..].find(OPEN).map(|i| at + i) {
        kept.push_str(&text[at..start]);
        match lower[start..].find(CLOSE) {
            Some(end) => at = start + end + CLOSE.len(),
            None => return kept,
        }
    }
    kept.push_str(&text[at..]);
    kept
}

/// Marks a line that held a secret.
pub const SECRET_REMOVED: &str = "[secret removed]";

/// `text` with every line that looks like it holds a secret replaced by
/// [`SECRET_REMOVED`], and whether one was.
pub fn remove_secrets(text: &str) -> (String, bool) {
    if secrets::scan(text).is_none() {
        return (text.to_owned(), false);
    }
    let lines: Vec<&str> = text
        .lines()
        .map(|line| match secrets::scan(line) {
            Some(_) => SECRET_REMOVED,
            None => line,
        })
        .collect();
    let cleaned = lines.join("\n");
    // A secret split across lines (a PEM block) is caught whole but not by
    // line: then nothing of the text is kept.
    if secrets::scan(&cleaned).is_some() {
        return (SECRET_REMOVED.to_owned(), true);
    }
    (cleaned, true)
}

/// At most `max` bytes of `text`, cut at a character boundary, keeping the
/// head and the tail (errors are often at the end of an output).
pub fn clip_middle(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let head = floor_boundary(text, max / 4);
    let tail = ceil_boundary(text, text.len() - (max - head));
    format!("{}\n[… cut …]\n{}", &text[..head], &text[tail..])
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_spans_are_removed_in_any_case_and_unclosed_ones_to_the_end() {
        assert_eq!(strip_private("a <private>b</private> c"), "a  c");
        assert_eq!(strip_private("a <PRIVATE>b\nc</Private>d"), "a d");
        assert_eq!(strip_private("a <private>b</private>c<private>d"), "a c");
        assert_eq!(strip_private("é <private>ü"), "é ");
    }

    #[test]
    fn secret_lines_are_replaced_and_others_kept() {
        let text = "error: auth failed\nexport GITHUB_TOKEN=ghp_aaaaBBBBccccDDDDeeeeFFFFgggg0123456789\nat line 3";
        let (cleaned, found) = remove_secrets(text);
        assert!(found);
        assert_eq!(
            cleaned,
            format!("error: auth failed\n{SECRET_REMOVED}\nat line 3")
        );
        assert_eq!(remove_secrets("plain"), ("plain".to_owned(), false));
    }

    #[test]
    fn clipping_keeps_head_and_tail_at_char_boundaries() {
        let text = "é".repeat(100);
        let clipped = clip_middle(&text, 41);
        assert!(clipped.len() <= 41 + "\n[… cut …]\n".len());
        assert!(clipped.starts_with('é') && clipped.ends_with('é'));
    }
}
