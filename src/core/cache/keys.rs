//! The result cache's keys. One scheme serves the local cache and the shared one
//! (`remote_cache`), so a key must be PORTABLE: equal on two clones of the same commit on two
//! machines, whatever their paths, times and inodes. A key hashes:
//! - the gate's definition (`Gate::definition_hash`: the gate as configured, no machine path);
//! - the file's content identity (`content_id`: git's blob id, from the index while the file is
//!   as git recorded it);
//! - the content identities of the gate's `cache_inputs`;
//! - the program that runs, by content (`tool_id`);
//! - for `cache: workspace` gates and gates without file arguments, the workspace fingerprint:
//!   every project file's path with its content identity.
//!
//! Content and tool identities are remembered by stamp in the local cache, so a warm run stats
//! files instead of reading them.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::core::cache::ResultCache;
use crate::core::cache::parallel::in_parallel;
use crate::core::cache::tool_id::identify;
use crate::core::config::{CachePolicy, Config, Gate};
use crate::core::runner::process::resolve_program_borrowing;
use crate::core::workspace::content_id::{IndexIds, blob_id};
use crate::core::workspace::stamp::Stamp;

/// Computes cache keys for one run; content identities are found once and shared by every gate.
pub struct KeyMaker<'a> {
    root: &'a Path,
    config: &'a Config,
    /// What the run knows of each file it has looked at: one stat serves the engine's check that
    /// a file is still there, its key's stamp and the index match alike.
    files: Mutex<HashMap<String, Facts>>,
    /// Per gate: what its keys hold beside the file's content (`GateParts`).
    gates: Mutex<HashMap<String, Arc<GateParts>>>,
    workspace: OnceLock<String>,
    /// The repository's index, read the first time many files' identities are not known by
    /// stamp (a few are read instead: see `identify_all`).
    index: OnceLock<IndexIds>,
    /// Where known identities are looked up by stamp and recorded (`None`: always found anew).
    stamps: Option<&'a ResultCache>,
    /// A workspace whose tool folders are searched after the root's, as the run's are
    /// (`RunRequest::tools_from`): a checkout's key names the program its run runs.
    lender: Option<&'a Path>,
    /// Taken before any file is read: the racy-clean rule's reference (see `Stamp::trustworthy`).
    pub(crate) reference: SystemTime,
}

/// A file as a run found it.
#[derive(Debug)]
struct Facts {
    /// `None`: not a file (or a link to one) when it was looked at.
    meta: Option<std::fs::Metadata>,
    /// Its content identity once asked for (the inner `None`: it could not be read).
    id: Option<Option<String>>,
}

/// At most this many unknown files, together at most `READ_BYTES`, are read and hashed rather
/// than matched against the index: reading a monorepo's index costs more than opening a few
/// source files (a save's one file, for one).
const READ_FILES: usize = 64;
const READ_BYTES: u64 = 1 << 20;

impl<'a> KeyMaker<'a> {
    pub fn new(root: &'a Path, config: &'a Config) -> Self {
        KeyMaker {
            root,
            config,
            files: Mutex::new(HashMap::new()),
            gates: Mutex::new(HashMap::new()),
            workspace: OnceLock::new(),
            index: OnceLock::new(),
            stamps: None,
            lender: None,
            reference: SystemTime::now()
                .checked_sub(crate::core::workspace::stamp::RACY_MARGIN)
                .unwrap_or(std::time::UNIX_EPOCH),
        }
    }

    /// Reuses the identities `cache` recorded for files and programs whose stamps hold.
    pub fn with_stamps(mut self, cache: Option<&'a ResultCache>) -> Self {
        self.stamps = cache;
        self
    }

    /// Programs are looked up in `lender`'s tool folders too (a clean room's checkout borrows
    /// its workspace's: `runner::tool_folders`).
    pub fn borrowing_tools(mut self, lender: Option<&'a Path>) -> Self {
        self.lender = lender;
        self
    }

    /// The workspace fingerprint when the workspace's content is known by other means: a
    /// checkout of a commit with known files copied over (`RunRequest::workspace_identity`).
    pub fn with_workspace_identity(self, identity: Option<String>) -> Self {
        if let Some(identity) = identity {
            let _ = self.workspace.set(identity);
        }
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
        Some(self.key_with_content(gate, &content))
    }

