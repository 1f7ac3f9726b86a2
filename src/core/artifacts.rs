//! The artifact log: every gate's full stdout and stderr under `.qgates/runs/<run id>/`,
//! the newest runs kept. Reports carry these paths instead of raw output.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
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
    /// The files an old run left in the folder, when this run took the folder over (see
    /// [`new_run_dir`]) and has not written them again; removed when the run's last handle on
    /// its folder goes, so the folder ends up with this run's logs only.
    leftovers: Arc<Leftovers>,
}

#[derive(Debug, Default)]
struct Leftovers {
    folder: PathBuf,
    names: Mutex<HashSet<OsString>>,
}

impl Leftovers {
    fn remove(&self) {
        let names = std::mem::take(&mut *self.names.lock().unwrap_or_else(|e| e.into_inner()));
        for name in names {
            let _ = std::fs::remove_file(self.folder.join(name));
        }
    }
}

impl Drop for Leftovers {
    fn drop(&mut self) {
        self.remove();
    }
}

impl RunDir {
    /// The paths of one gate's (or one batch's) stdout and stderr logs.
    pub fn log_paths(&self, gate: &str, batch: usize) -> (PathBuf, PathBuf) {
        let [stdout, stderr] = log_names(gate, batch);
        (self.file(&stdout), self.file(&stderr))
    }

    /// The path of a file this run writes in its folder.
    pub fn file(&self, name: &str) -> PathBuf {
        self.leftovers
            .names
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(std::ffi::OsStr::new(name));
        self.path.join(name)
    }

    /// Removes now what an old run left in the folder and this run did not write again (else
    /// done when the run's last handle on the folder goes).
    pub fn remove_leftovers(&self) {
        self.leftovers.remove();
    }

    pub fn display_path(&self, p: &Path) -> String {
        match p.strip_prefix(&self.path) {
            Ok(rel) => format!("{}/{}", self.display, rel.to_string_lossy()),
            Err(_) => p.display().to_string(),
        }
    }
}

/// The names of one gate's (or one batch's) stdout and stderr logs in a run's folder.
pub fn log_names(gate: &str, batch: usize) -> [String; 2] {
    let stem = if batch == 0 {
        gate.to_string()
    } else {
        format!("{gate}.{}", batch + 1)
    };
    [format!("{stem}.stdout"), format!("{stem}.stderr")]
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
///
/// Once `KEEP_RUNS` folders exist, the oldest one that no run holds is taken over (renamed)
/// instead of a new one being made: making a folder and its log files allocates inodes, and
/// removing old ones frees them, which together cost more than the linter's own run on some
/// file systems (an ext4 without a journal scans the recently freed inodes at every allocation).
/// A folder taken over keeps its inode, and a log of the same name written again keeps the
/// file's; what the old run left and this one does not write is removed when the run ends.
pub fn new_run_dir(root: &Path) -> std::io::Result<RunDir> {
    let runs = root.join(".qgates").join("runs");
    if let Some(dir) = reserve_oldest(&runs).and_then(|r| r.into_run_dir(root).ok()) {
        return Ok(dir);
    }
    make_run_dir(root)
}

/// A new, empty run folder (the system's temporary folder when the workspace is not writable).
fn make_run_dir(root: &Path) -> std::io::Result<RunDir> {
    // A new folder is unlocked from its `mkdir` to its lock: a run that prunes (holding the
    // folder's lock while it removes it) may take it for an old one in that moment if this
    // thread waited long enough for many newer runs to start (tests that start runs on several
    // threads at once do). Such a folder is made again under a new id.
    for _ in 0..3 {
        let dir = make_run_dir_once(root)?;
        if !dir.in_workspace
            || dir
                .in_use
                .as_ref()
                .is_some_and(|f| still_there(f, &dir.path))
        {
            return Ok(dir);
        }
    }
    make_run_dir_once(root)
}

/// Whether the folder open as `folder` is still the one at `path` (not removed, not renamed).
fn still_there(folder: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (folder.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.ino() == named.ino() && open.dev() == named.dev(),
        _ => false,
    }
}

fn make_run_dir_once(root: &Path) -> std::io::Result<RunDir> {
    let id = new_run_id();
    match make_in_workspace(root, &id) {
        Ok(path) => Ok(RunDir {
            display: format!(".qgates/runs/{id}"),
            in_use: lock_folder(&path),
            id,
            path,
            in_workspace: true,
            leftovers: Arc::default(),
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
                leftovers: Arc::default(),
            })
        }
    }
}

