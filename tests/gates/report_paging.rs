//! Reports at scale, through the real binary: the summary line names three gates and counts the
//! rest; every run writes its whole report to `report.json` in its log folder; and the agent
//! server and the editor's `qgates.summary` answer one page of the violations (`max_violations`,
//! `offset`), errors first, saying what they left out and where the whole report is.
//!
//! The gates are a small Python script (`emit.py`) printing, as JSON, the findings a table
//! gives for each gate id: cheap, exact, and with severities a real linter would need coaxing
//! into.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::lsp::{LspClient, TrustAnswer};
use common::mcp::Server;
use common::{check_json, git, qgates, tool, workspace, write};
use serde_json::{Value, json};

/// Prints the findings of the gate named by its first argument, from `findings.json`; exits 1
/// when there are any.
const EMIT: &str = r#"#!/usr/bin/env python3
import json, sys
found = json.load(open("findings.json")).get(sys.argv[1], [])
print(json.dumps(found))
sys.exit(1 if found else 0)
"#;

/// One gate of `emit.py`.
fn gate_yaml(id: &str) -> String {
    format!(
        "  {id}:\n    command: [\"./emit.py\", \"{id}\"]\n    file_types: [\".py\"]\n    parsing:\n      strategy: json_violations\n      violations_path: \"\"\n      field_map: {{ file: file, line: line, code: code, message: message, severity: severity }}\n"
    )
}

/// A finding as `emit.py` prints it.
fn finding(file: &str, line: u32, severity: &str, code: &str) -> Value {
    json!({"file": file, "line": line, "severity": severity, "code": code, "message": format!("{code} here")})
}

/// A committed repository whose gates (in this order) find what `findings` says.
fn repo(gates: &[&str], findings: Value) -> tempfile::TempDir {
    let ws = workspace(&[
        ("a.py", "x = 1\n"),
        ("b.py", "y = 2\n"),
        (".gitignore", ".qgates/\n"),
    ]);
    let root = ws.path();
    tool(root, "emit.py", EMIT);
    let yaml: String = gates.iter().map(|g| gate_yaml(g)).collect();
    write(root, "quality.yaml", &format!("version: 1\ngates:\n{yaml}"));
    write(root, "findings.json", &findings.to_string());
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "start"]);
    ws
}

/// Seven findings over three gates, errors and warnings mixed in gate order, so the reading
/// order (errors first, then by file and line) differs from the report's.
fn seven() -> tempfile::TempDir {
    repo(
        &["style", "lint", "types"],
        json!({
            "style": [finding("b.py", 1, "warning", "S1"), finding("a.py", 1, "warning", "S2")],
            "lint": [finding("b.py", 1, "error", "L1"), finding("a.py", 1, "warning", "L2"),
                     finding("a.py", 1, "error", "L3")],
            "types": [finding("b.py", 1, "error", "T1"), finding("a.py", 1, "error", "T2")],
        }),
    )
}

/// The codes of a page in the reading order: each shown violation, with its gate, sorted as the
/// answer promises (severity, file, line; gate order breaks ties).
fn codes_in_reading_order(report: &Value) -> Vec<String> {
    let mut shown: Vec<(u8, String, u64, usize, String)> = Vec::new();
    for (g, gate) in report["gates"].as_array().unwrap().iter().enumerate() {
        for v in gate["violations"].as_array().into_iter().flatten() {
            let rank = match v["severity"].as_str().unwrap() {
                "error" => 0,
                "warning" => 1,
                "info" => 2,
                _ => 3,
            };
            shown.push((
                rank,
                v["file"].as_str().unwrap().to_string(),
                v["line"].as_u64().unwrap(),
                g,
                v["code"].as_str().unwrap().to_string(),
            ));
        }
    }
    shown.sort();
    shown.into_iter().map(|s| s.4).collect()
}

/// The whole report a page names, read from its file.
fn full_report(root: &Path, page: &Value) -> Value {
    let path = page["full_report"]
        .as_str()
        .expect("the page names the full report");
    assert!(
        path.starts_with(".qgates/runs/") && path.ends_with("/report.json"),
        "{path}"
    );
    serde_json::from_str(&std::fs::read_to_string(root.join(path)).unwrap()).unwrap()
}

