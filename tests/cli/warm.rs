//! Warm processes (`core::warm`, docs/warm.md): `qgates check --warm` asks mypy's daemon, kept
//! by a keeper in `.qgates/warm/mypy/`, and gets what a cold run gets. Real mypy and dmypy from
//! the pinned tools, in real git repositories in temporary folders; processes are looked up in
//! `/proc`, never assumed.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{check_json, git, qgates, write};
use serde_json::Value;

const MYPY: &str = "version: 1\ngates:\n  mypy: { preset: mypy }\n";

const A: &str = "def f(x: int) -> str:\n    return str(x)\n";
const B: &str = "import a\n\ny: str = a.f(1)\nz: int = \"no\"\n";

/// A repository with a module and a caller, committed.
fn repo(config: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "quality.yaml", config);
    write(ws.path(), "a.py", A);
    write(ws.path(), "b.py", B);
    write(ws.path(), ".gitignore", ".qgates/\n.mypy_cache/\n");
    git(ws.path(), &["init", "-q", "-b", "main"]);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-qm", "start"]);
    ws
}

/// The workspace's warm processes stopped when the test ends, passed or not.
struct Stops<'a>(&'a Path);

impl Drop for Stops<'_> {
    fn drop(&mut self) {
        let _ = qgates(self.0).args(["daemon", "stop"]).output();
    }
}

fn check(root: &Path, warm: bool) -> Value {
    let mut args = vec!["--scope", "project", "--no-cache", "--no-state"];
    if warm {
        args.push("--warm");
    }
    check_json(root, &args).1
}

/// (file, line, column, code, message) of the mypy gate's findings.
fn findings(report: &Value) -> Vec<(String, u64, u64, String, String)> {
    let gate = common::gate(report, "mypy");
    (gate["violations"].as_array().into_iter().flatten())
        .map(|v| {
            (
                v["file"].as_str().unwrap_or("").into(),
                v["line"].as_u64().unwrap_or(0),
                v["column"].as_u64().unwrap_or(0),
                v["code"].as_str().unwrap_or("").into(),
                v["message"].as_str().unwrap_or("").into(),
            )
        })
        .collect()
}

fn state(root: &Path) -> Value {
    let text = std::fs::read_to_string(root.join(".qgates/warm/mypy/state.json"))
        .expect("the keeper's state");
    serde_json::from_str(&text).unwrap()
}

fn pid(state: &Value, key: &str) -> i32 {
    state[key]
        .as_i64()
        .unwrap_or_else(|| panic!("{key} in {state}")) as i32
}

fn running(pid: i32) -> bool {
    // A zombie has no command line: it is gone for every purpose here.
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| !c.is_empty())
}

