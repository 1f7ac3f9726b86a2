//! What makes a running daemon the right one: the gate's definition, its folder and
//! environment, the programs (a new tool version is a new file), the daemon's commands, and the
//! contents of the tool's configuration files (`cache_inputs`). Any change starts a new daemon.

use std::path::Path;

use serde::Serialize;

use crate::core::cache::hash::stable_hash;
use crate::core::config::Gate;
use crate::core::platform;

/// A program's path and its file's times and size (`platform::file_identity`).
type ProgramFile<'a> = (&'a Path, Option<(i64, i64, i64, i64, u64)>);

#[derive(Serialize)]
struct Identity<'a> {
    definition: &'a str,
    cwd: &'a Path,
    programs: Vec<ProgramFile<'a>>,
    commands: &'a [&'a Vec<String>],
    inputs: Vec<(&'a str, Option<String>)>,
}

pub(super) fn of(gate: &Gate, cwd: &Path, programs: &[&Path], commands: &[&Vec<String>]) -> String {
    let identity = Identity {
        definition: &gate.definition_hash,
        cwd,
        programs: (programs.iter())
            .map(|p| {
                let meta = std::fs::metadata(p).ok();
                (*p, meta.as_ref().map(platform::file_identity))
            })
            .collect(),
        commands,
        inputs: (gate.cache_inputs.iter())
            .map(|f| {
                let text = std::fs::read(cwd.join(f)).ok();
                (f.as_str(), text.map(|t| stable_hash(&t)))
            })
            .collect(),
    };
    stable_hash(&serde_json::to_vec(&identity).unwrap_or_default())
}
