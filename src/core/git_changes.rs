//! Git change detection for the `auto` and `branch` scopes (SPEC §3, §4): which files differ between
//! a commit and the working tree, where HEAD is, and which commit a branch grew from.
//!
//! It reads the repository in-process through libgit2 (no `git` process, no network) and never writes
//! to it: not even the index's stat cache, so a `git` command the user runs at the same moment never
//! finds the index locked by us.
//!
//! A workspace root may be a subfolder of the repository (a monorepo package with its own
//! `quality.yaml`): every path this module returns is relative to that root, and files outside it are
//! left out, because the workspace's gates cannot check them.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use git2::{
    Delta, DiffDelta, DiffOptions, ErrorCode, FileMode, Oid, Repository, RepositoryState, Tree,
};

/// An error reading the repository. Each says in one sentence what went wrong; the libgit2 message
/// follows for the log.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("Could not open the git repository that holds {path}: {source}")]
    Open { path: String, source: git2::Error },
    #[error("Could not read the git repository ({what}): {source}")]
    Read {
        what: &'static str,
        source: git2::Error,
    },
    #[error(
        "The commit {0} is not in this repository (it may have been rebased or reset away, or the clone is shallow)."
    )]
    UnknownCommit(String),
    #[error(
        "The parent branch `{0}` is neither a local branch nor origin/{0}. Fetch it, or fix `parent_branch` in quality.yaml."
    )]
    UnknownParentBranch(String),
}

fn read(what: &'static str) -> impl FnOnce(git2::Error) -> GitError {
    move |source| GitError::Read { what, source }
}

/// An opened repository, seen from a workspace root inside its working tree.
pub struct Repo {
    repo: Repository,
    /// The workspace root relative to the repository's working tree, POSIX, without a trailing
    /// slash; empty when the root is the working tree itself.
    prefix: String,
}

/// The commit a branch grew from: the merge-base of HEAD with the parent branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParentBase {
    /// The parent branch as found: `main`, `origin/main`, or the configured name.
    pub name: String,
    /// The merge-base commit, full hexadecimal.
    pub sha: String,
}

/// The files in scope, and what the report should say about the repository's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// Relative to the workspace root, POSIX, sorted, unique; existing files only.
    pub files: Vec<String>,
    /// One sentence each: a merge or rebase in progress, a shallow clone, a detached HEAD, names that
    /// could not be read.
    pub notes: Vec<String>,
}

impl Repo {
    /// Opens the repository whose working tree holds `root` (searching upwards like `git` does).
    /// `Ok(None)` when `root` is in no repository, or only in a bare one, which has no working tree
    /// to compare with.
    pub fn discover(root: &Path) -> Result<Option<Repo>, GitError> {
        let open_error = |source| GitError::Open {
            path: root.display().to_string(),
            source,
        };
        let repo = match Repository::discover(root) {
            Ok(repo) => repo,
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(open_error(e)),
        };
        let Some(workdir) = repo.workdir() else {
            return Ok(None);
        };
        // Canonical forms on both sides, so a symlinked checkout or a `..` in the root still
        // yields the right prefix.
        let workdir = canonical(workdir);
        let root = canonical(root);
        let prefix = match root.strip_prefix(&workdir) {
            Ok(rel) => posix(rel),
            // The root is the `.git` folder or elsewhere outside the working tree: nothing in
            // the working tree belongs to it, yet treating it as "not a repository" would walk
            // the whole folder; the working tree itself is the sensible scope.
            Err(_) => String::new(),
        };
        Ok(Some(Repo { repo, prefix }))
    }

    /// HEAD's commit, full hexadecimal; `None` before the first commit.
    pub fn head_sha(&self) -> Option<String> {
        self.head_oid().map(|oid| oid.to_string())
    }

    fn head_oid(&self) -> Option<Oid> {
        self.repo.head().ok()?.peel_to_commit().ok().map(|c| c.id())
    }

