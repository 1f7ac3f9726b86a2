//! Running one gate: batches of files, one process each (in its own process group, logged in
//! full), output parsed, exit codes judged. Nothing passes silently: every way a gate can fail to
//! run ends as status `error` with a message that says which and where the log is.

pub(crate) mod batch;
pub(crate) mod children;
mod jsonc;
pub(crate) mod own_selection;
pub(crate) mod process;
pub mod reaper;
pub(crate) mod report_files;
pub(crate) mod tool_folders;
mod warm_run;

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::core::config::Gate;
use crate::core::parse::{
    DiffBase, OutputSource, ParseContext, Parsed, SavedOutput, parse_saved_with_reports,
};
use crate::core::report::fix_hint::render_fix_hint;
use crate::core::report::{GateLog, GateResult, GateStatus};
use crate::core::warm;
use crate::core::workspace::run_logs::RunDir;
use process::{ProcessOutcome, ProcessSpec, resolve_program_borrowing, run_process};
use report_files::{Collected, ReportPlan};

/// Everything one gate run needs; cheap to clone into a task.
#[derive(Debug, Clone)]
pub struct GateJob {
    pub gate: Arc<Gate>,
    /// Absolute workspace root.
    pub root: Arc<Path>,
    /// Root-relative POSIX paths (empty for gates with `pass_files: false`).
    pub files: Vec<String>,
    pub run_dir: Arc<RunDir>,
    /// What the run compares with, for a gate that reads changed lines (coverage).
    pub diff: Option<Arc<DiffBase>>,
    /// A workspace whose tool folders are searched after the root's own (`tool_folders`).
    pub tools_from: Option<Arc<Path>>,
    /// Ask the gate's warm process, kept this long after its last check (`core::warm`);
    /// `None`: run the tool cold.
    pub warm: Option<std::time::Duration>,
}

/// What one batch came to: what was read from its output, and how it is judged.
struct BatchResult {
    parsed: Parsed,
    status: GateStatus,
    error: Option<String>,
    exit_code: i32,
    /// The tool stopped before checking every file (`success.exit_codes_incomplete`).
    incomplete: bool,
}

/// A batch that gave no findings: why, and the tool's exit code when it exited.
type BatchError = (String, Option<i32>);

/// Runs a gate over its files and judges the result.
pub async fn run_gate(job: GateJob) -> GateResult {
    let started = Instant::now();
    let gate = &job.gate;
    let mut result = fresh_result(gate, job.files.len());
    if let Some(problem) = folder_problem(gate, &job.root) {
        result.status = GateStatus::Error;
        result.error = Some(problem);
        return result;
    }
    let cwd = gate.cwd_in(&job.root);
    let lender = job.tools_from.as_deref();
    let program = match resolve_program_borrowing(&gate.command[0], &job.root, &cwd, lender) {
        Ok(p) => p,
        Err(why) => return program_missing(gate, result, why),
    };
    let own_selection = own_selection::runs_over(gate, &cwd);
    let files = own_selection::handed_over(gate, &job.files, &cwd, own_selection.is_some());
    if gate.pass_files && files.is_empty() && own_selection.is_none() {
        // Every file is one the tool's configuration leaves out: it says nothing of them.
        return result;
    }
    let batches = batches(&job, &files, &program, &cwd, own_selection.is_some());
    let extra = own_selection::args_when(gate, &cwd);
    let warm = warm_run::Cold {
        job: &job,
        cwd: &cwd,
        program: &program,
        extra: &extra,
        batches: &batches,
        own_selection: own_selection.is_some(),
    };
    let note = match warm.try_warm(&result).await {
        Ok(served) => return finished(served, started, true),
        Err(note) => note,
    };
    let run = GateRun {
        job: &job,
        program,
        extra,
        cwd,
        warm: None,
    };
    let mut result = run.over(batches, result, own_selection.is_some()).await;
    result.notes.extend(note);
    finished(result, started, false)
}

fn finished(mut result: GateResult, started: Instant, warm: bool) -> GateResult {
    result.warm = warm;
    result.duration_ms = started.elapsed().as_millis() as u64;
    result
}

