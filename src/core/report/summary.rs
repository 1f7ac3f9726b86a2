//! The one-line summary every face shows first (`--format summary`, the text report, MCP, the
//! editor's `qgates.summary`). It stays one short line however many gates run: it names at most
//! `NAMED` gates per list and counts the rest, so a polyglot run of sixteen gates reads as
//! easily as a run of three.

use super::{GateResult, GateStatus, Report, count, plural};
use crate::core::violation::Severity;

/// How many gates a list in the summary line names before `+N more`.
const NAMED: usize = 3;

impl Report {
    /// One line that says it all, e.g.
    /// `❌ 2/3 gates failed — 14 violations: 10 errors, 4 warnings (8 auto-fixable): ruff_format, ruff_lint`.
    /// It ends with which gates the cache answered, the gates that can never run (a mistake in
    /// the configuration that a skip alone would hide), and after a run with `fix`, with how
    /// many files the fixers rewrote, which shard of a sharded run it is, and for a clean-room
    /// run, the commit and what it left out.
    pub fn summary_line(&self) -> String {
        let mut line = self.verdict_line();
        let phrases = [
            self.settled_findings_phrase(),
            self.tests_phrase(),
            self.coverage_phrase(),
            self.cached_phrase(),
        ];
        for phrase in phrases.into_iter().flatten() {
            line.push_str("; ");
            line.push_str(&phrase);
        }
        let never: Vec<&str> = self
            .gates
            .iter()
            .filter(|g| g.never_applies())
            .map(|g| g.id.as_str())
            .collect();
        if !never.is_empty() {
            let verb = if never.len() == 1 { "applies" } else { "apply" };
            line.push_str(&format!(
                "; {} never {verb} (no project file matches): {}",
                count(never.len(), "gate"),
                named(&never)
            ));
        }
        let fixed = self.fixed.len();
        if fixed > 0 {
            line.push_str(&format!("; fixed {fixed} file{} first", plural(fixed)));
        }
        // One machine's share of the run must not read as the whole run.
        if let Some(shard) = &self.shard {
            line.push_str(&format!("; shard {} of {}", shard.index, shard.count));
        }
        // Said on the line every face shows first, or a store that is down goes unnoticed.
        if let Some(first) = self.warnings.first() {
            line.push_str(&format!("; warning: {first}"));
            if self.warnings.len() > 1 {
                line.push_str(&format!(" (+{} more)", self.warnings.len() - 1));
            }
        }
        // Last, so the verdict reads first and the line still says which tree it is about.
        if let Some(clean_room) = &self.clean_room {
            line.push_str("; ");
            line.push_str(&clean_room.phrase());
        }
        line
    }

    /// On a run no gate failed, what the comparison with the reference left aside: findings
    /// that were there before (`--new-only`), and findings the change fixed.
    fn settled_findings_phrase(&self) -> Option<String> {
        let n = self.novelty.as_ref()?;
        let failed = self.gates.iter().any(|g| g.status == GateStatus::Failed);
        if failed || n.existing + n.fixed == 0 {
            return None;
        }
        let existing = (n.existing > 0).then(|| count(n.existing, "pre-existing violation"));
        let fixed = (n.fixed > 0).then(|| format!("{} fixed", n.fixed));
        Some(
            existing
                .into_iter()
                .chain(fixed)
                .collect::<Vec<_>>()
                .join(", "),
        )
    }

