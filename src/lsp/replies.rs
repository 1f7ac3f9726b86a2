//! What a command answers: one page of a report with its summary line, or the error of a request
//! that was valid but whose work could not be done.

use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Error;

use crate::core::report::Report;
use crate::core::report::page::PageRequest;

/// `{summary_line, report}`: the line people read first and one page of the report (the JSON of
/// `qgates check` with at most `max_violations` violations, and where the rest are).
pub(super) fn answer(report: &Report, page: PageRequest) -> Value {
    let page = report.page(page);
    json!({
        "summary_line": page.summary_line(),
        "report": serde_json::from_str::<Value>(&page.to_json()).unwrap_or(Value::Null),
    })
}

/// LSP's RequestFailed: the request was valid, the work could not be done.
pub(super) fn failed(why: &str) -> Error {
    Error {
        code: tower_lsp_server::jsonrpc::ErrorCode::ServerError(-32803),
        message: why.to_string().into(),
        data: None,
    }
}
