//! `strategy: junit` on the reports real test runners write: pytest and vitest run here (their
//! counts against their own summary lines), and the edge cases of jest-junit's, Go's and
//! cargo-nextest's shapes read with `qgates parse` (tests/tools/junit_real_runners.rs runs those
//! runners themselves).

use crate::common;

use std::path::Path;
use std::process::Command;

use common::junit::{row, rows};
use common::{check_json_with, gate, path_with_catalog_tools, qgates, write};
use regex::Regex;
use serde_json::{Value, json};

#[test]
fn pytest_classes_fixture_errors_and_helpers_with_pytests_counts() {
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  t: { preset: pytest }\n",
    );
    write(
        ws.path(),
        "tests/test_shapes.py",
        "import pytest\n\n\ndef helper(x):\n    assert x == 1, \"café 🎉 is not one\"\n\n\ndef test_ok():\n    assert True\n\n\ndef test_in_helper():\n    helper(2)\n\n\n@pytest.fixture\ndef broken():\n    raise RuntimeError(\"boom\")\n\n\ndef test_fixture(broken):\n    pass\n\n\n@pytest.mark.skip(reason=\"later\")\ndef test_later():\n    pass\n\n\nclass TestK:\n    def test_m(self):\n        assert 1 + 1 == 3\n",
    );
    let (_, report) = check_json_with(qgates(ws.path()), &["--scope", "project", "--no-state"]);
    let g = gate(&report, "t");
    assert_eq!(g["status"], "failed", "{g:#}");
    let f = "tests/test_shapes.py";
    assert_eq!(
        rows(&g["violations"]),
        [
            // The assertion that failed is in a helper: the last frame in the project.
            row(
                f,
                5,
                None,
                "tests/test_shapes.py::test_in_helper",
                "AssertionError: café 🎉 is not one"
            ),
            row(
                f,
                18,
                None,
                "tests/test_shapes.py::test_fixture",
                "failed on setup with \"RuntimeError: boom\""
            ),
            row(
                f,
                32,
                None,
                "tests/test_shapes.py::TestK::test_m",
                "assert (1 + 1) == 3"
            ),
        ]
    );
    let out = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python"))
        .args(["-m", "pytest", "-p", "no:cacheprovider"])
        .current_dir(ws.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let summary = text.lines().last().unwrap_or_default();
    assert!(
        summary.contains("2 failed, 1 passed, 1 skipped, 1 error"),
        "pytest's summary changed: {summary}"
    );
    assert_eq!(
        g["tests"],
        json!({"total": 5, "failed": 2, "errored": 1, "skipped": 1})
    );
}

#[test]
fn vitest_failures_at_their_assertions_with_vitests_counts() {
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  t: { preset: vitest }\n",
    );
    write(
        ws.path(),
        "package.json",
        "{ \"private\": true, \"type\": \"module\" }\n",
    );
    write(
        ws.path(),
        "tests/app.test.js",
        "import { describe, expect, test } from \"vitest\";\n\ndescribe(\"app\", () => {\n  test(\"adds\", () => {\n    expect(1 + 1).toBe(2);\n  });\n  test(\"counts\", () => {\n    const s = \"café 🎉\"; expect(s.length).toBe(3);\n  });\n  test.skip(\"later\", () => {});\n});\n",
    );
    write(
        ws.path(),
        "tests/throws.test.js",
        "import { test } from \"vitest\";\n\nfunction parse(text) {\n  throw new Error(`cannot parse ${text}`);\n}\n\ntest(\"parses\", () => {\n  parse(\"x\");\n});\n",
    );
    let mut cmd = qgates(ws.path());
    cmd.env("PATH", path_with_catalog_tools());
    let (_, report) = check_json_with(cmd, &["--scope", "project", "--no-state"]);
    let g = gate(&report, "t");
    assert_eq!(g["status"], "failed", "{g:#}");
    assert_eq!(
        rows(&g["violations"]),
        [
            // vitest's UTF-16 column 43 (🎉 is two units) is character 42.
            row(
                "tests/app.test.js",
                8,
                Some(42),
                "tests/app.test.js::app > counts",
                "expected 7 to be 3 // Object.is equality"
            ),
            // A stack: the innermost frame in the project, where it threw.
            row(
                "tests/throws.test.js",
                4,
                Some(9),
                "tests/throws.test.js::parses",
                "cannot parse x"
            ),
        ]
    );
    let out = Command::new("vitest")
        .args(["run"])
        .env("PATH", path_with_catalog_tools())
        .env("NO_COLOR", "1")
        .current_dir(ws.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let tests = text
        .lines()
        .find(|l| l.trim_start().starts_with("Tests "))
        .unwrap_or_else(|| panic!("no Tests line in vitest's output:\n{text}"));
    let n = |word: &str| -> u64 {
        Regex::new(&format!(r"(\d+) {word}"))
            .unwrap()
            .captures(tests)
            .map_or(0, |c| c[1].parse().unwrap())
    };
    let total = Regex::new(r"\((\d+)\)").unwrap().captures(tests).unwrap()[1]
        .parse::<u64>()
        .unwrap();
    assert_eq!(
        g["tests"],
        json!({"total": total, "failed": n("failed"), "errored": 0, "skipped": n("skipped")}),
        "vitest says: {tests}"
    );
}

