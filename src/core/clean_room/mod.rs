//! Clean-room runs: the gates run in a fresh git worktree of one commit, with the configuration
//! committed there, to answer "does this commit pass from scratch" — without the uncommitted
//! changes, the tool caches, the baseline state or the result cache of the working tree.
//!
//! A clean room lives in a private folder (0700) of its own under the temporary folder, a fresh
//! name per run. It is removed when the run ends (unless kept), when the value is dropped, and,
//! after a run that was killed, by the next clean-room run in the repository (see `git`).
//!
//! `CleanRoom::open` makes the checkout, the face loads the configuration from it, runs the
//! engine over `request`, and hands the report to `finish`, which adds the `clean_room` section
//! and removes the checkout. The servers go through `run_for_server`: their trust check sees
//! exactly what would run in the checkout before anything does.

mod git;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::core::config::{self, Config, ConfigError, Trigger};
use crate::core::engine::{Run, RunRequest, execute};
use crate::core::report::Report;
use crate::core::scope::ScopeRequest;
use crate::core::trust::{FileHashes, Manifest};
use crate::core::workspace::paths::relative_posix;

pub use crate::core::report::CleanRoomInfo;
pub use git::CleanRoomError;

/// The revision checked when none is given.
pub const DEFAULT_REV: &str = "HEAD";

/// One clean checkout, removed when dropped unless kept.
#[derive(Debug)]
pub struct CleanRoom {
    /// The real repository's top folder.
    top: PathBuf,
    /// The workspace root outside (absolute).
    outside_root: PathBuf,
    /// The private folder holding the worktree.
    folder: PathBuf,
    /// The worktree (the repository's top folder at the commit).
    worktree: PathBuf,
    /// The workspace root inside the worktree: the same folder of the repository.
    root: PathBuf,
    info: CleanRoomInfo,
    /// The workspace whose tool folders the checkout's runs borrow (see `runner::tool_folders`).
    tools_from: PathBuf,
    /// Gone already (removed by `finish`, or kept and handed over).
    settled: bool,
}

impl CleanRoom {
    /// Checks out `rev` of the repository that holds the workspace `root`, after removing the
    /// clean rooms that killed runs left in it. Nothing is left behind when this fails.
    pub fn open(root: &Path, rev: &str, keep: bool) -> Result<CleanRoom, CleanRoomError> {
        let top = git::top_level(root)?;
        let commit = git::resolve_commit(&top, rev)?;
        let removed = git::remove_stale(&top);
        if removed > 0 {
            tracing::info!("removed {removed} clean-room worktree(s) of stopped runs");
        }
        let canonical_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let folder = private_folder().map_err(|e| {
            CleanRoomError::Failed(format!(
                "cannot make a private folder under {} for the checkout: {e}",
                std::env::temp_dir().display()
            ))
        })?;
        let name = top
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_else(|| "checkout".into());
        let worktree = folder.join(name);
        if let Err(why) = git::add_worktree(&top, &worktree, &commit) {
            // A half-made worktree: its folder goes, and git forgets it.
            let _ = std::fs::remove_dir_all(&folder);
            git::prune(&top);
            return Err(CleanRoomError::Failed(format!(
                "`git worktree add` could not check out {rev} ({}): {why}",
                &commit[..commit.len().min(7)]
            )));
        }
        Ok(CleanRoom {
            // The same folder of the repository as the workspace outside.
            root: worktree.join(canonical_root.strip_prefix(&top).unwrap_or(Path::new(""))),
            tools_from: canonical_root,
            info: CleanRoomInfo {
                rev: rev.to_string(),
                commit,
                worktree: worktree.display().to_string(),
                kept: keep,
                uncommitted_changes: git::uncommitted_changes(&top).unwrap_or(0),
            },
            top,
            outside_root: root.to_path_buf(),
            folder,
            worktree,
            settled: false,
        })
    }

