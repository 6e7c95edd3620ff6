//! Digests within a token budget, for `recall --budget` and the briefing:
//! the LLM's (cached), else the extractive one; and the token counter.

use anyhow::Context;

use super::session::{Need, Session};
use super::{AppError, Arg};
use crate::adapters::embed::Embedder;
use crate::adapters::env;
use crate::adapters::index::Index;
use crate::domain::digest::{Source, TokenCounter};
use crate::domain::recalled::IndexedMemory;

/// How `--budget` distils.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distill {
    /// The configured LLM command (an error without one).
    Llm,
    /// The extractive digest.
    Extractive,
    /// The LLM when a command is configured, else extractive.
    Auto,
}

/// A digest and what it was made from.
pub struct Digested {
    pub report: DigestReport,
    pub hits: Vec<IndexedMemory>,
    pub budget: usize,
    /// The tokenizer the budget was counted with.
    pub tokenizer: String,
}

/// A digest as recall reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct DigestReport {
    pub text: String,
    pub tokens: usize,
    pub tokens_of_sources: usize,
    /// Extractive digests: each sentence with its memory.
    pub sentences: Vec<crate::domain::digest::Picked>,
    /// `llm` or `extractive`.
    pub distill: &'static str,
    /// Why the LLM's answer was not used, when it was asked.
    pub fallback_reason: Option<String>,
    /// Whether the LLM digest came from the cache.
    pub cached: bool,
}

/// The LLM command to distil with, if `distill` wants one and it is set.
pub(super) fn llm_command<'c>(
    distill: Distill,
    command: Option<&'c (String, std::time::Duration)>,
    session: &Session,
) -> Result<Option<&'c (String, std::time::Duration)>, AppError> {
    match (distill, command) {
        (Distill::Extractive, _) | (Distill::Auto, None) => Ok(None),
        (Distill::Llm | Distill::Auto, Some(command)) => Ok(Some(command)),
        (Distill::Llm, None) => Err(AppError::arg(
            Arg::Distill,
            format!(
                "llm: no distill command is configured; set {} (e.g. `claude -p`) or `[distill] command` in {}",
                env::GOLDFISH_DISTILL_COMMAND,
                session.home.config_path().display()
            ),
        )),
    }
}

/// What a digest is made of.
pub struct DigestJob<'a> {
    pub query: Option<&'a str>,
    pub hits: &'a [IndexedMemory],
    pub budget: usize,
    pub query_vector: Option<&'a [f32]>,
    /// Neither read nor fill the cache of LLM digests.
    pub no_cache: bool,
}

impl DigestJob<'_> {
    fn sources(&self) -> Vec<Source> {
        self.hits.iter().map(Into::into).collect()
    }
}

/// The LLM's digest: from the cache (keyed by the question, the memories'
/// contents, the command and the budget), else from the command, cached when
/// it fits the budget; why not, when it fails.
pub fn llm_digest(
    index: &mut Index,
    job: &DigestJob,
    (command, timeout): &(String, std::time::Duration),
    counter: &mut dyn TokenCounter,
) -> Result<Result<DigestReport, crate::adapters::llm::Failure>, AppError> {
    let sources = job.sources();
    let tokens_of_sources = crate::domain::digest::source_tokens(&sources, counter);
    let hashes: Vec<String> = job.hits.iter().map(|m| m.content_hash.clone()).collect();
    let key = crate::adapters::llm::cache_key(job.query, &hashes, command, job.budget);
    let cached = if job.no_cache {
        None
    } else {
        index.cached_digest(&key)?
    };
    let answer = match cached {
        Some((text, tokens)) => Ok((text, tokens, true)),
        None => {
            let prompt = crate::adapters::llm::prompt(job.query, &sources, job.budget);
            crate::adapters::llm::run(command, &prompt, *timeout).and_then(|text| {
                let tokens = counter.count(&text);
                if tokens > job.budget {
                    Err(crate::adapters::llm::Failure::OverBudget {
                        tokens,
                        budget: job.budget,
                    })
                } else {
                    Ok((text, tokens, false))
                }
            })
        }
    };
    let (text, tokens, cached) = match answer {
        Ok(answer) => answer,
        Err(failure) => return Ok(Err(failure)),
    };
    if !cached && !job.no_cache {
        index.cache_digest(&key, &text, tokens)?;
    }
    Ok(Ok(DigestReport {
        text: format!("{text}\n"),
        tokens,
        tokens_of_sources,
        sentences: Vec::new(),
        distill: "llm",
        fallback_reason: None,
        cached,
    }))
}

