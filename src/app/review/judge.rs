//! Attribution and judgement: which commit of the range made each change,
//! their signatures, and each change judged under BASE's policy.

use super::*;

/// The config of a commit: the policy it gives and how to say it
/// (`Err`: it cannot be used, and why).
pub(super) fn config_at(
    workspace: &Workspace,
    commit: Option<gix::ObjectId>,
) -> Result<Option<RepoConfig>, String> {
    let Some(commit) = commit else {
        return Ok(None);
    };
    let blob = workspace
        .repo_config_at(commit)
        .map_err(|err| err.to_string())?;
    let Some(blob) = blob else {
        return Ok(None);
    };
    let bytes = workspace.read_blob(blob).map_err(|err| err.to_string())?;
    RepoConfig::from_file(&bytes)
        .map(Some)
        .map_err(|err| format!("{REPO_CONFIG} is invalid: {err}"))
}

pub(super) fn policy_of(config: &Result<Option<RepoConfig>, String>) -> Option<TrustPolicy> {
    config
        .as_ref()
        .ok()
        .and_then(|config| config.as_ref())
        .and_then(|config| config.trust.clone())
}

/// How a policy reads in a line.
pub(super) fn describe(config: &Result<Option<RepoConfig>, String>) -> String {
    match config {
        Err(why) => format!("invalid ({why})"),
        Ok(config) => TrustPolicy::describe(config.as_ref().and_then(|c| c.trust.as_ref())),
    }
}

/// The commits of a range, and which of them made each change.
pub(super) struct Range<'w> {
    pub(super) commits: Vec<CommitInfo>,
    pub(super) made_by: HashMap<Key, usize>,
    pub(super) removed_by: HashMap<Key, usize>,
    pub(super) policies: Policies<'w>,
}

impl Range<'_> {
    /// The commit that added `line`.
    pub(super) fn made(&self, line: &Line) -> Option<&CommitInfo> {
        self.made_by
            .get(&line.key)
            .map(|index| &self.commits[*index])
    }

    /// The commit that removed `line`.
    pub(super) fn removed(&self, line: &Line) -> Option<&CommitInfo> {
        self.removed_by
            .get(&line.key)
            .map(|index| &self.commits[*index])
    }
}

/// Which commit of the range made each change.
pub(super) fn attribute<'w>(
    workspace: &'w Workspace,
    diff: &Diff<'_>,
    since: Option<gix::ObjectId>,
    head_id: gix::ObjectId,
) -> Result<Range<'w>, AppError> {
    let git = |err| AppError::from(anyhow::Error::new(err));
    let commits = workspace.new_commits(head_id, since).map_err(git)?;
    let wanted: HashSet<&Key> = diff.added.iter().map(|line| &line.key).collect();
    let gone: HashSet<&Key> = diff.removed.iter().map(|line| &line.key).collect();
    let mut made_by: HashMap<Key, usize> = HashMap::new();
    let mut removed_by: HashMap<Key, usize> = HashMap::new();
    let mut walker = Walker::new(workspace, key_in).with_removals();
    walker
        .walk(&commits, |change| {
            for (key, _) in change.added {
                if wanted.contains(key) {
                    made_by.entry(key.clone()).or_insert(change.commit);
                }
            }
            for key in change.removed {
                if gone.contains(key) {
                    removed_by.insert(key.clone(), change.commit);
                }
            }
        })
        .map_err(git)?;
    Ok(Range {
        commits,
        made_by,
        removed_by,
        policies: Policies::new(workspace),
    })
}

