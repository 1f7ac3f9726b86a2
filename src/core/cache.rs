//! The result cache: per gate and file, the violations of the last run, reused while the key
//! holds. The key hashes the file's content, the gate's definition, the files named in
//! `cache_inputs`, and for `cache: workspace` gates (type checkers, whose findings depend on other
//! files) a fingerprint of the whole workspace. The language server keeps one in memory; the CLI
//! persists it under `.qgates/cache/` (bounded, safe to delete, a corrupt file is ignored).
//!
//! Beside the results it keeps each file's last content hash under its stamp (size, times,
//! inode; see `stamp`), so an unchanged re-run stats its files instead of reading them all.

use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::core::config::{CachePolicy, Config, Gate};
use crate::core::hash::stable_hash;
use crate::core::runner::process::resolve_program;
use crate::core::stamp::Stamp;
use crate::core::violation::Violation;

/// The "file" a gate without file arguments keeps its one result under: no file has this name.
pub const WHOLE_WORKSPACE: &str = "";

/// At most this many (gate, file) results are kept; the least recently used go first.
pub const MAX_ENTRIES: usize = 50_000;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    key: String,
    /// Larger is more recent.
    used: u64,
    violations: Vec<Violation>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Entries {
    /// Bumped when the file's shape changes; another version is ignored.
    version: u32,
    clock: u64,
    /// `gate id` → root-relative file → entry.
    gates: HashMap<String, HashMap<String, Entry>>,
    /// Root-relative file → its stamp and content hash when last read.
    #[serde(default)]
    hashes: HashMap<String, (Stamp, String)>,
}

/// 2: content hashes by stamp.
const FORMAT_VERSION: u32 = 2;

/// A thread-safe result cache; `persist_to` set for the CLI's on-disk cache.
#[derive(Debug, Default)]
pub struct ResultCache {
    entries: Mutex<Entries>,
    persist_to: Option<PathBuf>,
    /// Something new was recorded since loading: only then is the file rewritten (recency alone
    /// is not worth a write on every unchanged run).
    dirty: std::sync::atomic::AtomicBool,
    /// Set when the file on disk was not believed (see `load`).
    warning: Option<String>,
}

impl ResultCache {
    /// An empty cache kept in memory only.
    pub fn in_memory() -> Self {
        ResultCache {
            entries: Mutex::new(Entries {
                version: FORMAT_VERSION,
                ..Default::default()
            }),
            persist_to: None,
            dirty: Default::default(),
            warning: None,
        }
    }

