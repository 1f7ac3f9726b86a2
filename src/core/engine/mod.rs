//! One run from start to end: resolve the scope, pick each gate's files, run the gates in
//! parallel, and build the report. This is the API the CLI, the language server and the agent
//! server share.

pub mod exclusive;
pub mod kinds;
pub mod lookup;
pub mod order;
pub mod shard;
pub mod skips;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::core::cache::deps as deps_record;
use crate::core::cache::remote::Session;
use crate::core::cache::{KeyMaker, ResultCache};
use crate::core::config::{Config, Gate, GateKind, Trigger};
use crate::core::engine::kinds::KindFilter;
use crate::core::engine::lookup::{
    Lookup, from_cache, look_up, look_up_whole, merge_with_cache, read_shared,
};
use crate::core::engine::order::{Pending, deps_failure_note, run_in_order};
use crate::core::engine::shard::{GateShare, Shard, ShardPlan};
use crate::core::engine::skips::{errored, skip_reason, skipped, start_never_apply};
use crate::core::report::{GateResult, GateStatus, Report, ScopeInfo, config_name};
use crate::core::runner::{GateJob, folder_problem, run_gate};
use crate::core::scope::baseline::{RunOutcome, StateStore, advance};
use crate::core::scope::changed_lines::DiffBase;
use crate::core::scope::{BaselineTarget, ResolvedScope, ScopeError, ScopeRequest, resolve};
use crate::core::workspace::run_logs::{RunDir, create_run_dir, resave_report, save_report};

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
    /// Files added to whatever the scope resolves to (the editor's saved file on top of `auto`).
    pub also: Vec<PathBuf>,
    /// Where to report each gate's start and end while the run goes on (the editor's progress).
    pub events: Option<tokio::sync::mpsc::UnboundedSender<RunEvent>>,
    /// Which kinds of gates run; the others are reported as skipped.
    pub kinds: KindFilter,
    /// Check only this shard of the scope's files (`core::engine::shard`); never advances the state.
    pub shard: Option<Shard>,
}

impl RunRequest {
    /// A request with the defaults of an interactive run: every gate, no cache, state advanced.
    pub fn new(root: PathBuf, scope: ScopeRequest, trigger: Trigger) -> Self {
        RunRequest {
            root,
            scope,
            gates: None,
            trigger,
            cache: None,
            update_state: true,
            also: Vec::new(),
            events: None,
            kinds: KindFilter::All,
            shard: None,
        }
    }
}

/// Progress of a run, gate by gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEvent {
    /// The gates that will run (not skipped, not answered by the cache), in config order.
    Started {
        gates: Vec<String>,
    },
    GateStarted {
        id: String,
        name: String,
    },
    GateFinished {
        id: String,
        status: GateStatus,
    },
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
    select_gates(config, request.gates.as_deref())?;
    // A walk of the project, or git's status: off the runtime's threads.
    let (root, cfg, req) = (request.root.clone(), config.clone(), request.scope.clone());
    let scope = tokio::task::spawn_blocking(move || resolve(&root, &cfg, &req))
        .await
        .expect("resolving the scope panicked")?;
    tracing::debug!(
        "scope {}: {} files in {} ms",
        scope.mode,
        scope.files.len(),
        started.elapsed().as_millis()
    );
    run_scope(config, request, scope, started).await
}

/// Runs over a scope the caller resolved itself, as `run` does with the one it resolves
/// (`request.scope` is not read; `request.also` is added). The language server keeps a folder's
/// last `auto` scope, so a save starts its gates at once while the next scope is resolved.
pub async fn run_resolved(
    config: &Config,
    request: &RunRequest,
    scope: ResolvedScope,
) -> Result<Report, RunError> {
    run_scope(config, request, scope, Instant::now()).await
}