    /// The workspace root inside the checkout: where the gates run.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn info(&self) -> &CleanRoomInfo {
        &self.info
    }

    /// The configuration committed at the revision: the same file as outside (`explicit`, a
    /// `--config` inside the repository, is taken at the same place in the checkout; one outside
    /// the repository is read where it is), else the one the checkout's root holds.
    pub fn load_config(&self, explicit: Option<&Path>) -> Result<Config, ConfigError> {
        let mapped = explicit.map(|p| match p.strip_prefix(&self.top) {
            Ok(rel) => self.worktree.join(rel),
            Err(_) => p.to_path_buf(),
        });
        config::load_for_workspace(&self.root, mapped.as_deref())
    }

    /// The engine request: no cache, no baseline state, the files the scope names in the
    /// checkout. No scope means `project`; `auto` means `branch` (a clean checkout has no
    /// uncommitted change and no baseline state is read); paths are taken at the same place
    /// in the checkout, relative to the workspace root outside.
    pub fn request(
        &self,
        scope: ScopeRequest,
        gates: Option<Vec<String>>,
        trigger: Trigger,
    ) -> Result<RunRequest, CleanRoomError> {
        let scope = match scope {
            ScopeRequest::Auto | ScopeRequest::Branch => ScopeRequest::Branch,
            ScopeRequest::Project => ScopeRequest::Project,
            ScopeRequest::Files(paths) => ScopeRequest::Files(
                paths
                    .iter()
                    .map(|p| self.inside(p))
                    .collect::<Result<_, _>>()?,
            ),
        };
        let mut request = RunRequest::new(self.root.clone(), scope, trigger);
        request.gates = gates;
        request.update_state = false;
        request.tools_from = Some(self.tools_from.clone());
        Ok(request)
    }

    /// A path of the workspace outside, at the same place in the checkout.
    fn inside(&self, path: &Path) -> Result<PathBuf, CleanRoomError> {
        let cwd = std::env::current_dir().unwrap_or_default();
        let abs = crate::core::workspace::paths::lexical_clean(&cwd.join(path));
        let rel = relative_posix(&self.outside_root, &abs)
            .or_else(|| {
                let canonical = self.outside_root.canonicalize().ok()?;
                relative_posix(&canonical, &abs.canonicalize().unwrap_or(abs.clone()))
            })
            .ok_or_else(|| {
                CleanRoomError::Failed(format!(
                    "`{}` is outside the workspace root {}; a clean-room run checks files of the workspace, at the commit.",
                    path.display(),
                    self.outside_root.display()
                ))
            })?;
        Ok(self.root.join(rel))
    }

    /// Ends the clean room: the report gets its `clean_room` section and keeps its logs (copied
    /// to the workspace's `.qgates/runs/`), and the worktree is removed unless kept.
    pub fn finish(mut self, mut run: Run) -> Report {
        let report = run.report_mut();
        keep_logs(&self.root, &self.outside_root, report);
        report.clean_room = Some(self.info.clone());
        let report = run.finish();
        self.settle();
        report
    }

    /// Removes the worktree and its folder, or hands a kept one to the user.
    fn settle(&mut self) {
        if std::mem::replace(&mut self.settled, true) {
            return;
        }
        if self.info.kept {
            git::unlock_worktree(&self.top, &self.worktree);
            return;
        }
        if let Err(e) = git::remove_worktree(&self.top, &self.worktree) {
            tracing::warn!("the clean-room worktree could not be removed by git: {e}");
        }
        git::remove_private_folder(&self.folder);
        git::prune(&self.top);
    }
}

impl Drop for CleanRoom {
    /// A run stopped by a signal or a panic leaves nothing behind either.
    fn drop(&mut self) {
        self.settle();
    }
}

/// A new folder of this user's alone (0700) under the temporary folder, named afresh.
fn private_folder() -> std::io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir();
    loop {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!(
            "{}{}-{}-{nanos:09}",
            git::FOLDER_PREFIX,
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = base.join(name);
        // `mkdir` refuses a name that exists: the folder is this run's own.
        match crate::core::platform::make_dir(&path, 0o700) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Copies the run's log folder out of the checkout into the workspace's `.qgates/runs/`, under
/// the same name, so the report's root-relative log paths hold once the checkout is gone.
fn keep_logs(inside_root: &Path, outside_root: &Path, report: &mut Report) {
    let Some(full) = report.full_report.as_mut() else {
        return;
    };
    let Some(run_dir) = full.path.parent().map(Path::to_path_buf) else {
        return;
    };
    let Ok(rel) = run_dir.strip_prefix(inside_root) else {
        // Logs outside the checkout (the scratch folder) stay where they are.
        return;
    };
    let target = outside_root.join(rel);
    let copied = crate::core::workspace::qgates_dir::make(outside_root, "runs")
        .and_then(|_| copy_folder(&run_dir, &target));
    match copied {
        Ok(()) => {
            full.path = target.join(crate::core::workspace::run_logs::REPORT_FILE);
        }
        Err(e) => {
            tracing::warn!("the clean room's logs could not be kept: {e}");
            report.full_report = None;
            report.log_dir = None;
        }
    }
}

/// Copies the files and folders of `from` (no links) into a new folder `to`.
fn copy_folder(from: &Path, to: &Path) -> std::io::Result<()> {
    crate::core::platform::make_dir(to, 0o755)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let dest = to.join(entry.file_name());
        if kind.is_dir() {
            copy_folder(&entry.path(), &dest)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), dest)?;
        }
    }
    Ok(())
}

