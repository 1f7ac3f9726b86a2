//! `strategy: junit` on what jest (through jest-junit), `go test` (through gotestsum) and
//! cargo-nextest really write: each runs on a tiny project in a temporary folder, and the gate's
//! violations must sit at the failing assertion with the failure's own words, and its counts
//! be the runner's own (each runner is run again alone and its summary read).
//!
//! The runners are installed by scripts/setup.sh (jest and jest-junit in tools/node_modules,
//! gotestsum and go from Debian) or come with the machine (cargo-nextest); a missing one fails
//! its test with what to install.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::junit::{row, rows};
use common::places::{Unit, token_span};
use common::{check_json_with, gate, path_with_catalog_tools, qgates, write};
use regex::Regex;
use serde_json::{Value, json};

/// `qgates check --scope project` in `root` with the catalog's tools on PATH and `env`; the
/// gate `t`.
fn check(root: &Path, env: &[(&str, &str)]) -> Value {
    let mut cmd = qgates(root);
    cmd.env("PATH", path_with_catalog_tools());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (_, report) = check_json_with(cmd, &["--scope", "project", "--no-state"]);
    let g = gate(&report, "t").clone();
    assert_eq!(g["status"], "failed", "{g:#}");
    g
}

/// Runs `program args` in `root` the way the gate did (same PATH and `env`), for its summary.
fn run_alone(root: &Path, program: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(root)
        .env("PATH", path_with_catalog_tools())
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out: Output = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The number before `word` in `line` (0 when the runner left it out).
fn count(line: &str, word: &str) -> u64 {
    Regex::new(&format!(r"(\d+) {word}"))
        .unwrap()
        .captures(line)
        .map_or(0, |c| c[1].parse().unwrap())
}

/// The line of `text` that starts with `start` (after spaces).
fn line_starting<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines()
        .find(|l| l.trim_start().starts_with(start))
        .unwrap_or_else(|| panic!("no line starting with {start:?} in:\n{text}"))
}

// ---- jest with jest-junit ----

const JEST_TEST: &str = "describe(\"app\", () => {\n  test(\"adds\", () => {\n    expect(1 + 1).toBe(2);\n  });\n  test(\"counts\", () => {\n    const s = \"café 🎉\"; expect(s.length).toBe(3);\n  });\n  test.skip(\"later\", () => {});\n});\n";

/// A project with one passing, one failing and one skipped jest test, whose gate runs jest
/// through jest-junit with `env`; jest-junit resolves from the catalog's node_modules, as it
/// would from the project's own.
fn jest_project(env: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        "quality.yaml",
        &format!(
            "version: 1\ngates:\n  t:\n    kind: test\n    command: [jest, --ci, --reporters=default, --reporters=jest-junit]\n    output_file: junit.xml\n    pass_files: false\n    column_unit: utf16\n    env: {env}\n    parsing: {{ strategy: junit }}\n"
        ),
    );
    write(ws.path(), "package.json", "{ \"private\": true }\n");
    write(ws.path(), "tests/app.test.js", JEST_TEST);
    ws
}

fn node_path() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tools/node_modules")
        .display()
        .to_string()
}

/// jest's own `Tests:` line, run alone with the same settings.
fn jest_counts(root: &Path, env: &[(&str, &str)]) -> Value {
    let text = run_alone(root, "jest", &["--ci"], env);
    let tests = line_starting(&text, "Tests:");
    json!({"total": count(tests, "total"), "failed": count(tests, "failed"), "errored": 0, "skipped": count(tests, "skipped")})
}

#[test]
fn jest_junit_by_default_the_failure_at_its_assertion_and_jests_counts() {
    // jest-junit's defaults: the report is ./junit.xml; no file attribute; classname and name
    // both `describe test`.
    let ws = jest_project("{}");
    let node = node_path();
    let env = [("NODE_PATH", node.as_str())];
    let g = check(ws.path(), &env);
    // The stack's frame in the project, `(…/tests/app.test.js:6:43)`: V8 counts UTF-16 units,
    // and 🎉 is two of them.
    let (column, _) = token_span(JEST_TEST, 6, "toBe", Unit::CodePoint);
    assert_eq!(
        rows(&g["violations"]),
        [row(
            "tests/app.test.js",
            6,
            Some(column as u64 + 1),
            "app counts",
            "Error: expect(received).toBe(expected) // Object.is equality"
        )]
    );
    assert_eq!(g["tests"], jest_counts(ws.path(), &env));
    assert_eq!(
        g["tests"],
        json!({"total": 3, "failed": 1, "errored": 0, "skipped": 1})
    );
}

