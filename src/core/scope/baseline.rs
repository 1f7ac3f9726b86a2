//! The baseline state: per branch, the last all-green commit and the files that failed since.
//! Shared by the CLI, the language server and the agent server, so every change happens under
//! an exclusive file lock and is written atomically (temporary file + rename). A corrupt file is
//! moved aside, never silently overwritten.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::core::workspace::{qgates_dir, safe_fs};

/// `.qgates/state.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    #[serde(default)]
    pub branches: BTreeMap<String, BranchState>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchState {
    /// The last commit at which every blocking gate passed; `None` before the first green run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_sha: Option<String>,
    /// Files with blocking findings that no run has seen pass since.
    #[serde(default)]
    pub failed_files: Vec<String>,
}

/// What a finished run tells the state machine.
#[derive(Debug, Clone, Default)]
pub struct RunOutcome {
    /// No blocking gate failed or errored.
    pub green: bool,
    /// Files that every gate applicable to them checked and passed in this run.
    pub passed_files: BTreeSet<String>,
    /// Files with blocking findings in this run.
    pub failed_files: BTreeSet<String>,
}

/// The next state of a branch after a run over the auto or branch scope at commit `head`.
/// Green: the baseline moves to `head` and nothing is remembered as failed. Otherwise the
/// baseline stays and `failed = (previous − passed now) ∪ failed now`.
pub fn advance(prev: &BranchState, head: Option<&str>, run: &RunOutcome) -> BranchState {
    if run.green {
        return BranchState {
            baseline_sha: head.map(str::to_string).or(prev.baseline_sha.clone()),
            failed_files: Vec::new(),
        };
    }
    let mut failed: BTreeSet<String> = prev
        .failed_files
        .iter()
        .filter(|f| !run.passed_files.contains(*f))
        .cloned()
        .collect();
    failed.extend(run.failed_files.iter().cloned());
    BranchState {
        baseline_sha: prev.baseline_sha.clone(),
        failed_files: failed.into_iter().collect(),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot lock {path}: {source}")]
    Lock {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    /// Git tracks the state file: it is neither believed nor written (see `StateStore::load`).
    #[error("{0}")]
    Tracked(String),
}

/// The state file of one workspace.
#[derive(Debug, Clone)]
pub struct StateStore {
    root: PathBuf,
}

/// What reading found besides the state: a warning to show in the report.
pub type Warning = Option<String>;

impl StateStore {
    /// The store under `<root>/.qgates/`.
    pub fn new(root: &Path) -> Self {
        StateStore {
            root: root.to_path_buf(),
        }
    }

    pub fn path(&self) -> PathBuf {
        qgates_dir::state_file(&self.root)
    }

    /// Reads the state under the lock. A missing file is an empty state; a corrupt one is moved
    /// aside (`state.json.corrupt-<time>`) and reported. A `.qgates/` this user cannot write is
    /// read without the lock (writers rename a whole file into place). A state file git tracks
    /// came with the repository (a commit could move the baseline past files it never checked):
    /// it reads as empty, with a warning, and nothing is written.
    pub fn load(&self) -> Result<(State, Warning), StateError> {
        if let Some(warning) = self.tracked() {
            return Ok((State::default(), Some(warning)));
        }
        match self.lock() {
            Ok(_lock) => Ok(self.read_unlocked()),
            Err(StateError::Lock { path, source }) if is_read_only(&source) => {
                let (state, warning) = self.read_unlocked();
                let note =
                    format!("the baseline state was read without its lock ({path}: {source})");
                Ok((
                    state,
                    Some(warning.map_or(note.clone(), |w| format!("{w}; {note}"))),
                ))
            }
            Err(e) => Err(e),
        }
    }

    /// Changes the state atomically: lock, read, apply `change`, write to a temporary file, rename.
    /// Concurrent processes serialize here, so no update is lost.
    pub fn update<T>(
        &self,
        change: impl FnOnce(&mut State) -> T,
    ) -> Result<(T, Warning), StateError> {
        // Writing would change the user's checkout, and keep a state the repository chose.
        if let Some(warning) = self.tracked() {
            return Err(StateError::Tracked(warning));
        }
        let _lock = self.lock()?;
        let (mut state, warning) = self.read_unlocked();
        let before = state.clone();
        let out = change(&mut state);
        // An unchanged state (every save of a file that still fails) is not written again.
        if warning.is_none() && state == before && self.path().is_file() {
            return Ok((out, warning));
        }
        self.write_unlocked(&state)?;
        Ok((out, warning))
    }

    /// The warning when git tracks the state file (see `qgates_dir::tracked_warning`).
    fn tracked(&self) -> Option<String> {
        let warning = qgates_dir::tracked_warning(&self.root, &self.path(), "baseline state");
        if let Some(w) = &warning {
            tracing::warn!("{w}");
        }
        warning
    }

    fn lock(&self) -> Result<File, StateError> {
        let lock_err = |path: PathBuf| {
            move |source| StateError::Lock {
                path: path.display().to_string(),
                source,
            }
        };
        let dir =
            qgates_dir::make(&self.root, "").map_err(lock_err(qgates_dir::dir(&self.root)))?;
        let path = dir.join("state.lock");
        lock_exclusive(&path).map_err(lock_err(path))
    }

    fn read_unlocked(&self) -> (State, Warning) {
        let path = self.path();
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (State::default(), None),
            Err(e) => {
                return (
                    State::default(),
                    Some(format!(
                        "{} could not be read ({e}); this run starts from an empty state",
                        path.display()
                    )),
                );
            }
        };
        match serde_json::from_slice::<State>(&bytes) {
            Ok(state) => (state, None),
            Err(e) => {
                let aside = path.with_file_name(format!("state.json.corrupt-{}", timestamp()));
                let moved = std::fs::rename(&path, &aside);
                let what = match moved {
                    Ok(()) => format!(
                        "moved aside to .qgates/{}",
                        aside.file_name().unwrap_or_default().to_string_lossy()
                    ),
                    Err(m) => format!("could not be moved aside ({m})"),
                };
                (
                    State::default(),
                    Some(format!(
                        ".qgates/state.json was corrupt ({e}) and {what}; this run counts as a first run"
                    )),
                )
            }
        }
    }

    fn write_unlocked(&self, state: &State) -> Result<(), StateError> {
        let path = self.path();
        let err = |e| StateError::Write {
            path: path.display().to_string(),
            source: e,
        };
        let mut json =
            serde_json::to_vec_pretty(state).map_err(|e| err(std::io::Error::other(e)))?;
        json.push(b'\n');
        safe_fs::write_atomic(&path, &json, 0o644).map_err(err)
    }
}

/// An error that says the folder cannot be written at all (rather than a passing fault).
fn is_read_only(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
    )
}