    /// The cache of `<root>/.qgates/cache/results.json`; a missing, unreadable or corrupt file
    /// gives an empty cache (it only costs a re-run). A file git tracks came with the
    /// repository: it is not believed (an empty cache, never written back; see `warning`).
    pub fn load(root: &Path) -> Self {
        let path = crate::core::qgates_dir::cache_file(root);
        let empty = || Entries {
            version: FORMAT_VERSION,
            ..Default::default()
        };
        if let Some(warning) = crate::core::qgates_dir::tracked_warning(root, &path, "result cache")
        {
            tracing::warn!("{warning}");
            return ResultCache {
                entries: Mutex::new(empty()),
                persist_to: None,
                dirty: Default::default(),
                warning: Some(warning),
            };
        }
        let entries = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Entries>(&b).ok())
            .filter(|e| e.version == FORMAT_VERSION)
            .unwrap_or_else(empty);
        ResultCache {
            entries: Mutex::new(entries),
            persist_to: Some(path),
            dirty: Default::default(),
            warning: None,
        }
    }

    /// Why the cache on disk was not used, for the report.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// Writes the cache back (a new temporary file + rename, never through a link), dropping the
    /// oldest entries beyond the bound. Does nothing for an in-memory cache. A failure only
    /// loses the cache.
    pub fn save(&self) {
        let Some(path) = &self.persist_to else { return };
        if !self.dirty.swap(false, std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        prune(&mut entries, MAX_ENTRIES);
        // `<root>/.qgates/cache/results.json`
        let Some(root) = path.ancestors().nth(3) else {
            return;
        };
        if crate::core::qgates_dir::make(root, "cache").is_err() {
            return;
        }
        if let Ok(bytes) = serde_json::to_vec(&*entries) {
            let _ = crate::core::safe_fs::write_atomic(path, &bytes, 0o644);
        }
    }

    /// The cached violations of `file` for `gate`, if its key still matches.
    pub fn get(&self, gate: &str, file: &str, key: &str) -> Option<Vec<Violation>> {
        let mut entries = self.entries.lock().ok()?;
        entries.clock += 1;
        let now = entries.clock;
        let entry = entries.gates.get_mut(gate)?.get_mut(file)?;
        if entry.key != key {
            return None;
        }
        entry.used = now;
        Some(entry.violations.clone())
    }

    /// The content hash recorded for `file` while it had this stamp.
    pub fn known_hash(&self, file: &str, stamp: &Stamp) -> Option<String> {
        let entries = self.entries.lock().ok()?;
        let (known, hash) = entries.hashes.get(file)?;
        (known == stamp).then(|| hash.clone())
    }

    /// Records a file's content hash under its stamp (the caller checked it is not racy).
    pub fn remember_hash(&self, file: &str, stamp: Stamp, hash: &str) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        if entries
            .hashes
            .get(file)
            .is_some_and(|(s, h)| *s == stamp && h == hash)
        {
            return;
        }
        self.dirty.store(true, std::sync::atomic::Ordering::Relaxed);
        entries
            .hashes
            .insert(file.to_string(), (stamp, hash.to_string()));
    }

    pub fn put(&self, gate: &str, file: &str, key: String, violations: Vec<Violation>) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        self.dirty.store(true, std::sync::atomic::Ordering::Relaxed);
        entries.clock += 1;
        let used = entries.clock;
        entries.gates.entry(gate.to_string()).or_default().insert(
            file.to_string(),
            Entry {
                key,
                used,
                violations,
            },
        );
    }

    pub fn len(&self) -> usize {
        self.entries
            .lock()
            .map(|e| e.gates.values().map(HashMap::len).sum())
            .unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn prune(entries: &mut Entries, max: usize) {
    // Stamps are only a shortcut: past the bound (files deleted or renamed over time) they start
    // over rather than being aged one by one.
    if entries.hashes.len() > max {
        entries.hashes.clear();
    }
    let total: usize = entries.gates.values().map(HashMap::len).sum();
    if total <= max {
        return;
    }
    let mut ages: Vec<u64> = entries
        .gates
        .values()
        .flat_map(|m| m.values().map(|e| e.used))
        .collect();
    ages.sort_unstable();
    let cutoff = ages[total - max];
    for m in entries.gates.values_mut() {
        m.retain(|_, e| e.used >= cutoff);
    }
}

/// Computes cache keys for one run; file hashes are read once and shared by every gate.
pub struct KeyMaker<'a> {
    root: &'a Path,
    config: &'a Config,
    file_hashes: Mutex<HashMap<String, Option<String>>>,
    /// Per gate: which program runs, and its file's stamp.
    tools: Mutex<HashMap<String, String>>,
    workspace: std::sync::OnceLock<String>,
    /// Where known content hashes are looked up by stamp and recorded (`None`: always read).
    stamps: Option<&'a ResultCache>,
    /// Taken before any file is read: the racy-clean rule's reference (see `Stamp::trustworthy`).
    reference: SystemTime,
}

impl<'a> KeyMaker<'a> {
    pub fn new(root: &'a Path, config: &'a Config) -> Self {
        KeyMaker {
            root,
            config,
            file_hashes: Mutex::new(HashMap::new()),
            tools: Mutex::new(HashMap::new()),
            workspace: std::sync::OnceLock::new(),
            stamps: None,
            reference: SystemTime::now()
                .checked_sub(crate::core::stamp::RACY_MARGIN)
                .unwrap_or(std::time::UNIX_EPOCH),
        }
    }

    /// Reuses the content hashes `cache` recorded for files whose stamp has not changed.
    pub fn with_stamps(mut self, cache: Option<&'a ResultCache>) -> Self {
        self.stamps = cache;
        self
    }

    /// Whether `gate`'s results are cached (else `key` is always `None`).
    pub fn caches(gate: &Gate) -> bool {
        gate.cache != CachePolicy::None
    }

