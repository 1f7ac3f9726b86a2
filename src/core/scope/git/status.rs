//! `changed_since` in its two halves: the base tree against the index, and the index against
//! the working tree (plus untracked files). The working tree's half can be taken for a few paths
//! alone, which is how the language server keeps its `auto` scope current (`scope::tracker`).

use std::collections::BTreeSet;

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};
use gix::status::index_worktree::Item as WorktreeItem;
use gix::status::plumbing::index_as_worktree::{Change, EntryStatus};

use super::{Changes, GitError, Repo, read};

/// `changed_since` in two halves (`Repo::status`). Paths are repository-relative.
#[derive(Debug, Clone, Default)]
pub(crate) struct Status {
    /// Added or modified between the base and the index (deletions are no files to check).
    pub(crate) staged: BTreeSet<BString>,
    pub(crate) worktree: WorktreeChanges,
    /// What the report says about the repository's state (`Changes::notes`).
    pub(crate) notes: Vec<String>,
}

/// The index against the working tree, plus untracked files. Paths are repository-relative.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct WorktreeChanges {
    /// Modified, added with `git add -N`, conflicted, or untracked and not ignored.
    pub(crate) changed: BTreeSet<BString>,
    /// In the index but deleted from the working tree.
    pub(crate) removed: BTreeSet<BString>,
}

impl WorktreeChanges {
    fn add(&mut self, repo: &Repo, item: WorktreeItem) {
        match item {
            WorktreeItem::Modification {
                rela_path, status, ..
            } => match status {
                // Changed since the baseline, then deleted without staging: not checked.
                EntryStatus::Change(Change::Removed) => {
                    self.removed.insert(rela_path);
                }
                EntryStatus::Change(Change::SubmoduleModification(_)) => {}
                EntryStatus::Change(_) | EntryStatus::IntentToAdd => {
                    self.changed.insert(rela_path);
                }
                // A conflicted path may be deleted on our side of the merge.
                EntryStatus::Conflict { .. } => {
                    if repo.exists(rela_path.as_bstr()) {
                        self.changed.insert(rela_path);
                    }
                }
                // Only the stat changed, the content did not.
                EntryStatus::NeedsUpdate(_) => {}
            },
            WorktreeItem::DirectoryContents { entry, .. }
            | WorktreeItem::Rewrite {
                dirwalk_entry: entry,
                ..
            } => {
                let is_file = matches!(
                    entry.disk_kind,
                    Some(gix::dir::entry::Kind::File | gix::dir::entry::Kind::Symlink)
                );
                // An untracked nested repository is another project, no file to check.
                if is_file && entry.status == gix::dir::entry::Status::Untracked {
                    self.changed.insert(entry.rela_path);
                }
            }
        }
    }

    /// Replaces what is known under `paths` (repository-relative files or folders) with `fresh`,
    /// the status of exactly those paths.
    pub(crate) fn replace_under(&mut self, paths: &[BString], fresh: WorktreeChanges) {
        let under = |p: &BString| {
            paths
                .iter()
                .any(|q| p == q || (p.starts_with(q.as_slice()) && p.get(q.len()) == Some(&b'/')))
        };
        self.changed.retain(|p| !under(p));
        self.removed.retain(|p| !under(p));
        self.changed.extend(fresh.changed);
        self.removed.extend(fresh.removed);
    }
}

impl Status {
    /// The files in scope: staged since the base and still on disk, or changed in the working
    /// tree.
    pub(crate) fn changes(&self, repo: &Repo) -> Changes {
        let paths = self
            .staged
            .iter()
            .filter(|p| !self.worktree.removed.contains(*p))
            .chain(&self.worktree.changed)
            .collect::<BTreeSet<_>>();
        let (files, unreadable) = repo.workspace_paths(paths.into_iter());
        let mut notes = self.notes.clone();
        if unreadable > 0 {
            notes.push(format!(
                "{unreadable} changed file(s) with a name that is not valid UTF-8 were left out of scope."
            ));
        }
        Changes { files, notes }
    }
}

