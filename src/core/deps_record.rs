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
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::core::cache::KeyMaker;
use crate::core::config::Gate;
use crate::core::hash::stable_hash;
use crate::core::qgates_dir;
use crate::core::report::{GateResult, GateStatus};

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
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
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
        crate::core::safe_fs::write_atomic(&path, format!("{key}\n").as_bytes(), 0o644)
    });
    if let Err(e) = written {
        tracing::warn!(
            "the green run of deps gate `{}` could not be recorded: {e}",
            gate.id
        );
    }
}
