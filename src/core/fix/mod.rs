//! A run with `fix`: first every selected gate that has a whole-file fixer (`fix` in
//! quality.yaml, e.g. `ruff format -`) pipes each file of the scope it applies to through that
//! fixer and writes the result back, then the gates check as usual. The report lists the files
//! that changed, so what is left in it is what still needs a person (or an agent).
//!
//! Only the gates' own `fix` commands run: a tool's per-violation edits (ruff's `fix.edits`) are
//! offered by the language server as quick fixes, not applied here.

pub mod text_diff;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::core::config::spec::Template;
use crate::core::config::{Config, Gate, GateKind};
use crate::core::engine::{Run, RunError, RunRequest, append_note, execute, select_gates};
use crate::core::runner::process::{ProcessOutcome, ProcessSpec, resolve_program, run_process};
use crate::core::scope::resolve;
use crate::core::workspace::run_logs::{RunDir, create_run_dir};

/// The order fixers run in on one file: formatters last, so that what other fixers change (an
/// import removed, a statement split) is formatted too; otherwise the configuration's order.
pub fn in_fix_order<'g>(gates: impl IntoIterator<Item = &'g Gate>) -> Vec<&'g Gate> {
    let mut gates: Vec<&Gate> = gates.into_iter().collect();
    // Stable: gates of the same rank keep their order.
    gates.sort_by_key(|g| g.kind == GateKind::Format);
    gates
}

/// What the fixers did before the check.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FixOutcome {
    /// Root-relative files whose content a fixer changed, sorted.
    pub fixed: Vec<String>,
    /// One sentence per fixer that could not do its work (the file was left as it was).
    pub problems: Vec<String>,
}

/// Runs the fixers, then the gates; the report's `fixed` lists the files that changed and its
/// scope note says which fixers failed. The run is left for the caller to finish.
pub async fn execute_with_fixes(config: &Config, request: &RunRequest) -> Result<Run, RunError> {
    let outcome = apply_fixers(config, request).await?;
    let mut run = execute(config, request, None).await?;
    let report = run.report_mut();
    report.fixed = outcome.fixed;
    if !outcome.problems.is_empty() {
        append_note(&mut report.scope.note, outcome.problems.join("; "));
    }
    Ok(run)
}

/// Pipes every file of the request's scope through the fixers of the selected gates that apply to
/// it. Files are fixed in parallel; one file's fixers run one after another in gate order, so no
/// two fixers write the same file at once.
pub async fn apply_fixers(config: &Config, request: &RunRequest) -> Result<FixOutcome, RunError> {
    let selected = select_gates(config, request.gates.as_deref())?;
    let fixers: Vec<Arc<Gate>> = in_fix_order(
        selected
            .into_iter()
            .filter(|g| g.fix.is_some() && g.runs_on(request.trigger)),
    )
    .into_iter()
    .map(|g| Arc::new(g.clone()))
    .collect();
    if fixers.is_empty() {
        return Ok(FixOutcome::default());
    }
    let scope = resolve(&request.root, config, &request.scope)?;
    let run_dir =
        Arc::new(create_run_dir(&request.root).map_err(|e| RunError::LogDir(e.to_string()))?);
    let root: Arc<Path> = Arc::from(request.root.as_path());
    let permits = Arc::new(tokio::sync::Semaphore::new(crate::core::cores()));
    let mut tasks = tokio::task::JoinSet::new();
    for (n, file) in scope.files.into_iter().enumerate() {
        let gates: Vec<Arc<Gate>> = fixers
            .iter()
            .filter(|g| g.applies_to(&file))
            .cloned()
            .collect();
        if gates.is_empty() || !root.join(&file).is_file() {
            continue;
        }
        let (root, run_dir, permits) = (root.clone(), run_dir.clone(), permits.clone());
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await;
            fix_file(&root, &file, n, &gates, &run_dir).await
        });
    }
    let mut outcome = FixOutcome::default();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((changed, problems)) => {
                outcome.fixed.extend(changed);
                outcome.problems.extend(problems);
            }
            Err(e) => outcome.problems.push(format!("a fixer task failed: {e}")),
        }
    }
    outcome.fixed.sort_unstable();
    outcome.problems.sort_unstable();
    // The logs of fixers that worked were removed; an empty folder is not worth keeping.
    let _ = std::fs::remove_dir(&run_dir.path);
    Ok(outcome)
}

