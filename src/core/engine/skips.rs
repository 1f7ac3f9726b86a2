//! Why a gate did not run: its `run_on` leaves out the trigger, or no file of the run is one of
//! its files. The second is what every change that touches none of its files looks like, and
//! also what a gate whose `files` match nothing at all looks like: a typo (`*.rs` for `*.rst`)
//! would pass for "nothing changed" forever. So a gate skipped for its files is checked against
//! the whole project, and one that no file of the project matches is said to never apply.

use std::path::Path;

use crate::core::config::{Config, ConfigSource, Gate, Trigger};
use crate::core::report::{GateResult, GateStatus, NEVER_APPLIES};
use crate::core::runner::fresh_result;
use crate::core::scope::{ResolvedScope, project_files};

/// The skip reason of a gate none of whose files is in the run.
pub const NO_MATCHING_FILES: &str = "no matching files";

/// Why `gate` does not run for this trigger and these of its files; `None`: it runs.
pub fn skip_reason(gate: &Gate, trigger: Trigger, files: &[&String]) -> Option<String> {
    if !gate.runs_on(trigger) {
        return Some(format!("not run on {} (run_on)", trigger.as_str()));
    }
    // A gate without file arguments checks the whole project, but only when one of its files
    // changed: otherwise nothing it could report is in scope.
    if files.is_empty() {
        return Some(NO_MATCHING_FILES.to_string());
    }
    None
}

/// The result of a gate that could not run, with what went wrong.
pub fn errored(gate: &Gate, error: String) -> GateResult {
    GateResult {
        status: GateStatus::Error,
        error: Some(error),
        ..fresh_result(gate, 0)
    }
}

pub fn skipped(gate: &Gate, reason: String) -> GateResult {
    GateResult {
        status: GateStatus::Skipped,
        skip_reason: Some(reason),
        ..fresh_result(gate, 0)
    }
}

/// Whether the gate behind `result` should be checked against the whole project: it was
/// skipped for its files, under a configuration a person wrote (the embedded default's gates
/// are not theirs to fix).
pub fn may_never_apply(config: &Config, result: &GateResult) -> bool {
    matches!(config.source, ConfigSource::File(_))
        && result.status == GateStatus::Skipped
        && result.skip_reason.as_deref() == Some(NO_MATCHING_FILES)
}

/// Which of `gates` no file of the project matches (one walk of the project for all of them).
pub fn never_apply(root: &Path, config: &Config, gates: &[Gate]) -> Vec<bool> {
    let mut dead = vec![true; gates.len()];
    for file in project_files(root, config) {
        for (i, gate) in gates.iter().enumerate() {
            if dead[i] && gate.applies_to(&file) {
                dead[i] = false;
            }
        }
        if !dead.contains(&true) {
            break;
        }
    }
    dead
}

/// The skip reason of a gate that can never run: what it matches, and the keys to fix.
pub fn never_applies_reason(gate: &Gate, config: &Config) -> String {
    let mut matches = Vec::new();
    let mut keys = Vec::new();
    if let Some(files) = &gate.files {
        matches.push(format!("files ({})", files.patterns.join(", ")));
        keys.push("`files`");
    }
    if !gate.file_types.is_empty() {
        matches.push(format!("file_types ({})", gate.file_types.join(", ")));
        keys.push("`file_types`");
    }
    let mut what = if matches.is_empty() {
        "it".to_string()
    } else {
        format!("its {}", matches.join(" or "))
    };
    if let Some(scope) = &gate.scope {
        let mut globs = Vec::new();
        if !scope.include_patterns.is_empty() {
            globs.push(format!("include {}", scope.include_patterns.join(", ")));
        }
        if !scope.exclude_patterns.is_empty() {
            globs.push(format!("exclude {}", scope.exclude_patterns.join(", ")));
        }
        what.push_str(&format!(" within its scope ({})", globs.join("; ")));
        keys.push("`scope`");
    }
    if let Some(cwd) = gate.cwd.as_ref().filter(|_| gate.applies_only_in_cwd()) {
        what.push_str(&format!(" in its cwd ({})", cwd.display()));
        keys.push("`cwd`");
    }
    // The project is what `project_scope` takes: it may be the key that shuts the gate out.
    if config.project_scope.is_some() {
        keys.push("`project_scope`");
    }
    let fix = if keys.is_empty() {
        "Add the files it checks to the project, or remove the gate".to_string()
    } else {
        format!(
            "Fix {} in quality.yaml, or remove the gate",
            keys.join(" or ")
        )
    };
    format!("{NEVER_APPLIES}no file in the project matches {what}. {fix}.")
}

/// Starts checking the gates skipped for their files against the whole project (not on saves),
/// while the other gates run; it answers the new skip reason of each gate that never applies.
/// A `project` run already looked at every file of the project: nothing to walk again.
pub fn start_never_apply(
    config: &Config,
    root: &Path,
    scope: &ResolvedScope,
    selected: &[&Gate],
    results: &[Option<GateResult>],
) -> Option<tokio::task::JoinHandle<Vec<(usize, String)>>> {
    let candidates: Vec<(usize, Gate)> = results
        .iter()
        .enumerate()
        .filter(|(_, r)| r.as_ref().is_some_and(|r| may_never_apply(config, r)))
        .map(|(i, _)| (i, selected[i].clone()))
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let (root, config) = (root.to_path_buf(), config.clone());
    let must_walk = scope.mode != "project";
    Some(tokio::task::spawn_blocking(move || {
        let gates: Vec<Gate> = candidates.iter().map(|(_, g)| g.clone()).collect();
        let dead = if must_walk {
            never_apply(&root, &config, &gates)
        } else {
            vec![true; gates.len()]
        };
        candidates
            .into_iter()
            .zip(dead)
            .filter(|(_, dead)| *dead)
            .map(|((i, gate), _)| (i, never_applies_reason(&gate, &config)))
            .collect()
    }))
}