/// Waits until `pid` is gone; false if it is still there after `limit`.
fn gone_within(pid: i32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while running(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

fn signal(pid: i32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} {pid}");
}

#[test]
fn a_warm_check_answers_what_a_cold_one_does_and_the_daemon_is_kept() {
    let ws = repo(MYPY);
    let root = ws.path();
    let _stops = Stops(root);
    let cold = check(root, false);
    assert_eq!(findings(&cold).len(), 1, "{cold}");
    assert!(common::gate(&cold, "mypy").get("warm").is_none(), "{cold}");

    let warm = check(root, true);
    assert_eq!(findings(&warm), findings(&cold));
    assert_eq!(common::gate(&warm, "mypy")["warm"], true, "{warm}");
    let first = state(root);
    let daemon = pid(&first, "daemon_pid");
    assert!(running(daemon), "the daemon runs on: {first}");
    let line = String::from_utf8(
        qgates(root)
            .args(["daemon", "list"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        line.starts_with(&format!("mypy: pid {daemon}, up ")) && line.contains(" MiB"),
        "{line}"
    );
    let status = qgates(root).arg("status").output().unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.contains(&format!("warm: mypy: pid {daemon}, up ")),
        "{status}"
    );

    // A changed signature breaks the unchanged caller: the daemon sees it, as mypy does.
    write(root, "a.py", "def f(x: int) -> int:\n    return x\n");
    let (warm, cold) = (check(root, true), check(root, false));
    assert_eq!(findings(&warm).len(), 2, "{warm}");
    assert_eq!(findings(&warm), findings(&cold));
    assert_eq!(
        pid(&state(root), "daemon_pid"),
        daemon,
        "the same daemon answered"
    );

    let out = qgates(root).args(["daemon", "stop"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(said.trim(), "stopped the warm process of mypy");
    assert!(
        gone_within(daemon, Duration::from_secs(5)),
        "the daemon ended"
    );
    assert!(!root.join(".qgates/warm/mypy/state.json").exists());
}

#[test]
fn a_changed_tool_configuration_restarts_the_daemon() {
    let ws = repo(MYPY);
    let root = ws.path();
    let _stops = Stops(root);
    check(root, true);
    let before = pid(&state(root), "daemon_pid");
    // mypy.ini is one of the preset's `cache_inputs`: the daemon took the old options.
    write(root, "mypy.ini", "[mypy]\ndisallow_untyped_defs = True\n");
    write(root, "c.py", "def g(x):\n    return x\n");
    let (warm, cold) = (check(root, true), check(root, false));
    assert!(
        findings(&cold).iter().any(|f| f.3 == "no-untyped-def"),
        "{cold}"
    );
    assert_eq!(findings(&warm), findings(&cold));
    let after = pid(&state(root), "daemon_pid");
    assert_ne!(after, before, "a new daemon");
    assert!(
        gone_within(before, Duration::from_secs(5)),
        "the old one ended"
    );
}

#[test]
fn a_wedged_daemon_is_killed_and_the_check_runs_cold_with_a_note() {
    let ws = repo("version: 1\ngates:\n  mypy:\n    preset: mypy\n    timeout_s: 15\n");
    let root = ws.path();
    let _stops = Stops(root);
    let warm = check(root, true);
    assert_eq!(common::gate(&warm, "mypy")["warm"], true, "{warm}");
    let daemon = pid(&state(root), "daemon_pid");
    // Stopped, it takes the check and never answers. (The timeout leaves a slow machine's first
    // check, which starts the daemon, time enough.)
    signal(daemon, "-STOP");
    let report = check(root, true);
    assert_eq!(findings(&report), findings(&check(root, false)));
    assert!(
        common::gate(&report, "mypy").get("warm").is_none(),
        "{report}"
    );
    let note = report["scope"]["note"].as_str().unwrap_or("");
    assert!(
        note.contains("gate `mypy`: its warm process failed (") && note.ends_with("so it ran cold"),
        "{note}"
    );
    assert!(
        gone_within(daemon, Duration::from_secs(5)),
        "the wedged daemon was ended"
    );
    // The next check starts a new one.
    let again = check(root, true);
    assert_eq!(common::gate(&again, "mypy")["warm"], true, "{again}");
    assert_ne!(pid(&state(root), "daemon_pid"), daemon);
}

#[test]
fn the_daemon_ends_with_its_keeper_and_after_the_idle_time() {
    // Twelve seconds: more than a slow machine's first check, which starts the daemon.
    let ws = repo(&format!("{MYPY}warm_idle_minutes: 0.2\n"));
    let root = ws.path();
    let _stops = Stops(root);
    check(root, true);
    let first = state(root);
    let (keeper, daemon) = (pid(&first, "keeper_pid"), pid(&first, "daemon_pid"));
    // Killed outright, the keeper cannot stop its daemon: its reaper does.
    signal(keeper, "-KILL");
    assert!(
        gone_within(daemon, Duration::from_secs(5)),
        "the daemon went with its keeper"
    );

    // Twelve seconds without a check: the keeper stops its daemon and ends.
    check(root, true);
    let second = state(root);
    let (keeper, daemon) = (pid(&second, "keeper_pid"), pid(&second, "daemon_pid"));
    assert!(
        gone_within(daemon, Duration::from_secs(60)),
        "stopped when idle"
    );
    assert!(
        gone_within(keeper, Duration::from_secs(5)),
        "and its keeper ended"
    );
    assert!(!root.join(".qgates/warm/mypy/state.json").exists());
}

#[test]
fn warm_false_runs_cold_and_trust_shows_the_warm_commands() {
    let ws = repo("version: 1\ngates:\n  mypy: { preset: mypy, warm: false }\n");
    let root = ws.path();
    let _stops = Stops(root);
    let report = check(root, true);
    assert!(
        common::gate(&report, "mypy").get("warm").is_none(),
        "{report}"
    );
    assert!(
        !root.join(".qgates/warm/mypy").exists(),
        "nothing was started"
    );

    let ws = repo(MYPY);
    let status = qgates(ws.path()).arg("status").output().unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    for line in [
        "• warm process of mypy: dmypy --status-file '{state}/dmypy.json' daemon -- '{args}'",
        "• warm check of mypy: dmypy --status-file '{state}/dmypy.json' check",
    ] {
        assert!(text.contains(line), "{line} in:\n{text}");
    }
}

#[test]
fn a_keeper_named_by_a_committed_state_file_is_not_believed() {
    let ws = repo(MYPY);
    let root = ws.path();
    let _stops = Stops(root);
    // A pid from the folder names any process: here this test's own.
    let me = std::process::id();
    write(
        root,
        ".qgates/warm/mypy/state.json",
        &format!(
            "{{\"gate\": \"mypy\", \"keeper_pid\": {me}, \"daemon_pid\": {me}, \"identity\": \"x\", \"started\": 0, \"command\": \"x\", \"ready\": true, \"idle_s\": 900}}"
        ),
    );
    let out = qgates(root).args(["daemon", "stop"]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "no warm process was running"
    );
    let report = check(root, true);
    assert_eq!(common::gate(&report, "mypy")["warm"], true, "{report}");
    assert_ne!(pid(&state(root), "keeper_pid"), me as i32);
}

#[test]
fn warm_settings_that_cannot_work_are_configuration_errors() {
    for (config, says) in [
        (
            "version: 1\ngates:\n  t:\n    command: [mypy]\n    warm: true\n",
            "`warm: true` needs a warm process",
        ),
        (
            "version: 1\ngates:\n  t:\n    command: [mypy]\n    warm: { serve: [], check: [dmypy, check] }\n",
            "warm.serve is empty",
        ),
        (
            "version: 1\ngates:\n  t:\n    command: [mypy]\n    warm: { serve: [dmypy, \"{port}\"], check: [dmypy, check] }\n",
            "warm.serve uses `{port}`",
        ),
        (
            "version: 1\ngates:\n  t:\n    command: [mypy]\n    warm: { serve: [dmypy, \"x{args}\"], check: [dmypy, check] }\n",
            "`{args}` stands for several arguments",
        ),
        (
            "version: 1\nwarm_idle_minutes: 0\ngates:\n  t: { preset: mypy }\n",
            "warm_idle_minutes must be more than 0",
        ),
        (
            "version: 1\ngates:\n  t:\n    command: [mypy]\n    warm: { serve: [dmypy, daemon], check: [dmypy, check], protocol: grpc }\n",
            "warm.protocol `grpc` is not one qgates speaks",
        ),
        (
            "version: 1\ngates:\n  t:\n    command: [mypy]\n    warm: { serve: [dmypy, daemon], check: [dmypy, check], protocol: dmypy }\n",
            "give it as warm.ready_file",
        ),
        (
            "version: 1\ngates:\n  t:\n    command: [mypy]\n    warm: { check: [dmypy, check] }\n",
            "warm needs either `serve` and `check`",
        ),
        (
            "version: 1\ngates:\n  t:\n    command: [mypy]\n    warm: { serve: [dmypy, daemon], check: [dmypy, check], settings: { a: 1 } }\n",
            "warm.settings are a language server's",
        ),
    ] {
        let ws = repo(config);
        let out = qgates(ws.path())
            .args(["check", "--warm"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{config}: {stderr}");
        assert!(stderr.contains(says), "{says} in:\n{stderr}");
    }
}

#[test]
fn check_the_agent_server_and_the_language_server_share_one_daemon() {
    let ws = repo(MYPY);
    let root = ws.path();
    let _stops = Stops(root);
    check(root, true);
    let daemon = pid(&state(root), "daemon_pid");

    let path = common::path_with_tools();
    let mut agent = common::mcp::Server::start_with_env(root, &[("PATH", Path::new(&path))]);
    agent.request(
        1,
        "initialize",
        serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}}),
    );
    agent.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let answer = agent.call(
        2,
        "run_quality_gates",
        serde_json::json!({"scope": "project"}),
    );
    let page = &answer["structuredContent"];
    assert_eq!(common::gate(page, "mypy")["warm"], true, "{answer}");
    assert_eq!(findings(page), findings(&check(root, false)));

    let trust = tempfile::tempdir().unwrap();
    let mut editor = common::lsp::LspClient::spawn(
        root,
        &trust.path().join("t.json"),
        common::lsp::TrustAnswer::NotNow,
    );
    editor.initialize(serde_json::json!({"trusted": true}));
    let ran = editor
        .request(
            "workspace/executeCommand",
            serde_json::json!({"command": "qgates.run", "arguments": [{"scope": "project"}]}),
        )
        .expect("qgates.run");
    assert_eq!(common::gate(&ran["report"], "mypy")["warm"], true, "{ran}");
    editor.shutdown();
    assert_eq!(
        pid(&state(root), "daemon_pid"),
        daemon,
        "one daemon served all three"
    );
}

#[test]
fn a_warm_process_that_fails_to_start_is_not_started_again_on_every_check() {
    // Its daemon ends at once, and says why; each start is counted in starts.txt.
    let ws = repo(
        "version: 1\ngates:\n  mypy:\n    preset: mypy\n    warm:\n      serve: [sh, -c, \"echo start >> starts.txt; echo no daemon here >&2; exit 3\"]\n      check: [dmypy, --status-file, \"{state}/dmypy.json\", check]\n      ready_file: \"{state}/dmypy.json\"\n",
    );
    let root = ws.path();
    let _stops = Stops(root);
    let starts = || {
        std::fs::read_to_string(root.join("starts.txt"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    let cold = findings(&check(root, false));
    let note = |report: &Value| report["scope"]["note"].as_str().unwrap_or("").to_string();

    let first = check(root, true);
    assert_eq!(findings(&first), cold);
    assert!(
        note(&first).contains("gate `mypy`: its warm process could not start (")
            && note(&first).contains("no daemon here"),
        "{first}"
    );
    assert_eq!(starts(), 1);

    // The next check runs cold at once, and says since when and until when.
    let second = check(root, true);
    assert_eq!(findings(&second), cold);
    assert!(
        note(&second).contains(
            "no daemon here; tried again in 15 min, or at once after `qgates daemon stop`"
        ),
        "{}",
        note(&second)
    );
    assert_eq!(starts(), 1, "not started again");

    // `qgates daemon stop` forgets the failure.
    qgates(root).args(["daemon", "stop"]).assert().success();
    check(root, true);
    assert_eq!(starts(), 2, "tried again after `daemon stop`");
}
