//! The result of a run: what agents, CI and editors read. The summary line first, then compact
//! JSON (null and empty fields left out); other formats render the same data.

pub mod agent;
pub mod contents;
mod coverage;
mod finding_text;
pub(crate) mod fix_hint;
pub mod github;
pub mod markdown;
pub(crate) mod merge;
pub mod page;
pub(crate) mod parts;
pub mod sarif;
mod summary;
pub mod text;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::core::config::ConfigSource;
pub use crate::core::violation::{Edit, Fix, Severity, Violation};
use crate::core::workspace::paths::relative_posix;
pub use coverage::CoverageTotals;
pub use parts::{CleanRoomInfo, ShardInfo, TestCounts, is_elsewhere};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GateStatus {
    Passed,
    Failed,
    Skipped,
    Error,
}

impl GateStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            GateStatus::Passed => "passed",
            GateStatus::Failed => "failed",
            GateStatus::Skipped => "skipped",
            GateStatus::Error => "error",
        }
    }
}

/// How the skip reason of a gate that can never run starts: no file of the project is one of
/// its files (see `skips`).
pub const NEVER_APPLIES: &str = "never applies: ";

/// Where a gate's full output was kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GateLog {
    pub stdout: String,
    pub stderr: String,
}

/// One gate's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GateResult {
    pub id: String,
    pub name: String,
    pub status: GateStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
    /// Why the gate could not run or its output could not be read (status `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Findings never block the run or the baseline.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_fail: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<Violation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix_hint: Option<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub files_checked: usize,
    /// Violations dropped because their file lies outside the workspace root.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub outside_root: usize,
    /// Exit code of the last process (left out for passed and skipped gates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<GateLog>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub duration_ms: u64,
    /// Files whose result came from the cache (no process ran for them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_files: usize,
    /// What a `coverage` gate measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<CoverageTotals>,
    /// What a test gate's report counted (`strategy: junit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<TestCounts>,
    /// The tool stopped before checking every file (`success.exit_codes_incomplete`, e.g.
    /// mypy's blocking errors): a file without findings was not necessarily checked, and
    /// nothing of the run was cached.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
    /// The gate's warm process answered (`core::warm`) rather than a cold run of the tool.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warm: bool,
    /// What the report's note should say about how the gate ran (a warm process that failed).
    #[serde(skip)]
    #[schemars(skip)]
    pub notes: Vec<String>,
}

impl Report {
    /// Whether a violation is listed where violations are listed one by one: under
    /// `--new-only`, pre-existing ones are counted, not listed, unless asked for.
    pub fn lists(&self, v: &Violation, show_existing: bool) -> bool {
        show_existing || v.new != Some(false) || !self.novelty.as_ref().is_some_and(|n| n.new_only)
    }
}

impl GateResult {
    /// Whether the gate was skipped because no file of the project is one of its files: a
    /// mistake in the configuration, not a quiet run.
    pub fn never_applies(&self) -> bool {
        self.status == GateStatus::Skipped
            && self
                .skip_reason
                .as_deref()
                .is_some_and(|r| r.starts_with(NEVER_APPLIES))
    }

    /// Whether this result stops the run from being green.
    pub fn blocks(&self) -> bool {
        !self.allow_fail && matches!(self.status, GateStatus::Failed | GateStatus::Error)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    pub errored: usize,
    pub total_violations: usize,
    pub auto_fixable: usize,
}

/// Which files the run covered and why.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScopeInfo {
    pub mode: String,
    /// Files the scope named, before each gate kept those matching its file types.
    #[serde(default)]
    pub files_in_scope: usize,
    /// Files at least one gate that ran was given.
    pub files_checked: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_sha: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The files checked, root-relative (for the editor, which clears the clean ones; not in the
    /// JSON, which stays small).
    #[serde(skip)]
    #[schemars(skip)]
    pub files: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Timings {
    pub total_ms: u64,
}

impl Timings {
    /// Not measured (an answer leaves the timings to the whole report).
    fn is_unknown(&self) -> bool {
        self.total_ms == 0
    }
}

/// The whole result of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    pub overall_pass: bool,
    pub summary: Summary,
    pub scope: ScopeInfo,
    pub gates: Vec<GateResult>,
    #[serde(default, skip_serializing_if = "Timings::is_unknown")]
    pub timings: Timings,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_dir: Option<String>,
    /// Files the gates' fixers rewrote before this check (a run with `fix`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed: Vec<String>,
    /// The configuration the run used: its path relative to the workspace root (absolute when
    /// outside it), or `embedded default`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub config: String,
    /// Where this report was written whole (`report.json` in the run's log folder; see
    /// `run_logs::save_report`), for answers that show only part of it. Not in the JSON: the
    /// file would name itself.
    #[serde(skip)]
    #[schemars(skip)]
    pub full_report: Option<FullReport>,
    /// A run in a clean checkout of a commit (`qgates check --clean-room`): which commit, where,
    /// and how many uncommitted changes it left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clean_room: Option<CleanRoomInfo>,
    /// A run of one shard of the scope (`qgates check --shard i/n`): which one, and what
    /// `qgates merge` checks to know the shards belong together. Left out of an unsharded run
    /// and of a merged report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// What went wrong around the gates without changing their verdict (a shared cache that
    /// did not answer), one sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// How the findings compare with those at the run's reference (`core::novelty`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub novelty: Option<Novelty>,
    /// Per file with findings, the content they were computed on: its git blob id when the
    /// run ended (`contents::record`). An answer about a file changed since says so.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub contents: BTreeMap<String, String>,
}

/// The findings of a run against those at its reference: how many the change introduced, how
/// many were there before, how many it fixed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Novelty {
    /// The commit compared with: the scope's base (the last green commit, or the merge-base
    /// with the parent branch).
    pub reference: String,
    pub new: usize,
    pub existing: usize,
    pub fixed: usize,
    /// The findings at the reference that are gone, as they were there (their reference paths
    /// and lines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed_violations: Vec<Violation>,
    /// The gate statuses and the exit code count new findings only (`--new-only`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub new_only: bool,
}

