//! One run from start to end: resolve the scope, pick each gate's files, run the gates in
//! parallel, and build the report. This is the API the CLI, the language server and the agent
//! server share.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::core::artifacts::{RunDir, create_run_dir};
use crate::core::cache::{KeyMaker, ResultCache};
use crate::core::config::Gate;
use crate::core::config::{Config, Trigger};
use crate::core::report::{GateResult, GateStatus, Report, ScopeInfo};
use crate::core::runner::{GateJob, render_fix_hint, run_gate};
use crate::core::scope::{BaselineTarget, ScopeError, ScopeRequest, resolve};
use crate::core::state::{RunOutcome, StateStore, advance};
use std::collections::HashMap;

/// What to run.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// The workspace root (absolute).
    pub root: PathBuf,
    pub scope: ScopeRequest,
    /// Only these gates (ids); `None`: every active gate.
    pub gates: Option<Vec<String>>,
    /// What started the run; gates whose `run_on` lacks it are skipped.
    pub trigger: Trigger,
    /// Reuse and record results per file (`None`: always run).
    pub cache: Option<Arc<ResultCache>>,
    /// Advance the branch's baseline state after an `auto` or `branch` run (`--no-state`: false).
    pub update_state: bool,
}

/// A run that could not start: the caller asked for something impossible.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    #[error("unknown gate `{unknown}`. Active gates: {known}.")]
    UnknownGate { unknown: String, known: String },
    #[error(transparent)]
    Scope(#[from] ScopeError),
    #[error("cannot create the run's log folder: {0}")]
    LogDir(String),
}

/// Runs the gates and reports. Gates run in parallel; the report lists them in config order.
pub async fn run(config: &Config, request: &RunRequest) -> Result<Report, RunError> {
    let started = Instant::now();
    let selected = select_gates(config, request.gates.as_deref())?;
    let mut scope = resolve(&request.root, config, &request.scope)?;
    // A file deleted since the scope was read (a branch switch, a formatter, the user) is not
    // handed to a tool that would fail on it; the report says so.
    let before = scope.files.len();
    scope.files.retain(|f| request.root.join(f).is_file());
    let vanished = before - scope.files.len();
    if vanished > 0 {
        let note = format!(
            "{vanished} file{} vanished before the gates ran and {} skipped",
            if vanished == 1 { "" } else { "s" },
            if vanished == 1 { "was" } else { "were" }
        );
        scope.note = Some(match scope.note.take() {
            Some(prev) => format!("{prev}; {note}"),
            None => note,
        });
    }
    let run_dir =
        Arc::new(create_run_dir(&request.root).map_err(|e| RunError::LogDir(e.to_string()))?);
    let root: Arc<Path> = Arc::from(request.root.as_path());

    let mut results: Vec<Option<GateResult>> = vec![None; selected.len()];
    let mut tasks = tokio::task::JoinSet::new();
    let mut checked = std::collections::HashSet::new();
    let keys = KeyMaker::new(&request.root, config);
    for (i, gate) in selected.iter().enumerate() {
        let files: Vec<&String> = scope.files.iter().filter(|f| gate.applies_to(f)).collect();
        if let Some(reason) = skip_reason(gate, request.trigger, &files) {
            results[i] = Some(skipped(gate, reason));
            continue;
        }
        checked.extend(files.iter().copied());
        let lookup = look_up(request.cache.as_deref(), &keys, gate, &files);
        let gate = Arc::new((*gate).clone());
        if gate.pass_files && lookup.misses.is_empty() {
            results[i] = Some(from_cache(&gate, lookup));
            continue;
        }
        let job = GateJob {
            gate: gate.clone(),
            root: root.clone(),
            files: if gate.pass_files {
                lookup.misses.clone()
            } else {
                Vec::new()
            },
            run_dir: run_dir.clone(),
        };
        let cache = request.cache.clone();
        tasks.spawn(async move {
            let fresh = run_gate(job).await;
            (i, merge_with_cache(&gate, fresh, lookup, cache.as_deref()))
        });
    }
    let files_checked = checked.len();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((i, r)) => results[i] = Some(r),
            Err(e) => tracing::error!("a gate task failed: {e}"),
        }
    }
    let gates: Vec<GateResult> = results
        .into_iter()
        .zip(&selected)
        .map(|(r, g)| {
            r.unwrap_or_else(|| {
                let mut r = skipped(g, String::new());
                r.status = GateStatus::Error;
                r.skip_reason = None;
                r.error = Some(format!("{} stopped unexpectedly; see the log", g.name));
                r
            })
        })
        .collect();
    let any_ran = gates.iter().any(|g| g.status != GateStatus::Skipped);
    let info = ScopeInfo {
        mode: scope.mode.to_string(),
        files_in_scope: scope.files.len(),
        files_checked,
        baseline_sha: scope.baseline_sha,
        note: scope.note,
    };
    let log_dir = any_ran.then(|| run_dir.display.clone());
    if !any_ran {
        remove_empty_run_dir(&run_dir);
    }
    let mut report = Report::new(info, gates, started.elapsed().as_millis() as u64, log_dir);
    if request.update_state
        && let Some(target) = &scope.baseline
    {
        advance_state(&request.root, target, &selected, &scope.files, &mut report);
    }
    Ok(report)
}

