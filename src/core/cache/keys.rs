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
mod tests {
    use super::*;

    /// A workspace with the default configuration and one Python file, `a.py`.
    fn workspace_with_a_py() -> (tempfile::TempDir, Config) {
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

    /// Prepared on several threads (past a thousand files) as one at a time: each file's stat
    /// and identity, a vanished file known as such.
    #[test]
    fn files_prepared_together_are_known_as_one_by_one() {
        let (tmp, config) = workspace_with_a_py();
        let root = tmp.path();
        let mut files: Vec<String> = (0..2500).map(|i| format!("m{i}.py")).collect();
        for (i, f) in files.iter().enumerate() {
            std::fs::write(root.join(f), format!("x = {i}\n")).unwrap();
        }
        files.push("gone.py".to_string());
        let keys = KeyMaker::new(root, &config);
        keys.prepare(&files, &|f| !f.starts_with("m1"));
        assert!(!keys.is_file("gone.py"));
        for (i, f) in files.iter().take(2500).enumerate() {
            assert!(keys.is_file(f), "{f}");
            let expected = blob_id(format!("x = {i}\n").as_bytes());
            assert_eq!(keys.file_hash(f), expected, "{f}");
        }
    }

    /// In a repository, many files as git recorded them take the index's identity and are not
    /// remembered (the index answers again next time); a file edited since is read, and its
    /// identity remembered under its stamp. A save's few files are read without the index.
    #[test]
    fn the_index_answers_for_many_files_and_a_read_is_remembered() {
        let (tmp, config) = workspace_with_a_py();
        let root = tmp.path();
        let files: Vec<String> = (0..READ_FILES + 1).map(|i| format!("m{i}.py")).collect();
        for f in &files {
            std::fs::write(root.join(f), format!("{f}\n")).unwrap();
        }
        crate::core::workspace::content_id::tests::git(root, &["init", "-q"]);
        crate::core::workspace::content_id::tests::git(root, &["add", "-A"]);
        crate::core::workspace::content_id::tests::git(root, &["commit", "-q", "-m", "files"]);
        std::fs::write(root.join("m0.py"), "edited\n").unwrap();
        let cache = ResultCache::in_memory();
        let mut keys = KeyMaker::new(root, &config).with_stamps(Some(&cache));
        keys.reference = SystemTime::now() + std::time::Duration::from_millis(50);
        keys.prepare(&files, &|_| true);
        assert!(keys.index.get().is_some(), "the index was read");
        let stamp = |f: &str| Stamp::of(&std::fs::metadata(root.join(f)).unwrap());
        assert_eq!(keys.file_hash("m0.py"), blob_id(b"edited\n"));
        assert_eq!(
            cache.known_hash("m0.py", &stamp("m0.py")),
            blob_id(b"edited\n")
        );
        assert_eq!(keys.file_hash("m1.py"), blob_id(b"m1.py\n"));
        assert_eq!(cache.known_hash("m1.py", &stamp("m1.py")), None);

        // A workspace gate's key identifies every project file, together.
        let workspace = KeyMaker::new(root, &config);
        assert!(
            workspace
                .key(config.gate("mypy").unwrap(), "m1.py")
                .is_some()
        );
        assert!(
            workspace.index.get().is_some(),
            "the project was read file by file"
        );

        let few = KeyMaker::new(root, &config);
        few.prepare(&files[..3], &|_| true);
        assert!(
            few.index.get().is_none(),
            "a few files were matched against the index"
        );
        assert_eq!(few.file_hash("m1.py"), blob_id(b"m1.py\n"));
    }

    /// Keys are shared between machines and versions: their text is fixed (`qgates key 3`).
    #[test]
    fn a_key_is_the_hash_of_its_documented_text() {
        let (tmp, config) = workspace_with_a_py();
        let root = tmp.path();
        let gate = config.gate("ruff_lint").unwrap();
        let keys = KeyMaker::new(root, &config);
        let content = blob_id(b"x = 1\n").unwrap();
        let tool = keys.tool_fingerprint(gate);
        let text = format!(
            "qgates key 3\0{}\0{content}\0{}\0\0{tool}",
            gate.definition_hash,
            gate.cache_inputs
                .iter()
                .map(|_| "-")
                .collect::<Vec<_>>()
                .join(",")
        );
        assert_eq!(keys.key(gate, "a.py"), Some(sha256_hex(text.as_bytes())));
    }

    #[test]
    fn a_recorded_hash_is_reused_only_while_the_stamp_holds() {
        let (tmp, config) = workspace_with_a_py();
        let root = tmp.path();
        let gate = config.gate("ruff_lint").unwrap();
        let cache = ResultCache::in_memory();
        let stamp = Stamp::of(&std::fs::metadata(root.join("a.py")).unwrap());
        // An identity no read would give: a key built from it proves the file was not read.
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
        let stamp = Stamp::of(&std::fs::metadata(root.join("a.py")).unwrap());
        assert_eq!(cache.known_hash("a.py", &stamp), None);
        let mut keys = KeyMaker::new(root, &config).with_stamps(Some(&cache));
        keys.reference = SystemTime::now() + std::time::Duration::from_millis(50);
        keys.key(gate, "a.py");
        assert!(cache.known_hash("a.py", &stamp).is_some());
    }

    #[test]
    fn a_remembered_tool_identity_is_reused_while_what_it_read_holds() {
        let (tmp, config) = workspace_with_a_py();
        let root = tmp.path();
        let gate = config.gate("ruff_lint").unwrap();
        let tool = root.join(".venv/bin/ruff");
        std::fs::create_dir_all(tool.parent().unwrap()).unwrap();
        std::fs::write(&tool, "#!/bin/sh\necho 0.1\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cache = ResultCache::in_memory();
        let key = |reference: Option<SystemTime>| {
            let mut keys = KeyMaker::new(root, &config).with_stamps(Some(&cache));
            if let Some(r) = reference {
                keys.reference = r;
            }
            keys.key(gate, "a.py").unwrap()
        };
        let later = SystemTime::now() + std::time::Duration::from_millis(50);
        let first = key(Some(later));
        let path = tool.display().to_string();
        let mut remembered = identify(&tool).unwrap();
        assert_eq!(cache.known_tool(&path), Some(remembered.id.clone()));
        // An identity no hashing would give: a key built from it proves nothing was read.
        remembered.id = "feed".into();
        cache.remember_tool(&path, remembered);
        assert_ne!(key(None), first, "the remembered identity was used");
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&tool, "#!/bin/sh\necho 0.1\n").unwrap();
        assert_eq!(cache.known_tool(&path), None, "a rewrite changed its stamp");
        assert_eq!(key(None), first, "the same content, hashed again");
    }

    /// Every preset of the catalog, configured in two folders: the same definition hashes
    /// (nothing of the folder is in what is hashed).
    #[test]
    fn a_gate_definition_names_no_folder_of_the_machine() {
        let names: Vec<&str> = crate::core::config::presets::names().collect();
        let config: String = names
            .iter()
            .enumerate()
            .map(|(i, name)| format!("  g{i}: {{ preset: {name} }}\n"))
            .collect();
        let load = || {
            let tmp = tempfile::tempdir().unwrap();
            let path = tmp.path().join("quality.yaml");
            std::fs::write(&path, format!("version: 1\ngates:\n{config}")).unwrap();
            let loaded = crate::core::config::load_file(&path).unwrap();
            (tmp, loaded)
        };
        let ((_a, a), (_b, b)) = (load(), load());
        assert_eq!(a.gates.len(), names.len());
        for (ga, gb) in a.gates.iter().zip(&b.gates) {
            assert_eq!(ga.definition_hash, gb.definition_hash, "{}", ga.id);
        }
    }

    /// Two workspaces with the same files and tools in other folders, created at other times:
    /// every gate of the default configuration (per file, workspace and whole-workspace alike)
    /// gives the same keys.
    #[test]
    fn keys_are_the_same_on_two_machines() {
        let make = || {
            let (tmp, config) = workspace_with_a_py();
            std::fs::create_dir(tmp.path().join("pkg")).unwrap();
            std::fs::write(tmp.path().join("pkg/b.py"), "y = 2\n").unwrap();
            let tool = tmp.path().join("venv/bin/ruff");
            std::fs::create_dir_all(tool.parent().unwrap()).unwrap();
            std::fs::write(&tool, format!("#!{}/python\nrun()\n", tmp.path().display())).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
            (tmp, config)
        };
        let (a, config_a) = make();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (b, config_b) = make();
        for (ga, gb) in config_a.gates.iter().zip(&config_b.gates) {
            assert_eq!(ga.definition_hash, gb.definition_hash, "{}", ga.id);
            for file in ["a.py", "pkg/b.py"] {
                let ka = KeyMaker::new(a.path(), &config_a).key(ga, file);
                let kb = KeyMaker::new(b.path(), &config_b).key(gb, file);
                assert!(ka.is_some());
                assert_eq!(ka, kb, "{} {file}", ga.id);
            }
        }
    }
}
