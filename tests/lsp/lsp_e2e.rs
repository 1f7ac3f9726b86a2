//! The language server end to end: the real `qgates lsp` binary over stdio, on copies of the
//! bundled example, with the real ruff and mypy.

use crate::common;

use std::path::Path;

use common::{fixture_copy, git, write};
use std::time::Duration;

use common::edits::{apply, ruff_stdin};
use common::lsp::{LspClient, TrustAnswer, WAIT, file_uri};
use common::places::{Unit, token_span};
use serde_json::{Value, json};

/// (code, start line, start character, end line, end character, source) of each diagnostic.
pub(crate) fn shape(diags: &[Value]) -> Vec<(String, u64, u64, u64, u64, String)> {
    let mut out: Vec<_> = diags
        .iter()
        .map(|d| {
            let r = &d["range"];
            (
                d["code"].as_str().unwrap_or_default().to_string(),
                r["start"]["line"].as_u64().unwrap(),
                r["start"]["character"].as_u64().unwrap(),
                r["end"]["line"].as_u64().unwrap(),
                r["end"]["character"].as_u64().unwrap(),
                d["source"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

pub(crate) fn row(
    code: &str,
    l: u64,
    c: u64,
    el: u64,
    ec: u64,
    src: &str,
) -> (String, u64, u64, u64, u64, String) {
    (code.into(), l, c, el, ec, src.into())
}

fn trusted_client(root: &Path) -> (LspClient, tempfile::TempDir) {
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(root, &trust.path().join("trust.json"), TrustAnswer::NotNow);
    c.initialize(json!({"trusted": true}));
    (c, trust)
}

#[test]
fn opened_files_get_the_tools_exact_diagnostics_in_utf16() {
    let ws = fixture_copy("python-basic");
    let (mut c, _t) = trusted_client(ws.path());
    for f in [
        "src/unicode_line.py",
        "src/unused_import.py",
        "src/clean.py",
    ] {
        c.open(f);
    }
    // After "café ☕", each finding on its token, found in the text (UTF-16, 0-based).
    let text = std::fs::read_to_string(ws.path().join("src/unicode_line.py")).unwrap();
    let (semi, three) = (
        token_span(&text, 3, ";", Unit::Utf16),
        token_span(&text, 3, "\"3\"", Unit::Utf16),
    );
    // ruff format's finding: from the `;` it breaks the line at, over it and the space after.
    assert_eq!(
        shape(&c.diagnostics("src/unicode_line.py")),
        vec![
            row("E702", 2, semi.0 as u64, 2, semi.1 as u64, "Ruff Lint"),
            row(
                "FORMAT",
                2,
                semi.0 as u64,
                2,
                semi.0 as u64 + 2,
                "Ruff Format"
            ),
            row("assignment", 2, three.0 as u64, 2, three.1 as u64, "Mypy"),
        ]
    );
    assert_eq!(
        shape(&c.diagnostics("src/unused_import.py")),
        vec![row("F401", 2, 7, 2, 9, "Ruff Lint")]
    );
    assert_eq!(c.diagnostics("src/clean.py"), Vec::<Value>::new());
    c.shutdown();
}

#[test]
fn utf8_is_negotiated_when_offered_and_columns_count_bytes() {
    let ws = fixture_copy("python-basic");
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(ws.path(), &trust.path().join("t.json"), TrustAnswer::NotNow);
    let init = c.initialize_with(json!({"trusted": true}), json!(["utf-8", "utf-16"]));
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-8");
    c.open("src/unicode_line.py");
    let diags = c.diagnostics("src/unicode_line.py");
    let text = std::fs::read_to_string(ws.path().join("src/unicode_line.py")).unwrap();
    // Each finding starts on its token, counted in bytes in the text.
    for (code, token) in [("E702", ";"), ("assignment", "\"3\"")] {
        let d = diags.iter().find(|d| d["code"] == code).expect(code);
        let (start, _) = token_span(&text, 3, token, Unit::Utf8);
        assert_eq!(
            d["range"]["start"],
            json!({"line": 2, "character": start}),
            "{code}"
        );
    }
    c.shutdown();
}

#[test]
fn a_save_updates_the_file_and_a_fixed_file_gets_an_empty_list() {
    let ws = fixture_copy("python-basic");
    let (mut c, _t) = trusted_client(ws.path());
    c.open("src/unused_import.py");
    assert_eq!(
        shape(&c.diagnostics("src/unused_import.py")),
        vec![row("F401", 2, 7, 2, 9, "Ruff Lint")]
    );
    let fixed = "\"\"\"The linter objects to an unused import.\"\"\"\n\n\ndef double(x: int) -> int:\n    return x * 2\n";
    c.edit_and_save("src/unused_import.py", 2, fixed);
    assert_eq!(c.diagnostics("src/unused_import.py"), Vec::<Value>::new());
    let broken = fixed.replace("\n\n\ndef", "\n\nimport json\n\n\ndef");
    c.edit_and_save("src/unused_import.py", 3, &broken);
    assert_eq!(
        shape(&c.diagnostics("src/unused_import.py")),
        vec![row("F401", 2, 7, 2, 11, "Ruff Lint")]
    );
    c.shutdown();
}

/// A workspace whose only gate is a script that records every run in `ran.log`.
pub(crate) fn marker_workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    common::tool(
        ws.path(),
        "tools/lint",
        "#!/bin/sh\necho run >> \"$(dirname \"$0\")/../ran.log\"\nfor f in \"$@\"; do echo \"$f:1:1: X1 found\"; done\nexit 1\n",
    );
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\nactive_gates: [lint]\ngates:\n  lint:\n    name: Lint\n    command: [tools/lint]\n    file_types: [.py]\n    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[^:]+):(?P<line>\\d+):(?P<column>\\d+): (?P<code>\\w+) (?P<message>.+)$'\n",
    );
    write(ws.path(), "a.py", "x = 1\n");
    ws
}

#[test]
fn an_untrusted_workspace_starts_no_process_until_trusted() {
    let ws = marker_workspace();
    let trust = tempfile::tempdir().unwrap();
    let trust_file = trust.path().join("trust.json");
    let mut c = LspClient::spawn(ws.path(), &trust_file, TrustAnswer::NotNow);
    c.initialize(json!({}));
    let ask = c.wait_for(|m| m["method"] == "window/showMessageRequest", WAIT);
    assert!(
        ask["params"]["message"]
            .as_str()
            .unwrap()
            .contains("tools/lint"),
        "the question names the commands: {ask}"
    );
    c.open("a.py");
    // A save too: still nothing may run.
    c.edit_and_save("a.py", 2, "x = 2\n");
    // The command goes through the folder's scheduler after the open and the save: its refusal
    // says they were refused too.
    let err = c
        .request("workspace/executeCommand", json!({"command": "qgates.run"}))
        .unwrap_err();
    assert!(
        err["message"].as_str().unwrap().contains("qgates.trust"),
        "{err}"
    );
    let published: Vec<Value> = c
        .all_messages()
        .into_iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .collect();
    assert!(published.is_empty(), "nothing is checked: {published:?}");
    assert!(!ws.path().join("ran.log").exists(), "no process ran");

    let trusted = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.trust"}),
        )
        .expect("trust");
    assert_eq!(trusted["trusted"].as_array().unwrap().len(), 1);
    assert_eq!(
        shape(&c.diagnostics("a.py")),
        vec![row("X1", 0, 0, 0, 0, "Lint")]
    );
    assert!(ws.path().join("ran.log").exists());
    assert!(
        std::fs::read_to_string(&trust_file)
            .unwrap()
            .contains("workspaces")
    );
    c.shutdown();

    // Remembered: a new server runs without asking.
    runs_without_asking(ws.path(), &trust_file);

    // A change to what is not run (a gate's name) keeps the trust; a changed command asks again.
    let yaml = std::fs::read_to_string(ws.path().join("quality.yaml")).unwrap();
    write(
        ws.path(),
        "quality.yaml",
        &yaml.replace("name: Lint", "name: Lint2"),
    );
    runs_without_asking(ws.path(), &trust_file);
    write(
        ws.path(),
        "quality.yaml",
        &yaml.replace("command: [tools/lint]", "command: [tools/lint, --all]"),
    );
    let mut c = LspClient::spawn(ws.path(), &trust_file, TrustAnswer::NotNow);
    c.initialize(json!({}));
    let ask = c.wait_for(|m| m["method"] == "window/showMessageRequest", WAIT);
    assert!(
        ask["params"]["message"]
            .as_str()
            .unwrap()
            .contains("tools/lint --all FILES…"),
        "{ask}"
    );
    c.shutdown();
}

/// A new server on a trusted workspace: the gate runs, and no question is asked.
fn runs_without_asking(root: &Path, trust_file: &Path) {
    let mut c = LspClient::spawn(root, trust_file, TrustAnswer::NotNow);
    c.initialize(json!({}));
    c.open("a.py");
    assert_eq!(shape(&c.diagnostics("a.py")).len(), 1);
    assert!(
        !c.all_messages()
            .iter()
            .any(|m| m["method"] == "window/showMessageRequest")
    );
    c.shutdown();
}

#[test]
fn answering_trust_in_the_prompt_runs_the_gates() {
    let ws = marker_workspace();
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(ws.path(), &trust.path().join("t.json"), TrustAnswer::Trust);
    c.initialize(json!({}));
    c.open("a.py");
    assert_eq!(
        shape(&c.diagnostics("a.py")),
        vec![row("X1", 0, 0, 0, 0, "Lint")]
    );
    c.shutdown();
}

#[test]
fn a_broken_quality_yaml_is_a_diagnostic_at_its_place_and_the_last_good_one_stays() {
    let ws = marker_workspace();
    let (mut c, _t) = trusted_client(ws.path());
    c.open("a.py");
    assert_eq!(shape(&c.diagnostics("a.py")).len(), 1);
    let good = std::fs::read_to_string(ws.path().join("quality.yaml")).unwrap();
    // An unknown key on line 5 (`nmae`), column 5.
    write(
        ws.path(),
        "quality.yaml",
        &good.replace("    name: Lint", "    nmae: Lint"),
    );
    let yaml_uri = c.uri("quality.yaml");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": yaml_uri, "type": 2}]}),
    );
    let diags = c.diagnostics("quality.yaml");
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(
        diags[0]["range"]["start"],
        json!({"line": 4, "character": 4})
    );
    assert!(
        diags[0]["message"].as_str().unwrap().contains("nmae"),
        "{diags:?}"
    );
    // The server lives on with the last good configuration.
    c.edit_and_save("a.py", 2, "x = 3\n");
    assert_eq!(
        shape(&c.diagnostics("a.py")),
        vec![row("X1", 0, 0, 0, 0, "Lint")]
    );
    // Fixed: the diagnostic goes away.
    write(ws.path(), "quality.yaml", &good);
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": yaml_uri, "type": 2}]}),
    );
    assert_eq!(c.diagnostics("quality.yaml"), Vec::<Value>::new());
    c.shutdown();
}

