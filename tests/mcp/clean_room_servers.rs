//! Clean-room runs asked for by an agent (`run_quality_gates` with `clean_room`) and by an
//! editor (`qgates.run` with `clean_room`): they check the commit, not the working tree, and run
//! only when what the configuration committed there runs — its commands and the scripts as
//! committed — is what a person trusted for the workspace.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::lsp::{LspClient, TrustAnswer};
use common::mcp::Server;
use common::{git, path_with_tools, tool, trusted, write};
use serde_json::{Value, json};

/// Flags `FILE:1: E1 bad` for every file containing "BAD".
const LINTER: &str = "#!/bin/sh\nfound=0\nfor f in \"$@\"; do\n  if grep -q BAD \"$f\"; then echo \"$f:1: E1 bad\"; found=1; fi\ndone\nexit $found\n";

const CONFIG: &str = "version: 1\ngates:\n  lint:\n    command: [\"./lint.sh\"]\n    file_types: [\".py\"]\n    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[^:\\n]+):(?P<line>\\d+): (?P<code>E\\d+) (?P<message>.+)$'\n";

/// A repository whose committed `a.py` fails the lint, fixed in the working tree only. With
/// `changed_script`, the working tree's `lint.sh` differs from the committed one too.
fn repo(changed_script: bool) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    tool(root, "lint.sh", LINTER);
    write(root, "quality.yaml", CONFIG);
    write(root, "a.py", "BAD\n");
    write(root, ".gitignore", ".qgates/\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "start"]);
    write(root, "a.py", "ok\n");
    if changed_script {
        tool(root, "lint.sh", "#!/bin/sh\nexit 0\n");
    }
    ws
}

/// A repository whose linter is installed into `.venv/bin` (untracked) by its `deps` gate, as
/// `uv sync` installs ruff: the committed `a.py` fails, the working tree's is fixed.
fn repo_with_installed_tool() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    tool(root, "tools/lint.sh", LINTER);
    write(
        root,
        "install.sh",
        "mkdir -p .venv/bin && cp tools/lint.sh .venv/bin/lint && chmod +x .venv/bin/lint\n",
    );
    write(
        root,
        "quality.yaml",
        &CONFIG.replace("./lint.sh", "lint").replace(
            "gates:\n",
            "gates:\n  install:\n    kind: deps\n    command: [\"sh\", \"install.sh\"]\n    pass_files: false\n    parsing: {strategy: exit_code}\n",
        ),
    );
    write(root, "a.py", "BAD\n");
    write(root, ".gitignore", ".qgates/\n.venv/\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "start"]);
    write(root, "a.py", "ok\n");
    let installed = Command::new("sh")
        .arg("install.sh")
        .current_dir(root)
        .status()
        .unwrap();
    assert!(installed.success());
    ws
}

fn worktree_count(root: &Path) -> usize {
    git(root, &["worktree", "list"]).lines().count()
}

fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

fn mcp(root: &Path, tmp: &Path) -> Server {
    let mut s = Server::start_with_env(root, &[("TMPDIR", tmp)]);
    s.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}}),
    );
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s
}

fn error_text(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().unwrap().to_string()
}

#[test]
fn mcp_clean_room_checks_the_commit_when_its_configuration_is_trusted() {
    let ws = repo(false);
    let tmp = tempfile::tempdir().unwrap();
    let mut s = mcp(ws.path(), tmp.path());
    let r = s.call(2, "run_quality_gates", json!({"clean_room": true}));
    assert_ne!(r["isError"], true, "{r}");
    let report = &r["structuredContent"];
    assert_eq!(report["overall_pass"], false, "the commit fails: {report}");
    assert_eq!(report["gates"][0]["violations"][0]["file"], "a.py");
    assert_eq!(report["scope"]["mode"], "project");
    assert_eq!(report["clean_room"]["rev"], "HEAD");
    assert_eq!(report["clean_room"]["uncommitted_changes"], 1);
    let line = r["content"][0]["text"].as_str().unwrap();
    assert!(
        line.contains("(HEAD): 1 uncommitted change not included; worktree removed"),
        "{line}"
    );
    assert_eq!(worktree_count(ws.path()), 1);
    assert!(is_empty(tmp.path()));
    // The kinds to leave out apply in the clean room too.
    let r = s.call(
        7,
        "run_quality_gates",
        json!({"clean_room": true, "skip_kinds": ["other"]}),
    );
    let gate = &r["structuredContent"]["gates"][0];
    assert_eq!(gate["status"], "skipped", "{r}");
    assert!(is_empty(tmp.path()));
    // The working tree, checked as usual, passes: the fix is there.
    let r = s.call(3, "run_quality_gates", json!({"scope": "project"}));
    assert_eq!(r["structuredContent"]["overall_pass"], true, "{r}");

    let e = error_text(&s.call(4, "run_quality_gates", json!({"rev": "HEAD"})));
    assert!(e.contains("add \"clean_room\": true"), "{e}");
    let e = error_text(&s.call(
        5,
        "run_quality_gates",
        json!({"clean_room": true, "fix": true}),
    ));
    assert!(
        e.contains("`fix` and `clean_room` do not go together"),
        "{e}"
    );
    let e = error_text(&s.call(
        6,
        "run_quality_gates",
        json!({"clean_room": true, "rev": "nope"}),
    ));
    assert!(e.contains("`nope` does not name a commit"), "{e}");
}

