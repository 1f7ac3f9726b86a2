//! Recording a run in the branch's baseline state (`.qgates/state.json`), and the report's note
//! about it.

use std::path::Path;

use crate::core::config::Gate;
use crate::core::report::{GateStatus, Report};
use crate::core::scope::BaselineTarget;
use crate::core::scope::baseline::{RunOutcome, StateError, StateStore, advance};

/// Records the run in `.qgates/state.json`: a green run moves the baseline to HEAD; otherwise
/// the branch's failed files are narrowed and extended (see `baseline::advance`).
pub(super) fn advance_state(
    root: &Path,
    target: &BaselineTarget,
    gates: &[&Gate],
    files: &[String],
    report: &mut Report,
) -> bool {
    let mut outcome = RunOutcome {
        green: report.overall_pass,
        ..Default::default()
    };
    for file in files {
        let mut checked = false;
        let mut clean = true;
        for (gate, result) in gates.iter().zip(&report.gates) {
            if result.status == GateStatus::Skipped || !gate.applies_to(file) {
                continue;
            }
            checked = true;
            // Findings below the gate's `fail_on` are shown but fail nothing, the file included.
            let named = result
                .violations
                .iter()
                .any(|v| v.file.as_deref() == Some(file.as_str()) && v.severity <= gate.fail_on);
            if result.status == GateStatus::Error || (named && !result.allow_fail) {
                clean = false;
            }
            if named && result.blocks() {
                outcome.failed_files.insert(file.clone());
            }
        }
        if checked && clean {
            outcome.passed_files.insert(file.clone());
        }
    }
    let store = StateStore::new(root);
    let saved = store.update(|state| {
        let prev = state
            .branches
            .get(&target.branch)
            .cloned()
            .unwrap_or_default();
        let next = advance(&prev, target.head.as_deref(), &outcome);
        let baseline = next.baseline_sha.clone();
        let changed = next != prev;
        state.branches.insert(target.branch.clone(), next);
        (baseline, changed)
    });
    let (note, changed) = match saved {
        Ok(((baseline, changed), warning)) => {
            if report.overall_pass {
                report.scope.baseline_sha = baseline;
            }
            (warning, changed)
        }
        // Said as it is: the same warning as when the scope read the state.
        Err(StateError::Tracked(warning)) => (Some(warning), false),
        Err(e) => (
            Some(format!("the baseline state could not be saved ({e})")),
            false,
        ),
    };
    if let Some(note) = note {
        add_note(report, note);
    }
    changed
}

/// Adds a sentence to the report's note (its warnings), unless the note says it already.
pub(super) fn add_note(report: &mut Report, note: String) {
    if !report
        .scope
        .note
        .as_deref()
        .is_some_and(|n| n.contains(&note))
    {
        append_note(&mut report.scope.note, note);
    }
}

/// Adds `note` after the sentences already in `notes`.
pub(crate) fn append_note(notes: &mut Option<String>, note: String) {
    *notes = Some(match notes.take() {
        Some(prev) => format!("{prev}; {note}"),
        None => note,
    });
}
