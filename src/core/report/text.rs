//! `--format text`: the report for a person at a terminal.
//!
//! The summary line first (with the configuration used), then every violation grouped under its
//! file (files sorted, violations by line and column, all gates merged, so one file's problems
//! read together), then one block per gate: what it needs (fix hint; error and logs when it
//! could not run), its file-less violations, or why it was skipped; last the scope, and one line
//! naming the run's log folder.
//! ANSI colour only when asked for; the CLI asks only on a terminal without `NO_COLOR`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{GateResult, GateStatus, Report, count, known, scope_line, visible};
use crate::core::violation::{Severity, Violation};

/// The SGR codes this format uses.
mod sgr {
    pub const BOLD: &str = "1";
    pub const DIM: &str = "2";
    pub const RED: &str = "31";
    pub const GREEN: &str = "32";
    pub const YELLOW: &str = "33";
    pub const BLUE: &str = "34";
    pub const MAGENTA: &str = "35";
    pub const CYAN: &str = "36";
}

/// Wraps text in one SGR code, or leaves it alone when colour is off.
struct Paint {
    color: bool,
}

impl Paint {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn severity(&self, s: Severity, text: &str) -> String {
        let code = match s {
            Severity::Error => sgr::RED,
            Severity::Warning => sgr::YELLOW,
            Severity::Info => sgr::BLUE,
            Severity::Hint => sgr::CYAN,
        };
        self.paint(code, text)
    }

    fn status(&self, g: &GateResult) -> String {
        let (code, word) = match g.status {
            GateStatus::Passed => (sgr::GREEN, "passed"),
            GateStatus::Failed if g.allow_fail => (sgr::YELLOW, "failed (allowed to fail)"),
            GateStatus::Failed => (sgr::RED, "failed"),
            GateStatus::Error if g.allow_fail => (sgr::YELLOW, "could not run (allowed to fail)"),
            GateStatus::Error => (sgr::MAGENTA, "could not run"),
            GateStatus::Skipped => (sgr::DIM, "skipped"),
        };
        self.paint(code, word)
    }
}

/// Renders the report for a terminal; `color` switches ANSI colour on; `show_existing` lists
/// pre-existing violations of a `--new-only` run too.
pub fn render(report: &Report, color: bool, show_existing: bool) -> String {
    let p = Paint { color };
    let mut out = String::new();
    let mut header = p.paint(sgr::BOLD, &visible(&report.summary_line()));
    if !report.config.is_empty() {
        let _ = write!(
            header,
            " {}",
            p.paint(sgr::DIM, &format!("· config: {}", visible(&report.config)))
        );
    }
    let _ = writeln!(out, "{header}");

    // All gates' violations, merged per file; a BTreeMap keeps the files sorted.
    let mut per_file: BTreeMap<&str, Vec<(&GateResult, &Violation)>> = BTreeMap::new();
    let mut unlisted = 0;
    for g in &report.gates {
        for v in &g.violations {
            if !report.lists(v, show_existing) {
                unlisted += 1;
                continue;
            }
            if let Some(file) = v.file.as_deref() {
                per_file.entry(file).or_default().push((g, v));
            }
        }
    }
    for (file, mut list) in per_file {
        let _ = writeln!(out, "\n{}", p.paint(sgr::BOLD, &visible(file)));
        // By position across gates; the sort is stable, so ties keep the gate order.
        list.sort_by_key(|(_, v)| (v.line, v.column));
        write_rows(&mut out, &p, &list);
    }

    if unlisted > 0 {
        let _ = writeln!(
            out,
            "\n{}",
            p.paint(
                sgr::DIM,
                &format!(
                    "{} not listed (--show-existing lists them).",
                    count(unlisted, "pre-existing violation")
                )
            )
        );
    }
    out.push('\n');
    for g in &report.gates {
        write_gate(&mut out, &p, g);
    }

    let mut scope = scope_line(&report.scope, str::to_string, str::to_string);
    let _ = write!(scope, ". Took {}.", seconds(report.timings.total_ms));
    let _ = writeln!(out, "\n{}", p.paint(sgr::DIM, &visible(&scope)));
    for w in &report.warnings {
        let _ = writeln!(
            out,
            "{}",
            p.paint(
                sgr::YELLOW,
                &visible(&format!("Warning: {}.", w.trim_end_matches('.')))
            )
        );
    }
    // One line for the whole run: every gate's output is in the folder, `<gate id>.stdout` and
    // `.stderr`; only a gate that could not run names its own (above), its error needs them.
    if let Some(dir) = &report.log_dir {
        let what = if report.full_report.is_some() {
            "Logs and report.json"
        } else {
            "Logs"
        };
        let _ = writeln!(
            out,
            "{}",
            p.paint(sgr::DIM, &visible(&format!("{what}: {dir}/")))
        );
    }
    out
}