#[test]
fn mcp_clean_room_refuses_a_committed_configuration_nobody_trusted() {
    // What was trusted is the working tree's harmless lint.sh; the commit's runs something else.
    let ws = repo(true);
    let tmp = tempfile::tempdir().unwrap();
    let mut s = mcp(ws.path(), tmp.path());
    let r = s.call(2, "run_quality_gates", json!({"scope": "project"}));
    assert_eq!(
        r["structuredContent"]["overall_pass"], true,
        "trusted as it is: {r}"
    );
    let e = error_text(&s.call(3, "run_quality_gates", json!({"clean_room": true})));
    assert!(
        e.starts_with("Clean room at `HEAD`: nothing was run: the configuration and scripts committed there run something other than what was trusted"),
        "{e}"
    );
    assert!(e.contains("trust what is committed"), "{e}");
    assert!(
        e.contains("runs lint.sh from this repository"),
        "it lists what would run: {e}"
    );
    assert_eq!(worktree_count(ws.path()), 1);
    assert!(is_empty(tmp.path()));
}

#[test]
fn mcp_clean_room_runs_when_only_the_installed_tools_differ() {
    // The working tree's `lint` is `.venv/bin/lint`; the fresh checkout has none until its deps
    // gate installs it. What runs is otherwise the same, so the trusted workspace may run it.
    let ws = repo_with_installed_tool();
    let tmp = tempfile::tempdir().unwrap();
    let mut s = mcp(ws.path(), tmp.path());
    let r = s.call(2, "run_quality_gates", json!({"scope": "project"}));
    assert_eq!(r["structuredContent"]["overall_pass"], true, "{r}");
    let r = s.call(3, "run_quality_gates", json!({"clean_room": true}));
    assert_ne!(r["isError"], true, "{r}");
    let report = &r["structuredContent"];
    let status = |id: &str| {
        report["gates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["id"] == id)
            .map(|g| g["status"].clone())
    };
    assert_eq!(status("install"), Some(json!("passed")), "{report}");
    assert_eq!(status("lint"), Some(json!("failed")), "{report}");
    assert_eq!(
        report["gates"][1]["violations"][0]["file"], "a.py",
        "{report}"
    );
    assert_eq!(worktree_count(ws.path()), 1);
    assert!(is_empty(tmp.path()));

    // A committed script that differs from the trusted one is still refused.
    let trusted_installer = std::fs::read_to_string(ws.path().join("install.sh")).unwrap();
    tool(ws.path(), "install.sh", "echo changed\n");
    git(ws.path(), &["commit", "-qam", "another installer"]);
    tool(ws.path(), "install.sh", &trusted_installer);
    let e = error_text(&s.call(4, "run_quality_gates", json!({"clean_room": true})));
    assert!(
        e.contains("What differs:\n• gate install: sh install.sh"),
        "{e}"
    );
    assert!(!e.contains("gate lint"), "only what differs is named: {e}");
}

#[test]
fn mcp_a_cancelled_clean_room_run_stops_its_gate_and_removes_the_checkout() {
    // The gate says its pid and waits; cancelling the call must end it and the worktree.
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    tool(
        root,
        "tools/wait.sh",
        "#!/bin/sh\necho $$ > \"$MARK_DIR/pid.tmp\"\nmv \"$MARK_DIR/pid.tmp\" \"$MARK_DIR/pid\"\nexec sleep 60\n",
    );
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  wait:\n    command: [tools/wait.sh]\n    pass_files: false\n    parsing: {strategy: exit_code}\n",
    );
    write(root, ".gitignore", ".qgates/\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "start"]);
    let (tmp, marks) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut s = Server::start_with_env(root, &[("TMPDIR", tmp.path()), ("MARK_DIR", marks.path())]);
    s.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}}),
    );
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "run_quality_gates", "arguments": {"clean_room": true}}})
        .to_string(),
    );
    let pid_file = marks.path().join("pid");
    wait_for("the gate to start", || pid_file.is_file());
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_string();
    assert_eq!(
        worktree_count(root),
        2,
        "the clean room is open while the gate runs"
    );
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}}"#);
    wait_for("the gate to be stopped", || {
        !Path::new(&format!("/proc/{pid}")).exists()
    });
    wait_for("the checkout to be removed", || {
        worktree_count(root) == 1 && is_empty(tmp.path())
    });
    // The server lives on, and the cancelled call gets no answer (the next one is the first).
    let r = s.call(3, "last_summary", json!({}));
    assert!(r.get("content").is_some(), "{r}");
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "waited 30 s for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn lsp(root: &Path, tmp: &Path, store: &Path) -> LspClient {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_qgates"));
    cmd.arg("lsp")
        .current_dir(root)
        .env("PATH", path_with_tools())
        .env("QGATES_TRUST_FILE", store)
        .env("TMPDIR", tmp)
        .env_remove("QGATES_LOG");
    let mut c = LspClient::spawn_command(cmd, root, TrustAnswer::NotNow);
    c.initialize(json!({}));
    c
}