    /// The checked-out branch (`main`, `feature/x`), also before its first commit; `None` when HEAD
    /// is detached.
    pub fn branch_name(&self) -> Option<String> {
        // Read HEAD's symbolic target rather than `head()`, which fails on an unborn branch.
        let head = self.repo.find_reference("HEAD").ok()?;
        let target = head.symbolic_target().ok()??;
        target.strip_prefix("refs/heads/").map(str::to_owned)
    }

    /// Whether `sha` is HEAD or one of its ancestors. False when the commit is missing (rebased or
    /// reset away and collected, beyond a shallow clone's depth), is not a commit, or when there is
    /// no HEAD yet.
    pub fn is_ancestor_of_head(&self, sha: &str) -> bool {
        let (Some(head), Ok(oid)) = (self.head_oid(), Oid::from_str(sha)) else {
            return false;
        };
        if self.repo.find_commit(oid).is_err() {
            return false;
        }
        // An error here (history cut short by a shallow clone) means we cannot prove ancestry.
        head == oid || self.repo.graph_descendant_of(head, oid).unwrap_or(false)
    }

    /// The merge-base of HEAD with the parent branch: `configured` if given (a local branch, else
    /// `origin/<name>`, else any revision git understands), else the remote's default branch
    /// (`refs/remotes/origin/HEAD`), else `main`, else `master` (local first, then `origin/…`).
    ///
    /// `Ok(None)` when there is no HEAD yet or no candidate shares history with HEAD; an error when
    /// the configured branch does not exist, since that is a mistake the user should hear about.
    pub fn parent_branch_base(
        &self,
        configured: Option<&str>,
    ) -> Result<Option<ParentBase>, GitError> {
        let Some(head) = self.head_oid() else {
            return Ok(None);
        };
        if let Some(name) = configured {
            let oid = self
                .resolve_branch(name)
                .or_else(|| self.revision(name))
                .ok_or_else(|| GitError::UnknownParentBranch(name.to_owned()))?;
            return Ok(self.merge_base(head, oid).map(|sha| ParentBase {
                name: name.to_owned(),
                sha,
            }));
        }
        let mut candidates = Vec::new();
        if let Some(default) = self.remote_default_branch() {
            candidates.push(default);
        }
        for name in ["main", "master"] {
            candidates.push(name.to_owned());
            candidates.push(format!("origin/{name}"));
        }
        for name in candidates {
            let Some(oid) = self.revision_of_ref(&name) else {
                continue;
            };
            // Unrelated histories (or a shallow clone that stops short of the fork point) have
            // no merge-base: the next candidate may.
            if let Some(sha) = self.merge_base(head, oid) {
                return Ok(Some(ParentBase { name, sha }));
            }
        }
        Ok(None)
    }

    /// `origin/<default>` from `refs/remotes/origin/HEAD`, which `git clone` and
    /// `git remote set-head origin -a` set.
    fn remote_default_branch(&self) -> Option<String> {
        let head = self.repo.find_reference("refs/remotes/origin/HEAD").ok()?;
        let target = head.symbolic_target().ok()??;
        target.strip_prefix("refs/remotes/").map(str::to_owned)
    }

    fn resolve_branch(&self, name: &str) -> Option<Oid> {
        let local = format!("refs/heads/{name}");
        let remote = format!("refs/remotes/origin/{name}");
        self.commit_of(&local).or_else(|| self.commit_of(&remote))
    }

    /// `main` → `refs/heads/main`, `origin/main` → `refs/remotes/origin/main`.
    fn revision_of_ref(&self, name: &str) -> Option<Oid> {
        if name.contains('/') {
            self.commit_of(&format!("refs/remotes/{name}"))
                .or_else(|| self.commit_of(&format!("refs/heads/{name}")))
        } else {
            self.commit_of(&format!("refs/heads/{name}"))
        }
    }

