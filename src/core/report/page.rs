//! Answers bounded for agents: one page of a report's violations, the most serious first, cut
//! visibly. A run of sixteen gates can find thousands of violations, and an agent that is
//! handed them all reads none of them well; it gets `max_violations` of them from `offset`,
//! with how many were left out and where the whole report is (`report.json` in the run's log
//! folder), so it can page on or read the file.
//!
//! A page keeps the report's shape (gates in config order, each with its violations), so a
//! reader of the full report reads a page the same way; only the violations are cut.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use super::{GateResult, GateStatus, Report, Timings, compact_json, count, finding_text, is_zero};
use crate::core::violation::Violation;

/// How many violations an answer shows when the caller does not say.
pub const DEFAULT_MAX_VIOLATIONS: usize = 50;

/// The most an answer's page takes, in bytes of its JSON and its text (`agent::render`)
/// together, which is what an agent may be handed: agents cut a tool's output at a few
/// thousand tokens, and read a short answer better than a long one (docs/agents.md). A page
/// shows fewer violations than asked for rather than grow past it, and says where the rest are.
pub const ANSWER_BYTES: usize = 8000;

/// The most of one message a page shows; the whole report keeps all of it.
const MESSAGE_BYTES: usize = 1000;
/// A fix whose edits take more than this is left to `fix` (the violation stays `fixable`).
const FIX_BYTES: usize = 1000;

/// Which violations an answer shows: at most `max_violations` (0: none, the counts only),
/// starting at `offset` in the reading order (`reading_order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub max_violations: usize,
    pub offset: usize,
    /// Pre-existing violations (`"new": false`) are shown too; otherwise the report's
    /// `novelty` only counts them.
    pub include_existing: bool,
}

impl Default for PageRequest {
    fn default() -> Self {
        PageRequest::new(None, None)
    }
}

impl PageRequest {
    /// The request for optional arguments, the defaults filling in what is missing.
    pub fn new(max_violations: Option<usize>, offset: Option<usize>) -> Self {
        PageRequest {
            max_violations: max_violations.unwrap_or(DEFAULT_MAX_VIOLATIONS),
            offset: offset.unwrap_or(0),
            include_existing: false,
        }
    }

    pub fn with_existing(self, include_existing: Option<bool>) -> Self {
        PageRequest {
            include_existing: include_existing.unwrap_or(false),
            ..self
        }
    }
}

/// A report with one page of its violations, and where the rest are.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ReportPage {
    /// The report, each gate holding only its violations of this page. What a page leaves to
    /// the whole report is in `Report::page`.
    #[serde(flatten)]
    pub report: Report,
    /// Violations in this answer.
    pub shown: usize,
    /// Violations the run found.
    pub total: usize,
    /// Where this page starts in the order of all violations: errors first, then warnings,
    /// info, hints; within each, by file, line and column. Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset: usize,
    /// The `offset` that gets the next page; absent when this page reaches the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Per gate id, how many of its violations this answer leaves out.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub left_out: BTreeMap<String, usize>,
    /// The whole report (`report.json` in the run's log folder), when it could be written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_report: Option<String>,
    /// The whole report's summary line (the page's gates no longer hold what it counts).
    #[serde(skip)]
    #[schemars(skip)]
    whole_summary: String,
    /// How the summary line names the paging arguments: the agent's (`offset=50`) or the
    /// command line's (`--offset 50`).
    #[serde(skip)]
    #[schemars(skip)]
    command_line: bool,
}

