//! Merging shard reports, on reports made by hand: each rule of `merge` on its own.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;
use crate::core::parse::TestCounts;
use crate::core::report::{GateLog, exit};
use crate::core::violation::{Severity, Violation};

fn gate(id: &str, status: GateStatus) -> GateResult {
    GateResult {
        id: id.into(),
        name: id.into(),
        status,
        skip_reason: None,
        error: None,
        allow_fail: false,
        violations: Vec::new(),
        fix_hint: None,
        files_checked: 0,
        outside_root: 0,
        exit_code: None,
        log: None,
        duration_ms: 0,
        cached_files: 0,
        coverage: None,
        tests: None,
        incomplete: false,
        warm: false,
        notes: Vec::new(),
    }
}

fn skipped(id: &str, reason: &str) -> GateResult {
    GateResult {
        skip_reason: Some(reason.into()),
        ..gate(id, GateStatus::Skipped)
    }
}

fn found(file: Option<&str>, line: u32, code: &str) -> Violation {
    Violation {
        file: file.map(Arc::from),
        line: Some(line),
        column: Some(1),
        end_line: None,
        end_column: None,
        code: Some(code.into()),
        message: format!("{code} here").into(),
        severity: Severity::Error,
        fixable: false,
        url: None,
        fix: None,
        gate: "".into(),
        new: None,
    }
}

fn info(index: usize, count: usize) -> ShardInfo {
    ShardInfo {
        index,
        count,
        config_hash: "c0ffee".into(),
        commit: Some("abc123".into()),
        files_total: 10,
        fix_hints: BTreeMap::from([("lint".to_string(), "Run: fix {files}".to_string())]),
    }
}

fn shard(index: usize, count: usize, files: usize, gates: Vec<GateResult>) -> ShardReport {
    let scope = ScopeInfo {
        mode: "project".into(),
        files_in_scope: files,
        files_checked: files,
        ..Default::default()
    };
    let mut report = Report::new(
        scope,
        gates,
        100 * index as u64,
        Some(format!("run{index}")),
    );
    report.shard = Some(info(index, count));
    report.config = "quality.yaml".into();
    ShardReport {
        name: format!("shard-{index}.json"),
        report,
    }
}

#[test]
fn the_worst_status_leads_and_the_counts_add_up() {
    let one = GateResult {
        files_checked: 3,
        cached_files: 1,
        duration_ms: 40,
        ..gate("lint", GateStatus::Passed)
    };
    let two = GateResult {
        files_checked: 2,
        outside_root: 1,
        duration_ms: 70,
        exit_code: Some(1),
        log: Some(GateLog {
            stdout: "run2/lint.stdout".into(),
            stderr: "run2/lint.stderr".into(),
        }),
        violations: vec![found(Some("b.py"), 3, "E1")],
        ..gate("lint", GateStatus::Failed)
    };
    let three = skipped("lint", "none of its files fell to shard 3 of 3");
    let merged = merge(vec![
        shard(3, 3, 2, vec![three]),
        shard(1, 3, 4, vec![one]),
        shard(2, 3, 4, vec![two.clone()]),
    ])
    .expect("one run");
    let g = &merged.gates[0];
    assert_eq!(g.status, GateStatus::Failed);
    assert_eq!((g.files_checked, g.cached_files, g.outside_root), (5, 1, 1));
    assert_eq!(g.duration_ms, 70, "the longest");
    assert_eq!((g.exit_code, &g.log), (two.exit_code, &two.log));
    assert_eq!(g.fix_hint.as_deref(), Some("Run: fix b.py"));
    assert_eq!(merged.summary.failed, 1);
    assert_eq!(merged.summary.total_violations, 1);
    assert!(!merged.overall_pass);
    assert_eq!(merged.exit_code(), exit::VIOLATIONS);
    assert_eq!(
        (merged.scope.files_in_scope, merged.scope.files_checked),
        (10, 10)
    );
    assert_eq!(merged.timings.total_ms, 300, "the longest shard");
    assert_eq!(merged.shard, None);
    assert_eq!(merged.log_dir, None);
    assert_eq!(merged.config, "quality.yaml");
}

