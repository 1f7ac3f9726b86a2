//! A cloned repository's `.qgates/` is hostile input: a committed link must not aim qgates'
//! writes (or its pruning) outside the workspace, and a committed result cache or baseline
//! state must not be believed. The real binary, the real ruff, real git repositories.

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::lsp::{LspClient, TrustAnswer, WAIT};
use common::{check_json, gate, git, qgates, write};
use serde_json::{Value, json};

/// The default configuration with ruff's linter only: quick, and one finding per bad file.
fn ruff_config() -> String {
    let default = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core/config/default.yaml"),
    )
    .unwrap();
    let only_lint = default.replace(
        "active_gates: [ruff_format, ruff_lint, mypy]",
        "active_gates: [ruff_lint]",
    );
    assert_ne!(only_lint, default, "the default's active_gates line moved");
    only_lint
}

const UNUSED_IMPORT: &str = "import os\n";
const CLEAN: &str = "x = 1\n";

/// A committed repository on `main`: `quality.yaml` (ruff lint), `a.py` with an unused import,
/// `b.py` clean.
fn ruff_repo() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write(root, "quality.yaml", &ruff_config());
    write(root, "a.py", UNUSED_IMPORT);
    write(root, "b.py", CLEAN);
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "start"]);
    ws
}

/// A folder outside the workspace that looks like qgates' own: old run folders (marked as qgates
/// marks its own) at the top and under `runs/`, a cache, a state, and other files.
fn canary(dir: &Path) {
    for base in ["", "runs/"] {
        for i in 0..25 {
            let run = format!("{base}20000101-000000-000000-1-{i}");
            write(dir, &format!("{run}/.qgates-run"), "");
            write(dir, &format!("{run}/lint.stdout"), "an old run's output\n");
        }
    }
    write(dir, "cache/results.json", "{\"version\": 2}");
    write(dir, "state.json", "{\"branches\": {}}");
    write(dir, "precious.txt", "the user's own file\n");
}

/// Every path under `dir` with what it is: a folder, a file's bytes, or a link's target.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let what = if meta.is_symlink() {
                format!("link {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                todo.push(path.clone());
                "folder".to_string()
            } else {
                format!("file {:?}", std::fs::read(&path).unwrap())
            };
            out.insert(path.strip_prefix(dir).unwrap().to_path_buf(), what);
        }
    }
    out
}

/// `qgates check` in `root`: its exit code and stderr.
fn check(root: &Path, args: &[&str]) -> (i32, String) {
    let out = qgates(root).arg("check").args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An LSP session on `root` (trusted): the refusal is shown once as an error naming `link`, a
/// file is opened and saved, and a command run after them (so through the folder's scheduler
/// after the open and the save) is refused with the same text.
fn refused_by_the_language_server(root: &Path, link: &Path) {
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(root, &trust.path().join("trust.json"), TrustAnswer::NotNow);
    c.initialize(json!({"trusted": true}));
    let named = link.display().to_string();
    let shown = c.wait_for(
        |m| m["method"] == "window/showMessage" && m["params"]["type"] == 1,
        WAIT,
    );
    let text = shown["params"]["message"].as_str().unwrap().to_string();
    assert!(
        text.contains(&named) && text.contains("symbolic link"),
        "{text}"
    );
    c.open("a.py");
    c.edit_and_save("a.py", 2, "import sys\n");
    let err = c
        .request("workspace/executeCommand", json!({"command": "qgates.run"}))
        .unwrap_err();
    assert_eq!(err["message"].as_str(), Some(text.as_str()), "{err}");
    let shown_again = c
        .all_messages()
        .iter()
        .filter(|m| m["method"] == "window/showMessage" && m["params"]["type"] == 1)
        .count();
    assert_eq!(shown_again, 1, "the error is shown once");
    assert!(
        !c.all_messages()
            .iter()
            .any(|m| m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["diagnostics"]
                    .as_array()
                    .is_some_and(|d| !d.is_empty())),
        "a gate ran"
    );
    c.shutdown();
    std::fs::write(root.join("a.py"), UNUSED_IMPORT).unwrap();
}

/// `qgates mcp` in `root`: the run tool answers with a tool error naming `link`.
fn refused_by_the_agent_server(root: &Path, link: &Path) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_qgates"))
        .arg("mcp")
        .current_dir(root)
        .env("PATH", common::path_with_tools())
        .env_remove("QGATES_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for msg in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "run_quality_gates", "arguments": {}}}),
    ] {
        writeln!(stdin, "{msg}").unwrap();
    }
    stdin.flush().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let answer = lines
        .map_while(Result::ok)
        .map(|l| serde_json::from_str::<Value>(&l).unwrap())
        .find(|m| m["id"] == 2)
        .expect("an answer to the tool call");
    drop(stdin);
    child.wait().unwrap();
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(&link.display().to_string()), "{text}");
}

