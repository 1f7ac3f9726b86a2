//! Report files (`output_file`, `{report_dir}`) and JUnit reports that are not what they should
//! be, with small shell scripts standing in for test runners: every broken report makes the gate
//! an error that names the file, a stale report is never read, a link never leads qgates out of
//! the workspace, and each batch reads its own report.

use crate::common;

use std::path::Path;

use common::{check_json, gate, qgates, tool, write};
use serde_json::Value;

/// A report with two tests, one failing at `tests/test_a.py:2`.
const ONE_FAILED: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="2">
<testcase classname="tests.test_a" name="test_ok" time="0.001"/>
<testcase classname="tests.test_a" name="test_bad" time="0.001"><failure message="assert 1 == 2">def test_bad():
&gt;       assert 1 == 2
E       assert 1 == 2

tests/test_a.py:2: AssertionError</failure></testcase>
</testsuite></testsuites>
"#;

/// A workspace whose gate `t` runs `./t.sh` (with `args`) and reads `output_file`.
fn workspace(script: &str, args: &str, output_file: &str, extra: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().expect("tempdir");
    write(
        ws.path(),
        "quality.yaml",
        &format!(
            "version: 1\ngates:\n  t:\n    command: [\"./t.sh\"{args}]\n    output_file: \"{output_file}\"\n    file_types: [\".py\"]\n    pass_files: false\n    cache: none\n    parsing: {{ strategy: junit }}\n{extra}"
        ),
    );
    write(
        ws.path(),
        "tests/test_a.py",
        "def test_bad():\n    assert 1 == 2\n",
    );
    tool(ws.path(), "t.sh", script);
    ws
}

fn run(root: &Path) -> Value {
    let (_, report) = check_json(root, &["--scope", "project", "--no-state"]);
    gate(&report, "t").clone()
}

#[track_caller]
fn assert_error(g: &Value, parts: &[&str]) {
    assert_eq!(g["status"], "error", "{g:#}");
    let error = g["error"].as_str().unwrap_or_default();
    for part in parts {
        assert!(error.contains(part), "`{part}` not in the error: {error}");
    }
}

#[test]
fn each_broken_report_is_an_error_that_names_the_file() {
    let cut = &ONE_FAILED[..ONE_FAILED.find("&gt;").unwrap()];
    let cases: [(&str, String, &[&str]); 7] = [
        ("missing", String::new(), &["wrote no report at"]),
        ("empty", ": > \"$1\"\n".into(), &["is empty"]),
        (
            "cut off",
            format!("cat > \"$1\" <<'EOF'\n{cut}\nEOF\n"),
            &["was cut off", "before <failure> is closed"],
        ),
        (
            "not XML",
            "echo 'Traceback (most recent call last): no report' > \"$1\"\n".into(),
            &["holds no XML element"],
        ),
        (
            "bad XML",
            "printf '<testsuites>\\n  <testsuite></testcase>\\n</testsuites>\\n' > \"$1\"\n".into(),
            &["is not well-formed XML at line 2, column"],
        ),
        (
            "another shape",
            "echo '<coverage line-rate=\"1\"></coverage>' > \"$1\"\n".into(),
            &["its root element is <coverage>"],
        ),
        (
            "no tests",
            "echo '<testsuites><testsuite name=\"x\" tests=\"0\"/></testsuites>' > \"$1\"\n".into(),
            &["has no tests"],
        ),
    ];
    for (_what, writes, says) in cases {
        let script = format!("#!/bin/sh\n{writes}exit 1\n");
        let ws = workspace(
            &script,
            ", \"{report_dir}/junit.xml\"",
            "{report_dir}/junit.xml",
            "",
        );
        let g = run(ws.path());
        let mut parts = vec!["t.reports/junit.xml", "exit code 1"];
        parts.extend(says);
        assert_error(&g, &parts);
    }
}

