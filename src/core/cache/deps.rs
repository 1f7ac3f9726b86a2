//! When a `kind: deps` gate (uv sync, npm ci) may be skipped: its lock files, the files named in
//! its `cache_inputs`, are as they were at its last green run. That run's key (the lock files'
//! contents hashed with the gate's definition) is kept in `.qgates/cache/deps/<gate id>`, one
//! small file per gate, replaced atomically, so the CLI, the language server and the agent
//! server share it without a lock. A failed or errored run is never recorded: the next run
//! installs again. A deps gate without `cache_inputs` has no key and always runs.
//!
//! The record is a cache: a run without the result cache (`--no-cache`) neither reads nor
//! writes it, and a record git tracks came with the repository and is not believed.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::core::cache::KeyMaker;
use crate::core::cache::hash::stable_hash;
use crate::core::config::Gate;
use crate::core::report::{GateResult, GateStatus};
use crate::core::workspace::qgates_dir;

/// The folder of the records, relative to `.qgates/`.
pub const RECORDS: &str = "cache/deps";

fn record_file(root: &Path, gate: &Gate) -> PathBuf {
    qgates_dir::dir(root).join(RECORDS).join(&gate.id)
}

/// The key of the gate's lock files as they are now; `None` without `cache_inputs`. A missing
/// lock file counts as its own content ("-"), so adding it later changes the key.
pub fn key(keys: &KeyMaker<'_>, gate: &Gate) -> Option<String> {
    if gate.cache_inputs.is_empty() {
        return None;
    }
    let mut text = gate.definition_hash.clone();
    for input in &gate.cache_inputs {
        let hash = keys.file_hash(input).unwrap_or_else(|| "-".to_string());
        text.push_str(&format!("\0{input}\0{hash}"));
    }
    Some(stable_hash(text.as_bytes()))
}

/// The skip reason when the gate's last green run had this `key`; `None`: it must run.
pub fn unchanged_reason(root: &Path, gate: &Gate, key: &str) -> Option<String> {
    let path = record_file(root, gate);
    // Read without following a link: `.qgates/` comes with the repository.
    let file = crate::core::platform::open_no_follow(std::fs::OpenOptions::new().read(true), &path)
        .ok()?;
    let mut recorded = String::new();
    file.take(256).read_to_string(&mut recorded).ok()?;
    if recorded.trim() != key {
        return None;
    }
    if let Some(warning) = qgates_dir::tracked_warning(root, &path, "deps record") {
        tracing::warn!("{warning}");
        return None;
    }
    Some(format!(
        "lock files unchanged since its last green run: {}",
        gate.cache_inputs.join(", ")
    ))
}

/// Records `key` after a green run of the gate; any other result leaves the record as it was,
/// and a record that cannot be written only costs a run.
pub fn record_if_green(root: &Path, gate: &Gate, key: &str, result: &GateResult) {
    if result.status != GateStatus::Passed {
        return;
    }
    let path = record_file(root, gate);
    if qgates_dir::tracked_warning(root, &path, "deps record").is_some() {
        return;
    }
    let written = qgates_dir::make(root, RECORDS).and_then(|_| {
        crate::core::workspace::safe_fs::write_atomic(&path, format!("{key}\n").as_bytes(), 0o644)
    });
    if let Err(e) = written {
        tracing::warn!(
            "the green run of deps gate `{}` could not be recorded: {e}",
            gate.id
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::{Config, load_for_workspace};

    /// A workspace with `uv.lock` and one deps gate over it.
    fn workspace() -> (tempfile::TempDir, Config) {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("uv.lock"), "v1\n").unwrap();
        std::fs::write(
            tmp.path().join("quality.yaml"),
            "version: 1\ngates:\n  deps:\n    kind: deps\n    command: [uv, sync]\n    cache_inputs: [uv.lock]\n    parsing: { strategy: exit_code }\n",
        )
        .unwrap();
        let config = load_for_workspace(tmp.path(), None).unwrap();
        (tmp, config)
    }

    fn green(gate: &Gate) -> GateResult {
        GateResult {
            status: GateStatus::Passed,
            skip_reason: None,
            ..crate::core::engine::skips::skipped(gate, String::new())
        }
    }

    #[test]
    fn only_a_green_run_with_the_same_lock_files_skips_the_gate() {
        let (tmp, config) = workspace();
        let (root, gate) = (tmp.path(), &config.gates[0]);
        let key = |config: &Config| super::key(&KeyMaker::new(root, config), gate).unwrap();
        let first = key(&config);
        let failed = GateResult {
            status: GateStatus::Failed,
            ..green(gate)
        };
        record_if_green(root, gate, &first, &failed);
        assert_eq!(unchanged_reason(root, gate, &first), None);
        record_if_green(root, gate, &first, &green(gate));
        assert_eq!(
            unchanged_reason(root, gate, &first).as_deref(),
            Some("lock files unchanged since its last green run: uv.lock")
        );
        std::fs::write(root.join("uv.lock"), "v2\n").unwrap();
        let second = key(&config);
        assert_ne!(first, second);
        assert_eq!(unchanged_reason(root, gate, &second), None);
    }

    #[test]
    fn a_record_that_is_a_link_is_not_followed() {
        let (tmp, config) = workspace();
        let (root, gate) = (tmp.path(), &config.gates[0]);
        let key = super::key(&KeyMaker::new(root, &config), gate).unwrap();
        let elsewhere = root.join("elsewhere");
        std::fs::write(&elsewhere, format!("{key}\n")).unwrap();
        std::fs::create_dir_all(qgates_dir::dir(root).join(RECORDS)).unwrap();
        std::os::unix::fs::symlink(&elsewhere, record_file(root, gate)).unwrap();
        assert_eq!(unchanged_reason(root, gate, &key), None);
    }

    #[test]
    fn a_gate_without_lock_files_has_no_key() {
        let (tmp, mut config) = workspace();
        config.gates[0].cache_inputs.clear();
        let keys = KeyMaker::new(tmp.path(), &config);
        assert_eq!(super::key(&keys, &config.gates[0]), None);
    }
}
