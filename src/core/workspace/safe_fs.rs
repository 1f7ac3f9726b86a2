//! Writing files where a symbolic link may wait: `.qgates/` comes with a cloned repository, so
//! anything qgates writes there is opened without following a link (`O_NOFOLLOW`), and temporary
//! files are made new (`O_EXCL`), never opened over something already there. A link in the way
//! is an error (`ELOOP`, `EEXIST`) instead of a write that lands outside the workspace.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::core::platform;

/// Opens `path` for writing, made if missing and emptied if present; a symbolic link at `path`
/// is refused (`ELOOP`) rather than followed.
pub fn create_nofollow(path: &Path) -> std::io::Result<File> {
    platform::open_no_follow(
        OpenOptions::new().write(true).create(true).truncate(true),
        path,
    )
}

/// Makes `path` as a new file with `mode` (before the umask); fails if anything, a link
/// included, is already there.
pub fn create_new(path: &Path, mode: u32) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    platform::new_file_mode(options.write(true).create_new(true), mode);
    platform::open_no_follow(&options, path)
}

/// Opens (or makes) `path` without following a link and without emptying it: a lock file.
pub fn open_lock_file(path: &Path) -> std::io::Result<File> {
    platform::open_no_follow(
        OpenOptions::new().write(true).create(true).truncate(false),
        path,
    )
}

/// Replaces `path` with `bytes` atomically: a new temporary file beside it (`O_EXCL |
/// O_NOFOLLOW`, `mode`), written and synced, then renamed over `path`. A rename replaces a link
/// at `path` itself and never writes through it. On failure no temporary file stays behind.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let tmp = temp_beside(path);
    let mut file = create_new(&tmp, mode)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        // A full disk or a file-size limit: no half-written temporary file is left.
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// `<path>.tmp-<pid>-<n>`: unique within the process, so two threads saving at once do not
/// collide on `O_EXCL`.
fn temp_beside(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp-{}-{n}", std::process::id()));
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_link_is_never_written_through() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::write(&outside, "keep").unwrap();
        let link = tmp.path().join("state.json");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let err = create_nofollow(&link).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ELOOP), "{err}");
        assert!(open_lock_file(&link).is_err());
        assert!(create_new(&link, 0o600).is_err());
        // The rename replaces the link, not the file it points to.
        write_atomic(&link, b"new", 0o600).unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
        assert!(!std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "new");
    }

    #[test]
    fn atomic_writes_take_the_mode_and_leave_no_temporary_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("trust.json");
        write_atomic(&path, b"{}", 0o600).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let names: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
        // Into a folder that does not exist: an error, and nothing made.
        assert!(write_atomic(&tmp.path().join("no/such"), b"x", 0o600).is_err());
    }
}
