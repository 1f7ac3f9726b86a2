//! `exit_code`: pass/fail only. A findings exit code becomes one file-less violation.

use std::borrow::Cow;

use super::{Normalizer, ParseContext, RawViolation, ToolOutput};

pub(super) fn parse(out: ToolOutput, ctx: &ParseContext, norm: &mut Normalizer) {
    let gate = ctx.gate;
    if let Some(code) = out.exit_code
        && (gate.exit_codes_findings.contains(&code) || gate.exit_codes_incomplete.contains(&code))
    {
        norm.push(RawViolation {
            message: Some(Cow::Owned(format!(
                "{} failed with exit code {code}. See the log: {}",
                gate.name, ctx.log_hint
            ))),
            ..RawViolation::default()
        });
    }
}
