//! The example of a test suite as a gate (`fixtures/python-tests`, the `pytest` preset) with the
//! real pytest: the failing test is one violation at its assertion, and the counts qgates reports
//! are the ones pytest's own summary line gives, and the coverage total is what coverage.py
//! measured.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{check_json, fixture_copy, gate};
use regex::Regex;
use serde_json::{Value, json};

/// Runs pytest itself in `dir` and reads its summary line (`1 failed, 2 passed, 1 skipped in
/// 0.29s`) into the counts qgates reports.
fn pytest_says(dir: &Path) -> Value {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    let out = Command::new(python)
        .args(["-m", "pytest", "-p", "no:cacheprovider"])
        .args(["--cov=src", "--cov-report=json:own-coverage.json"])
        .current_dir(dir)
        .output()
        .expect("run pytest");
    let text = String::from_utf8_lossy(&out.stdout);
    let summary = text
        .lines()
        .rev()
        .find(|l| l.starts_with('=') && l.contains(" in "))
        .unwrap_or_else(|| panic!("no summary line in pytest's output:\n{text}"));
    let n = |word: &str| -> usize {
        Regex::new(&format!(r"(\d+) {word}\b"))
            .unwrap()
            .captures(summary)
            .map_or(0, |c| c[1].parse().unwrap())
    };
    let (failed, passed, skipped) = (n("failed"), n("passed"), n("skipped"));
    let errored = n("errors?");
    json!({"total": failed + passed + skipped + errored, "failed": failed, "errored": errored, "skipped": skipped})
}

/// The total line coverage pytest-cov measured in the run of `pytest_says`.
fn coverage_py_says(dir: &Path) -> f64 {
    let text = std::fs::read_to_string(dir.join("own-coverage.json")).expect("coverage report");
    let report: Value = serde_json::from_str(&text).expect("coverage JSON");
    report["totals"]["percent_covered"]
        .as_f64()
        .expect("percent_covered")
}

#[test]
fn the_failing_test_is_a_violation_at_its_assertion_with_pytests_counts() {
    let dir = fixture_copy("python-tests");
    let (code, report) = check_json(dir.path(), &["--scope", "project", "--no-state"]);
    let g = gate(&report, "tests");
    assert_eq!((code, g["status"].as_str()), (1, Some("failed")), "{g:#}");

    let test_file = std::fs::read_to_string(dir.path().join("tests/test_prices.py")).unwrap();
    let assertion = test_file
        .lines()
        .position(|l| l.contains("assert line == "))
        .unwrap()
        + 1;
    let violations = g["violations"].as_array().unwrap();
    assert_eq!(violations.len(), 1, "{g:#}");
    let v = &violations[0];
    assert_eq!(v["file"], "tests/test_prices.py");
    assert_eq!(v["line"], assertion);
    assert_eq!(
        v["code"],
        "tests/test_prices.py::test_receipt_line_shows_euros"
    );
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .starts_with("AssertionError: assert 'Café crème: 2,50 €'"),
        "{v}"
    );

    // Measured in the same run; a separate check so the files pytest itself leaves are not
    // among those the next assertion looks for.
    let own = fixture_copy("python-tests");
    assert_eq!(g["tests"], pytest_says(own.path()), "{g:#}");
    let percent = g["coverage"]["percent"].as_f64().unwrap_or(-1.0);
    let expected = coverage_py_says(own.path());
    assert!(
        (percent - expected).abs() < 0.01 && expected < 100.0,
        "qgates {percent}, coverage.py {expected}: {g:#}"
    );
    // The summary line (the first line of the default output) says the same.
    let out = common::qgates(dir.path())
        .args([
            "check",
            "--scope",
            "project",
            "--no-state",
            "--format",
            "summary",
        ])
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(line.contains("4 tests, 1 failed, 1 skipped"), "{line}");

    // `qgates parse` reads the run's reports again, the coverage one found beside the JUnit one
    // in the log folder: the same result.
    let kept = dir
        .path()
        .join(report["log_dir"].as_str().unwrap())
        .join("tests.reports/junit.xml");
    let out = common::qgates(dir.path())
        .args(["parse", "tests"])
        .arg(&kept)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let parsed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(parsed["violations"], g["violations"]);
    assert_eq!(parsed["tests"], g["tests"]);
    assert_eq!(
        parsed["coverage"]["percent"], g["coverage"]["percent"],
        "{parsed}"
    );

    // The report went to the run's log folder: nothing of the run is left among the files.
    let left: Vec<String> = walk(dir.path())
        .into_iter()
        .filter(|p| !p.starts_with(".qgates/") && !p.contains("__pycache__"))
        .filter(|p| p.ends_with(".xml") || p.contains(".pytest_cache"))
        .collect();
    assert!(left.is_empty(), "the run left {left:?} in the workspace");
}

/// Every file under `dir`, relative to it.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
        }
    }
    out
}
