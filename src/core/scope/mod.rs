//! Which files a run checks. `auto` takes what changed since the branch's baseline (plus the files
//! that failed since), `branch` what changed since the parent branch, `project` walks the
//! workspace (honouring .gitignore) through the `project_scope` globs, `files` takes the paths given.

pub mod baseline;
pub(crate) mod changed_lines;
pub(crate) mod choice;
pub(crate) mod foreign_dirs;
pub mod git;
pub mod tracker;
pub mod watcher;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::core::config::Config;
use crate::core::scope::baseline::StateStore;
use crate::core::scope::foreign_dirs::{ForeignFilter, is_foreign};
use crate::core::scope::git::{Changes, GitError, Repo};
use crate::core::workspace::paths::{lexical_clean, relative_posix};

/// What the caller asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeRequest {
    /// Changed since the baseline (working tree included), plus untracked files and the branch's
    /// failed files; without a baseline, as `Branch`.
    Auto,
    /// Changed since the merge-base with the parent branch, plus working-tree changes.
    Branch,
    Project,
    /// Paths absolute or relative to the process's working directory; folders are walked.
    Files(Vec<PathBuf>),
}

/// The files of a run, root-relative POSIX paths, sorted and unique.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolvedScope {
    pub mode: &'static str,
    pub files: Vec<String>,
    pub baseline_sha: Option<String>,
    pub note: Option<String>,
    /// For `auto` and `branch` runs in a repository: the state entry the run may advance.
    pub baseline: Option<BaselineTarget>,
    /// For `auto` and `branch` runs in a repository: the commit the changed files were taken
    /// from (the baseline, the parent branch's merge-base, or HEAD); `None` before the first
    /// commit, when every file is new.
    pub changed_since: Option<String>,
}

/// Which branch entry a run updates, and the commit a green run makes its baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BaselineTarget {
    pub branch: String,
    pub head: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    #[error("`{0}` does not exist. Check the path (it is taken relative to the current folder).")]
    NotFound(String),
    #[error(
        "`{path}` is outside the workspace root {root}. Give paths inside the workspace, or run from (or pass --root) the workspace that holds them."
    )]
    OutsideRoot { path: String, root: String },
    #[error("{0}")]
    Git(String),
}

/// The state key of a detached HEAD.
pub const DETACHED: &str = "(detached HEAD)";

pub fn resolve(
    root: &Path,
    config: &Config,
    request: &ScopeRequest,
) -> Result<ResolvedScope, ScopeError> {
    match request {
        ScopeRequest::Auto | ScopeRequest::Branch => resolve_changes(root, config, request),
        ScopeRequest::Project => Ok(ResolvedScope {
            mode: "project",
            files: project_files(root, config),
            ..Default::default()
        }),
        ScopeRequest::Files(paths) => {
            let mut files = explicit_files(root, paths)?;
            let left_out = ForeignFilter::new(root).retain(&mut files);
            Ok(ResolvedScope {
                mode: "files",
                files,
                note: (left_out > 0).then(|| {
                    format!(
                        "{left_out} of the files given {} inside tools' folders (a virtual environment, node_modules, a cache) or another repository, and left out",
                        if left_out == 1 { "is" } else { "are" }
                    )
                }),
                ..Default::default()
            })
        }
    }
}

/// Every file of the workspace that git would not ignore, through the `project_scope` globs.
pub fn project_files(root: &Path, config: &Config) -> Vec<String> {
    let mut files = walk(root, root);
    if let Some(globs) = &config.project_scope {
        files.retain(|f| globs.matches(f));
    }
    files
}

/// How qgates walks a workspace: .gitignore honoured (in or out of a git repository), hidden
/// files included, links never followed, tools' folders and nested repositories left out
/// (`foreign_dirs`).
pub(crate) fn project_walker(start: &Path) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(start);
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| {
            // In a linked worktree (a clean room's, or the user's own) `.git` is a file.
            let folder = e.file_type().is_some_and(|t| t.is_dir());
            e.file_name() != ".git"
                && (e.depth() == 0 || !folder || !is_foreign(e.path(), e.file_name()))
        });
    builder
}

/// The files under `start`, relative to `root`, sorted; folders are read on every core (a
/// monorepo has thousands).
fn walk(root: &Path, start: &Path) -> Vec<String> {
    let found = Mutex::new(Vec::new());
    project_walker(start).build_parallel().run(|| {
        Box::new(|entry| {
            if let Ok(entry) = entry
                && entry.file_type().is_some_and(|t| t.is_file())
                && let Some(rel) = relative_posix(root, entry.path())
            {
                found.lock().unwrap_or_else(|e| e.into_inner()).push(rel);
            }
            ignore::WalkState::Continue
        })
    });
    let mut out = found.into_inner().unwrap_or_else(|e| e.into_inner());
    out.sort_unstable();
    out
}