/// One git process verifies the signed commits that matter, against
/// BASE's allowed signers when the repository keeps them: a key the
/// range adds signs nothing good in it.
pub(super) fn verify(
    workspace: &Workspace,
    base_id: gix::ObjectId,
    range: &Range<'_>,
    steps: &[policy_history::Step<gix::ObjectId>],
) -> Signatures {
    let signers = match workspace.signers_file_in_repo() {
        Some(path) => AllowedSigners::Blob(workspace.object_in_commit(base_id, &path)),
        None => AllowedSigners::Configured,
    };
    workspace.verify_signatures_with(
        range
            .made_by
            .values()
            .chain(range.removed_by.values())
            .copied()
            .chain(
                steps
                    .iter()
                    .enumerate()
                    .filter(|(_, step)| step.changes())
                    .map(|(index, _)| index),
            )
            .map(|index| &range.commits[index]),
        &signers,
    )
}

/// The verdict's view of the commit that made a change: BASE's policy, the
/// signatures verified, HEAD's types.
pub(super) struct Judge {
    pub(super) signatures: Signatures,
    pub(super) policy: Option<TrustPolicy>,
    pub(super) kinds: Option<Kinds>,
    pub(super) now: Timestamp,
    /// The added lines that reuse an id, each with where the line that
    /// holds it is ([`Diff::reused`]).
    pub(super) reused: HashMap<Key, String>,
}

impl Judge {
    /// Each change of the range judged: the lines added, then the lines
    /// removed.
    pub(super) fn changes(&self, diff: &Diff<'_>, range: &Range<'_>) -> Vec<Change> {
        let released = self.released(diff, range);
        let mut changes: Vec<Change> = diff
            .added
            .iter()
            .map(|line| self.added(line, range.made(line), diff, &released))
            .collect();
        changes.extend(
            diff.removed
                .iter()
                .map(|line| self.removed(line, range.removed(line))),
        );
        changes
    }

    pub(super) fn signature_of(&self, commit: &CommitInfo) -> Verified {
        self.signatures.of(commit)
    }

    pub(super) fn provenance(&self, commit: &CommitInfo) -> Provenance {
        let signature = self.signature_of(commit);
        Provenance {
            commit: commit.id.to_string(),
            author: commit.author.clone(),
            date: commit.date.clone(),
            committer: commit.committer.clone(),
            signature: signature.state.name().to_owned(),
            signer: TrustPolicy::email_of(&signature.signer).to_owned(),
        }
    }

