//! Scoring: FTS5's `bm25()` formula over the three texts, per query word.

use super::*;

impl TextIndex {
    /// The best `limit` matches of any of `words` (stopwords already left
    /// out), in `workspaces` (`None`: every one), as (rowid, bm25 score as
    /// FTS5 computes it), best first, and every match that scores as well
    /// as the last of them (ties at the edge are all there). Reads the
    /// segments the last [`TextIndex::fresh`] checked; a panic in tantivy
    /// is [`TextError::Panicked`].
    pub fn search(
        &self,
        words: &[String],
        workspaces: Option<&[i64]>,
        limit: usize,
    ) -> Result<Matches, TextError> {
        let searcher = self.readable_searcher()?;
        self.guarded(|| self.search_in(&searcher, words, workspaces, limit))
            .inspect_err(|_| {
                // The caller's copy in memory answers whether or not this
                // mark is written.
                if self.memory_at.is_none() {
                    let _ = rebuild_at_next_sync(&self.db);
                }
            })?
    }

    /// The index's analyzer (the one its terms were written with).
    pub(super) fn analyzer(&self) -> TextAnalyzer {
        self.index
            .tokenizers()
            .get(ANALYZER)
            .unwrap_or_else(analyzer)
    }

    /// Whether any live memory of `workspaces` (`None`: every one) holds a
    /// word beginning like each of `words` ([`crate::domain::relevance`]):
    /// a word is stemmed as the index stems it, and any term beginning with
    /// the first [`crate::domain::relevance::PREFIX`] characters of its stem
    /// (the whole stem when shorter) counts, in content, tags or files.
    /// Reads the segments the last [`TextIndex::fresh`] checked.
    pub fn holds(
        &self,
        words: &[String],
        workspaces: Option<&[i64]>,
    ) -> Result<Vec<bool>, TextError> {
        let searcher = self.readable_searcher()?;
        self.guarded(|| self.holds_in(&searcher, words, workspaces))?
    }