impl GateRun<'_> {
    /// The gate's batches run one after another, judged together; for a tool that picked its
    /// own files (`own_selection`), on its findings about the files asked for.
    async fn over(
        &self,
        batches: Vec<Vec<OsString>>,
        mut result: GateResult,
        own_selection: bool,
    ) -> GateResult {
        let job = self.job;
        let gate = &job.gate;
        let mut tally = Tally::default();
        for (i, files) in batches.into_iter().enumerate() {
            let (stdout, stderr) = job.run_dir.log_paths(&gate.id, i);
            if i == 0 {
                result.log = Some(GateLog {
                    stdout: job.run_dir.display_path(&stdout),
                    stderr: job.run_dir.display_path(&stderr),
                });
            }
            match self.batch(files, &stdout, &stderr).await {
                Ok(batch) => tally.add(&mut result, batch),
                Err(why) => {
                    tally.first_error.get_or_insert(why);
                }
            }
        }
        if own_selection {
            let asked: HashSet<&str> = job.files.iter().map(String::as_str).collect();
            own_selection::keep_in_scope(&mut result.violations, &asked);
            // Judged again on what is kept: findings about other files fail nothing here.
            tally.any_failed = false;
        }
        conclude(job, &mut result, tally);
        result
    }
}

/// A gate's result before it runs: passed, over `files` files.
pub(crate) fn fresh_result(gate: &Gate, files: usize) -> GateResult {
    GateResult {
        id: gate.id.clone(),
        name: gate.name.clone(),
        status: GateStatus::Passed,
        skip_reason: None,
        error: None,
        allow_fail: gate.allow_fail,
        violations: Vec::new(),
        fix_hint: None,
        files_checked: files,
        outside_root: 0,
        exit_code: None,
        log: None,
        duration_ms: 0,
        cached_files: 0,
        coverage: None,
        tests: None,
        incomplete: false,
        warm: false,
        notes: Vec::new(),
    }
}

/// A gate whose program is not installed: an error, or a skip when the gate is `optional`.
fn program_missing(gate: &Gate, mut result: GateResult, why: String) -> GateResult {
    let why = match &gate.install {
        Some(how) => format!("{why}. Install it: {how}"),
        None => why,
    };
    if gate.optional {
        result.status = GateStatus::Skipped;
        result.files_checked = 0;
        result.skip_reason = Some(format!("optional tool missing: {why}"));
    } else {
        result.status = GateStatus::Error;
        result.error = Some(format!("{}: {why}", gate.name));
    }
    result
}

/// What each of a gate's processes shares.
struct GateRun<'a> {
    job: &'a GateJob,
    program: PathBuf,
    /// Arguments the tool's own configuration calls for (`args_when`).
    extra: Vec<OsString>,
    cwd: PathBuf,
    /// How the warm process is asked (`program` is its client), instead of the gate's
    /// command.
    warm: Option<warm::WarmCheck>,
}

/// Where one batch's output went.
struct BatchLogs<'a> {
    stdout: &'a Path,
    stderr: &'a Path,
    /// The stdout log as shown in messages.
    hint: String,
    reports: ReportPlan,
}