    /// The verdict's view of a commit.
    pub(super) fn judge(&self, commit: &CommitInfo, claim: &Claim<'_>) -> Vec<&'static str> {
        let signature = self.signature_of(commit);
        verdict::quarantine(
            claim,
            Some(&commit.origin(&signature)),
            self.policy.as_ref(),
        )
    }

    pub(super) fn counts(&self, commit: &CommitInfo) -> bool {
        let signature = self.signature_of(commit);
        verdict::releases(Some(&commit.origin(&signature)), self.policy.as_ref())
    }

    pub(super) fn trusted_because(&self, commit: Option<&CommitInfo>) -> Vec<String> {
        let signed_by_another = commit.is_some_and(|commit| {
            let signature = self.signature_of(commit);
            verdict::signed_by_another(
                signature.state.name(),
                TrustPolicy::email_of(&signature.signer),
                &commit.author_email,
            )
        });
        verdict::trusted_because(
            commit.is_some(),
            self.policy.as_ref().map(|policy| policy.signed),
            signed_by_another,
        )
        .iter()
        .map(|reason| (*reason).to_owned())
        .collect()
    }

    /// Releases the range adds that count: a memory they name is released.
    pub(super) fn released<'l>(&self, diff: &Diff<'l>, range: &Range<'_>) -> HashSet<&'l str> {
        let mut released: HashSet<&str> = HashSet::new();
        for line in &diff.added {
            if let Some(Entry::Release(release)) = &line.entry
                && let Some(commit) = range.made(line)
                && self.counts(commit)
            {
                released.insert(&release.releases);
            }
        }
        released
    }

    /// The change an added line makes, judged.
    pub(super) fn added(
        &self,
        line: &Line,
        commit: Option<&CommitInfo>,
        diff: &Diff<'_>,
        released: &HashSet<&str>,
    ) -> Change {
        // A line of its id that stays is not replaced: this one reuses it.
        let edited = diff.replaces(line);
        let was = diff.was(line).filter(|_| edited);
        let mut change = Change {
            change: ChangeKind::Added,
            id: None,
            file: line.file.clone(),
            line: line.number,
            kind: None,
            content: None,
            author: None,
            target: None,
            was,
            introduced: commit.map(|commit| self.provenance(commit)),
            trust: None,
            trust_reasons: Vec::new(),
            flags: Vec::new(),
            stops: false,
            note: None,
        };
        match &line.entry {
            None => {
                change.change = ChangeKind::Unreadable;
                change.content = Some(shown(&line.raw, 400));
                change.flags = vec!["unreadable".to_owned()];
                change.note = line.problem.clone();
                // Readers skip it, but no memory is binary: what it holds
                // cannot be reviewed.
                if line.binary {
                    change.trust_reasons = vec![BINARY_LINE.to_owned()];
                    change.stops = true;
                }
            }
            Some(Entry::Memory(memory)) => {
                let reuses = self.reused.get(&line.key).map(String::as_str);
                self.added_memory(&mut change, memory, commit, edited, reuses, released);
            }
            Some(entry @ (Entry::Tombstone(_) | Entry::Release(_))) => {
                self.added_marker(&mut change, entry, commit, edited, diff);
                if let Some(holder) = self.reused.get(&line.key) {
                    change.trust_reasons.push(verdict::ID_REUSED.to_owned());
                    change.stops = true;
                    change.note = Some(format!(
                        "reuses the id of the line at {holder}, of another text (`id-reused`); {}",
                        change.note.take().unwrap_or_default()
                    ));
                }
            }
        }
        change
    }

    /// An added (or edited) memory: its flags and trust verdict.
    pub(super) fn added_memory(
        &self,
        change: &mut Change,
        memory: &Memory,
        commit: Option<&CommitInfo>,
        edited: bool,
        reuses: Option<&str>,
        released: &HashSet<&str>,
    ) {
        let suspicions = trust::check(memory, self.now, self.kinds.as_ref());
        let secret = suspicions
            .iter()
            .any(|s| matches!(s, trust::Suspicion::Secret { .. }));
        let mask = |text: &str| {
            if secret {
                redact(text)
            } else {
                text.to_owned()
            }
        };
        let claim = Claim {
            author: memory.author.as_deref(),
            imported: memory.extra.contains_key("imported_from"),
            instruction_like: suspicions
                .iter()
                .any(|s| matches!(s, trust::Suspicion::InstructionLike { .. })),
        };
        let mut reasons: Vec<String> = match commit {
            Some(commit) => self.judge(commit, &claim),
            None => verdict::quarantine(&claim, None, self.policy.as_ref()),
        }
        .into_iter()
        .map(str::to_owned)
        .collect();
        if commit.is_none() {
            reasons.push(UNATTRIBUTED.to_owned());
        }
        let release = !edited && commit.is_some() && released.contains(memory.id.as_str());
        if release {
            reasons.clear();
        }
        if edited {
            reasons.insert(0, EDITED_IN_PLACE.to_owned());
        }
        // No release makes a second text the memory whose id it takes.
        if let Some(holder) = reuses {
            reasons.push(verdict::ID_REUSED.to_owned());
            change.note = Some(format!(
                "reuses the id of the memory at {holder}, a line of another text: once merged it is not that memory, and is quarantined (`id-reused`)"
            ));
        }
        change.change = if edited {
            ChangeKind::Edited
        } else {
            ChangeKind::Added
        };
        change.id = Some(memory.id.clone());
        change.kind = Some(memory.kind.clone());
        change.content = Some(shown(&mask(&memory.content), 2000));
        change.author = memory.author.as_deref().map(&mask);
        change.flags = trust::flags(&suspicions)
            .split(',')
            .filter(|flag| !flag.is_empty())
            .map(str::to_owned)
            .collect();
        change.stops = !reasons.is_empty();
        change.trust = Some(if reasons.is_empty() {
            Trust::Trusted
        } else {
            Trust::Untrusted
        });
        change.trust_reasons = if release {
            vec!["released".to_owned()]
        } else if reasons.is_empty() {
            self.trusted_because(commit)
        } else {
            reasons
        };
    }

    /// An added (or edited) tombstone or release: what it forgets or
    /// releases, and whether it counts.
    pub(super) fn added_marker(
        &self,
        change: &mut Change,
        entry: &Entry,
        commit: Option<&CommitInfo>,
        edited: bool,
        diff: &Diff<'_>,
    ) {
        let (kind, target, author) = match entry {
            Entry::Tombstone(t) => (ChangeKind::Forgotten, &t.forgets, &t.author),
            Entry::Release(r) => (ChangeKind::Released, &r.releases, &r.author),
            Entry::Memory(_) => unreachable!("matched above"),
        };
        change.change = if edited { ChangeKind::Edited } else { kind };
        change.id = Some(entry.id().to_owned());
        change.kind = Some(
            match kind {
                ChangeKind::Forgotten => crate::domain::memory::TOMBSTONE_TYPE,
                _ => crate::domain::memory::RELEASE_TYPE,
            }
            .to_owned(),
        );
        change.author = author.as_deref().map(|a| shown(a, 200));
        change.target = Some(target.clone());
        let mut reasons: Vec<String> = Vec::new();
        if edited {
            reasons.push(EDITED_IN_PLACE.to_owned());
        }
        if commit.is_none() {
            reasons.push(UNATTRIBUTED.to_owned());
        }
        // A forget from outside the policy forgets nothing once
        // pulled; the attempt stops the review.
        if kind == ChangeKind::Forgotten
            && let Some(commit) = commit
        {
            reasons.extend(
                self.judge(commit, &Claim::default())
                    .into_iter()
                    .map(str::to_owned),
            );
        }
        change.stops = !reasons.is_empty();
        change.trust_reasons = reasons;
        let about = diff
            .content_of(target)
            .map(|content| format!(": {content}"))
            .unwrap_or_default();
        change.note = Some(match kind {
            ChangeKind::Forgotten => {
                // A forget from outside the policy forgets nothing:
                // said, and it stops the review (above).
                let outside: Vec<&str> = commit
                    .map(|commit| self.judge(commit, &Claim::default()))
                    .unwrap_or_default();
                if outside.is_empty() {
                    format!("forgets {target}{about}")
                } else {
                    format!(
                        "forgets {target}{about}; its commit is outside the trust policy ({}): it forgets nothing",
                        outside.join(", ")
                    )
                }
            }
            _ => {
                format!(
                    "releases {target}{about}; {}",
                    if commit.is_some_and(|commit| self.counts(commit)) {
                        "counts (its commit is inside the trust policy)"
                    } else {
                        "counts for nothing (its commit is outside the trust policy, or there is none)"
                    }
                )
            }
        });
    }

    /// A removed line: deleted in place, which stops the review.
    pub(super) fn removed(&self, line: &Line, commit: Option<&CommitInfo>) -> Change {
        let (kind, content, author) = match &line.entry {
            Some(Entry::Memory(memory)) => (
                Some(memory.kind.clone()),
                shown(&memory.content, 2000),
                memory.author.clone(),
            ),
            Some(entry) => (None, shown(&entry.to_line(), 400), None),
            None => (None, shown(&line.raw, 400), None),
        };
        Change {
            change: ChangeKind::Deleted,
            id: Some(line.key.0.clone()),
            file: line.file.clone(),
            line: line.number,
            kind,
            content: None,
            author: author.map(|a| shown(&a, 200)),
            target: None,
            was: Some(Was {
                file: line.file.clone(),
                line: line.number,
                content,
            }),
            introduced: commit.map(|commit| self.provenance(commit)),
            trust: None,
            trust_reasons: vec![DELETED_IN_PLACE.to_owned()],
            flags: Vec::new(),
            stops: true,
            note: None,
        }
    }

    /// The changes of the policy in the range, each judged under BASE's
    /// policy, as the memories are.
    pub(super) fn policy_changes(
        &self,
        steps: &[policy_history::Step<gix::ObjectId>],
        range: &mut Range<'_>,
    ) -> Vec<PolicyChange> {
        let commits = &range.commits;
        let policies = &mut range.policies;
        let (_, policy_steps) = policy_history::walk(
            steps,
            |commit| policies.seed(*commit),
            |index, _, _| self.judge(&commits[index], &Claim::default()),
        );
        let mut policy_changes = Vec::new();
        for change in policy_steps {
            let commit = &commits[change.step];
            let mut reasons: Vec<String> = if self.policy.is_some() {
                self.judge(commit, &Claim::default())
                    .into_iter()
                    .map(str::to_owned)
                    .collect()
            } else {
                Vec::new()
            };
            if matches!(change.after, Raw::Unusable(_)) {
                reasons.push(POLICY_UNUSABLE.to_owned());
            }
            policy_changes.push(PolicyChange {
                commit: self.provenance(commit),
                before: TrustPolicy::describe(change.before.as_ref()),
                after: describe_raw(&change.after),
                stops: !reasons.is_empty(),
                reasons,
            });
        }
        policy_changes
    }
}

/// Memory files taken from the driver (`-merge`, `merge=union`, a
/// `.gitattributes` of their own): concurrent appends then conflict and
/// a text merge may drop lines.
pub(super) fn attribute_changes(
    workspace: &Workspace,
    since: Option<gix::ObjectId>,
    head_id: gix::ObjectId,
) -> Vec<AttributeChange> {
    let mut attribute_changes = Vec::new();
    if let (Some(before), Some(after)) = (
        since.and_then(|id| workspace.memory_merge_at(id)),
        workspace.memory_merge_at(head_id),
    ) && before != after
    {
        attribute_changes.push(AttributeChange {
            attribute: "merge",
            stops: before == "goldfish",
            before,
            after,
        });
    }
    attribute_changes
}

/// What the range puts where memories are read that is not a folder or a
/// regular file (a submodule, a link): in HEAD and not so in `since`.
pub(super) fn folder_changes(
    workspace: &Workspace,
    since: Option<gix::ObjectId>,
    head_id: gix::ObjectId,
) -> Result<Vec<FolderChange>, AppError> {
    let git = |err| AppError::from(anyhow::Error::new(err));
    let before = match since {
        Some(since) => workspace.memory_folder_oddities_at(since).map_err(git)?,
        None => Vec::new(),
    };
    Ok(workspace
        .memory_folder_oddities_at(head_id)
        .map_err(git)?
        .into_iter()
        .filter(|odd| !before.contains(odd))
        .map(|odd| FolderChange {
            path: odd.path,
            kind: odd.kind,
            object: odd.id.to_string(),
            stops: true,
        })
        .collect())
}

/// A change of the allowed-signers file kept in the repository.
pub(super) fn signers_change(
    workspace: &Workspace,
    since: Option<gix::ObjectId>,
    head_id: gix::ObjectId,
) -> Option<SignersChange> {
    workspace.signers_file_in_repo().and_then(|path| {
        let before = since.and_then(|id| workspace.object_in_commit(id, &path));
        let after = workspace.object_in_commit(head_id, &path);
        (before != after).then(|| SignersChange {
            path,
            before: before.map(|id| id.to_string()),
            after: after.map(|id| id.to_string()),
            stops: true,
        })
    })
}

/// How what a commit's config says of the policy reads in a line.
pub(super) fn describe_raw(raw: &Raw) -> String {
    match raw {
        Raw::Absent => TrustPolicy::describe(None),
        Raw::Policy(policy) => TrustPolicy::describe(Some(policy)),
        Raw::Unusable(why) => format!("invalid ({why})"),
    }
}