/// Opens (or makes) `path`, never through a link, and takes an exclusive lock on it, held until
/// the file is closed.
pub(crate) fn lock_exclusive(path: &Path) -> std::io::Result<File> {
    let file = safe_fs::open_lock_file(path)?;
    file.lock()?;
    Ok(file)
}

fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    qgates_dir::timestamp(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn green_moves_the_baseline_and_forgets_failures() {
        let prev = BranchState {
            baseline_sha: Some("a".into()),
            failed_files: vec!["x.py".into()],
        };
        let run = RunOutcome {
            green: true,
            ..Default::default()
        };
        assert_eq!(
            advance(&prev, Some("b"), &run),
            BranchState {
                baseline_sha: Some("b".into()),
                failed_files: vec![]
            }
        );
    }

    #[test]
    fn red_narrows_failures_and_keeps_the_baseline() {
        // The seed's example: a.py failed; a.py fixed and b.py newly broken.
        let prev = BranchState {
            baseline_sha: Some("A".into()),
            failed_files: vec!["a.py".into(), "c.py".into()],
        };
        let run = RunOutcome {
            green: false,
            passed_files: set(&["a.py"]),
            failed_files: set(&["b.py"]),
        };
        let next = advance(&prev, Some("B"), &run);
        assert_eq!(next.baseline_sha.as_deref(), Some("A"));
        assert_eq!(
            next.failed_files,
            vec!["b.py".to_string(), "c.py".to_string()]
        );
    }

    #[test]
    fn first_red_run_has_no_baseline() {
        let run = RunOutcome {
            green: false,
            passed_files: set(&[]),
            failed_files: set(&["a.py"]),
        };
        let next = advance(&BranchState::default(), Some("H"), &run);
        assert_eq!(
            next,
            BranchState {
                baseline_sha: None,
                failed_files: vec!["a.py".into()]
            }
        );
    }

    #[test]
    fn round_trip_and_corrupt_file_moved_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let store = StateStore::new(tmp.path());
        let ((), w) = store
            .update(|s| {
                s.branches.insert(
                    "main".into(),
                    BranchState {
                        baseline_sha: Some("abc".into()),
                        failed_files: vec![],
                    },
                );
            })
            .unwrap();
        assert!(w.is_none());
        let (state, _) = store.load().unwrap();
        assert_eq!(state.branches["main"].baseline_sha.as_deref(), Some("abc"));
        std::fs::write(store.path(), "{ not json").unwrap();
        let (state, warning) = store.load().unwrap();
        assert!(state.branches.is_empty());
        let warning = warning.unwrap();
        assert!(
            warning.contains("corrupt") && warning.contains("state.json.corrupt-"),
            "{warning}"
        );
        let aside: Vec<_> = std::fs::read_dir(tmp.path().join(".qgates"))
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("state.json.corrupt-")
            })
            .collect();
        assert_eq!(aside.len(), 1);
        assert_eq!(
            std::fs::read_to_string(aside[0].path()).unwrap(),
            "{ not json"
        );
    }

    #[test]
    fn an_update_that_changes_nothing_leaves_the_file_alone() {
        use std::os::unix::fs::MetadataExt;
        let tmp = tempfile::tempdir().unwrap();
        let store = StateStore::new(tmp.path());
        // No file yet: even an empty state is written, so the file exists after a run.
        store.update(|_| ()).unwrap();
        assert!(store.path().is_file());
        let fail = |s: &mut State| {
            s.branches.entry("main".into()).or_default().failed_files = vec!["a.py".into()];
        };
        store.update(fail).unwrap();
        let inode = || std::fs::metadata(store.path()).unwrap().ino();
        let written = inode();
        store.update(fail).unwrap();
        assert_eq!(inode(), written, "the same state was written again");
        store
            .update(|s| s.branches.get_mut("main").unwrap().failed_files.clear())
            .unwrap();
        assert_ne!(
            inode(),
            written,
            "a changed state is written (a new file, renamed)"
        );
        assert!(
            store.load().unwrap().0.branches["main"]
                .failed_files
                .is_empty()
        );
    }

    #[test]
    fn concurrent_updates_lose_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let root = root.clone();
                std::thread::spawn(move || {
                    for j in 0..20 {
                        StateStore::new(&root)
                            .update(|s| {
                                s.branches
                                    .entry("main".into())
                                    .or_default()
                                    .failed_files
                                    .push(format!("{i}-{j}"));
                            })
                            .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let (state, _) = StateStore::new(&root).load().unwrap();
        assert_eq!(state.branches["main"].failed_files.len(), 160);
    }
}
