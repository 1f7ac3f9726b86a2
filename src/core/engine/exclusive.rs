//! `exclusive: true`: gates that must never run at the same time (two suites on one database,
//! port or build folder). Within a process a mutex per workspace orders them; across processes
//! (the language server and a `qgates check` in a terminal) an exclusive `flock` on
//! `.qgates/exclusive.lock`, opened without following a link like the state's lock. The mutex
//! comes first, so the gates of one process queue in memory rather than on the file. A gate that
//! has to wait says so in the log: a run that seems stuck is waiting for another one.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use crate::core::config::Gate;
use crate::core::workspace::{qgates_dir, safe_fs};

/// Held while an exclusive gate runs; dropping it lets the next one start.
pub struct ExclusiveGuard {
    _local: OwnedMutexGuard<()>,
    /// `None` when the lock file could not be opened (a read-only `.qgates/`): then only this
    /// process is kept in order.
    _file: Option<File>,
}

static LOCAL: Mutex<Option<HashMap<PathBuf, Arc<AsyncMutex<()>>>>> = Mutex::new(None);

fn local_mutex(root: &Path) -> Arc<AsyncMutex<()>> {
    let mut map = LOCAL.lock().unwrap_or_else(PoisonError::into_inner);
    map.get_or_insert_with(HashMap::new)
        .entry(root.to_path_buf())
        .or_default()
        .clone()
}

/// Waits until no other exclusive gate of the workspace runs, in this process or another.
pub async fn acquire(root: &Path, gate: &Gate) -> ExclusiveGuard {
    let mutex = local_mutex(root);
    let local = match mutex.clone().try_lock_owned() {
        Ok(guard) => guard,
        Err(_) => {
            tracing::warn!(
                "gate `{}` waits for another exclusive gate of this run to finish",
                gate.id
            );
            mutex.lock_owned().await
        }
    };
    let file = match open_lock(root) {
        Ok(file) => lock_file(file, gate).await,
        Err(e) => {
            tracing::warn!(
                "gate `{}`: {} cannot be used ({e}); exclusive gates are kept apart in this process only",
                gate.id,
                qgates_dir::exclusive_lock_file(root).display()
            );
            None
        }
    };
    ExclusiveGuard {
        _local: local,
        _file: file,
    }
}

fn open_lock(root: &Path) -> std::io::Result<File> {
    qgates_dir::make(root, "")?;
    safe_fs::open_lock_file(&qgates_dir::exclusive_lock_file(root))
}

/// Takes the file lock, waiting (off the runtime's threads) while another process holds it.
/// `None` when locking itself fails (a file system without locks): the gate then runs, kept
/// apart from this process's exclusive gates only, rather than never.
async fn lock_file(file: File, gate: &Gate) -> Option<File> {
    match file.try_lock() {
        Ok(()) => return Some(file),
        Err(std::fs::TryLockError::WouldBlock) => tracing::warn!(
            "gate `{}` waits for an exclusive gate of another qgates process on this workspace (.qgates/exclusive.lock)",
            gate.id
        ),
        Err(std::fs::TryLockError::Error(e)) => {
            tracing::warn!(
                "gate `{}`: the exclusive lock failed ({e}); waiting for it",
                gate.id
            )
        }
    }
    let waited = tokio::task::spawn_blocking(move || file.lock().map(|()| file)).await;
    match waited {
        Ok(Ok(file)) => Some(file),
        Ok(Err(e)) => {
            tracing::warn!("gate `{}`: the exclusive lock failed ({e})", gate.id);
            None
        }
        Err(e) => {
            tracing::warn!(
                "gate `{}`: waiting for the exclusive lock failed ({e})",
                gate.id
            );
            None
        }
    }
}
