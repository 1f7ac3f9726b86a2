//! `strategy: coverage`'s keys in `parsing`, checked: the report's format (one of the three
//! coverage formats, not a json_violations layout) and the thresholds, percentages from 0 to 100.

use serde_saphyr::Spanned;

use super::error::Problems;
use super::model::{OutputFormat, RawParsing};
use super::spec::*;
use crate::core::violation::Severity;

/// `strategy: coverage`: the report's format and the thresholds, each a percentage.
pub(super) fn compile_coverage(
    id: &str,
    pr: &RawParsing,
    section: &str,
    p: &mut Problems,
) -> Option<CoverageSpec> {
    let before = p.count();
    let format = match pr.format.as_ref().map(|f| (f.value, f.referenced)) {
        None => None,
        Some((OutputFormat::CoverageJson, _)) => Some(CoverageFormat::CoverageJson),
        Some((OutputFormat::Cobertura, _)) => Some(CoverageFormat::Cobertura),
        Some((OutputFormat::Lcov, _)) => Some(CoverageFormat::Lcov),
        Some((other, place)) => {
            p.at(place, format!("gate `{id}`: `{}.format: {}` is a json_violations layout; a coverage report is `coverage_json`, `cobertura` or `lcov`. Use one of those, or leave `format` out to have the report recognized.", section, other.as_str()));
            None
        }
    };
    let mut percent = |v: &Option<Spanned<f64>>, key: &str| -> Option<f64> {
        let v = v.as_ref()?;
        if !(0.0..=100.0).contains(&v.value) {
            p.at(v.referenced, format!("gate `{id}`: `{}.{key}` is {}, but a percentage is between 0 and 100. Write e.g. `{key}: 80`.", section, v.value));
            return None;
        }
        Some(v.value)
    };
    let min_percent = percent(&pr.min_percent, "min_percent").unwrap_or(DEFAULT_MIN_PERCENT);
    let min_diff_percent = percent(&pr.min_diff_percent, "min_diff_percent");
    if p.count() > before {
        return None;
    }
    Some(CoverageSpec {
        format,
        min_percent,
        min_diff_percent,
        diff_severity: pr
            .diff_severity
            .as_ref()
            .map_or(Severity::Info, |s| s.value),
    })
}