    pub(super) fn holds_in(
        &self,
        searcher: &tantivy::Searcher,
        words: &[String],
        workspaces: Option<&[i64]>,
    ) -> Result<Vec<bool>, TextError> {
        use tantivy::DocSet;
        let tantivy = tantivy_at(&self.dir);
        let io = |source: std::io::Error| TextError::Io {
            path: self.dir.clone(),
            source,
        };
        let mut analyzer = self.analyzer();
        let mut held = Vec::with_capacity(words.len());
        for word in words {
            let mut stream = analyzer.token_stream(word);
            let Some(stem) = stream.next().map(|token| token.text.clone()) else {
                held.push(false);
                continue;
            };
            let prefix = crate::domain::relevance::key(&stem).as_bytes().to_vec();
            let mut found = false;
            'segments: for segment in searcher.segment_readers() {
                let workspace = match workspaces {
                    Some(_) => Some(segment.fast_fields().i64("workspace").map_err(tantivy)?),
                    None => None,
                };
                for field in self.fields.text {
                    let inverted = segment.inverted_index(field).map_err(tantivy)?;
                    let mut terms = inverted
                        .terms()
                        .range()
                        .ge(&prefix)
                        .into_stream()
                        .map_err(io)?;
                    while terms.advance() {
                        if !terms.key().starts_with(&prefix) {
                            break;
                        }
                        let mut postings = inverted
                            .read_postings_from_terminfo(terms.value(), IndexRecordOption::Basic)
                            .map_err(io)?;
                        let mut doc = postings.doc();
                        while doc != tantivy::TERMINATED {
                            let alive = segment
                                .alive_bitset()
                                .is_none_or(|alive| alive.is_alive(doc));
                            let in_scope = match (workspaces, &workspace) {
                                (Some(ids), Some(column)) => {
                                    column.first(doc).is_some_and(|id| ids.contains(&id))
                                }
                                _ => true,
                            };
                            if alive && in_scope {
                                found = true;
                                break 'segments;
                            }
                            doc = postings.advance();
                        }
                    }
                }
            }
            held.push(found);
        }
        Ok(held)
    }

    pub(super) fn search_in(
        &self,
        searcher: &tantivy::Searcher,
        words: &[String],
        workspaces: Option<&[i64]>,
        limit: usize,
    ) -> Result<Matches, TextError> {
        self.search_with(searcher, words, workspaces, limit, Rarity::shipped())
    }

    /// [`TextIndex::search_in`] with word rarity from `rarity`: the
    /// statistics (rows, their average length, each word's rows) are the
    /// scope's (`workspaces`, or every row), blended with its background.
    pub(super) fn search_with(
        &self,
        searcher: &tantivy::Searcher,
        words: &[String],
        workspaces: Option<&[i64]>,
        limit: usize,
        rarity: Rarity,
    ) -> Result<Matches, TextError> {
        let tantivy = tantivy_at(&self.dir);
        let terms = self.terms_of(words);
        if terms.is_empty() || limit == 0 {
            return Ok(Matches::default());
        }
        let totals = self.totals_in(searcher, workspaces)?;
        if totals.rows == 0 {
            return Ok(Matches::default());
        }
        let segments = searcher.segment_readers();
        let mut matches = self.matches_of(segments, &terms)?;
        if let Some(ids) = workspaces {
            // Only the scope's rows count, in the statistics as in the
            // answer.
            for (segment, reader) in segments.iter().enumerate() {
                let column = reader.fast_fields().i64("workspace").map_err(tantivy)?;
                for per_segment in &mut matches {
                    per_segment[segment]
                        .retain(|&(doc, _)| column.first(doc).is_some_and(|id| ids.contains(&id)));
                }
            }
        }
        let avgdl = totals.words as f64 / totals.rows as f64;
        let n = totals.rows as f64;
        let idf: Vec<f64> = matches
            .iter()
            .zip(&terms)
            .map(|(per_segment, term)| {
                let hits = per_segment.iter().map(Vec::len).sum::<usize>() as f64;
                rarity.idf(term, hits, n)
            })
            .collect();
        let mut scored: Vec<(f64, i64)> = Vec::new();
        for (s, segment) in segments.iter().enumerate() {
            let fast = segment.fast_fields();
            let length = fast.u64("length").map_err(tantivy)?;
            let row = fast.u64("row").map_err(tantivy)?;
            // Scores by document (a match scores above 0: its word's idf
            // is at least 1e-6), and the documents scored.
            let mut score = vec![0.0f64; segment.max_doc() as usize];
            let mut scored_docs: Vec<u32> = Vec::new();
            for (t, per_segment) in matches.iter().enumerate() {
                for &(doc, f) in &per_segment[s] {
                    let dl = length.first(doc).unwrap_or(0) as f64;
                    let slot = &mut score[doc as usize];
                    if *slot == 0.0 {
                        scored_docs.push(doc);
                    }
                    *slot += idf[t] * (f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * dl / avgdl));
                }
            }
            for doc in scored_docs {
                if let Some(row) = row.first(doc) {
                    scored.push((score[doc as usize], row as i64));
                }
            }
        }
        let scored = best_first(scored, limit);
        Ok(Matches {
            rows: scored
                .into_iter()
                .map(|(score, row)| (row, score))
                .collect(),
            // A row of average length holding each word once, in its
            // content: idf × (f (K1 + 1)) / (f + K1) with f = 1 is idf.
            full: idf.iter().sum(),
        })
    }

    /// The distinct terms of `words`. FTS5 matches each quoted word as a
    /// phrase of its tokens; goldfish's words are letters and digits, one
    /// token each.
    pub(super) fn terms_of(&self, words: &[String]) -> Vec<String> {
        let mut analyzer = self.analyzer();
        let mut terms: Vec<String> = Vec::new();
        for word in words {
            let mut stream = analyzer.token_stream(word);
            while let Some(token) = stream.next() {
                if !terms.contains(&token.text) {
                    terms.push(token.text.clone());
                }
            }
        }
        terms
    }

    /// Per term and segment: the matching rows and their weighted
    /// frequency (content 1, tags 2, files 0.5), by document.
    fn matches_of(
        &self,
        segments: &[tantivy::SegmentReader],
        terms: &[String],
    ) -> Result<TermMatches, TextError> {
        let tantivy = tantivy_at(&self.dir);
        let io = |source: std::io::Error| TextError::Io {
            path: self.dir.clone(),
            source,
        };
        let mut matches: TermMatches = Vec::with_capacity(terms.len());
        for term in terms {
            let mut per_segment = Vec::with_capacity(segments.len());
            for segment in segments {
                let mut lists = Vec::new();
                for (field, weight) in self.fields.text.iter().zip(WEIGHTS) {
                    let postings = segment
                        .inverted_index(*field)
                        .map_err(tantivy)?
                        .read_postings(
                            &Term::from_field_text(*field, term),
                            IndexRecordOption::WithFreqs,
                        )
                        .map_err(io)?;
                    if let Some(postings) = postings {
                        lists.push((postings, f64::from(weight)));
                    }
                }
                per_segment.push(merge(lists, segment.alive_bitset()));
            }
            matches.push(per_segment);
        }
        Ok(matches)
    }

    /// Rows and their words in `workspaces` (`None`: every one).
    pub(super) fn totals_in(
        &self,
        searcher: &tantivy::Searcher,
        workspaces: Option<&[i64]>,
    ) -> Result<Totals, TextError> {
        let by_workspace = self.totals(searcher)?;
        let mut totals = Totals::default();
        for (id, counted) in by_workspace.iter() {
            if workspaces.is_none_or(|ids| ids.contains(id)) {
                totals.rows += counted.rows;
                totals.words += counted.words;
            }
        }
        Ok(totals)
    }

    /// Rows and their words by workspace, counted once per searcher
    /// generation.
    pub(super) fn totals(
        &self,
        searcher: &tantivy::Searcher,
    ) -> Result<TotalsByWorkspace, TextError> {
        let generation = searcher.generation().generation_id();
        let mut cached = self.totals.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, totals)) = &*cached
            && *at == generation
        {
            return Ok(totals.clone());
        }
        let tantivy = tantivy_at(&self.dir);
        let mut totals: BTreeMap<i64, Totals> = BTreeMap::new();
        for segment in searcher.segment_readers() {
            let fast = segment.fast_fields();
            let length = fast.u64("length").map_err(tantivy)?;
            let workspace = fast.i64("workspace").map_err(tantivy)?;
            for doc in 0..segment.max_doc() {
                if segment
                    .alive_bitset()
                    .is_none_or(|alive| alive.is_alive(doc))
                {
                    let counted = totals
                        .entry(workspace.first(doc).unwrap_or_default())
                        .or_default();
                    counted.rows += 1;
                    counted.words += length.first(doc).unwrap_or(0);
                }
            }
        }
        let totals = std::sync::Arc::new(totals);
        *cached = Some((generation, totals.clone()));
        Ok(totals)
    }
}

