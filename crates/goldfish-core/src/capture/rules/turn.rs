//! What a turn of a session says, read from the person's requests and the
//! agent's answers: the sentences that state a cause, a decision or a
//! result and name an identifier (what a teammate needs of the turn), the
//! sentences that say why a fix fixed, and the next step.

/// What the transcript shows of the turns since the last `Stop` (an
/// interrupted turn has no `Stop` of its own: its request and answers come
/// with the next one), and what the files are now. The caller leaves out
/// whole every text that read as an order to an agent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Turn {
    /// What the person typed, in order.
    pub requests: Vec<String>,
    /// What the agent answered, in order; the last is the turn's answer.
    pub answers: Vec<String>,
    /// Files the session changed that hold again what they held before it
    /// (put back by the agent, the person or git): no work done.
    pub unchanged: Vec<String>,
    /// What the turn's compaction summaries say the session learned: the
    /// sections [`compaction_sections`] keeps, each cleared of orders
    /// whole by the caller.
    pub compacted: Vec<String>,
}

/// How a sentence serves a teammate, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Said {
    Cause,
    Decision,
    Result,
}

/// Words that say why: a cause, a constraint, what went wrong.
const CAUSE: &[&str] = &[
    "because",
    "caused",
    "cause ",
    "root cause",
    "the issue was",
    "the issue is",
    "the problem was",
    "the problem is",
    "the bug was",
    "the bug is",
    "due to",
    "which meant",
    "which means",
    "so that",
    " since ",
    "doesn't",
    "does not",
    "didn't",
    "did not",
    "don't",
    "wasn't",
    "isn't",
    "never",
    "must ",
    "cannot",
    "can't",
    "unstable",
    "requires",
    "only when",
    "only if",
    "fails when",
    "instead of",
];

/// Words that say a choice was made.
const DECISION: &[&str] = &[
    "decided",
    "chose",
    "we'll use",
    "switched to",
    "went with",
    "opted",
    "rather than",
    "prefer",
];

/// Words that say what came of the work.
const RESULT: &[&str] = &[
    "fixed",
    "now ",
    "resolved",
    "all tests pass",
    "tests pass",
    "passes",
    "added",
    "renamed",
    "removed",
    "moved",
];

/// Sentences starting so are the agent's plans and narration, not findings.
const NARRATION: &[&str] = &[
    "let me",
    "i'll",
    "i will",
    "i'm going",
    "now let",
    "let's",
    "first,",
    "next, i",
    "i need to",
    "i should",
    "perfect",
    "great",
    "excellent",
];

/// Characters of one sentence kept.
const MAX_SENTENCE: usize = 240;

/// A text's sentences, each one line, markdown list marks and emphasis
/// left out; code spans kept whole.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        if block.trim_start().starts_with("```") {
            continue;
        }
        for line in block.lines() {
            let line = line
                .trim()
                .trim_start_matches(['-', '*', '#', '>', '•'])
                .trim_start();
            let line = line.trim_start_matches(|c: char| c.is_ascii_digit());
            let line = line.strip_prefix(". ").unwrap_or(line).trim();
            if line.is_empty() || line.starts_with('|') || line.starts_with("```") {
                continue;
            }
            let mut start = 0;
            let mut in_code = false;
            let bytes: Vec<(usize, char)> = line.char_indices().collect();
            for (k, (at, c)) in bytes.iter().enumerate() {
                if *c == '`' {
                    in_code = !in_code;
                }
                let next = bytes.get(k + 1).map(|(_, c)| *c);
                if !in_code && matches!(c, '.' | '!' | '?') && next.is_none_or(char::is_whitespace)
                {
                    push_sentence(&mut out, &line[start..at + c.len_utf8()]);
                    start = at + c.len_utf8();
                }
            }
            push_sentence(&mut out, &line[start..]);
        }
    }
    out
}

fn push_sentence(out: &mut Vec<String>, sentence: &str) {
    let sentence = sentence.replace("**", "");
    let sentence = sentence.trim();
    if sentence.chars().filter(|c| c.is_alphanumeric()).count() >= 12 {
        out.push(super::clip(sentence, MAX_SENTENCE));
    }
}

