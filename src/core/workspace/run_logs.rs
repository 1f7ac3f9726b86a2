//! The run logs: every gate's full stdout and stderr under `.qgates/runs/<run id>/`, and the
//! run's whole report as `report.json`, the newest `KEEP_RUNS` runs kept. Reports carry these
//! paths instead of raw output. A run locks its folder while it lasts, and pruning skips a
//! locked folder: a slow run keeps its logs however many runs start after it.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::core::platform::background;
use crate::core::report::{FullReport, Report};
use crate::core::workspace::{qgates_dir, safe_fs};

/// The name of the whole report in a run's folder.
pub const REPORT_FILE: &str = "report.json";

/// How many run folders are kept.
pub const KEEP_RUNS: usize = 20;

/// One run's log folder.
#[derive(Debug)]
pub struct RunDir {
    pub id: String,
    /// Absolute.
    pub path: PathBuf,
    /// As shown in reports: relative to the workspace root when inside it.
    pub display: String,
    /// The folder itself, open and locked while the run lasts (`None` where folders cannot be
    /// locked, or outside the workspace).
    _lock: Option<File>,
}

impl RunDir {
    /// The paths of one gate's (or one batch's) stdout and stderr logs.
    pub fn log_paths(&self, gate: &str, batch: usize) -> (PathBuf, PathBuf) {
        let stem = if batch == 0 {
            gate.to_string()
        } else {
            format!("{gate}.{}", batch + 1)
        };
        (
            self.path.join(format!("{stem}.stdout")),
            self.path.join(format!("{stem}.stderr")),
        )
    }

    pub fn display_path(&self, p: &Path) -> String {
        match p.strip_prefix(&self.path) {
            Ok(rel) => format!("{}/{}", self.display, rel.to_string_lossy()),
            Err(_) => p.display().to_string(),
        }
    }
}

/// Names `report.json` in the run's folder as the report's file (its `full_report`), which
/// `write_report` writes: an answer cut to a page names it, and a person finds it beside the logs.
pub fn name_report(dir: &RunDir, report: &mut Report) {
    let path = dir.path.join(REPORT_FILE);
    report.full_report = Some(FullReport {
        display: dir.display_path(&path),
        path,
    });
}

/// Writes the report where `name_report` named it, pretty-printed (agents read it a line at a
/// time). A report that cannot be written no longer names the file, so none points at a stale one.
pub fn write_report(report: &mut Report) {
    let Some(full) = &report.full_report else {
        return;
    };
    let written = serde_json::to_vec_pretty(&*report)
        .map_err(std::io::Error::other)
        .and_then(|mut json| {
            json.push(b'\n');
            // The folder is the run's own; a link planted at the name is refused, not followed.
            safe_fs::create_nofollow(&full.path)?.write_all(&json)
        });
    if let Err(e) = written {
        tracing::warn!("the report could not be written to {}: {e}", full.display);
        report.full_report = None;
    }
}

/// Makes a new run folder under `<root>/.qgates/runs/`, locked, and removes the oldest folders
/// beyond `KEEP_RUNS` that no run holds in the background. When `.qgates/` cannot be written (or
/// is refused, see `qgates_dir::check`), the folder is made in the private scratch folder's
/// `runs/` instead, pruned the same way.
pub fn create_run_dir(root: &Path) -> std::io::Result<RunDir> {
    let (dir, runs) = make_run_dir(root)?;
    let current = dir.path.clone();
    drop(background::spawn_low("qgates-prune", move || {
        prune(&runs, &current)
    }));
    Ok(dir)
}

/// Makes the run folder, without pruning; returns it with the folder of runs it is in.
fn make_run_dir(root: &Path) -> std::io::Result<(RunDir, PathBuf)> {
    if let Ok(runs) = qgates_dir::make(root, "runs")
        && let Ok(dir) = make_locked(&runs, |id| format!(".qgates/runs/{id}"))
    {
        return Ok((dir, runs));
    }
    let runs = crate::core::workspace::scratch::dir()?.join("runs");
    match std::fs::create_dir(&runs) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let dir = make_locked(&runs, |id| runs.join(id).display().to_string())?;
    Ok((dir, runs))
}

/// The file every run folder holds from its making: pruning removes only folders that have it,
/// so nothing qgates did not make is ever removed.
pub const MARKER: &str = ".qgates-run";

