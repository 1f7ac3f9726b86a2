//! Gates without file arguments (`pass_files: false`: a type checker over the project, cargo, a
//! test suite): they run once, with no file arguments, and only when one of their files is in
//! scope, in every face; their one result is cached for the whole workspace and not believed
//! when it names a file outside it. A script that records each start and its arguments stands
//! in for the tool (tests/common/markers.rs).

use crate::common;

use std::path::Path;

use common::lsp::{LspClient, TrustAnswer};
use common::markers::{Markers, commit_all};
use common::mcp::Server;
use common::{check_json, comparable, gate, workspace, write};
use serde_json::{Value, json};

/// A committed repository with `src/app.py`, `src/lib.rs` and `README.md`, and two gates: `py`,
/// per file over `.py` files, and `whole`, over the project for `*.rs` files, which reports
/// one finding in `src/lib.rs`.
fn repo(markers: &Markers) -> tempfile::TempDir {
    let ws = workspace(&[
        ("src/app.py", "x = 1\n"),
        ("src/lib.rs", "fn main() {}\n"),
        ("README.md", "# A project\n"),
    ]);
    let py = json!([
        "sh",
        "-c",
        format!(
            "echo run >> '{}'; for f in \"$@\"; do echo \"$f:1: P1 seen\"; done; exit 1",
            markers.path("py").display()
        ),
        "py"
    ]);
    let whole = markers.reporting_argv("whole", "src/lib.rs:1: E1 broken\n", 1);
    write(
        ws.path(),
        "quality.yaml",
        &format!(
            "version: 1\ngates:\n  py:\n    command: {py}\n    file_types: [.py]\n    cache: none\n    parsing: {{ strategy: text_violations, pattern: '{PATTERN}' }}\n  whole:\n    command: {whole}\n    files: [\"*.rs\"]\n    pass_files: false\n    parsing: {{ strategy: text_violations, pattern: '{PATTERN}' }}\n"
        ),
    );
    commit_all(ws.path());
    ws
}

const PATTERN: &str = r"^(?P<file>[^:\n]+):(?P<line>\d+): (?P<code>\w+) (?P<message>.+)$";