/// Fixes one file with each gate's fixer in turn. Returns the file if its content changed, and a
/// sentence for each fixer that failed.
async fn fix_file(
    root: &Path,
    rel: &str,
    n: usize,
    gates: &[Arc<Gate>],
    run_dir: &RunDir,
) -> (Option<String>, Vec<String>) {
    let path = root.join(rel);
    let mut problems = Vec::new();
    let Ok(original) = std::fs::read(&path) else {
        return (None, vec![format!("{rel} could not be read for fixing")]);
    };
    let mut text = original.clone();
    for gate in gates {
        match run_fixer(root, rel, n, gate, &text, run_dir).await {
            Ok(Some(fixed)) => text = fixed,
            Ok(None) => {}
            Err(why) => problems.push(why),
        }
    }
    if text == original {
        return (None, problems);
    }
    match write_in_place(&path, &text) {
        Ok(()) => (Some(rel.to_string()), problems),
        Err(e) => {
            problems.push(format!("{rel} could not be written after fixing: {e}"));
            (None, problems)
        }
    }
}

/// Pipes `text` through the gate's fixer. `Ok(None)`: nothing to do (an optional tool that is not
/// installed; the check reports the gate as skipped).
async fn run_fixer(
    root: &Path,
    rel: &str,
    n: usize,
    gate: &Gate,
    text: &[u8],
    run_dir: &RunDir,
) -> Result<Option<Vec<u8>>, String> {
    let stdout = run_dir.path.join(format!("fix-{}-{n}.stdout", gate.id));
    let stderr = run_dir.path.join(format!("fix-{}-{n}.stderr", gate.id));
    let failed = |what: String| {
        Err(format!(
            "{} could not fix {rel} ({what}); see {}",
            gate.id,
            run_dir.display_path(&stderr)
        ))
    };
    let fixed = match pipe(gate, root, rel, text, gate.timeout, &stdout, &stderr).await {
        Ok(fixed) => fixed,
        Err(FixError::NoFixer(_)) => return Ok(None),
        Err(FixError::Missing { .. }) if gate.optional => return Ok(None),
        Err(FixError::Missing { why, .. }) => {
            return Err(format!("{} could not fix {rel}: {why}", gate.id));
        }
        Err(FixError::Failed { how, .. }) => return failed(how),
    };
    // A fixer that prints nothing for a non-empty file did not print the file: don't empty it.
    if fixed.is_empty() && !text.is_empty() {
        return failed("it printed nothing".to_string());
    }
    let _ = std::fs::remove_file(&stdout);
    let _ = std::fs::remove_file(&stderr);
    Ok(Some(fixed))
}