fn total_violations(report: &Value) -> usize {
    report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["violations"].as_array().map_or(0, Vec::len))
        .sum()
}

// ---------------------------------------------------------------------------------------------
// The summary line and the CLI

/// `qgates check --format summary` (the default when stdout is not a terminal) pages as the
/// agent server does: `--max-violations` from `--offset`, errors first, the summary line saying
/// what was left out and how to get it; `--format json` stays whole.
#[test]
fn the_summary_format_pages_and_json_stays_whole() {
    let ws = seven();
    let root = ws.path();
    let summary = |args: &[&str]| {
        let out = qgates(root)
            .args([
                "check",
                "--scope",
                "project",
                "--no-state",
                "--format",
                "summary",
            ])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let text = String::from_utf8(out.stdout).unwrap();
        let (line, json) = text.split_once('\n').unwrap();
        (
            line.to_string(),
            serde_json::from_str::<Value>(json).unwrap(),
        )
    };
    let (line, page) = summary(&["--max-violations", "3"]);
    assert_eq!(page["shown"], 3, "{page}");
    assert_eq!(page["total"], 7);
    assert_eq!(codes_in_reading_order(&page), ["L3", "T2", "L1"]);
    assert!(
        line.ends_with(&format!(
            "showing 3 of 7 violations; the rest: --offset 3, or {}",
            page["full_report"].as_str().unwrap()
        )),
        "{line}"
    );
    let (line, rest) = summary(&["--max-violations", "3", "--offset", "3"]);
    assert_eq!(codes_in_reading_order(&rest), ["T1", "S2", "L2"], "{line}");
    let (line, counts) = summary(&["--max-violations", "0"]);
    assert_eq!(counts["shown"], 0);
    assert!(
        line.contains("7 violations not shown (--max-violations 0)"),
        "{line}"
    );
    // By default 50: all seven here, and the line is the report's own.
    let (line, all) = summary(&[]);
    assert_eq!(all["shown"], 7);
    assert!(!line.contains("showing"), "{line}");
    let (_, whole) = check_json(root, &["--scope", "project", "--no-state"]);
    assert_eq!(total_violations(&whole), 7);
    assert!(whole.get("shown").is_none(), "{whole}");
}

#[test]
fn five_failing_gates_are_named_three_and_two_more() {
    let gates = ["g1", "g2", "g3", "g4", "g5", "clean"];
    let mut findings = serde_json::Map::new();
    for g in &gates[..5] {
        findings.insert(g.to_string(), json!([finding("a.py", 1, "error", "E1")]));
    }
    findings.insert(
        "g5".into(),
        json!([
            finding("a.py", 1, "error", "E1"),
            finding("b.py", 1, "warning", "W1")
        ]),
    );
    let ws = repo(&gates, Value::Object(findings));
    let out = qgates(ws.path())
        .args(["check", "--scope", "project", "--format", "summary"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let line = stdout.lines().next().unwrap();
    assert_eq!(
        line,
        "❌ 5/6 gates failed — 6 violations: 5 errors, 1 warning (0 auto-fixable): g1, g2, g3 +2 more"
    );

    // The text report: the header names the configuration; one line names the log folder, and
    // no gate that merely failed repeats its log paths.
    let out = qgates(ws.path())
        .args(["check", "--scope", "project", "--format", "text"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("❌ 5/6 gates failed") && first.ends_with(" · config: quality.yaml"),
        "{text}"
    );
    let logs: Vec<&str> = text.lines().filter(|l| l.contains("Logs")).collect();
    assert_eq!(logs.len(), 1, "{text}");
    assert!(
        logs[0].starts_with("Logs and report.json: .qgates/runs/") && logs[0].ends_with('/'),
        "{text}"
    );
}

#[test]
fn every_cli_run_writes_its_whole_report_even_one_the_cache_answered() {
    let ws = seven();
    let root = ws.path();
    let (code, report) = check_json(root, &["--scope", "project"]);
    assert_eq!(code, 1);
    assert_eq!(report["config"], "quality.yaml");
    // The CLI's JSON is complete, and `report.json` holds the same report.
    assert_eq!(total_violations(&report), 7);
    let dir = report["log_dir"].as_str().unwrap();
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join(dir).join("report.json")).unwrap())
            .unwrap();
    assert_eq!(saved["gates"], report["gates"]);

    // Again: every gate answered by the cache, no process started, and still a folder with the
    // report (and no log, nothing having run).
    let out = qgates(root)
        .args(["check", "--scope", "project", "--format", "summary"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let (line, json) = stdout.split_once('\n').unwrap();
    assert!(line.ends_with("; all from the cache"), "{line}");
    let again: Value = serde_json::from_str(json).unwrap();
    let report = again["full_report"]
        .as_str()
        .expect("a file for the report");
    let dir = root.join(report).parent().unwrap().to_path_buf();
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, [".qgates-run", "report.json"]);
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(total_violations(&saved), 7);
}

// ---------------------------------------------------------------------------------------------
// The agent server

fn mcp(root: &Path) -> Server {
    let mut s = Server::start(root);
    s.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "raw", "version": "0"}}),
    );
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s
}