/// Makes the run folder `id` under `<root>/.qgates/runs/`.
fn make_in_workspace(root: &Path, id: &str) -> std::io::Result<PathBuf> {
    let qgates = root.join(".qgates");
    let runs = qgates.join("runs");
    let path = runs.join(id);
    // The run's own folder first: `runs/` exists after the first run, and one `mkdir` is then
    // all it takes.
    match std::fs::create_dir(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(&runs)?;
            std::fs::create_dir(&path)?;
        }
        Err(e) => return Err(e),
    }
    ensure_gitignore(&qgates);
    Ok(path)
}

/// Opens a run's folder and takes an exclusive lock on it, held until the last clone of its
/// `RunDir` is dropped (or the process ends). Where folders cannot be opened or locked (not on
/// Linux and the like), runs go unlocked and pruning keeps only its order by time.
fn lock_folder(path: &Path) -> Option<Arc<File>> {
    let folder = File::open(path).ok()?;
    folder.try_lock().ok()?;
    Some(Arc::new(folder))
}

/// A run folder set aside to become a new run's folder, locked: an old run's, under its old name
/// and with its old logs (see [`new_run_dir`]), or a new one.
#[derive(Debug)]
struct Reserved {
    folder: File,
    path: PathBuf,
    /// The files in it; those the new run does not write go when it ends.
    names: HashSet<OsString>,
    /// Made for the purpose: removed if no run takes it.
    new: bool,
}

impl Drop for Reserved {
    fn drop(&mut self) {
        if self.new {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

impl Reserved {
    /// Renamed to a new run's id: the new run's folder, whose old logs go once the run ends.
    fn into_run_dir(mut self, root: &Path) -> std::io::Result<RunDir> {
        let id = new_run_id();
        let path = root.join(".qgates").join("runs").join(&id);
        std::fs::rename(&self.path, &path)?;
        self.new = false;
        let folder = self.folder.try_clone()?;
        Ok(RunDir {
            display: format!(".qgates/runs/{id}"),
            in_use: Some(Arc::new(folder)),
            leftovers: Arc::new(Leftovers {
                folder: path.clone(),
                names: Mutex::new(std::mem::take(&mut self.names)),
            }),
            id,
            path,
            in_workspace: true,
        })
    }

    /// Makes the empty logs of `names` that are not there yet, so that the run that takes the
    /// folder makes no file (allocating a file is the slowest step of a start on some file
    /// systems); one it does not write goes when it ends.
    fn prepare(&mut self, names: &[String]) {
        for name in names {
            let name = OsString::from(name);
            if !self.names.contains(&name) && File::create(self.path.join(&name)).is_ok() {
                self.names.insert(name);
            }
        }
    }
}

/// A new folder, locked, set aside for a run (`None` when the workspace is not writable).
fn reserve_new(root: &Path) -> Option<Reserved> {
    let path = make_in_workspace(root, &new_run_id()).ok()?;
    let reserved = Reserved {
        folder: File::open(&path).ok()?,
        path,
        names: HashSet::new(),
        new: true,
    };
    // Unlocked, any run could take it: dropped (and removed) instead.
    reserved.folder.try_lock().ok()?;
    Some(reserved)
}

/// Locks the oldest run folder that no run holds, once `KEEP_RUNS` or more exist, and returns it
/// with the names of the files in it. The lock is taken on the folder itself, so two runs never
/// take the same folder, and a run never takes a folder another run still writes to.
fn reserve_oldest(runs: &Path) -> Option<Reserved> {
    let mut dirs = run_folders(runs)?;
    if dirs.len() < KEEP_RUNS {
        return None;
    }
    dirs.sort_by_key(|p| sort_key(p));
    // Only among those that pruning would remove once this run's folder is added.
    let candidates = dirs.len() + 1 - KEEP_RUNS;
    for old in dirs.into_iter().take(candidates) {
        let Ok(folder) = File::open(&old) else {
            continue;
        };
        if folder.try_lock().is_err() {
            continue;
        }
        let names = std::fs::read_dir(&old)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name())
                    .collect()
            })
            .unwrap_or_default();
        return Some(Reserved {
            folder,
            path: old,
            names,
            new: false,
        });
    }
    None
}

/// The next run's folder, set aside (with its logs) while the current run's tools work or
/// before the first run, so that a run started by a save costs one rename instead of a
/// listing, a lock, a rename and maybe new files (a language server runs every save; a single
/// `qgates check` has no next run and makes its folder as it goes).
#[derive(Debug, Default)]
pub struct RunDirs {
    reserved: Mutex<Option<Reserved>>,
}

impl RunDirs {
    /// A folder for a new run: the one set aside, else one found or made now.
    pub fn new_run_dir(&self, root: &Path) -> std::io::Result<RunDir> {
        let reserved = self
            .reserved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        // A folder removed or renamed by hand meanwhile: found or made again.
        if let Some(dir) = reserved.and_then(|r| r.into_run_dir(root).ok()) {
            return Ok(dir);
        }
        new_run_dir(root)
    }