    fn verdict_line(&self) -> String {
        let total = self.gates.len();
        let ids = |pred: &dyn Fn(&GateResult) -> bool| -> Vec<&str> {
            self.gates
                .iter()
                .filter(|g| pred(g))
                .map(|g| g.id.as_str())
                .collect()
        };
        let failed = ids(&|g| g.blocks() && g.status == GateStatus::Failed);
        let errored = ids(&|g| g.blocks() && g.status == GateStatus::Error);
        let allowed =
            ids(&|g| g.allow_fail && matches!(g.status, GateStatus::Failed | GateStatus::Error));
        let s = &self.summary;
        let mode = &self.scope.mode;
        if !failed.is_empty() {
            let mut line = format!("❌ {}/{total} gates failed", failed.len());
            if !errored.is_empty() {
                line.push_str(&format!(", {} could not run", errored.len()));
            }
            let counts = match &self.novelty {
                // `2 new violations (41 pre-existing, 1 fixed; 3 auto-fixable)`, leaving out
                // a part that counts nothing.
                Some(n) => {
                    let settled: Vec<String> = [(n.existing, "pre-existing"), (n.fixed, "fixed")]
                        .into_iter()
                        .filter(|&(k, _)| k > 0)
                        .map(|(k, what)| format!("{k} {what}"))
                        .collect();
                    let settled = match settled.is_empty() {
                        true => String::new(),
                        false => format!("{}; ", settled.join(", ")),
                    };
                    format!(
                        "{} ({settled}{} auto-fixable)",
                        count(n.new, "new violation"),
                        s.auto_fixable
                    )
                }
                None => format!(
                    "{} ({} auto-fixable)",
                    self.violations_phrase(),
                    s.auto_fixable
                ),
            };
            line.push_str(&format!(" — {counts}: {}", named(&failed)));
            if !errored.is_empty() {
                line.push_str(&format!("; could not run: {}", named(&errored)));
            }
            return line;
        }
        if !errored.is_empty() {
            let mut line = format!(
                "💥 {}/{total} gates could not run: {}",
                errored.len(),
                named(&errored)
            );
            if let Some(dir) = &self.log_dir {
                line.push_str(&format!(" — see {dir}"));
            }
            return line;
        }
        let ran = s.passed + allowed.len();
        if ran == 0 && self.scope.files_checked == 0 {
            let why = match &self.scope.note {
                Some(note) => format!("{mode}, {note}"),
                None => mode.clone(),
            };
            if self.scope.files_in_scope == 0 {
                return format!("⏭️ 0 files in scope — nothing to check ({why})");
            }
            let n = self.scope.files_in_scope;
            return format!(
                "⏭️ nothing to check — no gate applies to the {n} file{} in scope ({why})",
                plural(n)
            );
        }
        let mut line = format!("✅ {}/{total} gates passed", s.passed);
        if s.skipped > 0 {
            line.push_str(&format!(", {} skipped", s.skipped));
        }
        if !allowed.is_empty() {
            // Not "(1 violation (0 auto-fixable))": one pair of parentheses reads better.
            line.push_str(&format!(
                ", {} allowed to fail ({}, {} auto-fixable)",
                named(&allowed),
                self.violations_phrase(),
                s.auto_fixable
            ));
        }
        let n = self.scope.files_checked;
        line.push_str(&format!(" — {n} file{} checked ({mode})", plural(n)));
        line
    }

    /// `40 violations`, or with the severities when not all are errors:
    /// `40 violations: 30 errors, 10 warnings` (a list of warnings alone is not a red build).
    fn violations_phrase(&self) -> String {
        let total = self.summary.total_violations;
        let mut by_severity = [0usize; 4];
        for v in self.gates.iter().flat_map(|g| &g.violations) {
            by_severity[v.severity as usize] += 1;
        }
        let phrase = count(total, "violation");
        if by_severity[Severity::Error as usize] == total {
            return phrase;
        }
        let parts: Vec<String> = [
            Severity::Error,
            Severity::Warning,
            Severity::Info,
            Severity::Hint,
        ]
        .into_iter()
        .filter(|s| by_severity[*s as usize] > 0)
        .map(|s| match s {
            // "3 info", not "3 infos".
            Severity::Info => format!("{} info", by_severity[s as usize]),
            _ => count(by_severity[s as usize], s.as_str()),
        })
        .collect();
        format!("{phrase}: {}", parts.join(", "))
    }

    /// `12 tests, 1 failed, 1 errored, 2 skipped` over every test gate's report (the counts
    /// that are 0 left out); `None` when no gate read a test report.
    fn tests_phrase(&self) -> Option<String> {
        let counts = self
            .gates
            .iter()
            .filter_map(|g| g.tests)
            .reduce(|a, b| a.plus(b))?;
        let mut phrase = count(counts.total, "test");
        for (n, word) in [
            (counts.failed, "failed"),
            (counts.errored, "errored"),
            (counts.skipped, "skipped"),
        ] {
            if n > 0 {
                phrase.push_str(&format!(", {n} {word}"));
            }
        }
        Some(phrase)
    }

    /// `all from the cache`, or `from the cache: mypy, ruff_lint`: the gates whose every file's
    /// result was replayed from the cache (no process ran for them); `None` when there is none.
    fn cached_phrase(&self) -> Option<String> {
        let ran: Vec<&GateResult> = self
            .gates
            .iter()
            .filter(|g| g.status != GateStatus::Skipped)
            .collect();
        let cached: Vec<&str> = ran
            .iter()
            .filter(|g| g.cached_files > 0 && g.cached_files >= g.files_checked)
            .map(|g| g.id.as_str())
            .collect();
        match cached.len() {
            0 => None,
            n if n == ran.len() => Some("all from the cache".to_string()),
            _ => Some(format!("from the cache: {}", named(&cached))),
        }
    }
}

/// `a, b, c`, or `a, b, c +2 more` past `NAMED` names.
fn named(ids: &[&str]) -> String {
    if ids.len() <= NAMED {
        return ids.join(", ");
    }
    format!("{} +{} more", ids[..NAMED].join(", "), ids.len() - NAMED)
}
