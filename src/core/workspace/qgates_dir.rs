//! The workspace's `.qgates/` folder: what lives there and under which names. The baseline state
//! (`state.json`), the result cache (`cache/`) and the run logs (`runs/`) are local to one
//! machine, so the folder carries a `.gitignore` for them; a `quality.yaml` kept there stays
//! tracked.
//!
//! The folder comes with the repository, so it is not trusted: `check` is the one rule for when
//! qgates may use it, and `tracked_warning` says when a file of its own there came from a commit.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::core::platform;
use crate::core::workspace::safe_fs;

/// Content of `.qgates/.gitignore`.
/// It ignores itself too: a repository's status stays clean, and tools that lint every file
/// not ignored (REUSE, editorconfig-checker) do not report qgates' own file.
const GITIGNORE: &str = "# Written by qgates: logs, cache and state are local to this machine.\n.gitignore\nruns/\ncache/\nservers/\nwarm/\nstate.json\nstate.json.*\n*.lock\n";

/// `<root>/.qgates`.
pub fn dir(root: &Path) -> PathBuf {
    root.join(".qgates")
}

/// The baseline state, `.qgates/state.json`.
pub fn state_file(root: &Path) -> PathBuf {
    dir(root).join("state.json")
}

/// The result cache, `.qgates/cache/results.json`.
pub fn cache_file(root: &Path) -> PathBuf {
    dir(root).join("cache").join("results.json")
}

/// The lock exclusive gates hold while they run, `.qgates/exclusive.lock`.
pub fn exclusive_lock_file(root: &Path) -> PathBuf {
    dir(root).join("exclusive.lock")
}

/// The run log folders, `.qgates/runs/`.
pub fn runs_dir(root: &Path) -> PathBuf {
    dir(root).join("runs")
}

/// How this user may use a workspace's `.qgates/` (see `check`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// State, cache and logs are kept there.
    Writable,
    /// Another user's checkout or a read-only mount: qgates runs, reads what is there, and
    /// writes nothing in it (run logs go to the scratch folder; see `core::workspace::scratch`).
    ReadOnly,
}

/// A `.qgates/` qgates refuses to use: what is wrong with which path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsafeDir {
    pub path: PathBuf,
    pub problem: Problem,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A symbolic link: a cloned repository can aim it anywhere.
    Link,
    /// A folder of another user that this user can write: its owner can change what is in it
    /// (put a link where qgates is about to write) while qgates works.
    Owner { uid: u32 },
}

impl std::fmt::Display for UnsafeDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path.display();
        match self.problem {
            Problem::Link => write!(
                f,
                "{path} is a symbolic link: a repository could aim it outside the workspace, so qgates writes nothing under .qgates/ and runs nothing here. Remove the link (`rm {path}`); qgates makes what it needs there itself."
            ),
            Problem::Owner { uid } => write!(
                f,
                "{path} belongs to uid {uid}, not to you (uid {}), and you can write it: its owner could change it while qgates works, so qgates writes nothing under .qgates/ and runs nothing here. Remove it (`rm -r {path}`), or take it over (`chown -R $(id -u) {path}`) if you trust it.",
                platform::effective_user_id()
            ),
        }
    }
}

impl std::error::Error for UnsafeDir {}

impl From<UnsafeDir> for std::io::Error {
    fn from(e: UnsafeDir) -> Self {
        std::io::Error::other(e.to_string())
    }
}

/// What qgates makes and writes under `.qgates/`, relative to it: each is checked by `check`.
const KEPT: [&str; 10] = [
    "",
    "runs",
    "cache",
    "servers",
    "warm",
    "state.json",
    "state.lock",
    "exclusive.lock",
    "cache/results.json",
    ".gitignore",
];

/// Whether qgates may use `<root>/.qgates/`, and how. The one rule every face (CLI, language
/// server, MCP) and every writer goes by:
///
/// - `.qgates/`, or anything qgates keeps under it (`runs/`, `cache/`, the state, the cache
///   file, the locks, the deps records, the `.gitignore`), that is a symbolic link: refused.
/// - one of those folders that belongs to another user and that this user can write: refused.
/// - `.qgates/` that belongs to another user and that this user cannot write (their checkout,
///   shared read-only), or any `.qgates/` on a read-only mount: `ReadOnly`.
/// - otherwise (including no `.qgates/` yet): `Writable`.
///
/// A refusal means qgates writes nothing there and runs nothing: the caller reports the error.
pub fn check(root: &Path) -> Result<Access, UnsafeDir> {
    let qgates = dir(root);
    let me = platform::effective_user_id();
    for rel in KEPT {
        let path = if rel.is_empty() {
            qgates.clone()
        } else {
            qgates.join(rel)
        };
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let uid = platform::owner_user_id(&meta);
        let problem = if meta.file_type().is_symlink() {
            Problem::Link
        } else if meta.is_dir() && uid != me && platform::can_write(&path) {
            Problem::Owner { uid }
        } else {
            continue;
        };
        return Err(UnsafeDir { path, problem });
    }
    let writable = platform::can_write(if qgates.exists() { &qgates } else { root });
    Ok(if writable {
        Access::Writable
    } else {
        Access::ReadOnly
    })
}