#[test]
fn a_workspace_broken_from_the_start_shows_why_and_runs_nothing() {
    let ws = marker_workspace();
    // One unknown key: the gate and its command are all there, but nothing may run.
    let yaml = std::fs::read_to_string(ws.path().join("quality.yaml")).unwrap();
    write(
        ws.path(),
        "quality.yaml",
        &yaml.replace("    name: Lint", "    nmae: Lint"),
    );
    let (mut c, _t) = trusted_client(ws.path());
    let diags = c.diagnostics("quality.yaml");
    assert_eq!(diags.len(), 1, "{diags:?}");
    c.open("a.py");
    c.edit_and_save("a.py", 2, "x = 2\n");
    // Through the scheduler after the open and the save: they were refused before it.
    let err = c
        .request("workspace/executeCommand", json!({"command": "qgates.run"}))
        .unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("nmae"), "{err}");
    let err = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.summary"}),
        )
        .unwrap_err();
    assert!(
        err["message"].as_str().unwrap().contains("quality.yaml"),
        "{err}"
    );
    assert!(!ws.path().join("ran.log").exists());
    c.shutdown();
}

#[test]
fn wrong_command_arguments_are_invalid_params_naming_the_field() {
    let ws = marker_workspace();
    let (mut c, _t) = trusted_client(ws.path());
    let cases = [
        ("qgates.summary", json!([{"gates": "lint"}]), "gates"),
        ("qgates.summary", json!([{"scpoe": "project"}]), "scpoe"),
        ("qgates.run", json!([{"scope": "everything"}]), "scope"),
        ("qgates.run", json!([{"files": [1]}]), "files"),
        ("qgates.fixAll", json!([{}]), "uri"),
        ("qgates.fixAll", json!(["file:///x.py"]), "object"),
        ("qgates.trust", json!([{"folder": "/nowhere"}]), "folder"),
        ("qgates.summary", json!([{}, {}]), "one argument"),
        ("qgates.nope", json!([]), "qgates.nope"),
    ];
    for (command, args, named) in cases {
        let err = c
            .request(
                "workspace/executeCommand",
                json!({"command": command, "arguments": args}),
            )
            .unwrap_err();
        assert_eq!(err["code"], -32602, "{command} {args}: {err}");
        assert!(
            err["message"].as_str().unwrap().contains(named),
            "{command} {args}: {err}"
        );
    }
    // Still serving.
    let ok = c.request(
        "workspace/executeCommand",
        json!({"command": "qgates.run", "arguments": [{"scope": "project"}]}),
    );
    assert!(ok.is_ok(), "{ok:?}");
    c.shutdown();
}