#[test]
fn a_report_in_the_workspace_is_read_kept_and_parsed_again_from_the_copy() {
    let script = format!(
        "#!/bin/sh\nmkdir -p reports\ncat > reports/junit.xml <<'EOF'\n{ONE_FAILED}EOF\nexit 1\n"
    );
    let ws = workspace(&script, "", "reports/junit.xml", "");
    let (_, report) = check_json(ws.path(), &["--scope", "project", "--no-state"]);
    let g = gate(&report, "t");
    assert_eq!(g["status"], "failed", "{g:#}");
    assert_eq!(
        g["tests"],
        serde_json::json!({"total": 2, "failed": 1, "errored": 0, "skipped": 0})
    );
    let v = &g["violations"][0];
    assert_eq!(
        (v["file"].as_str(), v["line"].as_u64()),
        (Some("tests/test_a.py"), Some(2))
    );
    assert_eq!(v["code"], "tests/test_a.py::test_bad");
    assert_eq!(v["message"], "assert 1 == 2");
    // The copy beside the gate's logs is what `qgates parse` reads again.
    let copy = ws
        .path()
        .join(report["log_dir"].as_str().unwrap())
        .join("t.junit.xml");
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), ONE_FAILED);
    let out = qgates(ws.path())
        .args(["parse", "t"])
        .arg(&copy)
        .output()
        .unwrap();
    let parsed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(parsed["violations"], g["violations"]);
    assert_eq!(parsed["tests"], g["tests"]);
}

