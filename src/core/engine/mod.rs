//! The engine's one entry point, shared by the CLI, the language server and the agent server: a
//! `RunRequest` in, a `Run` out. A run goes through four stages, each a module: `plan` (which
//! gates run over which files), `lookup` (what the local and shared caches answer), `execute`
//! (the gates in their order) and `finish` (the report, then the state and the report's file,
//! recorded once).

pub(crate) mod exclusive;
mod execute;
mod finish;
pub(crate) mod kinds;
pub(crate) mod lookup;
mod plan;
pub mod shard;
pub(crate) mod skips;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use crate::core::cache::{KeyMaker, ResultCache};
use crate::core::config::{Config, Gate, Trigger};
use crate::core::report::{GateStatus, Report};
use crate::core::scope::{ResolvedScope, ScopeError, ScopeRequest, resolve};
use kinds::KindFilter;
use shard::Shard;

pub use execute::OUT_OF_TIME;
pub use finish::Run;
pub(crate) use finish::append_note;

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
    /// A workspace whose tool folders are searched after the root's own: a clean room's checkout
    /// borrows those of the workspace it was made from (`runner::tool_folders`).
    pub tools_from: Option<PathBuf>,
    /// Whether an `auto` or `branch` run's findings are compared with those at its reference
    /// (`core::novelty`), and whether only new ones count.
    pub new_findings: NewFindings,
    /// What the workspace is, when that is known without reading it: a checkout of a commit
    /// with known files copied over (`core::novelty`). It stands for the workspace fingerprint
    /// in the cache keys of gates whose results depend on the whole workspace.
    pub workspace_identity: Option<String>,
    /// Gates with a warm process ask it (`core::warm`): the editor's and the agent's runs, and
    /// `qgates check --warm`.
    pub warm: bool,
    /// When the run must answer (an agent's hook has a time budget): gates still running then
    /// are stopped and reported as skipped, saying so (`execute::out_of_time`).
    pub deadline: Option<std::time::Instant>,
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
            tools_from: None,
            new_findings: NewFindings::Ignore,
            workspace_identity: None,
            warm: false,
            deadline: None,
        }
    }
}

/// What a run does with the findings that were there before its change (`core::novelty`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum NewFindings {
    /// Not compared.
    #[default]
    Ignore,
    /// Each finding is marked new or pre-existing; all of them count.
    Mark,
    /// Marked, and only new findings fail a gate.
    Only,
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

/// Runs the gates and reports: the whole run, its state recorded and its report written.
/// Gates run in parallel; the report lists them in config order.
pub async fn run(config: &Config, request: &RunRequest) -> Result<Report, RunError> {
    Ok(execute(config, request, None).await?.finish())
}

/// Runs the gates over the request's scope, or over `scope` when the caller resolved it itself
/// (`request.scope` is then not read; `request.also` is added either way): the language server
/// resolves a folder's `auto` scope through its tracker. The run is returned unfinished: see
/// `Run::finish`.
pub async fn execute(
    config: &Config,
    request: &RunRequest,
    scope: Option<ResolvedScope>,
) -> Result<Run, RunError> {
    let started = Instant::now();
    let selected = select_gates(config, request.gates.as_deref())?;
    let mut scope = match scope {
        Some(scope) => scope,
        None => resolve_scope(config, request).await?,
    };
    let keys = KeyMaker::new(&request.root, config)
        .with_stamps(request.cache.as_deref())
        .borrowing_tools(request.tools_from.as_deref())
        .with_workspace_identity(request.workspace_identity.clone());
    plan::settle_files(request, &selected, &keys, &mut scope);
    let plan = plan::plan(request, &keys, &selected, &scope);
    let (lookups, mut remote) = lookup::look_up_plan(config, request, &keys, &plan.gates).await;
    let (mut results, mut run_dir) = (plan.results, None);
    let jobs = execute::jobs(
        request,
        request.warm.then_some(config.warm_idle),
        &scope,
        plan.gates,
        lookups,
        &mut results,
        &mut run_dir,
    )?;
    // A save checks only what changed: a walk of the whole project on every save would cost
    // what a `git status` of it costs. Runs asked for by a command or CI say it.
    let never_applies = (request.trigger != Trigger::Save)
        .then(|| skips::start_never_apply(config, &request.root, &scope, &selected, &results))
        .flatten();
    execute::run_jobs(request, jobs, &mut results).await;
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
    let mut checked: Vec<String> = plan.checked.into_iter().cloned().collect();
    checked.sort_unstable();
    let outcome = finish::Outcome {
        selected,
        results,
        checked,
        shard: plan.shard,
        run_dir,
        remote,
        started,
    };
    Ok(finish::assemble(config, request, scope, outcome))
}

/// A walk of the project, or git's status: off the runtime's threads.
async fn resolve_scope(config: &Config, request: &RunRequest) -> Result<ResolvedScope, RunError> {
    let started = Instant::now();
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
    Ok(scope)
}

pub(crate) fn select_gates<'c>(
    config: &'c Config,
    only: Option<&[String]>,
) -> Result<Vec<&'c Gate>, RunError> {
    let Some(only) = only else {
        return Ok(config.gates.iter().collect());
    };
    if let Some(id) = only.iter().find(|id| config.gate(id).is_none()) {
        let known: Vec<&str> = config.gates.iter().map(|g| g.id.as_str()).collect();
        return Err(RunError::UnknownGate {
            unknown: id.clone(),
            known: known.join(", "),
        });
    }
    Ok(config
        .gates
        .iter()
        .filter(|g| only.contains(&g.id))
        .collect())
}
