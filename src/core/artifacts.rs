//! The artifact log: every gate's full stdout and stderr under `.qgates/runs/<run id>/`,
//! the newest runs kept. Reports carry these paths instead of raw output.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// How many run folders are kept.
pub const KEEP_RUNS: usize = 20;

/// How many older folders may gather beyond `KEEP_RUNS` before they are removed, all at once.
/// Removing a folder takes journalled metadata writes (about a millisecond each on an ext4
/// disk here) that slow the tool a run starts at the same time, by as much again: nine runs in
/// ten now remove nothing.
pub const PRUNE_SLACK: usize = 10;

/// Content of `.qgates/.gitignore`: the machine-local files; `quality.yaml` there stays tracked.
const GITIGNORE: &str = "# Written by qgates: logs, cache and state are local to this machine.\nruns/\ncache/\nstate.json\nstate.json.*\n*.lock\n";

/// One run's log folder.
#[derive(Debug, Clone)]
pub struct RunDir {
    pub id: String,
    /// Absolute.
    pub path: PathBuf,
    /// As shown in reports: relative to the workspace root when inside it.
    pub display: String,
    /// Under `<root>/.qgates/runs/` (else in the system's temporary folder).
    pub in_workspace: bool,
    /// The folder itself, open and locked while the run lasts: another run's pruning skips a
    /// locked folder (see [`in_use`]), however many runs started after it.
    pub in_use: Option<Arc<File>>,
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

/// Creates a new run folder under `<root>/.qgates/runs/` and prunes old ones. When the workspace
/// is not writable, falls back to the system's temporary folder (the report shows where).
pub fn create_run_dir(root: &Path) -> std::io::Result<RunDir> {
    let dir = new_run_dir(root)?;
    if dir.in_workspace {
        remove_runs(old_runs(root, &dir));
    }
    Ok(dir)
}

/// Creates a run folder as `create_run_dir` does, without pruning: the engine prunes while the
/// gates run, so the deletions cost no time before the first tool starts.
pub fn new_run_dir(root: &Path) -> std::io::Result<RunDir> {
    let id = new_run_id();
    let qgates = root.join(".qgates");
    let runs = qgates.join("runs");
    let path = runs.join(&id);
    // The run's own folder first: `runs/` exists after the first run, and one `mkdir` is then
    // all it takes.
    let in_root = match std::fs::create_dir(&path) {
        Ok(()) => Ok(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(&runs).and_then(|()| std::fs::create_dir(&path).map(|()| path))
        }
        Err(e) => Err(e),
    };
    if in_root.is_ok() {
        ensure_gitignore(&qgates);
    }
    match in_root {
        Ok(path) => Ok(RunDir {
            display: format!(".qgates/runs/{id}"),
            in_use: lock_folder(&path),
            id,
            path,
            in_workspace: true,
        }),
        Err(_) => {
            let path = std::env::temp_dir().join("qgates-runs").join(&id);
            std::fs::create_dir_all(&path)?;
            Ok(RunDir {
                display: path.display().to_string(),
                id,
                path,
                in_workspace: false,
                in_use: None,
            })
        }
    }
}

/// Opens a run's folder and takes an exclusive lock on it, held until the last clone of its
/// `RunDir` is dropped (or the process ends). Where folders cannot be opened or locked (not on
/// Linux and the like), runs go unlocked and pruning keeps only its order by time.
fn lock_folder(path: &Path) -> Option<Arc<File>> {
    let folder = File::open(path).ok()?;
    folder.try_lock().ok()?;
    Some(Arc::new(folder))
}

/// Whether a run still holds its folder (its lock cannot be taken).
fn in_use(path: &Path) -> bool {
    File::open(path)
        .is_ok_and(|folder| matches!(folder.try_lock(), Err(std::fs::TryLockError::WouldBlock)))
}

/// Writes `.qgates/.gitignore` if it is missing.
pub fn ensure_gitignore(qgates_dir: &Path) {
    let p = qgates_dir.join(".gitignore");
    if !p.exists() {
        let _ = std::fs::write(p, GITIGNORE);
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
    let (y, mo, d, h, mi, s) = utc_parts(now.as_secs());
    format!(
        "{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}-{:06}-{}-{n}",
        now.subsec_micros(),
        std::process::id()
    )
}

/// Calendar date and time (UTC) of a Unix timestamp.
pub fn utc_parts(secs: u64) -> (i64, u32, u32, u32, u32, u32) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        m,
        d,
        (rem / 3600) as u32,
        (rem % 3600 / 60) as u32,
        (rem % 60) as u32,
    )
}