#[test]
fn jest_junit_with_the_documented_settings_ids_by_file_and_title() {
    // docs/test-gates.md's settings: the file as classname and attribute, the titles joined
    // by jest's own ` › `, and test files that cannot load reported (as errors).
    let settings = "{ JEST_JUNIT_ADD_FILE_ATTRIBUTE: \"true\", JEST_JUNIT_CLASSNAME: \"{filepath}\", JEST_JUNIT_TITLE: \"{classname} › {title}\", JEST_JUNIT_ANCESTOR_SEPARATOR: \" › \", JEST_JUNIT_REPORT_TEST_SUITE_ERRORS: \"true\" }";
    let ws = jest_project(settings);
    write(
        ws.path(),
        "tests/broken.test.js",
        "describe(\"b\", () => {\n  test(\"x\", () => {});\n",
    );
    let node = node_path();
    let env = [("NODE_PATH", node.as_str())];
    let g = check(ws.path(), &env);
    let (column, _) = token_span(JEST_TEST, 6, "toBe", Unit::CodePoint);
    let got = rows(&g["violations"]);
    assert_eq!(
        got[0],
        row(
            "tests/app.test.js",
            6,
            Some(column as u64 + 1),
            "tests/app.test.js::app › counts",
            "Error: expect(received).toBe(expected) // Object.is equality"
        )
    );
    // The file that cannot load is a violation on its file (from the report's attribute).
    assert_eq!(
        got[1..],
        [(
            "tests/broken.test.js".to_string(),
            None,
            None,
            "Test suite failed to run::tests/broken.test.js".to_string(),
            "● Test suite failed to run".to_string()
        )]
    );
    // jest leaves the file out of its `Tests:` line (it is a failed suite); jest-junit writes it
    // as two test cases, an error and a failure, and the report's counts are the report's.
    let jest = jest_counts(ws.path(), &env);
    assert_eq!(
        g["tests"],
        json!({"total": jest["total"].as_u64().unwrap() + 2, "failed": jest["failed"].as_u64().unwrap() + 1, "errored": 1, "skipped": jest["skipped"]})
    );
}

// ---- go test through gotestsum ----

#[test]
fn go_test_through_gotestsum_at_the_failing_line_with_go_tests_counts() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  t:\n    kind: test\n    command: [gotestsum, --junitfile, \"{report_dir}/junit.xml\", --, ./...]\n    output_file: \"{report_dir}/junit.xml\"\n    pass_files: false\n    parsing: { strategy: junit }\n",
    );
    write(root, "go.mod", "module example.com/shop\n\ngo 1.19\n");
    write(
        root,
        "shop.go",
        "package shop\n\nfunc Add(a, b int) int { return a + b }\n",
    );
    write(
        root,
        "shop_test.go",
        "package shop\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 1) != 2 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n\nfunc TestTax(t *testing.T) {\n\tgot := Add(2, 4); t.Errorf(\"café 🎉: got %d, want 5\", got)\n}\n\nfunc TestLater(t *testing.T) {\n\tt.Skip(\"later\")\n}\n",
    );
    // The same file name at the root: Go prints `tax_test.go:8:` for the subpackage's, which
    // must not land here.
    write(
        root,
        "tax_test.go",
        "package shop\n\nimport \"testing\"\n\nfunc TestNothing(t *testing.T) {}\n",
    );
    write(
        root,
        "internal/tax/tax_test.go",
        "package tax\n\nimport \"testing\"\n\nfunc TestRates(t *testing.T) {\n\tt.Run(\"zero\", func(t *testing.T) {})\n\tt.Run(\"high\", func(t *testing.T) {\n\t\tt.Errorf(\"rate too high\")\n\t})\n}\n",
    );
    // No network: the module has no dependency to fetch.
    let env = [("GOPROXY", "off"), ("GOFLAGS", "-mod=mod")];
    for tool in ["go", "gotestsum"] {
        let found = Command::new(tool)
            .arg(if tool == "go" { "version" } else { "--version" })
            .env("PATH", path_with_catalog_tools())
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            found,
            "{tool} is missing: run scripts/setup.sh (it installs Debian's golang-go and gotestsum)"
        );
    }
    let g = check(root, &env);
    let mut got = rows(&g["violations"]);
    got.sort();
    assert_eq!(
        got,
        [
            // TestRates failed only because TestRates/high did: no violation of its own.
            row(
                "internal/tax/tax_test.go",
                8,
                None,
                "example.com/shop/internal/tax::TestRates/high",
                "rate too high"
            ),
            row(
                "shop_test.go",
                12,
                None,
                "example.com/shop::TestTax",
                "café 🎉: got 6, want 5"
            ),
        ]
    );
    // `go test -v` prints one `--- PASS|FAIL|SKIP` line per test and subtest.
    let text = run_alone(root, "go", &["test", "-v", "./..."], &env);
    let n = |what: &str| -> u64 {
        Regex::new(&format!(r"(?m)^\s*--- {what}: "))
            .unwrap()
            .find_iter(&text)
            .count() as u64
    };
    let go = json!({"total": n("PASS") + n("FAIL") + n("SKIP"), "failed": n("FAIL"), "errored": 0, "skipped": n("SKIP")});
    assert_eq!(g["tests"], go, "go test says:\n{text}");
    assert_eq!(
        g["tests"],
        json!({"total": 7, "failed": 3, "errored": 0, "skipped": 1})
    );
}

