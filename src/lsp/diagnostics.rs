//! Violations as LSP diagnostics, and back: the range in the negotiated encoding (computed from
//! the file's text), severity, `source` = the gate's name, `code` with its documentation link, and
//! `data` carrying what a quick fix needs. A client gets only the fields it declared
//! (`DiagnosticCaps`) and at most `MAX_DIAGNOSTICS_PER_FILE` of a file's diagnostics
//! (`shown`); the server keeps every whole diagnostic for its quick fixes.

use std::path::Path;

use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types::{
    CodeDescription, Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range, TextEdit, Uri,
};

use super::position::{Encoding, Lines};
use crate::core::config::ConfigProblem;
use crate::core::report::{Edit, Fix, Severity, Violation};

/// The most diagnostics a client is shown for one file. A tool that reports thousands of
/// findings in one file (a generated file, a rule gone wrong) would otherwise send the editor a
/// message of megabytes on every save, which it renders slowly and no one reads.
pub const MAX_DIAGNOSTICS_PER_FILE: usize = 1_000;

/// What a client is shown of a file's diagnostics, pushed or pulled alike: the first
/// `MAX_DIAGNOSTICS_PER_FILE`, shaped for the client, then one at line 1 that says how many more
/// there are and where the run's logs (`log_dir`) hold them all.
pub fn shown(all: &[Diagnostic], log_dir: Option<&Path>, caps: DiagnosticCaps) -> Vec<Diagnostic> {
    let mut shown: Vec<Diagnostic> = all
        .iter()
        .take(MAX_DIAGNOSTICS_PER_FILE)
        .map(|d| caps.shape(d.clone()))
        .collect();
    if all.len() > MAX_DIAGNOSTICS_PER_FILE {
        let more = all.len() - MAX_DIAGNOSTICS_PER_FILE;
        let log = match log_dir {
            Some(dir) => format!("see the log: {}", dir.display()),
            None => "see the qgates log (at level info)".to_string(),
        };
        shown.push(Diagnostic {
            range: Range::default(),
            severity: Some(DiagnosticSeverity::INFORMATION),
            source: Some("qgates".into()),
            message: format!("{more} more findings in this file are not shown; {log}"),
            ..Default::default()
        });
    }
    shown
}

/// What a diagnostic carries for code actions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiagnosticData {
    /// The gate's id.
    pub gate: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fixable: bool,
    /// The tool's own fix (engine positions: 1-based, character columns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<Fix>,
}

/// The optional fields of a published diagnostic that the client declared it takes
/// (`textDocument.publishDiagnostics`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiagnosticCaps {
    pub code_description: bool,
    pub data: bool,
    pub version: bool,
}

impl DiagnosticCaps {
    /// A diagnostic without the fields the client did not declare.
    pub fn shape(self, mut d: Diagnostic) -> Diagnostic {
        if !self.code_description {
            d.code_description = None;
        }
        if !self.data {
            d.data = None;
        }
        d
    }

    /// The document version, for a client that takes it.
    pub fn version(self, version: Option<i32>) -> Option<i32> {
        version.filter(|_| self.version)
    }
}

/// How findings that were there before the change (`"new": false`) are shown: the
/// `existingFindings` initialization option (docs/lsp.md, "New and pre-existing findings").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExistingFindings {
    Hint,
    #[default]
    Information,
    /// At the finding's own severity.
    Same,
    /// Not shown.
    Hide,
}

impl ExistingFindings {
    /// A pre-existing finding's diagnostic as the setting shows it: its source says so, and its
    /// severity is lowered, so the problem list leads with what the change did. `None`: hidden.
    pub fn show(self, mut d: Diagnostic) -> Option<Diagnostic> {
        let lowered = match self {
            ExistingFindings::Hide => return None,
            ExistingFindings::Same => d.severity,
            ExistingFindings::Hint => Some(DiagnosticSeverity::HINT),
            ExistingFindings::Information => Some(DiagnosticSeverity::INFORMATION),
        };
        // Never raised: a hint stays a hint.
        d.severity = lowered.max(d.severity);
        d.source = Some(match d.source {
            Some(source) => format!("{source} (pre-existing)"),
            None => "pre-existing".to_string(),
        });
        Some(d)
    }
}

pub fn severity(s: Severity) -> DiagnosticSeverity {
    match s {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
        Severity::Hint => DiagnosticSeverity::HINT,
    }
}