impl GateRun<'_> {
    /// Runs one process over `files` and judges it.
    async fn batch(
        &self,
        files: Vec<OsString>,
        stdout: &Path,
        stderr: &Path,
    ) -> Result<BatchResult, BatchError> {
        let (job, gate) = (self.job, &self.job.gate);
        let stem = stdout
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| gate.id.clone());
        let reports = ReportPlan::prepare(gate, &job.root, &job.run_dir, &stem)
            .map_err(|why| (format!("{}: {why}", gate.name), None))?;
        let head = match &self.warm {
            Some(check) => check.args.clone(),
            None => reports.args(&gate.command[1..]),
        };
        // A daemon asked in its own protocol takes the files alone.
        let dmypy = (self.warm.as_ref())
            .and_then(|c| c.dmypy_status.clone())
            .map(|status| (status, files.clone()));
        let spec = ProcessSpec {
            program: self.program.clone(),
            args: (head.into_iter())
                .chain(self.extra.iter().cloned())
                .chain(files)
                .collect(),
            cwd: self.cwd.clone(),
            env: gate.env.clone(),
            timeout: gate.timeout,
            stdout: stdout.to_path_buf(),
            stderr: stderr.to_path_buf(),
            stdin: None,
        };
        let outcome = match dmypy {
            Some((status, files)) => warm_run::asked_in_protocol(&status, files, spec).await,
            None => run_process(&spec).await,
        };
        let logs = BatchLogs {
            stdout,
            stderr,
            hint: job.run_dir.display_path(stdout),
            reports,
        };
        self.judge(outcome, &logs).await
    }

    /// Judges one finished process: its outcome, its exit code against the gate's lists, its
    /// output.
    async fn judge(
        &self,
        outcome: ProcessOutcome,
        logs: &BatchLogs<'_>,
    ) -> Result<BatchResult, BatchError> {
        let gate = &self.job.gate;
        let (name, log_hint) = (&gate.name, &logs.hint);
        let code = exit_code(gate, outcome, log_hint).map_err(|why| (why, None))?;
        // The tool wrote straight into its logs: a write that failed there cut its output, and
        // what is left would pass for all of it.
        let clean = gate.exit_codes_ok.contains(&code);
        if let Some(why) = log_cut(logs.stdout, clean).or_else(|| log_cut(logs.stderr, clean)) {
            return Err((
                format!(
                    "{name}'s output could not all be written to its log ({why}), so its findings would be incomplete; see {log_hint}"
                ),
                Some(code),
            ));
        }
        let incomplete = gate.exit_codes_incomplete.contains(&code);
        let findings_code = incomplete || gate.exit_codes_findings.contains(&code);
        let collected = match self.collect_reports(logs).await {
            Ok(c) => c,
            // A tool that could not run wrote no report: its exit code says more.
            Err(_) if !clean && !findings_code => {
                return Err((unexpected_exit(gate, code, log_hint), Some(code)));
            }
            // Its last words usually say why (`No module named pytest`).
            Err(why) => {
                let said = last_line(logs.stderr)
                    .or_else(|| last_line(logs.stdout))
                    .map(|l| format!(". It said: {l}"))
                    .unwrap_or_default();
                return Err((
                    format!(
                        "{name} ran (exit code {code}) but {why}{said}; what it printed is in {log_hint}"
                    ),
                    Some(code),
                ));
            }
        };
        let parsed = self.parse(code, logs, collected).await.map_err(|why| {
            (
                format!("{name} ran (exit code {code}) but its output could not be read: {why}"),
                Some(code),
            )
        })?;
        let found = !parsed.violations.is_empty() || parsed.outside_root > 0;
        let mut batch = BatchResult {
            status: if gate.fails_with(&parsed.violations) {
                GateStatus::Failed
            } else {
                GateStatus::Passed
            },
            parsed,
            error: None,
            exit_code: code,
            incomplete,
        };
        if clean || (findings_code && found) {
            return Ok(batch);
        }
        batch.status = GateStatus::Error;
        batch.error = Some(if findings_code {
            format!(
                "{name} exited with code {code} (it found problems) but no violation could be read from its output. Check `parsing` in quality.yaml against the output in {log_hint}"
            )
        } else {
            unexpected_exit(gate, code, log_hint)
        });
        Ok(batch)
    }

    /// The report files the tool wrote, read off the runtime's threads: a report may be large.
    async fn collect_reports(&self, logs: &BatchLogs<'_>) -> Result<Collected, String> {
        let (plan, dir) = (logs.reports.clone(), self.job.run_dir.clone());
        tokio::task::spawn_blocking(move || plan.collect(&dir))
            .await
            .unwrap_or_else(|e| Err(format!("reading its reports stopped unexpectedly ({e})")))
    }

    /// The batch's output and reports parsed, off the runtime's threads: an output may be large.
    async fn parse(
        &self,
        code: i32,
        logs: &BatchLogs<'_>,
        collected: Collected,
    ) -> Result<Parsed, String> {
        let (gate, root, cwd) = (
            self.job.gate.clone(),
            self.job.root.clone(),
            self.cwd.clone(),
        );
        let diff = self.job.diff.clone();
        let (stdout, stderr) = (logs.stdout.to_path_buf(), logs.stderr.to_path_buf());
        let hint = logs.hint.clone();
        tokio::task::spawn_blocking(move || {
            let ctx = ParseContext {
                gate: &gate,
                root: &root,
                cwd: &cwd,
                log_hint: &hint,
                diff: diff.as_deref(),
            };
            let reports: Vec<Option<(OutputSource, &str)>> = collected
                .iter()
                .map(|r| {
                    r.as_ref()
                        .map(|(bytes, shown)| (OutputSource::Bytes(bytes), shown.as_str()))
                })
                .collect();
            // From the log files, which hold the whole output, and the reports as kept.
            let saved = SavedOutput {
                stdout: OutputSource::File(&stdout),
                stderr: OutputSource::File(&stderr),
                exit_code: Some(code),
            };
            parse_saved_with_reports(&ctx, saved, &reports).map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| format!("the parser stopped unexpectedly ({e})"))
        .and_then(|r| r)
    }
}

