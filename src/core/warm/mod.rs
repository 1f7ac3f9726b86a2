//! Warm processes: a slow tool's own daemon (mypy's `dmypy`) or its language server (pyright's),
//! started on a gate's first check and kept so later checks are answered from memory
//! (docs/warm.md). One per workspace and
//! gate, found through `.qgates/warm/<gate id>/` by every face: the language server, the agent
//! server and `qgates check --warm` share it. A keeper process (`keeper`) holds the daemon,
//! stops it after the idle time, and takes it down with itself however it ends; the daemon is
//! restarted when anything that makes it the right one changes (`identity`).
//!
//! The runner asks `check_command` how to ask: a command (or the daemon's own protocol) whose
//! output the gate's own reader reads, or the keeper's socket, which answers with a language
//! server's diagnostics (`language_server`). A warm process that fails is discarded and the
//! gate runs cold (`core::runner::warm_run`).

pub mod dmypy;
mod identity;
pub mod keeper;
mod language_server;
mod state;

use std::ffi::OsString;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::core::config::{Gate, Template, WarmSpec};
use crate::core::platform;
use crate::core::runner::process::resolve_program_borrowing;
use crate::core::workspace::qgates_dir::{self, Access};
use crate::core::workspace::safe_fs;
pub use language_server::ask;
pub use state::KEEPER_ARG;

/// The command that asks a warm daemon about files (they are appended).
#[derive(Debug, Clone)]
pub struct WarmCheck {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// Asked in the daemon's own protocol through this status file instead (`dmypy`).
    pub dmypy_status: Option<PathBuf>,
}

/// How a warm process is asked about files.
#[derive(Debug, Clone)]
pub enum Ask {
    /// A command whose output the gate's reader reads (a daemon's client).
    Command(WarmCheck),
    /// The keeper's socket, which answers with the language server's diagnostics
    /// (`language_server::ask`).
    Socket(PathBuf),
}

/// What starting or finding a gate's warm process needs.
pub struct WarmRequest<'a> {
    pub gate: &'a Gate,
    pub root: &'a Path,
    pub cwd: &'a Path,
    /// The gate's own program, resolved: a new version of it restarts the daemon.
    pub program: &'a Path,
    /// Arguments the tool's configuration adds (`args_when`): the daemon takes them.
    pub extra: &'a [OsString],
    pub lender: Option<&'a Path>,
    /// How long the daemon is kept after its last check.
    pub idle: Duration,
}

/// The command for this check, starting the daemon first when none of the right one runs.
/// Waits (off the runtime's threads) while another face of the workspace starts it. `Ok(None)`:
/// this program cannot keep one (a test binary serving in-process): the tool runs cold.
pub async fn check_command(request: WarmRequest<'_>) -> Result<Option<Ask>, String> {
    let Some(exe) = keeper_program() else {
        return Ok(None);
    };
    let plan = Plan::of(&request, exe)?;
    tokio::task::spawn_blocking(move || plan.ready())
        .await
        .map_err(|e| format!("starting it stopped unexpectedly ({e})"))?
        .map(Some)
}

/// The qgates program, which keeps warm processes; `None` for another program (only the
/// qgates binary knows the keeper's argument).
fn keeper_program() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    (exe.file_name()? == "qgates").then_some(exe)
}

/// A warm process, as `qgates status` shows it.
#[derive(Debug, Clone)]
pub struct WarmProcess {
    pub gate: String,
    /// The daemon's process id.
    pub pid: u32,
    pub command: String,
    pub age: Duration,
    /// Resident memory of the daemon, when it can be read.
    pub memory: Option<u64>,
    /// How long it is kept without a check.
    pub idle_left: Option<Duration>,
    pub ready: bool,
}

/// The workspace's warm processes that run now.
pub fn list(root: &Path) -> Vec<WarmProcess> {
    let Ok(entries) = std::fs::read_dir(state::warm_root(root)) else {
        return Vec::new();
    };
    let mut found: Vec<WarmProcess> = entries
        .flatten()
        .filter_map(|e| {
            let dir = e.path();
            let kept = state::live_keeper(&dir)?;
            let idle = Duration::from_secs_f64(kept.idle_s);
            Some(WarmProcess {
                gate: kept.gate,
                pid: kept.daemon_pid,
                command: kept.command,
                age: Duration::from_secs(state::now_s().saturating_sub(kept.started)),
                memory: platform::group_resident_bytes(kept.daemon_pid as i32),
                idle_left: state::idle_for(&dir).map(|d| idle.saturating_sub(d)),
                ready: kept.ready,
            })
        })
        .collect();
    found.sort_by(|a, b| a.gate.cmp(&b.gate));
    found
}