/// `qgates parse t REPORT` with a junit gate that reads `output_file`, in `root`.
fn parse(root: &Path, report: &str) -> Value {
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  t:\n    command: [run-tests]\n    output_file: junit.xml\n    pass_files: false\n    parsing: { strategy: junit }\n",
    );
    write(root, "kept.xml", report);
    let out = qgates(root)
        .args(["parse", "t", "kept.xml"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_shapes_of_jest_go_and_nextest_reports() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write(
        root,
        "src/app.test.js",
        "\n\n\n\n\n\n  expect(add(1, 1)).toBe(3);\n",
    );
    write(root, "shop_test.go", "package shop\n");
    write(root, "src/lib.rs", "");
    // jest-junit: no message attribute, a stack of absolute paths innermost first.
    let jest = format!(
        "<testsuites name=\"jest tests\" tests=\"2\" failures=\"1\"><testsuite name=\"app\" tests=\"2\"><testcase classname=\"app adds\" name=\"app adds\" time=\"0.001\"></testcase><testcase classname=\"app fails\" name=\"app fails\" time=\"0.002\"><failure>Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 3\nReceived: 2\n    at Object.&lt;anonymous&gt; ({0}/src/app.test.js:7:21)\n    at Promise.then.completed ({0}/node_modules/jest-circus/build/utils.js:298:28)</failure></testcase></testsuite></testsuites>",
        root.display()
    );
    let got = parse(root, &jest);
    assert_eq!(
        rows(&got["violations"]),
        [row(
            "src/app.test.js",
            7,
            Some(21),
            // jest-junit's default classname is the name again: the id is the name alone.
            "app fails",
            "Error: expect(received).toBe(expected) // Object.is equality"
        )]
    );
    assert_eq!(
        got["tests"],
        json!({"total": 2, "failed": 1, "errored": 0, "skipped": 0})
    );
    // go-junit-report: the package as classname, `message="Failed"`, the `file:line:` line of
    // `t.Errorf` between go's `=== RUN` and `--- FAIL` lines.
    let go = "<testsuites tests=\"3\" failures=\"1\"><testsuite name=\"example.com/shop\" tests=\"3\" failures=\"1\" errors=\"0\"><properties><property name=\"go.version\" value=\"go1.22.2\"></property></properties><testcase name=\"TestAdd\" classname=\"example.com/shop\" time=\"0.000\"></testcase><testcase name=\"TestTax\" classname=\"example.com/shop\" time=\"0.000\"><failure message=\"Failed\" type=\"\">=== RUN   TestTax&#xA;    shop_test.go:12: got 6, want 5&#xA;--- FAIL: TestTax (0.00s)&#xA;</failure></testcase><testcase name=\"TestLater\" classname=\"example.com/shop\" time=\"0.000\"><skipped message=\"later\"></skipped></testcase></testsuite></testsuites>";
    let got = parse(root, go);
    assert_eq!(
        rows(&got["violations"]),
        [row(
            "shop_test.go",
            12,
            None,
            "example.com/shop::TestTax",
            "got 6, want 5"
        )]
    );
    assert_eq!(
        got["tests"],
        json!({"total": 3, "failed": 1, "errored": 0, "skipped": 1})
    );
    // cargo-nextest: the panic's place, and its message rather than the header (whose thread
    // id changes with every run).
    let nextest = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"nextest-run\" tests=\"2\" failures=\"1\" errors=\"0\"><testsuite name=\"shop\" tests=\"2\" disabled=\"0\" errors=\"0\" failures=\"1\"><testcase name=\"tests::adds\" classname=\"shop\" time=\"0.010\"></testcase><testcase name=\"tests::taxes\" classname=\"shop\" time=\"0.010\"><failure message=\"thread &apos;tests::taxes&apos; (28595) panicked at src/lib.rs:12:9\" type=\"test failure with exit code 101\">thread &apos;tests::taxes&apos; (28595) panicked at src/lib.rs:12:9:\nassertion `left == right` failed\n  left: 6\n right: 5</failure><system-out>running 1 test</system-out></testcase></testsuite></testsuites>";
    let got = parse(root, nextest);
    assert_eq!(
        rows(&got["violations"]),
        [row(
            "src/lib.rs",
            12,
            Some(9),
            "shop::tests::taxes",
            "assertion `left == right` failed"
        )]
    );
}

/// pytest's xunit1 report gives each test `file` and `line`, the line 0-based: where the failure's
/// text has no frame in the test's file (a fixture of conftest.py raised), that line is the place,
/// and it must be the `def`'s own line.
#[test]
fn pytest_xunit1_lines_are_counted_from_one() {
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  t:\n    preset: pytest\n    command: [python, -m, pytest, -p, no:cacheprovider, -o, junit_family=xunit1, \"--junitxml={report_dir}/junit.xml\"]\n",
    );
    write(
        ws.path(),
        "tests/conftest.py",
        "import pytest\n\n\n@pytest.fixture\ndef broken():\n    raise RuntimeError(\"boom\")\n",
    );
    write(
        ws.path(),
        "tests/test_a.py",
        "def test_ok():\n    pass\n\n\ndef test_uses_broken(broken):\n    pass\n",
    );
    let (_, report) = check_json_with(qgates(ws.path()), &["--scope", "project", "--no-state"]);
    let g = gate(&report, "t");
    assert_eq!(
        rows(&g["violations"]),
        [row(
            "tests/test_a.py",
            5,
            None,
            "tests/test_a.py::test_uses_broken",
            "failed on setup with \"RuntimeError: boom\""
        )],
        "{g:#}"
    );
    // The report really is xunit1 with the 0-based line, and its frame is in conftest.py only.
    let kept = ws
        .path()
        .join(report["log_dir"].as_str().unwrap())
        .join("t.reports/junit.xml");
    let xml = std::fs::read_to_string(kept).unwrap();
    assert!(
        xml.contains("name=\"test_uses_broken\" file=\"tests/test_a.py\" line=\"4\"")
            && xml.contains("tests/conftest.py:6: RuntimeError"),
        "{xml}"
    );
}

/// Only pytest counts lines from 0: a `line` in another runner's suite is taken as written, and
/// the same report under pytest's suite name is moved by one.
#[test]
fn only_a_suite_pytest_wrote_has_its_lines_moved() {
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "t/test_x.py", "\n\n\ndef test_x():\n    pass\n");
    let report = |suite: &str| {
        format!(
            "<testsuites><testsuite name=\"{suite}\"><testcase classname=\"t.test_x\" name=\"test_x\" file=\"t/test_x.py\" line=\"3\"><error message=\"setup failed\">elsewhere</error></testcase></testsuite></testsuites>"
        )
    };
    let line = |suite: &str| {
        let got = parse(ws.path(), &report(suite));
        got["violations"][0]["line"].as_u64()
    };
    assert_eq!(line("pytest"), Some(4));
    assert_eq!(line("other"), Some(3));
}

/// A test that asks for a fixture that does not exist: pytest's text names the place as `file
/// PATH, line N` (the test's `def`), in no traceback form; that is where the test is reported.
#[test]
fn pytest_a_missing_fixture_is_placed_at_the_test() {
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  t: { preset: pytest }\n",
    );
    write(
        ws.path(),
        "tests/test_a.py",
        "def test_ok():\n    pass\n\n\ndef test_missing(no_such_fixture):\n    pass\n",
    );
    let (_, report) = check_json_with(qgates(ws.path()), &["--scope", "project", "--no-state"]);
    let g = gate(&report, "t");
    let v = &g["violations"][0];
    assert_eq!(
        (v["file"].as_str(), v["line"].as_u64(), v["code"].as_str()),
        (
            Some("tests/test_a.py"),
            Some(5),
            Some("tests/test_a.py::test_missing")
        ),
        "{g:#}"
    );
    assert_eq!(g["tests"]["errored"], 1, "{g:#}");
}
