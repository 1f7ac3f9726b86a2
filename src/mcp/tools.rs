//! The tools as an agent sees them: names, descriptions, input and output schemas, and how a
//! report or an error becomes a tool result.

use rmcp::handler::server::tool::{schema_for_input, schema_for_output};
use rmcp::model::{CallToolResult, ContentBlock, Tool, ToolAnnotations};

use super::schema::{NoArgs, RunArgs};
use crate::core::report::Report;

pub const RUN: &str = "run_quality_gates";
pub const LAST: &str = "last_summary";

/// Said after an argument error, so the agent can correct its call.
pub const RUN_ACCEPTS: &str = "run_quality_gates accepts: scope (auto | branch | project | files), gates (gate ids), files (paths relative to the workspace root), fix (true or false); all optional.";
pub const LAST_ACCEPTS: &str = "last_summary takes no arguments: call it with {}.";

const RUN_DESCRIPTION: &str = "Run the repository's quality gates (formatters, linters, type checkers from quality.yaml) and report every violation in one format. By default only what changed is checked (scope auto). The first text is a one-line summary; the structured result (also the second text) is the report: overall_pass, summary counts, scope, and per gate its status and violations (file, line, column, code, message, fixable). A failing check is a normal result, not an error.";
const LAST_DESCRIPTION: &str =
    "The result of the last run_quality_gates call in this session, without running anything.";

/// The two tools. A schema that cannot be built is a bug in qgates, reported as such at start-up.
pub fn tools() -> Result<Vec<Tool>, String> {
    let report_schema = schema_for_output::<Report>();
    let run = Tool::new(RUN, RUN_DESCRIPTION, schema_for_input::<RunArgs>()?)
        .with_title("Run quality gates")
        .with_raw_output_schema(report_schema.clone())
        // It writes only qgates' own state and logs, unless `fix` is true.
        .annotate(
            ToolAnnotations::with_title("Run quality gates")
                .read_only(false)
                .destructive(false)
                .open_world(false),
        );
    let last = Tool::new(LAST, LAST_DESCRIPTION, schema_for_input::<NoArgs>()?)
        .with_title("Last quality-gate summary")
        .with_raw_output_schema(report_schema)
        .annotate(
            ToolAnnotations::with_title("Last quality-gate summary")
                .read_only(true)
                .open_world(false),
        );
    Ok(vec![run, last])
}

/// A report as a tool result: the summary line first, the compact JSON as structured content and
/// again as text for clients that do not read structured content.
pub fn report_result(report: &Report) -> CallToolResult {
    let json = report.to_json();
    let structured = serde_json::from_str::<serde_json::Value>(&json).ok();
    let mut result = CallToolResult::success(vec![
        ContentBlock::text(report.summary_line()),
        ContentBlock::text(json),
    ]);
    result.structured_content = structured;
    result
}

/// An error the agent can act on: a tool error (not a protocol error), so its message reaches it.
pub fn error_result(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}
