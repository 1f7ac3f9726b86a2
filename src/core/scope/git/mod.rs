//! Git change detection for the `auto` and `branch` scopes (docs/scopes.md): which files differ
//! between a commit and the working tree, where HEAD is, and which commit a branch grew from.
//!
//! It reads the repository in-process through gitoxide (`gix`: no `git` process, no network,
//! files stat'ed on parallel threads; `cargo bench --bench scope` compares it with `git status`)
//! and never writes to it, not even the index's stat cache, so a `git` command the user runs at
//! the same moment never finds the index locked by us.
//!
//! A workspace root may be a subfolder of the repository (a monorepo package with its own
//! `quality.yaml`): every path returned is relative to that root, and files outside it are left
//! out, because the workspace's gates cannot check them.

mod status;

pub(crate) use status::Status;

use std::path::{Component, Path, PathBuf};

use gix::ObjectId;
use gix::bstr::{BStr, ByteSlice};

/// An error reading the repository: one sentence, then gitoxide's message.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("Could not open the git repository that holds {path}: {source}")]
    Open { path: String, source: gix::Error },
    #[error("Could not read the git repository ({what}): {source}")]
    Read {
        what: &'static str,
        source: gix::Error,
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

pub(crate) fn read<E: Into<gix::Error>>(what: &'static str) -> impl FnOnce(E) -> GitError {
    move |source| GitError::Read {
        what,
        source: source.into(),
    }
}

/// An opened repository, seen from a workspace root inside its working tree.
pub struct Repo {
    repo: gix::Repository,
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
    /// `Ok(None)` when `root` is in no repository, or only in a bare one (no working tree).
    pub fn discover(root: &Path) -> Result<Option<Repo>, GitError> {
        // Like `git status`, do not verify the index's checksum on reading: it costs more than
        // the rest of reading, and only writing the index (never done here) depends on it.
        let skip_hash = ["index.skipHash=true"];
        let mut trust = gix::sec::trust::Mapping::<gix::open::Options>::default();
        trust.full = trust.full.config_overrides(skip_hash);
        trust.reduced = trust.reduced.config_overrides(skip_hash);
        let repo = match gix::ThreadSafeRepository::discover_opts(root, Default::default(), trust) {
            Ok(repo) => gix::Repository::from(repo),
            Err(e) if is_no_repository(&e) => return Ok(None),
            Err(source) => {
                return Err(GitError::Open {
                    path: root.display().to_string(),
                    source,
                });
            }
        };
        let Some(workdir) = repo.workdir() else {
            return Ok(None);
        };
        // Canonical forms on both sides, so a symlinked checkout or a `..` in the root still
        // yields the right prefix. A root outside the working tree (the `.git` folder) takes the
        // whole working tree: "not a repository" would walk the whole folder.
        let prefix = canonical(root)
            .strip_prefix(canonical(workdir))
            .map(posix)
            .unwrap_or_default();
        Ok(Some(Repo { repo, prefix }))
    }

    /// Whether git tracks `rel` (relative to the workspace root, POSIX): the index has an entry
    /// for it. An index that cannot be read counts as tracking nothing.
    pub fn tracks(&self, rel: &str) -> bool {
        let path = self.repo_path(rel);
        self.repo
            .index_or_empty()
            .is_ok_and(|index| index.entry_by_path(path.as_str().into()).is_some())
    }

    /// The repository itself, for readers of its objects (`changed_lines`).
    pub(crate) fn gix(&self) -> &gix::Repository {
        &self.repo
    }

    /// A path relative to the workspace root made relative to the repository's working tree.
    pub(crate) fn repo_path(&self, rel: &str) -> String {
        if self.prefix.is_empty() {
            rel.to_string()
        } else {
            format!("{}/{rel}", self.prefix)
        }
    }

    /// The root-relative path of a repository-relative one; `None` outside the workspace root.
    pub(crate) fn root_path(&self, repo_relative: &str) -> Option<String> {
        if self.prefix.is_empty() {
            return Some(repo_relative.to_string());
        }
        repo_relative
            .strip_prefix(&self.prefix)
            .and_then(|r| r.strip_prefix('/'))
            .map(str::to_owned)
    }

    /// The index file, whose stamp tells when answers of `tracks` may have changed.
    pub fn index_path(&self) -> PathBuf {
        self.repo.index_path()
    }

    /// The repository's own ignore rules (`info/exclude`, shared by its worktrees).
    pub fn exclude_path(&self) -> PathBuf {
        self.repo.common_dir().join("info").join("exclude")
    }

    /// HEAD's commit, full hexadecimal; `None` before the first commit.
    pub fn head_sha(&self) -> Option<String> {
        self.head_oid().map(|oid| oid.to_string())
    }

    fn head_oid(&self) -> Option<ObjectId> {
        self.repo.head_commit().ok().map(|c| c.id)
    }

    /// The checked-out branch (`main`, `feature/x`), also before its first commit; `None` when HEAD
    /// is detached.
    pub fn branch_name(&self) -> Option<String> {
        let name = self.repo.head_name().ok()??;
        let name = name.as_bstr().to_str().ok()?;
        name.strip_prefix("refs/heads/").map(str::to_owned)
    }

    /// Whether `sha` is HEAD or one of its ancestors; false when the commit is missing (rebased
    /// away, beyond a shallow clone's depth), is not a commit, or there is no HEAD yet.
    pub fn is_ancestor_of_head(&self, sha: &str) -> bool {
        let (Some(head), Some(oid)) = (self.head_oid(), self.commit_id(sha)) else {
            return false;
        };
        // `sha` is an ancestor exactly when it is its own merge-base with HEAD. An error here
        // (history cut short by a shallow clone) means ancestry cannot be proven.
        head == oid
            || matches!(self.repo.merge_base(head, oid), Ok(Some(base)) if base.detach() == oid)
    }

    /// The commit `sha` names, if it exists in the object database and is a commit.
    fn commit_id(&self, sha: &str) -> Option<ObjectId> {
        let oid = ObjectId::from_hex(sha.as_bytes()).ok()?;
        self.repo.find_commit(oid).ok().map(|c| c.id)
    }

    /// The merge-base of HEAD with the parent branch: `configured` if given (a local branch, else
    /// `origin/<name>`, else any revision git understands), else the remote's default branch
    /// (`refs/remotes/origin/HEAD`), else `main`, else `master` (local first, then `origin/…`).
    ///
    /// `Ok(None)` when there is no HEAD yet or no candidate shares history with HEAD; an error when
    /// the configured branch does not exist (a mistake the user should hear about).
    pub fn parent_branch_base(
        &self,
        configured: Option<&str>,
    ) -> Result<Option<ParentBase>, GitError> {
        let Some(head) = self.head_oid() else {
            return Ok(None);
        };
        if let Some(name) = configured {
            let oid = self
                .commit_of(&format!("refs/heads/{name}"))
                .or_else(|| self.commit_of(&format!("refs/remotes/origin/{name}")))
                .or_else(|| self.revision(name))
                .ok_or_else(|| GitError::UnknownParentBranch(name.to_owned()))?;
            return Ok(self.merge_base(head, oid).map(|sha| ParentBase {
                name: name.to_owned(),
                sha,
            }));
        }
        let mut candidates: Vec<String> = self.remote_default_branch().into_iter().collect();
        for name in ["main", "master"] {
            candidates.push(name.to_owned());
            candidates.push(format!("origin/{name}"));
        }
        for name in candidates {
            let refname = if name.contains('/') {
                format!("refs/remotes/{name}")
            } else {
                format!("refs/heads/{name}")
            };
            let Some(oid) = self.commit_of(&refname) else {
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
        let head = self
            .repo
            .try_find_reference("refs/remotes/origin/HEAD")
            .ok()??;
        match head.target() {
            gix::refs::TargetRef::Symbolic(target) => target
                .as_bstr()
                .to_str()
                .ok()?
                .strip_prefix("refs/remotes/")
                .map(str::to_owned),
            gix::refs::TargetRef::Object(_) => None,
        }
    }

    /// The commit a full reference name points to, through tags.
    fn commit_of(&self, refname: &str) -> Option<ObjectId> {
        let mut reference = self.repo.try_find_reference(refname).ok()??;
        reference.peel_to_commit().ok().map(|c| c.id)
    }

    /// The full id of the commit a revision names (`HEAD~1`, `main`, a tag, a short id).
    pub fn resolve_commit(&self, spec: &str) -> Option<String> {
        self.revision(spec).map(|o| o.to_string())
    }

    fn revision(&self, spec: &str) -> Option<ObjectId> {
        let id = self.repo.rev_parse_single(spec).ok()?;
        id.object().ok()?.peel_to_commit().ok().map(|c| c.id)
    }

    fn merge_base(&self, head: ObjectId, other: ObjectId) -> Option<String> {
        let base = self.repo.merge_base(head, other).ok()??;
        Some(base.to_string())
    }

    /// Every existing file that differs between commit `base` and the working tree: committed
    /// since, staged or not, plus untracked files git does not ignore. Deleted files are left out;
    /// a renamed file appears under its new name. With `base = None` (no commit yet) the
    /// comparison is with the empty tree: every staged file and every untracked one.
    ///
    /// Submodules are not entered and do not appear: their files belong to another repository.
    pub fn changed_since(&self, base: Option<&str>) -> Result<Changes, GitError> {
        Ok(self.status(base)?.changes(self))
    }

    /// The tree of commit `sha`.
    pub(crate) fn base_tree(&self, sha: &str) -> Result<ObjectId, GitError> {
        let unknown = || GitError::UnknownCommit(sha.to_owned());
        let oid = ObjectId::from_hex(sha.as_bytes()).map_err(|_| unknown())?;
        let commit = self.repo.find_commit(oid).map_err(|_| unknown())?;
        commit
            .tree_id()
            .map(|id| id.detach())
            .map_err(read("the baseline commit's tree"))
    }

    fn exists(&self, repo_relative: &BStr) -> bool {
        let (Some(workdir), Ok(path)) = (self.repo.workdir(), repo_relative.to_str()) else {
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
        use gix::state::InProgress;
        let state = match self.repo.state() {
            None => None,
            Some(InProgress::Merge) => Some(
                "A merge is in progress: files are checked as they stand in the working tree, conflicts included.",
            ),
            Some(
                InProgress::Rebase | InProgress::RebaseInteractive | InProgress::ApplyMailboxRebase,
            ) => Some("A rebase is in progress: HEAD is a commit part-way through it."),
            Some(InProgress::ApplyMailbox) => Some("A `git am` is in progress."),
            Some(InProgress::CherryPick | InProgress::CherryPickSequence) => {
                Some("A cherry-pick is in progress.")
            }
            Some(InProgress::Revert | InProgress::RevertSequence) => {
                Some("A revert is in progress.")
            }
            Some(InProgress::Bisect) => Some("A bisect is in progress."),
        };
        let mut notes: Vec<String> = state.into_iter().map(str::to_owned).collect();
        if self.repo.is_shallow().unwrap_or(false) {
            notes.push(
                "This is a shallow clone: commits older than its depth are missing, so a baseline or parent branch beyond it cannot be compared with.".to_owned(),
            );
        }
        if self.repo.head().is_ok_and(|h| h.is_detached()) {
            notes.push("HEAD is detached: no branch is checked out.".to_owned());
        }
        notes
    }
}

/// Whether discovery failed only because no repository holds the folder.
fn is_no_repository(error: &gix::Error) -> bool {
    use gix::discover::upwards::Error;
    error.downcast_any_ref::<Error>().is_some_and(|e| {
        matches!(
            e,
            Error::NoGitRepository { .. }
                | Error::NoGitRepositoryWithinCeiling { .. }
                | Error::NoGitRepositoryWithinFs { .. }
        )
    })
}

/// A path that cannot be canonicalized (removed meanwhile) is compared as given.
fn canonical(path: &Path) -> PathBuf {
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