    /// Sets a folder aside for the next run, if none is: the oldest one once `KEEP_RUNS` exist,
    /// else a new one; with the files `logs` names in it (blocking file system work: off the
    /// runtime's threads).
    pub fn reserve_next(&self, root: &Path, logs: &[String]) {
        // The file system work happens without the lock held: a run starting meanwhile does
        // not wait for it (it finds or makes its own folder).
        let held = self
            .reserved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let mut reserved = held.or_else(|| {
            reserve_oldest(&root.join(".qgates").join("runs")).or_else(|| reserve_new(root))
        });
        if let Some(r) = reserved.as_mut() {
            r.prepare(logs);
        }
        let mut slot = self.reserved.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = reserved;
        }
    }
}

/// The run folders under `runs` (by the directory entries' own types: no stat per folder).
fn run_folders(runs: &Path) -> Option<Vec<PathBuf>> {
    let entries = std::fs::read_dir(runs).ok()?;
    Some(
        entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect(),
    )
}

/// The file system's own clock, read before a run reads any file: the reference of the
/// racy-clean rule (see `Stamp::trustworthy`). Touches `.qgates/runs` (made if missing) and
/// reads back the change time the file system gave it. `None` when the workspace is not
/// writable.
pub fn file_system_now(root: &Path) -> Option<SystemTime> {
    let runs = root.join(".qgates").join("runs");
    let folder = match File::open(&runs) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(&runs).ok()?;
            ensure_gitignore(&root.join(".qgates"));
            File::open(&runs).ok()?
        }
        Err(_) => return None,
    };
    // UTIME_NOW, not a time of ours: it needs only write access (an explicit time needs
    // ownership), and the file system stamps the change time from its own clock either way.
    let times = [
        libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_OMIT,
        },
        libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_NOW,
        },
    ];
    // SAFETY: futimens reads the two timespecs and sets the times of a descriptor we own.
    if unsafe { libc::futimens(folder.as_raw_fd(), times.as_ptr()) } != 0 {
        return None;
    }
    crate::core::stamp::Stamp::changed(&folder.metadata().ok()?)
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
        // Under the folder's lock: a run taking the folder over, or one whose new folder this
        // is, cannot lock it meanwhile, and one that locked it first keeps it.
        let Ok(folder) = File::open(&d) else { continue };
        match folder.try_lock() {
            Ok(()) | Err(std::fs::TryLockError::Error(_)) => {
                let _ = std::fs::remove_dir_all(&d);
            }
            Err(std::fs::TryLockError::WouldBlock) => {}
        }
    }
}

