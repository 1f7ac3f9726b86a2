//! The result cache: per gate and file, the violations of the last run, reused while the key
//! (`keys`) holds. The language server keeps one in memory; the CLI persists it under
//! `.qgates/cache/` (bounded, safe to delete, a corrupt file is ignored). Beside the results it
//! keeps each file's content identity under its stamp and each program's identity, so an
//! unchanged re-run stats its files instead of reading them. A shared cache on another machine
//! can stand behind this one (`remote`).

pub mod deps;
pub mod hash;
pub mod keys;
pub mod parallel;
pub mod remote;
pub mod tool_id;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

pub use crate::core::cache::keys::KeyMaker;
use crate::core::cache::remote::RemoteTier;
use crate::core::cache::tool_id::ToolId;
use crate::core::violation::Violation;
use crate::core::workspace::stamp::Stamp;

/// The "file" a gate without file arguments keeps its one result under: no file has this name.
pub const WHOLE_WORKSPACE: &str = "";

/// At most this many (gate, file) results are kept; the least recently used go first. A
/// monorepo's whole project, 100 000 files under a few gates, fits; the file is then some tens
/// of megabytes. The bound also applies to the remembered file identities.
pub const MAX_ENTRIES: usize = 500_000;

/// Program identities kept; more means programs came and went (many `.venv`s over time).
const MAX_TOOLS: usize = 1_000;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    key: String,
    /// Larger is more recent.
    used: u64,
    violations: Vec<Violation>,
    /// A shared store has it: it came from one, or was written to one. A result a run could
    /// not share (the store was down, or its deadline came first) is written by a later run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    shared: bool,
}

#[derive(Debug, Serialize, Deserialize)]
struct Entries {
    /// Bumped when the file's shape changes; another version is ignored.
    version: u32,
    clock: u64,
    /// `gate id` → root-relative file → entry.
    gates: HashMap<String, HashMap<String, Entry>>,
    /// Root-relative file → its stamp and content identity when last read.
    #[serde(default)]
    hashes: HashMap<String, (Stamp, String)>,
    /// A program's path → its identity and the stamps of what that was made of.
    #[serde(default)]
    tools: HashMap<String, ToolId>,
}

/// 2: content hashes by stamp. 3: portable keys (git blob ids, programs by content).
const FORMAT_VERSION: u32 = 3;

impl Default for Entries {
    fn default() -> Self {
        Entries {
            version: FORMAT_VERSION,
            clock: 0,
            gates: HashMap::new(),
            hashes: HashMap::new(),
            tools: HashMap::new(),
        }
    }
}

/// A thread-safe result cache; `persist_to` set for the CLI's on-disk cache.
#[derive(Debug, Default)]
pub struct ResultCache {
    entries: Mutex<Entries>,
    persist_to: Option<PathBuf>,
    /// Something new was recorded since loading: only then is the file rewritten (recency alone
    /// is not worth a write on every unchanged run).
    dirty: AtomicBool,
    /// Set when the file on disk was not believed (see `load`).
    warning: Option<String>,
    /// The shared cache behind this one, opened by the first run that has one configured.
    pub(crate) remote: RemoteTier,
}

impl ResultCache {
    /// An empty cache kept in memory only.
    pub fn in_memory() -> Self {
        ResultCache::default()
    }

    /// The cache of `<root>/.qgates/cache/results.json`; a missing, unreadable or corrupt file
    /// gives an empty cache (it only costs a re-run). A file git tracks came with the
    /// repository: it is not believed (an empty cache, never written back; see `warning`).
    pub fn load(root: &Path) -> Self {
        Self::load_file(root, crate::core::workspace::qgates_dir::cache_file(root))
    }

    /// The results of reference versions of files (`core::novelty`), kept apart in
    /// `<root>/.qgates/cache/reference.json`: this cache keeps one result per gate and file, and
    /// a file's reference version would replace its current one.
    pub fn load_reference(root: &Path) -> Self {
        let path =
            crate::core::workspace::qgates_dir::cache_file(root).with_file_name("reference.json");
        Self::load_file(root, path)
    }

