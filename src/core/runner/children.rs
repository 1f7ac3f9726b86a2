//! The tools running now, so that none outlives qgates: each is registered when it starts and
//! leaves when its run reaps it; `stop_all` kills and reaps the ones a runtime started (on
//! `shutdown`, `exit`, the end of input, SIGTERM) and lets that runtime start no more.
//!
//! Runs are cancelled by dropping their futures, and tokio drops a cancelled task's future
//! later, on its own schedule: waiting for every task to be dropped would not make the stop
//! certain, so the stop goes by the processes themselves. It goes by runtime so that one
//! server stopping leaves another's tools alone (tests run several servers in one process).

use std::collections::{HashMap, HashSet};
use std::sync::{LazyLock, Mutex, MutexGuard};

use tokio::runtime::{Handle, Id};

use super::reaper::{self, reap};
use crate::core::platform::kill_process_group;

#[derive(Default)]
struct Registry {
    /// Running tools (the leaders of their process groups) and the runtime that started each.
    running: HashMap<i32, Option<Id>>,
    /// Runtimes that have stopped: they start no more tools.
    stopped: HashSet<Option<Id>>,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(Mutex::default);

fn registry() -> MutexGuard<'static, Registry> {
    // A panic elsewhere while holding the lock leaves the map usable.
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

fn runtime() -> Option<Id> {
    Handle::try_current().ok().map(|h| h.id())
}

/// Starts a tool with `spawn` and registers it, unless this runtime has stopped; both under the
/// lock, so `stop_all` never misses a tool that starts while it runs.
pub(super) fn start<T>(
    spawn: impl FnOnce() -> Result<(T, i32), String>,
) -> Result<(T, i32), String> {
    let mut reg = registry();
    let rt = runtime();
    if reg.stopped.contains(&rt) {
        return Err("qgates is stopping and starts no more tools".into());
    }
    reaper::ready();
    let (child, pid) = spawn()?;
    reg.running.insert(pid, rt);
    reaper::watch(pid);
    Ok((child, pid))
}

/// Takes a tool out of the register. `false`: `stop_all` took it (and killed and reaped it).
pub(super) fn leave(pid: i32) -> bool {
    registry().running.remove(&pid).is_some()
}

/// Kills the process groups of every tool the current runtime started, waits for each to end
/// (no zombie is left), and refuses further starts from this runtime. Returns how many it stopped.
pub fn stop_all() -> usize {
    let rt = runtime();
    let taken: Vec<i32> = {
        let mut reg = registry();
        reg.stopped.insert(rt);
        let mine = reg.running.extract_if(|_, owner| *owner == rt);
        mine.map(|(pid, _)| pid).collect()
    };
    for &pid in &taken {
        kill_process_group(pid);
    }
    for &pid in &taken {
        reap(pid);
        reaper::unwatch(pid);
    }
    reaper::stop();
    taken.len()
}

/// The first of SIGINT, SIGTERM and SIGHUP this process receives (see `platform`).
pub use crate::core::platform::termination_signal;
