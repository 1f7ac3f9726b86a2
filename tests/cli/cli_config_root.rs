//! Which folder a command works on and which configuration it reads: `--config` names a file and
//! nothing more (the root is still found from where the command runs), every command that takes
//! it agrees on that, and `qgates parse` reads a saved output from the gate's `cwd` as
//! `qgates check` does.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;

use common::lsp::WAIT;
use common::{git, path_with_tools, qgates, write};
use serde_json::{Value, json};

/// Runs qgates in `dir`; returns the exit code, stdout and stderr.
fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = qgates(dir).args(args).output().expect("run qgates");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_of(stdout: &str, stderr: &str) -> Value {
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}\nstderr:\n{stderr}"))
}

/// The files a report's gate found violations in.
fn files_of(violations: &Value) -> Vec<&str> {
    violations
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["file"].as_str())
        .collect()
}

/// The pinned mypy as the default configuration runs it, in the folder `cwd`.
fn mypy_gate_in(cwd: &str) -> String {
    format!(
        r#"version: 1
gates:
  mypy:
    command: ["mypy", "--no-native-parser", "--output", "json", "--no-error-summary", "--hide-error-context"]
    cwd: {cwd}
    file_types: [".py"]
    cache: none
    parsing:
      strategy: json_violations
      format: jsonl
      column_offset: 1
      field_map: {{ file: file, line: line, column: column, end_line: end_line,
                   end_column: end_column, code: code, message: message, severity: severity }}
"#
    )
}

/// The pinned ruff's lint gate (it prints absolute paths, so only the root decides what a report
/// names).
const RUFF_LINT: &str = r#"version: 1
gates:
  ruff_lint:
    command: ["ruff", "check", "--output-format", "json", "--no-fix", "--no-cache"]
    file_types: [".py"]
    cache: none
    parsing:
      strategy: json_violations
      violations_path: ""
      field_map: { file: filename, line: location/row, column: location/column, code: code, message: message }
"#;

#[test]
fn parse_takes_a_saved_outputs_paths_from_the_gates_cwd_as_check_does() {
    let ws = tempfile::tempdir().unwrap();
    git(ws.path(), &["init", "-q"]);
    write(ws.path(), "quality.yaml", &mypy_gate_in("backend"));
    // mypy, started in backend/, prints `app.py`: only the gate's cwd makes it backend/app.py.
    write(
        ws.path(),
        "backend/app.py",
        "def f() -> int:\n    return \"x\"\n",
    );
    let (code, out, err) = run(
        ws.path(),
        &["check", "--scope", "project", "--format", "json"],
    );
    assert_eq!(code, 1, "mypy finds the error: {out}\n{err}");
    let report = json_of(&out, &err);
    let gate = common::gate(&report, "mypy");
    assert_eq!(files_of(&gate["violations"]), ["backend/app.py"], "{gate}");
    let saved = ws
        .path()
        .join(gate["log"]["stdout"].as_str().expect("the run's log"));
    let saved = saved.to_str().unwrap();

    // From the root and from inside backend/ (the root is found above it): the same findings.
    for dir in [ws.path().to_path_buf(), ws.path().join("backend")] {
        let (code, out, err) = run(&dir, &["parse", "mypy", saved, "--exit-code", "1"]);
        assert_eq!(code, 0, "{err}");
        let parsed = json_of(&out, &err);
        assert_eq!(
            parsed["violations"],
            gate["violations"],
            "qgates parse in {} reads the saved output as qgates check did",
            dir.display()
        );
    }
}

/// A repository without a configuration of its own, and a shared one in a folder beside it
/// (with a Python file of its own that must not be checked).
struct SharedConfig {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    other: PathBuf,
    config: PathBuf,
}

fn shared_config() -> SharedConfig {
    let tmp = tempfile::tempdir().unwrap();
    // Canonical, as qgates shows paths with links resolved (e.g. a linked temporary folder).
    let base = tmp.path().canonicalize().unwrap();
    let (repo, other) = (base.join("repo"), base.join("other"));
    write(&repo, "src/a.py", "print(undefined_name)\n");
    git(&repo, &["init", "-q"]);
    write(&other, "quality.yaml", RUFF_LINT);
    write(&other, "b.py", "import os\n");
    let config = other.join("quality.yaml");
    SharedConfig {
        _tmp: tmp,
        repo,
        other,
        config,
    }
}

