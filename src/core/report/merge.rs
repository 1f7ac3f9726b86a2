//! `qgates merge`: the reports of a run's shards (`qgates check --shard i/n` on each machine of a
//! CI matrix) made into the report one machine running the whole scope writes.
//!
//! The shards must be one run: every shard 1..n once, all from the same configuration, scope
//! mode, commit and scope size. Each gate's results are merged in configuration order: the
//! violations of every shard, sorted and de-duplicated as a run sorts a gate's batches; counts
//! summed; the worst status (error, then failed, passed, skipped; a skip that only says another
//! shard runs the gate counts least); exit code, error, skip reason and logs from the first shard
//! with that status; the longest duration. The summary and the verdict are computed by
//! `Report::new`, as after a run. A gate skipped on one machine for a reason of its own (a
//! missing optional tool) while another ran it is said in the note: that shard's files went
//! unchecked by it.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::fix_hint::render_fix_hint;
use super::{GateResult, GateStatus, Report, ScopeInfo};

use super::parts::{ShardInfo, is_elsewhere};

/// One shard's report and the name to call it by in messages (its file).
#[derive(Debug, Clone)]
pub struct ShardReport {
    pub name: String,
    pub report: Report,
}

/// Reports that cannot be merged, with what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("no report to merge: give the JSON report of every shard")]
    Empty,
    #[error(
        "{0} is not the report of a shard (it has no `shard` field): merge the reports written by `qgates check --shard i/n --format json`"
    )]
    NotSharded(String),
    #[error(
        "the reports are not of one run: {field} is {first} in {first_file} but {other} in {other_file}. Merge only the shards of one run, all from the same commit and configuration"
    )]
    Mismatch {
        field: &'static str,
        first: String,
        first_file: String,
        other: String,
        other_file: String,
    },
    #[error(
        "shard {index} of {count} is given twice: {first_file} and {other_file}. Give each shard's report once"
    )]
    Duplicate {
        index: usize,
        count: usize,
        first_file: String,
        other_file: String,
    },
    #[error(
        "{file} says it is shard {index} of {count}, which no run has: it was not written by `qgates check --shard`"
    )]
    BadIndex {
        file: String,
        index: usize,
        count: usize,
    },
    #[error("{} missing: give the reports of shards 1 to {count}, one each", missing_phrase(.missing, *.more, *.count))]
    Missing {
        /// The first few missing shards.
        missing: Vec<usize>,
        /// How many more are missing.
        more: usize,
        count: usize,
    },
}

/// How many missing shards an error names.
const NAMED_MISSING: usize = 10;

fn missing_phrase(missing: &[usize], more: usize, count: usize) -> String {
    let mut list: Vec<String> = missing.iter().map(usize::to_string).collect();
    if more > 0 {
        list.push(format!("{more} more"));
    }
    match list.as_slice() {
        [one] => format!("shard {one} of {count} is"),
        [init @ .., last] => format!("shards {} and {last} of {count} are", init.join(", ")),
        [] => format!("no shard of {count} is"),
    }
}

/// Merges the reports of every shard of one run into the report of the whole run.
pub fn merge(shards: Vec<ShardReport>) -> Result<Report, MergeError> {
    let shards = check(shards)?;
    let first = &shards[0];
    let gates: Vec<GateResult> = (0..first.report.gates.len())
        .map(|g| merge_gate(&shards, g))
        .collect();
    let mut notes: Vec<String> = Vec::new();
    for s in &shards {
        for part in s.report.scope.note.iter().flat_map(|n| n.split("; ")) {
            if !notes.iter().any(|n| n == part) {
                notes.push(part.to_string());
            }
        }
    }
    notes.extend(unchecked_notes(&shards));
    let sum = |f: fn(&ScopeInfo) -> usize| shards.iter().map(|s| f(&s.report.scope)).sum();
    let scope = ScopeInfo {
        mode: first.report.scope.mode.clone(),
        files_in_scope: sum(|s| s.files_in_scope),
        files_checked: sum(|s| s.files_checked),
        baseline_sha: first.report.scope.baseline_sha.clone(),
        note: (!notes.is_empty()).then(|| notes.join("; ")),
        files: Vec::new(),
    };
    // The shards ran side by side: the run took as long as the longest.
    let total_ms = shards
        .iter()
        .map(|s| s.report.timings.total_ms)
        .max()
        .unwrap_or(0);
    // The log folders are on the machines that ran the shards; each gate's `log` names its own.
    // `fixed` stays empty: a sharded run does not fix (`--shard` and `--fix` do not go together).
    let mut report = Report::new(scope, gates, total_ms, None);
    report.config = first.report.config.clone();
    report.clean_room = first.report.clean_room.clone();
    // Each file is in one shard; the same checkout besides.
    for shard in &shards {
        report.contents.extend(shard.report.contents.clone());
    }
    // A store that did not answer one shard is still worth saying once for the whole run.
    for warning in shards.iter().flat_map(|s| &s.report.warnings) {
        if !report.warnings.contains(warning) {
            report.warnings.push(warning.clone());
        }
    }
    Ok(report)
}