/// Why a server's clean-room run did not give a report.
#[derive(Debug, Clone)]
pub enum ServerRunError {
    /// The checkout could not be made (a bad revision, git's message).
    CleanRoom(CleanRoomError),
    /// The configuration at the revision has errors.
    Config(String),
    /// The configuration at the revision runs what was not trusted: what differs.
    Untrusted(String),
    /// The engine refused the request (an unknown gate, a path not in the commit).
    Run(String),
}

/// Whether the clean room may run what `config` runs in the checkout at `checkout_root`: the
/// same as the working tree's `trusted` manifest, compared by its portable hash (installed
/// programs by name only: see `trust::manifest`).
pub fn runs_as_trusted(
    config: &Config,
    checkout_root: &Path,
    trusted: &Manifest,
) -> Result<(), String> {
    let manifest = Manifest::of(config, checkout_root, &FileHashes::default());
    if manifest.portable_hash == trusted.portable_hash {
        Ok(())
    } else {
        Err(manifest.portable_differences(trusted))
    }
}

/// Makes the clean room, reads its configuration, asks `permits` (given the configuration and the
/// checkout's root) whether it may run, runs the gates and removes the checkout, also when
/// dropped before its end. `request` is the run as it would be in the workspace; `config_path`
/// the server's `--config`, if any.
pub async fn run_for_server(
    request: RunRequest,
    rev: String,
    config_path: Option<PathBuf>,
    permits: impl FnOnce(&Config, &Path) -> Result<(), String>,
) -> Result<Report, ServerRunError> {
    let root = request.root.clone();
    let clean_room = tokio::task::spawn_blocking(move || CleanRoom::open(&root, &rev, false))
        .await
        .map_err(|e| ServerRunError::Run(format!("the clean room could not be made: {e}")))?
        .map_err(ServerRunError::CleanRoom)?;
    let outcome = async {
        let config = clean_room
            .load_config(config_path.as_deref())
            .map_err(|e| ServerRunError::Config(e.to_string()))?;
        permits(&config, clean_room.root()).map_err(ServerRunError::Untrusted)?;
        let mut engine_request = clean_room
            .request(request.scope, request.gates, Trigger::Command)
            .map_err(|e| ServerRunError::Run(e.to_string()))?;
        engine_request.kinds = request.kinds;
        execute(&config, &engine_request, None)
            .await
            .map_err(|e| ServerRunError::Run(e.to_string()))
    }
    .await;
    // Removing the worktree is git's work on disk: off the server's thread, whatever the outcome.
    tokio::task::spawn_blocking(move || Ok(clean_room.finish(outcome?)))
        .await
        .map_err(|e| ServerRunError::Run(format!("the clean room could not be removed: {e}")))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phrase_says_what_was_left_out_and_where_the_worktree_is() {
        let mut info = CleanRoomInfo {
            rev: "HEAD".into(),
            commit: "1a2b3c4d5e6f".into(),
            worktree: "/tmp/x/repo".into(),
            kept: false,
            uncommitted_changes: 2,
        };
        assert_eq!(
            info.phrase(),
            "clean room at 1a2b3c4 (HEAD): 2 uncommitted changes not included; worktree removed"
        );
        info.kept = true;
        info.uncommitted_changes = 1;
        assert_eq!(
            info.phrase(),
            "clean room at 1a2b3c4 (HEAD): 1 uncommitted change not included; worktree kept at /tmp/x/repo"
        );
    }
}
