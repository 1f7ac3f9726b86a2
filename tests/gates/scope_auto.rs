//! The auto and branch scopes and the self-advancing baseline, on real git repositories.

use crate::common;

use common::{check_json, gate, git, qgates, tool, workspace, write};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Flags `FILE:1:1: E1 bad` for every argument file containing "BAD".
const LINTER: &str = "#!/bin/sh\nfound=0\nfor f in \"$@\"; do\n  if grep -q BAD \"$f\"; then echo \"$f:1:1: E1 bad\"; found=1; fi\ndone\nexit $found\n";

fn gate_yaml(id: &str, extra: &str) -> String {
    format!(
        "  {id}:\n    command: [\"./lint.sh\"]\n    file_types: [\".py\"]\n    cache: none\n{extra}    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[^:\\n]+):(?P<line>\\d+):(?P<column>\\d+): (?P<code>E\\d+) (?P<message>.+)$'\n"
    )
}

fn repo(files: &[(&str, &str)], config: &str) -> tempfile::TempDir {
    let ws = workspace(files);
    tool(ws.path(), "lint.sh", LINTER);
    write(ws.path(), "quality.yaml", config);
    write(ws.path(), ".gitignore", ".qgates/\n");
    git(ws.path(), &["init", "-q", "-b", "main"]);
    git(ws.path(), &["config", "user.email", "t@example.com"]);
    git(ws.path(), &["config", "user.name", "T"]);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-qm", "A"]);
    ws
}

fn checked(report: &Value) -> Vec<String> {
    let mut files: Vec<String> = report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["violations"].as_array().cloned().unwrap_or_default())
        .filter_map(|v| v["file"].as_str().map(str::to_string))
        .collect();
    files.dedup();
    files
}

fn state(root: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root.join(".qgates/state.json")).unwrap())
        .unwrap()
}

#[test]
fn the_baseline_narrows_failures_and_advances_when_green() {
    let cfg = format!("version: 1\ngates:\n{}", gate_yaml("lint", ""));
    let ws = repo(
        &[("a.py", "ok\n"), ("b.py", "ok\n"), ("c.py", "ok\n")],
        &cfg,
    );
    let root = ws.path();
    let a = git(root, &["rev-parse", "HEAD"]);

    // First run: no baseline yet, nothing changed on main: green, baseline = A.
    let (code, r) = check_json(root, &[]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["scope"]["mode"], "auto");
    assert_eq!(r["scope"]["files_in_scope"], 0);
    assert_eq!(state(root)["branches"]["main"]["baseline_sha"], a.as_str());

    // a.py breaks in commit B: only a.py is checked, it fails, the baseline stays at A.
    write(root, "a.py", "BAD\n");
    git(root, &["commit", "-qam", "B"]);
    let (code, r) = check_json(root, &[]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["scope"]["files_in_scope"], 1);
    assert_eq!(r["scope"]["baseline_sha"], a.as_str());
    assert_eq!(
        state(root)["branches"]["main"]["failed_files"],
        serde_json::json!(["a.py"])
    );

    // Fix a.py (back to its content at A) and edit b.py: the scope is {a.py, b.py}; c.py is not
    // checked again. All green: the baseline moves to HEAD and the failures are forgotten.
    write(root, "a.py", "ok\n");
    write(root, "b.py", "ok, edited\n");
    let (code, r) = check_json(root, &[]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["scope"]["files_in_scope"], 2);
    assert_eq!(gate(&r, "lint")["files_checked"], 2);
    let head = git(root, &["rev-parse", "HEAD"]);
    assert_eq!(
        state(root)["branches"]["main"]["baseline_sha"],
        head.as_str()
    );
    assert_eq!(
        state(root)["branches"]["main"]["failed_files"],
        serde_json::json!([])
    );
    assert_eq!(r["scope"]["baseline_sha"], head.as_str());
}

