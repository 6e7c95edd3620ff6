//! What a sync takes of the repository's config (the policy in effect),
//! and the id of a line committed first given back to it
//! (`retake_reused_ids`).

use super::*;

/// What a sync takes of the repository's config: what its records are
/// checked against ([`trust::check`]) and the trust policy to store.
pub(super) struct SyncConfig {
    pub(super) now: jiff::Timestamp,
    /// The repository's types; `None` when its config cannot be read or
    /// used.
    pub(super) kinds: Option<Kinds>,
    /// The repository's trust policy (`Some(None)`: it has none); `None`
    /// when its config cannot be read or used: the index keeps the policy
    /// it last stored.
    pub(super) policy: Option<Option<TrustPolicy>>,
    /// What the work tree's config says of the policy; `None` when it
    /// cannot be read.
    pub(super) raw: Option<Raw>,
}

impl SyncConfig {
    pub(super) fn of(read: &RepoConfigRead, options: SyncOptions) -> SyncConfig {
        let raw = read.as_ref().ok().map(|bytes| Raw::of(bytes.as_deref()));
        let config = RepoConfig::for_readers(read.as_ref().cloned()).ok();
        SyncConfig {
            now: options.now.unwrap_or_else(jiff::Timestamp::now),
            kinds: config.as_ref().map(|config| config.kinds.clone()),
            policy: config.map(|config| config.trust),
            raw,
        }
    }

    /// The policy to store (`None`: keep the stored one): the one in
    /// effect at HEAD by its history while the work tree's config says
    /// what HEAD's does (a change from outside the policy does not take
    /// effect by being pulled); the work tree's own when the local user
    /// changed it and has not committed it (or there is no commit).
    pub(super) fn in_effect(
        &self,
        writing: &Writing<'_>,
        workspace: &Workspace,
        head: Option<gix::ObjectId>,
    ) -> Result<Option<Option<TrustPolicy>>, SyncError> {
        if let Some(head) = head
            && self.raw.is_some()
            && self.raw.as_ref() == Some(&Policies::new(workspace).at(head)?)
            && let Some((effective, _)) = writing.history_policy()?
        {
            return Ok(Some(effective.policy));
        }
        Ok(self.policy.clone())
    }

    /// Stores the policy [in effect](SyncConfig::in_effect) when it differs from
    /// the one stored; says whether it did.
    pub(super) fn store_in_effect(
        &self,
        writing: &Writing<'_>,
        workspace: &Workspace,
        head: Option<gix::ObjectId>,
    ) -> Result<bool, SyncError> {
        match self.in_effect(writing, workspace, head)? {
            Some(policy) => Ok(writing.store_policy(policy.as_ref())?),
            None => Ok(false),
        }
    }
}

/// Gives an id back to the line that was committed first: the plan indexes
/// an id from the first file by name, so a later line that reuses a
/// teammate's id in a file that sorts first (`2000-01-01.jsonl`) would
/// hold the row and the genuine line would wait, hidden, as its duplicate.
/// Where a waiting line of another text was committed before the row's
/// line (or the row's is not committed), the two trade places: the first
/// line is the memory, the reuser's waits as a duplicate (and `doctor`
/// names it). Returns whether it wrote anything.
pub(super) fn retake_reused_ids(
    writing: &Writing<'_>,
    workspace: &Workspace,
    head: Option<gix::ObjectId>,
    sync_config: &SyncConfig,
    report: &mut SyncReport,
) -> Result<bool, IndexError> {
    let swaps = writing.ids_to_retake()?;
    let mut wrote = false;
    for swap in swaps {
        // The row's own line, to wait in its turn: read where the row
        // says it is, and only if it still hashes as recorded.
        let Some(row_record) = line_of(workspace, head, &swap.row_file, swap.row_line)
            .filter(|record| sync_plan::record_hash(record).to_hex().as_str() == swap.row_hash)
        else {
            continue;
        };
        let Ok(Entry::Memory(first)) = Entry::parse(swap.first_record.as_bytes()) else {
            continue;
        };
        let flags =
            crate::domain::memory::trust::index_flags(&crate::domain::memory::trust::check(
                &first,
                sync_config.now,
                sync_config.kinds.as_ref(),
            ));
        writing.retake(&swap, &first, &flags, &row_record)?;
        report.problems.push(SyncProblem::line(
            &swap.row_file,
            swap.row_line,
            format!(
                "memory {}: its id is the one of a line committed earlier ({}:{}), which keeps it; this line waits as a duplicate (`goldfish doctor` names it)",
                swap.id, swap.first_file, swap.first_line
            ),
        ));
        wrote = true;
    }
    Ok(wrote)
}

/// The canonical text of line `line` (from 1) of memory file `name`: the
/// work tree's, else HEAD's; `None` when it is not a memory record.
pub(super) fn line_of(
    workspace: &Workspace,
    head: Option<gix::ObjectId>,
    name: &str,
    line: i64,
) -> Option<String> {
    let bytes = match crate::adapters::memdir::read_regular(&workspace.memory_dir().join(name)) {
        Ok(bytes) => bytes,
        Err(_) => workspace.memory_file_at(head?, name)?,
    };
    let index = usize::try_from(line.checked_sub(1)?).ok()?;
    let text = bytes.split(|&b| b == b'\n').nth(index)?;
    match Entry::parse(text) {
        Ok(entry @ Entry::Memory(_)) => Some(entry.to_line()),
        _ => None,
    }
}
