//! A gate's check asked of its warm process (`core::warm`): a daemon's client or protocol, or
//! a language server's keeper. What it answers is judged as a cold run's output is; a warm
//! process that fails is discarded, and the caller runs the tool cold with the note this gives.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::process::{ProcessOutcome, ProcessSpec};
use super::{GateJob, GateRun, Tally, conclude, last_line};
use crate::core::config::Gate;
use crate::core::report::{GateResult, GateStatus};
use crate::core::warm;

/// What the cold run would be given; the warm one is asked about the same files.
pub(super) struct Cold<'a> {
    pub job: &'a GateJob,
    pub cwd: &'a Path,
    pub program: &'a Path,
    pub extra: &'a [OsString],
    pub batches: &'a [Vec<OsString>],
    pub own_selection: bool,
}

impl Cold<'_> {
    /// The warm process's result, or the note for the cold run (none when no warm process
    /// applies).
    pub async fn try_warm(&self, fresh: &GateResult) -> Result<GateResult, Option<String>> {
        let (job, gate) = (self.job, &self.job.gate);
        let Some(idle) = job.warm.filter(|_| applies(gate, self.own_selection)) else {
            return Err(None);
        };
        let request = warm::WarmRequest {
            gate,
            root: &job.root,
            cwd: self.cwd,
            program: self.program,
            extra: self.extra,
            lender: job.tools_from.as_deref(),
            idle,
        };
        let served = match warm::check_command(request).await {
            Ok(None) => return Err(None),
            Err(why) => {
                return Err(Some(format!(
                    "its warm process could not start ({why}), so it ran cold"
                )));
            }
            Ok(Some(warm::Ask::Command(check))) => {
                let run = GateRun::warm(job, check, self.cwd.to_path_buf());
                run.over(self.batches.to_vec(), fresh.clone(), false).await
            }
            Ok(Some(warm::Ask::Socket(socket))) => {
                let files: Vec<PathBuf> = (self.batches.iter().flatten())
                    .map(|f| self.cwd.join(f))
                    .collect();
                let asked = warm::ask(&socket, files, gate.timeout).await;
                answered(job, fresh.clone(), asked)
            }
        };
        if served.status != GateStatus::Error {
            warm::used(&job.root, &gate.id);
            return Ok(served);
        }
        // A daemon that crashed or wedged is not asked again; the cold run answers.
        warm::discard(&job.root, &gate.id);
        // Its client's last words say more than an unreadable output does.
        let (out, err) = job.run_dir.log_paths(&gate.id, 0);
        let said = last_line(&err).or_else(|| last_line(&out));
        let why = said.or(served.error).unwrap_or_default();
        Err(Some(format!(
            "its warm process failed ({why}), so it ran cold"
        )))
    }
}

impl<'a> GateRun<'a> {
    /// A run that asks the gate's warm process.
    fn warm(job: &'a GateJob, check: warm::WarmCheck, cwd: PathBuf) -> Self {
        GateRun {
            job,
            program: check.program.clone(),
            extra: Vec::new(),
            cwd,
            warm: Some(check),
        }
    }
}

/// Whether a gate's check can go to its warm process: one it has, over the files it is given
/// (a tool that picks its own files runs as the project runs it), read from its output.
fn applies(gate: &Gate, own_selection: bool) -> bool {
    gate.warm.is_some()
        && gate.pass_files
        && !own_selection
        && !gate.command.iter().any(|a| a.contains("{report_dir}"))
}

/// A daemon asked in its own protocol (`warm::dmypy`) as its client would have been: what it
/// says goes to the logs, its status is the exit code.
pub(super) async fn asked_in_protocol(
    status: &Path,
    files: Vec<OsString>,
    spec: ProcessSpec,
) -> ProcessOutcome {
    let status = status.to_path_buf();
    let asked = tokio::task::spawn_blocking(move || {
        let checked = warm::dmypy::check(&status, &files, spec.timeout)?;
        let write = |path: &Path, text: &str| {
            crate::core::workspace::safe_fs::create_nofollow(path)
                .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))
        };
        write(&spec.stdout, &checked.out)?;
        write(&spec.stderr, &checked.err)?;
        Ok::<i32, String>(checked.status)
    });
    match asked.await {
        Ok(Ok(code)) => ProcessOutcome::Exited(code),
        Ok(Err(why)) => ProcessOutcome::SpawnFailed(why),
        Err(e) => ProcessOutcome::SpawnFailed(format!("asking stopped unexpectedly ({e})")),
    }
}

/// A result from a language server's violations, judged as a run's would be.
fn answered(
    job: &GateJob,
    mut result: GateResult,
    asked: Result<Vec<crate::core::violation::Violation>, String>,
) -> GateResult {
    match asked {
        Ok(mut violations) => {
            let url = (job.gate.parser.templates.url.as_ref())
                .filter(|t| t.fields().all(|f| f == "code"));
            for v in &mut violations {
                v.gate = job.gate.id.as_str().into();
                // The rule's page as the gate's reader makes it from the code, so a warm answer
                // reads as a cold one.
                if let (Some(t), Some(code)) = (url, v.code.clone()) {
                    v.url = Some(t.render(|f| (f == "code").then_some(&*code)).into());
                }
            }
            result.violations = violations;
            conclude(job, &mut result, Tally::default());
        }
        Err(why) => {
            result.status = GateStatus::Error;
            result.error = Some(why);
        }
    }
    result
}