/// `qgates parse` with a gate whose `parsing.also` reader reads a report of its own: the copy
/// the run kept beside FILE, or the one `--report` names; a missing one is a usage error that
/// says where it was looked for and how to give it.
#[test]
fn qgates_parse_reads_the_reports_of_parsing_also_too() {
    let ws = tempfile::tempdir().unwrap();
    let slow = ONE_FAILED
        .replace("test_ok", "test_slow")
        .replace("test_bad", "test_late");
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  t:\n    command: [\"./t.sh\"]\n    output_file: reports/junit.xml\n    pass_files: false\n    cache: none\n    parsing:\n      strategy: junit\n      also:\n        - { strategy: junit, output_file: reports/slow.xml }\n",
    );
    write(
        ws.path(),
        "tests/test_a.py",
        "def test_bad():\n    assert 1 == 2\n",
    );
    tool(
        ws.path(),
        "t.sh",
        &format!(
            "#!/bin/sh\nmkdir -p reports\ncat > reports/junit.xml <<'EOF'\n{ONE_FAILED}EOF\ncat > reports/slow.xml <<'EOF'\n{slow}EOF\nexit 1\n"
        ),
    );
    let (_, report) = check_json(ws.path(), &["--scope", "project", "--no-state"]);
    let g = gate(&report, "t");
    assert_eq!(g["tests"]["total"], 4, "{g:#}");
    assert_eq!(g["violations"].as_array().map(Vec::len), Some(2), "{g:#}");
    let log_dir = ws.path().join(report["log_dir"].as_str().unwrap());
    let parse = |args: &[&std::ffi::OsStr]| {
        let out = qgates(ws.path())
            .arg("parse")
            .arg("t")
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (
            out.status.code(),
            serde_json::from_slice::<Value>(&out.stdout).ok(),
            err,
        )
    };
    let kept = log_dir.join("t.junit.xml");
    let kept_also = log_dir.join("t.also1.slow.xml");

    // Beside the kept report: the run's own copy of the second one.
    let (code, parsed, err) = parse(&[kept.as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    let parsed = parsed.unwrap();
    assert_eq!(parsed["violations"], g["violations"]);
    assert_eq!(parsed["tests"], g["tests"]);

    // Copies made elsewhere: the second one is given.
    std::fs::copy(&kept, ws.path().join("a.xml")).unwrap();
    std::fs::copy(&kept_also, ws.path().join("b.xml")).unwrap();
    let (code, parsed, err) = parse(&["a.xml".as_ref(), "--report".as_ref(), "b.xml".as_ref()]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(parsed.unwrap()["tests"], g["tests"]);

    // Not given, and not beside FILE: what is missing, and how to give it.
    let (code, _, err) = parse(&["a.xml".as_ref()]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("reports/slow.xml (parsing.also[0].output_file)")
            && err.contains(".qgates/runs/<run>/t.junit.xml")
            && err.contains("--report PATH"),
        "{err}"
    );
    std::fs::remove_file(&kept_also).unwrap();
    let (code, _, err) = parse(&[kept.as_os_str()]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains(&format!("{} does not exist", kept_also.display()))
            && err.contains("--report PATH"),
        "{err}"
    );
    let (code, _, err) = parse(&["a.xml".as_ref(), "--report".as_ref(), "gone.xml".as_ref()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("gone.xml given with --report"), "{err}");
    let (code, _, err) = parse(&[
        "a.xml".as_ref(),
        "--report".as_ref(),
        "b.xml".as_ref(),
        "--report".as_ref(),
        "b.xml".as_ref(),
    ]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("reads 1 report besides FILE") && err.contains("2 --report were given"),
        "{err}"
    );
}

#[test]
fn a_stale_report_is_removed_before_the_run() {
    // An earlier run's report, all green; this run's tool writes nothing.
    let ws = workspace("#!/bin/sh\nexit 0\n", "", "reports/junit.xml", "");
    write(
        ws.path(),
        "reports/junit.xml",
        "<testsuites><testsuite><testcase classname=\"a\" name=\"old\"/></testsuite></testsuites>",
    );
    let g = run(ws.path());
    assert_error(&g, &["wrote no report at reports/junit.xml", "exit code 0"]);
    assert!(!ws.path().join("reports/junit.xml").exists());
}

#[test]
fn each_batch_removes_and_reads_its_own_report() {
    // One file per batch; the tool writes a report for a.py only, so the second batch must not
    // read the first one's.
    let script = "#!/bin/sh\ncase \"$1\" in *a.py) cat > out.xml <<EOF\n<testsuites><testsuite><testcase classname=\"a\" name=\"$1\"><failure message=\"no\"/></testcase></testsuite></testsuites>\nEOF\n;; esac\nexit 1\n";
    let ws = workspace(script, "", "out.xml", "    max_files_per_run: 1\n");
    let yaml = std::fs::read_to_string(ws.path().join("quality.yaml")).unwrap();
    write(
        ws.path(),
        "quality.yaml",
        &yaml.replace("pass_files: false", "pass_files: true"),
    );
    write(ws.path(), "a.py", "");
    write(ws.path(), "b.py", "");
    let g = run(ws.path());
    assert_error(&g, &["wrote no report at out.xml"]);

    // Each batch writes its own `{report_dir}`: both are read and counted.
    let script = "#!/bin/sh\ncat > \"$1\" <<EOF\n<testsuites><testsuite><testcase classname=\"c\" name=\"$2\"><failure message=\"no\"/></testcase></testsuite></testsuites>\nEOF\nexit 1\n";
    let ws = workspace(
        script,
        ", \"{report_dir}/j.xml\"",
        "{report_dir}/j.xml",
        "    max_files_per_run: 1\n",
    );
    let yaml = std::fs::read_to_string(ws.path().join("quality.yaml")).unwrap();
    write(
        ws.path(),
        "quality.yaml",
        &yaml.replace("pass_files: false", "pass_files: true"),
    );
    write(ws.path(), "a.py", "");
    let g = run(ws.path());
    assert_eq!(g["status"], "failed", "{g:#}");
    assert_eq!(g["tests"]["total"], 2, "{g:#}");
    let codes: Vec<&str> = g["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["c::a.py", "c::tests/test_a.py"]);
}

#[test]
fn a_linked_output_file_is_neither_read_nor_deleted() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("junit.xml");
    let secret_report = ONE_FAILED.replace("test_bad", "secret_test");
    std::fs::write(&secret, &secret_report).unwrap();
    let intact = || {
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), secret_report);
    };
    let never_read = |g: &Value| assert!(!g.to_string().contains("secret_test"), "{g:#}");

    // A link the repository holds at the report's place: removed (the link, not its target)
    // before the run; the tool writes nothing, so there is nothing to read.
    let ws = workspace("#!/bin/sh\nexit 1\n", "", "reports/junit.xml", "");
    std::fs::create_dir(ws.path().join("reports")).unwrap();
    std::os::unix::fs::symlink(&secret, ws.path().join("reports/junit.xml")).unwrap();
    let g = run(ws.path());
    assert_error(&g, &["wrote no report at reports/junit.xml"]);
    never_read(&g);
    intact();

    // A folder link on the way: nothing is removed or read through it.
    let ws = workspace("#!/bin/sh\nexit 1\n", "", "reports/junit.xml", "");
    std::os::unix::fs::symlink(outside.path(), ws.path().join("reports")).unwrap();
    let g = run(ws.path());
    assert_error(&g, &["lies under a symbolic link (reports)"]);
    never_read(&g);
    intact();

    // A tool that puts a link there itself: refused after the run.
    let script = format!(
        "#!/bin/sh\nmkdir -p reports\nln -s '{}' reports/junit.xml\nexit 1\n",
        secret.display()
    );
    let ws = workspace(&script, "", "reports/junit.xml", "");
    let g = run(ws.path());
    assert_error(&g, &["reports/junit.xml is a symbolic link"]);
    never_read(&g);
    intact();
}

#[test]
fn a_reader_of_parsing_also_reads_its_own_report() {
    // The gate's own reader reads stdout (a text line); the one of `parsing.also` a JUnit file.
    let script = format!(
        "#!/bin/sh\necho 'src/x.py:1: lint problem'\ncat > \"$1\" <<'EOF'\n{ONE_FAILED}EOF\nexit 1\n"
    );
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "src/x.py", "x = 1\n");
    write(
        ws.path(),
        "tests/test_a.py",
        "def test_bad():\n    assert 1 == 2\n",
    );
    tool(ws.path(), "t.sh", &script);
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  t:\n    command: [\"./t.sh\", \"{report_dir}/junit.xml\"]\n    pass_files: false\n    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[^:]+):(?P<line>\\d+): (?P<message>.+)$'\n      also:\n        - strategy: junit\n          output_file: \"{report_dir}/junit.xml\"\n",
    );
    let g = run(ws.path());
    assert_eq!(g["status"], "failed", "{g:#}");
    let files: Vec<&str> = g["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["src/x.py", "tests/test_a.py"]);
    assert_eq!(g["tests"]["total"], 2);
}

#[test]
fn report_paths_and_placeholders_are_checked_where_written() {
    let cases = [
        (
            "    output_file: /tmp/junit.xml\n",
            "must stay inside the workspace",
        ),
        (
            "    output_file: ../junit.xml\n",
            "must stay inside the workspace",
        ),
        (
            "    output_file: \"{report_dir}/../x.xml\"\n",
            "must stay inside the workspace",
        ),
        (
            "    output_file: \"out/{reportdir}/x.xml\"\n",
            "uses `{reportdir}`",
        ),
        (
            "    output_file: \"out/{report_dir}/x.xml\"\n",
            "may only stand at the start",
        ),
        (
            "    command: [\"./t.sh\", \"--junitxml={repot_dir}/j.xml\"]\n",
            "the command uses `{repot_dir}`",
        ),
    ];
    for (line, says) in cases {
        let ws = tempfile::tempdir().unwrap();
        write(
            ws.path(),
            "quality.yaml",
            &format!(
                "version: 1\ngates:\n  t:\n{line}{}    parsing: {{ strategy: junit }}\n",
                if line.contains("command") {
                    ""
                } else {
                    "    command: [\"./t.sh\"]\n"
                }
            ),
        );
        let out = qgates(ws.path())
            .args(["check", "--scope", "project"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{line}: {stderr}");
        assert!(
            stderr.contains("quality.yaml:4:") && stderr.contains(says),
            "{line}: {stderr}"
        );
    }
    for (parsing, says) in [
        (
            "{ strategy: junit, output_file: x.xml }",
            "`parsing.output_file` is for the readers of `parsing.also`",
        ),
        (
            "{ strategy: exit_code, also: [{ strategy: junit, output_file: ../x.xml }] }",
            "parsing.also[0].output_file `../x.xml` must stay inside the workspace",
        ),
    ] {
        let ws = tempfile::tempdir().unwrap();
        write(
            ws.path(),
            "quality.yaml",
            &format!(
                "version: 1\ngates:\n  t:\n    command: [\"./t.sh\"]\n    parsing: {parsing}\n"
            ),
        );
        let out = qgates(ws.path())
            .args(["check", "--scope", "project"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("quality.yaml:5:") && stderr.contains(says),
            "{parsing}: {stderr}"
        );
    }
    // `${NAME}` in a shell script and literal `{{` stay as written: not placeholders.
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "a.py", "");
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  t:\n    command: [sh, -c, 'test \"${HOME}\" && echo \"{{x}}\" | grep -q \"{{x}}\"']\n    pass_files: false\n    parsing: { strategy: exit_code }\n",
    );
    let g = run(ws.path());
    assert_eq!(g["status"], "passed", "{g:#}");
}