    /// The key a file with the content identity `content` has for `gate` in this workspace
    /// (a file-by-file gate: `content` is what sets its result apart), wherever that content is:
    /// the reference version of a file (`core::novelty`).
    pub fn key_with_content(&self, gate: &Gate, content: &str) -> String {
        let parts = self.gate_parts(gate);
        let mut hasher = Sha256::new();
        hasher.update(&parts.before);
        hasher.update(content);
        hasher.update(&parts.after);
        hex::encode(hasher.finalize())
    }

    /// A gate's key text around the file's content, the same for all its files: made once a run.
    fn gate_parts(&self, gate: &Gate) -> Arc<GateParts> {
        if let Some(known) = self
            .gates
            .lock()
            .ok()
            .and_then(|m| m.get(&gate.id).cloned())
        {
            return known;
        }
        let inputs: Vec<String> = gate
            .cache_inputs
            .iter()
            .map(|i| self.file_hash(i).unwrap_or_else(|| "-".to_string()))
            .collect();
        let workspace = if !gate.pass_files || gate.cache == CachePolicy::Workspace {
            self.workspace
                .get_or_init(|| self.workspace_fingerprint())
                .as_str()
        } else {
            ""
        };
        let tool = self.tool_fingerprint(gate);
        let parts = Arc::new(GateParts {
            before: format!("qgates key 3\0{}\0", gate.definition_hash),
            after: format!("\0{}\0{workspace}\0{tool}", inputs.join(",")),
        });
        if let Ok(mut m) = self.gates.lock() {
            m.insert(gate.id.clone(), parts.clone());
        }
        parts
    }

    /// The program the gate would run, by content (see `tool_id`), remembered in the local cache
    /// while the stamps of what it read hold.
    fn tool_fingerprint(&self, gate: &Gate) -> String {
        let cwd = gate.cwd_in(self.root);
        gate.command
            .first()
            .and_then(|name| resolve_program_borrowing(name, self.root, &cwd, self.lender).ok())
            .and_then(|path| {
                let key = path.display().to_string();
                if let Some(known) = self.stamps.and_then(|c| c.known_tool(&key)) {
                    return Some(known);
                }
                let id = identify(&path)?;
                if let Some(cache) = self.stamps
                    && id.trustworthy(self.reference)
                {
                    cache.remember_tool(&key, id.clone());
                }
                Some(id.id)
            })
            .unwrap_or_default()
    }

    /// The content identity of a file (see `content_id`), once per run.
    pub fn file_hash(&self, rel: &str) -> Option<String> {
        if let Ok(map) = self.files.lock()
            && let Some(id) = map.get(rel).and_then(|f| f.id.clone())
        {
            return id;
        }
        let id = self
            .meta(rel)
            .and_then(|meta| self.identify_all(&[(rel, &meta)]).pop().flatten());
        if let Ok(mut map) = self.files.lock()
            && let Some(facts) = map.get_mut(rel)
        {
            facts.id = Some(id.clone());
        }
        id
    }

    /// Whether `rel` is a file (or a link to one) now; its stat is kept for its key.
    pub fn is_file(&self, rel: &str) -> bool {
        self.meta(rel).is_some()
    }

    /// The stat of `rel` (`None`: not a file), taken the first time it is asked for.
    fn meta(&self, rel: &str) -> Option<std::fs::Metadata> {
        if let Ok(map) = self.files.lock()
            && let Some(known) = map.get(rel)
        {
            return known.meta.clone();
        }
        let meta = self.stat(rel);
        if let Ok(mut map) = self.files.lock() {
            let (meta, id) = (meta.clone(), None);
            map.insert(rel.to_string(), Facts { meta, id });
        }
        meta
    }

