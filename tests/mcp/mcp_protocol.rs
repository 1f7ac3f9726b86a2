//! `qgates mcp` on the wire, without an SDK: raw JSON-RPC lines in, and every line out is a
//! protocol message. Bad input of every kind gets an answer and the server keeps serving; closing
//! stdin ends it cleanly. (tests/mcp/mcp_server.rs drives it with the official Python SDK.)

use crate::common;

use std::io::Write;

use common::mcp::Server;
use common::{tool, workspace, write};
use serde_json::{Value, json};

/// Flags `FILE:1: E1 bad` for every file containing "BAD".
const LINTER: &str = "#!/bin/sh\nfound=0\nfor f in \"$@\"; do\n  if grep -q BAD \"$f\"; then echo \"$f:1: E1 bad\"; found=1; fi\ndone\nexit $found\n";

const CONFIG: &str = "version: 1\ngates:\n  lint:\n    command: [\"./lint.sh\"]\n    file_types: [\".py\"]\n    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[^:\\n]+):(?P<line>\\d+): (?P<code>E\\d+) (?P<message>.+)$'\n";

fn error_text(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().unwrap().to_string()
}

#[test]
fn bad_input_gets_answers_and_the_server_lives_on() {
    let ws = workspace(&[("a.py", "BAD\n"), ("b.py", "ok\n")]);
    let root = ws.path();
    tool(root, "lint.sh", LINTER);
    write(root, "quality.yaml", CONFIG);
    let mut s = Server::start(root);

    let init = s.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "raw", "version": "0"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "qgates", "{init}");
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s.send("this is not JSON");
    let answer = s.next_message();
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert_eq!(answer["error"]["code"], -32700, "{answer}");

    let e = error_text(&s.call(2, "run_quality_gates", json!({"scope": ["project"]})));
    assert!(
        e.contains("argument `scope`: invalid type: sequence"),
        "{e}"
    );
    let e = error_text(&s.call(3, "run_quality_gates", json!({"gate": ["lint"]})));
    assert!(e.contains("unknown field `gate`"), "{e}");
    let e = error_text(&s.call(4, "run_quality_gates", json!({"files": ["/"]})));
    assert!(e.contains("is outside the workspace"), "{e}");
    let e = error_text(&s.call(5, "last_summary", json!({})));
    assert!(e.contains("No run yet"), "{e}");

    // Arguments that are not an object: the SDK rejects the request itself; no crash.
    let r = s.request(
        6,
        "tools/call",
        json!({"name": "run_quality_gates", "arguments": [1]}),
    );
    assert!(r["error"].is_object(), "{r}");

    // Still serving: a real run, with the report as structured content and as text.
    let r = s.call(7, "run_quality_gates", json!({"scope": "project"}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("❌ 1/1 gates failed — 1 violation"),
        "{r}"
    );
    // The findings are in the text, by file; the JSON is not repeated there.
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("\na.py (as checked: blob "), "{text}");
    assert_eq!(r["content"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(
        r["structuredContent"]["gates"][0]["violations"][0]["file"],
        "a.py"
    );
    let last = s.call(8, "last_summary", json!({}));
    assert_eq!(last["structuredContent"], r["structuredContent"]);

    // Closing stdin ends the server with exit code 0.
    drop(s.stdin.take());
    let status = s.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}

/// Every request gets an answer that carries its id, however wrong its params or its bytes; a
/// malformed notification gets none; and the server goes on serving.
#[test]
fn malformed_requests_are_answered_with_their_id() {
    let ws = workspace(&[("a.py", "ok\n")]);
    let mut s = Server::start(ws.path());
    s.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "raw", "version": "0"}}),
    );
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let cases: Vec<(u64, Vec<u8>, i64)> = vec![
        (10, br#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":5}"#.to_vec(), -32602),
        (11, br#"{"jsonrpc":"2.0","id":11,"method":"tools/list","params":[1]}"#.to_vec(), -32602),
        (12, br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":5}}"#.to_vec(), -32602),
        (
            13,
            br#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"run_quality_gates","arguments":[1]}}"#.to_vec(),
            -32602,
        ),
        (
            14,
            format!(r#"{{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{{"name":"last_summary","arguments":{{"x":{deep}}}}}}}"#).into_bytes(),
            -32700,
        ),
        (
            15,
            [&br#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":""#[..], b"\xff\"}}"].concat(),
            -32700,
        ),
        (16, br#"{"jsonrpc":"1.0","id":16,"method":"ping"}"#.to_vec(), -32600),
        (17, br#"{"jsonrpc":"2.0","id":17,"method":"qgates/unknown"}"#.to_vec(), -32601),
    ];
    for (id, line, code) in cases {
        let stdin = s.stdin.as_mut().unwrap();
        stdin.write_all(&line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        let answer = s.next_message();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], code, "{answer}");
    }
    // Malformed notifications: no answer (the next message is the answer to the ping after them).
    s.send(&format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{deep}}}"#
    ));
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#);
    s.send(r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":[]}"#);
    s.send(r#"{"jsonrpc":"2.0","id":20,"method":"ping"}"#);
    let pong = s.next_message();
    assert_eq!(
        (pong["id"].clone(), pong["result"].clone()),
        (json!(20), json!({})),
        "{pong}"
    );
    drop(s.stdin.take());
    assert_eq!(s.child.wait().unwrap().code(), Some(0));
}

/// A seeded run of 400 mutated lines (deep nesting, invalid UTF-8, wrong-typed params, truncated
/// JSON, huge numbers, unknown methods with and without an id), each followed by a `ping` that
/// must be answered; a mutated request whose id can be read must get its own answer too.
#[test]
fn fuzzed_lines_never_silence_the_server() {
    use proptest::prelude::RngExt;
    use proptest::test_runner::{RngAlgorithm, TestRng};

    let ws = workspace(&[("a.py", "ok\n")]);
    let mut s = Server::start(ws.path());
    s.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "raw", "version": "0"}}),
    );
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let methods = [
        "tools/call",
        "tools/list",
        "ping",
        "initialize",
        "notifications/cancelled",
        "notifications/initialized",
        "qgates/unknown",
    ];
    let params = [
        json!(5),
        json!([1]),
        json!("x"),
        json!(null),
        json!({"name": 5}),
        json!({"name": "last_summary", "arguments": [1]}),
        json!({"name": "last_summary", "arguments": {"x": 1}}),
        json!({"name": "nope", "arguments": {}}),
        json!({"requestId": {"a": []}, "reason": 3}),
        json!({"cursor": 1e300}),
    ];
    let mut codes = std::collections::BTreeMap::new();
    for n in 0..400u64 {
        let id = 1_000 + n;
        let mut msg = json!({"jsonrpc": "2.0", "method": methods[rng.random_range(0..methods.len())],
                             "params": params[rng.random_range(0..params.len())]});
        if rng.random_bool(0.7) {
            msg["id"] = json!(id);
        }
        let mut line = msg.to_string().into_bytes();
        let mut readable_id = msg.get("id").is_some();
        match n % 5 {
            0 => {
                let depth = rng.random_range(100..300);
                let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
                let text = String::from_utf8(line).unwrap();
                line = text
                    .replacen(r#""jsonrpc""#, &format!(r#""x":{deep},"jsonrpc""#), 1)
                    .into_bytes();
            }
            1 => {
                let at = rng.random_range(0..line.len());
                line.insert(at, 0xff);
                readable_id = false; // the byte may land inside the id
            }
            2 => {
                line.truncate(rng.random_range(0..line.len()));
                readable_id = false;
            }
            3 => {
                let text = String::from_utf8(line).unwrap();
                line = text
                    .replacen(
                        "\"params\":",
                        "\"params\":{\"big\":123456789012345678901234567890e999},\"p\":",
                        1,
                    )
                    .into_bytes();
            }
            _ => {}
        }
        let stdin = s.stdin.as_mut().unwrap();
        stdin.write_all(&line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        s.send(&json!({"jsonrpc": "2.0", "id": 100_000 + n, "method": "ping"}).to_string());
        let mut own_answer = false;
        loop {
            let m = s.next_message();
            if let Some(code) = m["error"]["code"].as_i64() {
                *codes.entry(code).or_insert(0) += 1;
            }
            own_answer |= m["id"] == id;
            if m["id"] == 100_000 + n {
                assert_eq!(m["result"], json!({}), "{m}");
                break;
            }
        }
        if readable_id && !own_answer {
            let m = s.next_message();
            if let Some(code) = m["error"]["code"].as_i64() {
                *codes.entry(code).or_insert(0) += 1;
            }
            assert_eq!(
                m["id"],
                id,
                "no answer to {}",
                String::from_utf8_lossy(&line)
            );
        }
    }
    for code in [-32700, -32602, -32601] {
        assert!(codes.get(&code).copied().unwrap_or(0) >= 10, "{codes:?}");
    }
    drop(s.stdin.take());
    assert_eq!(s.child.wait().unwrap().code(), Some(0));
}
