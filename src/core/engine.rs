//! One run from start to end: resolve the scope, pick each gate's files, run the gates in
//! parallel, and build the report. This is the API the CLI, the language server and the agent
//! server share.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::core::artifacts::{
    RunDir, RunDirs, file_system_now, log_names, new_run_dir, old_runs, remove_runs,
};
use crate::core::background::{MANY_FILES, blocking_if, spawn_low};
use crate::core::cache::{FileKey, KeyMaker, ResultCache};
use crate::core::config::Gate;
use crate::core::config::GateKind;
use crate::core::config::{Config, Trigger};
use crate::core::report::{GateResult, GateStatus, Report, ScopeInfo};
use crate::core::runner::{GateJob, render_fix_hint, run_gate};
use crate::core::scope::{BaselineTarget, ResolvedScope, ScopeError, ScopeRequest, resolve};
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
    /// Files added to whatever the scope resolves to (the editor's saved file on top of `auto`).
    pub also: Vec<PathBuf>,
    /// Where to report each gate's start and end while the run goes on (the editor's progress).
    pub events: Option<tokio::sync::mpsc::UnboundedSender<RunEvent>>,
    /// Where a run's log folder is set aside for the next run (a long-lived caller's; `None`:
    /// each run finds or makes its own).
    pub run_dirs: Option<Arc<RunDirs>>,
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
            run_dirs: None,
        }
    }
}