/// The extractive digest (sentences of the memories, never invented text).
pub fn extractive_digest(
    job: &DigestJob,
    sentence_embedder: Option<&mut dyn Embedder>,
    counter: &mut dyn TokenCounter,
) -> Result<DigestReport, AppError> {
    let sources = job.sources();
    let tokens_of_sources = crate::domain::digest::source_tokens(&sources, counter);
    let words = job
        .query
        .map(crate::adapters::index::search::content_words)
        .unwrap_or_default();
    let digest = crate::domain::digest::distill(
        &sources,
        &words,
        job.query_vector,
        sentence_embedder,
        counter,
        job.budget,
    )
    .context("distilling the digest")?;
    Ok(DigestReport {
        text: digest.text,
        tokens: digest.tokens,
        tokens_of_sources,
        sentences: digest.sentences,
        distill: "extractive",
        fallback_reason: None,
        cached: false,
    })
}

/// The model's tokenizer (cached on the model), or an estimate without one.
pub fn token_counter(session: &mut Session) -> Result<(Box<dyn TokenCounter>, String), AppError> {
    Ok(match session.model(Need::Optional)? {
        Some(model) => (Box::new(model.tokenizer()?), model.id()),
        None => (
            Box::new(crate::domain::digest::CharEstimate),
            "estimate (4 characters a token)".to_owned(),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> (tempfile::TempDir, Index) {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::open(&dir.path().join("index.db")).unwrap();
        (dir, index)
    }

    fn memory(id: &str, content: &str) -> IndexedMemory {
        crate::adapters::index::search::sample(id, content)
    }

    fn job<'a>(hits: &'a [IndexedMemory], no_cache: bool) -> DigestJob<'a> {
        DigestJob {
            query: Some("cache eviction"),
            hits,
            budget: 40,
            query_vector: None,
            no_cache,
        }
    }

    fn command(script: &str) -> (String, std::time::Duration) {
        (script.to_owned(), std::time::Duration::from_secs(10))
    }

    #[test]
    fn the_llm_digest_is_cached_and_its_failures_say_why() {
        let (_dir, mut index) = index();
        let hits = [
            memory("A", "The cache evicts with LRU. Entries live an hour."),
            memory("B", "Sessions are stored in Redis."),
        ];
        let mut counter = crate::domain::digest::CharEstimate;
        let llm = command("cat >/dev/null; echo 'The cache uses LRU [A].'");
        let first = llm_digest(&mut index, &job(&hits, false), &llm, &mut counter)
            .unwrap()
            .unwrap();
        assert_eq!(
            (first.text.as_str(), first.distill, first.cached),
            ("The cache uses LRU [A].\n", "llm", false)
        );
        let again = llm_digest(&mut index, &job(&hits, false), &llm, &mut counter)
            .unwrap()
            .unwrap();
        assert!(again.cached, "the second answer comes from the cache");
        let uncached = llm_digest(&mut index, &job(&hits, true), &llm, &mut counter)
            .unwrap()
            .unwrap();
        assert!(!uncached.cached);

        let failing = command("cat >/dev/null; exit 4");
        let failure = llm_digest(&mut index, &job(&hits, false), &failing, &mut counter)
            .unwrap()
            .unwrap_err();
        assert!(
            matches!(failure, crate::adapters::llm::Failure::Exit(_)),
            "{failure}"
        );
        let long = command("cat >/dev/null; printf '%0400d' 0");
        let failure = llm_digest(&mut index, &job(&hits, false), &long, &mut counter)
            .unwrap()
            .unwrap_err();
        assert!(
            matches!(
                failure,
                crate::adapters::llm::Failure::OverBudget { budget: 40, .. }
            ),
            "{failure}"
        );
    }

    #[test]
    fn the_extractive_digest_keeps_sentences_of_the_memories() {
        let hits = [
            memory("A", "The cache evicts with LRU. Entries live an hour."),
            memory("B", "Sessions are stored in Redis."),
        ];
        let report = extractive_digest(
            &job(&hits, false),
            None,
            &mut crate::domain::digest::CharEstimate,
        )
        .unwrap();
        assert_eq!(report.distill, "extractive");
        assert!(
            report.text.contains("The cache evicts with LRU."),
            "{}",
            report.text
        );
        assert!(report.tokens <= 40);
        assert!(report.tokens_of_sources > 0);
    }
}
