//! Every way a gate can end, with purpose-made tools: passed, failed, skipped and each kind of
//! error. Nothing passes silently.

use crate::common;

use common::{check_json, gate, tool, workspace};
use std::path::Path;

/// A config with one `exit_code` gate per (id, command) pair, checking `.py` files.
fn exit_code_gates(gates: &[(&str, &str, &str)]) -> String {
    let mut s = String::from("version: 1\ngates:\n");
    for (id, command, extra) in gates {
        s.push_str(&format!(
            "  {id}:\n    command: {command}\n    file_types: [\".py\"]\n    parsing: {{ strategy: exit_code }}\n{extra}"
        ));
    }
    s
}

fn pid_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[test]
fn a_missing_tool_is_an_error_that_names_it_and_the_other_gates_still_report() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    tool(ws.path(), "ok.sh", "#!/bin/sh\nexit 0\n");
    let cfg = exit_code_gates(&[
        ("gone", "[\"no-such-tool-qgates\"]", ""),
        ("fine", "[\"./ok.sh\"]", ""),
    ]);
    common::write(ws.path(), "quality.yaml", &cfg);
    let (code, r) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 3, "{r}");
    assert_eq!(gate(&r, "gone")["status"], "error");
    let msg = gate(&r, "gone")["error"].as_str().unwrap();
    assert!(
        msg.contains("`no-such-tool-qgates` was not found") && msg.contains("PATH"),
        "{msg}"
    );
    assert_eq!(gate(&r, "fine")["status"], "passed");
    assert_eq!(r["overall_pass"], false);
}

#[test]
fn a_missing_optional_tool_is_skipped_with_a_reason() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    let cfg = exit_code_gates(&[("gone", "[\"no-such-tool-qgates\"]", "    optional: true\n")]);
    common::write(ws.path(), "quality.yaml", &cfg);
    let (code, r) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 0, "{r}");
    let g = gate(&r, "gone");
    assert_eq!(g["status"], "skipped");
    assert!(
        g["skip_reason"]
            .as_str()
            .unwrap()
            .contains("no-such-tool-qgates"),
        "{g}"
    );
}

#[test]
fn a_timeout_kills_the_whole_process_group() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    tool(
        ws.path(),
        "hang.sh",
        "#!/bin/sh\nsleep 300 &\necho $! > grandchild.pid\nsleep 300\n",
    );
    let cfg = exit_code_gates(&[("hang", "[\"./hang.sh\"]", "    timeout_s: 0.5\n")]);
    common::write(ws.path(), "quality.yaml", &cfg);
    let (code, r) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 3, "{r}");
    let g = gate(&r, "hang");
    assert_eq!(g["status"], "error");
    assert!(
        g["error"]
            .as_str()
            .unwrap()
            .contains("timed out after 0.5s"),
        "{g}"
    );
    let pid: i32 = std::fs::read_to_string(ws.path().join("grandchild.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The grandchild was killed with its group; give the kernel a moment to reap it.
    let gone = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(20));
        !pid_alive(pid) || is_zombie(pid)
    });
    assert!(gone, "grandchild {pid} outlived the timeout");
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.contains(") Z "))
        .unwrap_or(true)
}

#[test]
fn an_exit_code_in_neither_list_is_an_error() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    tool(
        ws.path(),
        "seven.sh",
        "#!/bin/sh\necho 'usage: tool [options]' >&2\nexit 7\n",
    );
    common::write(
        ws.path(),
        "quality.yaml",
        &exit_code_gates(&[("seven", "[\"./seven.sh\"]", "")]),
    );
    let (code, r) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 3);
    let g = gate(&r, "seven");
    assert_eq!(g["status"], "error");
    assert_eq!(g["exit_code"], 7);
    let msg = g["error"].as_str().unwrap();
    assert!(
        msg.contains("exited with code 7") && msg.contains("neither"),
        "{msg}"
    );
    let stderr_log = g["log"]["stderr"].as_str().unwrap();
    let logged = std::fs::read_to_string(ws.path().join(stderr_log)).unwrap();
    assert_eq!(logged, "usage: tool [options]\n");
}

