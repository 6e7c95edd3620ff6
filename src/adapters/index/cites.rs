//! A memory's citations as the last sync judged them (`memory_cites`), read
//! the one way recall and the staleness judgement both read them: one JSON
//! array a memory, from a subquery on its row (`m`).

use crate::domain::citation::{Change, Checked};

/// A memory's citations as one JSON array of rows, in their order (`NULL`
/// for a memory that cites nothing: no lookup). Its row is `m`.
pub(crate) const JUDGED: &str = "CASE WHEN m.cites = '[]' THEN NULL ELSE (
    SELECT json_group_array(json_array(c.path, json_extract(c.anchor, '$.lines[0]'),
             json_extract(c.anchor, '$.lines[1]'), coalesce(c.verdict, ''), c.now_start, c.now_end,
             c.commit_id, c.author, c.author_name, c.author_email, c.date, c.now_path))
    FROM (SELECT * FROM memory_cites c WHERE c.workspace_id = m.workspace_id AND c.id = m.id
          ORDER BY c.n) c) END";

/// The citations [`JUDGED`] gives (none of a value it did not write).
pub(crate) fn of(json: &str) -> Vec<Checked> {
    type Row = (
        String,
        u32,
        u32,
        String,
        Option<u32>,
        Option<u32>,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let rows: Vec<Row> = serde_json::from_str(json).unwrap_or_default();
    rows.into_iter()
        .map(
            |(
                path,
                start,
                end,
                verdict,
                now_start,
                now_end,
                commit,
                author,
                name,
                email,
                date,
                now_path,
            )| {
                Checked {
                    path,
                    cited: (start, end),
                    verdict,
                    lines: now_start.zip(now_end),
                    now_path,
                    change: commit.map(|commit| Change {
                        commit,
                        author: author.unwrap_or_default(),
                        author_name: name.unwrap_or_default(),
                        author_email: email.unwrap_or_default(),
                        date: date.unwrap_or_default(),
                    }),
                }
            },
        )
        .collect()
}