#[test]
fn the_summary_command_equals_qgates_check_for_the_same_scope() {
    let ws = fixture_copy("python-basic");
    let (mut c, _t) = trusted_client(ws.path());
    let answer = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.summary", "arguments": [{"scope": "project", "run": true}]}),
        )
        .expect("summary");
    let (code, cli) = common::check_json(ws.path(), &["--scope", "project", "--no-cache"]);
    assert_eq!(code, 1);
    // The editor compares every run with the auto scope's base; the command line only `auto`
    // and `branch` runs.
    assert_eq!(
        common::without_novelty(common::comparable(&answer["report"])),
        common::comparable(&cli)
    );
    assert!(
        answer["summary_line"]
            .as_str()
            .unwrap()
            .starts_with("❌ 3/3 gates failed — 7 violations"),
        "{answer}"
    );
    // The same page as the text an agent reads: the line, then the findings by file.
    let text = answer["text"].as_str().unwrap();
    assert!(
        text.starts_with(answer["summary_line"].as_str().unwrap())
            && text.contains(" (as checked: blob "),
        "{text}"
    );
    // Without `run`, the last result comes back as it was.
    let last = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.summary"}),
        )
        .expect("summary");
    assert_eq!(last, answer);
    c.shutdown();
}

fn ruff_format(root: &Path, rel: &str, text: &str) -> String {
    ruff_stdin(root, &["format"], rel, text)
}

#[test]
fn the_format_quick_fix_gives_what_ruff_format_gives() {
    let ws = fixture_copy("python-basic");
    let (mut c, _t) = trusted_client(ws.path());
    c.open("src/unformatted.py");
    let diags = c.diagnostics("src/unformatted.py");
    let format = diags
        .iter()
        .find(|d| d["code"] == "FORMAT")
        .expect("FORMAT")
        .clone();
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({
                "textDocument": {"uri": c.uri("src/unformatted.py")},
                "range": format["range"],
                "context": {"diagnostics": [format]}
            }),
        )
        .expect("actions");
    let action = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Format with ruff")
        .unwrap_or_else(|| panic!("no format action in {actions}"));
    assert_eq!(action["kind"], "quickfix");
    let edits = action["edit"]["changes"][c.uri("src/unformatted.py")]
        .as_array()
        .unwrap()
        .clone();
    let text = std::fs::read_to_string(ws.path().join("src/unformatted.py")).unwrap();
    let formatted = apply(&text, &edits, "utf-16");
    assert_eq!(
        formatted,
        ruff_format(ws.path(), "src/unformatted.py", &text)
    );
    assert_ne!(formatted, text);
    // Minimal: the docstring and the blank lines that ruff keeps are not in any edit.
    assert!(
        edits
            .iter()
            .all(|e| e["range"]["start"]["line"].as_u64().unwrap() >= 3),
        "{edits:?}"
    );
    c.shutdown();
}

