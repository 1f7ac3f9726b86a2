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
