//! This process's private scratch folder (0700, the user's): fixer output, and the run logs of a
//! workspace whose `.qgates/` cannot be written. A fixed name in the shared temporary folder
//! could be made first by another user, so it is `$XDG_RUNTIME_DIR/qgates` (checked to be the
//! user's alone) or a fresh folder of a random name (`mkdtemp`), made on first use. Run logs in
//! it outlive the process; a random folder left empty is removed when the process exits.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::core::platform;

static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// The scratch folder, made on first use.
pub fn dir() -> std::io::Result<&'static Path> {
    let made = DIR.get_or_init(|| make().map_err(|e| e.to_string()));
    made.as_deref()
        .map_err(|e| std::io::Error::other(format!("cannot make a private scratch folder: {e}")))
}

/// A new, empty file in the scratch folder (`O_EXCL | O_NOFOLLOW`, mode 0600), named
/// `<stem>-<pid>-<n>.<ext>`: the caller's to write, read and remove.
pub fn new_file(stem: &str, ext: &str) -> std::io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = dir()?.join(format!("{stem}-{}-{n}.{ext}", std::process::id()));
    crate::core::workspace::safe_fs::create_new(&path, 0o600)?;
    Ok(path)
}

fn make() -> std::io::Result<PathBuf> {
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
        && runtime.is_absolute()
        && is_private(&runtime)
    {
        let path = runtime.join("qgates");
        match platform::make_dir(&path, 0o700) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && is_private(&path) => {
                return Ok(path);
            }
            // Not ours, or not a folder: a random folder instead.
            Err(_) => {}
        }
    }
    let path = platform::make_private_temp_dir(&std::env::temp_dir().join("qgates-XXXXXX"))?;
    // `remove_if_empty` never unwinds.
    platform::at_exit(remove_if_empty);
    Ok(path)
}

/// A real folder (not a link) owned by this user that no one else may enter or change.
fn is_private(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| {
        m.is_dir()
            && platform::owner_user_id(&m) == platform::effective_user_id()
            && platform::closed_to_others(&m)
    })
}

extern "C" fn remove_if_empty() {
    if let Some(Ok(path)) = DIR.get() {
        // Fails, leaving it, when run logs are inside.
        let _ = std::fs::remove_dir(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn the_folder_is_private_and_not_at_a_predictable_name() {
        let first = dir().unwrap();
        let meta = std::fs::symlink_metadata(first).unwrap();
        assert!(meta.is_dir());
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        assert_eq!(meta.uid(), platform::effective_user_id());
        // Either the user's runtime folder, or a name with a random part no one could make
        // ahead of it (two folders made the same way differ).
        let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
        if !runtime.is_some_and(|r| first.starts_with(r)) {
            let name = first.file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.starts_with("qgates-") && name.len() == 13, "{name}");
            assert!(!name.contains(&std::process::id().to_string()), "{name}");
            let other =
                platform::make_private_temp_dir(&std::env::temp_dir().join("qgates-XXXXXX"))
                    .unwrap();
            assert_ne!(other, first);
            std::fs::remove_dir(other).unwrap();
        }
        // Made once per process.
        assert_eq!(dir().unwrap(), first);
        let a = new_file("fix", "out").unwrap();
        let b = new_file("fix", "out").unwrap();
        assert_ne!(a, b);
        assert_eq!(
            std::fs::metadata(&a).unwrap().permissions().mode() & 0o777,
            0o600
        );
        // Made new: an existing name is never opened again.
        assert!(crate::core::workspace::safe_fs::create_new(&a, 0o600).is_err());
        std::fs::remove_file(a).unwrap();
        std::fs::remove_file(b).unwrap();
    }
}
