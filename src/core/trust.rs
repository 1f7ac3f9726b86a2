//! Workspace trust: a `quality.yaml` comes with the repository, so an editor must not run its
//! commands until the user has trusted that configuration. Trust is remembered per user, by the
//! workspace's path and the configuration's content hash: a changed file asks again.
//!
//! The store is `$QGATES_TRUST_FILE`, else `$XDG_CONFIG_HOME/qgates/trust.json`, else
//! `~/.config/qgates/trust.json`. The CLI and CI, run on purpose, need no trust.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::core::baseline::lock_exclusive;

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    /// Workspace root (canonical) → the trusted configuration's content hash.
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

    pub fn at(path: PathBuf) -> TrustStore {
        TrustStore { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this exact configuration of this workspace was trusted. An unreadable or corrupt
    /// store trusts nothing (asking again is the safe side).
    pub fn is_trusted(&self, root: &Path, config_hash: &str) -> bool {
        self.read()
            .workspaces
            .get(&key(root))
            .is_some_and(|h| h == config_hash)
    }

    /// Records trust in this configuration of this workspace (replacing an older one).
    pub fn trust(&self, root: &Path, config_hash: &str) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let _lock = lock_exclusive(&self.path.with_extension("lock"))?;
        let mut file = self.read();
        file.workspaces.insert(key(root), config_hash.to_string());
        let json = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
        let tmp = self
            .path
            .with_extension(format!("tmp-{}", std::process::id()));
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&json)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &self.path)
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
