//! `strategy: coverage`: a coverage report becomes a verdict. The total line coverage of the
//! files the report lists inside the workspace is held against `min_percent`; in the `auto` and
//! `branch` scopes the changed lines of the gate's files in scope that the report lists as
//! executable and not run are reported (one violation per range), and their share is held
//! against `min_diff_percent`. A report older than a file it covers is stale: the tests have not
//! run since the file changed, so the gate cannot give a verdict (an error, not a pass).

mod formats;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use super::{ParseContext, ParseError, Parsed, PathResolver, ToolOutput};
use crate::core::config::{CoverageFormat, CoverageSpec};
use crate::core::report::CoverageTotals;
use crate::core::scope::changed_lines::{ChangedLines, DiffBase, changed_lines};
use crate::core::violation::{Severity, Violation};
use crate::core::workspace::qgates_dir::timestamp;
use formats::LineHits;

/// Reads the report the gate's command printed and judges it.
pub(super) fn parse(
    spec: &CoverageSpec,
    out: ToolOutput,
    ctx: &ParseContext,
) -> Result<Parsed, ParseError> {
    let shape = |what: String| ParseError::Shape {
        what,
        log: ctx.log_hint.to_string(),
    };
    let text = report_text(out.stdout).map_err(shape)?;
    let format = match spec.format {
        Some(format) => format,
        None => recognized(text).map_err(shape)?,
    };
    let raw = formats::read(format, text).map_err(|why| {
        shape(format!(
            "the {} report cannot be read: {why}",
            format.name()
        ))
    })?;
    let (files, outside_root) =
        workspace_files(raw.files, &raw.sources, format, ctx).map_err(shape)?;
    if let Some(created) = raw.created {
        check_fresh(&files, created, ctx).map_err(shape)?;
    }
    let gate: Arc<str> = ctx.gate.id.as_str().into();
    let (mut totals, below_minimum) = total_coverage(spec, &files, &gate, ctx);
    let mut violations: Vec<Violation> = below_minimum.into_iter().collect();
    match ctx.diff {
        Some(diff) if diff.compares() => {
            let uncovered = changed_line_coverage(spec, diff, &files, &gate, ctx, &mut totals)
                .map_err(shape)?;
            violations.extend(uncovered);
        }
        Some(diff) => {
            totals.diff_note = Some(format!(
                "no diff coverage in the `{}` scope, which compares with no baseline (the `auto` and `branch` scopes do)",
                diff.mode
            ));
        }
        None => {}
    }
    Ok(Parsed {
        violations,
        outside_root,
        coverage: Some(totals),
        tests: None,
    })
}

/// The command's output as text, or why it is no report.
fn report_text(stdout: &[u8]) -> Result<&str, String> {
    let text = std::str::from_utf8(stdout)
        .map_err(|_| "its output is not UTF-8 text, so it is not a coverage report".to_string())?;
    if text.trim().is_empty() {
        return Err("its output is empty: no coverage report was printed. Check that the tests ran under coverage (e.g. `coverage run -m pytest`) and that the command prints the report (e.g. `coverage json -o -`)".into());
    }
    Ok(text)
}

/// The format of a report the gate does not name the format of.
fn recognized(text: &str) -> Result<CoverageFormat, String> {
    formats::recognize(text).ok_or_else(|| {
        // The tool's own words often say why (coverage.py: "No data to report.").
        let first: String = text.trim().lines().next().unwrap_or_default().chars().take(80).collect();
        format!("its output is not a coverage report (it starts {first:?}): neither coverage.py JSON (`coverage json -o -`), Cobertura XML (`coverage xml -o -`) nor LCOV (`coverage lcov -o -`). Run the tests under coverage first, print one of those reports, or name the format with `parsing.format`")
    })
}