// ---- cargo-nextest ----

const NEXTEST_LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 1), 2);\n    }\n\n    #[test]\n    fn taxes() {\n        let s = \"café\"; assert_eq!(add(2, 4), 5, \"{s}: wrong tax\");\n    }\n\n    #[test]\n    #[ignore]\n    fn later() {}\n}\n";

#[test]
fn cargo_nextest_at_the_panic_with_nextests_counts() {
    let has_nextest = Command::new("cargo")
        .args(["nextest", "--version"])
        .env("PATH", path_with_catalog_tools())
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        has_nextest,
        "`cargo nextest` is missing: run scripts/setup.sh (it installs cargo-nextest into .venv)"
    );
    let ws = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let root = ws.path();
    // nextest keeps its reports in `target/nextest/<profile>/` under the workspace, whatever
    // CARGO_TARGET_DIR says; the build goes to the temporary folder.
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  t:\n    kind: test\n    command: [cargo, nextest, run, --no-fail-fast]\n    output_file: target/nextest/default/junit.xml\n    pass_files: false\n    parsing: { strategy: junit }\n    success: { exit_codes_ok: [0], exit_codes_findings: [100] }\n",
    );
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    write(
        root,
        ".config/nextest.toml",
        "[profile.default.junit]\npath = \"junit.xml\"\n",
    );
    write(root, "src/lib.rs", NEXTEST_LIB);
    let target_dir = target.path().display().to_string();
    // A backtrace puts frames with byte columns after the panic line: the panic's place wins.
    let env = [
        ("CARGO_TARGET_DIR", target_dir.as_str()),
        ("RUST_BACKTRACE", "1"),
    ];
    let g = check(root, &env);
    let (column, _) = token_span(NEXTEST_LIB, 16, "assert_eq!", Unit::CodePoint);
    assert_eq!(
        rows(&g["violations"]),
        [row(
            "src/lib.rs",
            16,
            Some(column as u64 + 1),
            "shop::tests::taxes",
            "assertion `left == right` failed: café: wrong tax"
        )]
    );
    let text = run_alone(root, "cargo", &["nextest", "run", "--no-fail-fast"], &env);
    let summary = line_starting(&text, "Summary");
    // nextest leaves skipped (ignored) tests out of its JUnit report: they are not counted.
    assert_eq!(count(summary, "skipped"), 1, "{summary}");
    assert_eq!(
        g["tests"],
        json!({"total": count(summary, "tests run"), "failed": count(summary, "failed"), "errored": 0, "skipped": 0}),
        "nextest says: {summary}"
    );
    assert_eq!(
        g["tests"],
        json!({"total": 2, "failed": 1, "errored": 0, "skipped": 0})
    );
}

// ---- a runner that cannot start ----

/// The pytest preset in a workspace whose virtual environment has no pytest: Python says so and
/// exits 1 (a "findings" code), writing no report. The gate's error quotes Python's reason
/// instead of only asking to check `output_file`.
#[test]
fn a_pytest_gate_without_pytest_says_why() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  t: { preset: pytest }\n",
    );
    write(root, "test_a.py", "def test_a():\n    assert True\n");
    let venv = Command::new("python3")
        .args(["-m", "venv", "--without-pip", ".venv"])
        .current_dir(root)
        .status()
        .expect("python3 -m venv");
    assert!(venv.success());
    let mut cmd = qgates(root);
    cmd.env("PATH", path_with_catalog_tools());
    let (code, report) = check_json_with(cmd, &["--scope", "project", "--no-state"]);
    assert_eq!(code, 3, "{report}");
    let g = gate(&report, "t");
    assert_eq!(g["status"], "error", "{g}");
    let error = g["error"].as_str().unwrap();
    assert!(
        error.contains("wrote no report")
            && error.contains("It said: ")
            && error.contains("No module named pytest"),
        "{error}"
    );
}
