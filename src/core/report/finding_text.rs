//! One finding as an agent's answer writes it (`agent`): `12:5 error F401 message (gate)`, then
//! its fix as the edits to make. Pages (`page`) count these bytes against their budget.

use std::fmt::Write as _;

use super::visible;
use crate::core::violation::{Edit, Violation};

/// A finding of a file's group: its row, and its fix on the next line.
pub(super) fn finding(gate: &str, v: &Violation) -> String {
    let mut text = format!("  {}\n", row(gate, v));
    if let Some(fix) = &v.fix {
        let edits: Vec<String> = fix.edits.iter().map(edit).collect();
        let _ = writeln!(text, "    fix: {}", edits.join("; "));
    } else if v.fixable {
        let file = visible(v.file.as_deref().unwrap_or(""));
        let _ = writeln!(text, "    fix: qgates check --fix {file}");
    }
    text
}

/// The bytes a finding takes in the answer's text, its file's heading aside.
pub fn finding_len(gate: &str, v: &Violation) -> usize {
    finding(gate, v).len()
}

/// `12:5 error F401 message (gate)`, with `(pre-existing)` for a finding the change did not
/// introduce.
pub(super) fn row(gate: &str, v: &Violation) -> String {
    let mut row = String::new();
    match (v.line, v.column) {
        (Some(l), Some(c)) if l > 0 && c > 0 => {
            let _ = write!(row, "{l}:{c} ");
        }
        (Some(l), _) if l > 0 => {
            let _ = write!(row, "{l} ");
        }
        _ => {}
    }
    row.push_str(v.severity.as_str());
    if let Some(code) = &v.code {
        let _ = write!(row, " {}", visible(code));
    }
    // One line per finding: a message's later lines are joined.
    let message: Vec<&str> = v.message.lines().map(str::trim_end).collect();
    let _ = write!(row, " {} ({gate})", visible(&message.join(" ⏎ ")));
    if v.new == Some(false) {
        row.push_str(" (pre-existing)");
    }
    row
}

/// One edit as text: `delete 3:1-4:1`, `insert at 3:1 "x"`, `replace 3:1-3:4 with "x"`.
/// Lines and columns from 1, columns in characters; the text is a JSON string.
fn edit(e: &Edit) -> String {
    let text = serde_json::to_string(&e.content).unwrap_or_default();
    let (from, to) = (
        format!("{}:{}", e.line, e.column),
        format!("{}:{}", e.end_line, e.end_column),
    );
    match (from == to, e.content.is_empty()) {
        (true, _) => format!("insert at {from} {text}"),
        (false, true) => format!("delete {from}-{to}"),
        (false, false) => format!("replace {from}-{to} with {text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_say_what_to_put_where() {
        let at = |line, column, end_line, end_column, content: &str| Edit {
            line,
            column,
            end_line,
            end_column,
            content: content.into(),
        };
        assert_eq!(
            edit(&at(2, 1, 2, 1, "import os\n")),
            "insert at 2:1 \"import os\\n\""
        );
        assert_eq!(
            edit(&at(2, 1, 2, 4, "\"é\"")),
            "replace 2:1-2:4 with \"\\\"é\\\"\""
        );
        assert_eq!(edit(&at(2, 1, 3, 1, "")), "delete 2:1-3:1");
    }
}
