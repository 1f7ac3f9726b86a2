//! The tools as an agent sees them: names, descriptions, input and output schemas, and how a
//! report or an error becomes a tool result.

use rmcp::handler::server::tool::{schema_for_input, schema_for_output};
use rmcp::model::{CallToolResult, ContentBlock, Tool, ToolAnnotations};

use super::schema::{LastArgs, RunArgs};
use crate::core::report::page::{PageRequest, ReportPage};
use crate::core::report::{Report, agent};

pub const RUN: &str = "run_quality_gates";
pub const LAST: &str = "last_summary";

/// Said after an argument error, so the agent can correct its call.
pub const RUN_ACCEPTS: &str = "run_quality_gates accepts: scope (auto | branch | project | files), gates (gate ids), skip_kinds or only_kinds (gate kinds: format, lint, typecheck, test, e2e, deps, other), files (paths relative to the workspace root), fix (true or false), clean_room (true or false), rev (a commit, with clean_room), max_violations (a whole number, 0 or more; default 50), offset (a whole number, 0 or more; default 0), include_existing (true or false); all optional.";
pub const LAST_ACCEPTS: &str = "last_summary accepts: max_violations (a whole number, 0 or more; default 50), offset (a whole number, 0 or more; default 0), include_existing (true or false); all optional: call it with {} for the first page.";

const RUN_DESCRIPTION: &str = "Run the repository's quality gates (formatters, linters, type checkers from quality.yaml) and report their violations in one format. By default only what changed is checked (scope auto). The text answer starts with a one-line summary, then lists the violations grouped by file, one per line (line:column severity code message (gate)), each fix as the edits to make (lines and columns from 1, in characters), and each file with the content the findings were computed on. The structured result is the same page as JSON: overall_pass, summary counts, scope, and per gate its status and violations. At most max_violations (default 50) violations are shown, errors first, and fewer when they would not fit in about 8 KB: the summary line says how many are left and which offset shows the next ones, and `full_report` names a JSON file holding all of them; call last_summary with offset=next_offset for the next page. In an auto or branch run each violation says whether this change introduced it (\"new\": true) or it was there at the scope's base commit (false); new ones come first, pre-existing ones are only counted (novelty: new, existing, fixed) unless include_existing is true. A failing check is a normal result, not an error.";
const LAST_DESCRIPTION: &str = "The result of the last run_quality_gates call in this session, without running anything: any page of its violations (max_violations, offset).";

/// The two tools. A schema that cannot be built is a bug in qgates, reported as such at start-up.
pub fn tools() -> Result<Vec<Tool>, String> {
    let report_schema = schema_for_output::<ReportPage>();
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
    let last = Tool::new(LAST, LAST_DESCRIPTION, schema_for_input::<LastArgs>()?)
        .with_title("Last quality-gate summary")
        .with_raw_output_schema(report_schema)
        .annotate(
            ToolAnnotations::with_title("Last quality-gate summary")
                .read_only(true)
                .open_world(false),
        );
    Ok(vec![run, last])
}

/// One page of a report as a tool result: the text an agent reads (the summary line, then the
/// page's findings by file with their fixes, `report::agent`) and the page's JSON as
/// structured content. The JSON is not repeated as text: the answer stays within its budget
/// (`page::ANSWER_BYTES`), and the text says all an agent acts on. `changed`: files changed
/// since the run.
pub fn report_result(report: &Report, page: PageRequest, changed: &[String]) -> CallToolResult {
    let page = report.page(page);
    let structured = serde_json::from_str::<serde_json::Value>(&page.to_json()).ok();
    let mut result =
        CallToolResult::success(vec![ContentBlock::text(agent::render(&page, changed))]);
    result.structured_content = structured;
    result
}

/// An error the agent can act on: a tool error (not a protocol error), so its message reaches it.
pub fn error_result(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}
