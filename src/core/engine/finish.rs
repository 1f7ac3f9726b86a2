//! The last stage of a run: the report put together from the gates' results, then — once the
//! caller is done with it — the run recorded in the branch's baseline state and its report written
//! into the run's folder, both once (`Run::finish`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::RunRequest;
use super::shard::ShardPlan;
use super::skips::errored;
use crate::core::cache::ResultCache;
use crate::core::cache::remote::Session;
use crate::core::config::{Config, Gate, GateKind};
use crate::core::report::{GateResult, GateStatus, Report, ScopeInfo, config_name, contents};
use crate::core::scope::baseline::{RunOutcome, StateError, StateStore, advance};
use crate::core::scope::{BaselineTarget, ResolvedScope};
use crate::core::workspace::run_logs::{RunDir, create_run_dir, name_report, write_report};

/// A run whose gates are done: its report, not yet recorded nor written (a run that wraps the
/// engine's, fixers or the clean room, adds its part first).
#[must_use = "a run is recorded and its report written by `finish`"]
pub struct Run {
    report: Report,
    gates: Vec<Gate>,
    root: PathBuf,
    /// Where the run's state is recorded; `None`: it is not.
    state: Option<BaselineTarget>,
    /// The commit the scope's changes were taken from (`ResolvedScope::changed_since`).
    changed_since: Option<String>,
    /// Kept until the report is written: it holds the run folder's lock.
    _dir: Option<Arc<RunDir>>,
}

impl Run {
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// For a run that wraps the engine's (fixers, the clean room) to add its part.
    pub fn report_mut(&mut self) -> &mut Report {
        &mut self.report
    }

    /// The commit an `auto` or `branch` run's changes were taken from.
    pub fn changed_since(&self) -> Option<&str> {
        self.changed_since.as_deref()
    }

    /// The gates that ran, as configured.
    pub fn gates(&self) -> &[Gate] {
        &self.gates
    }

    /// Records the run in the branch's state (a green run moves the baseline to HEAD; otherwise
    /// the failed files are narrowed and extended) and writes the report.
    pub fn finish(mut self) -> Report {
        if let Some(target) = &self.state {
            let files = self.report.scope.files.clone();
            advance_state(&self.root, target, &self.gates, &files, &mut self.report);
        }
        write_report(&mut self.report);
        self.report
    }
}

/// What the earlier stages leave for the report.
pub(super) struct Outcome<'a> {
    pub selected: Vec<&'a Gate>,
    pub results: Vec<Option<GateResult>>,
    /// The files some gate checked, sorted.
    pub checked: Vec<String>,
    pub shard: Option<ShardPlan>,
    pub run_dir: Option<Arc<RunDir>>,
    pub remote: Option<Session>,
    pub started: Instant,
}

/// Puts the report together. Nothing is recorded or written yet.
pub(super) fn assemble(
    config: &Config,
    request: &RunRequest,
    scope: ResolvedScope,
    outcome: Outcome,
) -> Run {
    let selected = outcome.selected;
    let gates: Vec<GateResult> = outcome
        .results
        .into_iter()
        .zip(&selected)
        .map(|(r, g)| {
            r.unwrap_or_else(|| errored(g, format!("{} stopped unexpectedly; see the log", g.name)))
        })
        .collect();
    let shard = outcome.shard;
    // Said before any other note: it changes what every other result means.
    let mut note = deps_failure_note(&selected, &gates);
    if let Some(other) = scope.note {
        append_note(&mut note, other);
    }
    for g in &gates {
        for said in &g.notes {
            append_note(&mut note, format!("gate `{}`: {said}", g.id));
        }
    }
    let info = ScopeInfo {
        mode: scope.mode.to_string(),
        files_in_scope: shard.as_ref().map_or(scope.files.len(), ShardPlan::len),
        files_checked: outcome.checked.len(),
        baseline_sha: scope.baseline_sha,
        note,
        files: outcome.checked,
    };
    // A run the cache answered alone gets its folder now: every run leaves its report there.
    let run_dir = outcome
        .run_dir
        .or_else(|| match create_run_dir(&request.root) {
            Ok(dir) => Some(Arc::new(dir)),
            Err(e) => {
                tracing::warn!("no folder for the run's report: {e}");
                None
            }
        });
    let log_dir = run_dir.as_ref().map(|dir| dir.display.clone());
    let elapsed = outcome.started.elapsed().as_millis() as u64;
    let mut report = Report::new(info, gates, elapsed, log_dir);
    contents::record(&mut report, &request.root);
    report.config = config_name(&config.source, &request.root);
    report.shard = shard.as_ref().map(|plan| plan.info(config, &request.root));
    if let Some(warning) = request.cache.as_deref().and_then(ResultCache::warning) {
        add_note(&mut report, warning.to_string());
    }
    report
        .warnings
        .extend(outcome.remote.and_then(Session::into_warning));
    if let Some(dir) = &run_dir {
        name_report(dir, &mut report);
    }
    // One shard is not the whole scope: it neither moves the baseline nor narrows failed files.
    let state = scope
        .baseline
        .filter(|_| request.update_state && shard.is_none());
    Run {
        report,
        gates: selected.into_iter().cloned().collect(),
        root: request.root.clone(),
        state,
        changed_since: scope.changed_since,
        _dir: run_dir,
    }
}

/// The report's note when a deps gate failed or could not run while other gates ran after it.
fn deps_failure_note(gates: &[&Gate], results: &[GateResult]) -> Option<String> {
    let broken: Vec<&str> = gates
        .iter()
        .zip(results)
        .filter(|(g, r)| {
            g.kind == GateKind::Deps && matches!(r.status, GateStatus::Failed | GateStatus::Error)
        })
        .map(|(g, _)| g.id.as_str())
        .collect();
    let others_ran = gates
        .iter()
        .zip(results)
        .any(|(g, r)| g.kind != GateKind::Deps && r.status != GateStatus::Skipped);
    if broken.is_empty() || !others_ran {
        return None;
    }
    let named = broken
        .iter()
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ");
    Some(format!(
        "deps gate {named} did not pass, so the other gates ran without their dependencies installed: their findings (and passes) may come from that, not from the code. Fix {named} first"
    ))
}

/// Records the run in `.qgates/state.json`: a green run moves the baseline to HEAD; otherwise
/// the branch's failed files are narrowed and extended (see `baseline::advance`).
fn advance_state(
    root: &Path,
    target: &BaselineTarget,
    gates: &[Gate],
    files: &[String],
    report: &mut Report,
) {
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
        state.branches.insert(target.branch.clone(), next);
        baseline
    });
    let note = match saved {
        Ok((baseline, warning)) => {
            if report.overall_pass {
                report.scope.baseline_sha = baseline;
            }
            warning
        }
        // Said as it is: the same warning as when the scope read the state.
        Err(StateError::Tracked(warning)) => Some(warning),
        Err(e) => Some(format!("the baseline state could not be saved ({e})")),
    };
    if let Some(note) = note {
        add_note(report, note);
    }
}

/// Adds a sentence to the report's note (its warnings), unless the note says it already.
fn add_note(report: &mut Report, note: String) {
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