/// Stops the workspace's warm processes (of one gate when named); returns the gates stopped.
pub fn stop(root: &Path, gate: Option<&str>) -> Vec<String> {
    let running = list(root);
    let mut stopped = Vec::new();
    for p in running
        .into_iter()
        .filter(|p| gate.is_none_or(|g| g == p.gate))
    {
        discard(root, &p.gate);
        stopped.push(p.gate);
    }
    // A start that failed is tried again at the next check.
    if let Ok(entries) = std::fs::read_dir(state::warm_root(root)) {
        for e in entries.flatten() {
            if gate.is_none_or(|g| e.file_name() == g) {
                let _ = std::fs::remove_file(state::failed_file(&e.path()));
            }
        }
    }
    stopped
}

/// Records that a gate's warm process was just asked: its idle time starts after the check,
/// not before it.
pub fn used(root: &Path, gate: &str) {
    let dir = state::folder(root, gate);
    if dir.is_dir() {
        state::touch_used(&dir);
    }
}

/// Stops a gate's warm process, if one runs: after it failed, or before a restart.
pub fn discard(root: &Path, gate: &str) {
    let dir = state::folder(root, gate);
    if let Some(kept) = state::live_keeper(&dir) {
        stop_keeper(&dir, kept.keeper_pid);
    }
}

/// Asks the keeper to stop (it stops its daemon), and ends its group if it does not within a
/// few seconds (its reaper then ends the daemon).
fn stop_keeper(dir: &Path, pid: u32) {
    let pid = pid as i32;
    platform::terminate(pid);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while platform::process_exists(pid) && std::time::Instant::now() < deadline {
        // Our own child must be collected to be gone.
        platform::try_reap(pid);
        std::thread::sleep(Duration::from_millis(10));
    }
    if platform::process_exists(pid) {
        platform::kill_process_group(pid);
    }
    let _ = std::fs::remove_file(state::state_file(dir));
}

/// Everything `ready` needs, worked out before it waits.
struct Plan {
    exe: PathBuf,
    dir: PathBuf,
    keeper: state::KeeperSpec,
    ask: Ask,
}

impl Plan {
    fn of(r: &WarmRequest<'_>, exe: PathBuf) -> Result<Plan, String> {
        let spec =
            (r.gate.warm.as_ref()).ok_or_else(|| "the gate has no warm process".to_string())?;
        match qgates_dir::check(r.root) {
            Ok(Access::Writable) => {}
            Ok(Access::ReadOnly) => return Err(".qgates/ cannot be written here".into()),
            Err(e) => return Err(e.to_string()),
        }
        let dir = qgates_dir::make(r.root, &format!("warm/{}", r.gate.id))
            .map_err(|e| format!("cannot make .qgates/warm/{}: {e}", r.gate.id))?;
        let state_dir = dir.display().to_string();
        // A gate that names `{report_dir}` is never warm; this makes `\{` a literal brace.
        let gate_args: Vec<String> = (r.gate.command[1..].iter())
            .map(|a| crate::core::config::report_dir::expand(a, ""))
            .chain(r.extra.iter().map(|a| a.to_string_lossy().into_owned()))
            .collect();
        let fill = |arg: &str| {
            Template::parse(arg).render(|f| (f == "state").then_some(state_dir.as_str()))
        };
        let expand = |argv: &[String]| -> Vec<String> {
            (argv.iter())
                .flat_map(|a| match a.as_str() {
                    "{args}" => gate_args.clone(),
                    _ => vec![fill(a)],
                })
                .collect()
        };
        let commands: Vec<Vec<String>> = (spec.commands().into_iter())
            .map(|(_, argv)| expand(argv))
            .collect();
        let resolve = |name: &str| resolve_program_borrowing(name, r.root, r.cwd, r.lender);
        let programs = (commands.iter())
            .map(|argv| resolve(&argv[0]))
            .collect::<Result<Vec<PathBuf>, String>>()?;
        let identity = identity::of(
            r.gate,
            r.cwd,
            &(std::iter::once(r.program).chain(programs.iter().map(PathBuf::as_path)))
                .collect::<Vec<_>>(),
            &commands.iter().collect::<Vec<_>>(),
        );
        let (ready_file, ask) = match spec {
            WarmSpec::Daemon {
                ready_file,
                protocol,
                ..
            } => {
                let ready_file = ready_file.as_deref().map(|f| r.cwd.join(fill(f)));
                let check = WarmCheck {
                    program: programs[1].clone(),
                    args: commands[1][1..].iter().map(OsString::from).collect(),
                    dmypy_status: protocol.and(ready_file.clone()),
                };
                (ready_file, Ask::Command(check))
            }
            WarmSpec::LanguageServer { .. } => (None, Ask::Socket(state::socket_file(&dir))),
        };
        Ok(Plan {
            exe,
            keeper: state::KeeperSpec {
                gate: r.gate.id.clone(),
                program: programs[0].clone(),
                args: commands[0][1..].to_vec(),
                cwd: r.cwd.to_path_buf(),
                env: r.gate.env.clone(),
                ready_file,
                idle_s: r.idle.as_secs_f64(),
                identity,
                language_server: matches!(spec, WarmSpec::LanguageServer { .. }),
                root: r.root.to_path_buf(),
                settings: match spec {
                    WarmSpec::LanguageServer { settings, .. } => settings.clone(),
                    WarmSpec::Daemon { .. } => None,
                },
            },
            ask,
            dir,
        })
    }