#[test]
fn an_error_anywhere_is_the_gate_s_error() {
    let err = GateResult {
        error: Some("crashed".into()),
        exit_code: Some(139),
        ..gate("lint", GateStatus::Error)
    };
    let failed = GateResult {
        violations: vec![found(Some("a.py"), 1, "E1")],
        fix_hint: Some("Run: fix a.py".into()),
        ..gate("lint", GateStatus::Failed)
    };
    let merged = merge(vec![
        shard(1, 2, 5, vec![failed]),
        shard(2, 2, 5, vec![err]),
    ])
    .unwrap();
    let g = &merged.gates[0];
    assert_eq!(g.status, GateStatus::Error);
    assert_eq!(
        (g.error.as_deref(), g.exit_code),
        (Some("crashed"), Some(139))
    );
    assert_eq!(g.fix_hint, None, "as a run that errored gives none");
    assert_eq!(g.violations.len(), 1, "the findings are kept");
    assert_eq!(merged.exit_code(), exit::GATE_ERROR);
}

#[test]
fn violations_are_sorted_and_copies_dropped_as_a_run_does() {
    let with = |vs: Vec<Violation>| GateResult {
        violations: vs,
        ..gate("lint", GateStatus::Failed)
    };
    let merged = merge(vec![
        shard(
            1,
            2,
            5,
            vec![with(vec![
                found(Some("b.py"), 2, "E1"),
                found(None, 1, "X"),
            ])],
        ),
        shard(
            2,
            2,
            5,
            vec![with(vec![
                found(Some("a.py"), 9, "E2"),
                found(Some("b.py"), 1, "E1"),
                found(None, 1, "X"),
            ])],
        ),
    ])
    .unwrap();
    let places: Vec<(Option<&str>, Option<u32>)> = merged.gates[0]
        .violations
        .iter()
        .map(|v| (v.file.as_deref(), v.line))
        .collect();
    assert_eq!(
        places,
        [
            (None, Some(1)),
            (Some("a.py"), Some(9)),
            (Some("b.py"), Some(1)),
            (Some("b.py"), Some(2)),
        ]
    );
    assert!(
        merged.gates[0]
            .violations
            .iter()
            .all(|v| &*v.gate == "lint")
    );
    assert_eq!(
        merged.gates[0].fix_hint.as_deref(),
        Some("Run: fix a.py b.py"),
        "the hint names the files of both shards"
    );
}

#[test]
fn a_gate_run_in_shard_one_only_comes_from_there() {
    let whole = GateResult {
        files_checked: 10,
        tests: Some(TestCounts {
            total: 12,
            failed: 0,
            errored: 0,
            skipped: 1,
        }),
        ..gate("tests", GateStatus::Passed)
    };
    let elsewhere = skipped(
        "tests",
        "runs in shard 1 of 2 (it takes no file arguments: one run checks them all)",
    );
    let merged = merge(vec![
        shard(2, 2, 5, vec![elsewhere]),
        shard(1, 2, 5, vec![whole.clone()]),
    ])
    .unwrap();
    assert_eq!(merged.gates[0], whole);
    assert_eq!(merged.scope.note, None, "a skip for sharding is no news");
    assert_eq!(merged.summary.skipped, 0);
}

#[test]
fn a_shard_that_skipped_a_gate_of_its_own_accord_is_said() {
    let ran = GateResult {
        files_checked: 5,
        ..gate("lint", GateStatus::Passed)
    };
    let missing = skipped("lint", "optional tool missing: ruff not found");
    let merged = merge(vec![
        shard(1, 2, 5, vec![ran]),
        shard(2, 2, 5, vec![missing]),
    ])
    .unwrap();
    assert_eq!(merged.gates[0].status, GateStatus::Passed);
    let note = merged.scope.note.expect("a note");
    assert!(
        note.contains("gate `lint` did not check the files of shard 2 of 2")
            && note.contains("optional tool missing"),
        "{note}"
    );

    // Skipped everywhere: the reason of the first shard that has one of its own.
    let merged = merge(vec![
        shard(
            1,
            2,
            5,
            vec![skipped("lint", "none of its files fell to shard 1 of 2")],
        ),
        shard(
            2,
            2,
            5,
            vec![skipped("lint", "optional tool missing: ruff")],
        ),
    ])
    .unwrap();
    assert_eq!(
        merged.gates[0].skip_reason.as_deref(),
        Some("optional tool missing: ruff")
    );
    assert_eq!(merged.scope.note, None, "nothing ran, so nothing is hidden");
}