/// A committed link at `rel` (under `.qgates/`) to a canary folder outside the workspace: 40 CLI
/// runs, a language-server session and an agent-server call are refused, naming the link, and
/// the canary is unchanged byte for byte.
fn a_committed_link_is_refused(rel: &str) {
    let ws = ruff_repo();
    let root = ws.path();
    let outside = tempfile::tempdir().unwrap();
    canary(outside.path());
    let before = snapshot(outside.path());
    let link = root.join(rel);
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(outside.path(), &link).unwrap();
    git(root, &["add", "-f", rel]);
    git(root, &["commit", "-qm", "a link"]);
    for _ in 0..40 {
        let (code, stderr) = check(root, &["--format", "json"]);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(&link.display().to_string()) && stderr.contains("Remove the link"),
            "{stderr}"
        );
    }
    let out = qgates(root).args(["baseline", "reset"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    refused_by_the_language_server(root, &link);
    refused_by_the_agent_server(root, &link);
    assert_eq!(
        snapshot(outside.path()),
        before,
        "the folder outside the workspace changed"
    );
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
}

#[test]
fn a_committed_runs_link_is_refused_and_nothing_outside_changes() {
    a_committed_link_is_refused(".qgates/runs");
}

#[test]
fn a_committed_qgates_link_is_refused_and_nothing_outside_changes() {
    a_committed_link_is_refused(".qgates");
}

#[test]
fn a_committed_cache_link_is_refused_and_nothing_outside_changes() {
    a_committed_link_is_refused(".qgates/cache");
}

#[test]
fn a_state_file_linked_outside_is_not_written_through() {
    let ws = ruff_repo();
    let root = ws.path();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("state.json");
    std::fs::write(&target, "{\"branches\": {}}").unwrap();
    let link = root.join(".qgates/state.json");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for args in [
        &["check"][..],
        &["baseline", "set", "HEAD"],
        &["baseline", "show"],
    ] {
        let out = qgates(root).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(&link.display().to_string()), "{stderr}");
    }
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "{\"branches\": {}}"
    );
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    // Nothing else was made in `.qgates/` either.
    let names: Vec<_> = std::fs::read_dir(root.join(".qgates"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["state.json"]);
}