    /// Finds the right daemon running, or starts it, one face at a time.
    fn ready(self) -> Result<Ask, String> {
        let _lock = safe_fs::open_lock_file(&state::lock_file(&self.dir))
            .and_then(|f| f.lock().map(|()| f))
            .map_err(|e| format!("cannot lock {}: {e}", state::lock_file(&self.dir).display()))?;
        if let Some(kept) = state::live_keeper(&self.dir) {
            if kept.identity == self.keeper.identity && kept.ready {
                state::touch_used(&self.dir);
                return Ok(self.ask);
            }
            // Another configuration, tool version or daemon that never got ready.
            stop_keeper(&self.dir, kept.keeper_pid);
        }
        if let Some(why) = self.failed_lately() {
            return Err(why);
        }
        state::write_json(&state::spec_file(&self.dir), &self.keeper).map_err(|e| {
            format!(
                "cannot write {}: {e}",
                state::spec_file(&self.dir).display()
            )
        })?;
        let failed = state::failed_file(&self.dir);
        match start_keeper(&self.exe, &self.dir) {
            Ok(()) => {
                let _ = std::fs::remove_file(&failed);
                Ok(self.ask)
            }
            Err(message) => {
                let record = state::FailedStart {
                    identity: self.keeper.identity.clone(),
                    at: state::now_s(),
                    message: message.clone(),
                };
                let _ = state::write_json(&failed, &record);
                Err(message)
            }
        }
    }

    /// Why the same warm process failed to start within the idle time, if it did: a start that
    /// fails (a tool whose daemon crashes at once, say) is not paid for again on every check.
    /// Another configuration or tool version, or `qgates daemon stop`, tries again at once.
    fn failed_lately(&self) -> Option<String> {
        let failed: state::FailedStart = state::read_json(&state::failed_file(&self.dir))?;
        let age = state::now_s().saturating_sub(failed.at) as f64;
        (failed.identity == self.keeper.identity && age < self.keeper.idle_s).then(|| {
            format!(
                "{} ago: {}; tried again in {}, or at once after `qgates daemon stop`",
                seconds(age),
                failed.message,
                seconds(self.keeper.idle_s - age)
            )
        })
    }
}

/// Seconds as a person reads them: `40 s`, `3 min`.
fn seconds(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else {
        format!("{:.0} min", s / 60.0)
    }
}

/// Starts the keeper over `dir` and waits for its first word: `ready`, or why not.
fn start_keeper(exe: &Path, dir: &Path) -> Result<(), String> {
    let log = safe_fs::create_nofollow(&dir.join("keeper.log"))
        .map_err(|e| format!("cannot write {}: {e}", dir.join("keeper.log").display()))?;
    let mut cmd = Command::new(exe);
    cmd.arg(KEEPER_ARG)
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log));
    // Its own group, out of the face's: it outlives the face that started it.
    platform::lead_new_process_group(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("the keeper could not start: {e}"))?;
    let said = child.stdout.take().and_then(|out| {
        let mut line = String::new();
        std::io::BufReader::new(out).read_line(&mut line).ok()?;
        Some(line.trim().to_string())
    });
    // Collected when it ends, so it leaves no zombie in a face that lives on.
    std::thread::spawn(move || child.wait());
    match said.as_deref() {
        Some("ready") => Ok(()),
        Some(line) if line.starts_with("failed: ") => Err(line["failed: ".len()..].to_string()),
        _ => Err(format!(
            "the keeper ended without a word; see {}",
            dir.join("keeper.log").display()
        )),
    }
}
