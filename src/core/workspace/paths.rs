//! Paths inside a workspace: how a path is cleaned and named relative to the root.

use std::path::{Path, PathBuf};

/// Resolves `.` and `..` without touching the file system (the path may not exist, or be gone).
pub fn lexical_clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `path` relative to `root` with `/` separators; `None` outside the root (symlinked roots are
/// compared by their real paths too).
pub fn relative_posix(root: &Path, path: &Path) -> Option<String> {
    let rel = match path.strip_prefix(root) {
        Ok(r) => r.to_path_buf(),
        Err(_) => {
            let (r, p) = (root.canonicalize().ok()?, path.canonicalize().ok()?);
            p.strip_prefix(&r).ok()?.to_path_buf()
        }
    };
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}
