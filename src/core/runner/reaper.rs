//! Tools die with qgates even when qgates is killed with SIGKILL and can clean up nothing.
//!
//! The first tool a qgates process starts also starts a reaper: qgates' own binary
//! (`qgates __reaper`) in a process group of its own, reading from a pipe the process groups of
//! the tools that are running (`+pgid` when one starts, `-pgid` when it has been reaped). When
//! qgates ends, however it ends, the kernel closes its end of the pipe; the reaper reads the end
//! of its input and kills every group still listed (the tools and whatever they started).
//! (A parent-death signal would need code in each tool's child between fork and exec, making
//! every tool start a `fork` of the whole server instead of a `posix_spawn`.)

use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{LazyLock, Mutex};

use crate::core::platform;

/// The argument that makes the binary a reaper (`main` checks it before parsing the command line).
pub const ARG: &str = "__reaper";

/// This process's reaper and the pipe to it; `None` when it could not start (tools then go with
/// their groups on every way qgates ends but SIGKILL) or has been stopped.
static REAPER: LazyLock<Mutex<Option<(Child, ChildStdin)>>> = LazyLock::new(|| Mutex::new(start()));

fn start() -> Option<(Child, ChildStdin)> {
    let exe = std::env::current_exe().ok()?;
    // Only the qgates binary knows the argument (a test binary serving in-process would not).
    if exe.file_name()? != "qgates" {
        return None;
    }
    let mut cmd = Command::new(exe);
    cmd.arg(ARG)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // Out of the terminal's group: a Ctrl-C or hangup meant for qgates does not end it.
    let child = platform::lead_new_process_group(&mut cmd).spawn();
    match child {
        Ok(mut c) => c.stdin.take().map(|pipe| (c, pipe)),
        Err(e) => {
            tracing::warn!("the reaper could not start ({e}): tools would outlive a killed qgates");
            None
        }
    }
}

fn tell(line: String) {
    let mut reaper = REAPER.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, pipe)) = reaper.as_mut()
        && pipe.write_all(line.as_bytes()).is_err()
    {
        stop_locked(&mut reaper);
    }
}

/// Ends the reaper (when qgates stops its tools for good: `shutdown`, a signal), so no child of
/// qgates is left; tools started after this have none.
pub fn stop() {
    stop_locked(&mut REAPER.lock().unwrap_or_else(|e| e.into_inner()));
}

fn stop_locked(reaper: &mut Option<(Child, ChildStdin)>) {
    if let Some((child, pipe)) = reaper.take() {
        // The end of its input ends it.
        drop(pipe);
        reap(child.id() as i32);
    }
}

/// Starts the reaper before the first tool, so that the tool is not running unwatched while the
/// reaper itself starts (a SIGKILL then would leave it behind).
pub fn ready() {
    LazyLock::force(&REAPER);
}

/// A tool started, leading process group `pgid`.
pub fn watch(pgid: i32) {
    tell(format!("+{pgid}\n"));
}

/// The tool leading `pgid` has been reaped: its group id may be reused.
pub fn unwatch(pgid: i32) {
    tell(format!("-{pgid}\n"));
}

/// Waits for a killed child to end and collects its status. SIGKILL cannot be caught, so this
/// is short; but a process stuck in the kernel (a hung network disk) may not end at once, and
/// qgates must still answer and exit: the wait is bounded, and the process left to the system.
pub(super) fn reap(pid: i32) {
    // 0 or less would wait for some other child.
    if pid <= 0 {
        return;
    }
    let deadline = std::time::Instant::now() + REAP_LIMIT;
    loop {
        // Reaped, or not ours to reap (already collected).
        if platform::try_reap(pid) {
            return;
        }
        if std::time::Instant::now() >= deadline {
            tracing::warn!(
                "process {pid} did not end {REAP_LIMIT:?} after SIGKILL; left to the system"
            );
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// How long `reap` waits for a killed process.
const REAP_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The reaper itself: keeps the list until its input ends, then kills every group on it.
pub fn serve() -> i32 {
    // Hangups and interrupts are for qgates, which ends its tools itself.
    // This process is single-threaded.
    platform::ignore_interrupt_and_hangup();
    let mut groups = HashSet::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let (sign, pgid) = line.split_at(line.len().min(1));
        match (sign, pgid.parse::<i32>()) {
            ("+", Ok(p)) if p > 0 => {
                groups.insert(p);
            }
            ("-", Ok(p)) => {
                groups.remove(&p);
            }
            _ => {}
        }
    }
    for pgid in groups {
        platform::kill_process_group(pgid);
    }
    0
}