/// The files of a `format` report inside the workspace by root-relative path (a file listed
/// twice is merged: a line counts as run when either lists it run) and how many lie outside, or
/// why there is none to judge.
fn workspace_files(
    listed: Vec<(String, LineHits)>,
    sources: &[String],
    format: CoverageFormat,
    ctx: &ParseContext,
) -> Result<(BTreeMap<Arc<str>, LineHits>, usize), String> {
    let count = listed.len();
    let mut paths = PathResolver::new(ctx.root, ctx.cwd, ctx.gate.paths_relative_to.as_deref());
    let mut files: BTreeMap<Arc<str>, LineHits> = BTreeMap::new();
    let mut outside = 0;
    for (name, hits) in listed {
        // A Cobertura file name is relative to one of the report's `<source>` folders: the
        // first that holds it, else the first one.
        let name = match sources {
            [] => name,
            _ if std::path::Path::new(&name).is_absolute() => name,
            _ => {
                let joined = |s: &String| std::path::Path::new(s).join(&name);
                sources
                    .iter()
                    .map(joined)
                    .find(|p| ctx.cwd.join(p).is_file())
                    .unwrap_or_else(|| joined(&sources[0]))
                    .to_string_lossy()
                    .into_owned()
            }
        };
        match paths.relative(&name) {
            Some(rel) => {
                let merged = files.entry(rel).or_default();
                for (line, ran) in hits {
                    *merged.entry(line).or_default() |= ran;
                }
            }
            None => outside += 1,
        }
    }
    if !files.is_empty() {
        return Ok((files, outside));
    }
    Err(if count == 0 {
        format!(
            "the {} report lists no file: the tests ran no measured code. Check coverage's `source` setting and that the tests ran under coverage",
            format.name()
        )
    } else {
        format!(
            "none of the {count} files the {} report lists is inside the workspace {}: it measured another folder. Run the tests from the workspace",
            format.name(),
            ctx.root.display()
        )
    })
}

/// The totals of the whole report, and the violation when its coverage is below `min_percent`.
fn total_coverage(
    spec: &CoverageSpec,
    files: &BTreeMap<Arc<str>, LineHits>,
    gate: &Arc<str>,
    ctx: &ParseContext,
) -> (CoverageTotals, Option<Violation>) {
    let (executable, run) = files.values().fold((0usize, 0usize), |(e, r), hits| {
        (
            e + hits.len(),
            r + hits.values().filter(|ran| **ran).count(),
        )
    });
    let below_minimum = below(run, executable, spec.min_percent).then(|| file_less(gate, "coverage", format!(
        "Total line coverage is {}% ({run} of {executable} executable lines run), below the minimum of {}% (`parsing.min_percent`). Add tests for the uncovered code; the report is in {}",
        shown(run, executable), spec.min_percent, ctx.log_hint
    )));
    let totals = CoverageTotals {
        percent: percent(run, executable),
        min_percent: spec.min_percent,
        min_diff_percent: spec.min_diff_percent,
        ..CoverageTotals::default()
    };
    (totals, below_minimum)
}

/// In a scope made of changes: the changed lines' share of the totals, and the violations of
/// the ranges no test ran and of a share below `min_diff_percent`.
fn changed_line_coverage(
    spec: &CoverageSpec,
    diff: &DiffBase,
    files: &BTreeMap<Arc<str>, LineHits>,
    gate: &Arc<str>,
    ctx: &ParseContext,
    totals: &mut CoverageTotals,
) -> Result<Vec<Violation>, String> {
    let in_report: Vec<String> = diff
        .files
        .iter()
        .filter(|f| files.contains_key(f.as_str()))
        .cloned()
        .collect();
    let changed = changed_lines(ctx.root, diff.commit.as_deref(), &in_report)
        .map_err(|e| format!("the changed lines could not be read from git: {e}"))?;
    let mut violations = Vec::new();
    let (changed_run, changed_total) =
        uncovered_ranges(files, &changed, spec.diff_severity, gate, &mut violations);
    totals.changed_lines = Some(changed_total);
    totals.uncovered_changed_lines = Some(changed_total - changed_run);
    if changed_total > 0 {
        totals.diff_percent = Some(percent(changed_run, changed_total));
    }
    if let Some(min) = spec.min_diff_percent
        && changed_total > 0
        && below(changed_run, changed_total, min)
    {
        violations.push(file_less(gate, "diff_coverage", format!(
            "Changed lines are {}% covered ({changed_run} of {changed_total} changed executable lines run), below the minimum of {min}% (`parsing.min_diff_percent`). Add tests that run the changed lines reported",
            shown(changed_run, changed_total)
        )));
    }
    Ok(violations)
}

