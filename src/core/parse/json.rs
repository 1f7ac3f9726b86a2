//! Placeholder; replaced by the real strategy.
use super::{ParseContext, ParseError, RawViolation, ToolOutput};
pub(super) fn parse(
    _spec: &crate::core::config::JsonSpec,
    _out: ToolOutput,
    _ctx: &ParseContext,
) -> Result<Vec<RawViolation>, ParseError> {
    Ok(Vec::new())
}