impl Report {
    /// The page of this report's violations that `request` asks for.
    pub fn page(&self, request: PageRequest) -> ReportPage {
        let mut order = reading_order(self);
        if !request.include_existing {
            order.retain(|&(g, i)| self.gates[g].violations[i].new != Some(false));
        }
        let total = order.len();
        let start = request.offset.min(total);
        let end = start.saturating_add(request.max_violations).min(total);
        // An answer says what to act on, each thing once; the whole report (`full_report`)
        // keeps the record: how long each part took and how much came from the cache (the
        // summary line says it), the fixed findings, the configuration file, the log folder
        // (the one `full_report` is in), a tool's exit code and logs unless it could not run,
        // and what a person browses: each rule's page and each fix's menu title. Pre-existing
        // violations left out are counted by `novelty.existing`.
        let mut report = self.clone();
        if let Some(n) = &mut report.novelty {
            n.fixed_violations.clear();
        }
        report.timings = Timings::default();
        if self.full_report.is_some() {
            report.log_dir = None;
        }
        report.config.clear();
        for g in &mut report.gates {
            g.violations.clear();
            g.duration_ms = 0;
            g.cached_files = 0;
            if g.status != GateStatus::Error {
                g.log = None;
                g.exit_code = None;
            }
        }
        // What the page holds besides its violations, with room for what says where the rest
        // are; then violations while they fit, at least one, each file's content with its
        // first violation.
        report.contents.clear();
        let mut used = compact_json(&report).len()
            + 2 * self.summary_line().len()
            + 400
            + 64 * report.gates.len();
        let mut end = end;
        for (k, &(gate, i)) in order[start..end].iter().enumerate() {
            let v = for_answer(&self.gates[gate].violations[i]);
            let content = (v.file.as_deref())
                .filter(|f| !report.contents.contains_key(*f))
                .and_then(|f| Some((f.to_string(), self.contents.get(f)?.clone())));
            // Its JSON, its text, and for a file's first finding, the file's content and heading.
            let size = compact_json(&v).len()
                + 1
                + finding_text::finding_len(&self.gates[gate].id, &v)
                + content
                    .as_ref()
                    .map_or(0, |(f, id)| 2 * f.len() + id.len() + 40);
            if k > 0 && used + size > ANSWER_BYTES {
                end = start + k;
                break;
            }
            used += size;
            report.contents.extend(content);
            report.gates[gate].violations.push(v);
        }
        // What the page cut leaves out; pre-existing ones left out are counted apart.
        let listable = |g: &GateResult| {
            (g.violations.iter())
                .filter(|v| request.include_existing || v.new != Some(false))
                .count()
        };
        let left_out = self
            .gates
            .iter()
            .zip(&report.gates)
            .filter(|(all, shown)| listable(all) > shown.violations.len())
            .map(|(all, shown)| (all.id.clone(), listable(all) - shown.violations.len()))
            .collect();
        ReportPage {
            report,
            shown: end - start,
            total,
            offset: request.offset,
            next_offset: (end < total).then_some(end),
            left_out,
            full_report: self.full_report.as_ref().map(|f| f.display.clone()),
            whole_summary: self.summary_line(),
            command_line: false,
        }
    }
}

impl ReportPage {
    /// The page as `qgates check` prints it: its summary line names `--offset` and
    /// `--max-violations` rather than the agent tool's arguments.
    pub fn for_command_line(mut self) -> Self {
        self.command_line = true;
        self
    }

    /// How an argument is written where the page is read: `offset=50` or `--offset 50`.
    fn arg(&self, name: &str, value: usize) -> String {
        if self.command_line {
            format!("--{} {value}", name.replace('_', "-"))
        } else {
            format!("{name}={value}")
        }
    }

    /// The report's summary line; when violations are left out, it goes on to say how many and
    /// where the rest are: `…; showing 50 of 213 violations; the rest: offset=50, or <path>`.
    pub fn summary_line(&self) -> String {
        let line = &self.whole_summary;
        if self.shown == self.total {
            return line.clone();
        }
        let file = |before: &str| {
            (self.full_report.as_ref()).map_or(String::new(), |path| format!("{before}{path}"))
        };
        let total = count(self.total, "violation");
        if self.shown == 0 && self.offset < self.total {
            return format!(
                "{line}; {total} not shown ({}){}",
                self.arg("max_violations", 0),
                file("; all of them: ")
            );
        }
        if self.shown == 0 {
            return format!(
                "{line}; showing 0 of {total}: offset {} is past the last one ({} starts over)",
                self.offset,
                self.arg("offset", 0)
            );
        }
        let from = match self.offset {
            0 => String::new(),
            n => format!(" from offset {n}"),
        };
        match self.next_offset {
            Some(next) => format!(
                "{line}; showing {} of {total}{from}; the rest: {}{}",
                self.shown,
                self.arg("offset", next),
                file(", or ")
            ),
            None => format!(
                "{line}; showing {} of {total}{from}, the last ones",
                self.shown
            ),
        }
    }

    /// The compact JSON (one line).
    pub fn to_json(&self) -> String {
        compact_json(self)
    }
}