fn run(c: &mut LspClient, args: Value) -> Result<Value, Value> {
    c.request(
        "workspace/executeCommand",
        json!({"command": "qgates.run", "arguments": [args]}),
    )
}

#[test]
fn lsp_run_with_clean_room_checks_the_commit_when_trusted_and_refuses_otherwise() {
    let ws = repo(false);
    let tmp = tempfile::tempdir().unwrap();
    let (_store_dir, store) = trusted(ws.path());
    let mut c = lsp(ws.path(), tmp.path(), &store);
    let answer = run(&mut c, json!({"clean_room": true})).expect("a report");
    let report = &answer["report"];
    assert_eq!(report["overall_pass"], false, "{answer}");
    assert_eq!(report["gates"][0]["violations"][0]["file"], "a.py");
    assert_eq!(report["clean_room"]["uncommitted_changes"], 1);
    let line = answer["summary_line"].as_str().unwrap();
    assert!(line.contains("clean room at "), "{line}");
    assert_eq!(worktree_count(ws.path()), 1);
    assert!(is_empty(tmp.path()));
    let e = run(&mut c, json!({"rev": "HEAD"})).expect_err("rev alone");
    assert!(e["message"].as_str().unwrap().contains("clean_room"), "{e}");
    c.shutdown();

    let ws = repo(true);
    let (_store_dir, store) = trusted(ws.path());
    let mut c = lsp(ws.path(), tmp.path(), &store);
    let e = run(&mut c, json!({"clean_room": true})).expect_err("not trusted");
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("run something other than what was trusted"),
        "{message}"
    );
    assert!(
        message.contains("runs lint.sh from this repository"),
        "{message}"
    );
    assert_eq!(worktree_count(ws.path()), 1);
    assert!(is_empty(tmp.path()));
    c.shutdown();

    // Tools the deps gate installs into .venv make no difference in the editor either.
    let ws = repo_with_installed_tool();
    let (_store_dir, store) = trusted(ws.path());
    let mut c = lsp(ws.path(), tmp.path(), &store);
    let answer = run(&mut c, json!({"clean_room": true})).expect("a report");
    assert_eq!(answer["report"]["gates"][1]["status"], "failed", "{answer}");
    assert_eq!(
        answer["report"]["gates"][1]["violations"][0]["file"],
        "a.py"
    );
    c.shutdown();

    // A folder nobody trusted runs no clean room; nothing is checked out.
    let empty_store = tmp.path().join("no-trust.json");
    let mut c = lsp(ws.path(), tmp.path(), &empty_store);
    let e = run(&mut c, json!({"clean_room": true})).expect_err("not trusted");
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("the folder's own gates are not trusted"),
        "{message}"
    );
    assert_eq!(worktree_count(ws.path()), 1);
    c.shutdown();
    assert!(!empty_store.exists());
    assert!(is_empty(tmp.path()));
}