/// The violations a report lists for a file.
fn codes(report: &Value, gate_id: &str, file: &str) -> Vec<String> {
    gate(report, gate_id)["violations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["file"] == file)
        .map(|v| v["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_committed_cache_that_claims_files_clean_is_not_believed() {
    let ws = ruff_repo();
    let root = ws.path();
    let (code, report) = check_json(root, &["--scope", "project"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(codes(&report, "ruff_lint", "a.py"), ["F401"]);
    // The claim: a.py's entry, under the key its content has, says it is clean.
    let cache_file = root.join(".qgates/cache/results.json");
    let mut cache: Value = serde_json::from_slice(&std::fs::read(&cache_file).unwrap()).unwrap();
    let entry = &mut cache["gates"]["ruff_lint"]["a.py"];
    assert_eq!(entry["violations"].as_array().map(Vec::len), Some(1));
    entry["violations"] = json!([]);
    std::fs::write(&cache_file, serde_json::to_vec(&cache).unwrap()).unwrap();
    // Not committed, the claim would match: the file is taken as clean (this is what a commit
    // must not be able to do).
    let (code, report) = check_json(root, &["--scope", "project"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(gate(&report, "ruff_lint")["cached_files"], 2);
    git(root, &["add", "-f", ".qgates/cache/results.json"]);
    git(root, &["commit", "-qm", "a.py is clean, says the cache"]);
    let committed = std::fs::read(&cache_file).unwrap();
    let out = qgates(root)
        .args(["check", "--scope", "project", "--format", "json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{report}\n{stderr}");
    assert_eq!(codes(&report, "ruff_lint", "a.py"), ["F401"]);
    assert_eq!(gate(&report, "ruff_lint")["cached_files"], Value::Null);
    let fix = "git rm --cached .qgates/cache/results.json";
    let note = report["scope"]["note"].as_str().unwrap_or_default();
    assert!(note.contains(fix), "{note}");
    assert!(stderr.contains(fix), "{stderr}");
    assert_eq!(
        std::fs::read(&cache_file).unwrap(),
        committed,
        "the tracked file was written"
    );
    assert_eq!(
        git(root, &["status", "--porcelain", "--untracked-files=no"]),
        ""
    );
}

#[test]
fn a_committed_state_that_moves_the_baseline_is_not_believed() {
    let ws = ruff_repo();
    let root = ws.path();
    git(root, &["checkout", "-qb", "feature"]);
    write(root, "c.py", UNUSED_IMPORT);
    git(root, &["add", "c.py"]);
    git(root, &["commit", "-qm", "c.py, with an unused import"]);
    let head = git(root, &["rev-parse", "HEAD"]);
    // The claim: the branch was green at its last commit, so `auto` has nothing to check.
    let state = format!("{{\"branches\": {{\"feature\": {{\"baseline_sha\": \"{head}\"}}}}}}\n");
    write(root, ".qgates/state.json", &state);
    // Not committed, the claim would hold (this is what a commit must not be able to do).
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["scope"]["baseline_sha"], head.as_str(), "{report}");
    git(root, &["add", "-f", ".qgates/state.json"]);
    git(
        root,
        &["commit", "-qm", "the baseline moves, says the state"],
    );
    let committed = std::fs::read(root.join(".qgates/state.json")).unwrap();
    let out = qgates(root)
        .args(["check", "--format", "json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{report}\n{stderr}");
    assert_eq!(codes(&report, "ruff_lint", "c.py"), ["F401"]);
    let fix = "git rm --cached .qgates/state.json";
    let note = report["scope"]["note"].as_str().unwrap_or_default();
    assert!(note.contains(fix), "{note}");
    assert_eq!(note.matches(fix).count(), 1, "said once: {note}");
    assert!(stderr.contains(fix), "{stderr}");
    assert_eq!(
        std::fs::read(root.join(".qgates/state.json")).unwrap(),
        committed,
        "the tracked file was written"
    );
    // The baseline commands say so instead of writing it.
    let out = qgates(root).args(["baseline", "reset"]).output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains(fix));
    assert_eq!(
        std::fs::read(root.join(".qgates/state.json")).unwrap(),
        committed
    );
    assert_eq!(
        git(root, &["status", "--porcelain", "--untracked-files=no"]),
        ""
    );
}

#[test]
fn cached_violations_are_checked_against_the_workspace_like_fresh_ones() {
    let ws = ruff_repo();
    let root = ws.path();
    let (code, report) = check_json(root, &["--scope", "project"]);
    assert_eq!(code, 1, "{report}");
    // An entry kept under a.py's current key whose violation names a file outside the workspace:
    // a fresh one like it is dropped when parsed (`outside_root`), so a cached one cannot stand.
    let cache_file = root.join(".qgates/cache/results.json");
    let mut cache: Value = serde_json::from_slice(&std::fs::read(&cache_file).unwrap()).unwrap();
    cache["gates"]["ruff_lint"]["a.py"]["violations"][0]["file"] = json!("../outside.py");
    std::fs::write(&cache_file, serde_json::to_vec(&cache).unwrap()).unwrap();
    let (code, report) = check_json(root, &["--scope", "project"]);
    assert_eq!(code, 1, "{report}");
    let files: Vec<&Value> = gate(&report, "ruff_lint")["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| &v["file"])
        .collect();
    assert_eq!(files, [&json!("a.py")], "{report}");
    assert_eq!(codes(&report, "ruff_lint", "a.py"), ["F401"]);
    // b.py's entry was believed; a.py's ran again.
    assert_eq!(gate(&report, "ruff_lint")["cached_files"], 1, "{report}");
}