#[test]
fn ruff_quick_fixes_and_fix_all_remove_the_unused_import() {
    let ws = fixture_copy("python-basic");
    let (mut c, _t) = trusted_client(ws.path());
    let rel = "src/unused_import.py";
    c.open(rel);
    let diags = c.diagnostics(rel);
    let f401 = diags
        .iter()
        .find(|d| d["code"] == "F401")
        .expect("F401")
        .clone();
    let text = std::fs::read_to_string(ws.path().join(rel)).unwrap();
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": c.uri(rel)}, "range": f401["range"], "context": {"diagnostics": [f401]}}),
        )
        .expect("actions");
    let fix = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| {
            a["title"]
                .as_str()
                .unwrap()
                .contains("Remove unused import")
        })
        .unwrap_or_else(|| panic!("{actions}"));
    assert_eq!(fix["isPreferred"], true);
    let fixed = apply(
        &text,
        fix["edit"]["changes"][c.uri(rel)].as_array().unwrap(),
        "utf-16",
    );
    assert!(!fixed.contains("import os"), "{fixed}");

    // source.fixAll.qgates: every safe fix, then the formatter.
    let all = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": c.uri(rel)}, "range": f401["range"],
                   "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
        )
        .expect("fixAll action");
    let all = &all.as_array().unwrap()[0];
    assert_eq!(all["kind"], "source.fixAll.qgates");
    let after = apply(
        &text,
        all["edit"]["changes"][c.uri(rel)].as_array().unwrap(),
        "utf-16",
    );
    assert_eq!(after, ruff_format(ws.path(), rel, &fixed));

    // The qgates.fixAll command applies the same through workspace/applyEdit.
    let edits = fix_all_edits(&mut c, rel);
    assert_eq!(apply(&text, &edits, "utf-16"), after);
    c.shutdown();
}

#[test]
fn ten_saves_in_one_burst_publish_only_the_last_contents_diagnostics() {
    let ws = marker_workspace();
    let (mut c, _t) = trusted_client(ws.path());
    c.open("a.py");
    assert_eq!(shape(&c.diagnostics("a.py")).len(), 1);
    let before = c.all_messages().len();
    // Content n has n lines; the tool reports line 1 only, so the versions are told apart by
    // the published version number. The ten edits and saves go in one write (a formatter on
    // save, a script), the file on disk already holding the last content: a result for any
    // earlier version would be stale however the server's timing falls.
    std::fs::write(ws.path().join("a.py"), "x = 1\n".repeat(11)).unwrap();
    let uri = c.uri("a.py");
    let mut bytes = Vec::new();
    for v in 2..=11 {
        let text = "x = 1\n".repeat(v as usize);
        bytes.extend(common::lsp_wire::frame(&json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": v}, "contentChanges": [{"text": text}]}})));
        bytes.extend(common::lsp_wire::frame(
            &json!({"jsonrpc": "2.0", "method": "textDocument/didSave",
            "params": {"textDocument": {"uri": uri}}}),
        ));
    }
    c.send_bytes(&bytes);
    let last = c.wait_for(
        |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == 11,
        WAIT,
    );
    assert_eq!(last["params"]["diagnostics"].as_array().unwrap().len(), 1);
    // Nothing else arrives later, and nothing stale arrived before: a run asked for afterwards
    // goes through the scheduler after everything the burst left, and publishes no change.
    c.request(
        "workspace/executeCommand",
        json!({"command": "qgates.run", "arguments": [{"scope": "project"}]}),
    )
    .expect("run");
    let uri = c.uri("a.py");
    let published: Vec<Value> = c.all_messages()[before..]
        .iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri)
        .cloned()
        .collect();
    assert_eq!(
        published
            .iter()
            .map(|m| m["params"]["version"].clone())
            .collect::<Vec<_>>(),
        vec![json!(11)]
    );
    c.shutdown();
}

#[test]
fn protocol_errors_are_answered_and_the_server_lives_on() {
    let ws = marker_workspace();
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(ws.path(), &trust.path().join("t.json"), TrustAnswer::NotNow);
    // Before initialize.
    let err = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.summary"}),
        )
        .unwrap_err();
    assert_eq!(err["code"], -32002, "{err}");
    // A text notification before initialize goes to the protocol library, which drops it.
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": c.uri("early.py"), "languageId": "python", "version": 1, "text": "x"}}),
    );
    c.initialize(json!({"trusted": true, "logLevel": "debug"}));
    // Unknown method.
    let err = c.request("qgates/unknown", json!({})).unwrap_err();
    assert_eq!(err["code"], -32601, "{err}");
    // Malformed JSON, a header block without a length, a body that is JSON but not JSON-RPC:
    // each answered as the protocol says.
    c.send_bytes(b"Content-Length: 9\r\n\r\n{not json");
    let parse = c.wait_for(|m| m["error"]["code"] == -32700, WAIT);
    assert_eq!(parse["id"], Value::Null, "{parse}");
    c.send_bytes(b"Content-Type: application/json\r\n\r\n");
    let missing = c.wait_for(|m| m["error"]["code"] == -32700, WAIT);
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Content-Length"),
        "{missing}"
    );
    c.send_bytes(&common::lsp_wire::frame(&json!({"id": 99, "method": 3})));
    let invalid = c.wait_for(|m| m["error"]["code"] == -32600, WAIT);
    assert_eq!(invalid["id"], 99, "{invalid}");
    // A Content-Length 5 bytes short, with the next request right after it (no blank line):
    // that one is read from its own header on. And a `$/` request with an id is answered.
    let body = br#"{"jsonrpc":"2.0","id":98,"method":"qgates/unknown","params":{}}"#;
    let mut short = format!("Content-Length: {}\r\n\r\n", body.len() - 5).into_bytes();
    short.extend_from_slice(body);
    c.send_bytes(&short);
    let err = c
        .request("$/setTrace", json!({"value": "off"}))
        .unwrap_err();
    assert_eq!(err["code"], -32601, "{err}");
    // A wrong-typed notification, then a URI outside the workspace.
    c.notify("textDocument/didOpen", json!({"textDocument": 7}));
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": "file:///elsewhere/x.py", "languageId": "python", "version": 1, "text": "x"}}),
    );
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": "untitled:Untitled-1", "languageId": "python", "version": 1, "text": "x"}}),
    );
    let res = c.request(
        "workspace/executeCommand",
        json!({"command": "qgates.run", "arguments": [{"scope": "project"}]}),
    );
    assert!(res.is_ok(), "{res:?}");
    let status = c.shutdown().expect("status");
    assert!(status.success(), "{status:?}");
}

