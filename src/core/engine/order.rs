//! The order the gates of one run start in, the same for the CLI, the language server and the
//! agent server. `kind: deps` gates (uv sync, npm ci) run first, all of them together, and the
//! other gates start only once every one of them has finished: a linter, a type checker or a
//! suite reads what they install. The others then run in parallel, except that `exclusive`
//! gates take turns (see `exclusive`).
//!
//! A deps gate that fails or cannot run does not stop the others: what they find is shown, and
//! the report's note says first that they ran without their dependencies, so a finding (or a
//! pass) that comes from a missing package is not taken for the code's own.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;

use crate::core::config::{Gate, GateKind};
use crate::core::engine::exclusive;
use crate::core::report::{GateResult, GateStatus};

/// One gate to run, with what the caller needs to run it.
pub struct Pending<T> {
    pub index: usize,
    pub gate: Arc<Gate>,
    pub work: T,
}

/// Runs the deps gates, waits for them, then runs the rest; each exclusive gate holds the
/// workspace's exclusive lock while it runs. Returns each gate's result by its `index`; a gate
/// whose task panicked is left out (the caller reports it as stopped).
pub async fn run_in_order<T, F, Fut>(
    root: &Path,
    pending: Vec<Pending<T>>,
    run_one: F,
) -> Vec<(usize, GateResult)>
where
    T: Send + 'static,
    F: Fn(T) -> Fut,
    Fut: Future<Output = GateResult> + Send + 'static,
{
    let (deps, rest): (Vec<_>, Vec<_>) = pending
        .into_iter()
        .partition(|p| p.gate.kind == GateKind::Deps);
    let mut results = run_together(root, deps, &run_one).await;
    results.extend(run_together(root, rest, &run_one).await);
    results
}

async fn run_together<T, F, Fut>(
    root: &Path,
    pending: Vec<Pending<T>>,
    run_one: &F,
) -> Vec<(usize, GateResult)>
where
    T: Send + 'static,
    F: Fn(T) -> Fut,
    Fut: Future<Output = GateResult> + Send + 'static,
{
    let mut tasks = tokio::task::JoinSet::new();
    for p in pending {
        let root: Arc<Path> = Arc::from(root);
        let running = run_one(p.work);
        tasks.spawn(async move {
            // Taken inside the task: the other gates start meanwhile.
            let _turn = match p.gate.exclusive {
                true => Some(exclusive::acquire(&root, &p.gate).await),
                false => None,
            };
            (p.index, running.await)
        });
    }
    let mut results = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(done) => results.push(done),
            Err(e) => tracing::error!("a gate task failed: {e}"),
        }
    }
    results
}

/// The report's note when a deps gate failed or could not run while other gates ran after it.
pub fn deps_failure_note(gates: &[&Gate], results: &[GateResult]) -> Option<String> {
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