#[test]
fn untracked_files_count_and_ignored_ones_do_not() {
    let cfg = format!("version: 1\ngates:\n{}", gate_yaml("lint", ""));
    let ws = repo(&[("a.py", "ok\n")], &cfg);
    let root = ws.path();
    check_json(root, &[]);
    write(root, "new.py", "BAD\n");
    write(root, "build/gen.py", "BAD\n");
    write(root, ".gitignore", ".qgates/\nbuild/\n");
    let (code, r) = check_json(root, &[]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(checked(&r), ["new.py"]);
}

#[test]
fn allow_fail_findings_never_hold_the_baseline_back() {
    let cfg = format!(
        "version: 1\ngates:\n{}",
        gate_yaml("soft", "    allow_fail: true\n")
    );
    let ws = repo(&[("a.py", "ok\n")], &cfg);
    let root = ws.path();
    check_json(root, &[]);
    write(root, "a.py", "BAD\n");
    git(root, &["commit", "-qam", "B"]);
    let (code, r) = check_json(root, &[]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(gate(&r, "soft")["status"], "failed");
    let head = git(root, &["rev-parse", "HEAD"]);
    assert_eq!(
        state(root)["branches"]["main"]["baseline_sha"],
        head.as_str()
    );
    assert_eq!(
        state(root)["branches"]["main"]["failed_files"],
        serde_json::json!([])
    );
}

#[test]
fn no_state_leaves_the_state_untouched_and_project_runs_do_not_move_it() {
    let cfg = format!("version: 1\ngates:\n{}", gate_yaml("lint", ""));
    let ws = repo(&[("a.py", "ok\n")], &cfg);
    let root = ws.path();
    check_json(root, &["--no-state"]);
    assert!(!root.join(".qgates/state.json").exists());
    check_json(root, &["--scope", "project"]);
    assert!(!root.join(".qgates/state.json").exists());
    check_json(root, &[]);
    let before = std::fs::read_to_string(root.join(".qgates/state.json")).unwrap();
    write(root, "a.py", "BAD\n");
    git(root, &["commit", "-qam", "B"]);
    check_json(root, &["--no-state"]);
    check_json(root, &["--scope", "project"]);
    assert_eq!(
        std::fs::read_to_string(root.join(".qgates/state.json")).unwrap(),
        before
    );
}

#[test]
fn a_baseline_rebased_away_falls_back_to_the_branch_with_a_note() {
    let cfg = format!("version: 1\ngates:\n{}", gate_yaml("lint", ""));
    let ws = repo(&[("a.py", "ok\n")], &cfg);
    let root = ws.path();
    git(root, &["checkout", "-qb", "feature"]);
    write(root, "b.py", "ok\n");
    git(root, &["add", "b.py"]);
    git(root, &["commit", "-qm", "B"]);
    check_json(root, &[]);
    let gone = git(root, &["rev-parse", "HEAD"]);
    assert_eq!(
        state(root)["branches"]["feature"]["baseline_sha"],
        gone.as_str()
    );
    git(root, &["reset", "-q", "--hard", "HEAD~1"]);
    write(root, "c.py", "BAD\n");
    git(root, &["add", "c.py"]);
    git(root, &["commit", "-qm", "C"]);
    let (code, r) = check_json(root, &[]);
    assert_eq!(code, 1, "{r}");
    let note = r["scope"]["note"].as_str().unwrap();
    assert!(
        note.contains("no longer in this branch's history"),
        "{note}"
    );
    assert_eq!(checked(&r), ["c.py"]);
}

#[test]
fn branch_scope_checks_changes_since_the_parent_branch() {
    let cfg = format!("version: 1\ngates:\n{}", gate_yaml("lint", ""));
    let ws = repo(&[("a.py", "BAD\n")], &cfg);
    let root = ws.path();
    git(root, &["checkout", "-qb", "feature"]);
    write(root, "b.py", "BAD\n");
    git(root, &["add", "b.py"]);
    git(root, &["commit", "-qm", "B"]);
    write(root, "c.py", "BAD\n");
    let (code, r) = check_json(root, &["--scope", "branch"]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["scope"]["mode"], "branch");
    assert_eq!(checked(&r), ["b.py", "c.py"]);
    assert!(r["scope"]["note"].as_str().unwrap().contains("main"), "{r}");
}

#[test]
fn a_folder_that_is_not_a_repository_checks_the_project_with_a_note() {
    let cfg = format!("version: 1\ngates:\n{}", gate_yaml("lint", ""));
    let ws = workspace(&[("a.py", "BAD\n"), ("quality.yaml", &cfg)]);
    tool(ws.path(), "lint.sh", LINTER);
    let (code, r) = check_json(ws.path(), &[]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["scope"]["mode"], "project");
    assert!(
        r["scope"]["note"]
            .as_str()
            .unwrap()
            .contains("not a git repository"),
        "{r}"
    );
}

#[test]
fn eight_processes_at_once_lose_no_update() {
    let mut cfg = String::from("version: 1\ngates:\n");
    let mut files = Vec::new();
    for i in 0..8 {
        cfg.push_str(&gate_yaml(
            &format!("g{i}"),
            &format!("    scope: {{ include_globs: [\"f{i}.py\"] }}\n"),
        ));
        files.push((format!("f{i}.py"), "ok\n".to_string()));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let ws = repo(&refs, &cfg);
    let root = ws.path();
    for (f, _) in &files {
        write(root, f, "BAD\n");
    }
    let children: Vec<_> = (0..8)
        .map(|i| {
            let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("qgates"));
            cmd.current_dir(root)
                .env("PATH", common::path_with_tools())
                .args(["check", "--gates", &format!("g{i}"), "--format", "json"])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert_eq!(c.wait().unwrap().code(), Some(1));
    }
    let failed = state(root)["branches"]["main"]["failed_files"].clone();
    let expected: Vec<String> = (0..8).map(|i| format!("f{i}.py")).collect();
    assert_eq!(failed, serde_json::json!(expected));
}

#[test]
fn baseline_commands_show_reset_and_set() {
    let cfg = format!("version: 1\ngates:\n{}", gate_yaml("lint", ""));
    let ws = repo(&[("a.py", "ok\n")], &cfg);
    let root = ws.path();
    let a = git(root, &["rev-parse", "HEAD"]);
    write(root, "b.py", "ok\n");
    git(root, &["add", "b.py"]);
    git(root, &["commit", "-qm", "B"]);
    let show = |root: &Path| {
        String::from_utf8(
            qgates(root)
                .args(["baseline", "show"])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap()
    };
    assert!(show(root).contains("baseline: none"), "{}", show(root));
    let out = qgates(root)
        .args(["baseline", "set", "HEAD~1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(show(root).contains(&format!("baseline: {a}")));
    let (_, r) = check_json(root, &[]);
    assert_eq!(r["scope"]["files_in_scope"], 1, "changes since A: b.py");
    let out = qgates(root).args(["baseline", "reset"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(show(root).contains("baseline: none"));
    let out = qgates(root)
        .args(["baseline", "set", "no-such-rev"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("names no commit"));
}

#[test]
fn a_corrupt_state_file_is_moved_aside_and_the_run_goes_on_as_a_first_run() {
    let cfg = format!("version: 1\ngates:\n{}", gate_yaml("lint", ""));
    let ws = repo(&[("a.py", "ok\n")], &cfg);
    let root = ws.path();
    write(root, ".qgates/state.json", "{\"branches\": {\"main\": ");
    let (code, r) = check_json(root, &[]);
    assert_eq!(code, 0, "{r}");
    let note = r["scope"]["note"].as_str().unwrap();
    assert!(
        note.contains("corrupt") && note.contains("moved aside"),
        "{note}"
    );
    let aside: Vec<_> = std::fs::read_dir(root.join(".qgates"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("state.json.corrupt-")
        })
        .collect();
    assert_eq!(aside.len(), 1);
    assert_eq!(
        std::fs::read_to_string(aside[0].path()).unwrap(),
        "{\"branches\": {\"main\": "
    );
    // The run recorded a fresh state.
    let head = git(root, &["rev-parse", "HEAD"]);
    assert_eq!(
        state(root)["branches"]["main"]["baseline_sha"],
        head.as_str()
    );
}