async fn run_scope(
    config: &Config,
    request: &RunRequest,
    mut scope: ResolvedScope,
    started: Instant,
) -> Result<Report, RunError> {
    let selected = select_gates(config, request.gates.as_deref())?;
    add_files(&request.root, &request.also, &mut scope.files);
    let keys = KeyMaker::new(&request.root, config).with_stamps(request.cache.as_deref());
    // A file deleted since the scope was read (a branch switch, a formatter, the user) is not
    // handed to a tool that would fail on it; the report says so. Project scopes too: the
    // language server reuses the walk of a folder outside git from an earlier run. The stat
    // is kept for the file's key.
    let before = scope.files.len();
    let cached: Vec<&Gate> = selected
        .iter()
        .filter(|g| request.cache.is_some() && g.pass_files && KeyMaker::caches(g))
        .copied()
        .collect();
    let t = Instant::now();
    keys.prepare(&scope.files, &|f| cached.iter().any(|g| g.applies_to(f)));
    tracing::debug!(
        "{} files' stats and identities in {} ms",
        scope.files.len(),
        t.elapsed().as_millis()
    );
    scope.files.retain(|f| keys.is_file(f));
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
    let shard = request
        .shard
        .map(|s| ShardPlan::new(&request.root, s, &scope.files));
    // Made when the first gate starts a process; a run the cache answers alone makes it at the
    // end, for its report only.
    let mut run_dir: Option<Arc<RunDir>> = None;
    let root: Arc<Path> = Arc::from(request.root.as_path());
    let mut results: Vec<Option<GateResult>> = vec![None; selected.len()];
    let mut checked = std::collections::HashSet::new();
    let mut planned = Vec::new();
    let mut jobs = Vec::new();
    for (i, gate) in selected.iter().enumerate() {
        if let Some(reason) = request.kinds.skip_reason(gate.kind) {
            results[i] = Some(skipped(gate, reason));
            continue;
        }
        // A folder the gate names that is missing is a mistake to show, not a reason to skip
        // it (a `cwd` that is not there holds none of the gate's files).
        if gate.runs_on(request.trigger)
            && let Some(problem) = folder_problem(gate, &request.root)
        {
            results[i] = Some(errored(gate, problem));
            continue;
        }
        let files: Vec<&String> = scope.files.iter().filter(|f| gate.applies_to(f)).collect();
        if let Some(reason) = skip_reason(gate, request.trigger, &files) {
            results[i] = Some(skipped(gate, reason));
            continue;
        }
        // A deps gate is not answered by the result cache (what it installs is not in its
        // output) but skipped while its lock files are as at its last green run.
        let deps = gate.kind == GateKind::Deps;
        let deps_key = request
            .cache
            .as_ref()
            .filter(|_| deps)
            .and_then(|_| deps_record::key(&keys, gate));
        if let Some(reason) = deps_key
            .as_deref()
            .and_then(|key| deps_record::unchanged_reason(&request.root, gate, key))
        {
            results[i] = Some(skipped(gate, reason));
            continue;
        }
        // A shard counts and checks only its own files; a gate without file arguments runs in
        // one shard over the whole scope's.
        checked.extend(
            files
                .iter()
                .copied()
                .filter(|f| shard.as_ref().is_none_or(|p| p.holds(f))),
        );
        let (files, in_scope) = match shard.as_ref().map(|p| p.share(gate, &files)) {
            None => {
                let n = files.len();
                (files, n)
            }
            Some(GateShare::Run { files, counted }) => {
                let n = if counted { files.len() } else { 0 };
                (files, n)
            }
            Some(GateShare::Elsewhere(reason)) => {
                results[i] = Some(skipped(gate, reason));
                continue;
            }
        };
        planned.push((i, *gate, files, in_scope, deps_key));
    }
    // Each file's key is made once: the local cache answers first, the shared one what it
    // misses, before any gate starts.
    let mut lookups: Vec<Lookup> = planned
        .iter()
        .map(|(_, gate, files, ..)| {
            let cache = request
                .cache
                .as_deref()
                .filter(|_| gate.kind != GateKind::Deps);
            if gate.pass_files {
                look_up(cache, &keys, gate, files)
            } else {
                look_up_whole(cache, &keys, gate)
            }
        })
        .collect();
    let mut remote = request
        .cache
        .as_ref()
        .and_then(|cache| Session::start(cache, &config.cache));
    if let Some(remote) = &mut remote {
        let gates = planned.iter().map(|(_, gate, ..)| *gate);
        read_shared(remote, gates.zip(&mut lookups).collect()).await;
    }
    for ((i, gate, files, in_scope, deps_key), lookup) in planned.into_iter().zip(lookups) {
        if lookup.misses.is_empty() {
            let mut result = from_cache(gate, lookup);
            if !gate.pass_files {
                result.files_checked = in_scope;
                result.cached_files = in_scope;
            }
            results[i] = Some(result);
            continue;
        }
        let run_dir = match &run_dir {
            Some(dir) => dir.clone(),
            None => {
                let dir =
                    create_run_dir(&request.root).map_err(|e| RunError::LogDir(e.to_string()))?;
                run_dir.insert(Arc::new(dir)).clone()
            }
        };
        let job = GateJob {
            gate: Arc::new((*gate).clone()),
            root: root.clone(),
            files: if gate.pass_files {
                lookup.files_to_run()
            } else {
                Vec::new()
            },
            run_dir,
            diff: gate.reads_coverage().then(|| {
                Arc::new(DiffBase {
                    mode: scope.mode,
                    commit: scope.changed_since.clone(),
                    files: files.iter().map(|f| (*f).clone()).collect(),
                })
            }),
        };
        jobs.push((i, job, lookup, in_scope, deps_key));
    }
    // A save checks only what changed: a walk of the whole project on every save would cost
    // what a `git status` of it costs. Runs asked for by a command or CI say it.
    let never_applies = (request.trigger != Trigger::Save)
        .then(|| start_never_apply(config, &request.root, &scope, &selected, &results))
        .flatten();
    let files_checked = checked.len();
    let mut checked_files: Vec<String> = checked.into_iter().cloned().collect();
    checked_files.sort_unstable();
    if let Some(tx) = &request.events {
        let gates = jobs
            .iter()
            .map(|(_, job, ..)| job.gate.id.clone())
            .collect();
        let _ = tx.send(RunEvent::Started { gates });
    }
    let pending = jobs
        .into_iter()
        .map(|(index, job, lookup, in_scope, deps_key)| Pending {
            index,
            gate: job.gate.clone(),
            work: (job, lookup, in_scope, deps_key),
        })
        .collect();
    let finished = run_in_order(
        &request.root,
        pending,
        |(job, lookup, in_scope, deps_key)| {
            let cache = request
                .cache
                .clone()
                .filter(|_| job.gate.kind != GateKind::Deps);
            let events = request.events.clone();
            async move {
                let send = |e: RunEvent| events.as_ref().map(|tx| tx.send(e));
                let (gate, root) = (job.gate.clone(), job.root.clone());
                send(RunEvent::GateStarted {
                    id: gate.id.clone(),
                    name: gate.name.clone(),
                });
                let mut fresh = run_gate(job).await;
                // A gate without file arguments covered its files in scope, as when the cache
                // answers for it.
                if !gate.pass_files && fresh.status != GateStatus::Skipped {
                    fresh.files_checked = in_scope;
                }
                let result = merge_with_cache(&gate, fresh, lookup, cache.as_deref());
                if let Some(key) = &deps_key {
                    deps_record::record_if_green(&root, &gate, key, &result);
                }
                send(RunEvent::GateFinished {
                    id: gate.id.clone(),
                    status: result.status,
                });
                result
            }
        },
    )
    .await;
    for (i, result) in finished {
        results[i] = Some(result);
    }
    if let Some(remote) = &mut remote {
        remote.write_back().await;
    }
    if let Some(check) = never_applies {
        for (i, reason) in check.await.unwrap_or_default() {
            if let Some(r) = &mut results[i] {
                r.skip_reason = Some(reason);
            }
        }
    }
    let gates: Vec<GateResult> = results
        .into_iter()
        .zip(&selected)
        .map(|(r, g)| {
            r.unwrap_or_else(|| errored(g, format!("{} stopped unexpectedly; see the log", g.name)))
        })
        .collect();
    let info = ScopeInfo {
        mode: scope.mode.to_string(),
        files_in_scope: shard.as_ref().map_or(scope.files.len(), ShardPlan::len),
        files_checked,
        baseline_sha: scope.baseline_sha,
        note: scope.note,
        files: checked_files,
    };
    // A run the cache answered alone gets its folder now: every run leaves its report there.
    let run_dir = run_dir.or_else(|| match create_run_dir(&request.root) {
        Ok(dir) => Some(Arc::new(dir)),
        Err(e) => {
            tracing::warn!("no folder for the run's report: {e}");
            None
        }
    });
    let log_dir = run_dir.as_ref().map(|dir| dir.display.clone());
    // Said before any other note: it changes what every other result means.
    let deps_note = deps_failure_note(&selected, &gates);
    let mut report = Report::new(info, gates, started.elapsed().as_millis() as u64, log_dir);
    report.scope.note = match (deps_note, report.scope.note.take()) {
        (Some(deps), Some(other)) => Some(format!("{deps}; {other}")),
        (deps, other) => deps.or(other),
    };
    report.config = config_name(&config.source, &request.root);
    report.shard = shard.as_ref().map(|plan| plan.info(config, &request.root));
    if let Some(warning) = request.cache.as_deref().and_then(ResultCache::warning) {
        add_note(&mut report, warning.to_string());
    }
    report
        .warnings
        .extend(remote.and_then(Session::into_warning));
    // One shard is not the whole scope: it neither moves the baseline nor narrows the failed files.
    if request.update_state
        && shard.is_none()
        && let Some(target) = &scope.baseline
    {
        advance_state(&request.root, target, &selected, &scope.files, &mut report);
    }
    if let Some(dir) = &run_dir {
        save_report(dir, &mut report);
    }
    Ok(report)
}