/// All but the newest `keep` run folders (by name, which sorts by time) once there are more than
/// `keep + slack`, and never `current`.
fn old(runs: &Path, keep: usize, slack: usize, current: &Path) -> Vec<PathBuf> {
    let Some(mut dirs) = run_folders(runs) else {
        return Vec::new();
    };
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

    /// The names in a folder, sorted.
    fn names_in(folder: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Writes the `lint` logs of a run in a folder taken over, ends the run, and checks that the
    /// old run's other logs went; the folder's path.
    fn only_the_new_run_s_logs_stay(dir: RunDir) -> PathBuf {
        let (out, err) = dir.log_paths("lint", 0);
        std::fs::write(&out, "new output").unwrap();
        std::fs::write(&err, "").unwrap();
        let path = dir.path.clone();
        drop(dir);
        assert_eq!(
            names_in(&path),
            ["lint.stderr", "lint.stdout"],
            "the old run's other logs went"
        );
        path
    }

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
        for _ in 0..KEEP_RUNS {
            made.push(create_run_dir(root).unwrap().id);
        }
        assert_eq!(left().len(), KEEP_RUNS);
        // From then on each run takes the oldest folder over: the newest KEEP_RUNS stay.
        for _ in 0..KEEP_RUNS + 3 {
            made.push(create_run_dir(root).unwrap().id);
            let left = left();
            assert_eq!(left.len(), KEEP_RUNS);
            for newest in &made[made.len() - KEEP_RUNS..] {
                assert!(left.contains(newest), "{newest} was taken over or pruned");
            }
        }
        assert!(root.join(".qgates/.gitignore").is_file());
    }

    #[test]
    fn more_folders_than_kept_and_the_slack_are_pruned() {
        // Folders beyond the slack (left by many runs at once, or an older version) go too.
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let runs = root.join(".qgates/runs");
        for n in 0..KEEP_RUNS + PRUNE_SLACK + 5 {
            std::fs::create_dir_all(runs.join(format!("20200101-000000-000000-1-{n}"))).unwrap();
        }
        let dir = create_run_dir(root).unwrap();
        assert!(dir.path.is_dir());
        assert_eq!(std::fs::read_dir(&runs).unwrap().count(), KEEP_RUNS);
    }

    #[test]
    fn a_folder_taken_over_keeps_its_inodes_and_only_the_new_run_s_logs() {
        use std::os::unix::fs::MetadataExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let mut first = None;
        for i in 0..KEEP_RUNS {
            let dir = new_run_dir(root).unwrap();
            let (out, err) = dir.log_paths("lint", 0);
            std::fs::write(&out, "old output").unwrap();
            std::fs::write(&err, "").unwrap();
            std::fs::write(dir.log_paths("types", 0).0, "old types").unwrap();
            if i == 0 {
                first = Some((
                    std::fs::metadata(&dir.path).unwrap().ino(),
                    std::fs::metadata(&out).unwrap().ino(),
                ));
            }
        }
        let (folder_ino, log_ino) = first.unwrap();
        let dir = new_run_dir(root).unwrap();
        assert_eq!(
            std::fs::metadata(&dir.path).unwrap().ino(),
            folder_ino,
            "the oldest folder was taken over"
        );
        let out = dir.log_paths("lint", 0).0;
        only_the_new_run_s_logs_stay(dir);
        assert_eq!(std::fs::metadata(&out).unwrap().ino(), log_ino);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "new output");
    }

    #[test]
    fn the_folder_set_aside_is_the_next_run_s_and_nothing_else_takes_it() {
        use std::os::unix::fs::MetadataExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let dirs = RunDirs::default();
        let logs = log_names("lint", 0);
        // Fewer than KEEP_RUNS folders: a new one, with the logs asked for, empty.
        dirs.reserve_next(root, &logs);
        let first = dirs.new_run_dir(root).unwrap();
        let names = names_in(&first.path);
        assert_eq!(names, ["lint.stderr", "lint.stdout"]);
        std::fs::write(first.log_paths("lint", 0).0, "old output").unwrap();
        drop(first);
        // A new folder no run took is removed with its logs.
        dirs.reserve_next(root, &logs);
        let unused = dirs.reserved.lock().unwrap().as_ref().unwrap().path.clone();
        assert!(unused.join("lint.stdout").is_file());
        *dirs.reserved.lock().unwrap() = None;
        assert!(!unused.exists(), "the unused new folder went");
        for _ in 1..KEEP_RUNS {
            let dir = dirs.new_run_dir(root).unwrap();
            std::fs::write(dir.log_paths("lint", 0).0, "old output").unwrap();
            std::fs::write(dir.log_paths("types", 0).0, "old types").unwrap();
        }
        dirs.reserve_next(root, &[]);
        let (set_aside, ino) = {
            let reserved = dirs.reserved.lock().unwrap();
            let r = reserved.as_ref().expect("the oldest folder is set aside");
            (r.path.clone(), std::fs::metadata(&r.path).unwrap().ino())
        };
        // Meanwhile other runs neither take it over nor prune it.
        for _ in 0..PRUNE_SLACK + 2 {
            let other = create_run_dir(root).unwrap();
            assert_ne!(std::fs::metadata(&other.path).unwrap().ino(), ino);
        }
        assert!(set_aside.is_dir(), "pruning kept the folder set aside");
        let dir = dirs.new_run_dir(root).unwrap();
        assert_eq!(std::fs::metadata(&dir.path).unwrap().ino(), ino);
        assert!(!set_aside.exists(), "renamed to the new run's id");
        assert!(
            dir.id
                > set_aside
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
        );
        let path = only_the_new_run_s_logs_stay(dir);
        assert!(dirs.reserved.lock().unwrap().is_none());
        assert!(path.is_dir(), "a folder a run took stays");
    }

    #[test]
    fn a_folder_in_use_is_never_taken_over() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let oldest = new_run_dir(root).unwrap();
        std::fs::write(oldest.log_paths("lint", 0).0, "still writing").unwrap();
        for _ in 0..KEEP_RUNS + 5 {
            drop(new_run_dir(root).unwrap());
        }
        assert!(oldest.path.is_dir());
        assert_eq!(
            std::fs::read_to_string(oldest.log_paths("lint", 0).0).unwrap(),
            "still writing"
        );
    }

    #[test]
    fn the_file_system_clock_is_read_from_the_runs_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let before = SystemTime::now() - std::time::Duration::from_secs(1);
        let now = file_system_now(tmp.path()).expect("a writable workspace has a clock");
        assert!(now >= before, "{now:?} < {before:?}");
        assert!(tmp.path().join(".qgates/runs").is_dir());
        assert!(tmp.path().join(".qgates/.gitignore").is_file());
        // A file written afterwards is not older than it.
        let f = tmp.path().join("a.py");
        std::fs::write(&f, "x = 1\n").unwrap();
        let m = std::fs::metadata(&f).unwrap();
        assert!(crate::core::stamp::Stamp::changed(&m).unwrap() >= now);
    }
}
