//! `qgates check --new-only`: each finding of an `auto` or `branch` run is compared with those of
//! the same gates at the scope's base commit (`core::novelty`), and only new ones fail. Real ruff
//! and mypy from the pinned tools, in real git repositories in temporary folders.

use crate::common;

use std::path::Path;

use common::{git, qgates, write};
use serde_json::{Value, json};

const RUFF: &str = "version: 1\ngates:\n  lint: { preset: ruff-lint }\n";

/// A repository on `main` with `files` committed (qgates' folder ignored).
fn repo(config: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "quality.yaml", config);
    for (path, content) in files {
        write(ws.path(), path, content);
    }
    write(ws.path(), ".gitignore", ".qgates/\n.mypy_cache/\n");
    git(ws.path(), &["init", "-q", "-b", "main"]);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-qm", "start"]);
    ws
}

/// `qgates check ARGS --new-only --format json`: the exit code and the report.
fn check_new_only(root: &Path, args: &[&str]) -> (i32, Value) {
    let out = qgates(root)
        .arg("check")
        .args(args)
        .args(["--new-only", "--format", "json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        panic!(
            "a JSON report: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

/// (file, line, code, new) of every finding.
fn marked(report: &Value) -> Vec<(String, u64, String, bool)> {
    let mut out: Vec<_> = report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["violations"].as_array().unwrap())
        .map(|v| {
            (
                v["file"].as_str().unwrap_or("").to_owned(),
                v["line"].as_u64().unwrap_or(0),
                v["code"].as_str().unwrap_or("").to_owned(),
                v["new"].as_bool().expect("every finding is marked"),
            )
        })
        .collect();
    out.sort();
    out
}

fn counts(report: &Value) -> (u64, u64, u64) {
    let n = &report["novelty"];
    (
        n["new"].as_u64().unwrap(),
        n["existing"].as_u64().unwrap(),
        n["fixed"].as_u64().unwrap(),
    )
}

#[test]
fn lines_inserted_above_an_old_finding_leave_it_pre_existing_and_a_new_one_fails() {
    let ws = repo(
        RUFF,
        &[("a.py", "import os\n\n\ndef f(x):\n    return x\n")],
    );
    // Lines above the old finding, and a new unused variable below it.
    write(
        ws.path(),
        "a.py",
        "\"\"\"Module.\"\"\"\n\nimport os\n\n\ndef f(x):\n    unused = 1\n    return x\n",
    );
    let (code, report) = check_new_only(ws.path(), &[]);
    assert_eq!(
        marked(&report),
        [
            ("a.py".into(), 3, "F401".into(), false),
            ("a.py".into(), 7, "F841".into(), true),
        ],
        "{report}"
    );
    assert_eq!(counts(&report), (1, 1, 0));
    assert_eq!(code, 1, "the new finding fails: {report}");
    let line = report_line(ws.path());
    assert!(
        line.starts_with("❌ 1/1 gates failed — 1 new violation (1 pre-existing; 1 auto-fixable)"),
        "{line}"
    );

    // The new finding fixed: only the old one is left, and it does not fail the run.
    write(
        ws.path(),
        "a.py",
        "\"\"\"Module.\"\"\"\n\nimport os\n\n\ndef f(x):\n    return x\n",
    );
    let (code, report) = check_new_only(ws.path(), &[]);
    assert_eq!(counts(&report), (0, 1, 0));
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["gates"][0]["status"], "passed");
}

/// The summary line of the last run, as `--format summary` prints it first.
fn report_line(root: &Path) -> String {
    let out = qgates(root)
        .args(["check", "--new-only", "--format", "summary"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_owned()
}

#[test]
fn an_old_finding_fixed_is_counted_and_a_renamed_file_keeps_its_findings() {
    let ws = repo(
        RUFF,
        &[
            ("a.py", "import os\nimport sys\n\nx = 1\n"),
            ("b.py", "import json\n"),
        ],
    );
    write(ws.path(), "a.py", "import os\n\nx = 2\n");
    git(ws.path(), &["mv", "b.py", "c.py"]);
    write(ws.path(), "c.py", "import json\n\ny = 1\n");
    let (code, report) = check_new_only(ws.path(), &[]);
    assert_eq!(
        marked(&report),
        [
            ("a.py".into(), 1, "F401".into(), false),
            ("c.py".into(), 1, "F401".into(), false),
        ],
        "{report}"
    );
    assert_eq!(counts(&report), (0, 2, 1), "{report}");
    // The fixed one, as it was at the reference.
    let fixed = &report["novelty"]["fixed_violations"];
    assert_eq!(fixed.as_array().map(Vec::len), Some(1), "{report}");
    assert_eq!(
        (&fixed[0]["file"], &fixed[0]["line"], &fixed[0]["message"]),
        (
            &json!("a.py"),
            &json!(2),
            &json!("`sys` imported but unused")
        )
    );
    assert_eq!(code, 0);

    // A new finding beside them: the line counts each part.
    write(ws.path(), "a.py", "import os\nimport re\n\nx = 2\n");
    let line = report_line(ws.path());
    assert!(
        line.starts_with(
            "❌ 1/1 gates failed — 1 new violation (2 pre-existing, 1 fixed; 3 auto-fixable)"
        ),
        "{line}"
    );
}

#[test]
fn two_identical_findings_on_identical_lines_one_removed_is_one_fixed() {
    let ws = repo(RUFF, &[("a.py", "print(missing)\nprint(missing)\n")]);
    write(ws.path(), "a.py", "print(missing)\n");
    let (code, report) = check_new_only(ws.path(), &[]);
    assert_eq!(counts(&report), (0, 1, 1), "{report}");
    assert_eq!(code, 0);
}

/// A changed signature breaks a caller nobody touched: mypy's error there is new, since mypy
/// over the reference found none. A gate over the whole project (no file arguments) sees it.
#[test]
fn a_mypy_error_on_an_unchanged_caller_is_new() {
    let config = "version: 1\ngates:\n  types:\n    preset: mypy\n    pass_files: false\n    command: [mypy, --no-native-parser, --output, json, --no-error-summary, --hide-error-context, .]\n";
    let ws = repo(
        config,
        &[
            ("lib.py", "def size(x: int) -> int:\n    return x\n"),
            (
                "app.py",
                "from lib import size\n\nbad: str = 1\n\n\nprint(size(3))\n",
            ),
        ],
    );
    write(
        ws.path(),
        "lib.py",
        "def size(x: str) -> int:\n    return len(x)\n",
    );
    let (code, report) = check_new_only(ws.path(), &[]);
    let found = marked(&report);
    assert!(
        found.contains(&("app.py".into(), 3, "assignment".into(), false)),
        "the old error stays pre-existing: {found:?}"
    );
    assert!(
        found.contains(&("app.py".into(), 6, "arg-type".into(), true)),
        "the caller's error is new: {found:?}"
    );
    assert_eq!(counts(&report).0, 1, "{report}");
    assert_eq!(code, 1);
}

/// A message that names a line keeps its identity when the line moves (mypy: "already defined
/// on line N"), and a branch that has never been green advances its baseline as soon as a change
/// adds nothing new.
#[test]
fn a_message_naming_a_line_stays_pre_existing_and_a_never_green_branch_advances() {
    let config = "version: 1\ngates:\n  types:\n    preset: mypy\n    pass_files: false\n    command: [mypy, --no-native-parser, --output, json, --no-error-summary, --hide-error-context, .]\n";
    let ws = repo(
        config,
        &[("a.py", "def f() -> None: ...\n\n\ndef f() -> None: ...\n")],
    );
    // Three lines above both definitions: the message now names line 4, not line 1.
    write(
        ws.path(),
        "a.py",
        "\"\"\"Docs.\"\"\"\n\n\ndef f() -> None: ...\n\n\ndef f() -> None: ...\n",
    );
    let (code, report) = check_new_only(ws.path(), &[]);
    assert_eq!(
        marked(&report),
        [("a.py".into(), 7, "no-redef".into(), false)],
        "{report}"
    );
    let message = report["gates"][0]["violations"][0]["message"]
        .as_str()
        .unwrap();
    assert!(message.contains("line 4"), "{message}");
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        report["scope"]["note"],
        "no green run on this branch yet: checked the changes since the parent branch"
    );
    // That run was green: the baseline is HEAD now, and the next run starts from it.
    let (_, next) = check_new_only(ws.path(), &[]);
    assert!(next["scope"].get("note").is_none(), "{next}");
    assert_eq!(
        next["scope"]["baseline_sha"], next["novelty"]["reference"],
        "{next}"
    );
}

/// Committed on a branch: the `branch` scope compares with the merge-base.
#[test]
fn committed_changes_on_a_branch_compare_with_the_merge_base() {
    let ws = repo(RUFF, &[("a.py", "import os\n")]);
    git(ws.path(), &["switch", "-q", "-c", "topic"]);
    write(ws.path(), "a.py", "import os\nimport sys\n");
    git(ws.path(), &["commit", "-qam", "more"]);
    let (code, report) = check_new_only(ws.path(), &["--scope", "branch"]);
    assert_eq!(
        marked(&report),
        [
            ("a.py".into(), 1, "F401".into(), false),
            ("a.py".into(), 2, "F401".into(), true),
        ],
        "{report}"
    );
    assert_eq!(code, 1);
}

/// `new_only: true` in quality.yaml is the default `--new-only`; the text lists only the new
/// finding unless `--show-existing`, and SARIF says each result's `baselineState`, the fixed
/// finding's `absent`.
#[test]
fn the_outputs_separate_new_from_pre_existing_findings() {
    let config = "version: 1\nnew_only: true\ngates:\n  lint: { preset: ruff-lint }\n";
    let ws = repo(config, &[("a.py", "import json\nimport os\n")]);
    write(ws.path(), "a.py", "import os\nimport sys\n");
    let run = |args: &[&str]| {
        let out = qgates(ws.path()).arg("check").args(args).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, text) = run(&["--format", "text"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("`sys` imported but unused"), "{text}");
    assert!(!text.contains("`os` imported but unused"), "{text}");
    assert!(
        text.contains("1 pre-existing violation not listed (--show-existing lists them)."),
        "{text}"
    );
    let (_, text) = run(&["--format", "text", "--show-existing"]);
    assert!(text.contains("`os` imported but unused"), "{text}");
    assert!(!text.contains("not listed"), "{text}");

    let (_, markdown) = run(&["--format", "markdown"]);
    assert!(markdown.contains("`sys` imported but unused"), "{markdown}");
    assert!(!markdown.contains("`os` imported but unused"), "{markdown}");
    assert!(
        markdown.contains(
            "1 pre-existing violation not listed: they were there at the reference commit."
        ),
        "{markdown}"
    );

    let (_, sarif) = run(&["--format", "sarif"]);
    let sarif: Value = serde_json::from_str(&sarif).unwrap();
    let mut states: Vec<(String, String)> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["message"]["text"].as_str().unwrap().to_owned(),
                r["baselineState"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    states.sort();
    assert_eq!(
        states,
        [
            ("`json` imported but unused".into(), "absent".into()),
            ("`os` imported but unused".into(), "unchanged".into()),
            ("`sys` imported but unused".into(), "new".into()),
        ]
    );

    // A scope that is not made of changes has no reference: every finding counts, and the run
    // says so.
    let (code, text) = run(&["--scope", "project", "--format", "json"]);
    assert_eq!(code, 1);
    assert!(
        text.contains("only `auto` and `branch` runs are compared with a reference"),
        "{text}"
    );

    // Without the setting, nothing is compared: the old finding fails as before.
    write(ws.path(), "quality.yaml", RUFF);
    let (code, text) = run(&["--format", "json"]);
    assert_eq!(code, 1);
    assert!(!text.contains("\"new\""), "{text}");
}

/// The reference runs what the working tree runs: a repository script the change edited is run
/// in its current version there too (it is what was trusted), so its findings in old code are
/// pre-existing.
#[test]
fn the_reference_runs_the_working_trees_scripts() {
    let config = "version: 1\ngates:\n  lint:\n    command: [tools/lint]\n    file_types: [.py]\n    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[^:]+):(?P<line>\\d+): (?P<code>\\w+) (?P<message>.+)$'\n";
    let ws = repo(config, &[("a.py", "x = 1\n")]);
    common::tool(ws.path(), "tools/lint", "#!/bin/sh\nexit 0\n");
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-qm", "a quiet linter"]);
    // The linter now finds something on every file's first line; a.py is edited below it.
    common::tool(
        ws.path(),
        "tools/lint",
        "#!/bin/sh\nfor f in \"$@\"; do echo \"$f:1: X1 first line\"; done\nexit 1\n",
    );
    write(ws.path(), "a.py", "x = 1\ny = 2\n");
    let (code, report) = check_new_only(ws.path(), &[]);
    assert_eq!(
        marked(&report),
        [("a.py".into(), 1, "X1".into(), false)],
        "{report}"
    );
    assert_eq!(code, 0, "{report}");
}

/// The reference's results are cached apart, by content: a second run over the same change
/// starts no tool, neither in the working tree nor for the reference, and makes no checkout.
#[test]
fn a_second_run_over_the_same_change_starts_no_tool() {
    let config = "version: 1\ngates:\n  lint:\n    command: [tools/lint]\n    file_types: [.py]\n    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[^:]+):(?P<line>\\d+): (?P<code>\\w+) (?P<message>.+)$'\n";
    let log = tempfile::tempdir().unwrap();
    let runs = log.path().join("runs.log");
    let script = format!(
        "#!/bin/sh\necho run >> '{}'\nfor f in \"$@\"; do echo \"$f:1: X1 first line\"; done\nexit 1\n",
        runs.display()
    );
    let ws = repo(config, &[("a.py", "x = 1\n")]);
    common::tool(ws.path(), "tools/lint", &script);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-qm", "the linter"]);
    write(ws.path(), "a.py", "x = 1\ny = 2\n");
    let started = || {
        std::fs::read_to_string(&runs)
            .map(|s| s.lines().count())
            .unwrap_or(0)
    };
    let (_, first) = check_new_only(ws.path(), &[]);
    assert_eq!(started(), 2, "the working tree and the reference: {first}");
    // No checkout can be made now (no temporary folder): the reference comes from the cache.
    let out = qgates(ws.path())
        .args(["check", "--new-only", "--format", "json"])
        .env("TMPDIR", ws.path().join("no-such-folder"))
        .output()
        .unwrap();
    let second: Value = serde_json::from_slice(&out.stdout).unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert_eq!(started(), 2, "nothing ran again: {second}");
    assert!(second.get("warnings").is_none(), "{second}");
    assert_eq!(counts(&second), (0, 1, 0), "{second}");
    assert_eq!(code, 0);
}

/// A gate over the whole workspace (no file arguments: mypy as most projects run it) has its
/// reference result cached by the reference commit: a later run, after another edit, runs it in
/// the working tree only.
#[test]
fn a_whole_workspace_gates_reference_is_cached_by_commit() {
    let config = "version: 1\ngates:\n  whole:\n    command: [tools/whole]\n    pass_files: false\n    file_types: [.py]\n    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[^:]+):(?P<line>\\d+): (?P<code>\\w+) (?P<message>.+)$'\n";
    let log = tempfile::tempdir().unwrap();
    let runs = log.path().join("runs.log");
    // Flags the first line of every .py file it finds, as a whole-project checker would.
    let script = format!(
        "#!/bin/sh\npwd >> '{}'\nfor f in *.py; do echo \"$f:1: W1 first line\"; done\nexit 1\n",
        runs.display()
    );
    let ws = repo(config, &[("a.py", "x = 1\n")]);
    common::tool(ws.path(), "tools/whole", &script);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-qm", "the checker"]);
    let here = ws.path().canonicalize().unwrap();
    let in_checkouts = || {
        std::fs::read_to_string(&runs)
            .unwrap_or_default()
            .lines()
            .filter(|d| Path::new(d).canonicalize().ok().as_deref() != Some(here.as_path()))
            .count()
    };
    write(ws.path(), "a.py", "x = 1\ny = 2\n");
    let (code, first) = check_new_only(ws.path(), &[]);
    assert_eq!(in_checkouts(), 1, "{first}");
    assert_eq!(counts(&first), (0, 1, 0), "{first}");
    assert_eq!(code, 0);
    // Another edit and a new file: the working tree's result changes, the reference's not.
    write(ws.path(), "a.py", "x = 1\ny = 3\n");
    write(ws.path(), "b.py", "z = 1\n");
    let (code, second) = check_new_only(ws.path(), &[]);
    assert_eq!(
        in_checkouts(),
        1,
        "the reference came from the cache: {second}"
    );
    assert_eq!(
        marked(&second),
        [
            ("a.py".into(), 1, "W1".into(), false),
            ("b.py".into(), 1, "W1".into(), true)
        ],
        "{second}"
    );
    assert_eq!(code, 1);
}

/// Before the first commit there is no reference: every finding is new.
#[test]
fn before_the_first_commit_every_finding_is_new() {
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "quality.yaml", RUFF);
    write(ws.path(), "a.py", "import os\n");
    write(ws.path(), ".gitignore", ".qgates/\n");
    git(ws.path(), &["init", "-q", "-b", "main"]);
    let (code, report) = check_new_only(ws.path(), &[]);
    assert_eq!(
        marked(&report),
        [("a.py".into(), 1, "F401".into(), true)],
        "{report}"
    );
    assert_eq!(counts(&report), (1, 0, 0));
    assert_eq!(code, 1);
}
