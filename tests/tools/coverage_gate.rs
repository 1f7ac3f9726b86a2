//! `strategy: coverage` with the real coverage.py and pytest: the three report formats agree,
//! `min_percent` and `min_diff_percent` at their boundaries, the changed lines no test runs in
//! the `auto` and `branch` scopes, new files, and reports that are missing, broken or stale.

use crate::common;

use std::path::Path;
use std::time::{Duration, SystemTime};

use common::{check_json, gate, git, qgates, tools_bin, workspace, write};
use serde_json::{Value, json};

const CALC: &str = "def add(a, b):\n    return a + b\n";
const TESTS: &str = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n";
/// The change since the baseline: `mul` (lines 5-6) a test runs, `div` (lines 9-12) only
/// defined: its lines 10-12 run in no test.
const CALC_CHANGED: &str = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\ndef div(a, b):\n    if b == 0:\n        raise ValueError(\"zero\")\n    return a / b\n";
const TESTS_CHANGED: &str = "from pkg.calc import add, mul\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n";

const FORMATS: [(&str, &str); 3] = [
    ("cov_json", "json"),
    ("cov_xml", "xml"),
    ("cov_lcov", "lcov"),
];

/// Three gates, one per report format coverage.py prints, with the same `parsing` keys.
fn three_gates(parsing: &str) -> String {
    let mut cfg = String::from("version: 1\ngates:\n");
    for (id, report) in FORMATS {
        cfg.push_str(&format!(
            "  {id}:\n    command: [coverage, {report}, -o, \"-\"]\n    file_types: [\".py\"]\n    parsing: {{ strategy: coverage{parsing} }}\n"
        ));
    }
    cfg
}

/// A git repository on `main` with `add` and its test committed, and `config` as quality.yaml.
fn repo(config: &str) -> tempfile::TempDir {
    let ws = workspace(&[
        ("pkg/__init__.py", ""),
        ("pkg/calc.py", CALC),
        ("test_calc.py", TESTS),
        (".gitignore", ".qgates/\n.coverage\n__pycache__/\ncov.*\n"),
        ("quality.yaml", config),
    ]);
    git(ws.path(), &["init", "-q", "-b", "main"]);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-qm", "A"]);
    ws
}

/// Runs the tests under coverage, measuring the package only.
fn run_tests(root: &Path) {
    let out = std::process::Command::new(tools_bin().join("coverage"))
        .args([
            "run",
            "--source=pkg",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
        ])
        .current_dir(root)
        .output()
        .expect("run coverage");
    assert!(
        out.status.success(),
        "the tests failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A report written to a file by coverage.py, as a test gate would leave it.
fn write_report(root: &Path, report: &str, file: &str) {
    let out = std::process::Command::new(tools_bin().join("coverage"))
        .args([report, "-o", file])
        .current_dir(root)
        .output()
        .expect("run coverage");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The changes since the baseline: `mul` with its test, `div` without one.
fn change(root: &Path) {
    write(root, "pkg/calc.py", CALC_CHANGED);
    write(root, "test_calc.py", TESTS_CHANGED);
}

/// A gate's uncovered-line findings as (file, line, end_line, code, severity).
fn uncovered(g: &Value) -> Vec<Value> {
    g["violations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["code"] == "uncovered")
        .map(|v| json!([v["file"], v["line"], v["end_line"], v["severity"]]))
        .collect()
}

#[test]
fn the_three_formats_give_the_same_totals() {
    let ws = repo(&three_gates(", min_percent: 0"));
    let root = ws.path();
    change(root);
    run_tests(root);
    let (code, r) = check_json(root, &["--scope", "project"]);
    assert_eq!(code, 0, "{r}");
    for (id, _) in FORMATS {
        let g = gate(&r, id);
        assert_eq!(g["status"], "passed", "{g}");
        // 5 of the 8 executable lines of pkg/ ran (`__init__.py` has none).
        assert_eq!(
            g["coverage"],
            json!({
                "percent": 62.5,
                "min_percent": 0.0,
                "diff_note": "no diff coverage in the `project` scope, which compares with no baseline (the `auto` and `branch` scopes do)"
            }),
            "{id}"
        );
        assert!(g.get("violations").is_none(), "{g}");
    }
    let out = qgates(root)
        .args(["check", "--scope", "project", "--format", "summary"])
        .output()
        .unwrap();
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary
            .lines()
            .next()
            .unwrap()
            .contains("cov_json coverage 62.5%, cov_xml coverage 62.5%, cov_lcov coverage 62.5%"),
        "{summary}"
    );
}

#[test]
fn the_auto_scope_reports_exactly_the_changed_lines_no_test_runs() {
    let ws = repo(&three_gates(", min_percent: 0"));
    let root = ws.path();
    let a = git(root, &["rev-parse", "HEAD"]);
    // A green run with nothing changed makes A the baseline.
    let (code, r) = check_json(root, &[]);
    assert_eq!(code, 0, "{r}");
    change(root);
    git(root, &["commit", "-qam", "B"]);
    run_tests(root);
    let (code, r) = check_json(root, &[]);
    assert_eq!(code, 0, "uncovered changed lines are info: {r}");
    assert_eq!(r["scope"]["mode"], "auto");
    for (id, _) in FORMATS {
        let g = gate(&r, id);
        assert_eq!(
            uncovered(g),
            vec![json!(["pkg/calc.py", 10, 12, "info"])],
            "{id}: {g}"
        );
        let message = g["violations"][0]["message"].as_str().unwrap();
        assert!(
            message.contains("Lines 10–12 changed since the baseline and no test runs them"),
            "{message}"
        );
        let c = &g["coverage"];
        // Changed and executable: 5, 6 (mul), 9-12 (div); 5, 6 and 9 ran.
        assert_eq!(c["changed_lines"], 6, "{id}: {c}");
        assert_eq!(c["uncovered_changed_lines"], 3, "{id}: {c}");
        assert_eq!(c["diff_percent"], 50.0, "{id}: {c}");
        assert_eq!(c["percent"], 62.5, "{id}: {c}");
    }
    assert_eq!(
        r["scope"]["baseline_sha"],
        git(root, &["rev-parse", "HEAD"])
    );
    assert_ne!(a, git(root, &["rev-parse", "HEAD"]));
}

#[test]
fn the_branch_scope_compares_with_the_branch_base() {
    let ws = repo(&three_gates(", min_percent: 0"));
    let root = ws.path();
    git(root, &["checkout", "-qb", "feature"]);
    change(root);
    git(root, &["commit", "-qam", "B"]);
    // A change of the working tree on top, above the uncovered lines: they move down by two.
    let moved = format!("# two lines\n# of comments\n{CALC_CHANGED}");
    write(root, "pkg/calc.py", &moved);
    run_tests(root);
    let (code, r) = check_json(root, &["--scope", "branch"]);
    assert_eq!(code, 0, "{r}");
    for (id, _) in FORMATS {
        let g = gate(&r, id);
        assert_eq!(
            uncovered(g),
            vec![json!(["pkg/calc.py", 12, 14, "info"])],
            "{id}: {g}"
        );
        assert_eq!(g["coverage"]["changed_lines"], 6, "{id}");
        assert_eq!(g["coverage"]["diff_percent"], 50.0, "{id}");
    }
}

#[test]
fn min_percent_passes_at_the_minimum_and_fails_below_it() {
    for (min, passes) in [("62.5", true), ("62.51", false)] {
        let ws = repo(&three_gates(&format!(", min_percent: {min}")));
        let root = ws.path();
        change(root);
        run_tests(root);
        let (code, r) = check_json(root, &["--scope", "project"]);
        for (id, _) in FORMATS {
            let g = gate(&r, id);
            if passes {
                assert_eq!(g["status"], "passed", "{id} at {min}: {g}");
                continue;
            }
            assert_eq!(g["status"], "failed", "{id} at {min}: {g}");
            let v = &g["violations"][0];
            assert_eq!(v["severity"], "error");
            assert_eq!(v["code"], "coverage");
            assert!(v.get("file").is_none(), "{v}");
            let message = v["message"].as_str().unwrap();
            assert!(
                message.contains("Total line coverage is 62.5% (5 of 8 executable lines run), below the minimum of 62.51%"),
                "{message}"
            );
            assert!(
                message.contains(".qgates/runs/") && message.contains(&format!("{id}.stdout")),
                "the report's place: {message}"
            );
        }
        assert_eq!(code, if passes { 0 } else { 1 }, "{r}");
    }
}

#[test]
fn min_diff_percent_fails_below_it_and_passes_at_it() {
    for (min, passes) in [("50", true), ("50.1", false)] {
        let ws = repo(&three_gates(&format!(
            ", min_percent: 0, min_diff_percent: {min}"
        )));
        let root = ws.path();
        git(root, &["checkout", "-qb", "feature"]);
        change(root);
        run_tests(root);
        let (code, r) = check_json(root, &["--scope", "branch"]);
        assert_eq!(code, if passes { 0 } else { 1 }, "{r}");
        for (id, _) in FORMATS {
            let g = gate(&r, id);
            assert_eq!(
                g["coverage"]["min_diff_percent"].as_f64(),
                Some(min.parse().unwrap())
            );
            let failing: Vec<&Value> = g["violations"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|v| v["code"] == "diff_coverage")
                .collect();
            if passes {
                assert_eq!(g["status"], "passed", "{id}: {g}");
                assert!(failing.is_empty(), "{g}");
            } else {
                assert_eq!(g["status"], "failed", "{id}: {g}");
                let message = failing[0]["message"].as_str().unwrap();
                assert!(message.contains("Changed lines are 50.0% covered (3 of 6 changed executable lines run), below the minimum of 50.1%"), "{message}");
            }
        }
    }
}

#[test]
fn diff_severity_raises_uncovered_lines_to_failures() {
    let ws = repo(&three_gates(", min_percent: 0, diff_severity: warning"));
    let root = ws.path();
    git(root, &["checkout", "-qb", "feature"]);
    change(root);
    run_tests(root);
    let (code, r) = check_json(root, &["--scope", "branch"]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(
        uncovered(gate(&r, "cov_json")),
        vec![json!(["pkg/calc.py", 10, 12, "warning"])]
    );
}

#[test]
fn a_new_file_counts_all_its_lines_as_changed() {
    let ws = repo(&three_gates(", min_percent: 0"));
    let root = ws.path();
    let (code, r) = check_json(root, &[]);
    assert_eq!(code, 0, "{r}");
    // Never imported: coverage.py lists it under `--source` with no line run.
    write(
        root,
        "pkg/extra.py",
        "def never(x):\n    y = x + 1\n    return y\n",
    );
    run_tests(root);
    for staged in [false, true] {
        if staged {
            git(root, &["add", "pkg/extra.py"]);
        }
        let (_, r) = check_json(root, &["--no-state"]);
        for (id, _) in FORMATS {
            let g = gate(&r, id);
            assert_eq!(
                uncovered(g),
                vec![json!(["pkg/extra.py", 1, 3, "info"])],
                "{id}, staged: {staged}: {g}"
            );
            assert_eq!(g["coverage"]["changed_lines"], 3);
            assert_eq!(g["coverage"]["diff_percent"], 0.0);
        }
    }
}

#[test]
fn missing_empty_truncated_and_garbage_reports_are_errors_that_say_so() {
    let ws = repo(
        "version: 1\ngates: { x: { command: [\"true\"], parsing: { strategy: exit_code } } }\n",
    );
    let root = ws.path();
    run_tests(root);
    write_report(root, "json", "cov.json");
    write_report(root, "xml", "cov.xml");
    write_report(root, "lcov", "cov.lcov");
    let cut = |file: &str, keep: fn(&str) -> String| {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        write(root, &format!("cov.cut{}", &file[3..]), &keep(&text));
    };
    cut("cov.json", |t| t[..t.len() / 2].to_string());
    cut("cov.xml", |t| t[..t.len() / 2].to_string());
    cut("cov.lcov", |t| {
        t.trim_end().trim_end_matches("end_of_record").to_string()
    });
    write(root, "cov.empty", "");
    write(
        root,
        "cov.garbage",
        "Name    Stmts   Miss  Cover\nTOTAL 3 1 66%\n",
    );
    write(root, "cov.other", "{\"results\": []}");
    std::fs::remove_file(root.join(".coverage")).unwrap();
    let cases: [(&str, &str, &str); 7] = [
        // coverage.py without data prints its reason instead of a report.
        (
            "missing",
            "[coverage, json, -o, \"-\"]",
            "its output is not a coverage report (it starts \"No data to report.\")",
        ),
        ("empty", "[cat, cov.empty]", "its output is empty"),
        (
            "garbage",
            "[cat, cov.garbage]",
            "its output is not a coverage report (it starts \"Name    Stmts   Miss  Cover\"): neither coverage.py JSON",
        ),
        (
            "other_json",
            "[cat, cov.other]",
            "it is JSON but not a coverage.py JSON report",
        ),
        (
            "cut_json",
            "[cat, cov.cut.json]",
            "the coverage.py JSON report cannot be read: it is not valid JSON (EOF while parsing",
        ),
        (
            "cut_xml",
            "[cat, cov.cut.xml]",
            "the Cobertura XML report cannot be read: it",
        ),
        (
            "cut_lcov",
            "[cat, cov.cut.lcov]",
            "the LCOV report cannot be read: the record of `pkg/calc.py` has no `end_of_record`: the report is truncated",
        ),
    ];
    let mut cfg = String::from("version: 1\ngates:\n");
    for (id, command, _) in cases {
        cfg.push_str(&format!(
            "  {id}:\n    command: {command}\n    parsing: {{ strategy: coverage }}\n"
        ));
    }
    write(root, "quality.yaml", &cfg);
    let (code, r) = check_json(root, &["--scope", "project"]);
    assert_eq!(code, 3, "{r}");
    for (id, _, why) in cases {
        let g = gate(&r, id);
        assert_eq!(g["status"], "error", "{id}: {g}");
        let error = g["error"].as_str().unwrap();
        assert!(error.contains(why), "{id}: {error}");
        assert!(
            error.contains(&format!("{id}.stdout")),
            "{id} names its output: {error}"
        );
    }
}

#[test]
fn a_report_older_than_a_file_it_covers_is_stale() {
    let ws = repo(
        "version: 1\ngates:\n  from_json: { command: [cat, cov.json], file_types: [.py], parsing: { strategy: coverage, min_percent: 0 } }\n  from_xml: { command: [cat, cov.xml], file_types: [.py], parsing: { strategy: coverage, min_percent: 0 } }\n  from_lcov: { command: [cat, cov.lcov], file_types: [.py], parsing: { strategy: coverage, min_percent: 0 } }\n",
    );
    let root = ws.path();
    run_tests(root);
    write_report(root, "json", "cov.json");
    write_report(root, "xml", "cov.xml");
    write_report(root, "lcov", "cov.lcov");
    let (code, r) = check_json(root, &["--scope", "project"]);
    assert_eq!(code, 0, "fresh reports pass: {r}");
    // Edited after the tests ran: a minute later than now, so no clock tick can hide it.
    let calc = std::fs::OpenOptions::new()
        .append(true)
        .open(root.join("pkg/calc.py"))
        .unwrap();
    calc.set_modified(SystemTime::now() + Duration::from_secs(60))
        .unwrap();
    let (code, r) = check_json(root, &["--scope", "project"]);
    assert_eq!(code, 3, "{r}");
    for id in ["from_json", "from_xml"] {
        let g = gate(&r, id);
        assert_eq!(g["status"], "error", "{g}");
        let error = g["error"].as_str().unwrap();
        assert!(
            error.contains("the coverage report is stale: it was written at "),
            "{error}"
        );
        assert!(
            error.contains("and pkg/calc.py, a file it covers, was modified after it, at "),
            "{error}"
        );
        assert!(error.contains("Run the test gate first"), "{error}");
        assert_eq!(error.matches(" UTC").count(), 2, "both times: {error}");
    }
    // LCOV carries no time of creation: it cannot be checked.
    assert_eq!(gate(&r, "from_lcov")["status"], "passed");
}

#[test]
fn out_of_range_and_misplaced_options_are_config_errors() {
    let cases = [
        (
            "min_percent: 101",
            "`parsing.min_percent` is 101, but a percentage is between 0 and 100",
        ),
        (
            "min_diff_percent: -5",
            "`parsing.min_diff_percent` is -5, but a percentage is between 0 and 100",
        ),
        (
            "format: jsonl",
            "`parsing.format: jsonl` is a json_violations layout; a coverage report is `coverage_json`, `cobertura` or `lcov`",
        ),
        (
            "pattern: x",
            "`parsing.pattern` is not used by strategy coverage",
        ),
    ];
    for (key, message) in cases {
        let ws = workspace(&[(
            "quality.yaml",
            &format!(
                "version: 1\ngates:\n  cov:\n    command: [coverage, json, -o, \"-\"]\n    parsing: {{ strategy: coverage, {key} }}\n"
            ),
        )]);
        let out = qgates(ws.path())
            .args(["check", "--scope", "project"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{key}: {stderr}");
        assert!(stderr.contains(message), "{key}: {stderr}");
        assert!(
            stderr.contains("quality.yaml:5:"),
            "{key} points at its line: {stderr}"
        );
    }
    let ws = workspace(&[(
        "quality.yaml",
        "version: 1\ngates:\n  lint:\n    command: [x]\n    parsing: { strategy: json_violations, format: lcov, field_map: { message: m } }\n  cov:\n    command: [x]\n    cache: workspace\n    parsing: { strategy: coverage }\n",
    )]);
    let out = qgates(ws.path())
        .args(["check", "--scope", "project"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`parsing.format: lcov` names a coverage report; json_violations reads `json` or `jsonl`"), "{stderr}");
    assert!(
        stderr.contains("gate `cov` reads a coverage report, and such a gate is never cached"),
        "{stderr}"
    );
}

#[test]
fn the_schema_shows_the_options() {
    let out = qgates(Path::new(".")).arg("schema").output().unwrap();
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    let parsing = &schema["definitions"]["RawParsing"]["properties"];
    assert_eq!(parsing["min_percent"]["default"], 85.0);
    assert_eq!(parsing["min_percent"]["maximum"], 100);
    assert_eq!(parsing["min_diff_percent"]["minimum"], 0);
    assert_eq!(parsing["diff_severity"]["default"], "info");
    let text = schema.to_string();
    for format in ["coverage_json", "cobertura", "lcov"] {
        assert!(text.contains(format), "{format}");
    }
}

#[test]
fn a_renamed_file_counts_only_the_lines_changed_in_it() {
    let ws = repo(&three_gates(", min_percent: 0"));
    let root = ws.path();
    change(root);
    git(root, &["commit", "-qam", "mul and div"]);
    git(root, &["checkout", "-qb", "feature"]);
    // Renamed, and one function added: only its two lines changed (line 16 never runs).
    git(root, &["mv", "pkg/calc.py", "pkg/maths.py"]);
    write(
        root,
        "pkg/maths.py",
        &format!("{CALC_CHANGED}\n\ndef neg(a):\n    return -a\n"),
    );
    write(
        root,
        "test_calc.py",
        &TESTS_CHANGED.replace("pkg.calc", "pkg.maths"),
    );
    run_tests(root);
    let (code, r) = check_json(root, &["--scope", "branch"]);
    assert_eq!(code, 0, "{r}");
    for (id, _) in FORMATS {
        let g = gate(&r, id);
        assert_eq!(
            uncovered(g),
            vec![json!(["pkg/maths.py", 16, 16, "info"])],
            "{id}: {g}"
        );
        assert_eq!(g["coverage"]["changed_lines"], 2, "{id}");
    }
}

#[test]
fn qgates_parse_reads_a_saved_report_with_its_totals() {
    let ws = repo(&three_gates(", min_percent: 70"));
    let root = ws.path();
    change(root);
    run_tests(root);
    write_report(root, "lcov", "cov.lcov");
    let out = qgates(root)
        .args(["parse", "cov_lcov", "cov.lcov"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let parsed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        parsed["coverage"],
        json!({ "percent": 62.5, "min_percent": 70.0 })
    );
    assert_eq!(parsed["violations"][0]["code"], "coverage");
}