/// Makes a new folder in `runs`, marks it (`MARKER`) and locks it; `display` names it in reports.
fn make_locked(runs: &Path, display: impl Fn(&str) -> String) -> std::io::Result<RunDir> {
    loop {
        let id = new_run_id();
        let path = runs.join(&id);
        // `mkdir` fails on anything already there: the folder is this run's own.
        std::fs::create_dir(&path)?;
        safe_fs::create_new(&path.join(MARKER), 0o644)?;
        // Between the `mkdir` and the lock, a run that prunes could take the folder for an old
        // one (if `KEEP_RUNS` runs started meanwhile): it is made again then.
        let Ok(folder) = File::open(&path) else {
            continue;
        };
        let lock = match folder.try_lock() {
            Ok(()) if path.is_dir() => Some(folder),
            Ok(()) | Err(std::fs::TryLockError::WouldBlock) => continue,
            // Where folders cannot be locked, runs go unlocked and pruning keeps its order.
            Err(std::fs::TryLockError::Error(_)) => None,
        };
        return Ok(RunDir {
            display: display(&id),
            id,
            path,
            _lock: lock,
        });
    }
}

/// Whether `path` is a run folder qgates made: a real folder (not a link) of this user, named
/// like a run id, holding the marker.
fn is_run_folder(path: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    meta.is_dir()
        && crate::core::platform::owner_user_id(&meta) == crate::core::platform::effective_user_id()
        && path
            .file_name()
            .is_some_and(|n| is_run_id(&n.to_string_lossy()))
        && std::fs::symlink_metadata(path.join(MARKER)).is_ok_and(|m| m.is_file())
}

/// `YYYYMMDD-HHMMSS-UUUUUU-<pid>-<n>`, all digits (see `new_run_id`).
fn is_run_id(name: &str) -> bool {
    let parts: Vec<&str> = name.split('-').collect();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    parts.len() == 5
        && [8, 6, 6].iter().zip(&parts).all(|(n, p)| p.len() == *n)
        && parts.iter().all(|p| digits(p))
}

/// Removes all but the newest `KEEP_RUNS` run folders in `runs`, except `current` and those a
/// run still holds. Only run folders qgates made (`is_run_folder`) count or go.
fn prune(runs: &Path, current: &Path) {
    // Never through a link, nor in a refused `.qgates/`: the folders listed would be anyone's.
    if !std::fs::symlink_metadata(runs).is_ok_and(|m| m.is_dir()) {
        return;
    }
    if let Some(root) = runs.parent().and_then(Path::parent)
        && runs == qgates_dir::runs_dir(root)
        && qgates_dir::check(root).is_err()
    {
        return;
    }
    let Ok(entries) = std::fs::read_dir(runs) else {
        return;
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| is_run_folder(p))
        .collect();
    if dirs.len() <= KEEP_RUNS {
        return;
    }
    dirs.sort_by_key(|p| sort_key(p));
    dirs.truncate(dirs.len() - KEEP_RUNS);
    for old in dirs.iter().filter(|d| *d != current) {
        let Ok(folder) = File::open(old) else {
            continue;
        };
        // Removed under the folder's lock, so a run making it cannot take it meanwhile.
        // `remove_dir_all` unlinks a link it meets instead of entering it (CVE-2022-21658).
        if !matches!(folder.try_lock(), Err(std::fs::TryLockError::WouldBlock)) {
            let _ = std::fs::remove_dir_all(old);
        }
    }
}

/// `YYYYMMDD-HHMMSS-<microseconds>-<pid>-<n>`: sortable by time, unique across processes and
/// within one. The microseconds order the many runs of one second (an editor's saves, a script's
/// loop), so pruning never takes a new run for an old one.
fn new_run_id() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "{}-{:06}-{}-{n}",
        qgates_dir::timestamp(now.as_secs()),
        now.subsec_micros(),
        std::process::id()
    )
}