#[test]
fn closing_stdin_ends_the_server_and_kills_its_tools() {
    let ws = tempfile::tempdir().unwrap();
    common::tool(
        ws.path(),
        "tools/slow",
        "#!/bin/sh\necho $$ > \"$(dirname \"$0\")/../slow.pid\"\nsleep 60\n",
    );
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\nactive_gates: [slow]\ngates:\n  slow:\n    name: Slow\n    command: [tools/slow]\n    file_types: [.py]\n    parsing: { strategy: exit_code }\n",
    );
    write(ws.path(), "a.py", "x = 1\n");
    let (mut c, _t) = trusted_client(ws.path());
    c.open("a.py");
    let pid_file = ws.path().join("slow.pid");
    let deadline = std::time::Instant::now() + WAIT;
    // The tool writes its pid as it starts: read until the whole number is there.
    let pid: i32 = loop {
        let read = std::fs::read_to_string(&pid_file).unwrap_or_default();
        if let Some(pid) = read.strip_suffix('\n').and_then(|p| p.parse().ok()) {
            break pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the tool never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut child = c.child.take().unwrap();
    c.close_input();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not exit"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The tool is gone (or a zombie waiting for its new parent to reap it).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().unwrap_or("").trim().chars().next();
        if stat.is_empty() || state == Some('Z') {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the tool {pid} still runs: {stat}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn pull_diagnostics_answer_with_the_pushed_ones() {
    let ws = fixture_copy("python-basic");
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(ws.path(), &trust.path().join("t.json"), TrustAnswer::NotNow);
    let init = c.initialize(json!({"trusted": true, "pullDiagnostics": true}));
    assert_eq!(
        init["capabilities"]["diagnosticProvider"]["identifier"],
        "qgates"
    );
    c.open("src/unused_import.py");
    let pushed = c.diagnostics("src/unused_import.py");
    let pulled = c
        .request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": c.uri("src/unused_import.py")}}),
        )
        .expect("pull");
    assert_eq!(pulled["kind"], "full");
    assert_eq!(pulled["items"], Value::Array(pushed));
    c.shutdown();
}

#[test]
fn progress_is_reported_per_gate() {
    let ws = marker_workspace();
    let (mut c, _t) = trusted_client(ws.path());
    c.open("a.py");
    c.diagnostics("a.py");
    let end = c.wait_for(
        |m| {
            m["method"] == "$/progress"
                && m["params"]["value"]["kind"] == "end"
                && m["params"]["token"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("qgates/gate-"))
        },
        WAIT,
    );
    let token = end["params"]["token"].clone();
    let msgs = c.all_messages();
    assert!(
        msgs.iter()
            .any(|m| m["method"] == "window/workDoneProgress/create"
                && m["params"]["token"] == token)
    );
    let begin = msgs
        .iter()
        .find(|m| {
            m["method"] == "$/progress"
                && m["params"]["token"] == token
                && m["params"]["value"]["kind"] == "begin"
        })
        .expect("begin");
    assert_eq!(begin["params"]["value"]["title"], "qgates: Lint");
    assert_eq!(end["params"]["value"]["message"], "failed");
    // The whole run's progress ends once its diagnostics are out.
    let run_end = c.wait_for(is_run_end, WAIT);
    assert_eq!(run_end["params"]["value"]["message"], "finished");
    let order: Vec<&str> = c
        .all_messages()
        .iter()
        .filter_map(|m| {
            if m["method"] == "textDocument/publishDiagnostics" {
                Some("published")
            } else if *m == run_end {
                Some("run end")
            } else {
                None
            }
        })
        .collect();
    assert_eq!(order, ["published", "run end"]);
    c.shutdown();
}

#[test]
fn protocol_messages_snapshot() {
    let ws = fixture_copy("python-basic");
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(ws.path(), &trust.path().join("t.json"), TrustAnswer::NotNow);
    let init = c.initialize(json!({"trusted": true}));
    c.open("src/unused_import.py");
    let diags = c.diagnostics("src/unused_import.py");
    // Paths differ per run: the workspace root and the version are filtered out.
    let root = file_uri(ws.path());
    let filter = |v: &Value| -> Value {
        let text = serde_json::to_string(v)
            .unwrap()
            .replace(&root, "file://[ROOT]");
        let mut v: Value = serde_json::from_str(&text).unwrap();
        if let Some(info) = v.get_mut("serverInfo") {
            info["version"] = json!("[VERSION]");
        }
        v
    };
    insta::assert_json_snapshot!("lsp_initialize_result", filter(&init));
    insta::assert_json_snapshot!(
        "lsp_diagnostics_unused_import",
        filter(&Value::Array(diags))
    );
    c.shutdown();
}

#[test]
fn a_file_reopened_with_other_content_is_checked_again() {
    let ws = fixture_copy("python-basic");
    let (mut c, _t) = trusted_client(ws.path());
    let rel = "src/clean.py";
    c.open(rel);
    assert_eq!(c.diagnostics(rel), Vec::<Value>::new());
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": c.uri(rel)}}),
    );
    // Changed on disk while closed (another editor, a git checkout).
    let text = std::fs::read_to_string(ws.path().join(rel)).unwrap();
    write(ws.path(), rel, &format!("import os\n{text}"));
    c.open(rel);
    let diags = c.diagnostics(rel);
    assert!(
        diags.iter().any(|d| d["code"] == "F401"),
        "the new content was checked: {diags:?}"
    );
    c.shutdown();
}

#[test]
fn a_run_does_not_publish_the_files_disk_result_onto_an_unsaved_buffer() {
    let ws = fixture_copy("python-basic");
    let (mut c, _t) = trusted_client(ws.path());
    let rel = "src/unused_import.py";
    c.open(rel);
    assert!(c.diagnostics(rel).iter().any(|d| d["code"] == "F401"));
    // The import is removed in the buffer, not saved; the file on disk still has it.
    let disk = std::fs::read_to_string(ws.path().join(rel)).unwrap();
    let edited = disk.replace("import os\n", "");
    assert_ne!(edited, disk);
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": c.uri(rel), "version": 2}, "contentChanges": [{"text": edited}]}),
    );
    let before = c.all_messages().len();
    let answer = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.run", "arguments": [{"scope": "project"}]}),
        )
        .expect("run");
    // The run saw the file on disk, so its report still has the finding ...
    assert!(answer.to_string().contains("F401"), "{answer}");
    // ... but it is not put on the buffer, whose line 3 no longer holds the import.
    let uri = c.uri(rel);
    let onto_buffer: Vec<Value> = c.all_messages()[before..]
        .iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri)
        .cloned()
        .collect();
    assert_eq!(onto_buffer, Vec::<Value>::new());
    // Saved: now the run for it describes the buffer, and the finding is gone.
    c.edit_and_save(rel, 3, &edited);
    let after_save = c.diagnostics(rel);
    assert!(
        after_save.iter().all(|d| d["code"] != "F401"),
        "{after_save:?}"
    );
    c.shutdown();
}

