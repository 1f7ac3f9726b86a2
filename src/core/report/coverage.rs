//! What a `coverage` gate measured, as the reports show it: the total line coverage, and in the
//! `auto` and `branch` scopes the coverage of the changed lines, each with its minimum.

use serde::{Deserialize, Serialize};

use super::{GateResult, Report};

/// The totals of one coverage report (`coverage` on a gate's result).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CoverageTotals {
    /// Lines run by a test of all executable lines the report lists in the workspace, in percent
    /// (rounded down to two decimals, so a failing total never shows as its minimum).
    pub percent: f64,
    /// Lines run of the executable lines changed since the run's baseline, in percent; only in the
    /// `auto` and `branch` scopes, when some changed line is executable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_percent: Option<f64>,
    pub min_percent: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_diff_percent: Option<f64>,
    /// Executable lines changed since the baseline (`auto` and `branch` scopes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_lines: Option<usize>,
    /// Of those, the lines no test ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncovered_changed_lines: Option<usize>,
    /// Why there is no diff coverage (the `project` and `files` scopes compare with nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_note: Option<String>,
}

impl CoverageTotals {
    /// `coverage 87.5%, changed lines 60.0%`: what the summary line says.
    pub fn short(&self) -> String {
        let mut s = format!("coverage {}%", one_decimal(self.percent));
        if let Some(diff) = self.diff_percent {
            s.push_str(&format!(", changed lines {}%", one_decimal(diff)));
        }
        s
    }

    /// The whole measure with the minimums, for the text and markdown reports, e.g.
    /// `87.5% of lines (minimum 85%); changed lines 60.0% (3 of 5 run; minimum 80%)`.
    pub fn long(&self) -> String {
        let mut s = format!(
            "{}% of lines (minimum {}%)",
            one_decimal(self.percent),
            self.min_percent
        );
        match (self.changed_lines, self.uncovered_changed_lines) {
            (Some(changed), Some(uncovered)) => {
                let diff = self.diff_percent.map_or_else(
                    || "no executable line".to_string(),
                    |d| format!("{}%", one_decimal(d)),
                );
                s.push_str(&format!(
                    "; changed lines {diff} ({} of {changed} run",
                    changed - uncovered
                ));
                if let Some(min) = self.min_diff_percent {
                    s.push_str(&format!("; minimum {min}%"));
                }
                s.push(')');
            }
            _ => {
                if let Some(note) = &self.diff_note {
                    s.push_str(&format!("; {note}"));
                }
            }
        }
        s
    }
}

/// Rounded down, so 84.96 reads 84.9 and never as the 85 it falls short of.
fn one_decimal(p: f64) -> String {
    format!("{:.1}", (p * 10.0).floor() / 10.0)
}

impl Report {
    /// `coverage 87.5%, changed lines 60.0%` for the run's coverage gates (each named when there
    /// are several); `None` without one.
    pub(super) fn coverage_phrase(&self) -> Option<String> {
        let measured: Vec<(&GateResult, &CoverageTotals)> = self
            .gates
            .iter()
            .filter_map(|g| g.coverage.as_ref().map(|c| (g, c)))
            .collect();
        match measured.as_slice() {
            [] => None,
            [(_, c)] => Some(c.short()),
            many => Some(
                many.iter()
                    .map(|(g, c)| format!("{} {}", g.id, c.short()))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        }
    }
}