/// The answer's first line: the summary.
fn summary_text(result: &Value) -> &str {
    assert_eq!(result["isError"], false, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    text.lines().next().unwrap_or(text)
}

fn tool_error(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().unwrap()
}

#[test]
fn the_agent_gets_a_page_says_what_it_left_out_and_pages_to_the_end() {
    let ws = seven();
    let root = ws.path();
    let mut s = mcp(root);
    let r = s.call(
        2,
        "run_quality_gates",
        json!({"scope": "project", "max_violations": 2}),
    );
    let line = summary_text(&r).to_string();
    let page = r["structuredContent"].clone();
    assert_eq!(total_violations(&page), 2, "{page}");
    assert_eq!(
        (
            &page["shown"],
            &page["total"],
            &page["offset"],
            &page["next_offset"]
        ),
        // The first page's offset, 0, goes without saying.
        (&json!(2), &json!(7), &Value::Null, &json!(2)),
        "{page}"
    );
    let left: u64 = page["left_out"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(left, 5, "{page}");
    let full = page["full_report"].as_str().unwrap();
    assert!(
        line.ends_with(&format!(
            "; showing 2 of 7 violations; the rest: offset=2, or {full}"
        )),
        "{line}"
    );
    // The summary counts the whole run, not the page.
    assert!(
        line.starts_with("❌ 3/3 gates failed — 7 violations: 4 errors, 3 warnings"),
        "{line}"
    );
    assert_eq!(page["summary"]["total_violations"], 7);
    let whole = full_report(root, &page);
    assert_eq!(total_violations(&whole), 7, "report.json holds them all");
    // The answer leaves the record to the whole report: the configuration file and the log
    // folder (`full_report` is in it).
    for field in ["config", "log_dir"] {
        assert!(whole.get(field).is_some(), "{field} in {whole}");
        assert!(page.get(field).is_none(), "{field} in {page}");
    }

    // Paging on without running again: 2, 2, 1, and the last page has no next offset.
    let mut pages = vec![codes_in_reading_order(&page)];
    let mut offset = 2;
    let mut id = 3;
    loop {
        let r = s.call(
            id,
            "last_summary",
            json!({"max_violations": 2, "offset": offset}),
        );
        id += 1;
        let page = &r["structuredContent"];
        assert_eq!(page["offset"], offset, "{page}");
        pages.push(codes_in_reading_order(page));
        match page["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => {
                assert!(
                    summary_text(&r)
                        .ends_with("; showing 1 of 7 violations from offset 6, the last ones"),
                    "{r}"
                );
                break;
            }
        }
    }
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [2, 2, 2, 1]);
    // Errors first (by file: a.py's from lint and types, then b.py's), then the warnings; each
    // violation exactly once.
    let all: Vec<String> = pages.concat();
    assert_eq!(all, ["L3", "T2", "L1", "T1", "S2", "L2", "S1"]);
    assert_eq!(all.iter().collect::<BTreeSet<_>>().len(), 7);

    // The default shows all seven, and says nothing of pages.
    let r = s.call(20, "last_summary", json!({}));
    assert_eq!(total_violations(&r["structuredContent"]), 7);
    assert!(!summary_text(&r).contains("showing"), "{r}");

    // 0: the counts only, and where the list is.
    let r = s.call(21, "last_summary", json!({"max_violations": 0}));
    assert_eq!(total_violations(&r["structuredContent"]), 0);
    assert_eq!(r["structuredContent"]["summary"]["total_violations"], 7);
    assert!(
        summary_text(&r).ends_with(&format!(
            "; 7 violations not shown (max_violations=0); all of them: {full}"
        )),
        "{r}"
    );
    // Past the end: nothing shown, and said so.
    let r = s.call(22, "last_summary", json!({"offset": 9}));
    assert!(
        summary_text(&r).ends_with(
            "; showing 0 of 7 violations: offset 9 is past the last one (offset=0 starts over)"
        ),
        "{r}"
    );
}