/// The range a violation covers. A file-level finding covers line 1; a line without a column
/// covers the line; a start without an end is an empty range at the start.
pub fn range_of(v: &Violation, lines: &Lines, enc: Encoding) -> Range {
    let Some(line) = v.line.filter(|l| *l > 0) else {
        return lines.line_range(0, enc);
    };
    let Some(column) = v.column.filter(|c| *c > 0) else {
        return lines.line_range(line - 1, enc);
    };
    let start = lines.to_lsp(line, column, enc);
    let end = match (v.end_line, v.end_column) {
        (Some(el), Some(ec)) if el > 0 && ec > 0 => lines.to_lsp(el, ec, enc),
        _ => start,
    };
    Range::new(start, if end < start { start } else { end })
}

/// A violation as a diagnostic, its range converted with the file's `lines`. A documentation
/// link that is not a valid URI is left out (clients reject the whole message).
pub fn to_diagnostic(gate_name: &str, v: &Violation, lines: &Lines, enc: Encoding) -> Diagnostic {
    let data = DiagnosticData {
        gate: v.gate.to_string(),
        fixable: v.fixable,
        fix: v.fix.as_deref().cloned(),
    };
    Diagnostic {
        range: range_of(v, lines, enc),
        severity: Some(severity(v.severity)),
        code: v.code.as_deref().map(|c| NumberOrString::String(c.into())),
        code_description: v
            .url
            .as_deref()
            .and_then(|u| u.parse::<Uri>().ok())
            .map(|href| CodeDescription { href }),
        source: Some(gate_name.to_string()),
        message: v.message.to_string(),
        data: serde_json::to_value(data).ok(),
        ..Default::default()
    }
}

/// A tool's edits as LSP text edits on the text they were computed for.
pub fn to_text_edits(edits: &[Edit], lines: &Lines, enc: Encoding) -> Vec<TextEdit> {
    edits
        .iter()
        .map(|e| TextEdit {
            range: Range::new(
                lines.to_lsp(e.line, e.column, enc),
                lines.to_lsp(e.end_line, e.end_column, enc),
            ),
            new_text: e.content.clone(),
        })
        .collect()
}

