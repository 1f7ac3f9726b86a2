//! No client input silences the language server: each malformed message (too deep, not UTF-8,
//! a lying `Content-Length`, wrong types, a `$/` request) gets its JSON-RPC error, or only a log
//! line when it is a notification, and the next valid request is answered. First the cases one
//! by one with their exact answers, then a seeded fuzz run of 2 000 mutated messages. The server
//! runs in this process over pipes, so the run takes seconds.

use crate::common;

use common::lsp::{LspClient, TrustAnswer, WAIT};
use common::lsp_wire::frame;
use common::workspace;
use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Far longer than an answer takes in process (well under a millisecond).
const PROBE_WAIT: Duration = Duration::from_secs(10);

fn framed(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

fn started(root: &std::path::Path) -> LspClient {
    let mut c = LspClient::in_process(root, TrustAnswer::NotNow);
    c.initialize(json!({"trusted": false}));
    c
}

/// A valid request, which must be answered (with a result or an error) within seconds.
fn probe(c: &mut LspClient) {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let id = format!("probe-{}", NEXT.fetch_add(1, Ordering::Relaxed));
    c.send_bytes(&frame(&json!({"jsonrpc": "2.0", "id": id, "method": "workspace/executeCommand", "params": {"command": "qgates.summary"}})));
    c.wait_for(
        |m| m["id"] == id.as_str() && m.get("method").is_none(),
        PROBE_WAIT,
    );
}

/// The errors answered with a null id so far (the answers to messages whose id was unreadable).
fn null_id_errors(c: &LspClient) -> usize {
    c.all_messages()
        .iter()
        .filter(|m| m.get("error").is_some() && m["id"].is_null())
        .count()
}

#[test]
fn each_bad_message_gets_its_answer_and_reading_goes_on() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    let mut c = started(ws.path());
    let uri = c.uri("a.py");
    let deep = nested(127);
    // Requests: the answer carries the request's id, read past the part that could not be.
    let requests: Vec<(&str, Vec<u8>, i64)> = vec![
        (
            "hover, position nested 127 deep",
            format!(r#"{{"jsonrpc":"2.0","id":"h1","method":"textDocument/hover","params":{{"textDocument":{{"uri":"{uri}"}},"position":{deep}}}}}"#).into_bytes(),
            -32700,
        ),
        (
            "executeCommand, argument nested 127 deep",
            format!(r#"{{"jsonrpc":"2.0","id":"h2","method":"workspace/executeCommand","params":{{"command":"qgates.summary","arguments":[{deep}]}}}}"#).into_bytes(),
            -32700,
        ),
        (
            "unknown method, params nested 127 deep",
            format!(r#"{{"jsonrpc":"2.0","id":"h3","method":"qgates/unknown","params":{deep}}}"#)
                .into_bytes(),
            -32700,
        ),
        (
            "hover, position not UTF-8",
            [
                br#"{"jsonrpc":"2.0","id":"h4","method":"textDocument/hover","params":{"textDocument":{"uri":"file:///x.py"},"position":""#.as_slice(),
                b"\xff\xfe\"}}",
            ]
            .concat(),
            -32700,
        ),
        (
            "executeCommand, argument not UTF-8",
            [
                br#"{"jsonrpc":"2.0","id":"h5","method":"workspace/executeCommand","params":{"command":"qgates.summary","arguments":[""#.as_slice(),
                b"\xc3\"]}}",
            ]
            .concat(),
            -32700,
        ),
        (
            "a field the library ignores, not UTF-8",
            [
                br#"{"jsonrpc":"2.0","id":"h6","method":"qgates/unknown","extra":""#.as_slice(),
                b"\xff\"}",
            ]
            .concat(),
            -32700,
        ),
        (
            "a field the library ignores, nested 200 deep",
            format!(r#"{{"jsonrpc":"2.0","id":"h7","method":"qgates/unknown","extra":{}}}"#, nested(200)).into_bytes(),
            -32700,
        ),
        (
            "a duplicated method",
            br#"{"jsonrpc":"2.0","id":"h8","method":"a","method":"b"}"#.to_vec(),
            -32601,
        ),
        (
            "$/setTrace with an id",
            br#"{"jsonrpc":"2.0","id":"h9","method":"$/setTrace","params":{"value":"off"}}"#
                .to_vec(),
            -32601,
        ),
        (
            "an unknown $/ request",
            br#"{"jsonrpc":"2.0","id":"h10","method":"$/qgates/unknown"}"#.to_vec(),
            -32601,
        ),
        (
            "$/cancelRequest with an id",
            br#"{"jsonrpc":"2.0","id":"h11","method":"$/cancelRequest","params":{"id":1}}"#
                .to_vec(),
            -32601,
        ),
    ];
    // Their ids are h1, h2, … in order.
    for (n, (what, body, code)) in requests.into_iter().enumerate() {
        let id = format!("h{}", n + 1);
        assert!(String::from_utf8_lossy(&body).contains(&format!(r#""id":"{id}""#)));
        c.send_bytes(&framed(&body));
        let answer = c.wait_for(
            |m| m["id"] == id.as_str() && m.get("method").is_none(),
            WAIT,
        );
        assert_eq!(answer["error"]["code"], code, "{what}: {answer}");
        probe(&mut c);
    }
    // Notifications: nothing to answer, and nothing is (the guard's answers come before the
    // answer to the request sent after them).
    let before = null_id_errors(&c);
    for body in [
        format!(r#"{{"jsonrpc":"2.0","method":"$/cancelRequest","params":{{"id":{deep}}}}}"#)
            .into_bytes(),
        [
            br#"{"jsonrpc":"2.0","method":"qgates/unknown","params":{"x":""#.as_slice(),
            b"\xff\"}}",
        ]
        .concat(),
        br#"{"jsonrpc":"2.0","method":"$/setTrace","params":{"value":"off"}}"#.to_vec(),
        br#"{"jsonrpc":"2.0","method":"$/qgates/unknown","params":{}}"#.to_vec(),
    ] {
        c.send_bytes(&framed(&body));
        probe(&mut c);
    }
    assert_eq!(null_id_errors(&c), before, "{:#?}", c.all_messages());
    // A Content-Length 5 bytes short: that message is a parse error, and the next request is
    // read from its own header on, though no blank line came between.
    let body = br#"{"jsonrpc":"2.0","id":"s1","method":"qgates/unknown","params":{}}"#;
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len() - 5).into_bytes();
    bytes.extend_from_slice(body);
    c.send_bytes(&bytes);
    let parse = c.wait_for(|m| m["error"]["code"] == -32700, WAIT);
    assert_eq!(parse["id"], Value::Null, "{parse}");
    probe(&mut c);
    // Stray bytes before a header, and a header block with a line that is not a header.
    c.send_bytes(b"garbage");
    probe(&mut c);
    c.send_bytes(b"{\"not\": \"a header\"}\r\n");
    probe(&mut c);
    assert!(c.shutdown().is_none(), "in process: no child");
}

/// One mutated message: its bytes, and whether the request sent after it may be swallowed (a
/// `Content-Length` longer than the body takes the next message's first bytes as its own).
struct Mutated {
    bytes: Vec<u8>,
    swallows_next: bool,
    /// The id of a request whose id the server can read, so its answer must come.
    answered: Option<Value>,
}

const METHODS: &[&str] = &[
    "textDocument/hover",
    "textDocument/codeAction",
    "textDocument/formatting",
    "textDocument/diagnostic",
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didSave",
    "textDocument/didClose",
    "workspace/executeCommand",
    "workspace/didChangeConfiguration",
    "workspace/didChangeWatchedFiles",
    "workspace/didChangeWorkspaceFolders",
    "initialize",
    "initialized",
    "$/cancelRequest",
    "$/setTrace",
    "$/qgates/unknown",
    "qgates/unknown",
];

fn random_json(rng: &mut TestRng, depth: u32) -> Value {
    match rng.random_range(0..if depth > 3 { 6 } else { 8 }) {
        0 => Value::Null,
        1 => json!(rng.random_bool(0.5)),
        2 => json!(rng.random_range(-5i64..1_000_000)),
        3 => json!(rng.random_range(-1e300..1e300)),
        4 => json!("é☕😀\t\u{0}x"),
        5 => json!("qgates.summary"),
        6 => Value::Array(
            (0..rng.random_range(0..4))
                .map(|_| random_json(rng, depth + 1))
                .collect(),
        ),
        _ => {
            let keys = [
                "textDocument",
                "uri",
                "position",
                "line",
                "character",
                "command",
                "arguments",
                "id",
                "value",
                "range",
                "text",
                "version",
                "contentChanges",
                "settings",
                "changes",
                "event",
            ];
            let mut map = serde_json::Map::new();
            for _ in 0..rng.random_range(0..4) {
                let key = keys[rng.random_range(0..keys.len())];
                map.insert(key.into(), random_json(rng, depth + 1));
            }
            Value::Object(map)
        }
    }
}

/// A message of the given shape: a request (with an id that no probe uses) or a notification.
fn message(rng: &mut TestRng, n: usize, params: Value) -> Value {
    let method = METHODS[rng.random_range(0..METHODS.len())];
    let mut msg = json!({"jsonrpc": "2.0", "method": method, "params": params});
    if rng.random_bool(0.6) {
        msg["id"] = if rng.random_bool(0.5) {
            json!(format!("fuzz-{n}"))
        } else {
            json!(1_000_000 + n)
        };
    }
    msg
}

fn mutate(rng: &mut TestRng, n: usize, uri: &str) -> Mutated {
    let plain = |bytes| Mutated {
        bytes,
        swallows_next: false,
        answered: None,
    };
    let with_id = |bytes, id: Option<&Value>| Mutated {
        answered: id.cloned(),
        ..plain(bytes)
    };
    let params = random_json(rng, 0);
    let valid = message(rng, n, params);
    let body = serde_json::to_vec(&valid).unwrap();
    match n % 10 {
        // Deep nesting, around serde_json's limit and far past it, in params or elsewhere.
        0 => {
            let deep = nested(rng.random_range(100..400));
            let shape = message(rng, n, json!(null));
            let mut text = serde_json::to_string(&shape).unwrap();
            let place = if rng.random_bool(0.5) {
                r#""params":null"#
            } else {
                r#""jsonrpc""#
            };
            let with = if place == r#""jsonrpc""# {
                format!(r#""deep":{deep},"jsonrpc""#)
            } else {
                format!(r#""params":{{"textDocument":{{"uri":"{uri}"}},"position":{deep}}}"#)
            };
            text = text.replacen(place, &with, 1);
            with_id(framed(text.as_bytes()), shape.get("id"))
        }
        // Invalid UTF-8 at a random place.
        1 => {
            let mut body = body;
            let at = rng.random_range(0..body.len());
            let bad: &[u8] = [
                &b"\xff"[..],
                b"\xc3",
                b"\xed\xa0\x80",
                b"\xf8\x88\x80\x80\x80",
            ][rng.random_range(0..4)];
            body.splice(at..at, bad.iter().copied());
            plain(framed(&body))
        }
        // A Content-Length shorter than the body.
        2 => {
            let short = rng.random_range(1..body.len().min(60));
            let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len() - short).into_bytes();
            bytes.extend_from_slice(&body);
            plain(bytes)
        }
        // A Content-Length longer than the body.
        3 => {
            let mut bytes = format!(
                "Content-Length: {}\r\n\r\n",
                body.len() + rng.random_range(1..30)
            )
            .into_bytes();
            bytes.extend_from_slice(&body);
            Mutated {
                swallows_next: true,
                ..plain(bytes)
            }
        }
        // A header block that is not one: no length, a length that is no number, junk lines.
        4 => {
            let headers = [
                "Content-Type: application/json\r\n\r\n".to_string(),
                "Content-Length: -4\r\n\r\n".to_string(),
                "Content-Length: 99999999999999999999999999\r\n\r\n".to_string(),
                "Content-Length: 1e3\r\n\r\n".to_string(),
                format!("{}\r\n\r\n", "X".repeat(rng.random_range(1..20_000))),
                "{\"a\":1}\r\n".to_string(),
                "\r\n\r\n\r\n".to_string(),
            ];
            plain(
                headers[rng.random_range(0..headers.len())]
                    .clone()
                    .into_bytes(),
            )
        }
        // Known and unknown methods with params of the wrong types.
        5 | 6 => with_id(framed(&body), valid.get("id")),
        // Truncated JSON, framed to its length.
        7 => plain(framed(&body[..rng.random_range(0..body.len())])),
        // Huge and odd numbers, in the id or the params.
        8 => {
            let numbers = [
                "1e400",
                "-1e400",
                "123456789012345678901234567890",
                "-0",
                "1.5",
                "18446744073709551616",
            ];
            let number = numbers[rng.random_range(0..numbers.len())];
            let text = if rng.random_bool(0.5) {
                format!(
                    r#"{{"jsonrpc":"2.0","id":{number},"method":"textDocument/hover","params":{{}}}}"#
                )
            } else {
                format!(
                    r#"{{"jsonrpc":"2.0","id":"fuzz-{n}","method":"textDocument/hover","params":{{"textDocument":{{"uri":"{uri}"}},"position":{{"line":{number},"character":0}}}}}}"#
                )
            };
            plain(framed(text.as_bytes()))
        }
        // Bodies that are JSON but not JSON-RPC, and random bytes.
        _ => {
            let bodies: [Vec<u8>; 5] = [
                br#"[1,2,3]"#.to_vec(),
                br#"{"jsonrpc":"1.0","id":3,"method":"x"}"#.to_vec(),
                br#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#.to_vec(),
                br#"{"jsonrpc":"2.0","id":5,"error":"no"}"#.to_vec(),
                (0..rng.random_range(1..64)).map(|_| rng.random()).collect(),
            ];
            plain(framed(&bodies[rng.random_range(0..bodies.len())]))
        }
    }
}

#[test]
fn two_thousand_fuzzed_messages_never_silence_the_server() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    let mut c = started(ws.path());
    let uri = c.uri("a.py");
    let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    for n in 0..2_000 {
        let m = mutate(&mut rng, n, &uri);
        c.send_bytes(&m.bytes);
        if m.swallows_next {
            // The request after it completes the lying message; the one after that is read.
            c.send_bytes(&frame(&json!({"jsonrpc": "2.0", "method": "qgates/filler", "params": "0123456789012345678901234567890123456789"})));
        }
        probe(&mut c);
        if let Some(id) = m.answered {
            let answer = c.wait_for(|a| a["id"] == id && a.get("method").is_none(), PROBE_WAIT);
            assert!(
                answer.get("result").is_some() || answer["error"]["code"].is_i64(),
                "{answer}"
            );
        }
        if n % 50 == 0 {
            c.drain();
        }
    }
    // Each kind of error was answered, many times over: the mutations reach every check.
    let messages = c.all_messages();
    for code in [-32700, -32600, -32601, -32602] {
        let count = messages
            .iter()
            .filter(|m| m["error"]["code"] == code)
            .count();
        assert!(count >= 50, "{count} answers with {code}");
    }
    // Every byte the server wrote was a JSON-RPC message.
    assert!(c.shutdown().is_none(), "in process: no child");
}
