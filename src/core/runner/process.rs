//! Running one tool process: argv (never a shell), its own process group, stdout and stderr
//! straight into log files (nothing held in memory, nothing truncated), a timeout that kills the
//! whole group, and a guard that kills the group if the run is cancelled (the future dropped).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::core::platform;

use super::{children, reaper};

/// One process to run.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    /// The resolved executable.
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    pub env: BTreeMap<String, String>,
    pub timeout: Duration,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
    /// Written to the process's stdin, then stdin is closed. `None`: stdin is empty.
    pub stdin: Option<Vec<u8>>,
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessOutcome {
    Exited(i32),
    /// Killed by a signal it did not ask for (a crash, the OOM killer, someone's `kill`).
    Signaled(i32),
    TimedOut,
    /// It could not be started (permissions, not an executable, the log file could not be created).
    SpawnFailed(String),
}

/// Kills a tool's process group when dropped (the run was cancelled, its future dropped) and
/// reaps the tool, so a cancelled run leaves neither a process nor a zombie behind.
struct GroupGuard {
    pid: i32,
    /// `child.wait()` collected the tool's status: nothing left to reap.
    waited: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        // Helpers the tool left running in its group would hold resources and outlive the run.
        if children::leave(self.pid) {
            platform::kill_process_group(self.pid);
            if !self.waited {
                reaper::reap(self.pid);
            }
            reaper::unwatch(self.pid);
        }
    }
}

/// Runs the process to its end, its timeout, or until the returned future is dropped.
pub async fn run_process(spec: &ProcessSpec) -> ProcessOutcome {
    // Logs live under `.qgates/runs/`: a link there is refused, never written through.
    let open = |path: &Path| {
        crate::core::workspace::safe_fs::create_nofollow(path).map_err(|e| {
            ProcessOutcome::SpawnFailed(format!("cannot create {}: {e}", path.display()))
        })
    };
    match (open(&spec.stdout), open(&spec.stderr)) {
        (Ok(stdout), Ok(stderr)) => run_with_logs(spec, stdout, stderr).await,
        (Err(failed), _) | (_, Err(failed)) => failed,
    }
}

async fn run_with_logs(
    spec: &ProcessSpec,
    stdout: std::fs::File,
    stderr: std::fs::File,
) -> ProcessOutcome {
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr))
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    // The tool and whatever it starts can be ended together.
    platform::lead_new_process_group(cmd.as_std_mut());
    cmd.envs(&spec.env);
    let started = children::start(|| {
        let child = cmd
            .spawn()
            .map_err(|e| describe_spawn_error(&spec.program, &e))?;
        let pid = child.id().map_or(0, |id| id as i32);
        Ok((child, pid))
    });
    let (mut child, pid) = match started {
        Ok(started) => started,
        Err(why) => return ProcessOutcome::SpawnFailed(why),
    };
    let mut guard = GroupGuard { pid, waited: false };
    if let (Some(input), Some(mut pipe)) = (spec.stdin.as_ref(), child.stdin.take()) {
        let input = input.clone();
        // Written concurrently so a tool that prints before reading all its input cannot deadlock.
        tokio::spawn(async move {
            let _ = pipe.write_all(&input).await;
            let _ = pipe.shutdown().await;
        });
    }
    // Returned, the guard ends what the tool left in its group.
    match tokio::time::timeout(spec.timeout, child.wait()).await {
        Ok(Ok(status)) => {
            guard.waited = true;
            match (status.code(), platform::exit_signal(&status)) {
                (Some(code), _) => ProcessOutcome::Exited(code),
                (None, Some(sig)) => ProcessOutcome::Signaled(sig),
                (None, None) => {
                    ProcessOutcome::SpawnFailed("the process ended without an exit status".into())
                }
            }
        }
        Ok(Err(e)) => ProcessOutcome::SpawnFailed(format!("waiting for the process failed: {e}")),
        Err(_) => {
            platform::kill_process_group(guard.pid);
            guard.waited = child.wait().await.is_ok();
            ProcessOutcome::TimedOut
        }
    }
}