    fn commit_of(&self, refname: &str) -> Option<Oid> {
        let reference = self.repo.find_reference(refname).ok()?;
        reference.peel_to_commit().ok().map(|c| c.id())
    }

    /// The full id of the commit a revision names (`HEAD~1`, `main`, a tag, a short id).
    pub fn resolve_commit(&self, spec: &str) -> Option<String> {
        self.revision(spec).map(|o| o.to_string())
    }

    fn revision(&self, spec: &str) -> Option<Oid> {
        let object = self.repo.revparse_single(spec).ok()?;
        object.peel_to_commit().ok().map(|c| c.id())
    }

    fn merge_base(&self, head: Oid, other: Oid) -> Option<String> {
        self.repo
            .merge_base(head, other)
            .ok()
            .map(|o| o.to_string())
    }

    /// Every existing file that differs between commit `base` and the working tree: committed
    /// since, staged or not, plus untracked files git does not ignore. Deleted files are left out;
    /// a renamed file appears under its new name. With `base = None` (no commit yet) the
    /// comparison is with the empty tree: every staged file and every untracked one.
    ///
    /// Submodules are not entered and do not appear: their files belong to another repository.
    pub fn changed_since(&self, base: Option<&str>) -> Result<Changes, GitError> {
        let tree = match base {
            Some(sha) => Some(self.base_tree(sha)?),
            None => None,
        };
        let mut options = DiffOptions::new();
        options
            .include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_typechange(true)
            .ignore_submodules(true)
            // Only which files changed matters; never read a file's content to classify it.
            .skip_binary_check(true)
            .update_index(false);
        // Limit both the tree walk and the working-tree walk to the workspace, so a package of a
        // large monorepo does not pay for the rest. libgit2 matches a folder pathspec against the
        // files below it only when it has no wildcard character; a folder named with one is
        // walked whole and filtered by `relative` below (which filters in every case).
        if !self.prefix.is_empty() && !self.prefix.contains(['*', '?', '[', '\\']) {
            options
                .pathspec(self.prefix.as_str())
                .disable_pathspec_match(true);
        }
        // Two cheap diffs instead of one status with rename detection: base tree → index compares
        // tree entries with index entries by id, and index → working tree stats each file against
        // the index (hashing only those whose stat changed), as `git status` does.
        //
        // No rename detection: it pairs a deletion with an addition but changes neither path, and
        // the new paths are all this function returns; pairing them would cost a content
        // comparison of every added file against every deleted one.
        let mut index = self.repo.index().map_err(read("the index"))?;
        // The repository may be long-lived (the language server): take the index as it is now.
        index.read(false).map_err(read("the index"))?;
        let to_index = self
            .repo
            .diff_tree_to_index(tree.as_ref(), Some(&index), Some(&mut options))
            .map_err(read("comparing the baseline with the index"))?;
        let to_workdir = self
            .repo
            .diff_index_to_workdir(Some(&index), Some(&mut options))
            .map_err(read("comparing the index with the working tree"))?;

        // Merged by hand rather than with `git diff <base>`'s rules, which drop a file that is
        // staged for deletion yet still present (untracked) in the working tree.
        let mut paths: BTreeSet<&[u8]> = to_index
            .deltas()
            .filter_map(|d| self.existing_path(&d))
            .collect();
        for delta in to_workdir.deltas() {
            if let Some(path) = self.existing_path(&delta) {
                paths.insert(path);
            } else if delta.status() == Delta::Deleted {
                // Changed since the baseline, then deleted without staging: not checked.
                if let Some(path) = delta.old_file().path_bytes() {
                    paths.remove(path);
                }
            }
        }

        let mut files = Vec::with_capacity(paths.len());
        let mut unreadable = 0usize;
        for bytes in paths {
            match std::str::from_utf8(bytes) {
                Ok(path) => {
                    if let Some(rel) = self.relative(path) {
                        files.push(rel.to_owned());
                    }
                }
                Err(_) => unreadable += 1,
            }
        }

        let mut notes = self.state_notes();
        if unreadable > 0 {
            notes.push(format!(
                "{unreadable} changed file(s) with a name that is not valid UTF-8 were left out of scope."
            ));
        }
        Ok(Changes { files, notes })
    }