/// Whether a sentence names something of the code: a code span, a path
/// or file name, a `::`/`.` path, a snake_case or camelCase name, an error
/// code.
pub fn names_identifier(sentence: &str) -> bool {
    if sentence.contains('`') {
        return true;
    }
    sentence
        .split(|c: char| c.is_whitespace() || "(),;:\"'".contains(c))
        .map(|word| word.trim_end_matches(['.', '!', '?']))
        .any(|word| {
            let file = word.rsplit_once('.').is_some_and(|(stem, ext)| {
                !stem.is_empty()
                    && (1..=5).contains(&ext.len())
                    && ext.bytes().all(|b| b.is_ascii_lowercase())
                    && stem.bytes().any(|b| b.is_ascii_alphabetic())
            });
            let inner_capital = word
                .char_indices()
                .skip(1)
                .any(|(_, c)| c.is_ascii_uppercase())
                && word.chars().next().is_some_and(char::is_alphabetic)
                && word.chars().all(|c| c.is_alphanumeric() || c == '_');
            let error_code = word.len() >= 5
                && (word.starts_with('E') || word.starts_with("TS"))
                && word.trim_start_matches(['E', 'T', 'S']).len() >= 4
                && word
                    .trim_start_matches(['E', 'T', 'S'])
                    .bytes()
                    .all(|b| b.is_ascii_digit());
            file || word.contains("::")
                || word.contains('_') && word.len() > 3
                || inner_capital
                || word.contains('/') && word.len() > 3
                || error_code
        })
}

/// What a sentence says, when it is worth a teammate's reading: a cause,
/// a decision or a result that names an identifier; not the agent's
/// narration of what it is about to do, nor a question.
pub fn said(sentence: &str) -> Option<Said> {
    let lower = sentence.to_lowercase();
    if sentence.ends_with('?')
        || NARRATION.iter().any(|start| lower.starts_with(start))
        // What the agent is about to do, wherever it says so.
        || [" i'll ", " let me ", " i will ", " i'm going to "]
            .iter()
            .any(|plan| format!(" {lower}").contains(plan))
        || !names_identifier(sentence)
    {
        return None;
    }
    // Punctuation read as spaces: `now.` is `now `.
    let words: String = format!(" {lower} ")
        .chars()
        .map(|c| if ".,;:!?()".contains(c) { ' ' } else { c })
        .collect();
    let has = |list: &[&str]| list.iter().any(|word| words.contains(word));
    if has(CAUSE) {
        Some(Said::Cause)
    } else if has(DECISION) {
        Some(Said::Decision)
    } else if has(RESULT) {
        Some(Said::Result)
    } else {
        None
    }
}

/// The sentences of `answers` that say why a fix of `names` (its files'
/// names, its functions and tests) fixed: causes that name one of them.
pub fn why(answers: &[String], names: &[String], limit: usize) -> Vec<String> {
    let names: Vec<String> = names
        .iter()
        .filter(|name| name.len() >= 3)
        .map(|name| name.to_lowercase())
        .collect();
    let mut found: Vec<String> = Vec::new();
    for sentence in answers.iter().flat_map(|answer| sentences(answer)) {
        let lower = sentence.to_lowercase();
        if said(&sentence) == Some(Said::Cause)
            && names.iter().any(|name| lower.contains(name.as_str()))
            && !found.contains(&sentence)
        {
            found.push(sentence);
        }
    }
    // The last ones said: an answer's explanation comes after the work.
    let skip = found.len().saturating_sub(limit);
    found.split_off(skip)
}

/// Words that open the sentence saying what comes next.
const NEXT: &[&str] = &[
    "next",
    "todo",
    "remaining",
    "still to do",
    "left to do",
    "follow-up",
    "still need",
    "what's left",
];

/// The sentence of an answer that says the next step, if one does.
pub fn next_step(answer: &str) -> Option<String> {
    sentences(answer).into_iter().find(|sentence| {
        let lower = sentence.to_lowercase();
        NEXT.iter().any(|word| {
            lower.starts_with(word)
                || lower.contains(&format!(" {word}:"))
                || lower.contains("next step")
        })
    })
}

/// The sections of Claude Code's compaction summary, as its compaction
/// prompt names them: a heading at a line's start, numbered, with a colon
/// (`4. Errors and fixes:`, in markdown `## 4. Errors and fixes`).
const SUMMARY_SECTIONS: [&str; 9] = [
    "primary request and intent",
    "key technical concepts",
    "files and code sections",
    "errors and fixes",
    "problem solving",
    "all user messages",
    "pending tasks",
    "current work",
    "optional next step",
];

