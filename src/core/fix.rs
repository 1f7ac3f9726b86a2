//! Whole-file fixers: a gate's `fix` command reads a file's text on stdin and prints the fixed
//! text (`ruff format --stdin-filename F -`). The editor pipes its unsaved buffer through it; the
//! difference becomes edits (see `text_diff`).

use std::ffi::OsString;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::core::config::Gate;
use crate::core::runner::process::{ProcessOutcome, ProcessSpec, resolve_program, run_process};

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

/// Pipes `text` through the gate's fixer and returns what it printed.
/// `rel_file` (root-relative) fills `{file}`, so the tool applies that file's settings.
pub async fn fix_text(
    gate: &Gate,
    root: &Path,
    rel_file: &str,
    text: &str,
) -> Result<String, FixError> {
    let fix = gate
        .fix
        .as_ref()
        .ok_or_else(|| FixError::NoFixer(gate.id.clone()))?;
    let cwd = gate
        .cwd
        .as_ref()
        .map_or_else(|| root.to_path_buf(), |c| root.join(c));
    let program =
        resolve_program(&fix.command[0], root, &cwd).map_err(|why| FixError::Missing {
            gate: gate.id.clone(),
            why,
        })?;
    let args: Vec<OsString> = fix.command[1..]
        .iter()
        .map(|a| a.replace("{file}", rel_file).into())
        .collect();
    let (stdout, stderr) = scratch_paths();
    let spec = ProcessSpec {
        program,
        args,
        cwd,
        env: gate
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        timeout: gate.timeout.min(Duration::from_secs(60)),
        stdout: stdout.clone(),
        stderr: stderr.clone(),
        stdin: Some(text.as_bytes().to_vec()),
    };
    let outcome = run_process(&spec).await;
    let out = std::fs::read(&stdout).unwrap_or_default();
    let err = std::fs::read_to_string(&stderr).unwrap_or_default();
    let _ = std::fs::remove_file(&stdout);
    let _ = std::fs::remove_file(&stderr);
    let failed = |how: String| FixError::Failed {
        gate: gate.id.clone(),
        how,
        stderr: err.trim().chars().take(2000).collect(),
    };
    match outcome {
        ProcessOutcome::Exited(0) => {
            String::from_utf8(out).map_err(|_| failed("it printed text that is not UTF-8".into()))
        }
        ProcessOutcome::Exited(code) => Err(failed(format!("exit code {code}"))),
        ProcessOutcome::Signaled(sig) => Err(failed(format!("killed by signal {sig}"))),
        ProcessOutcome::TimedOut => Err(failed("timed out".into())),
        ProcessOutcome::SpawnFailed(why) => Err(FixError::Missing {
            gate: gate.id.clone(),
            why,
        }),
    }
}

/// Unique scratch files for one fixer's output, outside the workspace (fixes happen on every
/// editor request; they are not runs worth logging).
fn scratch_paths() -> (std::path::PathBuf, std::path::PathBuf) {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let base = std::env::temp_dir().join(format!("qgates-fix-{}-{n}", std::process::id()));
    (base.with_extension("out"), base.with_extension("err"))
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
        let mut it = line_text.char_indices();
        match it.nth(chars) {
            Some((i, _)) => Some(start + i),
            // One past the last character of the line (an edit that appends).
            None if line_text.chars().count() == chars => Some(start + line_text.len()),
            None => None,
        }
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
