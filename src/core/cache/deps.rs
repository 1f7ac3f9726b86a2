//! When a `kind: deps` gate (uv sync, npm ci) may be skipped: its lock files (its `cache_inputs`)
//! are as they were at its last green run. That run is the gate's one entry in the result cache,
//! for the whole workspace, keyed by the lock files' contents and the gate's definition, with no
//! findings. It is never shared (a green install on one machine says nothing of another's), and
//! only a green run is recorded. A deps gate without `cache_inputs` always runs.

use crate::core::cache::hash::stable_hash;
use crate::core::cache::{KeyMaker, ResultCache, WHOLE_WORKSPACE};
use crate::core::config::Gate;
use crate::core::report::{GateResult, GateStatus};

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
pub fn unchanged_reason(cache: &ResultCache, gate: &Gate, key: &str) -> Option<String> {
    cache.get(&gate.id, WHOLE_WORKSPACE, key)?;
    Some(format!(
        "lock files unchanged since its last green run: {}",
        gate.cache_inputs.join(", ")
    ))
}

/// Records `key` after a green run of the gate; any other result leaves the record as it was.
pub fn record_if_green(cache: &ResultCache, gate: &Gate, key: &str, result: &GateResult) {
    if result.status == GateStatus::Passed {
        cache.put(&gate.id, WHOLE_WORKSPACE, key.to_string(), Vec::new());
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
        let cache = ResultCache::in_memory();
        let key = |config: &Config| super::key(&KeyMaker::new(root, config), gate).unwrap();
        let first = key(&config);
        let failed = GateResult {
            status: GateStatus::Failed,
            ..green(gate)
        };
        record_if_green(&cache, gate, &first, &failed);
        assert_eq!(unchanged_reason(&cache, gate, &first), None);
        record_if_green(&cache, gate, &first, &green(gate));
        assert_eq!(
            unchanged_reason(&cache, gate, &first).as_deref(),
            Some("lock files unchanged since its last green run: uv.lock")
        );
        std::fs::write(root.join("uv.lock"), "v2\n").unwrap();
        let second = key(&config);
        assert_ne!(first, second);
        assert_eq!(unchanged_reason(&cache, gate, &second), None);
    }

    #[test]
    fn a_gate_without_lock_files_has_no_key() {
        let (tmp, mut config) = workspace();
        config.gates[0].cache_inputs.clear();
        let keys = KeyMaker::new(tmp.path(), &config);
        assert_eq!(super::key(&keys, &config.gates[0]), None);
    }
}
