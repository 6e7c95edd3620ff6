//! The index schema and its migrations, versioned with `PRAGMA user_version`:
//! [`MIGRATIONS`] lists each version with the step that reaches it from the
//! one before ([`steps`]), run in order from the version an index has.

mod steps;
#[cfg(test)]
mod tests;

use rusqlite::{Connection, Transaction};

use steps::*;

/// The schema version this build writes.
pub const VERSION: i64 = 22;

/// What brings the schema from the version before to a version.
enum Step {
    /// A batch of SQL.
    Sql(&'static str),
    /// A step written in Rust.
    Rust(fn(&Transaction) -> rusqlite::Result<()>),
}

impl Step {
    fn run(&self, tx: &Transaction) -> rusqlite::Result<()> {
        match self {
            Step::Sql(sql) => tx.execute_batch(sql),
            Step::Rust(step) => step(tx),
        }
    }
}

/// Every version with its step, in order; the last one is [`VERSION`].
const MIGRATIONS: [(i64, Step); 22] = [
    (1, Step::Sql(V1)),
    (2, Step::Sql(V2)),
    (3, Step::Sql(V3)),
    (4, Step::Sql(V4)),
    (5, Step::Sql(V5)),
    (6, Step::Sql(V6)),
    (7, Step::Sql(V7)),
    (8, Step::Sql(V8)),
    (9, Step::Sql(V9)),
    (10, Step::Sql(V10)),
    (11, Step::Sql(V11)),
    (12, Step::Rust(compact_vectors)),
    (13, Step::Sql(V13)),
    (14, Step::Sql(V14)),
    (15, Step::Sql(V15)),
    (16, Step::Sql(V16)),
    (17, Step::Sql(V17)),
    (18, Step::Sql(V18)),
    (19, Step::Sql(V19)),
    (20, Step::Sql(V20)),
    (21, Step::Sql(V21)),
    (22, Step::Sql(V22)),
];

const _: () = assert!(MIGRATIONS[MIGRATIONS.len() - 1].0 == VERSION);

#[derive(Debug)]
pub enum MigrateError {
    Sqlite(rusqlite::Error),
    TooNew { found: i64, supported: i64 },
}

impl From<rusqlite::Error> for MigrateError {
    fn from(err: rusqlite::Error) -> Self {
        MigrateError::Sqlite(err)
    }
}

/// Brings the schema to [`VERSION`], in one transaction.
pub fn migrate(conn: &mut Connection) -> Result<(), MigrateError> {
    let found: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if found > VERSION {
        return Err(MigrateError::TooNew {
            found,
            supported: VERSION,
        });
    }
    if found == VERSION {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // Re-read under the write lock: another process may have migrated.
    let found: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
    for (version, step) in &MIGRATIONS {
        if found < *version {
            step.run(&tx)?;
        }
    }
    // Version 8's verdicts, weighed on the schema they read (after the
    // later versions' columns exist).
    if found < 8 {
        let workspaces: Vec<i64> = tx
            .prepare("SELECT id FROM workspaces")?
            .query_map([], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for workspace in workspaces {
            super::verdicts::apply(&tx, workspace, super::verdicts::Due::All)?;
        }
    }
    tx.pragma_update(None, "user_version", VERSION)?;
    tx.commit()?;
    Ok(())
}
