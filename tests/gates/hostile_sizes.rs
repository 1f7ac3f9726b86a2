//! Input of hostile size cannot overwhelm qgates: a protocol message over the limit is skipped
//! without being held in memory and the server answers what comes after it; an absurd
//! configuration is refused at its place with a message; a configuration broken all over is
//! reported briefly; and a file with thousands of findings is shown the first thousand and a
//! note that says where the rest are.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;
use std::time::Duration;

use common::lsp::{LspClient, TrustAnswer};
use common::{tool, workspace, write};
use qgates::core::config::{
    ConfigError, ConfigProblem, ConfigSource, MAX_GATES, MAX_GLOBS_PER_LIST, MAX_PATTERN_CHARS,
    MAX_REPORTED_PROBLEMS, load_file, parse_config,
};
use qgates::jsonrpc::MAX_MESSAGE_BYTES;
use serde_json::{Value, json};

const MIB: u64 = 1 << 20;

/// The most diagnostics the language server shows for one file.
const MAX_DIAGNOSTICS_PER_FILE: usize = 1_000;

/// The most memory a process has used (VmHWM), read while it still runs.
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/<pid>/status");
    kib * 1024
}

/// Writes `total` bytes of `x` in pieces of 1 MiB.
fn stream_filler(w: &mut dyn Write, total: u64) {
    let piece = vec![b'x'; MIB as usize];
    let mut left = total;
    while left > 0 {
        let n = left.min(MIB) as usize;
        w.write_all(&piece[..n]).expect("the server reads on");
        left -= n as u64;
    }
    w.flush().expect("flush");
}

#[test]
fn an_lsp_message_over_the_limit_is_skipped_unread_and_the_next_request_is_answered() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(ws.path(), &trust.path().join("t.json"), TrustAnswer::NotNow);
    c.initialize(json!({}));
    let pid = c.child.as_ref().expect("a process").id();

    // 100 MB announced and sent: the body is all filler, so only its size can be judged.
    let size: u64 = 100_000_000;
    assert!(size > MAX_MESSAGE_BYTES as u64);
    // One write, so no answer of the client's to the server's requests lands inside it.
    let mut message = format!("Content-Length: {size}\r\n\r\n").into_bytes();
    stream_filler(&mut message, size);
    c.send_bytes(&message);
    drop(message);

    // Framed right after it: answered.
    let pulled = c
        .request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": c.uri("a.py")}}),
        )
        .expect("the request after the large message is answered");
    assert_eq!(pulled["kind"], "full", "{pulled}");
    let peak = peak_memory(pid);
    // The id of the large message was never read, so nothing answers it.
    let answers: Vec<Value> = c
        .all_messages()
        .into_iter()
        .filter(|m| m.get("error").is_some())
        .collect();
    assert!(answers.is_empty(), "{answers:?}");
    assert!(
        peak < MAX_MESSAGE_BYTES as u64,
        "the server's peak memory was {} MiB while a {} MB message went by",
        peak / MIB,
        size / 1_000_000
    );
    assert_eq!(c.shutdown().and_then(|s| s.code()), Some(0));
}

#[test]
fn an_mcp_line_over_the_limit_is_answered_and_dropped_up_to_its_newline() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_qgates"))
        .arg("mcp")
        .current_dir(ws.path())
        .env_remove("QGATES_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start qgates mcp");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let v = serde_json::from_str(&line).expect("every line out is JSON");
            if tx.send(v).is_err() {
                break;
            }
        }
    });
    let next = || {
        lines
            .recv_timeout(Duration::from_secs(60))
            .expect("an answer within a minute")
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    writeln!(stdin, "{init}").unwrap();
    assert_eq!(next()["id"], 1);
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();

    // A 200 MB line: the guard keeps at most the limit of it before it knows (the server itself
    // takes some 20 MiB).
    let size: u64 = 200_000_000;
    let start = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"pad":""#;
    stdin.write_all(start).unwrap();
    stream_filler(&mut stdin, size - start.len() as u64 - 3);
    stdin.write_all(b"\"}}\n").unwrap();
    let answer = next();
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "a {size}-byte message is over the limit of {MAX_MESSAGE_BYTES} bytes"
        )),
        "{message}"
    );

    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}});
    writeln!(stdin, "{list}").unwrap();
    let answer = next();
    assert_eq!(answer["id"], 3, "{answer}");
    assert!(answer["result"]["tools"].is_array(), "{answer}");
    let peak = peak_memory(child.id());
    assert!(
        peak < MAX_MESSAGE_BYTES as u64 + 48 * MIB,
        "the server's peak memory was {} MiB while a {} MB line went by",
        peak / MIB,
        size / 1_000_000
    );
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

