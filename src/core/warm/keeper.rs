//! The keeper: qgates' own binary (`qgates __warm-keeper <folder>`) holding one tool daemon for
//! the faces that share it. It runs the daemon in the foreground, as its child in a process
//! group its reaper watches, so the daemon ends with the keeper however the keeper ends; it
//! says `ready` on its stdout once the daemon takes checks; it stops the daemon after the idle
//! time (`used` untouched that long), on SIGTERM (`qgates daemon stop`, a restart), or when the
//! daemon dies. It runs at a lower priority, and so does the daemon it starts.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::state::{self, KeeperSpec, KeeperState};
use crate::core::platform;
use crate::core::runner::reaper;
use crate::core::workspace::safe_fs;

/// How long a daemon may take to become ready (mypy reads no sources before it is).
const READY_LIMIT: Duration = Duration::from_secs(120);

/// How often the keeper looks at its daemon and its idle time.
const LOOK_EVERY: Duration = Duration::from_secs(2);

/// The keeper's `main`: the folder is its one argument. Exit code 0 after a clean stop.
pub fn serve(args: &[String]) -> i32 {
    let Some(dir) = args.first().map(Path::new) else {
        say(&format!(
            "failed: usage: qgates {} <folder>",
            state::KEEPER_ARG
        ));
        return 2;
    };
    let Some(spec) = state::read_json::<KeeperSpec>(&state::spec_file(dir)) else {
        say(&format!(
            "failed: no readable {}",
            state::spec_file(dir).display()
        ));
        return 1;
    };
    // Hangups and interrupts are for the face that started it; it stops on SIGTERM.
    platform::ignore_interrupt_and_hangup();
    // Before the daemon starts: it inherits the priority.
    platform::lower_thread_priority();
    reaper::ready();
    if spec.language_server {
        return super::language_server::serve(&spec, dir, say);
    }
    let mut daemon = match start(&spec, dir) {
        Ok(child) => child,
        Err(why) => {
            say(&format!("failed: {why}"));
            return 1;
        }
    };
    let pid = daemon.id() as i32;
    reaper::watch(pid);
    let mut kept = KeeperState::of(&spec, daemon.id(), false);
    let _ = state::write_json(&state::state_file(dir), &kept);
    if let Err(why) = wait_ready(&spec, &mut daemon, dir) {
        stop(&mut daemon, &spec, dir);
        say(&format!("failed: {why}"));
        return 1;
    }
    kept.ready = true;
    let _ = state::write_json(&state::state_file(dir), &kept);
    state::touch_used(dir);
    say("ready");
    let code = keep(&spec, &mut daemon, dir);
    stop(&mut daemon, &spec, dir);
    code
}

/// Says something to the face that started the keeper: one line on stdout, which it reads up
/// to the first line and then closes.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

fn start(spec: &KeeperSpec, dir: &Path) -> Result<Child, String> {
    let log = safe_fs::create_nofollow(&state::daemon_log(dir))
        .map_err(|e| format!("cannot write {}: {e}", state::daemon_log(dir).display()))?;
    let err = log.try_clone().map_err(|e| e.to_string())?;
    if let Some(ready) = &spec.ready_file {
        // A file left by an earlier daemon would say ready too early.
        let _ = std::fs::remove_file(ready);
    }
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .envs(&spec.env)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(err));
    platform::lead_new_process_group(&mut cmd);
    cmd.spawn()
        .map_err(|e| format!("{} could not start: {e}", spec.program.display()))
}

fn wait_ready(spec: &KeeperSpec, daemon: &mut Child, dir: &Path) -> Result<(), String> {
    let deadline = Instant::now() + READY_LIMIT;
    let log = state::daemon_log(dir);
    loop {
        if let Ok(Some(status)) = daemon.try_wait() {
            return Err(format!(
                "the daemon ended ({status}) before it took checks; it said: {}",
                crate::core::runner::last_line(&log).unwrap_or_else(|| "nothing".into())
            ));
        }
        if spec.ready_file.as_ref().is_none_or(|f| f.exists()) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "the daemon did not become ready within {} s; see {}",
                READY_LIMIT.as_secs(),
                log.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Keeps the daemon until it is idle too long, asked to stop, or gone. Exit code 0.
fn keep(spec: &KeeperSpec, daemon: &mut Child, dir: &Path) -> i32 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(_) => return 1,
    };
    let idle = Duration::from_secs_f64(spec.idle_s);
    runtime.block_on(async {
        let signal = platform::termination_signal();
        tokio::pin!(signal);
        loop {
            tokio::select! {
                _ = &mut signal => return 0,
                _ = tokio::time::sleep(LOOK_EVERY.min(idle)) => {}
            }
            if matches!(daemon.try_wait(), Ok(Some(_))) || state::keeper_done(dir, idle) {
                return 0;
            }
        }
    })
}

/// Ends the daemon with its group, and clears what said it runs.
fn stop(daemon: &mut Child, spec: &KeeperSpec, dir: &Path) {
    let pid = daemon.id() as i32;
    platform::kill_process_group(pid);
    let _ = daemon.wait();
    reaper::unwatch(pid);
    if state::clear_if_ours(dir)
        && let Some(ready) = &spec.ready_file
    {
        let _ = std::fs::remove_file(ready);
    }
}