/// A configuration problem as a diagnostic on `quality.yaml`, at its line and column.
pub fn config_problem(p: &ConfigProblem, lines: &Lines, enc: Encoding) -> Diagnostic {
    let range = if p.line == 0 {
        lines.line_range(0, enc)
    } else {
        let start = lines.to_lsp(p.line, p.column.max(1), enc);
        // To the end of the line: the value the problem is about starts there.
        let end = Position::new(
            start.line,
            lines.line_len(start.line, enc).max(start.character),
        );
        Range::new(start, end)
    };
    Diagnostic {
        range,
        severity: Some(DiagnosticSeverity::ERROR),
        source: Some("qgates".into()),
        message: p.message.clone(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn violation(line: Option<u32>, column: Option<u32>, end: Option<(u32, u32)>) -> Violation {
        let mut v = Violation::message_only("ruff_lint", "`os` imported but unused");
        v.file = Some("src/a.py".into());
        v.line = line;
        v.column = column;
        v.end_line = end.map(|e| e.0);
        v.end_column = end.map(|e| e.1);
        v.code = Some("F401".into());
        v.url = Some("https://docs.astral.sh/ruff/rules/unused-import".into());
        v
    }

    #[test]
    fn a_violation_after_non_ascii_text_lands_on_the_right_characters() {
        let text = "s = 'é漢😀'; import os\n";
        let lines = Lines::new(text);
        // `os` is characters 19..21 (1-based, end exclusive); the emoji is two UTF-16 units and
        // four bytes, `é` two bytes, `漢` three.
        let v = violation(Some(1), Some(19), Some((1, 21)));
        let diagnostic = |enc| to_diagnostic("Ruff Lint", &v, &lines, enc);
        let d16 = diagnostic(Encoding::Utf16);
        let range = |a, b| Range::new(Position::new(0, a), Position::new(0, b));
        assert_eq!(d16.range, range(19, 21));
        let d8 = diagnostic(Encoding::Utf8);
        assert_eq!(d8.range, range(24, 26));
        assert_eq!(d8.code, Some(NumberOrString::String("F401".into())));
        assert_eq!(d8.source.as_deref(), Some("Ruff Lint"));
        assert_eq!(
            d8.code_description.map(|c| c.href.to_string()),
            Some("https://docs.astral.sh/ruff/rules/unused-import".into())
        );
        let data: DiagnosticData = serde_json::from_value(d8.data.unwrap()).unwrap();
        assert_eq!(data.gate, "ruff_lint");
    }

    #[test]
    fn the_data_carries_the_gate_and_the_fix_and_a_bad_link_is_left_out() {
        let lines = Lines::new("import os\nx = 1\n");
        let mut v = violation(Some(1), Some(8), Some((1, 10)));
        v.fixable = true;
        v.fix = Some(Box::new(Fix {
            title: "Remove unused import: `os`".into(),
            edits: vec![Edit {
                line: 1,
                column: 1,
                end_line: 2,
                end_column: 1,
                content: String::new(),
            }],
        }));
        let d = to_diagnostic("Ruff Lint", &v, &lines, Encoding::Utf16);
        let data: DiagnosticData = serde_json::from_value(d.data.expect("data")).expect("data");
        assert_eq!(data.gate, "ruff_lint");
        assert!(data.fixable);
        assert_eq!(data.fix.as_ref(), v.fix.as_deref());
        assert_eq!(d.severity, Some(DiagnosticSeverity::ERROR));
        assert_eq!(d.message, "`os` imported but unused");

        v.url = Some("not a link".into());
        v.code = None;
        v.fix = None;
        v.fixable = false;
        let d = to_diagnostic("Ruff Lint", &v, &lines, Encoding::Utf16);
        assert_eq!(d.code_description, None);
        assert_eq!(d.code, None);
        let data = d.data.expect("data");
        assert_eq!(data, serde_json::json!({"gate": "ruff_lint"}));
    }

    #[test]
    fn a_client_gets_only_the_fields_it_declared() {
        let lines = Lines::new("import os\n");
        let mut v = violation(Some(1), Some(8), Some((1, 10)));
        v.fixable = true;
        let whole = to_diagnostic("Ruff Lint", &v, &lines, Encoding::Utf16);
        let none = DiagnosticCaps::default();
        let bare = none.shape(whole.clone());
        assert_eq!((bare.code_description, bare.data), (None, None));
        assert_eq!((bare.range, &bare.message), (whole.range, &whole.message));
        assert_eq!(none.version(Some(3)), None);
        let all = DiagnosticCaps {
            code_description: true,
            data: true,
            version: true,
        };
        assert_eq!(all.shape(whole.clone()), whole);
        assert_eq!(all.version(Some(3)), Some(3));
    }

    #[test]
    fn file_level_and_line_level_findings_cover_lines() {
        let lines = Lines::new("import os\nx = 1\n");
        let file_level = violation(None, None, None);
        assert_eq!(
            range_of(&file_level, &lines, Encoding::Utf16),
            Range::new(Position::new(0, 0), Position::new(0, 9))
        );
        let line_level = violation(Some(2), None, None);
        assert_eq!(
            range_of(&line_level, &lines, Encoding::Utf16),
            Range::new(Position::new(1, 0), Position::new(1, 5))
        );
        let start_only = violation(Some(2), Some(3), None);
        assert_eq!(
            range_of(&start_only, &lines, Encoding::Utf16),
            Range::new(Position::new(1, 2), Position::new(1, 2))
        );
    }

    #[test]
    fn a_client_is_shown_the_first_diagnostics_and_how_many_more_there_are() {
        let lines = Lines::new("import os\n");
        let all: Vec<Diagnostic> = (0..MAX_DIAGNOSTICS_PER_FILE + 5)
            .map(|i| {
                let mut v = violation(Some(1), Some(1), None);
                v.message = format!("finding {i}").into();
                to_diagnostic("Ruff Lint", &v, &lines, Encoding::Utf16)
            })
            .collect();
        let caps = DiagnosticCaps::default();
        let shown_ = shown(&all, Some(Path::new("/w/.qgates/runs/7")), caps);
        assert_eq!(shown_.len(), MAX_DIAGNOSTICS_PER_FILE + 1);
        assert_eq!(shown_[0], caps.shape(all[0].clone()));
        let note = shown_.last().unwrap();
        assert_eq!(
            note.message,
            "5 more findings in this file are not shown; see the log: /w/.qgates/runs/7"
        );
        assert_eq!(note.severity, Some(DiagnosticSeverity::INFORMATION));
        assert_eq!(note.range.start, Position::new(0, 0));
        let few = shown(&all[..3], None, caps);
        assert_eq!(
            few,
            all[..3]
                .iter()
                .map(|d| caps.shape(d.clone()))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn config_problems_point_at_their_line_and_column() {
        let text = "version: 1\nactive_gates: [ruff_lnt]\n";
        let p = ConfigProblem {
            file: "quality.yaml".into(),
            line: 2,
            column: 16,
            message: "unknown gate".into(),
        };
        let d = config_problem(&p, &Lines::new(text), Encoding::Utf16);
        assert_eq!(d.range.start, Position::new(1, 15));
        assert_eq!(d.severity, Some(DiagnosticSeverity::ERROR));
    }
}
