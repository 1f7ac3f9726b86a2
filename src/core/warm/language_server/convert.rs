//! A language server's diagnostics as violations: 0-based lines, UTF-16 characters (the
//! protocol's default encoding, the one qgates asks for) → 1-based lines and characters.
//! Diagnostics an editor only dims or strikes through (hints tagged unnecessary or
//! deprecated: unused names, unreachable code) are not findings the tool's command line
//! reports, and are left out.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::core::config::ColumnUnit;
use crate::core::parse::columns::{LineIndex, convert_column};
use crate::core::violation::{Severity, Violation};
use crate::core::workspace::paths::relative_posix;

/// The violations of one file's diagnostics; `text` is what the server was given.
pub fn violations(root: &Path, file: &Path, text: &str, diagnostics: &[Value]) -> Vec<Violation> {
    let Some(rel) = relative_posix(root, file) else {
        return Vec::new();
    };
    let rel: Arc<str> = rel.into();
    let index = LineIndex::new(text);
    diagnostics
        .iter()
        .filter(|d| !dimmed_only(d))
        .filter_map(|d| {
            let range = &d["range"];
            let at = |end: &str| -> Option<(u32, u32)> {
                let line = u32::try_from(range[end]["line"].as_u64()?).ok()? + 1;
                let character = u32::try_from(range[end]["character"].as_u64()?).ok()? + 1;
                let column =
                    convert_column(&index, line, character, ColumnUnit::Utf16, ColumnUnit::Char);
                Some((line, column))
            };
            let (line, column) = at("start")?;
            let end = at("end");
            Some(Violation {
                file: Some(rel.clone()),
                line: Some(line),
                column: Some(column),
                end_line: end.map(|e| e.0),
                end_column: end.map(|e| e.1),
                code: code(&d["code"]),
                message: d["message"].as_str().unwrap_or_default().into(),
                severity: severity(&d["severity"]),
                fixable: false,
                url: d["codeDescription"]["href"].as_str().map(Into::into),
                fix: None,
                gate: Arc::from(""),
                new: None,
            })
        })
        .collect()
}

fn code(v: &Value) -> Option<Arc<str>> {
    match v {
        Value::String(s) => Some(s.as_str().into()),
        Value::Number(n) => Some(n.to_string().into()),
        _ => None,
    }
}

/// 1 error, 2 warning, 3 information, 4 hint; a diagnostic without one is an error.
fn severity(v: &Value) -> Severity {
    match v.as_u64() {
        Some(2) => Severity::Warning,
        Some(3) => Severity::Info,
        Some(4) => Severity::Hint,
        _ => Severity::Error,
    }
}

/// A hint tagged unnecessary (1) or deprecated (2): the editor fades the code, nothing more.
fn dimmed_only(d: &Value) -> bool {
    d["severity"].as_u64() == Some(4)
        && d["tags"]
            .as_array()
            .is_some_and(|tags| tags.iter().any(|t| matches!(t.as_u64(), Some(1 | 2))))
}