/// Every report a shard of one run, each shard once; returned in shard order.
fn check(shards: Vec<ShardReport>) -> Result<Vec<ShardReport>, MergeError> {
    let info = |s: &ShardReport| -> Result<ShardInfo, MergeError> {
        s.report
            .shard
            .clone()
            .ok_or_else(|| MergeError::NotSharded(s.name.clone()))
    };
    let first = shards.first().ok_or(MergeError::Empty)?;
    let first_info = info(first)?;
    // What the shards of one run have in common.
    let run = |s: &ShardReport, info: &ShardInfo| {
        let gate_ids: Vec<&str> = s.report.gates.iter().map(|g| g.id.as_str()).collect();
        [
            ("the shard count", info.count.to_string()),
            ("the configuration hash", info.config_hash.clone()),
            ("the scope mode", s.report.scope.mode.clone()),
            (
                "the commit",
                (info.commit.clone()).unwrap_or_else(|| "none (not a git repository)".to_string()),
            ),
            ("the number of files in scope", info.files_total.to_string()),
            ("the gate list", gate_ids.join(", ")),
        ]
    };
    let expected = run(first, &first_info);
    for s in &shards {
        let found = run(s, &info(s)?);
        if let Some(((field, a), (_, b))) =
            expected.iter().zip(found).find(|((_, a), (_, b))| a != b)
        {
            return Err(MergeError::Mismatch {
                field,
                first: a.clone(),
                first_file: first.name.clone(),
                other: b,
                other_file: s.name.clone(),
            });
        }
    }
    let count = first_info.count;
    let mut by_index: BTreeMap<usize, ShardReport> = BTreeMap::new();
    for s in shards {
        let index = info(&s)?.index;
        if index == 0 || index > count {
            return Err(MergeError::BadIndex {
                file: s.name,
                index,
                count,
            });
        }
        if let Some(taken) = by_index.get(&index) {
            return Err(MergeError::Duplicate {
                index,
                count,
                first_file: taken.name.clone(),
                other_file: s.name,
            });
        }
        by_index.insert(index, s);
    }
    // Found without counting to `count`: the first missing ones come within the reports given.
    let absent = count - by_index.len();
    if absent > 0 {
        let missing: Vec<usize> = (1..=count)
            .filter(|i| !by_index.contains_key(i))
            .take(NAMED_MISSING)
            .collect();
        let more = absent - missing.len();
        return Err(MergeError::Missing {
            missing,
            more,
            count,
        });
    }
    Ok(by_index.into_values().collect())
}

/// How bad a result is, for picking the one a merged gate shows: a skip that only says another
/// shard ran the gate ranks below every other.
fn rank(g: &GateResult) -> u8 {
    match g.status {
        GateStatus::Error => 4,
        GateStatus::Failed => 3,
        GateStatus::Passed => 2,
        GateStatus::Skipped if g.skip_reason.as_deref().is_some_and(is_elsewhere) => 0,
        GateStatus::Skipped => 1,
    }
}

/// The gate at `index` of every shard, as one result.
fn merge_gate(shards: &[ShardReport], index: usize) -> GateResult {
    let results: Vec<&GateResult> = shards.iter().map(|s| &s.report.gates[index]).collect();
    // The first of the worst: `max_by_key` keeps the last of equals, so search in reverse.
    let lead = *results
        .iter()
        .rev()
        .max_by_key(|g| rank(g))
        .expect("a report has every gate");
    let mut merged = lead.clone();
    let id: Arc<str> = merged.id.as_str().into();
    merged.violations = results
        .iter()
        .flat_map(|g| g.violations.iter().cloned())
        .map(|mut v| {
            v.gate = id.clone();
            v
        })
        .collect();
    // As `runner::run_gate` orders and de-duplicates the violations of a gate's batches.
    merged.violations.sort_by(|a, b| {
        (&a.file, a.line, a.column, &a.code, &a.message)
            .cmp(&(&b.file, b.line, b.column, &b.code, &b.message))
    });
    merged.violations.dedup();
    merged.files_checked = results.iter().map(|g| g.files_checked).sum();
    merged.cached_files = results.iter().map(|g| g.cached_files).sum();
    merged.outside_root = results.iter().map(|g| g.outside_root).sum();
    merged.incomplete = results.iter().any(|g| g.incomplete);
    merged.duration_ms = results.iter().map(|g| g.duration_ms).max().unwrap_or(0);
    merged.tests = results
        .iter()
        .filter_map(|g| g.tests)
        .reduce(|a, b| a.plus(b));
    merged.coverage = lead
        .coverage
        .clone()
        .or_else(|| results.iter().find_map(|g| g.coverage.clone()));
    // A hint naming the files names those of every shard's findings, as one run's would. With
    // no finding naming a file, a run's hint names the files it checked, which no report lists:
    // the leading shard's hint is kept.
    let template = shards[0]
        .report
        .shard
        .as_ref()
        .and_then(|s| s.fix_hints.get(&merged.id));
    let named_files = merged.violations.iter().any(|v| v.file.is_some());
    merged.fix_hint = match (merged.status, template) {
        (GateStatus::Failed, Some(t)) if named_files => {
            Some(render_fix_hint(t, &merged.violations, &[]))
        }
        (GateStatus::Failed, _) => lead.fix_hint.clone(),
        _ => None,
    };
    merged
}

/// A sentence for each gate that ran in some shard but was skipped in another for a reason of
/// its own: the files of that shard were not checked by it, which a merged `passed` would hide.
fn unchecked_notes(shards: &[ShardReport]) -> Vec<String> {
    let mut notes = Vec::new();
    for index in 0..shards[0].report.gates.len() {
        let ran = shards
            .iter()
            .any(|s| s.report.gates[index].status != GateStatus::Skipped);
        if !ran {
            continue;
        }
        for s in shards {
            let g = &s.report.gates[index];
            if let (GateStatus::Skipped, Some(reason)) = (g.status, g.skip_reason.as_deref())
                && !is_elsewhere(reason)
            {
                let shard = s.report.shard.as_ref().map_or(0, |i| i.index);
                notes.push(format!(
                    "gate `{}` did not check the files of shard {shard} of {}, skipped there: {reason}",
                    g.id,
                    shards.len()
                ));
            }
        }
    }
    notes
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
