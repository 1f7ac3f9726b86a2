//! `exit_code`: pass/fail only. A findings exit code becomes one file-less violation.

use std::borrow::Cow;

use super::{ParseContext, RawViolation, ToolOutput};

pub(super) fn parse(out: ToolOutput, ctx: &ParseContext) -> Vec<RawViolation<'static>> {
    match out.exit_code {
        Some(code)
            if ctx.gate.exit_codes_findings.contains(&code)
                || ctx.gate.exit_codes_incomplete.contains(&code) =>
        {
            vec![RawViolation {
                message: Some(Cow::Owned(format!(
                    "{} failed with exit code {code}. See the log: {}",
                    ctx.gate.name, ctx.log_hint
                ))),
                ..RawViolation::default()
            }]
        }
        _ => Vec::new(),
    }
}