    /// The key of `file` for `gate`; `None` when the gate is not cached or the file cannot be read.
    /// A gate without file arguments has one result for the whole workspace, kept under
    /// `WHOLE_WORKSPACE`, and always keyed by the workspace's fingerprint.
    pub fn key(&self, gate: &Gate, file: &str) -> Option<String> {
        if !Self::caches(gate) {
            return None;
        }
        let content = if gate.pass_files {
            self.file_hash(file)?
        } else {
            String::new()
        };
        let inputs: Vec<String> = gate
            .cache_inputs
            .iter()
            .map(|i| self.file_hash(i).unwrap_or_else(|| "-".to_string()))
            .collect();
        let workspace = match gate.cache {
            _ if !gate.pass_files => self
                .workspace
                .get_or_init(|| self.workspace_fingerprint())
                .as_str(),
            CachePolicy::Workspace => self
                .workspace
                .get_or_init(|| self.workspace_fingerprint())
                .as_str(),
            _ => "",
        };
        let tool = self.tool_fingerprint(gate);
        Some(stable_hash(
            format!(
                "{}\0{content}\0{}\0{workspace}\0{tool}",
                gate.definition_hash,
                inputs.join(",")
            )
            .as_bytes(),
        ))
    }

    /// The program the gate would run, by path, with its file's stamp: another version of the
    /// tool (an upgrade, another `.venv`) gives other keys, without starting it to ask its version.
    fn tool_fingerprint(&self, gate: &Gate) -> String {
        if let Some(known) = self
            .tools
            .lock()
            .ok()
            .and_then(|m| m.get(&gate.id).cloned())
        {
            return known;
        }
        let cwd = gate.cwd_in(self.root);
        let print = gate
            .command
            .first()
            .and_then(|name| resolve_program(name, self.root, &cwd).ok())
            .map(|path| {
                let stamp = std::fs::metadata(&path).ok().map(|m| Stamp::of(&m));
                format!("{}\0{stamp:?}", path.display())
            })
            .unwrap_or_default();
        if let Ok(mut m) = self.tools.lock() {
            m.insert(gate.id.clone(), print.clone());
        }
        print
    }

    /// The hash of a file's content (recorded by stamp, else read), once per run.
    pub fn file_hash(&self, rel: &str) -> Option<String> {
        if let Ok(map) = self.file_hashes.lock()
            && let Some(h) = map.get(rel)
        {
            return h.clone();
        }
        let h = self.content_hash(rel);
        if let Ok(mut map) = self.file_hashes.lock() {
            map.insert(rel.to_string(), h.clone());
        }
        h
    }

    /// The hash of a file's content: the recorded one while its stamp holds, else read.
    fn content_hash(&self, rel: &str) -> Option<String> {
        let stamp = self.stamps.and_then(|_| {
            std::fs::metadata(self.root.join(rel))
                .ok()
                .filter(Metadata::is_file)
                .map(|m| Stamp::of(&m))
        });
        if let (Some(cache), Some(stamp)) = (self.stamps, &stamp)
            && let Some(known) = cache.known_hash(rel, stamp)
        {
            return Some(known);
        }
        let hash = std::fs::read(self.root.join(rel))
            .ok()
            .map(|b| stable_hash(&b))?;
        if let (Some(cache), Some(stamp)) = (self.stamps, stamp)
            && stamp.trustworthy(self.reference)
        {
            cache.remember_hash(rel, stamp, &hash);
        }
        Some(hash)
    }