#[test]
fn a_bad_page_argument_is_a_tool_error_that_says_what_to_send() {
    let ws = seven();
    let mut s = mcp(ws.path());
    let cases = [
        (
            json!({"max_violations": -1}),
            "argument `max_violations`: -1 is negative; expected how many violations to show: a whole number, 0 or more (0 shows the counts only)",
        ),
        (
            json!({"max_violations": "all"}),
            "argument `max_violations`: got \"all\"; expected how many violations",
        ),
        (
            json!({"max_violations": 2.5}),
            "argument `max_violations`: 2.5 is not a whole number",
        ),
        (
            json!({"offset": -3}),
            "argument `offset`: -3 is negative; expected where the page starts",
        ),
    ];
    for (i, (args, says)) in cases.iter().enumerate() {
        let e = tool_error(&s.call(10 + i as u64, "run_quality_gates", args.clone())).to_string();
        assert!(e.contains(says), "{args}: {e}");
        assert!(e.contains("run_quality_gates accepts:"), "{e}");
    }
    // Nothing ran for them: no run folder was made.
    assert!(!ws.path().join(".qgates/runs").exists());
    let e = tool_error(&s.call(20, "last_summary", json!({"offset": "next"}))).to_string();
    assert!(e.contains("argument `offset`: got \"next\""), "{e}");
}

// ---------------------------------------------------------------------------------------------
// The editor's command

#[test]
fn the_editor_summary_command_pages_the_same_way() {
    let ws = seven();
    let root = ws.path();
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(root, &trust.path().join("trust.json"), TrustAnswer::NotNow);
    c.initialize(json!({"trusted": true}));
    let summary = |c: &mut LspClient, args: Value| {
        c.request(
            "workspace/executeCommand",
            json!({"command": "qgates.summary", "arguments": [args]}),
        )
    };
    // Every finding listed, pre-existing ones too: the command line does not compare a project
    // run with a reference.
    let first = summary(
        &mut c,
        json!({"scope": "project", "max_violations": 3, "include_existing": true}),
    )
    .expect("a page");
    let page = &first["report"];
    assert_eq!(
        (&page["shown"], &page["total"], &page["next_offset"]),
        (&json!(3), &json!(7), &json!(3)),
        "{first}"
    );
    assert_eq!(codes_in_reading_order(page), ["L3", "T2", "L1"]);
    assert!(
        first["summary_line"]
            .as_str()
            .unwrap()
            .contains("; showing 3 of 7 violations; the rest: offset=3, or .qgates/runs/"),
        "{first}"
    );
    assert_eq!(total_violations(&full_report(root, page)), 7);
    // The last result, paged on without running.
    let rest = summary(
        &mut c,
        json!({"max_violations": 10, "offset": 3, "include_existing": true}),
    )
    .expect("the rest");
    let page = &rest["report"];
    assert_eq!(codes_in_reading_order(page), ["T1", "S2", "L2", "S1"]);
    assert!(page.get("next_offset").is_none(), "{rest}");
    assert_eq!(page["log_dir"], first["report"]["log_dir"], "the same run");

    let e = summary(&mut c, json!({"max_violations": -2})).expect_err("refused");
    assert_eq!(e["code"], -32602, "{e}");
    let message = e["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "qgates.summary: `max_violations`: -2 is negative; expected how many violations"
        ),
        "{message}"
    );
    c.shutdown();
}