    /// Takes the stat of every file in `files` and, where `identify` says so, its content
    /// identity, many files at a time (a monorepo has a hundred thousand).
    pub fn prepare(&self, files: &[String], identify: &(dyn Fn(&str) -> bool + Sync)) {
        let stats = in_parallel(files, |rel| {
            let meta = self.stat(rel);
            let wanted = meta.is_some() && identify(rel);
            (meta, wanted)
        });
        let wanted: Vec<(&str, &std::fs::Metadata)> = files
            .iter()
            .zip(&stats)
            .filter_map(|(rel, (meta, wanted))| {
                Some((rel.as_str(), meta.as_ref()?)).filter(|_| *wanted)
            })
            .collect();
        let mut ids = self.identify_all(&wanted).into_iter();
        let Ok(mut map) = self.files.lock() else {
            return;
        };
        map.reserve(files.len());
        for (rel, (meta, wanted)) in files.iter().zip(stats) {
            let id = if wanted { ids.next() } else { None };
            map.insert(rel.clone(), Facts { meta, id });
        }
    }

    fn stat(&self, rel: &str) -> Option<std::fs::Metadata> {
        std::fs::metadata(self.root.join(rel))
            .ok()
            .filter(|m| m.is_file())
    }

    /// The content identities of files whose stat the caller took, in order: the one recorded
    /// while the file's stamp holds, else the index's while the file is as git recorded it,
    /// else its bytes hashed as git would. Only identities found by reading are recorded: the
    /// index is cheaper to read again than a monorepo's worth of them in the cache file.
    fn identify_all(&self, files: &[(&str, &std::fs::Metadata)]) -> Vec<Option<String>> {
        let mut ids: Vec<Option<String>> = files
            .iter()
            .map(|(rel, meta)| {
                self.stamps
                    .and_then(|c| c.known_hash(rel, &Stamp::of(meta)))
            })
            .collect();
        let unknown: Vec<usize> = (0..files.len()).filter(|&i| ids[i].is_none()).collect();
        if unknown.is_empty() {
            return ids;
        }
        let bytes: u64 = unknown.iter().map(|&i| files[i].1.len()).sum();
        let index = (unknown.len() > READ_FILES || bytes > READ_BYTES)
            .then(|| self.index.get_or_init(|| IndexIds::open(self.root)));
        let found = in_parallel(&unknown, |&i| {
            let (rel, meta) = files[i];
            if let Some(id) = index.and_then(|index| index.blob_id(rel, meta)) {
                return (Some(id), false);
            }
            let read = std::fs::read(self.root.join(rel))
                .ok()
                .and_then(|b| blob_id(&b));
            (read, true)
        });
        let reads = found.iter().filter(|(_, read)| *read).count();
        tracing::debug!(
            "identities: {} known by stamp, {} from the index, {reads} read",
            files.len() - unknown.len(),
            unknown.len() - reads
        );
        for (i, (id, read)) in unknown.into_iter().zip(found) {
            let stamp = Stamp::of(files[i].1);
            if read
                && let (Some(cache), Some(id)) = (self.stamps, &id)
                && stamp.trustworthy(self.reference)
            {
                cache.remember_hash(files[i].0, stamp, id);
            }
            ids[i] = id;
        }
        ids
    }

    /// Every project file with its content identity: changes whenever a file is added, removed,
    /// renamed or edited, so a `cache: workspace` result never outlives a change elsewhere, and
    /// is the same on two clones of one commit.
    fn workspace_fingerprint(&self) -> String {
        let files = crate::core::scope::project_files(self.root, self.config);
        // Those not identified yet are identified together (one at a time, each would be read).
        let unknown: Vec<String> = files
            .iter()
            .filter(|f| {
                self.files.lock().map_or(true, |map| {
                    map.get(f.as_str()).is_none_or(|k| k.id.is_none())
                })
            })
            .cloned()
            .collect();
        self.prepare(&unknown, &|_| true);
        let mut acc = String::new();
        for rel in files {
            let id = self.file_hash(&rel).unwrap_or_else(|| "-".to_string());
            acc.push_str(&format!("{rel}\0{id}\n"));
        }
        sha256_hex(acc.as_bytes())
    }
}

/// The key text of `qgates key 3` is `before`, the file's content identity, then `after`.
#[derive(Debug)]
struct GateParts {
    before: String,
    after: String,
}

/// Lower-case hex of the SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
#[path = "keys_tests.rs"]
mod tests;