/// What a gate's batches came to so far.
#[derive(Default)]
struct Tally {
    /// The first batch's error, and its exit code.
    first_error: Option<BatchError>,
    last_exit: Option<i32>,
    any_failed: bool,
}

impl Tally {
    fn add(&mut self, result: &mut GateResult, batch: BatchResult) {
        let parsed = batch.parsed;
        result.violations.extend(parsed.violations);
        result.tests = match (result.tests, parsed.tests) {
            (Some(a), Some(b)) => Some(a.plus(b)),
            (a, b) => a.or(b),
        };
        result.coverage = parsed.coverage.or(result.coverage.take());
        result.outside_root += parsed.outside_root;
        result.incomplete |= batch.incomplete;
        self.last_exit = Some(batch.exit_code);
        match batch.status {
            GateStatus::Error if self.first_error.is_none() => {
                self.first_error = Some((batch.error.unwrap_or_default(), Some(batch.exit_code)));
            }
            GateStatus::Failed => self.any_failed = true,
            _ => {}
        }
    }
}

/// The gate's status from its batches and findings, in a stable order.
fn conclude(job: &GateJob, result: &mut GateResult, tally: Tally) {
    let gate = &job.gate;
    // Tools print in their own (often parallel, so varying) order; reports should not.
    result.violations.sort_by(|a, b| {
        (&a.file, a.line, a.column, &a.code, &a.message)
            .cmp(&(&b.file, b.line, b.column, &b.code, &b.message))
    });
    // Some tools print one finding twice (rustfmt checks a module both as a file it was given
    // and through the file that declares it); sorted, the copies are neighbours.
    result.violations.dedup();
    if let Some((why, code)) = tally.first_error {
        result.status = GateStatus::Error;
        result.error = Some(why);
        result.exit_code = code;
    } else if tally.any_failed || gate.fails_with(&result.violations) {
        result.status = GateStatus::Failed;
        result.exit_code = tally.last_exit;
    }
    if result.status == GateStatus::Failed {
        result.fix_hint = gate
            .fix_hint
            .as_ref()
            .map(|h| render_fix_hint(h, &result.violations, &job.files));
    }
    if result.status == GateStatus::Passed {
        result.log = None;
    }
}

/// The file arguments of each process: batches within the system's argument budget, or one
/// process without any.
fn batches(
    job: &GateJob,
    files: &[&str],
    program: &Path,
    cwd: &Path,
    own_selection: bool,
) -> Vec<Vec<OsString>> {
    let gate = &job.gate;
    if !gate.pass_files || own_selection {
        return vec![Vec::new()];
    }
    // Only for the budget; each batch fills in its own `{report_dir}`.
    let fixed_bytes =
        program.as_os_str().len() + gate.command[1..].iter().map(|a| a.len() + 9).sum::<usize>();
    let file_args: Vec<OsString> = files
        .iter()
        .map(|f| file_argument(f, &job.root, cwd))
        .collect();
    batch::split(
        &file_args,
        fixed_bytes,
        gate.max_files_per_run,
        batch::argument_budget(),
    )
}