/// The file holding a report whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullReport {
    /// Absolute, to write it again when the report changes after the run (`fix`, the state).
    pub path: PathBuf,
    /// As answers name it: relative to the workspace root when inside it.
    pub display: String,
}

/// What the `config` field says for a configuration from `source`.
pub fn config_name(source: &ConfigSource, root: &Path) -> String {
    match source {
        ConfigSource::Embedded => "embedded default".to_string(),
        ConfigSource::File(p) => relative_posix(root, p).unwrap_or_else(|| p.display().to_string()),
    }
}

/// Exit codes of `qgates check`.
pub mod exit {
    pub const GREEN: i32 = 0;
    pub const VIOLATIONS: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const GATE_ERROR: i32 = 3;
}

impl Report {
    /// Builds a report from gate results, deriving the summary and the overall verdict.
    pub fn new(
        scope: ScopeInfo,
        gates: Vec<GateResult>,
        total_ms: u64,
        log_dir: Option<String>,
    ) -> Report {
        let mut report = Report {
            overall_pass: true,
            summary: Summary::default(),
            scope,
            gates,
            timings: Timings { total_ms },
            log_dir,
            fixed: Vec::new(),
            config: String::new(),
            full_report: None,
            clean_room: None,
            shard: None,
            warnings: Vec::new(),
            novelty: None,
            contents: BTreeMap::new(),
        };
        report.recount();
        report
    }

    /// Derives the summary and the overall verdict from the gates' results again (after their
    /// statuses changed).
    pub fn recount(&mut self) {
        let mut summary = Summary::default();
        for g in &self.gates {
            match g.status {
                GateStatus::Passed => summary.passed += 1,
                GateStatus::Failed => summary.failed += 1,
                GateStatus::Skipped => summary.skipped += 1,
                GateStatus::Error => summary.errored += 1,
            }
            summary.total_violations += g.violations.len();
            summary.auto_fixable += g.violations.iter().filter(|v| v.fixable).count();
        }
        self.overall_pass = !self.gates.iter().any(GateResult::blocks);
        self.summary = summary;
    }

    /// The process exit code: 3 when a blocking gate could not run, 1 for blocking violations, else 0.
    pub fn exit_code(&self) -> i32 {
        if self
            .gates
            .iter()
            .any(|g| g.blocks() && g.status == GateStatus::Error)
        {
            exit::GATE_ERROR
        } else if self.overall_pass {
            exit::GREEN
        } else {
            exit::VIOLATIONS
        }
    }

    /// The compact JSON (one line).
    pub fn to_json(&self) -> String {
        compact_json(self)
    }

    /// The summary line, then the compact JSON: what agents read first.
    pub fn to_summary_format(&self) -> String {
        format!("{}\n{}\n", self.summary_line(), self.to_json())
    }
}

fn compact_json(report: &impl Serialize) -> String {
    serde_json::to_string(report)
        .unwrap_or_else(|e| format!("{{\"error\":\"report could not be serialized: {e}\"}}"))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn is_zero<N: Default + PartialEq>(n: &N) -> bool {
    *n == N::default()
}

// Helpers shared by the renderers in the child modules (text, markdown, sarif, github).

/// Violations in the order people read them: by file, then line, then column. A violation
/// without a line sorts first in its file (it is about the whole file); the sort is stable,
/// so ties keep the report order (gate order, then the tool's order).
fn by_position<'a>(violations: impl IntoIterator<Item = &'a Violation>) -> Vec<&'a Violation> {
    let mut list: Vec<&Violation> = violations.into_iter().collect();
    list.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
    list
}

/// `file:line:column`, leaving out what is unknown. A line or column of 0 is treated as unknown:
/// positions are 1-based, so 0 only comes from a tool that had none to give.
fn position(v: &Violation) -> Option<String> {
    let file = v.file.as_deref()?;
    Some(match (known(v.line), known(v.column)) {
        (Some(l), Some(c)) => format!("{file}:{l}:{c}"),
        (Some(l), None) => format!("{file}:{l}"),
        _ => file.to_string(),
    })
}

/// A 1-based number, or `None` when it is missing or 0.
fn known(n: Option<u32>) -> Option<u32> {
    n.filter(|&n| n > 0)
}

/// Replaces control characters (other than newline and tab) by a visible `\u{…}` escape, and
/// `\r\n` by `\n`. Tool messages can carry ANSI escapes or stray carriage returns; printed as they
/// are, they would recolour or overwrite the terminal, and `--format text` without colour must not
/// contain a single escape byte.
fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// `Scope: auto, 3 files checked, baseline 0123456789ab — note`, the mode and the commit shown
/// by `code`, the note by `prose`.
fn scope_line(s: &ScopeInfo, code: fn(&str) -> String, prose: fn(&str) -> String) -> String {
    let mut line = format!(
        "Scope: {}, {} checked",
        code(&s.mode),
        count(s.files_checked, "file")
    );
    if let Some(sha) = &s.baseline_sha {
        line.push_str(&format!(
            ", baseline {}",
            code(sha.get(..12).unwrap_or(sha))
        ));
    }
    if let Some(note) = &s.note {
        line.push_str(&format!(" — {}", prose(note)));
    }
    line
}

/// "1 violation", "3 violations".
fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", plural(n))
}
