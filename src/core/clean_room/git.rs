//! The git side of a clean room: the repository a workspace is in, the commit a revision names,
//! the uncommitted changes left out, and making, marking and removing the worktrees.
//!
//! Every worktree qgates makes is locked with a reason that names the process that made it
//! (`LOCK_REASON`), in a folder named `FOLDER_PREFIX…` under the system's temporary folder. A run
//! that was killed leaves its worktree; the next clean-room run in the same repository removes
//! the worktrees that carry the mark and whose process is gone, and nothing else: a worktree of
//! the user's, one of another repository, or one of a run still going is never touched.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// How the private folder of each clean room is named (then the process id and a counter).
pub const FOLDER_PREFIX: &str = "qgates-clean-room-";

/// The lock reason of a clean-room worktree, followed by the process id that made it.
const LOCK_REASON: &str = "qgates clean room, pid ";

/// Why a clean room could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CleanRoomError {
    /// The revision names no commit (a usage error: exit 2).
    #[error("clean room: {0}")]
    BadRev(String),
    /// Not a repository, a bare one, git failing (with git's own message), or the folder.
    #[error("clean room: {0}")]
    Failed(String),
}

/// Runs git in `dir` with the user's configuration but none of the variables that would point
/// it at another repository than the one `dir` is in.
fn git(dir: &Path, args: &[&str]) -> std::io::Result<Output> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(std::process::Stdio::null())
        .output()
}

/// git's own words on a failure (its stderr, trimmed), or how it could not start.
fn git_words(out: std::io::Result<Output>) -> Result<String, String> {
    match out {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr).trim().to_string();
            Err(if err.is_empty() {
                format!("git exited with {}", o.status)
            } else {
                err
            })
        }
        Err(e) => Err(format!("git could not be started: {e}")),
    }
}

/// The top folder of the repository `root` is in (canonical, as git gives it).
pub fn top_level(root: &Path) -> Result<PathBuf, CleanRoomError> {
    let bare = git_words(git(root, &["rev-parse", "--is-bare-repository"]));
    if bare.as_deref() == Ok("true") {
        return Err(CleanRoomError::Failed(format!(
            "{} is a bare repository: it has no working tree to compare with, and a clean-room run needs one. Run it in a clone with a working tree.",
            root.display()
        )));
    }
    git_words(git(root, &["rev-parse", "--show-toplevel"]))
        .map(PathBuf::from)
        .map_err(|e| {
            CleanRoomError::Failed(format!(
                "a clean-room run checks out a commit of the workspace's git repository, and {} is not in one ({e}).",
                root.display()
            ))
        })
}

/// The full commit id `rev` names.
pub fn resolve_commit(top: &Path, rev: &str) -> Result<String, CleanRoomError> {
    // `--end-of-options` keeps a revision that starts with `-` from being read as an option.
    let spec = format!("{rev}^{{commit}}");
    let out = git(
        top,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ],
    );
    match git_words(out) {
        Ok(sha) if !sha.is_empty() => Ok(sha),
        _ => {
            let shallow = git_words(git(top, &["rev-parse", "--is-shallow-repository"]))
                .is_ok_and(|s| s == "true");
            let hint = if shallow {
                " The repository is shallow (cloned with --depth), so older commits are not in it: `git fetch --unshallow` fetches them."
            } else {
                " Give a commit, branch or tag, e.g. HEAD, HEAD~1 or main."
            };
            Err(CleanRoomError::BadRev(format!(
                "`{rev}` does not name a commit in {}.{hint}",
                top.display()
            )))
        }
    }
}

/// How many files of the working tree differ from HEAD or are untracked (not ignored): the
/// changes a clean room leaves out. `None` when git cannot say.
pub fn uncommitted_changes(top: &Path) -> Option<usize> {
    // qgates' own folders (`.qgates/`: its logs, state and their `.gitignore`) are no change.
    let out = git(
        top,
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--",
            ".",
            ":(exclude,glob)**/.qgates/**",
        ],
    )
    .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut fields = out.stdout.split(|&b| b == 0).filter(|f| !f.is_empty());
    let mut count = 0;
    while let Some(entry) = fields.next() {
        count += 1;
        // A rename or copy is followed by the path it came from.
        if matches!(entry.first(), Some(b'R' | b'C')) {
            fields.next();
        }
    }
    Some(count)
}

