//! A note's body as markdown: normalised, and cut into memories at headings
//! (then paragraphs, then lines), with a CommonMark parser telling
//! headings and code apart.

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
pub(super) fn heading_text(line: &str) -> Option<&str> {
    let hashes = line.len() - line.trim_start_matches('#').len();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &line[hashes..];
    (rest.is_empty() || rest.starts_with(' ')).then(|| rest.trim().trim_end_matches('#').trim())
}

/// `body` in parts of at most `limit` bytes headed `label (part i/n)`.
pub(super) fn split_labelled(label: &str, body: &str, limit: usize) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizing_keeps_code_blocks() {
        assert_eq!(
            normalize("\n\n a  \n\n\n\nb\n```\nx\n\n\ny\n```\n\n\n"),
            " a\n\nb\n```\nx\n\n\ny\n```"
        );
    }

    #[test]
    fn sections_start_at_headings_a_markdown_parser_sees() {
        let starts =
            heading_starts("Title\n=====\n\ntext\n\n- # in a list\n\n> # quoted\n\n## Two\n");
        let mut starts: Vec<usize> = starts.into_iter().collect();
        starts.sort();
        let text = "Title\n=====\n\ntext\n\n- # in a list\n\n> # quoted\n\n## Two\n";
        assert_eq!(starts, vec![0, text.find("## Two").unwrap()]);
    }
}