#[test]
fn a_findings_exit_code_with_nothing_parsed_is_an_error() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    tool(ws.path(), "empty.sh", "#!/bin/sh\necho '[]'\nexit 1\n");
    let cfg = "version: 1\ngates:\n  j:\n    command: [\"./empty.sh\"]\n    parsing: { strategy: json_violations, field_map: { message: m } }\n";
    common::write(ws.path(), "quality.yaml", cfg);
    let (code, r) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 3);
    let g = gate(&r, "j");
    assert_eq!(g["status"], "error");
    assert!(
        g["error"]
            .as_str()
            .unwrap()
            .contains("no violation could be read"),
        "{g}"
    );
}

#[test]
fn the_exit_code_strategy_reports_one_violation_naming_gate_code_and_log() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    tool(
        ws.path(),
        "fail.sh",
        "#!/bin/sh\necho 'FAILED test_a'\nexit 1\n",
    );
    common::write(
        ws.path(),
        "quality.yaml",
        &exit_code_gates(&[("tests", "[\"./fail.sh\"]", "    name: Unit tests\n")]),
    );
    let (code, r) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 1, "{r}");
    let g = gate(&r, "tests");
    assert_eq!(g["status"], "failed");
    let v = &g["violations"].as_array().unwrap()[0];
    let msg = v["message"].as_str().unwrap();
    let log = g["log"]["stdout"].as_str().unwrap();
    assert!(
        msg.contains("Unit tests") && msg.contains("exit code 1") && msg.contains(log),
        "{msg}"
    );
    assert!(v.get("file").is_none());
    assert_eq!(
        std::fs::read_to_string(ws.path().join(log)).unwrap(),
        "FAILED test_a\n"
    );
}

#[test]
fn a_crash_is_an_error_naming_the_signal() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    tool(ws.path(), "crash.sh", "#!/bin/sh\nkill -SEGV $$\n");
    common::write(
        ws.path(),
        "quality.yaml",
        &exit_code_gates(&[("crash", "[\"./crash.sh\"]", "")]),
    );
    let (code, r) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 3);
    let msg = gate(&r, "crash")["error"].as_str().unwrap().to_string();
    assert!(
        msg.contains("signal 11") && msg.contains("SIGSEGV"),
        "{msg}"
    );
}

#[test]
fn gates_run_in_parallel() {
    // Each tool waits for the other to have started: run one after the other, both would time out.
    let ws = workspace(&[("a.py", "x = 1\n")]);
    let wait_for = |mine: &str, theirs: &str| {
        format!(
            "#!/bin/sh\ntouch {mine}\ni=0\nwhile [ ! -e {theirs} ]; do i=$((i+1)); [ $i -gt 200 ] && exit 9; sleep 0.05; done\nexit 0\n"
        )
    };
    tool(ws.path(), "a.sh", &wait_for("a.started", "b.started"));
    tool(ws.path(), "b.sh", &wait_for("b.started", "a.started"));
    common::write(
        ws.path(),
        "quality.yaml",
        &exit_code_gates(&[("a", "[\"./a.sh\"]", ""), ("b", "[\"./b.sh\"]", "")]),
    );
    let (code, r) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(gate(&r, "a")["status"], "passed");
    assert_eq!(gate(&r, "b")["status"], "passed");
}

/// A tool that records each invocation's arguments, one per line, then a separator.
const RECORDER: &str = "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> args.log\necho '--end--' >> args.log\nexit 0\n";

fn recorded(root: &Path) -> Vec<Vec<String>> {
    let log = std::fs::read_to_string(root.join("args.log")).unwrap();
    let mut calls = vec![Vec::new()];
    for line in log.lines() {
        if line == "--end--" {
            calls.push(Vec::new());
        } else {
            calls.last_mut().unwrap().push(line.to_string());
        }
    }
    calls.pop();
    calls
}

#[test]
fn a_file_name_starting_with_a_dash_is_not_read_as_an_option() {
    let ws = workspace(&[("-rf.py", "x = 1\n"), ("sub/-n.py", "x = 1\n")]);
    tool(ws.path(), "rec.sh", RECORDER);
    common::write(
        ws.path(),
        "quality.yaml",
        &exit_code_gates(&[("rec", "[\"./rec.sh\", \"--flag\"]", "")]),
    );
    let (code, r) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(
        recorded(ws.path()),
        vec![vec!["--flag", "./-rf.py", "sub/-n.py"]]
    );
}