    fn load_file(root: &Path, path: std::path::PathBuf) -> Self {
        if let Some(warning) =
            crate::core::workspace::qgates_dir::tracked_warning(root, &path, "result cache")
        {
            tracing::warn!("{warning}");
            return ResultCache {
                warning: Some(warning),
                ..Default::default()
            };
        }
        let entries = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Entries>(&b).ok())
            .filter(|e| e.version == FORMAT_VERSION)
            .unwrap_or_default();
        ResultCache {
            entries: Mutex::new(entries),
            persist_to: Some(path),
            ..Default::default()
        }
    }

    /// Notes that something new was recorded (see `dirty`).
    fn touch(&self) {
        self.dirty.store(true, Ordering::Relaxed);
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
        if !self.dirty.swap(false, Ordering::Relaxed) {
            return;
        }
        let started = std::time::Instant::now();
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        prune(&mut entries, MAX_ENTRIES);
        // `<root>/.qgates/cache/results.json`
        let Some(root) = path.ancestors().nth(3) else {
            return;
        };
        if crate::core::workspace::qgates_dir::make(root, "cache").is_err() {
            return;
        }
        if let Ok(bytes) = serde_json::to_vec(&*entries) {
            let _ = crate::core::workspace::safe_fs::write_atomic(path, &bytes, 0o644);
            tracing::debug!(
                "local cache: {} kB saved in {} ms",
                bytes.len() / 1000,
                started.elapsed().as_millis()
            );
        }
    }

    /// The cached violations of `file` for `gate`, if its key still matches.
    pub fn get(&self, gate: &str, file: &str, key: &str) -> Option<Vec<Violation>> {
        self.get_noting_shared(gate, file, key).map(|(v, _)| v)
    }

    /// As `get`, with whether a shared store has the result.
    pub(crate) fn get_noting_shared(
        &self,
        gate: &str,
        file: &str,
        key: &str,
    ) -> Option<(Vec<Violation>, bool)> {
        let mut entries = self.entries.lock().ok()?;
        entries.clock += 1;
        let now = entries.clock;
        let entry = entries.gates.get_mut(gate)?.get_mut(file)?;
        if entry.key != key {
            return None;
        }
        entry.used = now;
        Some((entry.violations.clone(), entry.shared))
    }

    /// The cached violations of `file` for `gate` under `key`, without counting as a use.
    pub(crate) fn peek(&self, gate: &str, file: &str, key: &str) -> Option<Vec<Violation>> {
        let entries = self.entries.lock().ok()?;
        let entry = entries.gates.get(gate)?.get(file)?;
        (entry.key == key).then(|| entry.violations.clone())
    }

    /// The identity recorded for the program at `path`, while what it was made of is unchanged.
    pub fn known_tool(&self, path: &str) -> Option<String> {
        let known = self.entries.lock().ok()?.tools.get(path).cloned()?;
        known.holds().then_some(known.id)
    }

    /// Records a program's identity (the caller checked its stamps are not racy).
    pub fn remember_tool(&self, path: &str, id: ToolId) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        if entries.tools.get(path) == Some(&id) {
            return;
        }
        self.touch();
        entries.tools.insert(path.to_string(), id);
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
        self.touch();
        entries
            .hashes
            .insert(file.to_string(), (stamp, hash.to_string()));
    }

    pub fn put(&self, gate: &str, file: &str, key: String, violations: Vec<Violation>) {
        self.insert(gate, file, key, violations, false);
    }

    /// Records a result a shared store answered with.
    pub(crate) fn put_shared(&self, gate: &str, file: &str, key: String, v: Vec<Violation>) {
        self.insert(gate, file, key, v, true);
    }

    /// Notes that the result under `key` was written to a shared store.
    pub(crate) fn mark_shared(&self, gate: &str, file: &str, key: &str) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        if let Some(entry) = entries.gates.get_mut(gate).and_then(|m| m.get_mut(file))
            && entry.key == key
            && !entry.shared
        {
            entry.shared = true;
            self.touch();
        }
    }

    fn insert(
        &self,
        gate: &str,
        file: &str,
        key: String,
        violations: Vec<Violation>,
        shared: bool,
    ) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        self.touch();
        entries.clock += 1;
        let used = entries.clock;
        entries.gates.entry(gate.to_string()).or_default().insert(
            file.to_string(),
            Entry {
                key,
                used,
                violations,
                shared,
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
    if entries.tools.len() > MAX_TOOLS {
        entries.tools.clear();
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
                    shared: false,
                },
            );
        }
        prune(&mut e, 4);
        let left: Vec<&String> = e.gates["g"].keys().collect();
        assert_eq!(left.len(), 4);
        assert!(e.gates["g"].contains_key("f9"));
    }

    #[test]
    fn a_monorepo_s_results_and_file_identities_outlive_a_save() {
        // 100 000 files under one gate: every result and identity is there after a reload (the
        // bound once dropped all identities on every save past 50 000 files).
        let tmp = tempfile::tempdir().unwrap();
        let stamp = Stamp::of(&std::fs::metadata(tmp.path()).unwrap());
        let c = ResultCache::load(tmp.path());
        for i in 0..100_000 {
            let file = format!("d/f{i}.py");
            c.put("lint", &file, format!("k{i}"), vec![]);
            c.remember_hash(&file, stamp, &format!("h{i}"));
        }
        c.save();
        let c = ResultCache::load(tmp.path());
        for i in [0, 49_999, 50_000, 99_999] {
            let file = format!("d/f{i}.py");
            assert_eq!(c.get("lint", &file, &format!("k{i}")), Some(vec![]));
            assert_eq!(c.known_hash(&file, &stamp), Some(format!("h{i}")));
        }
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
