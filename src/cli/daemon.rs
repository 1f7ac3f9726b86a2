//! `qgates daemon list|stop`: the workspace's warm processes (`core::warm`).

use std::path::Path;

use super::args::DaemonCommand;
use super::output::print_stdout;
use super::workspace::find_root;
use crate::core::report::exit;
use crate::core::warm::{self, WarmProcess};

/// `qgates daemon list|stop`.
pub fn daemon(cmd: DaemonCommand) -> i32 {
    let (DaemonCommand::List(args) | DaemonCommand::Stop(args)) = &cmd;
    let root = find_root(args.root.as_deref(), Path::new("."));
    let gate = args.gate.as_deref();
    match cmd {
        DaemonCommand::List(_) => {
            let running: Vec<WarmProcess> = (warm::list(&root).into_iter())
                .filter(|p| gate.is_none_or(|g| g == p.gate))
                .collect();
            print_stdout(&listing(&running));
        }
        DaemonCommand::Stop(_) => {
            let stopped = warm::stop(&root, gate);
            print_stdout(&match stopped.as_slice() {
                [] => "no warm process was running\n".to_string(),
                gates => format!("stopped the warm process of {}\n", gates.join(", ")),
            });
        }
    }
    exit::GREEN
}

/// One line per warm process, as `qgates daemon list` and `qgates status` print them.
pub(super) fn listing(running: &[WarmProcess]) -> String {
    if running.is_empty() {
        return "no warm process is running\n".to_string();
    }
    (running.iter())
        .map(|p| format!("{}\n", describe(p)))
        .collect()
}

/// `mypy: pid 4242, up 3 min, 182 MiB, stops after 12 min idle — dmypy …`
pub(super) fn describe(p: &WarmProcess) -> String {
    let memory = p.memory.map_or("memory unknown".to_string(), |b| {
        format!("{} MiB", b / (1024 * 1024))
    });
    let state = if p.ready { "" } else { ", starting" };
    let idle = p.idle_left.map_or(String::new(), |d| {
        format!(", stops after {} idle", minutes(d))
    });
    format!(
        "{}: pid {}, up {}, {memory}{state}{idle} — {}",
        p.gate,
        p.pid,
        minutes(p.age),
        p.command
    )
}

fn minutes(d: std::time::Duration) -> String {
    match d.as_secs() {
        s if s < 60 => format!("{s} s"),
        s => format!("{} min", s / 60),
    }
}
