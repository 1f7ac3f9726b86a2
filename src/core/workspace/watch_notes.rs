//! A language server's note that it lost its watch over a folder's files (docs/lsp.md, "File
//! events"), so `qgates status` can say why saves there take a whole `git status`. One file per
//! server, `.qgates/servers/<pid>.json`, removed when the server stops; a note whose process is
//! gone (a server that crashed) is not shown, and one git tracks came with the repository.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::core::platform;
use crate::core::workspace::{qgates_dir, safe_fs};

const FOLDER: &str = "servers";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchNote {
    /// The language server's process.
    pub pid: u32,
    /// When the watch was lost, seconds since the Unix epoch.
    pub since: u64,
    /// Why, as the server logged it.
    pub problem: String,
}

fn path_for(root: &Path, pid: u32) -> PathBuf {
    qgates_dir::dir(root)
        .join(FOLDER)
        .join(format!("{pid}.json"))
}

/// Records that this process lost its watch over `root`, and why.
pub fn write(root: &Path, problem: &str) -> std::io::Result<()> {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let note = WatchNote {
        pid: std::process::id(),
        since,
        problem: problem.to_owned(),
    };
    qgates_dir::make(root, FOLDER)?;
    let bytes = serde_json::to_vec_pretty(&note).map_err(std::io::Error::other)?;
    safe_fs::write_atomic(&path_for(root, note.pid), &bytes, 0o644)
}

/// Removes this process's note, if it wrote one.
pub fn remove(root: &Path) {
    let _ = std::fs::remove_file(path_for(root, std::process::id()));
}

/// The notes of servers still running, oldest first.
pub fn live(root: &Path) -> Vec<WatchNote> {
    let Ok(entries) = std::fs::read_dir(qgates_dir::dir(root).join(FOLDER)) else {
        return Vec::new();
    };
    let mut notes: Vec<WatchNote> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| qgates_dir::tracked_warning(root, &e.path(), "a server's note").is_none())
        .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
        .filter(|n: &WatchNote| i32::try_from(n.pid).is_ok_and(platform::process_exists))
        .collect();
    notes.sort_by_key(|n| n.since);
    notes
}