/// Progress of a run, gate by gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEvent {
    /// The gates that will run (not skipped, not answered by the cache), in starting order.
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
    // A walk of the project, or git's status: as much work as the stats of many files.
    let scope = blocking_if(true, || resolve(&request.root, config, &request.scope))?;
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
    // A file deleted since the scope was read (a branch switch, a formatter, the user) is not
    // handed to a tool that would fail on it; the report says so.
    let before = scope.files.len();
    // One stat per file: the existence check's metadata also serves the cache keys.
    let walked = (scope.mode == "project").then(|| scope.files.clone());
    let mut metadata = HashMap::with_capacity(scope.files.len());
    blocking_if(scope.files.len() >= MANY_FILES, || {
        scope
            .files
            .retain(|f| match std::fs::metadata(request.root.join(f)) {
                Ok(m) if m.is_file() => {
                    metadata.insert(f.clone(), m);
                    true
                }
                _ => false,
            });
    });
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
    // The file system's own "now", before any file is read: files older than it may have their
    // content hashes reused by stamp (see `stamp`).
    let reference = file_system_now(&request.root);
    // Made when the first gate starts a process: a run the cache answers alone needs no folder.
    let mut run_dir: Option<Arc<RunDir>> = None;
    let root: Arc<Path> = Arc::from(request.root.as_path());

    let mut results: Vec<Option<GateResult>> = vec![None; selected.len()];
    let mut tasks = tokio::task::JoinSet::new();
    let mut checked = std::collections::HashSet::new();
    let mut running: Vec<String> = Vec::new();
    // The keys owed to gate tasks (see `Lookup::unkeyed`).
    let mut deferred = Vec::new();
    // Gate tasks start their processes in `order`, each after the one before it said it started:
    // the runtime runs the task spawned last first (its LIFO slot), which put a quick gate's
    // start (and, on a busy core, a wait of milliseconds for the starting thread to run again)
    // ahead of the type checker's. The last gate's word then says that every gate started.
    let mut turn: Option<tokio::sync::oneshot::Receiver<()>> = None;
    let mut keys = KeyMaker::new(&request.root, config)
        .with_stamps(request.cache.as_deref())
        .with_reference_time(reference)
        .with_metadata(metadata);
    if let Some(files) = walked {
        keys = keys.with_project_files(files);
    }
    // The likely slowest gates start first, so the run ends closer to when they alone would.
    let mut order: Vec<usize> = (0..selected.len()).collect();
    order.sort_by_key(|&i| start_rank(selected[i].kind));
    // Whether a slow gate (a type checker, a test suite) is running: quicker ones yield to it.
    let mut slow_started = false;
    for i in order {
        let gate = selected[i];
        let files: Vec<&String> = scope.files.iter().filter(|f| gate.applies_to(f)).collect();
        if let Some(reason) = skip_reason(gate, request.trigger, &files) {
            results[i] = Some(skipped(gate, reason));
            continue;
        }
        checked.extend(files.iter().copied());
        let mut lookup = look_up(request.cache.as_deref(), &keys, gate, &files);
        let gate = Arc::new((*gate).clone());
        if gate.pass_files && lookup.misses.is_empty() {
            results[i] = Some(from_cache(&gate, lookup));
            continue;
        }
        let run_dir = match &run_dir {
            Some(dir) => dir.clone(),
            None => {
                let dir = match &request.run_dirs {
                    Some(dirs) => dirs.new_run_dir(&request.root),
                    None => new_run_dir(&request.root),
                };
                let dir = Arc::new(dir.map_err(|e| RunError::LogDir(e.to_string()))?);
                run_dir.insert(dir).clone()
            }
        };
        let job = GateJob {
            gate: gate.clone(),
            root: root.clone(),
            files: if gate.pass_files {
                lookup.misses.clone()
            } else {
                Vec::new()
            },
            run_dir,
            yields: slow_started && start_rank(gate.kind) > 0,
        };
        slow_started |= start_rank(gate.kind) == 0;
        let cache = request.cache.clone();
        let events = request.events.clone();
        running.push(gate.id.clone());
        let (next_tx, next_rx) = tokio::sync::oneshot::channel();
        let mut next = Some(next_tx);
        let my_turn = turn.replace(next_rx);
        let unkeyed = std::mem::take(&mut lookup.unkeyed);
        let later_keys = (!unkeyed.is_empty()).then(|| {
            let (keys_tx, keys_rx) = tokio::sync::oneshot::channel();
            deferred.push((gate.clone(), unkeyed, keys_tx));
            keys_rx
        });
        tasks.spawn(async move {
            if let Some(my_turn) = my_turn {
                // An error only means the gate before ended without starting: go on.
                let _ = my_turn.await;
            }
            let send = |e: RunEvent| events.as_ref().map(|tx| tx.send(e));
            send(RunEvent::GateStarted {
                id: gate.id.clone(),
                name: gate.name.clone(),
            });
            let run = run_gate(job);
            tokio::pin!(run);
            // Its first step starts the process; then the run's other work may begin.
            let fresh = std::future::poll_fn(|cx| {
                let polled = run.as_mut().poll(cx);
                if let Some(tx) = next.take() {
                    let _ = tx.send(());
                }
                polled
            })
            .await;
            if let Some(later) = later_keys
                && let Ok(later) = later.await
            {
                lookup.keys.extend(later);
            }
            let result = merge_with_cache(&gate, fresh, lookup, cache.as_deref());
            send(RunEvent::GateFinished {
                id: gate.id.clone(),
                status: result.status,
            });
            (i, result)
        });
    }
    let files_checked = checked.len();
    // The logs the next run will likely write: those of this run's gates (for a caller that
    // sets the next run's folder aside).
    let logs: Vec<String> = match &request.run_dirs {
        Some(_) => running.iter().flat_map(|id| log_names(id, 0)).collect(),
        None => Vec::new(),
    };
    if let Some(tx) = &request.events {
        let _ = tx.send(RunEvent::Started { gates: running });
    }
    // What the tools need not wait for is done while they run, not before they start: old run
    // folders go (only now and then: see `PRUNE_SLACK`) and the next run's folder is set aside,
    // at a lower priority (see `background`); the keys owed to gate tasks are worked out here.
    if let Some(last) = turn {
        // An error only means the last gate ended without starting.
        let _ = last.await;
    }
    let housekeeping = run_dir.as_ref().filter(|d| d.in_workspace).map(|dir| {
        let (root, current, dirs) = (request.root.clone(), dir.clone(), request.run_dirs.clone());
        spawn_low("qgates-runs", move || {
            remove_runs(old_runs(&root, &current));
            if let Some(dirs) = dirs {
                dirs.reserve_next(&root, &logs);
            }
        })
    });
    let owed: usize = deferred.iter().map(|(_, files, _)| files.len()).sum();
    blocking_if(owed >= MANY_FILES, || {
        for (gate, files, tx) in deferred {
            let _ = tx.send(
                files
                    .into_iter()
                    .filter_map(|f| keys.file_key(&gate, &f).map(|k| (f, k)))
                    .collect::<HashMap<_, _>>(),
            );
        }
    });
    let mut checked_files: Vec<String> = checked.into_iter().cloned().collect();
    checked_files.sort_unstable();
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
    if let Some(housekeeping) = housekeeping {
        let _ = housekeeping.await;
    }
    let info = ScopeInfo {
        mode: scope.mode.to_string(),
        files_in_scope: scope.files.len(),
        files_checked,
        baseline_sha: scope.baseline_sha,
        note: scope.note,
        files: checked_files,
    };
    let log_dir = run_dir.as_ref().map(|dir| dir.display.clone());
    let mut report = Report::new(info, gates, started.elapsed().as_millis() as u64, log_dir);
    if request.update_state
        && let Some(target) = &scope.baseline
    {
        advance_state(&request.root, target, &selected, &scope.files, &mut report);
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
    Ok(advance_state(root, target, &selected, &files, report))
}

