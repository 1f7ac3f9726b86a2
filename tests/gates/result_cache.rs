//! The result cache: an unchanged file spawns no process; any change to the file, the gate, its
//! `cache_inputs` or (for `cache: workspace`) the workspace runs it again.

use crate::common;

use common::{check_json, fixture_copy, gate, qgates, tool, workspace, write};
use std::path::Path;

/// Logs outside the workspace (in its parent folder), so the log is no workspace change itself.
/// Prints `FILE:1:1: E1 bad` for every argument file containing "BAD"; logs each call.
const LINTER: &str = "#!/bin/sh\necho \"$*\" >> ../calls.log\nfound=0\nfor f in \"$@\"; do\n  if grep -q BAD \"$f\"; then echo \"$f:1:1: E1 bad\"; found=1; fi\ndone\nexit $found\n";

fn config(cache: &str) -> String {
    format!(
        "version: 1\ngates:\n  lint:\n    command: [\"./lint.sh\"]\n    file_types: [\".py\"]\n    cache: {cache}\n    cache_inputs: [lint.toml]\n    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[^:\\n]+):(?P<line>\\d+):(?P<column>\\d+): (?P<code>E\\d+) (?P<message>.+)$'\n"
    )
}

fn calls(root: &Path) -> Vec<String> {
    std::fs::read_to_string(root.join("../calls.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// A workspace in `<tmp>/p`, so the tool's log in `<tmp>` stays outside it.
struct Ws(
    #[expect(dead_code, reason = "kept to delete the folder on drop")] tempfile::TempDir,
    std::path::PathBuf,
);

impl Ws {
    fn path(&self) -> &Path {
        &self.1
    }
}

fn setup(cache: &str) -> Ws {
    let tmp = workspace(&[
        ("p/a.py", "ok\n"),
        ("p/b.py", "BAD\n"),
        ("p/c.py", "ok\n"),
        ("p/lint.toml", "x = 1\n"),
    ]);
    let root = tmp.path().join("p");
    tool(&root, "lint.sh", LINTER);
    write(&root, "quality.yaml", &config(cache));
    Ws(tmp, root)
}

#[test]
fn an_unchanged_rerun_spawns_nothing_and_reports_the_same() {
    let ws = setup("per_file");
    let (code1, r1) = check_json(ws.path(), &[]);
    assert_eq!(code1, 1, "{r1}");
    assert_eq!(calls(ws.path()), vec!["a.py b.py c.py"]);
    let (code2, r2) = check_json(ws.path(), &[]);
    assert_eq!(code2, 1);
    assert_eq!(calls(ws.path()).len(), 1, "the second run started the tool");
    assert_eq!(
        gate(&r2, "lint")["violations"],
        gate(&r1, "lint")["violations"]
    );
    assert_eq!(gate(&r2, "lint")["status"], "failed");
    assert_eq!(gate(&r2, "lint")["cached_files"], 3);
    assert_eq!(r2["summary"], r1["summary"]);
}

#[test]
fn only_changed_files_run_again() {
    let ws = setup("per_file");
    check_json(ws.path(), &[]);
    write(ws.path(), "c.py", "BAD now\n");
    let (_, r) = check_json(ws.path(), &[]);
    assert_eq!(calls(ws.path()), vec!["a.py b.py c.py", "c.py"]);
    let files: Vec<&str> = gate(&r, "lint")["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["b.py", "c.py"]);
    assert_eq!(gate(&r, "lint")["cached_files"], 2);
    assert_eq!(gate(&r, "lint")["files_checked"], 3);
}

#[test]
fn a_changed_gate_or_cache_input_runs_everything_again() {
    let ws = setup("per_file");
    check_json(ws.path(), &[]);
    write(ws.path(), "lint.toml", "x = 2\n");
    check_json(ws.path(), &[]);
    assert_eq!(calls(ws.path()).len(), 2);
    write(
        ws.path(),
        "quality.yaml",
        &config("per_file").replace("cache_inputs", "timeout_s: 30\n    cache_inputs"),
    );
    check_json(ws.path(), &[]);
    assert_eq!(calls(ws.path()).len(), 3);
    check_json(ws.path(), &[]);
    assert_eq!(calls(ws.path()).len(), 3);
}

#[test]
fn no_cache_and_cache_none_always_run() {
    let ws = setup("per_file");
    check_json(ws.path(), &[]);
    check_json(ws.path(), &["--no-cache"]);
    assert_eq!(calls(ws.path()).len(), 2);
    write(ws.path(), "quality.yaml", &config("none"));
    check_json(ws.path(), &[]);
    check_json(ws.path(), &[]);
    assert_eq!(calls(ws.path()).len(), 4);
}

#[test]
fn a_workspace_gate_reruns_when_any_project_file_changes() {
    let ws = setup("workspace");
    check_json(ws.path(), &["a.py"]);
    check_json(ws.path(), &["a.py"]);
    assert_eq!(calls(ws.path()), vec!["a.py"]);
    // A file the gate was not even given: its findings may depend on it.
    write(ws.path(), "c.py", "ok, but changed\n");
    check_json(ws.path(), &["a.py"]);
    assert_eq!(calls(ws.path()), vec!["a.py", "a.py"]);
}

#[test]
fn a_corrupt_cache_is_ignored() {
    let ws = setup("per_file");
    check_json(ws.path(), &[]);
    write(ws.path(), ".qgates/cache/results.json", "{ truncated");
    let (code, r) = check_json(ws.path(), &[]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(calls(ws.path()).len(), 2);
    check_json(ws.path(), &[]);
    assert_eq!(
        calls(ws.path()).len(),
        2,
        "the rewritten cache serves again"
    );
}

#[test]
fn rerunning_the_example_with_real_tools_spawns_no_process() {
    let ws = fixture_copy("python-basic");
    // Wrappers that log every start of the real ruff and mypy.
    let bin = ws.path().join("wrappers");
    for name in ["ruff", "mypy"] {
        let real = common::tools_bin().join(name);
        tool(
            &bin,
            name,
            &format!(
                "#!/bin/sh\necho {name} >> \"$QGATES_TEST_CALLS\"\nexec '{}' \"$@\"\n",
                real.display()
            ),
        );
    }
    let log = ws.path().join("tool-calls.log");
    let path = std::env::join_paths(
        std::iter::once(bin.clone()).chain(std::env::split_paths(&common::path_with_tools())),
    )
    .unwrap();
    let run = || {
        let out = qgates(ws.path())
            .env("PATH", &path)
            .env("QGATES_TEST_CALLS", &log)
            .args(["check", "--scope", "project", "--format", "json"])
            .output()
            .unwrap();
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let first = run();
    let started = std::fs::read_to_string(&log).unwrap();
    assert_eq!(started.lines().count(), 3, "{started}");
    let second = run();
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        started,
        "the unchanged re-run started a tool"
    );
    for id in ["ruff_format", "ruff_lint", "mypy"] {
        assert_eq!(
            gate(&second, id)["violations"],
            gate(&first, id)["violations"],
            "{id}"
        );
        assert_eq!(gate(&second, id)["cached_files"], 6, "{id}");
    }
}

/// Unchanged files are known by their stamp (size, times, inode) instead of being read again;
/// a same-size rewrite, even with its modification time put back, must still run again.
#[test]
fn a_same_size_edit_is_seen_even_with_the_old_mtime() {
    let ws = setup("per_file");
    // A stamp is recorded only for a file whose times lie `RACY_MARGIN` (two seconds) before
    // the run: one written in the same timestamp tick could change again unseen.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    check_json(ws.path(), &[]);
    let (_, r) = check_json(ws.path(), &[]);
    assert_eq!(
        calls(ws.path()).len(),
        1,
        "the unchanged re-run started the tool"
    );
    assert_eq!(gate(&r, "lint")["cached_files"], 3);
    let cache: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(ws.path().join(".qgates/cache/results.json")).unwrap(),
    )
    .unwrap();
    assert!(
        cache["hashes"].get("a.py").is_some(),
        "no stamp recorded: {cache}"
    );

    let a = ws.path().join("a.py");
    let mtime = std::fs::metadata(&a).unwrap().modified().unwrap();
    write(ws.path(), "a.py", "BAD");
    assert_eq!(
        std::fs::metadata(&a).unwrap().len(),
        3,
        "same size as `ok\\n`"
    );
    std::fs::File::options()
        .write(true)
        .open(&a)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let (_, r) = check_json(ws.path(), &[]);
    assert_eq!(calls(ws.path()), vec!["a.py b.py c.py", "a.py"]);
    let files: Vec<&str> = gate(&r, "lint")["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["a.py", "b.py"]);
}