/// Where a word's rarity comes from: the scope's rows, and a prior of
/// `prior` rows from `background` ([`rarity`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Rarity {
    pub(super) background: rarity::Background,
    pub(super) prior: f64,
}

impl Rarity {
    /// The scope's rows blended with the shipped table.
    pub(super) fn shipped() -> Rarity {
        Rarity {
            background: rarity::Background::shipped(),
            prior: rarity::PRIOR_ROWS,
        }
    }

    /// The scope's rows alone: FTS5's bm25 over them.
    #[cfg(test)]
    pub(super) fn scope_only() -> Rarity {
        Rarity {
            prior: 0.0,
            ..Rarity::shipped()
        }
    }

    /// The idf of `term`, in `df` of the scope's `n` rows.
    fn idf(&self, term: &str, df: f64, n: f64) -> f64 {
        let share = if self.prior > 0.0 {
            self.background.share(term)
        } else {
            0.0
        };
        rarity::idf(df, n, share, self.prior)
    }
}

/// The live documents of `lists` (one word's postings in each text, with
/// the text's weight) and their weighted frequency, by document.
/// Per term and segment, the (document, weighted frequency) pairs that
/// match.
type TermMatches = Vec<Vec<Vec<(u32, f64)>>>;

/// The best `limit` (score, row) pairs and any tied with the last of
/// them, best first.
fn best_first(mut scored: Vec<(f64, i64)>, limit: usize) -> Vec<(f64, i64)> {
    let by_score = |a: &(f64, i64), b: &(f64, i64)| b.0.total_cmp(&a.0);
    if scored.len() > limit {
        scored.select_nth_unstable_by(limit - 1, by_score);
        let edge = scored[limit - 1].0;
        let (top, rest) = scored.split_at_mut(limit);
        let mut kept = top.to_vec();
        kept.extend(rest.iter().filter(|(score, _)| *score >= edge));
        scored = kept;
    }
    scored.sort_by(by_score);
    scored
}

pub(super) fn merge(
    mut lists: Vec<(tantivy::postings::SegmentPostings, f64)>,
    alive: Option<&tantivy::fastfield::AliveBitSet>,
) -> Vec<(u32, f64)> {
    use tantivy::{DocSet, TERMINATED, postings::Postings};
    let mut out = Vec::new();
    loop {
        let Some(doc) = lists.iter().map(|(p, _)| p.doc()).min() else {
            return out;
        };
        if doc == TERMINATED {
            return out;
        }
        let mut f = 0.0;
        for (postings, weight) in &mut lists {
            if postings.doc() == doc {
                f += *weight * f64::from(postings.term_freq());
                postings.advance();
            }
        }
        if alive.is_none_or(|alive| alive.is_alive(doc)) {
            out.push((doc, f));
        }
    }
}
