//! The third stage of a run: the gates the cache answered whole take their cached result; the
//! others become jobs over the files the cache missed. `kind: deps` gates (uv sync, npm ci) run
//! first, all together, and the other gates start once every one of them has finished: a
//! linter, a type checker or a suite reads what they install. The others then run in parallel,
//! except that `exclusive` gates take turns (see `exclusive`). A deps gate that fails does not
//! stop the others: the report's note says they ran without their dependencies (`finish`).
//! Each fresh result is merged with the cached files' and recorded in the cache for the next run.

use std::path::Path;
use std::sync::Arc;

use super::exclusive;
use super::lookup::{Lookup, from_cache, merge_with_cache};
use super::plan::PlannedGate;
use super::skips::skipped;
use super::{RunError, RunEvent, RunRequest};
use crate::core::cache::deps;
use crate::core::config::GateKind;
use crate::core::report::{GateResult, GateStatus};
use crate::core::runner::{GateJob, run_gate};
use crate::core::scope::ResolvedScope;
use crate::core::scope::changed_lines::DiffBase;
use crate::core::workspace::run_logs::{RunDir, create_run_dir};

/// A gate that starts a process, with what its result is merged with.
pub(super) struct Job {
    index: usize,
    job: GateJob,
    lookup: Lookup,
    in_scope: usize,
    deps_key: Option<String>,
}

/// Fills the results of the gates the cache answered whole, and makes a job of each other gate.
/// The run's log folder is made when the first job needs it.
pub(super) fn jobs(
    request: &RunRequest,
    warm: Option<std::time::Duration>,
    scope: &ResolvedScope,
    gates: Vec<PlannedGate>,
    lookups: Vec<Lookup>,
    results: &mut [Option<GateResult>],
    run_dir: &mut Option<Arc<RunDir>>,
) -> Result<Vec<Job>, RunError> {
    let root: Arc<Path> = Arc::from(request.root.as_path());
    let tools_from: Option<Arc<Path>> = request.tools_from.as_deref().map(Arc::from);
    let mut jobs = Vec::new();
    for (planned, lookup) in gates.into_iter().zip(lookups) {
        let (gate, in_scope) = (planned.gate, planned.in_scope);
        if lookup.misses.is_empty() {
            let mut result = from_cache(gate, lookup);
            if !gate.pass_files {
                result.files_checked = in_scope;
                result.cached_files = in_scope;
            }
            results[planned.index] = Some(result);
            continue;
        }
        let run_dir = match run_dir {
            Some(dir) => dir.clone(),
            None => {
                let dir =
                    create_run_dir(&request.root).map_err(|e| RunError::LogDir(e.to_string()))?;
                run_dir.insert(Arc::new(dir)).clone()
            }
        };
        let job = GateJob {
            gate: Arc::new(gate.clone()),
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
                    files: planned.files.iter().map(|f| (*f).clone()).collect(),
                })
            }),
            tools_from: tools_from.clone(),
            warm,
        };
        jobs.push(Job {
            index: planned.index,
            job,
            lookup,
            in_scope,
            deps_key: planned.deps_key,
        });
    }
    Ok(jobs)
}

/// Runs the jobs, the deps gates first, and puts each result in its slot; the request's events
/// hear of each gate's start and end.
pub(super) async fn run_jobs(
    request: &RunRequest,
    jobs: Vec<Job>,
    results: &mut [Option<GateResult>],
) {
    if let Some(tx) = &request.events {
        let gates = jobs.iter().map(|j| j.job.gate.id.clone()).collect();
        let _ = tx.send(RunEvent::Started { gates });
    }
    let (deps, rest): (Vec<Job>, Vec<Job>) = jobs
        .into_iter()
        .partition(|j| j.job.gate.kind == GateKind::Deps);
    run_together(request, deps, results).await;
    run_together(request, rest, results).await;
}

/// Runs the jobs at once; each exclusive gate holds the workspace's exclusive lock while it
/// runs. A gate whose task panicked keeps an empty slot (the report says it stopped).
async fn run_together(request: &RunRequest, jobs: Vec<Job>, results: &mut [Option<GateResult>]) {
    let mut tasks = tokio::task::JoinSet::new();
    let mut running_gates = std::collections::BTreeMap::new();
    for job in jobs {
        let (index, gate, root) = (job.index, job.job.gate.clone(), job.job.root.clone());
        running_gates.insert(index, gate.clone());
        let running = run_one(request, job);
        tasks.spawn(async move {
            // Taken inside the task: the other gates start meanwhile.
            let _turn = match gate.exclusive {
                true => Some(exclusive::acquire(&root, &gate).await),
                false => None,
            };
            (index, running.await)
        });
    }
    let deadline = request.deadline.map(tokio::time::Instant::from_std);
    loop {
        let next = match deadline {
            Some(at) => match tokio::time::timeout_at(at, tasks.join_next()).await {
                Ok(next) => next,
                Err(_) => {
                    // Dropped, each gate's tools are stopped (`runner::process`).
                    tasks.abort_all();
                    for (i, gate) in std::mem::take(&mut running_gates) {
                        results[i] = Some(skipped(&gate, OUT_OF_TIME.to_string()));
                    }
                    return;
                }
            },
            None => tasks.join_next().await,
        };
        match next {
            Some(Ok((i, result))) => {
                running_gates.remove(&i);
                results[i] = Some(result);
            }
            Some(Err(e)) => tracing::error!("a gate task failed: {e}"),
            None => return,
        }
    }
}

/// Why a gate stopped by the run's deadline is skipped.
pub const OUT_OF_TIME: &str = "still running when the answer was due, so it was stopped";

fn run_one(
    request: &RunRequest,
    job: Job,
) -> impl Future<Output = GateResult> + Send + 'static + use<> {
    let cache = request
        .cache
        .clone()
        .filter(|_| job.job.gate.kind != GateKind::Deps);
    // A deps gate's green run is its one entry in the cache (`cache::deps`).
    let deps_record = job.deps_key.clone().zip(request.cache.clone());
    let events = request.events.clone();
    async move {
        let send = |e: RunEvent| events.as_ref().map(|tx| tx.send(e));
        let gate = job.job.gate.clone();
        send(RunEvent::GateStarted {
            id: gate.id.clone(),
            name: gate.name.clone(),
        });
        let mut fresh = run_gate(job.job).await;
        // A gate without file arguments covered its files in scope, as when the cache answers.
        if !gate.pass_files && fresh.status != GateStatus::Skipped {
            fresh.files_checked = job.in_scope;
        }
        let result = merge_with_cache(&gate, fresh, job.lookup, cache.as_deref());
        if let Some((key, cache)) = &deps_record {
            deps::record_if_green(cache, &gate, key, &result);
        }
        send(RunEvent::GateFinished {
            id: gate.id.clone(),
            status: result.status,
        });
        result
    }
}
