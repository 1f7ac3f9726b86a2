//! The violations of a `strategy: junit` gate as rows that compare in one assertion.

use serde_json::Value;

/// (file, line, column, code, message) of one violation.
pub type Row = (String, Option<u64>, Option<u64>, String, String);

/// The rows of a gate's violations, in the report's order.
pub fn rows(violations: &Value) -> Vec<Row> {
    violations
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            (
                v["file"].as_str().unwrap_or_default().to_string(),
                v["line"].as_u64(),
                v["column"].as_u64(),
                v["code"].as_str().unwrap_or_default().to_string(),
                v["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

pub fn row(file: &str, line: u64, column: Option<u64>, code: &str, message: &str) -> Row {
    (file.into(), Some(line), column, code.into(), message.into())
}
