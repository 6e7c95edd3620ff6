//! Word rarity does not depend on the home: the same questions in the same
//! repository rank byte for byte the same (`recall --json`, keyword and
//! hybrid) in a home holding 1 other repository and in one holding 50
//! (issue 59). The other repositories hold the question's words at
//! frequencies of their own, which moved rankings while BM25's statistics
//! were the whole home's.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::TestEnv;

/// The questions, asked in the project repository.
const QUESTIONS: [&str; 6] = [
    "What is database.pool_max set to for the api pods now?",
    "why is CI slow cargo build cache",
    "flaky integration test database",
    "retry timeout on the payment webhook",
    "which migration added the index",
    "deadlock in the worker queue",
];

/// fixtures/eval/'s memories, as JSON values.
fn project_memories() -> Vec<serde_json::Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/eval");
    fs::read_to_string(root.join("memories.jsonl"))
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// A repository `name` whose memory log holds `memories` (ids made
/// unique to it by `tag`), committed and synced.
fn repo_of(env: &TestEnv, name: &str, tag: usize, memories: &[serde_json::Value]) -> PathBuf {
    let repo = env.repo(name, "Ada");
    let mut lines = String::new();
    for (n, memory) in memories.iter().enumerate() {
        let mut memory = memory.clone();
        memory["id"] = format!("01KAJ{tag:09}{n:012}").into();
        // The commit's author is the memory's (no quarantine).
        memory.as_object_mut().unwrap().remove("author");
        lines.push_str(&memory.to_string());
        lines.push('\n');
    }
    fs::write(repo.join(".goldfish/memories/2026-10-05.jsonl"), lines).unwrap();
    env.commit_all(&repo, "memories");
    env.ok(&repo, &["sync"]);
    repo
}

/// A home holding the project (all of fixtures/eval/, in `project/`) and
/// `others` other repositories, each a different slice of the same
/// memories, with one of the questions' words repeated, so each word is
/// common in some homes and rare in others.
fn home_with(others: usize) -> (TestEnv, PathBuf) {
    let env = TestEnv::new().with_fake_model();
    let memories = project_memories();
    let project = repo_of(&env, "project", 0, &memories);
    let words = ["database", "cache", "test", "timeout", "index", "queue"];
    for k in 1..=others {
        let mut slice: Vec<serde_json::Value> = (0..12)
            .map(|j| memories[(k * 7 + j * 13) % memories.len()].clone())
            .collect();
        let word = words[k % words.len()];
        for _ in 0..k % 5 {
            slice.push(serde_json::json!({
                "id": "", "timestamp": "2026-10-05T08:00:00.000Z", "type": "observation",
                "content": format!("{word} {word} notes on the {word}"),
            }));
        }
        repo_of(&env, &format!("other-{k:02}"), k, &slice);
    }
    (env, project)
}

/// The project's answers to [`QUESTIONS`] in `mode`, as printed.
fn answers(env: &TestEnv, project: &Path, mode: &str) -> Vec<String> {
    QUESTIONS
        .iter()
        .map(|question| {
            env.ok(
                project,
                &[
                    "recall", "--json", "--mode", mode, "-n", "10", "--", question,
                ],
            )
        })
        .collect()
}

#[test]
fn issue_59_the_same_repository_ranks_the_same_whatever_else_the_home_holds() {
    let (one, project_one) = home_with(1);
    let (fifty, project_fifty) = home_with(50);
    for mode in ["keyword", "hybrid"] {
        let a = answers(&one, &project_one, mode);
        let b = answers(&fifty, &project_fifty, mode);
        for ((question, a), b) in QUESTIONS.iter().zip(&a).zip(&b) {
            assert!(a.lines().count() >= 3, "{mode} {question}: answers\n{a}");
            assert_eq!(
                a, b,
                "{mode} {question}: a home of 1 other repository, and of 50"
            );
        }
    }
}