fn explicit_files(root: &Path, paths: &[PathBuf]) -> Result<Vec<String>, ScopeError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| root.to_path_buf());
    let mut out = Vec::new();
    for p in paths {
        // An absolute `p` replaces `cwd`.
        let abs = lexical_clean(&cwd.join(p));
        if !abs.exists() {
            return Err(ScopeError::NotFound(p.display().to_string()));
        }
        let rel = relative_posix(root, &abs);
        // Only a path outside the root needs the (costly) real paths compared.
        let is_root = || abs == root || abs.canonicalize().ok() == root.canonicalize().ok();
        if rel.is_none() && !is_root() {
            return Err(ScopeError::OutsideRoot {
                path: p.display().to_string(),
                root: root.display().to_string(),
            });
        }
        match rel {
            Some(_) | None if abs.is_dir() => out.extend(walk(root, &abs)),
            Some(rel) => out.push(rel),
            None => {}
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// `auto` and `branch`: what git says changed, with a note whenever the run fell back.
fn resolve_changes(
    root: &Path,
    config: &Config,
    request: &ScopeRequest,
) -> Result<ResolvedScope, ScopeError> {
    let mode = if *request == ScopeRequest::Auto {
        "auto"
    } else {
        "branch"
    };
    let Some(repo) = Repo::discover(root).map_err(git)? else {
        return Ok(outside_git(root, config, mode));
    };
    let plan = ChangePlan::new(&repo, root, config, mode)?;
    let changes = repo.changed_since(plan.base.as_deref()).map_err(git)?;
    Ok(plan.scope(changes))
}

pub(crate) fn git(e: GitError) -> ScopeError {
    ScopeError::Git(e.to_string())
}

/// `auto` or `branch` outside a git repository: every project file.
pub(crate) fn outside_git(root: &Path, config: &Config, mode: &str) -> ResolvedScope {
    ResolvedScope {
        mode: "project",
        files: project_files(root, config),
        note: Some(format!(
            "not a git repository, so `{mode}` checked every project file"
        )),
        ..Default::default()
    }
}

/// What an `auto` or `branch` scope is taken against: the commit the changed files are compared
/// with, the branch's failed files, and what the report says about either. Everything the scope
/// needs but git's status.
pub(crate) struct ChangePlan {
    mode: &'static str,
    /// The commit changes are taken since (`None` before the first commit).
    pub(crate) base: Option<String>,
    baseline_sha: Option<String>,
    notes: Vec<String>,
    /// The branch's failed files that still exist.
    extra: Vec<String>,
    pub(crate) target: BaselineTarget,
    root: PathBuf,
}

impl ChangePlan {
    pub(crate) fn new(
        repo: &Repo,
        root: &Path,
        config: &Config,
        mode: &'static str,
    ) -> Result<ChangePlan, ScopeError> {
        let head = repo.head_sha();
        let branch = repo.branch_name().unwrap_or_else(|| DETACHED.to_string());
        let mut notes: Vec<String> = Vec::new();
        let mut extra: Vec<String> = Vec::new();
        let mut base: Option<String> = None;
        let mut baseline_sha = None;
        if mode == "auto" {
            let (state, warning) = StateStore::new(root)
                .load()
                .map_err(|e| ScopeError::Git(e.to_string()))?;
            notes.extend(warning);
            let entry = state.branches.get(&branch).cloned().unwrap_or_default();
            extra = entry
                .failed_files
                .iter()
                .filter(|f| root.join(f).is_file())
                .cloned()
                .collect();
            match entry.baseline_sha {
                Some(sha) if repo.is_ancestor_of_head(&sha) => {
                    base = Some(sha.clone());
                    baseline_sha = Some(sha);
                }
                Some(sha) => notes.push(format!(
                    "baseline {} is no longer in this branch's history (rebased or reset?), so changes since the parent branch were checked",
                    short(&sha)
                )),
                None => notes.push("no green run on this branch yet: checked the changes since the parent branch".to_string()),
            }
        }
        if base.is_none() {
            match repo
                .parent_branch_base(config.parent_branch.as_deref())
                .map_err(git)?
            {
                Some(parent) => {
                    if mode == "branch" {
                        notes.push(format!(
                            "changes since {} ({})",
                            parent.name,
                            short(&parent.sha)
                        ));
                    }
                    base = Some(parent.sha);
                }
                None => {
                    base = head.clone();
                    notes.push(match &head {
                        Some(_) => {
                            "no parent branch found, so only uncommitted changes were checked"
                                .to_string()
                        }
                        None => "no commit yet: every file git would add was checked".to_string(),
                    });
                }
            }
        }
        Ok(ChangePlan {
            mode,
            base,
            baseline_sha,
            notes,
            extra,
            target: BaselineTarget { branch, head },
            root: root.to_path_buf(),
        })
    }

    /// The scope: the files git says changed since the base, and the branch's failed files,
    /// less what lies in tools' folders (a failed file from a run before they were left out too).
    pub(crate) fn scope(self, changes: Changes) -> ResolvedScope {
        let mut notes = self.notes;
        notes.extend(changes.notes);
        let mut files = changes.files;
        files.extend(self.extra);
        files.sort_unstable();
        files.dedup();
        ForeignFilter::new(&self.root).retain(&mut files);
        ResolvedScope {
            mode: self.mode,
            files,
            baseline_sha: self.baseline_sha,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
            baseline: Some(self.target),
            changed_since: self.base,
        }
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}
