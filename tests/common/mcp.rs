//! `qgates mcp` on the wire, for the tests: the real binary over pipes, raw JSON-RPC lines in,
//! every line out parsed as a protocol message.
#![allow(dead_code, reason = "each test file uses a different subset")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

pub struct Server {
    /// The trust store in which the workspace is trusted (a person ran `qgates trust`).
    _trust: tempfile::TempDir,
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Server {
    /// Starts `qgates mcp` in `root`, whose configuration must be in place: it is trusted first.
    pub fn start(root: &std::path::Path) -> Server {
        Server::start_with_env(root, &[])
    }

    /// `start`, with these variables set for the server (e.g. its `TMPDIR`).
    pub fn start_with_env(root: &std::path::Path, env: &[(&str, &std::path::Path)]) -> Server {
        let (trust, store) = super::trusted(root);
        let mut child = Command::new(env!("CARGO_BIN_EXE_qgates"))
            .envs(env.iter().copied())
            .arg("mcp")
            .current_dir(root)
            .env("QGATES_TRUST_FILE", &store)
            .env_remove("QGATES_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start qgates mcp");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Server {
            _trust: trust,
            child,
            stdin,
            lines,
        }
    }

    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line the server writes, which must be a JSON-RPC message.
    pub fn next_message(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("the server answered within a minute");
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a line that is not JSON ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        v
    }

    /// Sends a request and returns its response; no other answer may come before it.
    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(&msg.to_string());
        loop {
            let v = self.next_message();
            if v["id"] == id {
                return v;
            }
            assert!(v.get("id").is_none(), "an answer to another request: {v}");
        }
    }

    pub fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        let r = self.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
        r["result"].clone()
    }
}