/// Why a file of qgates' own under `.qgates/` is not believed: git tracks it, so it came with
/// the repository (a commit can mark files clean in the cache, or move the baseline), and
/// writing it would change the user's checkout. `None` when the file does not exist (the
/// common case costs no read of the index) or git does not track it.
pub fn tracked_warning(root: &Path, file: &Path, what: &str) -> Option<String> {
    std::fs::symlink_metadata(file).ok()?;
    let rel = crate::core::workspace::paths::relative_posix(root, file)?;
    crate::core::workspace::tracked::tracks(root, &rel).then(|| {
        format!(
            "{rel} is tracked by git, so qgates ignores it ({what} of a repository is not believed) and keeps no {what} until it is untracked: run `git rm --cached {rel}`"
        )
    })
}

/// Makes `sub` (a folder inside `.qgates/`, or `.qgates/` itself when empty) and writes the
/// folder's `.gitignore` if it is missing; an error when `check` refuses the folder.
pub fn make(root: &Path, sub: &str) -> std::io::Result<PathBuf> {
    let qgates = dir(root);
    let path = qgates.join(sub);
    check(root)?;
    std::fs::create_dir_all(&path)?;
    // Made by someone else between the check and here: checked again.
    check(root)?;
    // A new file only (`O_EXCL | O_NOFOLLOW`): a user's own edits stay, and a link is not
    // written through.
    if let Ok(mut f) = safe_fs::create_new(&qgates.join(".gitignore"), 0o644) {
        let _ = f.write_all(GITIGNORE.as_bytes());
    }
    Ok(path)
}

/// `YYYYMMDD-HHMMSS` (UTC) of a Unix time: the sortable stamp in the names of run folders and
/// of a corrupt state file moved aside.
pub fn timestamp(secs: u64) -> String {
    let format = gix::date::time::CustomFormat::new("%Y%m%d-%H%M%S");
    gix::date::Time::new(secs as i64, 0).format_or_unix(format)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(timestamp(0), "19700101-000000");
        // 2026-11-22 10:15:00 UTC
        assert_eq!(timestamp(1_795_342_500), "20261122-101500");
        assert_eq!(timestamp(951_782_400), "20000229-000000");
    }

    #[test]
    fn a_link_anywhere_qgates_writes_is_refused_and_nothing_is_made() {
        for rel in KEPT {
            let tmp = tempfile::tempdir().unwrap();
            let (root, outside) = (tmp.path().join("ws"), tmp.path().join("outside"));
            std::fs::create_dir_all(&outside).unwrap();
            std::fs::create_dir_all(dir(&root).join("cache")).unwrap();
            std::fs::create_dir_all(dir(&root).join("runs")).unwrap();
            let link = if rel.is_empty() {
                std::fs::remove_dir_all(dir(&root)).unwrap();
                dir(&root)
            } else {
                let p = dir(&root).join(rel);
                let _ = std::fs::remove_dir(&p);
                p
            };
            std::os::unix::fs::symlink(&outside, &link).unwrap();
            let err = check(&root).unwrap_err();
            assert_eq!(err.path, link);
            assert_eq!(err.problem, Problem::Link);
            let text = err.to_string();
            assert!(
                text.contains(&link.display().to_string()) && text.contains("Remove the link"),
                "{text}"
            );
            assert!(make(&root, "runs").is_err(), "{rel}");
            assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "{rel}");
        }
    }

    #[test]
    fn another_users_folder_is_refused_when_writable_and_read_only_otherwise() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        assert_eq!(check(root), Ok(Access::Writable));
        std::fs::create_dir_all(runs_dir(root)).unwrap();
        assert_eq!(check(root), Ok(Access::Writable));
        if platform::effective_user_id() != 0 {
            // Only root can give a folder away; the read-only half still holds for a user.
            std::fs::set_permissions(dir(root), std::fs::Permissions::from_mode(0o555)).unwrap();
            assert_eq!(check(root), Ok(Access::ReadOnly));
            std::fs::set_permissions(dir(root), std::fs::Permissions::from_mode(0o755)).unwrap();
            return;
        }
        let other = 4_242_424;
        let chown = |p: &Path| std::os::unix::fs::chown(p, Some(other), None).unwrap();
        chown(&runs_dir(root));
        // Root can write any folder: another user's is refused, whoever can write it.
        let err = check(root).unwrap_err();
        assert_eq!(err.path, runs_dir(root));
        assert_eq!(err.problem, Problem::Owner { uid: other });
        assert!(err.to_string().contains("belongs to uid 4242424"), "{err}");
        assert!(make(root, "cache").is_err());
        assert!(!dir(root).join("cache").exists());
    }

    #[test]
    fn making_a_folder_writes_the_gitignore_once() {
        let tmp = tempfile::tempdir().unwrap();
        let runs = make(tmp.path(), "runs").unwrap();
        assert_eq!(runs, runs_dir(tmp.path()));
        assert!(runs.is_dir());
        let ignore = dir(tmp.path()).join(".gitignore");
        assert_eq!(std::fs::read_to_string(&ignore).unwrap(), GITIGNORE);
        // A user's own edits stay.
        std::fs::write(&ignore, "runs/\n").unwrap();
        make(tmp.path(), "").unwrap();
        assert_eq!(std::fs::read_to_string(&ignore).unwrap(), "runs/\n");
    }
}