// ---- configurations ----

fn problems(yaml: &str) -> Vec<ConfigProblem> {
    match parse_config(yaml, ConfigSource::File(PathBuf::from("quality.yaml"))) {
        Ok(_) => panic!("the configuration loaded"),
        Err(ConfigError { problems }) => problems,
    }
}

/// The only problem of `yaml`, as (line, column, message).
fn one(yaml: &str) -> (u32, u32, String) {
    let list = problems(yaml);
    assert_eq!(list.len(), 1, "{list:#?}");
    let p = &list[0];
    (p.line, p.column, p.message.clone())
}

fn gate(id: &str, extra: &str) -> String {
    format!("  {id}:\n    command: [tool]\n    parsing: {{ strategy: exit_code }}\n{extra}")
}

#[test]
fn a_configuration_over_one_mebibyte_is_refused() {
    let ws = workspace(&[]);
    let mut text = format!("version: 1\ngates:\n{}", gate("a", ""));
    while text.len() as u64 <= MIB {
        text.push_str("# a comment that makes the file large\n");
    }
    write(ws.path(), "quality.yaml", &text);
    let path = ws.path().join("quality.yaml");
    let e = load_file(&path).expect_err("a file over 1 MiB");
    assert_eq!(e.problems.len(), 1, "{e}");
    let p = &e.problems[0];
    assert_eq!((p.file.as_path(), p.line, p.column), (path.as_path(), 1, 1));
    assert!(p.message.contains("over 1 MiB"), "{p}");
}

#[test]
fn more_gates_than_the_limit_are_refused_at_the_first_one_too_many() {
    let mut text = String::from("version: 1\ngates:\n");
    for i in 0..=MAX_GATES {
        text.push_str(&gate(&format!("g{i}"), ""));
    }
    let (line, column, message) = one(&text);
    // Three lines per gate after the two of the header: gate N (from 0) starts at 3 + 3N.
    assert_eq!((line, column), (3 + 3 * MAX_GATES as u32, 3), "{message}");
    assert!(
        message.contains("holds at most 200") && message.contains("this is gate 201"),
        "{message}"
    );
}

#[test]
fn a_pattern_or_a_glob_over_the_length_limit_is_refused_at_its_place() {
    let long = "x".repeat(MAX_PATTERN_CHARS + 1);
    let text = format!(
        "version: 1\ngates:\n  t:\n    command: [tool]\n    parsing:\n      strategy: text_violations\n      pattern: '(?P<message>{long})'\n"
    );
    let (line, column, message) = one(&text);
    assert_eq!((line, column), (7, 16), "{message}");
    assert!(message.contains("may be at most 10000"), "{message}");

    let text = format!(
        "version: 1\nproject_scope:\n  include_globs: [\"src/**\", \"{long}\"]\ngates:\n{}",
        gate("a", "")
    );
    let (line, column, message) = one(&text);
    assert_eq!((line, column), (3, 29), "{message}");
    assert!(message.contains("a glob may be at most 10000"), "{message}");
}

#[test]
fn a_list_of_more_globs_than_the_limit_is_refused_at_the_first_one_too_many() {
    let mut text = String::from("version: 1\nproject_scope:\n  exclude_globs:\n");
    for i in 0..=MAX_GLOBS_PER_LIST {
        text.push_str(&format!("    - build/{i}/**\n"));
    }
    text.push_str(&format!("gates:\n{}", gate("a", "")));
    let (line, column, message) = one(&text);
    assert_eq!(
        (line, column),
        (4 + MAX_GLOBS_PER_LIST as u32, 7),
        "{message}"
    );
    assert!(
        message.contains("holds at most 1000") && message.contains("this is glob 1001"),
        "{message}"
    );
}

#[test]
fn a_pattern_that_compiles_too_big_is_refused_with_the_limit() {
    let text = "version: 1\ngates:\n  t:\n    command: [tool]\n    parsing:\n      strategy: text_violations\n      pattern: '(?P<message>(\\w{100}){100})'\n";
    let (line, column, message) = one(text);
    assert_eq!((line, column), (7, 16), "{message}");
    assert!(
        message.contains("compiles to more than 10 MiB"),
        "{message}"
    );
}