#[test]
fn quick_fixes_work_for_a_file_whose_result_came_while_it_was_closed() {
    let ws = fixture_copy("python-basic");
    let (mut c, _t) = trusted_client(ws.path());
    let rel = "src/unused_import.py";
    // A project run with nothing open publishes for the closed file, without a version.
    c.request(
        "workspace/executeCommand",
        json!({"command": "qgates.run", "arguments": [{"scope": "project"}]}),
    )
    .expect("run");
    c.open(rel);
    let published = c.publication_of_version(rel, 1);
    let f401 = published["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "F401")
        .expect("F401 for the opened document")
        .clone();
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": c.uri(rel)}, "range": f401["range"], "context": {"diagnostics": [f401]}}),
        )
        .expect("actions");
    assert!(
        actions
            .as_array()
            .is_some_and(|a| a.iter().any(|a| a["title"]
                .as_str()
                .is_some_and(|t| t.contains("Remove unused import")))),
        "{actions}"
    );
    c.shutdown();
}

#[test]
fn opening_a_file_no_gate_checks_keeps_the_last_result() {
    let ws = fixture_copy("python-basic");
    let (mut c, _t) = trusted_client(ws.path());
    let project = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.run", "arguments": [{"scope": "project"}]}),
        )
        .expect("run");
    // No gate reads pyproject.toml: its run checks nothing.
    c.open("pyproject.toml");
    // A second open whose run does check a file: the last result moves on to it.
    c.open("src/clean.py");
    let clean = c.uri("src/clean.py");
    c.wait_for(
        |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == clean
                && m["params"]["version"] == 1
        },
        WAIT,
    );
    let last = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.summary"}),
        )
        .expect("summary");
    assert_ne!(
        last["report"], project["report"],
        "the clean.py run is the last"
    );
    assert!(
        last["report"]["scope"]["files_checked"].as_u64().unwrap() >= 1,
        "{last}"
    );
    // Only the file no gate applies to opened now: its empty run does not replace the result.
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": c.uri("pyproject.toml")}}),
    );
    let before = runs_ended(&mut c);
    c.open("pyproject.toml");
    // That run starts no process and publishes nothing (no file is checked): the end of its
    // progress says it is over.
    c.wait_for(
        |m| is_run_end(m) && !before.contains(&m["params"]["token"]),
        WAIT,
    );
    let after = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.summary"}),
        )
        .expect("summary");
    assert_eq!(after["summary_line"], last["summary_line"]);
    assert!(
        !after["summary_line"]
            .as_str()
            .unwrap()
            .contains("nothing to check"),
        "{after}"
    );
    c.shutdown();
}

