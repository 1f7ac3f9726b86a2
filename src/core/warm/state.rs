//! What `.qgates/warm/<gate id>/` holds for one warm process: what its keeper runs
//! (`spec.json`, written by whoever starts it), what is running (`state.json`, written by the
//! keeper), when it was last asked (`used`'s modification time), and the lock taken while one
//! is started. The folder comes with the workspace, so nothing in it is believed on its word: a
//! keeper is ours only while its process runs qgates' keeper over this very folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::core::platform;
use crate::core::workspace::{qgates_dir, safe_fs};

/// The argument that makes the binary a keeper (`main` checks it before parsing arguments).
pub const KEEPER_ARG: &str = "__warm-keeper";

/// What a keeper runs and keeps: written before it starts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeeperSpec {
    pub gate: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: BTreeMap<String, String>,
    /// The daemon takes checks once this file exists; without one, as soon as it runs.
    pub ready_file: Option<PathBuf>,
    /// Seconds after the last check before the keeper stops it.
    pub idle_s: f64,
    /// Of everything that makes this daemon the right one (`Identity`).
    pub identity: String,
    /// `program` is a language server: the keeper speaks to it and answers on its socket.
    #[serde(default)]
    pub language_server: bool,
    /// The workspace root (violations' paths are relative to it).
    pub root: PathBuf,
    /// A language server's settings (`RawWarm::settings`).
    #[serde(default)]
    pub settings: Option<serde_json::Value>,
}

/// What a keeper is running: written by the keeper once its daemon runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeeperState {
    pub gate: String,
    pub keeper_pid: u32,
    pub daemon_pid: u32,
    pub identity: String,
    /// Seconds since the Unix epoch.
    pub started: u64,
    /// The daemon's command, for `qgates status`.
    pub command: String,
    /// The daemon takes checks.
    pub ready: bool,
    pub idle_s: f64,
}

impl KeeperState {
    /// This keeper's state, running `spec`'s command as `daemon_pid`.
    pub fn of(spec: &KeeperSpec, daemon_pid: u32, ready: bool) -> KeeperState {
        KeeperState {
            gate: spec.gate.clone(),
            keeper_pid: std::process::id(),
            daemon_pid,
            identity: spec.identity.clone(),
            started: now_s(),
            command: std::iter::once(spec.program.display().to_string())
                .chain(spec.args.iter().cloned())
                .collect::<Vec<_>>()
                .join(" "),
            ready,
            idle_s: spec.idle_s,
        }
    }
}

/// Whether this keeper should stop: its workspace is gone, it was idle `idle`, or another
/// keeper took the folder over (a restart that could not stop this one).
pub fn keeper_done(dir: &Path, idle: Duration) -> bool {
    if !dir.exists() || idle_for(dir).is_none_or(|d| d >= idle) {
        return true;
    }
    let current: Option<KeeperState> = read_json(&state_file(dir));
    current.is_some_and(|s| s.keeper_pid != std::process::id())
}

/// Clears the folder's state when it is this keeper's (not a successor's); whether it was.
pub fn clear_if_ours(dir: &Path) -> bool {
    let current: Option<KeeperState> = read_json(&state_file(dir));
    let ours = current.is_none_or(|s| s.keeper_pid == std::process::id());
    if ours {
        let _ = std::fs::remove_file(state_file(dir));
    }
    ours
}

pub fn warm_root(root: &Path) -> PathBuf {
    qgates_dir::dir(root).join("warm")
}

pub fn folder(root: &Path, gate: &str) -> PathBuf {
    warm_root(root).join(gate)
}

pub fn spec_file(dir: &Path) -> PathBuf {
    dir.join("spec.json")
}

pub fn state_file(dir: &Path) -> PathBuf {
    dir.join("state.json")
}

pub fn used_file(dir: &Path) -> PathBuf {
    dir.join("used")
}

pub fn socket_file(dir: &Path) -> PathBuf {
    dir.join("socket")
}

/// Why the last start failed, kept so each check does not pay for another failed start.
pub fn failed_file(dir: &Path) -> PathBuf {
    dir.join("failed.json")
}

/// A start that failed: for which identity, when, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FailedStart {
    pub identity: String,
    /// Seconds since the Unix epoch.
    pub at: u64,
    pub message: String,
}

pub fn lock_file(dir: &Path) -> PathBuf {
    dir.join("start.lock")
}

pub fn daemon_log(dir: &Path) -> PathBuf {
    dir.join("daemon.log")
}

pub fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

pub fn write_json<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    safe_fs::write_atomic(path, &bytes, 0o600)
}

pub fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Option<T> {
    let file = platform::open_read_no_follow_no_wait(path).ok()?;
    serde_json::from_reader(std::io::BufReader::new(file)).ok()
}

/// The folder's keeper, when one of ours runs there now.
pub fn live_keeper(dir: &Path) -> Option<KeeperState> {
    let state: KeeperState = read_json(&state_file(dir))?;
    is_our_keeper(state.keeper_pid, dir).then_some(state)
}

/// Whether `pid` runs qgates' keeper over `dir`: a pid from the folder may name any process.
pub fn is_our_keeper(pid: u32, dir: &Path) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    pid > 1
        && platform::command_line(pid).is_some_and(|cmd| {
            cmd.contains(KEEPER_ARG) && cmd.ends_with(&dir.display().to_string())
        })
}

/// Records a check now, so the keeper's idle time starts again.
pub fn touch_used(dir: &Path) {
    if let Ok(file) = safe_fs::create_nofollow(&used_file(dir)) {
        let _ = file.set_modified(SystemTime::now());
    }
}

/// How long ago the daemon was last asked; `None` when it never was.
pub fn idle_for(dir: &Path) -> Option<Duration> {
    let modified = std::fs::symlink_metadata(used_file(dir))
        .and_then(|m| m.modified())
        .ok()?;
    Some(
        SystemTime::now()
            .duration_since(modified)
            .unwrap_or_default(),
    )
}