/// Checks that `all` is the first `MAX_REPORTED_PROBLEMS` of `total` problems, one per gate at
/// `first_line`, `first_line + 3`, …, and the line that counts the rest.
fn assert_capped(all: &[ConfigProblem], total: usize, first_line: u32) {
    assert_eq!(all.len(), MAX_REPORTED_PROBLEMS + 1);
    for (i, p) in all[..MAX_REPORTED_PROBLEMS].iter().enumerate() {
        assert_eq!(p.line, first_line + 3 * i as u32, "{p}");
        assert!(p.message.contains(&format!("`g{i}`")), "{p}");
    }
    let last = &all[MAX_REPORTED_PROBLEMS];
    let more = total - MAX_REPORTED_PROBLEMS;
    assert_eq!(last.line, 0, "{last}");
    assert!(
        last.message
            .starts_with(&format!("and {more} more errors, not shown")),
        "{last}"
    );
}

#[test]
fn two_thousand_broken_gates_are_reported_as_the_first_hundred_and_a_count() {
    // Each command a string where a list belongs: the typed read stops at every one.
    let mut text = String::from("version: 1\ngates:\n");
    for i in 0..2_000 {
        text.push_str(&format!(
            "  g{i}:\n    command: \"tool {i}\"\n    parsing: {{ strategy: exit_code }}\n"
        ));
    }
    assert_capped(&problems(&text), 2_000, 4);

    // Each timeout negative: found when the gates are checked, with the gate count on top.
    let mut text = String::from("version: 1\ngates:\n");
    for i in 0..2_000 {
        text.push_str(&format!(
            "  g{i}:\n    command: [tool]\n    timeout_s: -1\n    parsing: {{ strategy: exit_code }}\n"
        ));
    }
    let all = problems(&text);
    assert_eq!(all.len(), MAX_REPORTED_PROBLEMS + 1);
    for (i, p) in all[..MAX_REPORTED_PROBLEMS].iter().enumerate() {
        assert_eq!(p.line, 5 + 4 * i as u32, "{p}");
        assert!(p.message.contains(&format!("`g{i}`")), "{p}");
    }
    assert!(
        all[MAX_REPORTED_PROBLEMS]
            .message
            .starts_with("and 1901 more errors"),
        "{}",
        all[MAX_REPORTED_PROBLEMS]
    );
}

// ---- diagnostics ----

#[test]
fn a_file_with_thousands_of_findings_shows_a_thousand_and_says_where_the_rest_are() {
    const FINDINGS: usize = 5_000;
    let ws = workspace(&[("a.py", "x = 1\n")]);
    tool(
        ws.path(),
        "tools/many",
        &format!(
            "#!/bin/sh\nfor i in $(seq 1 {FINDINGS}); do echo \"a.py:1:1: X$i finding $i\"; done\nexit 1\n"
        ),
    );
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  many:\n    command: [tools/many]\n    file_types: [.py]\n    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[^:]+):(?P<line>\\d+):(?P<column>\\d+): (?P<code>\\w+) (?P<message>.+)$'\n",
    );
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(ws.path(), &trust.path().join("t.json"), TrustAnswer::NotNow);
    c.initialize(json!({"trusted": true, "pullDiagnostics": true}));
    c.open("a.py");
    let pushed = c.diagnostics("a.py");
    assert_eq!(pushed.len(), MAX_DIAGNOSTICS_PER_FILE + 1);
    let findings: std::collections::HashSet<&str> = pushed[..MAX_DIAGNOSTICS_PER_FILE]
        .iter()
        .map(|d| d["message"].as_str().unwrap())
        .filter(|m| m.starts_with("finding "))
        .collect();
    assert_eq!(
        findings.len(),
        MAX_DIAGNOSTICS_PER_FILE,
        "distinct findings"
    );
    let note = &pushed[MAX_DIAGNOSTICS_PER_FILE];
    assert_eq!(note["severity"], 3, "information: {note}");
    assert_eq!(note["range"]["start"], json!({"line": 0, "character": 0}));
    let message = note["message"].as_str().unwrap();
    let (count, log) = message
        .split_once(" more findings in this file are not shown; see the log: ")
        .unwrap_or_else(|| panic!("{message}"));
    assert_eq!(count, (FINDINGS - MAX_DIAGNOSTICS_PER_FILE).to_string());
    // The log folder holds the tool's whole output: every finding.
    let output = std::fs::read_to_string(Path::new(log).join("many.stdout")).expect("the log");
    assert_eq!(output.lines().count(), FINDINGS);

    let pulled = c
        .request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": c.uri("a.py")}}),
        )
        .expect("pull");
    assert_eq!(pulled["items"], Value::Array(pushed));
    c.shutdown();
}
