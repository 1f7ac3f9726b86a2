//! Workspace trust in `qgates mcp`: an agent works in the repository it checks, so it could
//! write a `quality.yaml` that runs anything and then ask the server to run it. The server runs
//! only what a person trusted with `qgates trust`; anything else is a tool error that says so
//! and shows what would run. Gates record their starts in marker files outside the workspace.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};

use common::lsp::WAIT;
use common::markers::{Markers, commit_all, gate_config};
use common::{path_with_tools, qgates, tool, write};
use serde_json::{Value, json};

/// `qgates mcp` in a workspace, spoken to in raw JSON-RPC lines.
struct McpServer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl McpServer {
    fn start(root: &Path, trust_file: &Path) -> McpServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_qgates"))
            .arg("mcp")
            .current_dir(root)
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
        let stdin = child.stdin.take().expect("stdin");
        let mut server = McpServer {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "trust-test", "version": "0"}}),
        );
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, msg: &Value) {
        writeln!(self.stdin, "{msg}").expect("write to the server");
        self.stdin.flush().expect("flush");
    }

    /// Sends a request and returns its response.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(WAIT)
                .expect("the server answers in time");
            let msg: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if msg["id"] == id {
                return msg;
            }
        }
    }

    /// Calls `run_quality_gates`; returns the tool result.
    fn run_gates(&mut self, arguments: Value) -> Value {
        let answer = self.request(
            "tools/call",
            json!({"name": "run_quality_gates", "arguments": arguments}),
        );
        answer["result"].clone()
    }
}

impl Drop for McpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The result is a refusal that sends a person to `qgates trust` and shows `command`.
fn assert_refused(result: &Value, command: &str) {
    assert_eq!(result["isError"], true, "a tool error: {result}");
    let text = text_of(result);
    assert!(
        text.contains("qgates trust"),
        "says a person must run `qgates trust`: {text}"
    );
    assert!(text.contains(command), "shows what would run: {text}");
}

#[test]
fn the_agent_server_runs_only_a_configuration_a_person_trusted() {
    let markers = Markers::new();
    let ws = tempfile::tempdir().unwrap();
    tool(ws.path(), "check.sh", &markers.script("trusted"));
    write(
        ws.path(),
        "quality.yaml",
        &gate_config(r#"["./check.sh"]"#, None),
    );
    write(ws.path(), "a.py", "x = 1\n");
    commit_all(ws.path());
    let trust = tempfile::tempdir().unwrap();
    let trust_file = trust.path().join("trust.json");
    let mut server = McpServer::start(ws.path(), &trust_file);

    assert_refused(&server.run_gates(json!({"scope": "project"})), "check.sh");
    assert!(!markers.exists("trusted"), "nothing ran before trust");

    let out = qgates(ws.path())
        .env("QGATES_TRUST_FILE", &trust_file)
        .args(["trust", "--yes"])
        .arg(ws.path())
        .output()
        .expect("run qgates trust");
    assert!(
        out.status.success(),
        "qgates trust --yes: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = server.run_gates(json!({"scope": "project"}));
    assert_ne!(result["isError"], true, "{result}");
    assert_eq!(markers.count("trusted"), 1, "the trusted gate ran");

    // The agent edits the configuration to run something of its own, as a gate or as a fixer.
    write(
        ws.path(),
        "quality.yaml",
        &gate_config(
            &markers.gate_argv("edited"),
            Some(&markers.fixer_argv("edited-fix")),
        ),
    );
    let edited = markers.path("edited").display().to_string();
    assert_refused(&server.run_gates(json!({"scope": "project"})), &edited);
    assert_refused(
        &server.run_gates(json!({"scope": "project", "fix": true})),
        &edited,
    );
    assert!(!markers.exists("edited"), "the edited gate did not run");
    assert!(!markers.exists("edited-fix"), "nor its fixer");
    assert_eq!(markers.count("trusted"), 1, "nor the trusted gate");
}