/// Checks out `commit` in a new worktree at `path`, detached, locked with this process's mark.
pub fn add_worktree(top: &Path, path: &Path, commit: &str) -> Result<(), String> {
    let reason = format!("{LOCK_REASON}{}", std::process::id());
    let path = path.to_string_lossy();
    git_words(git(
        top,
        &[
            "worktree", "add", "--detach", "--lock", "--reason", &reason, &path, commit,
        ],
    ))
    .map(drop)
}

/// Removes a worktree qgates made (locked or not), then forgets removed ones.
pub fn remove_worktree(top: &Path, path: &Path) -> Result<(), String> {
    let path_s = path.to_string_lossy();
    // Twice `--force`: a locked worktree, with files the gates changed or left behind.
    let removed = git_words(git(
        top,
        &["worktree", "remove", "--force", "--force", &path_s],
    ));
    prune(top);
    removed.map(drop)
}

/// Hands a kept worktree to the user: unlocked, so no later run takes it for a stale one.
pub fn unlock_worktree(top: &Path, path: &Path) {
    let _ = git(top, &["worktree", "unlock", &path.to_string_lossy()]);
}

/// Forgets worktrees whose folder is gone.
pub fn prune(top: &Path) {
    let _ = git(top, &["worktree", "prune"]);
}

/// One worktree of the repository, as `git worktree list --porcelain` lists it.
#[derive(Debug, Default)]
struct Listed {
    path: PathBuf,
    lock_reason: Option<String>,
}

fn list_worktrees(top: &Path) -> Vec<Listed> {
    let Ok(text) = git_words(git(top, &["worktree", "list", "--porcelain"])) else {
        return Vec::new();
    };
    let mut all = Vec::new();
    for block in text.split("\n\n") {
        let mut w = Listed::default();
        for line in block.lines() {
            if let Some(p) = line.strip_prefix("worktree ") {
                w.path = PathBuf::from(p);
            } else if let Some(r) = line.strip_prefix("locked ") {
                w.lock_reason = Some(r.to_string());
            }
        }
        if !w.path.as_os_str().is_empty() {
            all.push(w);
        }
    }
    all
}

/// The process that made a clean-room worktree, read from its lock reason and folder; `None`
/// for any worktree qgates did not make.
fn maker(w: &Listed) -> Option<i32> {
    let pid: i32 = w
        .lock_reason
        .as_deref()?
        .strip_prefix(LOCK_REASON)?
        .parse()
        .ok()?;
    let folder = w.path.parent()?.file_name()?.to_str()?;
    folder.strip_prefix(FOLDER_PREFIX)?;
    Some(pid)
}

/// Removes the clean-room worktrees of this repository whose process is gone (a run that was
/// killed), with their private folders; returns how many.
pub fn remove_stale(top: &Path) -> usize {
    let mut removed = 0;
    for w in list_worktrees(top) {
        let Some(pid) = maker(&w) else { continue };
        // A process of another user counts as running.
        if pid > 0 && crate::core::platform::process_exists(pid) {
            continue;
        }
        tracing::info!(
            "removing the clean-room worktree {} left by a run that was stopped",
            w.path.display()
        );
        if remove_worktree(top, &w.path).is_ok() || !w.path.exists() {
            if let Some(folder) = w.path.parent() {
                remove_private_folder(folder);
            }
            removed += 1;
        }
    }
    prune(top);
    removed
}

/// Removes a clean room's private folder: only one named as qgates names them.
pub fn remove_private_folder(folder: &Path) {
    let ours = folder
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(FOLDER_PREFIX));
    if ours && std::fs::symlink_metadata(folder).is_ok_and(|m| m.is_dir()) {
        let _ = std::fs::remove_dir_all(folder);
    }
}