#[test]
fn twenty_thousand_files_are_split_into_batches_and_none_is_lost() {
    let ws = workspace(&[]);
    let long = "x".repeat(90);
    let mut expected = Vec::new();
    for i in 0..20_000 {
        let rel = format!("pkg{}/{long}_{i:05}.py", i % 10);
        std::fs::create_dir_all(ws.path().join(format!("pkg{}", i % 10))).unwrap();
        std::fs::write(ws.path().join(&rel), "").unwrap();
        expected.push(rel);
    }
    expected.sort();
    tool(ws.path(), "rec.sh", RECORDER);
    common::write(
        ws.path(),
        "quality.yaml",
        &exit_code_gates(&[("rec", "[\"./rec.sh\"]", "")]),
    );
    let (code, r) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 0, "{r}");
    let calls = recorded(ws.path());
    // ~2 MB of arguments cannot go in one command line: the OS limit forced batches.
    assert!(
        calls.len() > 1,
        "expected several batches, got {}",
        calls.len()
    );
    let mut seen: Vec<String> = calls.concat();
    seen.sort();
    assert_eq!(seen, expected);
    assert_eq!(gate(&r, "rec")["files_checked"], 20_000);

    // max_files_per_run splits further.
    std::fs::remove_file(ws.path().join("args.log")).unwrap();
    common::write(
        ws.path(),
        "quality.yaml",
        &exit_code_gates(&[("rec", "[\"./rec.sh\"]", "    max_files_per_run: 7000\n")]),
    );
    let (code, _) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 0);
    let calls = recorded(ws.path());
    assert_eq!(
        calls.iter().map(Vec::len).collect::<Vec<_>>(),
        vec![7000, 7000, 6000]
    );
}

#[test]
fn allow_fail_findings_do_not_block() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    tool(ws.path(), "fail.sh", "#!/bin/sh\nexit 1\n");
    common::write(
        ws.path(),
        "quality.yaml",
        &exit_code_gates(&[("soft", "[\"./fail.sh\"]", "    allow_fail: true\n")]),
    );
    let (code, r) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["overall_pass"], true);
    let g = gate(&r, "soft");
    assert_eq!(g["status"], "failed");
    assert_eq!(g["allow_fail"], true);
}

#[test]
fn skips_say_why() {
    let ws = workspace(&[("a.py", "x = 1\n"), ("b.txt", "")]);
    tool(ws.path(), "ok.sh", "#!/bin/sh\nexit 0\n");
    let cfg = "version: 1\ngates:\n  onsave:\n    command: [\"./ok.sh\"]\n    run_on: [save]\n    parsing: { strategy: exit_code }\n  rust:\n    command: [\"./ok.sh\"]\n    file_types: [\".rs\"]\n    parsing: { strategy: exit_code }\n  whole_repo:\n    command: [\"./ok.sh\"]\n    pass_files: false\n    file_types: [\".rs\"]\n    parsing: { strategy: exit_code }\n";
    common::write(ws.path(), "quality.yaml", cfg);
    let (code, r) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(gate(&r, "onsave")["skip_reason"], "not run on ci (run_on)");
    // No file of the project is a `.rs` file: the gate can never run, which is a mistake.
    let never = "never applies: no file in the project matches its file_types (.rs). Fix `file_types` in quality.yaml, or remove the gate.";
    assert_eq!(gate(&r, "rust")["skip_reason"], never);
    // A repository-wide gate runs without file arguments, but only when one of its files is in
    // scope: with none, nothing it could report concerns the change.
    assert_eq!(gate(&r, "whole_repo")["skip_reason"], never);
}

#[test]
fn an_unknown_gate_is_a_usage_error() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    tool(ws.path(), "ok.sh", "#!/bin/sh\nexit 0\n");
    common::write(
        ws.path(),
        "quality.yaml",
        &exit_code_gates(&[("a", "[\"./ok.sh\"]", "")]),
    );
    let out = common::qgates(ws.path())
        .args(["check", "--gates", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown gate `nope`") && err.contains("Active gates: a"),
        "{err}"
    );
}

#[test]
fn a_cwd_that_does_not_exist_is_an_error() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    tool(ws.path(), "ok.sh", "#!/bin/sh\nexit 0\n");
    common::write(
        ws.path(),
        "quality.yaml",
        &exit_code_gates(&[("a", "[\"./ok.sh\"]", "    cwd: nowhere\n")]),
    );
    let (code, r) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 3);
    assert!(
        gate(&r, "a")["error"]
            .as_str()
            .unwrap()
            .contains("`nowhere` is not a folder"),
        "{r}"
    );
}