/// Whether a message ends the progress of a whole run.
fn is_run_end(m: &Value) -> bool {
    m["method"] == "$/progress"
        && m["params"]["value"]["kind"] == "end"
        && m["params"]["token"]
            .as_str()
            .is_some_and(|t| t.starts_with("qgates/run-"))
}

/// Waits until every run whose progress was created so far has ended; their tokens.
fn runs_ended(c: &mut LspClient) -> Vec<Value> {
    loop {
        let msgs = c.all_messages();
        let ended: Vec<Value> = msgs
            .iter()
            .filter(|m| is_run_end(m))
            .map(|m| m["params"]["token"].clone())
            .collect();
        let created = msgs.iter().filter(|m| {
            m["method"] == "window/workDoneProgress/create"
                && m["params"]["token"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("qgates/run-"))
        });
        if created
            .clone()
            .all(|m| ended.contains(&m["params"]["token"]))
        {
            return ended;
        }
        c.wait_for(is_run_end, WAIT);
    }
}

/// Runs the `qgates.fixAll` command on `rel` and returns the edits it sent through
/// `workspace/applyEdit` (which the test client accepts).
fn fix_all_edits(c: &mut LspClient, rel: &str) -> Vec<Value> {
    let res = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.fixAll", "arguments": [{"uri": c.uri(rel)}]}),
        )
        .expect("fixAll");
    assert_eq!(res["applied"], true, "{res}");
    let apply_edit = c
        .all_messages()
        .into_iter()
        .find(|m| m["method"] == "workspace/applyEdit")
        .expect("applyEdit sent");
    apply_edit["params"]["edit"]["changes"][c.uri(rel)]
        .as_array()
        .expect("edits for the file")
        .clone()
}

fn ruff_fix_only(root: &Path, rel: &str, text: &str) -> String {
    ruff_stdin(root, &["check", "--fix-only"], rel, text)
}

#[test]
fn fix_all_applies_overlapping_fixes_as_ruff_does_then_formats() {
    let ws = fixture_copy("python-basic");
    let (mut c, _t) = trusted_client(ws.path());
    let rel = "src/clean.py";
    c.open(rel);
    c.diagnostics(rel);
    // An import above the docstring: ruff's I001 and F401 fixes overlap on line 1, so one pass
    // of the tool's own edits cannot apply both.
    let original = std::fs::read_to_string(ws.path().join(rel)).unwrap();
    let broken = format!("import json\n{original}");
    c.edit_and_save(rel, 2, &broken);
    let uri = c.uri(rel);
    c.wait_for(
        |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == 2
        },
        WAIT,
    );
    let edits = fix_all_edits(&mut c, rel);
    let fixed = apply(&broken, &edits, "utf-16");
    let expected = ruff_format(ws.path(), rel, &ruff_fix_only(ws.path(), rel, &broken));
    assert_eq!(fixed, expected);
    assert!(!fixed.contains("import json"), "{fixed}");
    c.shutdown();
}

/// `marker_workspace` as a committed git repository (the `auto` scope reads git).
pub(crate) fn marker_repo() -> tempfile::TempDir {
    let ws = marker_workspace();
    git(ws.path(), &["init", "-q"]);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-q", "-m", "start"]);
    ws
}

fn runs(ws: &Path) -> usize {
    std::fs::read_to_string(ws.join("ran.log"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

pub(crate) fn summary(c: &mut LspClient) -> Value {
    c.request(
        "workspace/executeCommand",
        json!({"command": "qgates.summary"}),
    )
    .expect("summary")
}

/// Waits until the folder's state file says what `holds` looks for.
pub(crate) fn wait_for_state(ws: &Path, holds: impl Fn(&str) -> bool) {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let state = std::fs::read_to_string(ws.join(".qgates/state.json")).unwrap_or_default();
        if holds(&state) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{state}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_file_opened_right_after_its_folder_was_added_is_checked() {
    let one = marker_workspace();
    let two = marker_workspace();
    let (mut c, _t) = trusted_client(one.path());
    let uri = file_uri(&two.path().join("a.py"));
    // Back to back, as an editor adding a folder that holds an open file sends them.
    c.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [{"uri": file_uri(two.path()), "name": "two"}], "removed": []}}),
    );
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}}),
    );
    let published = c.wait_for(
        |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri,
        WAIT,
    );
    assert_eq!(
        shape(published["params"]["diagnostics"].as_array().unwrap()),
        vec![row("X1", 0, 0, 0, 0, "Lint")]
    );
    assert_eq!(runs(two.path()), 1, "the new folder's own gate checked it");
    c.shutdown();
}

