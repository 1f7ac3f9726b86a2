//! Work nothing waits on right away — resolving the next `auto` scope once a run is published,
//! pruning old run folders — on a thread of its own at a lower CPU priority (nice 10), so it
//! takes no core from the tool a run waits for, nor delays the editor's diagnostics. Not the
//! runtime's blocking pool: its threads serve other work later and would keep the lowered
//! priority (raising it again takes a privilege).

use tokio::sync::oneshot;

/// Runs `work` on a new thread named `name` at nice 10; the receiver gets its result (or an
/// error when the thread could not start).
pub fn spawn_low<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> oneshot::Receiver<T> {
    let (tx, rx) = oneshot::channel();
    let job = move || {
        crate::core::platform::lower_thread_priority();
        let _ = tx.send(work());
    };
    if let Err(e) = std::thread::Builder::new().name(name.into()).spawn(job) {
        tracing::warn!("cannot start the {name} thread: {e}");
    }
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn runs_the_work_at_a_lower_priority() {
        let nice = spawn_low("test", || {
            // SAFETY: getpriority takes no pointers.
            unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
        });
        let ours = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        let theirs = nice.await.unwrap();
        if cfg!(target_os = "linux") {
            assert_eq!(theirs, ours.max(10), "the thread's nice value");
        }
    }
}