/// The run folders of the workspace to remove: when more than `KEEP_RUNS + PRUNE_SLACK` exist,
/// all but the newest `KEEP_RUNS`; never `current`, the folder of the run that asks, nor the
/// folder of a run still going. Reads the
/// folder list only (no stat per run), so it is cheap enough to ask on every run.
pub fn old_runs(root: &Path, current: &RunDir) -> Vec<PathBuf> {
    old(
        &root.join(".qgates").join("runs"),
        KEEP_RUNS,
        PRUNE_SLACK,
        &current.path,
    )
}

/// Removes run folders (those `old_runs` named).
pub fn remove_runs(dirs: Vec<PathBuf>) {
    for d in dirs {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// All but the newest `keep` run folders (by name, which sorts by time) once there are more than
/// `keep + slack`, and never `current`.
fn old(runs: &Path, keep: usize, slack: usize, current: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(runs) else {
        return Vec::new();
    };
    // The directory entry's own type: no stat per run folder.
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    if dirs.len() <= keep + slack {
        return Vec::new();
    }
    dirs.sort_by_key(|p| sort_key(p));
    let excess = dirs.len() - keep;
    dirs.truncate(excess);
    // A run that started long ago may still be going (a slow tool while many others started):
    // its folder holds the logs it is writing.
    dirs.retain(|d| d != current && !in_use(d));
    dirs
}

/// Orders run ids by time, then pid-independent counter: `date-time-micros-pid-n` sorts by
/// (date-time-micros, n). Ids of older versions, without the microseconds, sort before the new
/// ones of the same second.
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

    #[test]
    fn civil_dates() {
        assert_eq!(utc_parts(0), (1970, 1, 1, 0, 0, 0));
        // 2026-11-22 10:15:00 UTC
        assert_eq!(utc_parts(1_795_342_500), (2026, 11, 22, 10, 15, 0));
        assert_eq!(utc_parts(951_782_400), (2000, 2, 29, 0, 0, 0));
    }

    #[test]
    fn a_run_never_prunes_its_own_folder_nor_newer_ones() {
        // Runs of many processes in the same second, each far along its own counter (ids
        // without microseconds, as older versions wrote them): the new run sorts after them and
        // keeps its folder.
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let runs = root.join(".qgates/runs");
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let (y, mo, d, h, mi, s) = utc_parts(secs);
        for pid in 1..=KEEP_RUNS + 5 {
            let name = format!(
                "{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}-{pid}-{}",
                100 + pid
            );
            std::fs::create_dir_all(runs.join(name)).unwrap();
        }
        let mut made = Vec::new();
        for _ in 0..KEEP_RUNS + 3 {
            let dir = create_run_dir(root).unwrap();
            assert!(dir.path.is_dir(), "{} pruned its own folder", dir.id);
            made.push(dir);
        }
        for newest in &made[3..] {
            assert!(newest.path.is_dir(), "{} was pruned", newest.id);
        }
        assert!(std::fs::read_dir(&runs).unwrap().count() <= KEEP_RUNS + PRUNE_SLACK);
    }

    #[test]
    fn a_run_still_going_keeps_its_folder_however_many_start_after_it() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let going = new_run_dir(root).unwrap();
        assert!(going.in_use.is_some(), "the run's folder is locked");
        let mut later = Vec::new();
        for _ in 0..(KEEP_RUNS + PRUNE_SLACK + 5) {
            later.push(create_run_dir(root).unwrap());
        }
        assert!(going.path.is_dir(), "a run still going lost its folder");
        // Once it ends, its folder is old like any other.
        let path = going.path.clone();
        drop(going);
        drop(later);
        create_run_dir(root).unwrap();
        create_run_dir(root).unwrap();
        let left = std::fs::read_dir(root.join(".qgates/runs"))
            .unwrap()
            .count();
        assert!(
            !path.is_dir(),
            "an ended run's folder is pruned ({left} left)"
        );
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
                        let dir = new_run_dir(&root).unwrap();
                        remove_runs(old_runs(&root, &dir));
                        assert!(dir.path.is_dir(), "{} was pruned while running", dir.id);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn keeps_the_newest_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let left = || -> Vec<String> {
            std::fs::read_dir(root.join(".qgates/runs"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        };
        // The runs' ids only: each run has ended (its folder is no longer locked).
        let mut made = Vec::new();
        // Up to the slack, nothing goes; one more, and all but the newest KEEP_RUNS go.
        for _ in 0..(KEEP_RUNS + PRUNE_SLACK) {
            made.push(create_run_dir(root).unwrap().id);
        }
        assert_eq!(left().len(), KEEP_RUNS + PRUNE_SLACK);
        made.push(create_run_dir(root).unwrap().id);
        let left = left();
        assert_eq!(left.len(), KEEP_RUNS);
        for newest in &made[made.len() - KEEP_RUNS..] {
            assert!(left.contains(newest), "{newest} was pruned");
        }
        assert!(root.join(".qgates/.gitignore").is_file());
    }
}
