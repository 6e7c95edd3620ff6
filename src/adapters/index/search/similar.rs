//! Memories like a text: near-duplicates and their clusters.

use super::*;

impl Index {
    /// Memories of `scope` whose embedding is at least `threshold` similar to
    /// `vector`, most similar first.
    pub fn similar(
        &self,
        model: &str,
        vector: &[f32],
        scope: &Scope,
        threshold: f64,
        limit: usize,
        now: jiff::Timestamp,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        let among = Request {
            now: Some(now),
            ..Request::default()
        };
        self.similar_among(model, vector, scope, threshold, limit, among)
    }

    /// [`Index::similar`] among the memories `among`'s filters let through
    /// (types, trust, flags, superseded; its `now` too); the limit and the
    /// threshold are the arguments'.
    pub fn similar_among(
        &self,
        model: &str,
        vector: &[f32],
        scope: &Scope,
        threshold: f64,
        limit: usize,
        among: Request,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        let request = Request {
            limit,
            min_score: Some(threshold),
            ..among
        };
        let mut hits = self.semantic(&request, scope, QueryVector { model, vector }, limit)?;
        hits.retain(|hit| hit.score >= threshold);
        Ok(hits)
    }

    /// Groups the memories of `scope` into clusters whose members are at
    /// least `threshold` similar to another member (single linkage), largest
    /// first; within a cluster, most similar to the first member first.
    pub fn duplicate_clusters(
        &self,
        model: &str,
        scope: &Scope,
        threshold: f64,
        limit: usize,
        now: jiff::Timestamp,
    ) -> Result<Vec<Vec<IndexedMemory>>, IndexError> {
        let everything = Request {
            limit: usize::MAX,
            now: Some(now),
            ..Request::default()
        };
        let memories = self.newest(&everything, scope)?;
        let index_of: std::collections::HashMap<&str, usize> = memories
            .iter()
            .enumerate()
            .map(|(i, m)| (m.id.as_str(), i))
            .collect();
        let mut parent: Vec<usize> = (0..memories.len()).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        let mut vectors: std::collections::HashMap<String, Vec<f32>> =
            std::collections::HashMap::new();
        for (i, memory) in memories.iter().enumerate() {
            let Some(vector) = self.vector_of(model, &memory.content_hash)? else {
                continue;
            };
            for neighbour in self.similar(model, &vector, scope, threshold, 20, now)? {
                if let Some(&j) = index_of.get(neighbour.id.as_str()) {
                    let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                    parent[a] = b;
                }
            }
            vectors.insert(memory.id.clone(), vector);
        }
        let mut groups: std::collections::BTreeMap<usize, Vec<usize>> =
            std::collections::BTreeMap::new();
        for i in 0..memories.len() {
            let r = root(&mut parent, i);
            groups.entry(r).or_default().push(i);
        }
        let mut clusters: Vec<Vec<IndexedMemory>> = groups
            .into_values()
            .filter(|members| members.len() > 1)
            .map(|members| {
                let first = &vectors[&memories[members[0]].id];
                let mut cluster: Vec<IndexedMemory> = members
                    .iter()
                    .map(|&i| {
                        let mut m = memories[i].clone();
                        m.similarity = vectors
                            .get(&m.id)
                            .map(|v| f64::from(crate::adapters::embed::cosine(first, v)));
                        m.score = m.similarity.unwrap_or(0.0);
                        m
                    })
                    .collect();
                cluster.sort_by(|a, b| {
                    b.score
                        .total_cmp(&a.score)
                        .then_with(|| a.timestamp.cmp(&b.timestamp))
                });
                cluster.truncate(limit);
                cluster
            })
            .collect();
        clusters.sort_by_key(|c| std::cmp::Reverse(c.len()));
        Ok(clusters)
    }
}