/// The sections of a compaction summary that say what the session
/// learned: its errors and how they were fixed, its problems solved. Not
/// its tasks, current work or next step, which the turns after the
/// compaction change; not the requests, which the transcript holds as
/// typed. Empty for a text not shaped so.
pub fn compaction_sections(summary: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut keeping = false;
    for line in summary.lines() {
        if let Some(section) = summary_heading(line) {
            keeping = matches!(section, "errors and fixes" | "problem solving");
            if keeping {
                found.push(String::new());
            }
            continue;
        }
        if keeping && let Some(text) = found.last_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    found.retain(|text| !text.trim().is_empty());
    found
}

/// The section a line heads, when it is a heading of [`SUMMARY_SECTIONS`].
fn summary_heading(line: &str) -> Option<&'static str> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let line = line.trim_start_matches('#').trim().trim_matches('*');
    let rest = line.trim_start_matches(|c: char| c.is_ascii_digit());
    if rest.len() == line.len() {
        return None;
    }
    let title = rest.strip_prefix('.')?.trim();
    let title = title.trim_end_matches(['*', ':']).trim().to_lowercase();
    SUMMARY_SECTIONS
        .iter()
        .find(|section| title.starts_with(*section))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_are_causes_decisions_and_results_that_name_code() {
        let answer = "Let me check `Config::load` first.\n\nThe issue was that `Bun.spawn` does not throw on a non-zero exit, so a failed checkout was ignored. I switched to `spawnSync` rather than wrapping it. Now `engine.ts` checks `exitCode`. Great, everything works!\n\n```ts\nconst x = 1.5;\n```\nWhat should I do next?";
        let found: Vec<(String, Option<Said>)> = sentences(answer)
            .into_iter()
            .map(|s| {
                let said = said(&s);
                (s, said)
            })
            .collect();
        let kept: Vec<&(String, Option<Said>)> =
            found.iter().filter(|(_, said)| said.is_some()).collect();
        assert_eq!(kept.len(), 3, "{found:#?}");
        assert_eq!(kept[0].1, Some(Said::Cause));
        assert!(kept[0].0.starts_with("The issue was that `Bun.spawn`"));
        assert_eq!(kept[1].1, Some(Said::Decision));
        assert_eq!(kept[2].1, Some(Said::Result));
        // Plain prose names nothing of the code.
        assert_eq!(said("This was failing because the value was wrong."), None);
        assert!(names_identifier("see error E0603 here"));
        assert!(names_identifier("in config.rs the leeway"));
        assert!(!names_identifier("Done. All good now."));
    }

    #[test]
    fn why_is_the_cause_that_names_what_the_fix_changed() {
        let answers = vec![
            "I'll look at the tests.".to_owned(),
            "The root cause: `load_config` never reads XDG_CONFIG_HOME, because config.rs joins HOME first. Fixed it.".to_owned(),
        ];
        let why = why(&answers, &["config.rs".to_owned()], 2);
        assert_eq!(
            why,
            [
                "The root cause: `load_config` never reads XDG_CONFIG_HOME, because config.rs joins HOME first."
            ]
        );
        assert!(super::why(&answers, &["ui.rs".to_owned()], 2).is_empty());
        assert_eq!(
            next_step("Ported it. Next: wire the layout into the CLI.").as_deref(),
            Some("Next: wire the layout into the CLI.")
        );
    }

    #[test]
    fn a_compaction_summary_gives_its_errors_and_fixes_and_problems_solved() {
        let summary = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\n1. Primary Request and Intent:\n   - Fix the flaky env tests\n2. Key Technical Concepts:\n   - Rust, cargo test\n4. Errors and fixes:\n   - `test_home` failed at random because `env::set_var` races across threads. Fixed by a `static ENV_LOCK: Mutex<()>` in tests/common.rs.\n   1. nested list item stays in the section\n5. Problem Solving:\n   - The worktree under .claude/ must not be committed.\n7. Pending Tasks:\n   - Update `README.md`\n9. Optional Next Step:\n   - Run the suite again.";
        let sections = compaction_sections(summary);
        assert_eq!(sections.len(), 2, "{sections:#?}");
        assert!(sections[0].contains("ENV_LOCK"), "{sections:#?}");
        assert!(sections[0].contains("nested list item"), "{sections:#?}");
        assert!(sections[1].contains("worktree"), "{sections:#?}");
        assert!(!sections.concat().contains("README"), "{sections:#?}");
        // Markdown headings read the same; other text gives nothing.
        let markdown = "## 4. Errors and fixes\n- `parse_args` panicked on an empty flag because `split_once` returned None.\n## 6. All user messages\n- hi";
        assert_eq!(compaction_sections(markdown).len(), 1);
        assert!(compaction_sections("Errors and fixes: none. 4. Errors and fixes: x").is_empty());
    }
}