/// A violation as an answer shows it: without what a person browses (the rule's page, the
/// fix's menu title), a long message cut and a long fix left to `fix`.
fn for_answer(v: &Violation) -> Violation {
    let mut v = v.clone();
    v.url = None;
    if v.message.len() > MESSAGE_BYTES {
        let mut cut = MESSAGE_BYTES;
        while !v.message.is_char_boundary(cut) {
            cut -= 1;
        }
        let rest = v.message.len() - cut;
        v.message = format!("{}… ({rest} more bytes in full_report)", &v.message[..cut]).into();
    }
    if let Some(fix) = &mut v.fix {
        fix.title.clear();
        if compact_json(&fix.edits).len() > FIX_BYTES {
            v.fix = None;
        }
    }
    v
}

/// Every violation as (gate index, index in the gate), in the order answers show them: errors
/// first, then warnings, info, hints (what blocks before what does not); within a severity by
/// file, so one file's problems read together (file-less findings first: they are about the
/// whole run), then by line and column. The sort is stable: ties keep the report order.
pub fn reading_order(report: &Report) -> Vec<(usize, usize)> {
    let mut order: Vec<(usize, usize)> = report
        .gates
        .iter()
        .enumerate()
        .flat_map(|(g, gate)| (0..gate.violations.len()).map(move |i| (g, i)))
        .collect();
    order.sort_by(|&(ga, ia), &(gb, ib)| {
        let (a, b) = (
            &report.gates[ga].violations[ia],
            &report.gates[gb].violations[ib],
        );
        // New findings first: what the change did before what it found there.
        let existing = |v: &crate::core::violation::Violation| v.new == Some(false);
        (existing(a), a.severity, &a.file, a.line, a.column).cmp(&(
            existing(b),
            b.severity,
            &b.file,
            b.line,
            b.column,
        ))
    });
    order
}

/// Reads `max_violations`: a whole number, 0 or more (0: the counts only). Missing or null: the
/// default.
pub fn deserialize_max_violations<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<usize>, D::Error> {
    whole_number(
        d,
        "how many violations to show: a whole number, 0 or more (0 shows the counts only), e.g. 50",
    )
}

/// Reads `offset`: a whole number, 0 or more. Missing or null: 0.
pub fn deserialize_offset<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    whole_number(
        d,
        "where the page starts: a whole number, 0 or more (the `next_offset` of the previous answer)",
    )
}

/// A whole number, 0 or more, said plainly when it is not (serde's "invalid value: integer
/// `-1`, expected usize" names a Rust type, not what the caller should send). `50.0` is taken as
/// 50: some JSON writers have only floating-point numbers.
fn whole_number<'de, D: Deserializer<'de>>(d: D, what: &str) -> Result<Option<usize>, D::Error> {
    use serde::de::Error;
    let value = Option::<serde_json::Value>::deserialize(d)?;
    let n = match value {
        None | Some(serde_json::Value::Null) => return Ok(None),
        Some(serde_json::Value::Number(n)) => n,
        Some(other) => return Err(D::Error::custom(format!("got {other}; expected {what}"))),
    };
    if let Some(u) = n.as_u64() {
        return Ok(Some(usize::try_from(u).unwrap_or(usize::MAX)));
    }
    match n.as_f64() {
        Some(f) if f >= 0.0 && f.fract() == 0.0 => Ok(Some(f as usize)),
        Some(f) if f < 0.0 => Err(D::Error::custom(format!(
            "{n} is negative; expected {what}"
        ))),
        _ => Err(D::Error::custom(format!(
            "{n} is not a whole number; expected {what}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    struct Args {
        #[serde(default, deserialize_with = "deserialize_max_violations")]
        max_violations: Option<usize>,
    }

    fn read(v: serde_json::Value) -> Result<Option<usize>, String> {
        serde_json::from_value::<Args>(v)
            .map(|a| a.max_violations)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn counts_are_whole_numbers_from_zero() {
        assert_eq!(read(json!({})).unwrap(), None);
        assert_eq!(read(json!({"max_violations": null})).unwrap(), None);
        assert_eq!(read(json!({"max_violations": 0})).unwrap(), Some(0));
        assert_eq!(read(json!({"max_violations": 7})).unwrap(), Some(7));
        assert_eq!(read(json!({"max_violations": 7.0})).unwrap(), Some(7));
        let e = read(json!({"max_violations": -1})).unwrap_err();
        assert!(e.starts_with("-1 is negative; expected how many"), "{e}");
        let e = read(json!({"max_violations": 2.5})).unwrap_err();
        assert!(e.starts_with("2.5 is not a whole number"), "{e}");
        let e = read(json!({"max_violations": "10"})).unwrap_err();
        assert!(e.starts_with("got \"10\"; expected"), "{e}");
    }
}