fn describe_spawn_error(program: &Path, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => format!(
            "`{}` was not found — is it installed and on PATH?",
            program.display()
        ),
        std::io::ErrorKind::PermissionDenied => {
            format!(
                "`{}` is not executable (permission denied) — check its mode (chmod +x)",
                program.display()
            )
        }
        _ => format!("`{}` could not be started: {e}", program.display()),
    }
}

/// Finds an executable: a path with a `/` is taken relative to `cwd`; a bare name is looked up in
/// the tool folders (see `tool_folders`), then in `PATH`.
pub fn resolve_program(name: &str, root: &Path, cwd: &Path) -> Result<PathBuf, String> {
    resolve_program_borrowing(name, root, cwd, None)
}

/// `resolve_program`, with the tool folders of `lender` searched after the root's own (a clean
/// room's checkout borrows its workspace's: see `tool_folders`).
pub fn resolve_program_borrowing(
    name: &str,
    root: &Path,
    cwd: &Path,
    lender: Option<&Path>,
) -> Result<PathBuf, String> {
    if name.contains('/') {
        // An absolute `name` replaces `cwd`.
        let p = cwd.join(name);
        return if is_executable(&p) {
            Ok(p)
        } else if p.exists() {
            Err(format!(
                "`{name}` is not executable — check its mode (chmod +x)"
            ))
        } else {
            Err(format!(
                "`{name}` was not found (looked at {})",
                p.display()
            ))
        };
    }
    let local = crate::core::runner::tool_folders::program_dirs(root, cwd, lender);
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    let dirs = local.into_iter().chain(std::env::split_paths(&path_var));
    let found = dirs.map(|dir| dir.join(name)).find(|p| is_executable(p));
    found.ok_or_else(|| format!(
        "`{name}` was not found — is it installed and on PATH? (also looked in .venv/bin, venv/bin and node_modules/.bin of the workspace and of the gate's cwd)"
    ))
}

fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && platform::is_executable(&m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dir: &Path, program: &str, script: &str) -> ProcessSpec {
        ProcessSpec {
            program: program.into(),
            args: vec!["-c".into(), script.into()],
            cwd: dir.to_path_buf(),
            env: BTreeMap::new(),
            timeout: Duration::from_secs(30),
            stdout: dir.join("gate.stdout"),
            stderr: dir.join("gate.stderr"),
            stdin: None,
        }
    }

    #[tokio::test]
    async fn an_old_log_is_replaced_by_what_the_tool_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let s = spec(dir.path(), "/bin/sh", "printf new; printf oops >&2");
        std::fs::write(&s.stdout, "an old run's much longer output\n".repeat(500)).unwrap();
        std::fs::write(&s.stderr, "old errors, longer than the new ones\n").unwrap();
        assert_eq!(run_process(&s).await, ProcessOutcome::Exited(0));
        assert_eq!(std::fs::read_to_string(&s.stdout).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(&s.stderr).unwrap(), "oops");
    }

    #[tokio::test]
    async fn a_cancelled_run_leaves_neither_its_tool_nor_a_zombie() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let s = spec(
            dir.path(),
            "/bin/sh",
            &format!(
                "echo $$ > {0}.tmp; mv {0}.tmp {0}; exec sleep 300",
                pid_file.display()
            ),
        );
        let run = tokio::spawn(async move { run_process(&s).await });
        let pid: i32 = loop {
            if let Some(pid) = std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|p| p.trim().parse().ok())
            {
                break pid;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        run.abort();
        assert!(run.await.unwrap_err().is_cancelled());
        // Dropped, the run killed and reaped its tool: not even a zombie is left.
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "the tool {pid} is still there"
        );
    }

    #[tokio::test]
    async fn a_tool_that_cannot_start_leaves_no_old_output_in_its_logs() {
        let dir = tempfile::tempdir().unwrap();
        let s = spec(dir.path(), "/nonexistent/tool", "");
        std::fs::write(&s.stdout, "an old run's output\n").unwrap();
        std::fs::write(&s.stderr, "old errors\n").unwrap();
        assert!(matches!(
            run_process(&s).await,
            ProcessOutcome::SpawnFailed(_)
        ));
        assert_eq!(std::fs::read_to_string(&s.stdout).unwrap(), "");
        assert_eq!(std::fs::read_to_string(&s.stderr).unwrap(), "");
    }
}