impl Repo {
    /// `changed_since` in its two halves, so that the working tree's half can be brought up to
    /// date path by path.
    pub(crate) fn status(&self, base: Option<&str>) -> Result<Status, GitError> {
        let tree = match base {
            Some(sha) => self.base_tree(sha)?,
            None => ObjectId::empty_tree(self.repo.object_hash()),
        };
        let index = self
            .repo
            .index_or_empty()
            .map_err(read("reading the index"))?;
        // Like `git status`, take a valid cache tree at its word: when the index is exactly the
        // base tree, comparing the two (inflating every tree object) can only come out empty.
        let index_is_base = index_matches_tree(&index, tree);
        // Git's own rule for its parallel stat: a thread per 500 entries (gix would split even a
        // 20-file index over every core). One core is left to the walk for untracked files,
        // which runs alongside: more stat threads than cores contend in the kernel's path lookup.
        let cores = crate::core::cores();
        let threads = (index.entries().len() / 500).clamp(1, cores.saturating_sub(1).max(1));
        // One status, like `git status` with the base tree in place of HEAD's.
        let platform = self.status_platform(index, threads)?;
        let patterns = self.workspace_pattern();
        let compare = read("comparing the baseline with the working tree");
        let items: Box<dyn Iterator<Item = Result<gix::status::Item, gix::Error>>> =
            if index_is_base {
                let iter = platform
                    .into_index_worktree_iter(patterns)
                    .map_err(compare)?;
                Box::new(iter.map(|item| item.map(gix::status::Item::IndexWorktree)))
            } else {
                let iter = platform
                    .head_tree(tree)
                    .into_iter(patterns)
                    .map_err(compare)?;
                Box::new(iter)
            };
        let mut status = Status::default();
        for item in items {
            match item.map_err(read("comparing the baseline with the working tree"))? {
                gix::status::Item::TreeIndex(change) => {
                    // A deletion is no file to check, nor is a gitlink (a submodule).
                    let (location, _, mode, _) = change.fields();
                    if !matches!(change, gix::diff::index::ChangeRef::Deletion { .. })
                        && !mode.is_submodule()
                    {
                        status.staged.insert(location.to_owned());
                    }
                }
                gix::status::Item::IndexWorktree(item) => status.worktree.add(self, item),
            }
        }
        status.notes = self.state_notes();
        Ok(status)
    }

    /// The working tree's half of the status (against the index, plus untracked files) for
    /// `paths` only: files or folders, relative to the workspace root, POSIX. Reads only those
    /// paths, so it costs what they cost, not what the repository does.
    pub(crate) fn worktree_status(&self, paths: &[String]) -> Result<WorktreeChanges, GitError> {
        // gix compares only the index entries under the pathspecs' common prefix: one status per
        // top-level folder, so two paths far apart do not match every entry of the index.
        let mut groups: std::collections::BTreeMap<&str, Vec<BString>> = Default::default();
        for p in paths {
            let top = p.split('/').next().unwrap_or(p);
            groups
                .entry(top)
                .or_default()
                .push(format!(":(top,literal){}", self.repo_path(p)).into());
        }
        let mut changes = WorktreeChanges::default();
        for patterns in groups.into_values() {
            let index = self
                .repo
                .index_or_empty()
                .map_err(read("reading the index"))?;
            let compare = read("comparing the index with the working tree");
            let items = self
                .status_platform(index, 1)?
                .into_index_worktree_iter(patterns)
                .map_err(compare)?;
            for item in items {
                changes.add(
                    self,
                    item.map_err(read("comparing the index with the working tree"))?,
                );
            }
        }
        Ok(changes)
    }

    /// The status of the working tree, as `git status -uall` takes it: untracked files one by
    /// one, submodules not entered.
    ///
    /// No rename detection: it pairs a deletion with an addition but changes neither path, and
    /// the new paths are all the scope needs; pairing them would cost a content comparison of
    /// every added file against every deleted one.
    fn status_platform(
        &self,
        index: gix::worktree::Index,
        threads: usize,
    ) -> Result<gix::status::Platform<'_, gix::progress::Discard>, GitError> {
        Ok(self
            .repo
            .status(gix::progress::Discard)
            .map_err(read("preparing the status"))?
            .index(index.into())
            .untracked_files(gix::status::UntrackedFiles::Files)
            .index_worktree_submodules(None)
            .index_worktree_rewrites(None)
            .index_worktree_options_mut(|o| o.thread_limit = Some(threads))
            .tree_index_track_renames(gix::status::tree_index::TrackRenames::Disabled))
    }

    /// The pathspec that keeps a status inside the workspace root. `:(top)` because gix reads
    /// patterns relative to the process's current folder, which need not be the root; `literal`
    /// so a folder named with `*` or `[` is not taken for a pattern.
    fn workspace_pattern(&self) -> Vec<BString> {
        if self.prefix.is_empty() {
            Vec::new()
        } else {
            vec![format!(":(top,literal){}", self.prefix).into()]
        }
    }

    /// Repository-relative paths made workspace-relative, in order; names that are not UTF-8
    /// are counted instead.
    fn workspace_paths<'p>(
        &self,
        paths: impl Iterator<Item = &'p BString>,
    ) -> (Vec<String>, usize) {
        let mut unreadable = 0;
        let files = paths
            .filter_map(|bytes| match bytes.to_str() {
                Ok(path) => self.relative(path).map(str::to_owned),
                Err(_) => {
                    unreadable += 1;
                    None
                }
            })
            .collect();
        (files, unreadable)
    }
}

/// Whether the index is exactly `tree`: its cache tree is valid, names `tree`, and counts every
/// entry of the index (an entry the cache tree does not count, such as one added with
/// `git add -N`, or a conflict's several stages, makes the counts differ).
fn index_matches_tree(index: &gix::index::State, tree: ObjectId) -> bool {
    index.tree().is_some_and(|root| {
        root.id == tree
            && root
                .num_entries
                .is_some_and(|n| usize::try_from(n).is_ok_and(|n| n == index.entries().len()))
    })
}
