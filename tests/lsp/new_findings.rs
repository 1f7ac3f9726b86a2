//! New and pre-existing findings in the editor (docs/lsp.md, "New and pre-existing findings"),
//! with the real ruff in real git repositories: a finding that was there at the reference is
//! published lower (`existingFindings`, default `information`) and says so in its source; one
//! the change made keeps its own severity; the agent answers count pre-existing ones unless
//! asked for them; and once the reference's findings are known, a save costs no checkout.

use std::path::Path;

use crate::common;
use crate::lsp_e2e::shape;

use common::lsp::{LspClient, TrustAnswer};
use common::{git, write};
use serde_json::{Value, json};

const OLD: &str = "import os\n\nx = 1\n";
/// Two lines above the old finding, and a new finding (an f-string without placeholders: F541) below it.
const EDITED: &str = "\"\"\"Docs.\"\"\"\n\nimport os\n\nx = 1\ny = f\"plain\"\n";

/// A repository with one committed file holding an unused import, checked by ruff through a
/// wrapper that logs the folder it ran in (`runs.log`, outside the repository).
fn repo(logs: &Path, settings: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let ruff = common::tools_bin().join("ruff");
    common::tool(
        ws.path(),
        "tools/ruff",
        &format!(
            "#!/bin/sh\npwd >> '{}'\nexec '{}' \"$@\"\n",
            logs.join("runs.log").display(),
            ruff.display()
        ),
    );
    write(
        ws.path(),
        "quality.yaml",
        &format!(
            "version: 1\n{settings}gates:\n  ruff_lint:\n    preset: ruff-lint\n    command: [tools/ruff, check, --output-format, json, --no-fix]\n"
        ),
    );
    write(ws.path(), "old.py", OLD);
    git(ws.path(), &["init", "-q"]);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-q", "-m", "start"]);
    ws
}

/// How many times ruff ran outside the workspace: in a checkout of the reference.
fn reference_runs(logs: &Path, ws: &Path) -> usize {
    let ws = ws.canonicalize().unwrap();
    std::fs::read_to_string(logs.join("runs.log"))
        .unwrap_or_default()
        .lines()
        .filter(|dir| Path::new(dir).canonicalize().ok().as_deref() != Some(ws.as_path()))
        .count()
}

fn client(ws: &Path, trust: &Path, options: Value) -> LspClient {
    let mut c = LspClient::spawn(ws, &trust.join("trust.json"), TrustAnswer::NotNow);
    let mut all = json!({"trusted": true});
    all.as_object_mut()
        .unwrap()
        .extend(options.as_object().unwrap().clone());
    c.initialize(all);
    c
}

fn summary(c: &mut LspClient, args: Value) -> Value {
    c.request(
        "workspace/executeCommand",
        json!({"command": "qgates.summary", "arguments": [args]}),
    )
    .expect("summary")
}

fn listed(answer: &Value) -> usize {
    answer["report"]["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["violations"].as_array().unwrap().len())
        .sum()
}

#[test]
fn a_pre_existing_finding_is_shown_lower_and_a_new_one_at_its_own_severity() {
    let logs = tempfile::tempdir().unwrap();
    let ws = repo(logs.path(), "");
    let trust = tempfile::tempdir().unwrap();
    let mut c = client(ws.path(), trust.path(), json!({}));
    c.open("old.py");
    // As committed: its findings are the commit's, known without a run there.
    let marked = c.publication("old.py");
    let d = marked["diagnostics"].as_array().unwrap();
    assert_eq!(d.len(), 1, "{marked}");
    assert_eq!(d[0]["severity"], 3, "{marked}");
    assert_eq!(shape(d)[0].5, "Ruff Lint (pre-existing)");
    assert_eq!(reference_runs(logs.path(), ws.path()), 0);

    // The first change: the commit's version of the file is checked in a checkout, in the
    // background; until then its findings are shown as they are (new), then marked.
    c.edit_and_save("old.py", 2, EDITED);
    let marked = c.publication_where("old.py", |d| {
        d.len() == 2 && d.iter().any(|d| d["severity"] == 3)
    });
    assert_eq!(reference_runs(logs.path(), ws.path()), 1, "{marked}");
    let checkouts = reference_runs(logs.path(), ws.path());

    // Saved again with one more line: the reference is known, marked at once. The old finding
    // moved three lines down and is still pre-existing; the new one below it is an error.
    c.edit_and_save("old.py", 3, &format!("# A header.\n{EDITED}"));
    let saved = c.publication_of_version("old.py", 3);
    let d = saved["params"]["diagnostics"].as_array().unwrap().clone();
    let mut rows: Vec<(u64, i64, String)> = d
        .iter()
        .map(|d| {
            let line = d["range"]["start"]["line"].as_u64().unwrap();
            let severity = d["severity"].as_i64().unwrap();
            (line, severity, d["source"].as_str().unwrap().to_string())
        })
        .collect();
    rows.sort();
    assert_eq!(
        rows,
        vec![
            (3, 3, "Ruff Lint (pre-existing)".to_string()),
            (6, 1, "Ruff Lint".to_string())
        ],
        "{saved}"
    );
    assert_eq!(
        reference_runs(logs.path(), ws.path()),
        checkouts,
        "the reference's findings came from the cache: no checkout ran"
    );

    // The agent answer lists the new finding and counts the other, unless asked for it.
    let answer = summary(&mut c, json!({}));
    let line = answer["summary_line"].as_str().unwrap();
    assert!(line.contains("1 new violation (1 pre-existing;"), "{line}");
    assert_eq!(listed(&answer), 1, "{answer}");
    assert_eq!(answer["report"]["novelty"]["existing"], 1, "{answer}");
    let whole = summary(&mut c, json!({"include_existing": true}));
    assert_eq!(listed(&whole), 2, "{whole}");
    // A whole-project run is compared with the same commit: in the editor every finding is
    // new or pre-existing, whatever run found it.
    let project = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.run", "arguments": [{"scope": "project"}]}),
        )
        .expect("run");
    let line = project["summary_line"].as_str().unwrap();
    assert!(line.contains("1 new violation (1 pre-existing;"), "{line}");
    c.shutdown();
}

#[test]
fn hidden_pre_existing_findings_leave_the_new_ones_and_new_only_passes_without_them() {
    let logs = tempfile::tempdir().unwrap();
    let ws = repo(logs.path(), "new_only: true\n");
    let trust = tempfile::tempdir().unwrap();
    let mut c = client(ws.path(), trust.path(), json!({"existingFindings": "hide"}));
    c.open("old.py");
    // As committed, its finding is pre-existing: not shown at all.
    assert_eq!(c.diagnostics("old.py"), Vec::<Value>::new());
    let answer = summary(&mut c, json!({}));
    let line = answer["summary_line"].as_str().unwrap();
    assert!(line.starts_with('✅'), "only new findings count: {line}");
    assert!(line.contains("1 pre-existing violation"), "{line}");

    // Once the commit's version of the changed file is known, only the new finding is shown.
    c.edit_and_save("old.py", 2, EDITED);
    let saved = c.publication_where("old.py", |d| d.len() == 1);
    let d = saved["diagnostics"].as_array().unwrap();
    assert_eq!(d[0]["range"]["start"]["line"], 5);
    assert_eq!(d[0]["source"], "Ruff Lint");
    let line = summary(&mut c, json!({}))["summary_line"].clone();
    assert!(line.as_str().unwrap().starts_with('❌'), "{line}");
    c.shutdown();
}
