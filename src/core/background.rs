//! Work nothing waits on right away (resolving the next `auto` scope, pruning old run folders,
//! setting the next run's folder aside), on a thread of its own at a lower CPU priority (nice
//! 10): beside a run's tools it mostly takes what their processes leave idle. Not the lowest
//! priority: a machine busy with other work must not starve it. Its own thread, not the
//! runtime's blocking pool, whose threads serve other work later and would keep the lowered
//! priority (raising it again takes a privilege).

use tokio::sync::oneshot;

/// Runs `work` on a new thread named `name`; the receiver gets its result (or reports the
/// thread as gone when it could not start).
pub fn spawn_low<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> oneshot::Receiver<T> {
    let (tx, rx) = oneshot::channel();
    let job = move || {
        lower_priority();
        let _ = tx.send(work());
    };
    if let Err(e) = std::thread::Builder::new().name(name.into()).spawn(job) {
        tracing::warn!("cannot start the {name} thread: {e}");
    }
    rx
}

/// Lowers the calling thread's priority to nice 10. Only on Linux, where the value belongs to
/// the thread; elsewhere it would be the whole process's.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    crate::core::runner::process::lower_priority(0, 10);
}

/// How many files make a stretch of file-system work (a stat, or a read and hash, each) long
/// enough to hand the runtime's other tasks to another thread first: about a millisecond.
pub const MANY_FILES: usize = 256;

/// Runs `work`, a stretch of blocking file-system work, without holding up the runtime's other
/// tasks: on a multi-thread runtime (the language server's, the agent server's), the worker hands
/// them to another thread while `work` runs, so a 2,000-file run does not keep the server from
/// answering for tens of milliseconds. Elsewhere (the CLI's current-thread runtime, or no
/// runtime) it just runs. Handing over costs a thread wake-up, so small work runs in place.
pub fn blocking_if<T>(large: bool, work: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let multi =
        Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread);
    if large && multi {
        tokio::task::block_in_place(work)
    } else {
        work()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocking_work_runs_on_every_kind_of_runtime_and_outside_one() {
        assert_eq!(blocking_if(true, || 1), 1);
        let current = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        // `block_in_place` would panic here: the work runs in place.
        assert_eq!(current.block_on(async { blocking_if(true, || 2) }), 2);
        let multi = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        // On the only worker, large work waits for another task: that task runs meanwhile, on
        // the thread the worker's tasks were handed to.
        let (tx, rx) = std::sync::mpsc::channel();
        let on_worker = multi.spawn(async move {
            let other = tokio::spawn(async move {
                let _ = tx.send(3);
            });
            let got = blocking_if(true, || rx.recv_timeout(std::time::Duration::from_secs(10)));
            let _ = other.await;
            (got.ok(), blocking_if(false, || 4))
        });
        assert_eq!(multi.block_on(on_worker).unwrap(), (Some(3), 4));
    }
}