/// Orders run ids by (date-time-microseconds, n), leaving the pid out. Ids of older versions,
/// without the microseconds, sort before the new ones of the same second.
fn sort_key(p: &Path) -> (String, u64) {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut parts = name.rsplitn(3, '-');
    let n = parts.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    let _pid = parts.next();
    (parts.next().unwrap_or("").to_string(), n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run folder, made and pruned as `create_run_dir` does, with the pruning waited for.
    fn make_and_prune(root: &Path) -> std::io::Result<RunDir> {
        let (dir, runs) = make_run_dir(root)?;
        prune(&runs, &dir.path);
        Ok(dir)
    }

    /// A run folder as a run of another process left it (named `id`, marked).
    fn old_run(runs: &Path, id: &str) {
        std::fs::create_dir_all(runs.join(id)).unwrap();
        std::fs::write(runs.join(id).join(MARKER), "").unwrap();
    }

    fn left(root: &Path) -> Vec<String> {
        std::fs::read_dir(qgates_dir::runs_dir(root))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_run_never_prunes_its_own_folder_nor_newer_ones() {
        // Runs of many processes in the second before, each far along its own counter: the
        // new run sorts after them and keeps its folder.
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let runs = qgates_dir::runs_dir(root);
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let stamp = qgates_dir::timestamp(secs - 1);
        for pid in 1..=KEEP_RUNS + 5 {
            old_run(&runs, &format!("{stamp}-999999-{pid}-{}", 100 + pid));
        }
        let mut made = Vec::new();
        for _ in 0..KEEP_RUNS + 3 {
            let dir = make_and_prune(root).unwrap();
            assert!(dir.path.is_dir(), "{} pruned its own folder", dir.id);
            made.push(dir.id);
        }
        let left = left(root);
        assert_eq!(left.len(), KEEP_RUNS);
        for newest in &made[3..] {
            assert!(left.contains(newest), "{newest} was pruned");
        }
    }

    #[test]
    fn a_run_still_going_keeps_its_folder_however_many_start_after_it() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let going = make_and_prune(root).unwrap();
        assert!(going._lock.is_some(), "the run's folder is locked");
        std::fs::write(going.log_paths("lint", 0).0, "still writing").unwrap();
        for _ in 0..KEEP_RUNS + 5 {
            drop(make_and_prune(root).unwrap());
        }
        assert!(going.path.is_dir(), "a run still going lost its folder");
        assert_eq!(
            std::fs::read_to_string(going.log_paths("lint", 0).0).unwrap(),
            "still writing"
        );
        assert_eq!(left(root).len(), KEEP_RUNS + 1);
        // Once it ends, its folder is old like any other.
        let path = going.path.clone();
        drop(going);
        make_and_prune(root).unwrap();
        assert!(!path.is_dir(), "an ended run's folder is pruned");
        assert_eq!(left(root).len(), KEEP_RUNS);
    }

    #[test]
    fn runs_in_parallel_keep_their_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let root = root.clone();
                std::thread::spawn(move || {
                    for _ in 0..15 {
                        let dir = make_and_prune(&root).unwrap();
                        std::fs::write(dir.log_paths("lint", 0).0, "output").unwrap();
                        assert!(dir.path.is_dir(), "{} was pruned while running", dir.id);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(left(&root).len(), KEEP_RUNS);
    }

    #[test]
    fn keeps_the_newest_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        // The runs' ids only: each run has ended (its folder is no longer locked).
        let mut made = Vec::new();
        for _ in 0..KEEP_RUNS + 3 {
            made.push(make_and_prune(root).unwrap().id);
            let left = left(root);
            assert_eq!(left.len(), made.len().min(KEEP_RUNS));
            for newest in &made[made.len().saturating_sub(KEEP_RUNS)..] {
                assert!(left.contains(newest), "{newest} was pruned");
            }
        }
        assert!(qgates_dir::dir(root).join(".gitignore").is_file());
    }

    #[test]
    fn a_new_run_prunes_in_the_background() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        for _ in 0..KEEP_RUNS + 3 {
            drop(make_and_prune(root).unwrap());
        }
        let runs = qgates_dir::runs_dir(root);
        let oldest = |root: &Path| {
            let mut names = left(root);
            names.sort_by_key(|n| sort_key(Path::new(n)));
            names
        };
        let before = oldest(root);
        // Two old folders left behind by a run that could not prune (it was killed, say).
        for n in ["20000101-000000-000000-1-0", "20000101-000000-000000-1-1"] {
            old_run(&runs, n);
        }
        let dir = create_run_dir(root).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while left(root).len() > KEEP_RUNS && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let now = oldest(root);
        assert_eq!(now.len(), KEEP_RUNS, "{now:?}");
        assert!(now.contains(&dir.id));
        assert!(!now.iter().any(|n| n.starts_with("20000101")), "{now:?}");
        assert_eq!(
            now[..KEEP_RUNS - 1],
            before[before.len() - (KEEP_RUNS - 1)..]
        );
    }

    #[test]
    fn a_runs_folder_linked_outside_is_neither_written_nor_pruned() {
        let tmp = tempfile::tempdir().unwrap();
        let (root, canary) = (tmp.path().join("ws"), tmp.path().join("canary"));
        std::fs::create_dir_all(root.join(".qgates")).unwrap();
        // Marked like qgates' own: the link is refused, not the folders judged.
        for i in 0..KEEP_RUNS + 5 {
            old_run(&canary, &format!("20000101-000000-000000-1-{i}"));
        }
        let before = left_in(&canary);
        std::os::unix::fs::symlink(&canary, qgates_dir::runs_dir(&root)).unwrap();
        for _ in 0..KEEP_RUNS + 5 {
            let dir = make_and_prune(&root).unwrap();
            assert!(!dir.path.starts_with(&canary), "{}", dir.path.display());
            prune(&qgates_dir::runs_dir(&root), &dir.path);
        }
        assert_eq!(
            left_in(&canary),
            before,
            "the canary outside the workspace changed"
        );
        // `.qgates` itself a link: the same.
        let other = tmp.path().join("ws2");
        std::fs::create_dir_all(&other).unwrap();
        std::os::unix::fs::symlink(&canary, qgates_dir::dir(&other)).unwrap();
        let dir = make_and_prune(&other).unwrap();
        assert!(!dir.path.starts_with(&canary));
        assert_eq!(left_in(&canary), before);
    }

    #[test]
    fn pruning_removes_only_marked_run_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let (root, outside) = (tmp.path().join("ws"), tmp.path().join("outside"));
        let runs = qgates_dir::runs_dir(&root);
        // The oldest names of all, so each would go first if pruning took it.
        std::fs::create_dir_all(runs.join("20000101-000000-000000-1-0")).unwrap();
        std::fs::write(runs.join("20000101-000000-000000-1-0/notes.txt"), "mine").unwrap();
        old_run(&outside, "20000101-000000-000000-1-1");
        std::os::unix::fs::symlink(
            outside.join("20000101-000000-000000-1-1"),
            runs.join("20000101-000000-000000-1-1"),
        )
        .unwrap();
        // Marked, but not named like a run.
        old_run(&runs, "20000101-keep");
        // A run folder of qgates' own holding a link out: removed, and the link with it, not
        // what it points to.
        old_run(&runs, "20000101-000000-000000-1-2");
        std::fs::write(outside.join("precious.txt"), "theirs").unwrap();
        std::os::unix::fs::symlink(&outside, runs.join("20000101-000000-000000-1-2/out")).unwrap();
        for _ in 0..KEEP_RUNS + 3 {
            drop(make_and_prune(&root).unwrap());
        }
        let left = left_in(&runs);
        for kept in [
            "20000101-000000-000000-1-0",
            "20000101-000000-000000-1-1",
            "20000101-keep",
        ] {
            assert!(
                left.iter().any(|n| n == kept),
                "{kept} was removed: {left:?}"
            );
        }
        assert_eq!(left.len(), KEEP_RUNS + 3);
        assert_eq!(
            std::fs::read_to_string(runs.join("20000101-000000-000000-1-0/notes.txt")).unwrap(),
            "mine"
        );
        assert!(
            outside
                .join("20000101-000000-000000-1-1")
                .join(MARKER)
                .is_file()
        );
        assert!(!left.iter().any(|n| n == "20000101-000000-000000-1-2"));
        assert_eq!(
            std::fs::read_to_string(outside.join("precious.txt")).unwrap(),
            "theirs"
        );
    }

    #[test]
    fn run_ids_are_recognised() {
        assert!(is_run_id(&new_run_id()));
        for not in [
            "",
            "20000101-000000-1-0",
            "2000010-000000-000000-1-0",
            "a-b-c-d-e",
        ] {
            assert!(!is_run_id(not), "{not}");
        }
    }

    fn left_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}