/// A report written before a file it covers was last modified measured older code.
fn check_fresh(
    files: &BTreeMap<Arc<str>, LineHits>,
    created: SystemTime,
    ctx: &ParseContext,
) -> Result<(), String> {
    for rel in files.keys() {
        let Ok(modified) = std::fs::metadata(ctx.root.join(&**rel)).and_then(|m| m.modified())
        else {
            continue;
        };
        if modified > created {
            return Err(format!(
                "the coverage report is stale: it was written at {}, and {rel}, a file it covers, was modified after it, at {}. The tests have not run since, so the report does not measure the code as it is. Run the test gate first (it writes the report), then this gate",
                utc(created),
                utc(modified)
            ));
        }
    }
    Ok(())
}

/// Reports each range of changed executable lines no test ran; returns (changed lines run,
/// changed executable lines). A range runs over consecutive executable lines: lines that are not
/// executable (blank lines, comments) between two uncovered changed lines do not split it, a
/// line that ran or did not change does.
fn uncovered_ranges(
    files: &BTreeMap<Arc<str>, LineHits>,
    changed: &ChangedLines,
    severity: Severity,
    gate: &Arc<str>,
    violations: &mut Vec<Violation>,
) -> (usize, usize) {
    let (mut run, mut total) = (0, 0);
    for (file, hits) in files {
        let Some(lines) = changed.get(&**file) else {
            continue;
        };
        let mut range: Option<(u32, u32)> = None;
        let mut flush = |range: &mut Option<(u32, u32)>| {
            if let Some((start, end)) = range.take() {
                violations.push(uncovered(file, start, end, severity, gate));
            }
        };
        for (&line, &ran) in hits {
            let is_changed = lines.contains(&line);
            if is_changed {
                total += 1;
                run += usize::from(ran);
            }
            if is_changed && !ran {
                range = Some(match range {
                    Some((start, _)) => (start, line),
                    None => (line, line),
                });
            } else {
                flush(&mut range);
            }
        }
        flush(&mut range);
    }
    (run, total)
}

fn uncovered(
    file: &Arc<str>,
    start: u32,
    end: u32,
    severity: Severity,
    gate: &Arc<str>,
) -> Violation {
    let message = if start == end {
        format!(
            "Line {start} changed since the baseline and no test runs it. Add a test that does."
        )
    } else {
        format!(
            "Lines {start}–{end} changed since the baseline and no test runs them. Add a test that does."
        )
    };
    Violation {
        file: Some(file.clone()),
        line: Some(start),
        end_line: Some(end),
        code: Some("uncovered".into()),
        severity,
        ..Violation::message_only(gate, message)
    }
}

fn file_less(gate: &Arc<str>, code: &str, message: String) -> Violation {
    Violation {
        code: Some(code.into()),
        severity: Severity::Error,
        ..Violation::message_only(gate, message)
    }
}

/// Whether `run` of `total` is below `min` percent, compared exactly (no rounding): exactly the
/// minimum passes.
fn below(run: usize, total: usize, min: f64) -> bool {
    total > 0 && (run as f64) * 100.0 < min * (total as f64)
}

/// Rounded down to two decimals; a report of no executable line is fully covered.
fn percent(run: usize, total: usize) -> f64 {
    if total == 0 {
        return 100.0;
    }
    ((run as f64) * 10_000.0 / (total as f64)).floor() / 100.0
}

/// One decimal, rounded down, for messages.
fn shown(run: usize, total: usize) -> String {
    format!("{:.1}", (percent(run, total) * 10.0).floor() / 10.0)
}

/// `2026-11-26 07:37:19 UTC`.
fn utc(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    // `20261126-073719`: all but the year is fixed-width.
    let stamp = timestamp(secs);
    let (year, r) = stamp.split_at(stamp.len() - 11);
    let (month, day, hour, minute, second) = (&r[..2], &r[2..4], &r[5..7], &r[7..9], &r[9..]);
    format!("{year}-{month}-{day} {hour}:{minute}:{second} UTC")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_minimum_itself_passes() {
        assert!(!below(85, 100, 85.0));
        assert!(below(84, 100, 85.0));
        assert!(!below(2, 3, 66.0));
        assert!(below(2, 3, 66.67));
        assert_eq!(percent(2, 3), 66.66);
        assert_eq!(shown(2, 3), "66.6");
    }

    #[test]
    fn times_read_as_utc() {
        let t = UNIX_EPOCH + std::time::Duration::from_secs(1_795_678_639);
        assert_eq!(utc(t), "2026-11-26 07:37:19 UTC");
    }
}