#[test]
fn notes_are_said_once() {
    let mut one = shard(1, 2, 5, vec![gate("lint", GateStatus::Passed)]);
    let mut two = shard(2, 2, 5, vec![gate("lint", GateStatus::Passed)]);
    one.report.scope.note = Some("no parent branch found; a".into());
    two.report.scope.note = Some("no parent branch found; b".into());
    let merged = merge(vec![one, two]).unwrap();
    assert_eq!(
        merged.scope.note.as_deref(),
        Some("no parent branch found; a; b")
    );
}

#[test]
fn warnings_are_said_once() {
    let mut one = shard(1, 2, 5, vec![gate("lint", GateStatus::Passed)]);
    let mut two = shard(2, 2, 5, vec![gate("lint", GateStatus::Passed)]);
    one.report.warnings = vec!["store down".into()];
    two.report.warnings = vec!["store down".into(), "store slow".into()];
    let merged = merge(vec![one, two]).unwrap();
    assert_eq!(merged.warnings, ["store down", "store slow"]);
}

#[test]
fn reports_that_are_not_one_run_are_refused() {
    let lint = || vec![gate("lint", GateStatus::Passed)];
    let err = |shards: Vec<ShardReport>| merge(shards).unwrap_err().to_string();

    let e = err(vec![shard(1, 4, 1, lint()), shard(3, 4, 1, lint())]);
    assert_eq!(
        e,
        "shards 2 and 4 of 4 are missing: give the reports of shards 1 to 4, one each"
    );
    let e = err(vec![shard(2, 2, 1, lint())]);
    assert!(e.starts_with("shard 1 of 2 is missing"), "{e}");

    let e = err(vec![
        shard(1, 2, 1, lint()),
        shard(1, 2, 1, lint()),
        shard(2, 2, 1, lint()),
    ]);
    assert!(
        e.starts_with("shard 1 of 2 is given twice: shard-1.json and shard-1.json"),
        "{e}"
    );

    let mut other = shard(2, 2, 1, lint());
    other.name = "elsewhere.json".into();
    other.report.shard.as_mut().unwrap().commit = Some("def456".into());
    let e = err(vec![shard(1, 2, 1, lint()), other]);
    assert!(
        e.starts_with(
            "the reports are not of one run: the commit is abc123 in shard-1.json but def456 in elsewhere.json"
        ),
        "{e}"
    );

    let mut other = shard(2, 2, 1, lint());
    other.report.shard.as_mut().unwrap().config_hash = "beef".into();
    assert!(err(vec![shard(1, 2, 1, lint()), other]).contains("the configuration hash is c0ffee"));

    let mut other = shard(2, 2, 1, lint());
    other.report.scope.mode = "branch".into();
    assert!(err(vec![shard(1, 2, 1, lint()), other]).contains("the scope mode is project"));

    let other = shard(2, 2, 1, vec![gate("types", GateStatus::Passed)]);
    assert!(
        err(vec![shard(1, 2, 1, lint()), other])
            .contains("the gate list is lint in shard-1.json but types in shard-2.json")
    );

    let mut unsharded = shard(2, 2, 1, lint());
    unsharded.report.shard = None;
    assert!(
        err(vec![shard(1, 2, 1, lint()), unsharded])
            .starts_with("shard-2.json is not the report of a shard")
    );

    let mut past = shard(2, 2, 1, lint());
    past.report.shard.as_mut().unwrap().index = 7;
    assert!(err(vec![shard(1, 2, 1, lint()), past]).contains("says it is shard 7 of 2"));

    assert_eq!(merge(Vec::new()), Err(MergeError::Empty));
}

#[test]
fn many_missing_shards_are_counted_not_listed() {
    let lint = || vec![gate("lint", GateStatus::Passed)];
    let e = merge(vec![shard(1, 1_000_000, 1, lint())])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(
            "shards 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 999989 more of 1000000 are missing"
        ),
        "{e}"
    );
}