/// Adds the extra files (absolute, or relative to the root) that exist inside the root.
fn add_files(root: &Path, also: &[PathBuf], files: &mut Vec<String>) {
    if also.is_empty() {
        return;
    }
    for p in also {
        let abs = root.join(p);
        if abs.is_file()
            && let Some(rel) = crate::core::scope::relative_posix(root, &abs)
        {
            files.push(rel);
        }
    }
    files.sort_unstable();
    files.dedup();
}

/// Records the run in `.qgates/state.json`: a green run moves the baseline to HEAD; otherwise
/// the branch's failed files are narrowed and extended (see `state::advance`).
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
        Err(e) => (
            Some(format!("the baseline state could not be saved ({e})")),
            false,
        ),
    };
    if let Some(note) = note {
        report.scope.note = Some(match report.scope.note.take() {
            Some(prev) => format!("{prev}; {note}"),
            None => note,
        });
    }
    changed
}

/// A gate's files split into those the cache answers and those that must run.
#[derive(Debug, Default)]
struct Lookup {
    hits: Vec<(String, Vec<crate::core::violation::Violation>)>,
    misses: Vec<String>,
    /// The keys of the misses, to record their fresh results under.
    keys: HashMap<String, FileKey>,
    /// Misses the cache has nothing for under any key (no entry, or one made from other
    /// content): their keys (a read and a hash of each file, for some gates a walk of the
    /// project) are computed once the gate's process has started, not before it.
    unkeyed: Vec<String>,
}

fn look_up(cache: Option<&ResultCache>, keys: &KeyMaker, gate: &Gate, files: &[&String]) -> Lookup {
    let mut lookup = Lookup::default();
    for f in files {
        if let Some(cache) = cache
            && KeyMaker::caches(gate)
            && (!cache.has_entry(&gate.id, f)
                || !keys
                    .file_hash(f)
                    .is_some_and(|c| cache.was_made_from(&gate.id, f, &c)))
        {
            lookup.unkeyed.push((*f).clone());
            lookup.misses.push((*f).clone());
            continue;
        }
        let key = cache.and_then(|_| keys.file_key(gate, f));
        match (cache, key) {
            (Some(cache), Some(key)) => match cache.get(&gate.id, f, &key.key) {
                Some(mut v) => {
                    let id: std::sync::Arc<str> = gate.id.as_str().into();
                    for x in &mut v {
                        x.gate = id.clone();
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
        let per_file = result.violations.iter().all(|v| {
            v.file
                .as_deref()
                .is_some_and(|f| lookup.keys.contains_key(f))
        });
        if per_file {
            let mut by_file: HashMap<&str, Vec<crate::core::violation::Violation>> = HashMap::new();
            for v in &result.violations {
                if let Some(f) = &v.file {
                    by_file.entry(f).or_default().push(v.clone());
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

/// Test suites and type checkers usually take longest (they follow the whole program); formatters
/// and linters look at one file at a time and finish quickly.
fn start_rank(kind: GateKind) -> u8 {
    match kind {
        GateKind::Test | GateKind::Typecheck => 0,
        _ => 1,
    }
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