/// Records a finished run in the branch's baseline state, as a run with `update_state` over a
/// scope whose baseline entry is `target` does at its end: for a run made with `update_state`
/// off over a scope resolved earlier, once the caller knows that scope was still the current one.
/// Returns whether the branch's entry changed (a moved baseline or other failed files change
/// the next `auto` scope).
pub fn record_state(
    root: &Path,
    config: &Config,
    gates: Option<&[String]>,
    target: &BaselineTarget,
    report: &mut Report,
) -> Result<bool, RunError> {
    let selected = select_gates(config, gates)?;
    let files = report.scope.files.clone();
    let shown = (report.scope.baseline_sha.clone(), report.scope.note.clone());
    let changed = advance_state(root, target, &selected, &files, report);
    // The state can add a note or a baseline to the report: its file says what the answers say.
    if (&report.scope.baseline_sha, &report.scope.note) != (&shown.0, &shown.1) {
        resave_report(report);
    }
    Ok(changed)
}

/// Adds the extra files (absolute, or relative to the root) that exist inside the root.
fn add_files(root: &Path, also: &[PathBuf], files: &mut Vec<String>) {
    if also.is_empty() {
        return;
    }
    for p in also {
        let abs = root.join(p);
        if abs.is_file()
            && let Some(rel) = crate::core::workspace::paths::relative_posix(root, &abs)
        {
            files.push(rel);
        }
    }
    files.sort_unstable();
    files.dedup();
}

/// Records the run in `.qgates/state.json`: a green run moves the baseline to HEAD; otherwise
/// the branch's failed files are narrowed and extended (see `baseline::advance`).
fn advance_state(
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
        Err(crate::core::scope::baseline::StateError::Tracked(warning)) => (Some(warning), false),
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
fn add_note(report: &mut Report, note: String) {
    if report
        .scope
        .note
        .as_deref()
        .is_some_and(|n| n.contains(&note))
    {
        return;
    }
    report.scope.note = Some(match report.scope.note.take() {
        Some(prev) => format!("{prev}; {note}"),
        None => note,
    });
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