/// Replaces a file's content through a temporary file and a rename, so a reader never sees half
/// of it; the file keeps its permissions.
fn write_in_place(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.qgates-fix-{}", std::process::id()));
    std::fs::write(&tmp, content)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Why a fixer gave no text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FixError {
    #[error("the gate `{0}` has no `fix` command")]
    NoFixer(String),
    #[error("{gate}: the fixer could not start: {why}")]
    Missing { gate: String, why: String },
    #[error("{gate}: the fixer failed ({how}): {stderr}")]
    Failed {
        gate: String,
        how: String,
        stderr: String,
    },
}

/// Pipes an editor's buffer through the gate's fixer and returns what it printed ("Format with
/// ruff"). `rel` (root-relative) fills `{file}`, so the tool applies that file's settings. Output
/// goes to scratch files outside the workspace: an editor's requests are not runs worth logging.
pub async fn fix_text(gate: &Gate, root: &Path, rel: &str, text: &str) -> Result<String, FixError> {
    let (stdout, stderr) = scratch_paths().map_err(|e| FixError::Missing {
        gate: gate.id.clone(),
        why: e.to_string(),
    })?;
    let timeout = gate.timeout.min(std::time::Duration::from_secs(60));
    let out = pipe(gate, root, rel, text.as_bytes(), timeout, &stdout, &stderr).await;
    let _ = std::fs::remove_file(&stdout);
    let _ = std::fs::remove_file(&stderr);
    String::from_utf8(out?).map_err(|_| FixError::Failed {
        gate: gate.id.clone(),
        how: "it printed text that is not UTF-8".into(),
        stderr: String::new(),
    })
}

/// Runs the gate's fixer with `text` on stdin, its output into `stdout`/`stderr`; returns what it
/// printed when it exits with one of its `exit_codes_ok` (0 unless the gate says otherwise).
async fn pipe(
    gate: &Gate,
    root: &Path,
    rel: &str,
    text: &[u8],
    timeout: std::time::Duration,
    stdout: &Path,
    stderr: &Path,
) -> Result<Vec<u8>, FixError> {
    let fix = gate
        .fix
        .as_ref()
        .ok_or_else(|| FixError::NoFixer(gate.id.clone()))?;
    let missing = |why| FixError::Missing {
        gate: gate.id.clone(),
        why,
    };
    let cwd = gate.cwd_in(root);
    let program = resolve_program(&fix.command[0], root, &cwd).map_err(missing)?;
    let args = fix.command[1..]
        .iter()
        .map(|a| {
            Template::parse(a)
                .render(|f| (f == "file").then_some(rel))
                .into()
        })
        .collect();
    let spec = ProcessSpec {
        program,
        args,
        cwd,
        env: gate.env.clone(),
        timeout,
        stdout: stdout.to_path_buf(),
        stderr: stderr.to_path_buf(),
        stdin: Some(text.to_vec()),
    };
    let failed = |how: String| FixError::Failed {
        gate: gate.id.clone(),
        how,
        stderr: std::fs::read_to_string(stderr)
            .unwrap_or_default()
            .trim()
            .chars()
            .take(2000)
            .collect(),
    };
    match run_process(&spec).await {
        ProcessOutcome::Exited(code) if fix.exit_codes_ok.contains(&code) => {
            std::fs::read(stdout).map_err(|e| failed(format!("{}: {e}", stdout.display())))
        }
        ProcessOutcome::Exited(code) => Err(failed(format!("exit code {code}"))),
        ProcessOutcome::Signaled(sig) => Err(failed(format!("killed by signal {sig}"))),
        ProcessOutcome::TimedOut => Err(failed(format!("timed out after {timeout:?}"))),
        ProcessOutcome::SpawnFailed(why) => Err(missing(why)),
    }
}

/// New files for one fixer's output in the process's private scratch folder.
fn scratch_paths() -> std::io::Result<(PathBuf, PathBuf)> {
    let stdout = crate::core::workspace::scratch::new_file("fix", "out")?;
    match crate::core::workspace::scratch::new_file("fix", "err") {
        Ok(stderr) => Ok((stdout, stderr)),
        Err(e) => {
            let _ = std::fs::remove_file(&stdout);
            Err(e)
        }
    }
}

/// Applies a tool's own edits (1-based lines, 1-based character columns, end exclusive) to a
/// text. Edits are applied from the last to the first; one that overlaps an edit already applied,
/// or points outside the text, is left out. Returns the new text and how many edits were applied.
pub fn apply_edits(text: &str, edits: &[crate::core::violation::Edit]) -> (String, usize) {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let offset = |line: u32, column: u32| -> Option<usize> {
        let start = *starts.get((line as usize).checked_sub(1)?)?;
        let line_text = &text[start..];
        let line_text = &line_text[..line_text.find('\n').map_or(line_text.len(), |i| i + 1)];
        let chars = column.checked_sub(1)? as usize;
        // Up to one past the last character of the line (an edit that appends).
        let offsets = line_text.char_indices().map(|(i, _)| i);
        Some(start + offsets.chain([line_text.len()]).nth(chars)?)
    };
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .filter_map(|e| {
            let (a, b) = (offset(e.line, e.column)?, offset(e.end_line, e.end_column)?);
            (a <= b).then_some((a, b, e.content.as_str()))
        })
        .collect();
    spans.sort_by(|x, y| y.0.cmp(&x.0).then(y.1.cmp(&x.1)));
    let mut out = text.to_string();
    let mut applied = 0;
    let mut limit = usize::MAX;
    for (a, b, content) in spans {
        if b > limit {
            continue;
        }
        out.replace_range(a..b, content);
        limit = a;
        applied += 1;
    }
    (out, applied)
}

#[cfg(test)]
mod tests {
    #[test]
    fn formatters_fix_last_and_the_rest_keep_their_order() {
        let config = crate::core::config::parse_config(
            "version: 1\nactive_gates: [fmt, lint, other]\ngates:\n  fmt:\n    kind: format\n    command: [a]\n    parsing: { strategy: exit_code }\n  lint:\n    kind: lint\n    command: [b]\n    parsing: { strategy: exit_code }\n  other:\n    command: [c]\n    parsing: { strategy: exit_code }\n",
            crate::core::config::ConfigSource::Embedded,
        )
        .expect("config");
        let order: Vec<&str> = in_fix_order(&config.gates)
            .iter()
            .map(|g| g.id.as_str())
            .collect();
        assert_eq!(order, ["lint", "other", "fmt"]);
    }

    use super::*;
    use crate::core::violation::Edit;

    fn edit(line: u32, column: u32, end_line: u32, end_column: u32, content: &str) -> Edit {
        Edit {
            line,
            column,
            end_line,
            end_column,
            content: content.into(),
        }
    }

    #[test]
    fn edits_apply_by_characters_from_last_to_first() {
        let text = "import os\nx = 'é'; y = 1\n";
        let (out, n) = apply_edits(text, &[edit(1, 1, 2, 1, ""), edit(2, 8, 2, 10, "\n")]);
        assert_eq!(n, 2);
        assert_eq!(out, "x = 'é'\ny = 1\n");
    }

    #[test]
    fn overlapping_and_out_of_range_edits_are_left_out() {
        let text = "abc\n";
        let (out, n) = apply_edits(
            text,
            &[
                edit(1, 1, 1, 3, "X"),
                edit(1, 2, 1, 4, "Y"),
                edit(5, 1, 5, 2, "Z"),
            ],
        );
        assert_eq!(n, 1);
        assert_eq!(out, "aY\n");
    }
}
