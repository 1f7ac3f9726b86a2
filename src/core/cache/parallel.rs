//! Per-file work of a run spread over the cores: a monorepo has a hundred thousand files, a
//! save a few.

/// Below this many items the work is done on the caller's thread: a thread is worth its start
/// from about a thousand files on.
const SMALL: usize = 1024;

/// `f` of every item, in order; on as many threads as there are cores when there are many.
pub(crate) fn in_parallel<I: Sync, T: Send>(items: &[I], f: impl Fn(&I) -> T + Sync) -> Vec<T> {
    // A save has a few files, and does not ask for the core count either (on Linux that reads
    // the cgroup's files).
    if items.len() <= SMALL {
        return items.iter().map(f).collect();
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = items.len().div_ceil(threads).max(SMALL);
    let f = &f;
    std::thread::scope(|s| {
        let parts: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(f).collect::<Vec<T>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|p| p.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}
