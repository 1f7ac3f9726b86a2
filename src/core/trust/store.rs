//! The user's trust decisions: per workspace (its canonical path), the SHA-256 of the `Manifest`
//! that was trusted. Anything that changes what would run changes that hash, and asks again.
//!
//! The store is `$QGATES_TRUST_FILE`, else `$XDG_CONFIG_HOME/qgates/trust.json`, else
//! `~/.config/qgates/trust.json`. The CLI and CI, run on purpose, need no trust.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::core::scope::baseline::lock_exclusive;
use crate::core::workspace::safe_fs;

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    /// Workspace root (canonical) → the SHA-256 of the trusted manifest.
    #[serde(default)]
    workspaces: BTreeMap<String, String>,
}

/// The user's trust decisions.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// The store at its usual place (see the module docs); `None` when no home folder is known.
    pub fn for_user() -> Option<TrustStore> {
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let path = env("QGATES_TRUST_FILE")
            .or_else(|| env("XDG_CONFIG_HOME").map(|d| d.join("qgates/trust.json")))
            .or_else(|| env("HOME").map(|d| d.join(".config/qgates/trust.json")))?;
        Some(TrustStore { path })
    }

    #[cfg(test)]
    pub fn at(path: PathBuf) -> TrustStore {
        TrustStore { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this exact manifest of this workspace was trusted. An unreadable or corrupt
    /// store trusts nothing (asking again is the safe side).
    pub fn is_trusted(&self, root: &Path, manifest_hash: &str) -> bool {
        self.read()
            .workspaces
            .get(&key(root))
            .is_some_and(|h| h == manifest_hash)
    }

    /// Records trust in this manifest of this workspace (replacing an older one). The store is
    /// private to the user (0600, its folder 0700 when made here) and never written through a
    /// symbolic link.
    pub fn trust(&self, root: &Path, manifest_hash: &str) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        crate::core::platform::make_dir_all(dir, 0o700)?;
        let _lock = lock_exclusive(&self.path.with_extension("lock"))?;
        let mut file = self.read();
        file.workspaces.insert(key(root), manifest_hash.to_string());
        let json = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
        safe_fs::write_atomic(&self.path, &json, 0o600)
    }

    fn read(&self) -> TrustFile {
        std::fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }
}

fn key(root: &Path) -> String {
    root.canonicalize()
        .unwrap_or_else(|_| root.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_is_per_workspace_and_per_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::at(dir.path().join("cfg/trust.json"));
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        assert!(!store.is_trusted(&a, "h1"));
        store.trust(&a, "h1").unwrap();
        assert!(store.is_trusted(&a, "h1"));
        assert!(
            !store.is_trusted(&a, "h2"),
            "a changed configuration asks again"
        );
        assert!(!store.is_trusted(&b, "h1"));
        store.trust(&a, "h2").unwrap();
        assert!(store.is_trusted(&a, "h2"));
        assert!(!store.is_trusted(&a, "h1"));
    }

    #[test]
    fn the_store_is_private_and_not_written_through_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::at(dir.path().join("cfg/trust.json"));
        store.trust(dir.path(), "h").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(store.path()), 0o600);
        assert_eq!(mode(&dir.path().join("cfg")), 0o700);
        // A store that is a link to a file elsewhere is replaced, not written through.
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::fs::remove_file(store.path()).unwrap();
        std::os::unix::fs::symlink(&victim, store.path()).unwrap();
        store.trust(dir.path(), "h2").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(store.is_trusted(dir.path(), "h2"));
    }

    #[test]
    fn a_corrupt_store_trusts_nothing_and_is_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trust.json");
        std::fs::write(&path, "{not json").unwrap();
        let store = TrustStore::at(path);
        assert!(!store.is_trusted(dir.path(), "h"));
        store.trust(dir.path(), "h").unwrap();
        assert!(store.is_trusted(dir.path(), "h"));
    }
}
