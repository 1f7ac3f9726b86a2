//! The answer an agent reads (docs/agents.md): the summary line first, then what to act on,
//! grouped by file, each finding on one line with its fix as text the agent can apply:
//!
//! ```text
//! ❌ 1/2 gates failed — 2 new violations (1 auto-fixable): ruff; …
//! gate mypy could not run: mypy: can't read file 'x.py'
//! app/models.py (as checked: blob 3b18e51):
//!   3:8 error F401 `os` imported but unused (ruff)
//!     fix: delete 3:1-4:1
//!   14:5 error assignment Incompatible types in assignment (mypy)
//! ```
//!
//! It shows a page (`ReportPage`): the same findings, in the same order, as the page's JSON,
//! within the same budget. Each file names the content its findings were computed on (its git
//! blob id, `Report::contents`), so an agent that has changed the file since can tell the
//! findings are of an older text.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::finding_text::{finding, row};
use super::page::{ReportPage, reading_order};
use super::{GateStatus, visible};
use crate::core::violation::Violation;

/// The answer: the page's summary line, then its findings. `changed`: the files whose content
/// is no longer what the findings were computed on (`contents::changed_since`), for an answer
/// given after the run.
pub fn render(page: &ReportPage, changed: &[String]) -> String {
    let report = &page.report;
    let mut out = visible(&page.summary_line());
    out.push('\n');
    for g in &report.gates {
        if g.status == GateStatus::Error {
            let why = g.error.as_deref().unwrap_or("no reason recorded");
            let _ = writeln!(out, "gate {} could not run: {}", g.id, visible(why.trim()));
        }
    }
    // Findings without a file first (they are about the whole run), then file by file in the
    // page's reading order.
    let mut files: BTreeMap<&str, Vec<(&str, &Violation)>> = BTreeMap::new();
    for (g, i) in reading_order(report) {
        let gate = &report.gates[g];
        let v = &gate.violations[i];
        match v.file.as_deref() {
            Some(file) => files.entry(file).or_default().push((&gate.id, v)),
            None => {
                let _ = writeln!(out, "{}", row(&gate.id, v));
            }
        }
    }
    for (file, rows) in files {
        let _ = write!(out, "{}", visible(file));
        if changed.iter().any(|c| c == file) {
            out.push_str(" (changed since this check: its findings are of the text before)");
        } else if let Some(id) = report.contents.get(file) {
            let _ = write!(out, " (as checked: blob {})", &id[..id.len().min(7)]);
        }
        out.push_str(":\n");
        for (gate, v) in rows {
            out.push_str(&finding(gate, v));
        }
    }
    out.truncate(out.trim_end().len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::report::page::PageRequest;
    use crate::core::report::{GateResult, Report};
    use crate::core::violation::{Edit, Fix, Severity};

    fn violation(file: Option<&str>, line: u32, code: &str, message: &str) -> Violation {
        let mut v = Violation::message_only("g", message);
        v.file = file.map(Into::into);
        v.line = Some(line);
        v.column = Some(5);
        v.code = Some(code.into());
        v.severity = Severity::Error;
        v
    }

    #[test]
    fn findings_are_grouped_by_file_with_their_fixes_as_text() {
        let mut fixed = violation(Some("b.py"), 3, "F401", "`os` imported but unused");
        fixed.fixable = true;
        fixed.fix = Some(Box::new(Fix {
            title: String::new(),
            edits: vec![Edit {
                line: 3,
                column: 1,
                end_line: 4,
                end_column: 1,
                content: String::new(),
            }],
        }));
        let mut old = violation(Some("a.py"), 9, "E501", "line too long\nsecond line");
        old.new = Some(false);
        let mut gate: GateResult = serde_json::from_value(
            serde_json::json!({"id": "ruff", "name": "Ruff", "status": "failed"}),
        )
        .unwrap();
        gate.violations = vec![
            fixed,
            violation(Some("a.py"), 2, "F821", "undefined name `x`"),
            old,
            violation(None, 0, "cfg", "no configuration file"),
        ];
        let mut report = Report::new(Default::default(), vec![gate], 0, None);
        report.contents.insert(
            "b.py".into(),
            "3b18e512dba79e4c8300dd08aeb37f8e728b8dad".into(),
        );
        let page = report.page(PageRequest::default().with_existing(Some(true)));
        let text = render(&page, &[]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1..],
            [
                "error cfg no configuration file (ruff)",
                "a.py:",
                "  2:5 error F821 undefined name `x` (ruff)",
                "  9:5 error E501 line too long ⏎ second line (ruff) (pre-existing)",
                "b.py (as checked: blob 3b18e51):",
                "  3:5 error F401 `os` imported but unused (ruff)",
                "    fix: delete 3:1-4:1",
            ],
            "{text}"
        );
    }
}
