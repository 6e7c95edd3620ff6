//! Gather: what the log holds (HEAD's tree and the work tree) and the rows
//! the index holds of the files that changed.

use super::*;

/// What a sync found of the log and of the index ([`Found`]: the input of
/// [`sync_plan::plan`]), and what it needs to read more of the log when
/// the plan asks for files it did not read.
pub(super) struct Gathered<'w> {
    pub(super) found: Found,
    pub(super) workspace: &'w Workspace,
    pub(super) memory_dir: PathBuf,
    /// The work tree's memory files and their stat data.
    pub(super) worktree: BTreeMap<String, Stat>,
    pub(super) head: Option<gix::ObjectId>,
    /// HEAD's memory files and their blobs, once read: only when a file
    /// only in HEAD may have changed (HEAD moved, or a work-tree file the
    /// index recorded is gone) or the plan asks for one.
    pub(super) head_files: Option<BTreeMap<String, gix::ObjectId>>,
    pub(super) read_at_ns: i64,
    /// Files whose rows are in `found.recorded`.
    pub(super) loaded: HashSet<String>,
}

impl<'w> Gathered<'w> {
    /// Lists the memory files of HEAD's tree and of the work tree, reads
    /// those whose blob changed, and loads what the index records of them.
    pub(super) fn new(
        writing: &Writing<'_>,
        workspace: &'w Workspace,
        sync_config: &SyncConfig,
        report: &mut SyncReport,
    ) -> Result<Gathered<'w>, SyncError> {
        let registered: &Registered = writing.registered();
        let known = writing.known_files()?;
        let head = workspace.head_commit();
        report.head = head.map(|id| id.to_string());
        let memory_dir = workspace.memory_dir();
        let read_at_ns = now_ns();
        let worktree: BTreeMap<String, Stat> = worktree_files(workspace, &mut report.problems)?
            .iter()
            .map(|(name, metadata)| (name.clone(), stat_of(metadata)))
            .collect();
        // HEAD's tree only matters for files not in the work tree. If HEAD did
        // not move and no indexed work-tree file disappeared, those are
        // unchanged.
        let head_moved = registered.head_commit != report.head;
        let worktree_file_gone = known
            .iter()
            .any(|(name, file)| file.stat.is_some() && !worktree.contains_key(name));
        let head_files = match head {
            Some(head) if head_moved || worktree_file_gone => {
                Some(workspace.memory_files_at(head)?)
            }
            _ => None,
        };
        let unchanged_head_only = known
            .iter()
            .filter(|(name, file)| {
                head_files.is_none() && file.stat.is_none() && !worktree.contains_key(*name)
            })
            .map(|(name, _)| name);
        let names: BTreeSet<String> = head_files
            .iter()
            .flat_map(|files| files.keys())
            .chain(worktree.keys())
            .chain(unchanged_head_only)
            .cloned()
            .collect();
        report.files = names.len();
        let mut gathered = Gathered {
            found: Found {
                files: BTreeMap::new(),
                recorded: Recorded {
                    files: known,
                    ..Recorded::default()
                },
                now: sync_config.now,
                kinds: sync_config.kinds.clone(),
            },
            workspace,
            memory_dir,
            worktree,
            head,
            head_files,
            read_at_ns,
            loaded: HashSet::new(),
        };
        for name in names {
            let state = gathered.look(&name, false)?;
            gathered.found.files.insert(name, state);
        }
        gathered.load_rows(writing)?;
        Ok(gathered)
    }

    /// A file of the log as it is now: its blob id, and its lines when the
    /// blob differs from the recorded one or `again` asks for them.
    pub(super) fn look(&self, name: &str, again: bool) -> Result<FileState, SyncError> {
        let recorded = self.found.recorded.files.get(name);
        let Some(&stat) = self.worktree.get(name) else {
            return self.look_in_head(name, again);
        };
        let racy = stat.racy(self.read_at_ns);
        if !again
            && let Some(recorded) = recorded
            && recorded.stat == Some(stat)
            && !recorded.racy
        {
            return Ok(FileState::Listed {
                blob: recorded.blob.clone(),
                stat: Some(stat),
                racy,
                content: None,
            });
        }
        let path = self.memory_dir.join(name);
        // Streamed: a line over the size a record may take is hashed and
        // passed over, never held. Hashed first; parsed (in a second pass
        // that hashes again, so the two always agree) only when its blob
        // changed.
        let wanted = |blob: &str| again || recorded.is_none_or(|recorded| recorded.blob != blob);
        match streamed(&path, false) {
            Ok(Some((blob, _))) if !wanted(&blob) => {
                return Ok(FileState::Listed {
                    blob,
                    stat: Some(stat),
                    racy,
                    content: None,
                });
            }
            Ok(Some(_)) => {
                if let Ok(Some((blob, content))) = streamed(&path, true) {
                    let content = wanted(&blob).then_some(content).flatten();
                    return Ok(FileState::Listed {
                        blob,
                        stat: Some(stat),
                        racy,
                        content,
                    });
                }
            }
            // Changed size while it was read, or gone, or not a file: read
            // whole below, which says which.
            Ok(None) | Err(_) => {}
        }
        let bytes = match crate::adapters::memdir::read_regular(&path) {
            Ok(bytes) => bytes,
            // Gone since it was listed: git rewrites a file by unlinking it
            // and creating it anew. Its rows and stamp stay as they were, so
            // the next sync reads the new one.
            Err(crate::adapters::memdir::OpenError::Io(source))
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                return Ok(FileState::Vanished);
            }
            Err(crate::adapters::memdir::OpenError::Io(source)) => {
                return Err(SyncError::Io { path, source });
            }
            // Replaced by a link or a FIFO since it was listed.
            Err(err) => return Ok(FileState::Refused(err.skipped())),
        };
        let blob = blob_id(&bytes).to_string();
        let content = (again || recorded.is_none_or(|recorded| recorded.blob != blob))
            .then(|| Content::parse(&bytes));
        Ok(FileState::Listed {
            blob,
            stat: Some(stat),
            racy,
            content,
        })
    }

    /// A file only in HEAD (sparse or deleted work tree): its blob, read
    /// when it differs from the recorded one or `again` asks for it;
    /// unlooked while HEAD's files are not listed.
    fn look_in_head(&self, name: &str, again: bool) -> Result<FileState, SyncError> {
        let recorded = self.found.recorded.files.get(name);
        let Some(head_files) = &self.head_files else {
            return Ok(FileState::Unlooked);
        };
        let Some(&blob) = head_files.get(name) else {
            return Ok(FileState::Vanished);
        };
        let blob_text = blob.to_string();
        let content = if again || recorded.is_none_or(|recorded| recorded.blob != blob_text) {
            Some(Content::parse(&self.workspace.read_blob(blob)?))
        } else {
            None
        };
        Ok(FileState::Listed {
            blob: blob_text,
            stat: None,
            racy: false,
            content,
        })
    }

    /// Reads the files the plan asks for, whatever their blob, and loads
    /// what the index records of them.
    pub(super) fn read_again(
        &mut self,
        writing: &Writing<'_>,
        names: BTreeSet<String>,
    ) -> Result<(), SyncError> {
        for name in names {
            if self.head_files.is_none() && !self.worktree.contains_key(&name) {
                // HEAD's tree is read once a file only there is needed; as
                // for a sync that reads the files in name order, the files
                // only in HEAD from this one on are taken from it.
                self.head_files = Some(match self.head {
                    Some(head) => self.workspace.memory_files_at(head)?,
                    None => BTreeMap::new(),
                });
                let later: Vec<String> = self
                    .found
                    .files
                    .range(name.clone()..)
                    .filter(|(_, state)| matches!(state, FileState::Unlooked))
                    .map(|(later, _)| later.clone())
                    .collect();
                for later in later {
                    let state = self.look(&later, false)?;
                    self.found.files.insert(later, state);
                }
            }
            let state = self.look(&name, true)?;
            self.found.files.insert(name, state);
        }
        Ok(self.load_rows(writing)?)
    }

    /// Loads what the index records of the files read and the files that
    /// left the log, not loaded yet: their rows, the rows of the ids their
    /// lines hold, and the duplicates of the ids they lost.
    pub(super) fn load_rows(&mut self, writing: &Writing<'_>) -> Result<(), IndexError> {
        let Found {
            files, recorded, ..
        } = &mut self.found;
        let gone = recorded
            .files
            .keys()
            .filter(|name| !files.contains_key(*name))
            .map(|name| (name, None));
        let read = files.iter().filter_map(|(name, state)| match state {
            FileState::Listed {
                content: Some(content),
                ..
            } => Some((name, Some(content))),
            _ => None,
        });
        let mut due: Vec<(String, Option<&Content>)> = gone
            .chain(read)
            .filter(|(name, _)| !self.loaded.contains(*name))
            .map(|(name, content)| (name.clone(), content))
            .collect();
        due.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, content) in due {
            let indexed = writing.file_rows(&name)?;
            let held: HashSet<&str> = content.into_iter().flat_map(Content::memory_ids).collect();
            for id in &held {
                // An id with no row is looked up again for another file
                // that holds it too: rare, and cheaper than remembering
                // every new id.
                if !indexed.contains_key(*id)
                    && !recorded.rows.contains_key(*id)
                    && let Some(row) = writing.row_of(id)?
                {
                    recorded.rows.insert((*id).to_owned(), row);
                }
            }
            // Ids indexed from this file while a record waits in a file
            // that sorts first (a retake): the plan gives those back when
            // their line changes.
            let retaken = writing.retaken_from(&name)?;
            for (id, (record_hash, line, flags)) in indexed {
                if (!held.contains(id.as_str()) || retaken.contains(&id))
                    && !recorded.duplicates.contains_key(&id)
                {
                    let waiting = writing.duplicates_of(&id)?;
                    recorded.duplicates.insert(id.clone(), waiting);
                }
                let row = Row {
                    file: name.clone(),
                    record_hash,
                    line,
                    flags,
                };
                recorded.rows.insert(id, row);
            }
            self.loaded.insert(name);
        }
        Ok(())
    }
}