    /// Changes whenever any project file is added, removed or modified (path and stamp),
    /// so a `cache: workspace` result never outlives a change elsewhere in the workspace.
    fn workspace_fingerprint(&self) -> String {
        let mut acc = String::new();
        for rel in crate::core::scope::project_files(self.root, self.config) {
            let stamp = std::fs::metadata(self.root.join(&rel))
                .ok()
                .map(|m| Stamp::of(&m));
            acc.push_str(&format!("{rel}\0{stamp:?}\n"));
        }
        stable_hash(acc.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_must_match_and_old_entries_are_pruned() {
        let c = ResultCache::in_memory();
        c.put("g", "a.py", "k1".into(), vec![]);
        assert_eq!(c.get("g", "a.py", "k1"), Some(vec![]));
        assert_eq!(c.get("g", "a.py", "k2"), None);
        assert_eq!(c.get("h", "a.py", "k1"), None);
        let mut e = c.entries.lock().unwrap();
        for i in 0..10 {
            e.clock += 1;
            let used = e.clock;
            e.gates.entry("g".into()).or_default().insert(
                format!("f{i}"),
                Entry {
                    key: "k".into(),
                    used,
                    violations: vec![],
                },
            );
        }
        prune(&mut e, 4);
        let left: Vec<&String> = e.gates["g"].keys().collect();
        assert_eq!(left.len(), 4);
        assert!(e.gates["g"].contains_key("f9"));
    }

    /// A workspace with the default configuration and one Python file, `a.py`.
    fn workspace_with_a_py() -> (tempfile::TempDir, crate::core::config::Config) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::write(
            root.join("quality.yaml"),
            crate::core::config::DEFAULT_CONFIG,
        )
        .unwrap();
        std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
        let config = crate::core::config::load_for_workspace(root, None).unwrap();
        (tmp, config)
    }

    #[test]
    fn a_recorded_hash_is_reused_only_while_the_stamp_holds() {
        let (tmp, config) = workspace_with_a_py();
        let root = tmp.path();
        let gate = config.gate("ruff_lint").unwrap();
        let cache = ResultCache::in_memory();
        let stamp = Stamp::of(&std::fs::metadata(root.join("a.py")).unwrap());
        // A hash no read would give: a key built from it proves the file was not read.
        cache.remember_hash("a.py", stamp, "feedfeedfeedfeed");
        let keys = |c| {
            KeyMaker::new(root, &config)
                .with_stamps(c)
                .key(gate, "a.py")
        };
        let (shortcut, read) = (keys(Some(&cache)), keys(None));
        assert_ne!(shortcut, read);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(root.join("a.py"), "x = 2\n").unwrap();
        assert_eq!(
            keys(Some(&cache)),
            keys(None),
            "a same-size rewrite was not read"
        );
        assert_ne!(keys(None), read);
    }

    #[test]
    fn another_version_of_the_tool_gives_other_keys() {
        let (tmp, config) = workspace_with_a_py();
        let root = tmp.path();
        let gate = config.gate("ruff_lint").unwrap();
        let key = || KeyMaker::new(root, &config).key(gate, "a.py").unwrap();
        let tool = root.join(".venv/bin/ruff");
        std::fs::create_dir_all(tool.parent().unwrap()).unwrap();
        let install = |script: &str| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::write(&tool, script).unwrap();
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        install("#!/bin/sh\necho 0.1\n");
        let first = key();
        assert_eq!(key(), first, "the same tool gives the same key");
        install("#!/bin/sh\necho 0.2.0\n");
        assert_ne!(key(), first, "an upgraded tool reused the old results");
    }

    #[test]
    fn a_fresh_file_gets_no_stamp() {
        let (tmp, config) = workspace_with_a_py();
        let root = tmp.path();
        let gate = config.gate("ruff_lint").unwrap();
        let cache = ResultCache::in_memory();
        // The default reference is `now - RACY_MARGIN`: the file was written after it.
        KeyMaker::new(root, &config)
            .with_stamps(Some(&cache))
            .key(gate, "a.py");
        assert!(cache.entries.lock().unwrap().hashes.is_empty());
        let mut keys = KeyMaker::new(root, &config).with_stamps(Some(&cache));
        keys.reference = SystemTime::now() + std::time::Duration::from_millis(50);
        keys.key(gate, "a.py");
        assert!(cache.entries.lock().unwrap().hashes.contains_key("a.py"));
    }

    #[test]
    fn a_corrupt_cache_file_is_ignored() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join(".qgates/cache")).unwrap();
        std::fs::write(tmp.path().join(".qgates/cache/results.json"), "garbage{").unwrap();
        let c = ResultCache::load(tmp.path());
        assert!(c.is_empty());
        c.put("g", "a.py", "k".into(), vec![]);
        c.save();
        assert_eq!(
            ResultCache::load(tmp.path()).get("g", "a.py", "k"),
            Some(vec![])
        );
    }
}