/// The (file, code) of each violation of a gate.
fn found(report: &Value, id: &str) -> Vec<(String, String)> {
    gate(report, id)["violations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            (
                v["file"].as_str().unwrap_or_default().to_string(),
                v["code"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn it_runs_once_without_arguments_only_when_one_of_its_files_is_in_scope() {
    let markers = Markers::new();
    let ws = repo(&markers);
    let root = ws.path();
    let (_, report) = check_json(root, &["src/app.py", "--no-cache"]);
    assert_eq!(gate(&report, "whole")["skip_reason"], "no matching files");
    assert_eq!(gate(&report, "py")["status"], "failed", "{report}");
    assert_eq!(markers.count("whole"), 0, "started for a .py file");
    let (code, report) = check_json(root, &["src/lib.rs", "--no-cache"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(
        markers.arguments("whole"),
        [""],
        "once, without file arguments"
    );
    assert_eq!(
        found(&report, "whole"),
        [("src/lib.rs".into(), "E1".into())]
    );
    // It covered the one of its files in scope.
    assert_eq!(gate(&report, "whole")["files_checked"], 1, "{report}");
    // `auto`: a change to a .py file leaves it out; a change to a .rs file runs it.
    write(root, "src/app.py", "x = 2\n");
    let (_, report) = check_json(root, &["--no-cache"]);
    assert_eq!(gate(&report, "whole")["skip_reason"], "no matching files");
    assert_eq!(markers.count("whole"), 1);
    write(root, "src/lib.rs", "fn main() { }\n");
    let (_, report) = check_json(root, &["--no-cache"]);
    assert_eq!(gate(&report, "whole")["status"], "failed", "{report}");
    assert_eq!(markers.arguments("whole"), ["", ""]);
}

#[test]
fn its_result_is_reused_until_any_project_file_changes() {
    let markers = Markers::new();
    let ws = repo(&markers);
    let root = ws.path();
    let (_, first) = check_json(root, &["--scope", "project"]);
    assert_eq!(markers.count("whole"), 1);
    let (code, second) = check_json(root, &["--scope", "project"]);
    assert_eq!(code, 1, "{second}");
    assert_eq!(markers.count("whole"), 1, "the cache answered: no process");
    let (fresh, cached) = (gate(&first, "whole"), gate(&second, "whole"));
    assert_eq!(cached["violations"], fresh["violations"], "{second}");
    assert_eq!(cached["status"], "failed");
    assert_eq!(cached["cached_files"], 1, "{second}");
    assert_eq!(cached["files_checked"], fresh["files_checked"]);
    // Any file of the project, not only its own: a type checker's findings depend on them all.
    write(root, "README.md", "# A project, described at more length\n");
    let (_, third) = check_json(root, &["--scope", "project"]);
    assert_eq!(
        markers.count("whole"),
        2,
        "a changed project file ran it again"
    );
    assert_eq!(
        gate(&third, "whole")["cached_files"],
        Value::Null,
        "{third}"
    );
    assert_eq!(
        comparable(&json!({"gates": [gate(&third, "whole")]})),
        comparable(&json!({"gates": [fresh]}))
    );
}

/// Rewrites the file of the first violation of `whole`'s cached result.
fn claim(root: &Path, file: &str, message: &str) {
    let path = root.join(".qgates/cache/results.json");
    let mut cache: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let entry = &mut cache["gates"]["whole"][""]["violations"][0];
    assert!(entry.is_object(), "the workspace's entry: {cache}");
    entry["file"] = json!(file);
    entry["message"] = json!(message);
    std::fs::write(&path, serde_json::to_vec(&cache).unwrap()).unwrap();
}

#[test]
fn a_cached_result_naming_a_file_outside_the_workspace_is_not_believed() {
    let markers = Markers::new();
    let ws = repo(&markers);
    let root = ws.path();
    check_json(root, &["--scope", "project"]);
    assert_eq!(markers.count("whole"), 1);
    // An edit inside the workspace is believed (so the edit is one the cache reads).
    claim(root, "src/other.rs", "claimed");
    let (_, report) = check_json(root, &["--scope", "project"]);
    assert_eq!(markers.count("whole"), 1, "{report}");
    let v = &gate(&report, "whole")["violations"][0];
    assert_eq!(
        (v["file"].as_str(), v["message"].as_str()),
        (Some("src/other.rs"), Some("claimed"))
    );
    // One outside it is not: a fresh finding there would have been dropped when parsed.
    for outside in ["../outside.rs", "/etc/passwd"] {
        claim(root, outside, "claimed");
        let before = markers.count("whole");
        let (_, report) = check_json(root, &["--scope", "project"]);
        assert_eq!(markers.count("whole"), before + 1, "ran again: {report}");
        assert_eq!(
            found(&report, "whole"),
            [("src/lib.rs".into(), "E1".into())]
        );
        assert_eq!(gate(&report, "whole")["cached_files"], Value::Null);
    }
}

#[test]
fn a_save_in_the_editor_starts_it_only_for_one_of_its_files() {
    let markers = Markers::new();
    let ws = repo(&markers);
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(ws.path(), &trust.path().join("t.json"), TrustAnswer::NotNow);
    c.initialize(json!({"trusted": true}));
    c.open("src/app.py");
    c.diagnostics("src/app.py");
    c.edit_and_save("src/app.py", 2, "x = 2\n");
    // The save's run is over when its file's result is published.
    let saved = c.publication_of_version("src/app.py", 2);
    assert_eq!(saved["params"]["diagnostics"][0]["code"], "P1", "{saved}");
    // Counted in the workspace: the findings are also compared with the commit's, in a
    // checkout of it, in the background.
    let here = |m: &Markers| m.arguments_in("whole", ws.path());
    assert_eq!(here(&markers).len(), 0, "a .py save started the .rs gate");
    // Opening one of its files checks that file: the gate runs for it.
    c.open("src/lib.rs");
    c.diagnostics("src/lib.rs");
    assert_eq!(here(&markers).len(), 1, "{:?}", markers.arguments("whole"));
    c.edit_and_save("src/lib.rs", 2, "fn main() { }\n");
    let published = c.publication_of_version("src/lib.rs", 2);
    let codes: Vec<&Value> = published["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["code"])
        .collect();
    assert_eq!(codes, [&json!("E1")], "{published}");
    // A changed project file: its result from the open does not hold, so the save ran it again.
    assert_eq!(here(&markers), ["", ""], "once more, without arguments");
    c.shutdown();
}

#[test]
fn an_agents_run_starts_it_only_for_one_of_its_files() {
    let markers = Markers::new();
    let ws = repo(&markers);
    let mut s = Server::start(ws.path());
    s.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}}),
    );
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let r = s.call(2, "run_quality_gates", json!({"files": ["src/app.py"]}));
    assert_eq!(r["isError"], false, "{r}");
    let report = &r["structuredContent"];
    assert_eq!(
        gate(report, "whole")["skip_reason"],
        "no matching files",
        "{r}"
    );
    assert_eq!(markers.count("whole"), 0);
    let r = s.call(3, "run_quality_gates", json!({"files": ["src/lib.rs"]}));
    let report = &r["structuredContent"];
    assert_eq!(gate(report, "whole")["status"], "failed", "{r}");
    assert_eq!(markers.arguments("whole"), [""]);
}