#[test]
fn a_config_from_another_folder_checks_the_repository_the_command_runs_in() {
    let s = shared_config();
    let (code, out, err) = run(
        &s.repo.join("src"),
        &[
            "check",
            "--config",
            "../../other/quality.yaml",
            "--scope",
            "project",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 1, "ruff finds the undefined name: {out}\n{err}");
    let report = json_of(&out, &err);
    let gate = common::gate(&report, "ruff_lint");
    assert_eq!(
        files_of(&gate["violations"]),
        ["src/a.py"],
        "the repository's file, named from its top: {gate}"
    );
    assert!(
        err.contains(&format!("config: {}", s.config.display())),
        "says which configuration it read: {err}"
    );
    assert!(
        s.repo.join(".qgates").is_dir(),
        "the run is the repository's"
    );
    assert!(
        !s.other.join(".qgates").exists(),
        "nothing is written beside the configuration"
    );
}

#[test]
fn trust_status_and_the_agent_server_agree_on_a_config_from_another_folder() {
    let s = shared_config();
    let trust_dir = tempfile::tempdir().unwrap();
    let trust_file = trust_dir.path().join("trust.json");
    let config = s.config.to_str().unwrap();

    // Not trusted yet: the agent server names the command that trusts its configuration.
    let refused = call_run_quality_gates(&s.repo, &trust_file, config);
    assert_eq!(refused["isError"], true, "{refused}");
    let command = format!("qgates trust {} --config {config}", s.repo.display());
    assert!(
        refused.to_string().contains(&command),
        "{command}: {refused}"
    );

    // Trusted with a relative spelling of the path, from the repository's top.
    let out = qgates(&s.repo)
        .env("QGATES_TRUST_FILE", &trust_file)
        .args(["trust", "--yes", "--config", "../other/quality.yaml"])
        .output()
        .expect("run qgates trust");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains(&format!("{} ({config})", s.repo.display())),
        "names the repository and the configuration it trusts: {said}"
    );

    // Inspected with the absolute path, from a subfolder: the same workspace, trusted.
    let out = qgates(&s.repo.join("src"))
        .env("QGATES_TRUST_FILE", &trust_file)
        .args(["status", "--json", "--config", config])
        .output()
        .expect("run qgates status");
    let status = json_of(
        &String::from_utf8_lossy(&out.stdout),
        &String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(status["root"], s.repo.display().to_string(), "{status}");
    assert_eq!(status["config"], config, "{status}");
    assert_eq!(status["trusted"], true, "{status}");

    // The agent server started with that path runs the trusted gates on the repository's files.
    let result = call_run_quality_gates(&s.repo, &trust_file, config);
    assert_ne!(result["isError"], true, "{result}");
    let text = result["structuredContent"].to_string();
    assert!(
        text.contains(r#""file":"src/a.py""#),
        "the repository's file: {text}"
    );
    assert!(!text.contains("b.py"), "not the config folder's: {text}");
}

/// Starts `qgates mcp --config CONFIG` in `dir`, calls run_quality_gates on the whole project and
/// returns the tool result; the server is then stopped by closing its input.
fn call_run_quality_gates(dir: &Path, trust_file: &Path, config: &str) -> Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_qgates"))
        .args(["mcp", "--config", config])
        .current_dir(dir)
        .env("PATH", path_with_tools())
        .env("QGATES_TRUST_FILE", trust_file)
        .env_remove("QGATES_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start qgates mcp");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut stdin = child.stdin.take().expect("stdin");
    let mut send = |msg: Value| {
        writeln!(stdin, "{msg}").expect("write to the server");
        stdin.flush().expect("flush");
    };
    let answer_to = |id: u64| loop {
        let line = lines
            .recv_timeout(WAIT)
            .expect("the server answers in time");
        let msg: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
        if msg["id"] == id {
            return msg;
        }
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "config-test", "version": "0"}}}));
    answer_to(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "run_quality_gates", "arguments": {"scope": "project"}}}));
    let result = answer_to(2)["result"].clone();
    drop(stdin);
    let _ = child.wait();
    result
}

#[test]
fn a_config_that_does_not_exist_is_a_usage_error_for_every_command() {
    let s = shared_config();
    for args in [
        &["check", "--config", "missing.yaml"][..],
        &["parse", "ruff_lint", "-", "--config", "missing.yaml"],
        &["status", "--config", "missing.yaml"],
        &["trust", "--yes", "--config", "missing.yaml"],
        &["mcp", "--config", "missing.yaml"],
    ] {
        // Standard input is empty: a server that started would end at once, with 0.
        let out = qgates(&s.repo)
            .args(args)
            .write_stdin(Vec::new())
            .output()
            .expect("run qgates");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
        let missing = s.repo.join("missing.yaml");
        assert!(
            said.contains(&missing.display().to_string()) && said.contains("does not exist"),
            "{args:?} names the file and what is wrong: {said}"
        );
    }
}
