//! The vector stage and the fusion: semantic ranking, and hybrid ranking
//! of keyword and vector candidates by the core's policy.

use super::*;

impl Index {
    /// Cosine ranking: the vector stage proposes content hashes, SQL keeps
    /// the memories that have them and pass the filters. When the filters
    /// leave too few, the vector stage is asked for more.
    pub(super) fn semantic(
        &self,
        request: &Request,
        scope: &Scope,
        query: QueryVector<'_>,
        limit: usize,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        let mut k = (limit * 4).max(50);
        loop {
            let vector_hits =
                self.vector_search(query.model, query.vector, k, VECTOR_CANDIDATES.max(k))?;
            let exhausted = vector_hits.len() < k;
            let similarity: std::collections::HashMap<&str, f32> = vector_hits
                .iter()
                .map(|h| (h.content_hash.as_str(), h.similarity))
                .collect();
            let mut hits = Vec::new();
            for chunk in vector_hits.chunks(500) {
                let mut c = Conditions::filters(request, scope);
                let list: Vec<String> = chunk
                    .iter()
                    .map(|h| c.bind(Value::Text(h.content_hash.clone())))
                    .collect();
                c.sql
                    .push(format!("m.content_hash IN ({})", list.join(", ")));
                // Look memories up by hash: left alone, the planner may walk the
                // workspace's index instead, scanning every memory.
                hits.extend(self.select(
                    c,
                    "memories m INDEXED BY memories_by_hash",
                    "NULL",
                    "m.timestamp DESC",
                )?);
            }
            for hit in &mut hits {
                let s = f64::from(similarity[hit.content_hash.as_str()]);
                hit.similarity = Some(s);
                hit.score = s.max(0.0);
            }
            hits.sort_by(|a, b| {
                ranked_before(a.score, &a.timestamp, &a.id, b.score, &b.timestamp, &b.id)
            });
            if hits.len() >= limit || exhausted {
                hits.truncate(limit);
                return Ok(hits);
            }
            k *= 4;
        }
    }

    /// Keyword and vector rankings fused as `request.fusion` says (the
    /// keyword ranking alone, normalised the same way, without a vector);
    /// `score` is the fused score and `ranking` says what made it.
    pub(super) fn hybrid(
        &self,
        request: &Request,
        scope: &Scope,
        query: Option<QueryVector<'_>>,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        let depth = (request.limit * 5).max(50);
        let (keyword, semantic) = self.stages(request, scope, query, depth)?;
        let full_bm25 = keyword.full;
        let mut candidates = candidates_of(semantic, keyword.hits);
        for (evidence, hit) in &mut candidates {
            if let (None, Some(query)) = (hit.similarity, query) {
                hit.similarity = self
                    .vector_of(query.model, &hit.content_hash)?
                    .map(|v| f64::from(crate::adapters::embed::cosine(query.vector, &v)));
            }
            evidence.similarity = hit.similarity;
        }
        let spread = Spread {
            full_bm25,
            ..Spread::of(candidates.iter().map(|(evidence, _)| evidence))
        };
        let cue = request
            .query
            .as_deref()
            .zip(request.now)
            .and_then(|(query, now)| TimeCue::find(query, now));
        let mut fused: Vec<IndexedMemory> = candidates
            .into_iter()
            .map(|(evidence, mut hit)| {
                let (score, ranking) = fuse(
                    request,
                    &evidence,
                    &spread,
                    cue,
                    &hit.timestamp,
                    // A deletion or revert by someone outside the trust
                    // policy marks the memory but costs it nothing.
                    hit.stale
                        .as_ref()
                        .is_some_and(|stale| !stale.outside_policy),
                );
                hit.score = score;
                hit.ranking = Some(ranking);
                hit
            })
            .collect();
        fused.sort_by(|a, b| {
            ranked_before(a.score, &a.timestamp, &a.id, b.score, &b.timestamp, &b.id)
        });
        Ok(fused)
    }

    /// The keyword and vector stages: the keyword stage on the second
    /// connection, beside the vector stage on this one, when there is one;
    /// no vector stage without a query vector.
    fn stages(
        &self,
        request: &Request,
        scope: &Scope,
        query: Option<QueryVector<'_>>,
        depth: usize,
    ) -> Result<(KeywordHits, Vec<IndexedMemory>), IndexError> {
        Ok(match query {
            // The keyword stage on the second connection, beside the vector
            // stage on this one: same queries, same lists, in the time of
            // the slower.
            Some(query) if self.parallel => {
                // The side connection only reads: the keyword index is
                // brought up to date here, if it lags.
                self.keyword_index_ready(&mut self.text.lock().unwrap_or_else(|p| p.into_inner()));
                let side = self.take_side()?;
                let (side, keyword, semantic) = std::thread::scope(|s| {
                    let keyword = s.spawn(move || {
                        let hits = side.keyword(request, scope, depth);
                        (side, hits)
                    });
                    let semantic = self.semantic(request, scope, query, depth);
                    let (side, hits) = keyword.join().expect("the keyword stage panicked");
                    (side, hits, semantic)
                });
                self.put_side(side);
                (keyword?, semantic?)
            }
            Some(query) => (
                self.keyword(request, scope, depth)?,
                self.semantic(request, scope, query, depth)?,
            ),
            None => (self.keyword(request, scope, depth)?, Vec::new()),
        })
    }
}

/// Every memory of either list once, with its ranks in them (and its BM25
/// and keyword relevance from the keyword list).
fn candidates_of(
    semantic: Vec<IndexedMemory>,
    keyword: Vec<IndexedMemory>,
) -> Vec<(Evidence, IndexedMemory)> {
    let mut candidates: Vec<(Evidence, IndexedMemory)> = Vec::new();
    let mut position: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (list, is_keyword) in [(semantic, false), (keyword, true)] {
        for (rank, hit) in list.into_iter().enumerate() {
            let i = *position.entry(hit.id.clone()).or_insert_with(|| {
                candidates.push((Evidence::default(), hit.clone()));
                candidates.len() - 1
            });
            let (evidence, memory) = &mut candidates[i];
            if is_keyword {
                evidence.keyword_rank = Some(rank);
                evidence.bm25 = hit.keyword.map_or(0.0, bm25_of);
                memory.keyword = hit.keyword;
            } else {
                evidence.semantic_rank = Some(rank);
            }
        }
    }
    candidates
}