/// Records the run in `.qgates/state.json`: a green run moves the baseline to HEAD; otherwise
/// the branch's failed files are narrowed and extended (see `state::advance`).
fn advance_state(
    root: &Path,
    target: &BaselineTarget,
    gates: &[&Gate],
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
            let named = result
                .violations
                .iter()
                .any(|v| v.file.as_deref() == Some(file.as_str()));
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
        Err(e) => Some(format!("the baseline state could not be saved ({e})")),
    };
    if let Some(note) = note {
        report.scope.note = Some(match report.scope.note.take() {
            Some(prev) => format!("{prev}; {note}"),
            None => note,
        });
    }
}

/// A gate's files split into those the cache answers and those that must run.
#[derive(Debug, Default)]
struct Lookup {
    hits: Vec<(String, Vec<crate::core::violation::Violation>)>,
    misses: Vec<String>,
    /// The keys of the misses, to record their fresh results under.
    keys: HashMap<String, String>,
}

fn look_up(cache: Option<&ResultCache>, keys: &KeyMaker, gate: &Gate, files: &[&String]) -> Lookup {
    let mut lookup = Lookup::default();
    for f in files {
        let key = cache.and_then(|_| keys.key(gate, f));
        match (cache, key) {
            (Some(cache), Some(key)) => match cache.get(&gate.id, f, &key) {
                Some(mut v) => {
                    for x in &mut v {
                        x.gate.clone_from(&gate.id);
                    }
                    lookup.hits.push(((*f).clone(), v));
                }
                None => {
                    lookup.keys.insert((*f).clone(), key);
                    lookup.misses.push((*f).clone());
                }
            },
            _ => lookup.misses.push((*f).clone()),
        }
    }
    lookup
}

/// A gate answered entirely from the cache: no process runs.
fn from_cache(gate: &Gate, lookup: Lookup) -> GateResult {
    let fresh = GateResult {
        status: GateStatus::Passed,
        skip_reason: None,
        ..skipped(gate, String::new())
    };
    merge_with_cache(gate, fresh, lookup, None)
}

/// Adds the cached files' violations to a fresh result and records the fresh files' results.
fn merge_with_cache(
    gate: &Gate,
    mut result: GateResult,
    lookup: Lookup,
    cache: Option<&ResultCache>,
) -> GateResult {
    if let Some(cache) = cache
        && matches!(result.status, GateStatus::Passed | GateStatus::Failed)
    {
        // Only when every violation belongs to a file this run checked: a file-less finding or
        // one about another file cannot be replayed per file, so such a run is not recorded.
        let per_file = result
            .violations
            .iter()
            .all(|v| v.file.as_ref().is_some_and(|f| lookup.keys.contains_key(f)));
        if per_file {
            let mut by_file: HashMap<&str, Vec<crate::core::violation::Violation>> = HashMap::new();
            for v in &result.violations {
                if let Some(f) = &v.file {
                    by_file.entry(f.as_str()).or_default().push(v.clone());
                }
            }
            for (file, key) in &lookup.keys {
                cache.put(
                    &gate.id,
                    file,
                    key.clone(),
                    by_file.remove(file.as_str()).unwrap_or_default(),
                );
            }
        }
    }
    if lookup.hits.is_empty() {
        return result;
    }
    result.cached_files = lookup.hits.len();
    result.files_checked += lookup.hits.len();
    for (_, v) in lookup.hits {
        result.violations.extend(v);
    }
    result.violations.sort_by(|a, b| {
        (&a.file, a.line, a.column, &a.code).cmp(&(&b.file, b.line, b.column, &b.code))
    });
    if result.status == GateStatus::Passed && !result.violations.is_empty() {
        result.status = GateStatus::Failed;
    }
    if result.status == GateStatus::Failed {
        let checked: Vec<String> = Vec::new();
        result.fix_hint = gate
            .fix_hint
            .as_ref()
            .map(|h| render_fix_hint(h, &result.violations, &checked));
    }
    result
}

pub(crate) fn select_gates<'c>(
    config: &'c Config,
    only: Option<&[String]>,
) -> Result<Vec<&'c crate::core::config::Gate>, RunError> {
    let Some(only) = only else {
        return Ok(config.gates.iter().collect());
    };
    for id in only {
        if config.gate(id).is_none() {
            return Err(RunError::UnknownGate {
                unknown: id.clone(),
                known: config
                    .gates
                    .iter()
                    .map(|g| g.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    Ok(config
        .gates
        .iter()
        .filter(|g| only.contains(&g.id))
        .collect())
}

fn skip_reason(
    gate: &crate::core::config::Gate,
    trigger: Trigger,
    files: &[&String],
) -> Option<String> {
    if !gate.runs_on(trigger) {
        return Some(format!("not run on {} (run_on)", trigger.as_str()));
    }
    if gate.pass_files && files.is_empty() {
        return Some("no matching files".to_string());
    }
    None
}

fn skipped(gate: &crate::core::config::Gate, reason: String) -> GateResult {
    GateResult {
        id: gate.id.clone(),
        name: gate.name.clone(),
        status: GateStatus::Skipped,
        skip_reason: Some(reason),
        error: None,
        allow_fail: gate.allow_fail,
        violations: Vec::new(),
        fix_hint: None,
        files_checked: 0,
        outside_root: 0,
        exit_code: None,
        log: None,
        duration_ms: 0,
        cached_files: 0,
    }
}

fn remove_empty_run_dir(dir: &RunDir) {
    let _ = std::fs::remove_dir(&dir.path);
}
