//! The workspace's `.qgates/` folder: what lives there and under which names. The baseline state
//! (`state.json`), the result cache (`cache/`) and the run logs (`runs/`) are local to one
//! machine, so the folder carries a `.gitignore` for them; a `quality.yaml` kept there stays
//! tracked.

use std::path::{Path, PathBuf};

/// Content of `.qgates/.gitignore`.
const GITIGNORE: &str = "# Written by qgates: logs, cache and state are local to this machine.\nruns/\ncache/\nstate.json\nstate.json.*\n*.lock\n";

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

/// The run log folders, `.qgates/runs/`.
pub fn runs_dir(root: &Path) -> PathBuf {
    dir(root).join("runs")
}

/// Makes `sub` (a folder inside `.qgates/`, or `.qgates/` itself when empty) and writes the
/// folder's `.gitignore` if it is missing. A `.qgates/` or `sub` that is a symbolic link is
/// refused: a repository could commit one pointing anywhere, and what qgates writes (and prunes)
/// there would land outside the workspace.
pub fn make(root: &Path, sub: &str) -> std::io::Result<PathBuf> {
    let qgates = dir(root);
    let path = qgates.join(sub);
    refuse_links(&qgates, &path)?;
    std::fs::create_dir_all(&path)?;
    // Made by someone else between the check and here: checked again.
    refuse_links(&qgates, &path)?;
    let ignore = qgates.join(".gitignore");
    if !ignore.exists() {
        let _ = std::fs::write(ignore, GITIGNORE);
    }
    Ok(path)
}

/// An error when `.qgates/` or the folder under it is a symbolic link.
pub fn refuse_links(qgates: &Path, path: &Path) -> std::io::Result<()> {
    for p in [qgates, path] {
        if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(std::io::Error::other(format!(
                "{} is a symbolic link: qgates keeps nothing there (a repository must not aim it outside the workspace). Remove the link.",
                p.display()
            )));
        }
    }
    Ok(())
}

/// Whether this user can write `.qgates/` (or make it, when it does not exist yet). `false` for
/// another user's checkout or a read-only mount: state, cache and logs cannot be kept there.
pub fn writable(root: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let qgates = dir(root);
    let target = if qgates.exists() {
        qgates
    } else {
        root.to_path_buf()
    };
    let Ok(path) = std::ffi::CString::new(target.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `path` is NUL-terminated; faccessat only checks permissions.
    unsafe { libc::faccessat(libc::AT_FDCWD, path.as_ptr(), libc::W_OK, libc::AT_EACCESS) == 0 }
}

/// `YYYYMMDD-HHMMSS` (UTC) of a Unix time: the sortable stamp in the names of run folders and
/// of a corrupt state file moved aside.
pub fn timestamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let (h, mi, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    format!("{y:04}{m:02}{d:02}-{h:02}{mi:02}{s:02}")
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