/// Saves `rel` without changing it and returns the diagnostics published for it in answer.
fn resave(c: &mut LspClient, rel: &str) -> Value {
    let uri = c.uri(rel);
    let published = |c: &LspClient| {
        c.all_messages()
            .iter()
            .filter(|m| {
                m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
            })
            .count()
    };
    let before = published(c);
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri}}),
    );
    let params = c.publication(rel);
    assert_eq!(published(c), before + 1, "one publication per save");
    params
}

#[test]
fn an_unchanged_re_save_publishes_the_same_diagnostics_again_and_starts_no_process() {
    let ws = marker_repo();
    let (mut c, _t) = trusted_client(ws.path());
    c.open("a.py");
    // As committed: its findings are the commit's, pre-existing, without a run there.
    let first = c.publication("a.py");
    assert_eq!(
        shape(first["diagnostics"].as_array().unwrap()),
        vec![row("X1", 0, 0, 0, 0, "Lint (pre-existing)")]
    );
    let ran = runs(ws.path());
    assert_eq!(ran, 1);
    let opened = summary(&mut c)["report"].clone();
    assert_eq!(opened["scope"]["mode"], "files", "{opened}");
    assert!(
        !opened["full_report"].is_null(),
        "the report, beside the tool's logs: {opened}"
    );
    for _ in 0..2 {
        // The save is answered with the same list for the same version: nothing to redraw.
        assert_eq!(resave(&mut c, "a.py"), first);
        // The report behind it is the save's (an `auto` run, not the open's), answered by the
        // cache: no process, so its folder holds the report and no log.
        let report = summary(&mut c)["report"].clone();
        assert_eq!(report["scope"]["mode"], "auto", "{report}");
        let whole = ws.path().join(report["full_report"].as_str().unwrap());
        let dir = whole.parent().unwrap();
        let mut kept: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        kept.sort();
        assert_eq!(kept, [".qgates-run", "report.json"], "{report}");
        let whole: Value = serde_json::from_str(&std::fs::read_to_string(&whole).unwrap()).unwrap();
        let gate = &whole["gates"][0];
        assert_eq!(gate["status"], "failed", "{whole}");
        assert_eq!(gate["cached_files"], 1, "answered by the cache: {whole}");
    }
    assert_eq!(runs(ws.path()), ran, "no process ran for the re-saves");
    c.shutdown();
}

#[test]
fn an_unchanged_re_save_with_ruff_publishes_its_findings_again_without_running_ruff() {
    // ruff behind a wrapper that counts its starts.
    let ws = fixture_copy("python-basic");
    let ruff = common::tools_bin().join("ruff");
    common::tool(
        ws.path(),
        "tools/ruff",
        &format!(
            "#!/bin/sh\necho run >> \"$(dirname \"$0\")/../ran.log\"\nexec '{}' \"$@\"\n",
            ruff.display()
        ),
    );
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  ruff_lint:\n    preset: ruff-lint\n    command: [tools/ruff, check, --output-format, json, --no-fix]\n",
    );
    git(ws.path(), &["init", "-q"]);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-q", "-m", "start"]);
    let (mut c, _t) = trusted_client(ws.path());
    let rel = "src/unused_import.py";
    c.open(rel);
    // As committed: its findings are the commit's, pre-existing.
    let first = c.publication(rel);
    assert_eq!(
        shape(first["diagnostics"].as_array().unwrap()),
        vec![row("F401", 2, 7, 2, 9, "Ruff Lint (pre-existing)")]
    );
    let ran = runs(ws.path());
    assert_eq!(
        ran, 1,
        "ruff ran once in the workspace, through the wrapper"
    );
    // The first save puts the file in the remembered scope; the re-saves after it are answered
    // by the cache alone.
    assert_eq!(resave(&mut c, rel), first);
    let ran = runs(ws.path());
    for _ in 0..3 {
        assert_eq!(resave(&mut c, rel), first);
    }
    assert_eq!(runs(ws.path()), ran, "no ruff process for the re-saves");
    c.shutdown();
}

#[test]
fn files_opened_together_are_checked_in_one_run_and_none_is_dropped() {
    let ws = marker_workspace();
    let files: Vec<String> = (0..30).map(|i| format!("m_{i:02}.py")).collect();
    for f in &files {
        write(ws.path(), f, "x = 1\n");
    }
    let (mut c, _t) = trusted_client(ws.path());
    // All the opens in one write, as an editor restoring its tabs sends them.
    let mut bytes = Vec::new();
    for f in &files {
        bytes.extend(common::lsp_wire::frame(&json!({
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {"textDocument": {
                "uri": c.uri(f), "languageId": "python", "version": 1, "text": "x = 1\n"
            }}
        })));
    }
    c.send_bytes(&bytes);
    for f in &files {
        assert_eq!(
            shape(&c.diagnostics(f)),
            vec![row("X1", 0, 0, 0, 0, "Lint")],
            "{f}"
        );
    }
    assert_eq!(runs(ws.path()), 1, "one run for the whole batch");
    c.shutdown();
}
