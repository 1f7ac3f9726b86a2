//! The workspace on disk: its `.qgates/` folder and what lives there, paths named relative to
//! the root, a file's identity (stat stamp, git blob id, whether git tracks it), writing where a
//! symbolic link may wait, and the process's private scratch folder.

pub mod content_id;
pub mod paths;
pub mod qgates_dir;
pub mod run_logs;
pub mod safe_fs;
pub mod scratch;
pub mod stamp;
pub mod tracked;
pub mod watch_notes;