/// What is wrong with the folders a gate names (`cwd`, `paths_relative_to`), if one is not a
/// folder of the workspace.
pub fn folder_problem(gate: &Gate, root: &Path) -> Option<String> {
    if !gate.cwd_in(root).is_dir() {
        return Some(format!(
            "the gate's cwd `{}` is not a folder in the workspace. Fix `cwd` in quality.yaml.",
            gate.cwd.as_deref().unwrap_or(Path::new("")).display()
        ));
    }
    let dir = gate.paths_relative_to.as_ref()?;
    (!root.join(dir).is_dir()).then(|| {
        format!(
            "the gate's paths_relative_to `{}` is not a folder in the workspace. Fix `paths_relative_to` in quality.yaml.",
            dir.display()
        )
    })
}

/// A file as the tool should get it: relative to the tool's cwd when that is the root, else
/// absolute; a name starting with `-` gets `./` so no tool reads it as an option.
fn file_argument(rel: &str, root: &Path, cwd: &Path) -> OsString {
    match (cwd == root, rel.starts_with('-')) {
        (false, _) => root.join(rel).into_os_string(),
        (true, true) => format!("./{rel}").into(),
        (true, false) => rel.into(),
    }
}

/// The tool's exit code, or why it has none (timed out, killed, never started).
fn exit_code(gate: &Gate, outcome: ProcessOutcome, log_hint: &str) -> Result<i32, String> {
    let name = &gate.name;
    match outcome {
        ProcessOutcome::Exited(code) => Ok(code),
        ProcessOutcome::TimedOut => Err(format!(
            "{name} timed out after {}s and was stopped (its whole process group was killed). Raise `timeout_s` in quality.yaml if it needs longer; partial output is in {log_hint}",
            gate.timeout.as_secs_f64()
        )),
        ProcessOutcome::Signaled(sig) => Err(format!(
            "{name} was killed by signal {sig} ({}); its output is in {log_hint}",
            crate::core::platform::describe_exit_signal(sig)
        )),
        ProcessOutcome::SpawnFailed(why) => Err(format!("{name}: {why}")),
    }
}

fn unexpected_exit(gate: &Gate, code: i32, log_hint: &str) -> String {
    format!(
        "{} exited with code {code}, which is in neither success.exit_codes_ok {:?} nor success.exit_codes_findings {:?}: it probably could not run. See {log_hint} and its .stderr",
        gate.name, gate.exit_codes_ok, gate.exit_codes_findings
    )
}

/// Why a log may hold less than the tool wrote to it: it reached the file-size limit (`ulimit
/// -f`), or its disk is full. An empty log under a limit of 0 is cut only when the run was not
/// `clean`: a tool that printed nothing and says it found nothing has lost nothing.
fn log_cut(log: &Path, clean: bool) -> Option<String> {
    let size = std::fs::metadata(log).ok()?.len();
    if let Some(limit) = crate::core::platform::file_size_limit()
        && size >= limit
        && (size > 0 || !clean)
    {
        return Some(format!("it reached the file-size limit of {limit} bytes"));
    }
    crate::core::platform::disk_full(log)?.then(|| "the disk holding it is full".to_string())
}

/// The last line with text in the last 4 KiB of a log, at most 300 characters of it.
pub(crate) fn last_line(log: &Path) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(log).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(4096))).ok()?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).ok()?;
    let text = String::from_utf8_lossy(&tail);
    let line = text.lines().rev().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.chars().take(300).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_like_names_get_dot_slash() {
        let root = Path::new("/r");
        assert_eq!(
            file_argument("-x.py", root, root),
            OsString::from("./-x.py")
        );
        assert_eq!(
            file_argument("a/-x.py", root, root),
            OsString::from("a/-x.py")
        );
        assert_eq!(
            file_argument("-x.py", root, Path::new("/r/sub")),
            OsString::from("/r/-x.py")
        );
    }
}