/// One gate's block: a status line, then what a person needs to act on it.
fn write_gate(out: &mut String, p: &Paint, g: &GateResult) {
    let mut head = p.paint(sgr::BOLD, &visible(&g.name));
    if g.name != g.id {
        let _ = write!(head, " ({})", visible(&g.id));
    }
    let _ = write!(head, ": {}", p.status(g));
    match g.status {
        GateStatus::Failed | GateStatus::Error if !g.violations.is_empty() => {
            let fixable = g.violations.iter().filter(|v| v.fixable).count();
            let _ = write!(head, " — {}", count(g.violations.len(), "violation"));
            if fixable > 0 {
                let _ = write!(head, ", {fixable} auto-fixable");
            }
        }
        GateStatus::Skipped => {
            let _ = write!(
                head,
                " — {}",
                visible(g.skip_reason.as_deref().unwrap_or("no reason given"))
            );
        }
        _ => {}
    }
    if g.status == GateStatus::Passed && g.files_checked > 0 {
        let _ = write!(head, " ({} checked)", count(g.files_checked, "file"));
    }
    let _ = writeln!(out, "{head}");
    if let Some(coverage) = &g.coverage {
        let _ = writeln!(out, "  Coverage: {}", visible(&coverage.long()));
    }

    let file_less: Vec<(&GateResult, &Violation)> = g
        .violations
        .iter()
        .filter(|v| v.file.is_none())
        .map(|v| (g, v))
        .collect();
    write_rows(out, p, &file_less);

    if g.status == GateStatus::Error {
        let error = g
            .error
            .as_deref()
            .unwrap_or("the gate could not run (no reason recorded)");
        let _ = writeln!(
            out,
            "  {} {}",
            p.paint(sgr::MAGENTA, "Error:"),
            indent(&visible(error), 9)
        );
    }
    if g.incomplete {
        let _ = writeln!(
            out,
            "  Stopped early: {} did not check every file it was given (exit code {}); fix these findings first, then the rest are checked",
            visible(&g.name),
            g.exit_code.map_or("?".to_string(), |c| c.to_string())
        );
    }
    if g.outside_root > 0 {
        let _ = writeln!(
            out,
            "  Left out: {} in files outside the workspace root",
            count(g.outside_root, "violation")
        );
    }
    if matches!(g.status, GateStatus::Failed | GateStatus::Error)
        && let Some(hint) = &g.fix_hint
    {
        let _ = writeln!(out, "  {} {}", p.paint(sgr::GREEN, "Fix:"), visible(hint));
    }
    if g.status == GateStatus::Error
        && let Some(log) = &g.log
    {
        let _ = writeln!(
            out,
            "  Logs: {}, {}",
            visible(&log.stdout),
            visible(&log.stderr)
        );
    }
}

/// Violation rows, columns aligned within the block:
/// `  12:5  error  F401  message  (Ruff Lint) [fixable]`.
fn write_rows(out: &mut String, p: &Paint, rows: &[(&GateResult, &Violation)]) {
    let loc = |v: &Violation| match (known(v.line), known(v.column)) {
        (Some(l), Some(c)) => format!("{l}:{c}"),
        (Some(l), None) => l.to_string(),
        // A finding about the whole file, or about no file.
        _ => "-".to_string(),
    };
    let code = |v: &Violation| visible(v.code.as_deref().unwrap_or(""));
    let width = |f: &dyn Fn(&Violation) -> String| {
        rows.iter()
            .map(|(_, v)| f(v).chars().count())
            .max()
            .unwrap_or(0)
    };
    let loc_w = width(&loc);
    let sev_w = width(&|v| v.severity.as_str().to_string());
    let code_w = width(&code);
    // Where the message starts, so the lines of a multi-line message line up under the first.
    let msg_col = 2 + loc_w + 2 + sev_w + 2 + if code_w > 0 { code_w + 2 } else { 0 };

    for (g, v) in rows {
        let mut line = format!("  {:<loc_w$}  ", loc(v));
        let sev = v.severity.as_str();
        line.push_str(&p.severity(v.severity, sev));
        line.push_str(&" ".repeat(sev_w - sev.len() + 2));
        if code_w > 0 {
            let c = code(v);
            line.push_str(&p.paint(sgr::DIM, &c));
            line.push_str(&" ".repeat(code_w - c.chars().count() + 2));
        }
        let message = visible(&v.message);
        let mut lines = message.lines();
        line.push_str(lines.next().unwrap_or(""));
        let _ = write!(
            line,
            "  {}",
            p.paint(sgr::DIM, &format!("({})", visible(&g.name)))
        );
        if v.fixable {
            let _ = write!(line, " {}", p.paint(sgr::GREEN, "[fixable]"));
        }
        let _ = writeln!(out, "{line}");
        for rest in lines {
            let _ = writeln!(out, "{}{rest}", " ".repeat(msg_col));
        }
    }
}

/// Indents every line after the first by `n` spaces.
fn indent(s: &str, n: usize) -> String {
    s.lines()
        .collect::<Vec<_>>()
        .join(&format!("\n{}", " ".repeat(n)))
}

fn seconds(ms: u64) -> String {
    format!("{}.{:02} s", ms / 1000, (ms % 1000) / 10)
}
