//! `qgates check --shard i/n` and `qgates merge`: a CI matrix's shards check each file once, the
//! same files on every machine, and their merged reports are the report of one machine running
//! the whole scope. Real binary, real ruff and mypy from `.venv`, real git repositories.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{git, qgates, write};
use proptest::prelude::*;
use qgates::core::engine::shard::{Shard, part};
use serde_json::Value;

/// ruff over each file; a recorder that writes the files it is given to `$SHARD_TEST_RECORD`;
/// mypy over the whole project at once (no file arguments); a deps gate that notes each run in
/// `$SHARD_TEST_DEPS`.
const CONFIG: &str = r#"version: 1
gates:
  install:
    kind: deps
    command: [sh, -c, 'echo ran >> "$SHARD_TEST_DEPS"']
    pass_files: false
    parsing: { strategy: exit_code }
  ruff_lint: { preset: ruff-lint }
  seen:
    command: [sh, -c, 'printf "%s\n" "$@" >> "$SHARD_TEST_RECORD"', seen]
    files: ["*.py"]
    parsing: { strategy: exit_code }
  types:
    preset: mypy
    pass_files: false
    command: [mypy, --no-native-parser, --output, json, --no-error-summary, --hide-error-context, .]
"#;

/// Python modules in the generated project.
const MODULES: usize = 200;
/// Its files: the modules, one `__init__.py` per package, quality.yaml.
const FILES: usize = MODULES + PACKAGES + 1;
const PACKAGES: usize = 5;

/// A committed project of `MODULES` modules of sizes from a few bytes to a few KiB; every ninth
/// imports `os` unused (ruff F401), every 23rd assigns a str to an int (a mypy error).
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "quality.yaml", CONFIG);
    for p in 0..PACKAGES {
        write(root, &format!("pkg{p}/__init__.py"), "");
    }
    for i in 0..MODULES {
        let mut text = format!("\"\"\"Module {i}.\"\"\"\n\n");
        if i % 9 == 0 {
            text.push_str("import os\n\n");
        }
        text.push_str(&format!("VALUE_{i} = {i}\n"));
        if i % 23 == 0 {
            text.push_str("WRONG: int = \"text\"\n");
        }
        for line in 0..(i * 37) % 50 {
            text.push_str(&format!("# {}\n", "x".repeat((i * 13 + line) % 70)));
        }
        write(root, &format!("pkg{}/mod{i:03}.py", i % PACKAGES), &text);
    }
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "project"]);
    dir
}