    fn base_tree(&self, sha: &str) -> Result<Tree<'_>, GitError> {
        let unknown = || GitError::UnknownCommit(sha.to_owned());
        let oid = Oid::from_str(sha).map_err(|_| unknown())?;
        let commit = self.repo.find_commit(oid).map_err(|_| unknown())?;
        commit.tree().map_err(read("the baseline commit's tree"))
    }

    /// The path on the new side of `delta` when that side is a file that exists: not a deletion,
    /// not a submodule, not an untracked nested repository (`dir/`).
    fn existing_path<'d>(&self, delta: &DiffDelta<'d>) -> Option<&'d [u8]> {
        match delta.status() {
            Delta::Added
            | Delta::Modified
            | Delta::Renamed
            | Delta::Copied
            | Delta::Typechange
            | Delta::Untracked
            | Delta::Conflicted => {}
            Delta::Deleted | Delta::Unmodified | Delta::Ignored | Delta::Unreadable => return None,
        }
        let new = delta.new_file();
        if new.mode() == FileMode::Commit {
            return None;
        }
        let path = new.path_bytes()?;
        if path.ends_with(b"/") {
            return None;
        }
        // A conflicted path may be deleted on our side of the merge.
        if delta.status() == Delta::Conflicted && !self.exists(path) {
            return None;
        }
        Some(path)
    }

    fn exists(&self, repo_relative: &[u8]) -> bool {
        let Some(workdir) = self.repo.workdir() else {
            return false;
        };
        let Ok(path) = std::str::from_utf8(repo_relative) else {
            return false;
        };
        workdir.join(path).symlink_metadata().is_ok()
    }

    /// A repository-relative path made relative to the workspace root; `None` outside it.
    fn relative<'p>(&self, path: &'p str) -> Option<&'p str> {
        if self.prefix.is_empty() {
            return Some(path);
        }
        path.strip_prefix(self.prefix.as_str())?.strip_prefix('/')
    }

    fn state_notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        match self.repo.state() {
            RepositoryState::Clean => {}
            RepositoryState::Merge => notes.push(
                "A merge is in progress: files are checked as they stand in the working tree, conflicts included.".to_owned(),
            ),
            RepositoryState::Rebase
            | RepositoryState::RebaseInteractive
            | RepositoryState::RebaseMerge
            | RepositoryState::ApplyMailboxOrRebase => notes.push(
                "A rebase is in progress: HEAD is a commit part-way through it.".to_owned(),
            ),
            RepositoryState::ApplyMailbox => notes.push("A `git am` is in progress.".to_owned()),
            RepositoryState::CherryPick | RepositoryState::CherryPickSequence => {
                notes.push("A cherry-pick is in progress.".to_owned());
            }
            RepositoryState::Revert | RepositoryState::RevertSequence => {
                notes.push("A revert is in progress.".to_owned());
            }
            RepositoryState::Bisect => notes.push("A bisect is in progress.".to_owned()),
        }
        if self.repo.is_shallow() {
            notes.push(
                "This is a shallow clone: commits older than its depth are missing, so a baseline or parent branch beyond it cannot be compared with.".to_owned(),
            );
        }
        if self.repo.head_detached().unwrap_or(false) {
            notes.push("HEAD is detached: no branch is checked out.".to_owned());
        }
        notes
    }
}

fn canonical(path: &Path) -> PathBuf {
    // A root that cannot be canonicalized (removed meanwhile) is compared as given.
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

fn posix(rel: &Path) -> String {
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_string_lossy()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}