/// One `qgates check --scope project --no-cache ARGS --format FORMAT` in `root`, its tools'
/// records written under `records` as `NAME.files` and `NAME.deps`: exit code and stdout.
fn check(root: &Path, records: &Path, name: &str, args: &[&str], format: &str) -> (i32, String) {
    let out = qgates(root)
        .env("SHARD_TEST_RECORD", records.join(format!("{name}.files")))
        .env("SHARD_TEST_DEPS", records.join(format!("{name}.deps")))
        .args(["check", "--scope", "project", "--no-cache"])
        .args(args)
        .args(["--format", format])
        .output()
        .expect("run qgates");
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    assert!(
        !stdout.is_empty(),
        "no report: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().expect("exit code"), stdout)
}

/// The files the recorder gate was given in a run.
fn recorded(records: &Path, name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(records.join(format!("{name}.files"))).unwrap_or_default();
    let mut files: Vec<String> = text.lines().map(str::to_owned).collect();
    files.sort();
    files
}

/// `qgates merge FILES... ARGS`: exit code, stdout, stderr.
fn merge(dir: &Path, files: &[PathBuf], args: &[&str]) -> (i32, String, String) {
    let out = qgates(dir)
        .arg("merge")
        .args(files)
        .args(args)
        .output()
        .expect("run qgates merge");
    (
        out.status.code().expect("exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A JSON report with only what two runs of the same check legitimately differ in left out:
/// how long things took (`timings`, each gate's `duration_ms`) and where the logs went
/// (`log_dir` and each gate's `log`: run folders are named by time and process id, and a merged
/// report has no folder of its own). Nothing else is touched, the order of violations included.
fn without_timings_and_logs(report: &str) -> Value {
    let mut r: Value = serde_json::from_str(report).expect("a JSON report");
    let obj = r.as_object_mut().expect("an object");
    obj.remove("timings");
    obj.remove("log_dir");
    for g in obj["gates"].as_array_mut().expect("gates") {
        let g = g.as_object_mut().expect("a gate");
        g.remove("duration_ms");
        g.remove("log");
    }
    r
}

/// SARIF with the same left out: it carries no timing, and log paths only in the notification
/// of a gate that could not run.
fn sarif_without_logs(sarif: &str) -> Value {
    let mut s: Value = serde_json::from_str(sarif).expect("SARIF is JSON");
    for run in s["runs"].as_array_mut().expect("runs") {
        for inv in run["invocations"].as_array_mut().expect("invocations") {
            if let Some(notes) = inv
                .get_mut("toolExecutionNotifications")
                .and_then(Value::as_array_mut)
            {
                for n in notes {
                    let props = n["properties"].as_object_mut().expect("properties");
                    props.remove("stdout");
                    props.remove("stderr");
                }
            }
        }
    }
    s
}

#[test]
fn four_shards_check_each_file_once_and_merge_into_the_unsharded_report() {
    let dir = project();
    let root = dir.path();
    let out = tempfile::tempdir().expect("tempdir");
    let out = out.path();

    let (whole_code, whole_json) = check(root, out, "whole", &[], "json");
    let (_, whole_sarif) = check(root, out, "whole-sarif", &[], "sarif");
    let whole: Value = serde_json::from_str(&whole_json).expect("JSON");
    assert_eq!(whole_code, 1, "ruff and mypy find problems: {whole_json}");
    assert_eq!(whole["scope"]["files_in_scope"], FILES);
    assert_eq!(common::gate(&whole, "types")["status"], "failed");
    assert!(
        whole.get("shard").is_none(),
        "an unsharded run has no shard"
    );
    let all = recorded(out, "whole");
    assert_eq!(all.len(), MODULES + PACKAGES);

    let mut reports = Vec::new();
    let mut seen: Vec<Vec<String>> = Vec::new();
    for i in 1..=4 {
        let name = format!("shard-{i}");
        let (_, json) = check(root, out, &name, &["--shard", &format!("{i}/4")], "json");
        let path = out.join(format!("{name}.json"));
        std::fs::write(&path, &json).expect("write the shard's report");
        reports.push(path);
        let report: Value = serde_json::from_str(&json).expect("JSON");
        let shard = &report["shard"];
        assert_eq!((&shard["index"], &shard["count"]), (&i.into(), &4.into()));
        assert_eq!(shard["files_total"], FILES);
        assert_eq!(shard["commit"], git(root, &["rev-parse", "HEAD"]).as_str());
        assert!(shard["config_hash"].as_str().is_some_and(|h| !h.is_empty()));
        // Within 10 % of a quarter, of the scope's files and of the files a gate was given.
        let quarter = FILES as f64 / 4.0;
        let in_scope = report["scope"]["files_in_scope"].as_u64().unwrap() as f64;
        assert!(
            (in_scope - quarter).abs() <= quarter / 10.0,
            "shard {i}: {in_scope} files"
        );
        let given = recorded(out, &name);
        let quarter = all.len() as f64 / 4.0;
        assert!(
            (given.len() as f64 - quarter).abs() <= quarter / 10.0,
            "shard {i} checked {} of {} Python files",
            given.len(),
            all.len()
        );
        seen.push(given);
        // The whole-project gate runs in shard 1 and says so elsewhere; the deps gate installs
        // on every machine.
        let types = common::gate(&report, "types");
        if i == 1 {
            assert_eq!(types["status"], "failed", "{types}");
        } else {
            assert_eq!(types["status"], "skipped");
            assert!(
                types["skip_reason"]
                    .as_str()
                    .is_some_and(|r| r.starts_with("runs in shard 1 of 4")),
                "{types}"
            );
        }
        let deps = std::fs::read_to_string(out.join(format!("{name}.deps"))).unwrap_or_default();
        assert_eq!(deps, "ran\n", "shard {i} installs what its gates need");
    }
    // Each file in exactly one shard, and together the whole scope.
    let mut union = BTreeSet::new();
    for files in &seen {
        for f in files {
            assert!(union.insert(f.clone()), "{f} is in two shards");
        }
    }
    assert_eq!(union.into_iter().collect::<Vec<_>>(), all);

    // In any order, the shards make the unsharded report.
    let shuffled = [&reports[2], &reports[0], &reports[3], &reports[1]].map(|p| p.to_path_buf());
    let (code, merged_json, stderr) = merge(out, &shuffled, &["--format", "json"]);
    assert_eq!(code, whole_code, "{stderr}");
    assert_eq!(
        without_timings_and_logs(&merged_json),
        without_timings_and_logs(&whole_json)
    );
    let (code, merged_sarif, _) = merge(out, &reports, &["--format", "sarif"]);
    assert_eq!(code, whole_code);
    assert_eq!(
        sarif_without_logs(&merged_sarif),
        sarif_without_logs(&whole_sarif)
    );

    // --out writes the format asked for and prints the summary line.
    let file = out.join("merged.json");
    let (code, stdout, _) = merge(
        out,
        &reports,
        &["--format", "json", "--out", file.to_str().unwrap()],
    );
    assert_eq!(code, whole_code);
    assert!(stdout.starts_with("❌ 2/4 gates failed"), "{stdout}");
    let written = std::fs::read_to_string(&file).expect("the merged report");
    assert_eq!(
        without_timings_and_logs(&written),
        without_timings_and_logs(&whole_json)
    );
}

#[test]
fn a_shard_gets_the_same_files_on_every_machine() {
    let dir = project();
    let root = dir.path();
    let out = tempfile::tempdir().expect("tempdir");
    let out = out.path();
    let clone = tempfile::tempdir().expect("tempdir");
    let other = clone.path().join("elsewhere");
    git(
        clone.path(),
        &["clone", "-q", root.to_str().unwrap(), "elsewhere"],
    );

    check(root, out, "first", &["--shard", "2/4"], "json");
    check(root, out, "again", &["--shard", "2/4"], "json");
    check(&other, out, "clone", &["--shard", "2/4"], "json");
    let first = recorded(out, "first");
    assert!(first.len() > 40, "{first:?}");
    assert_eq!(recorded(out, "again"), first);
    assert_eq!(recorded(out, "clone"), first, "a clone at another path");
}

#[test]
fn bad_shard_specs_say_the_rule() {
    let dir = tempfile::tempdir().expect("tempdir");
    for spec in ["5/4", "0/3", "1/0", "a/b", "3", "-1/2", ""] {
        let out = qgates(dir.path())
            .args(["check", &format!("--shard={spec}")])
            .output()
            .expect("run qgates");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{spec}: {stderr}");
        assert!(
            stderr.contains("--shard takes i/n with 1 ≤ i ≤ n, e.g. 2/4"),
            "{spec}: {stderr}"
        );
    }
}

#[test]
fn merge_refuses_what_is_not_one_run() {
    let dir = project();
    let root = dir.path();
    let out = tempfile::tempdir().expect("tempdir");
    let out = out.path();
    let shard = |name: &str, spec: &str| {
        let (_, json) = check(
            root,
            out,
            name,
            &["--shard", spec, "--gates", "ruff_lint"],
            "json",
        );
        let path = out.join(format!("{name}.json"));
        std::fs::write(&path, json).expect("write");
        path
    };
    let [one, two, three] = ["1/3", "2/3", "3/3"].map(|s| shard(&format!("s{}", &s[..1]), s));
    let refused = |files: &[PathBuf], expected: &[&str]| {
        let (code, stdout, stderr) = merge(out, files, &[]);
        assert_eq!(code, 2, "{stderr}");
        assert_eq!(stdout, "", "nothing is printed but the error");
        for part in expected {
            assert!(stderr.contains(part), "`{part}` not in: {stderr}");
        }
    };
    let name = |p: &PathBuf| p.display().to_string();

    refused(&[one.clone(), three.clone()], &["shard 2 of 3 is missing"]);
    refused(
        &[one.clone(), two.clone(), two.clone(), three.clone()],
        &["shard 2 of 3 is given twice", &name(&two)],
    );

    // Another configuration: the same commit, quality.yaml edited.
    let yaml = root.join("quality.yaml");
    std::fs::write(&yaml, format!("# edited\n{CONFIG}")).unwrap();
    let edited = shard("edited", "2/3");
    refused(
        &[one.clone(), edited.clone(), three.clone()],
        &["the configuration hash is", &name(&one), &name(&edited)],
    );
    // Another commit, the same configuration.
    git(root, &["checkout", "-q", "quality.yaml"]);
    git(root, &["commit", "-q", "--allow-empty", "-m", "later"]);
    let later = shard("later", "3/3");
    refused(
        &[one.clone(), two.clone(), later.clone()],
        &["the commit is", &name(&one), &name(&later)],
    );

    let garbage = out.join("garbage.json");
    std::fs::write(&garbage, "not a report\n").unwrap();
    refused(
        &[one.clone(), garbage.clone()],
        &[&name(&garbage), "is not JSON"],
    );
    let other_json = out.join("other.json");
    std::fs::write(&other_json, r#"{"overall_pass": true}"#).unwrap();
    refused(
        &[one.clone(), other_json.clone()],
        &[&name(&other_json), "is not a qgates report", "summary"],
    );
    let (_, unsharded) = check(root, out, "unsharded", &["--gates", "ruff_lint"], "json");
    let unsharded_path = out.join("unsharded.json");
    std::fs::write(&unsharded_path, unsharded).unwrap();
    refused(
        &[one.clone(), unsharded_path.clone()],
        &[&name(&unsharded_path), "is not the report of a shard"],
    );
    refused(
        &[out.join("absent.json")],
        &["cannot read the report", "absent.json"],
    );
}

#[test]
fn a_sharded_run_leaves_the_baseline_alone() {
    let dir = common::workspace(&[
        (
            "quality.yaml",
            "version: 1\ngates:\n  ruff_lint: { preset: ruff-lint }\n",
        ),
        ("a.py", "A = 1\n"),
        ("b.py", "B = 2\n"),
    ]);
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "green"]);
    let state = root.join(".qgates/state.json");
    let baseline = || {
        std::fs::read_to_string(&state)
            .ok()
            .and_then(|s| serde_json::from_str::<Value>(&s).ok())
            .map(|s| s["branches"]["main"]["baseline_sha"].clone())
            .unwrap_or(Value::Null)
    };
    for scope in ["auto", "branch"] {
        for i in ["1/2", "2/2"] {
            let out = qgates(root)
                .args(["check", "--scope", scope, "--shard", i, "--format", "json"])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "a green shard");
            assert_eq!(baseline(), Value::Null, "{scope} {i} recorded a baseline");
        }
    }
    // The same run unsharded records it: the check above can see a baseline.
    let out = qgates(root)
        .args(["check", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(baseline(), git(root, &["rev-parse", "HEAD"]).as_str());
}

proptest! {
    /// Each machine computes its own shard from the scope's files (listed in any order): the
    /// shards never overlap, leave no file out, and their counts differ by at most one.
    #[test]
    fn shards_are_disjoint_cover_everything_and_even_in_count(
        sizes in proptest::collection::vec(0u64..5_000, 0..300),
        count in 1usize..=16,
        rotate in 0usize..300,
    ) {
        let names: Vec<String> = (0..sizes.len()).map(|i| format!("src/f{i}.py")).collect();
        let files: Vec<(&str, u64)> =
            names.iter().map(String::as_str).zip(sizes.iter().copied()).collect();
        let mut taken = BTreeSet::new();
        let mut counts = Vec::new();
        for index in 1..=count {
            let mut listed = files.clone();
            let n = listed.len().max(1);
            listed.rotate_left((rotate * index) % n);
            let mine = part(&listed, Shard { index, count });
            counts.push(mine.len());
            for f in mine {
                prop_assert!(taken.insert(f), "{} is in two shards", f);
            }
        }
        prop_assert_eq!(taken.len(), files.len(), "every file is in a shard");
        let (min, max) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        prop_assert!(max - min <= 1, "{:?}", counts);
    }
}
