//! What an agent is handed stays within its budget whatever the repository (docs/agents.md):
//! every answer under 8 KB (text and structured page each), one new finding under 2 KB, and
//! paging reaches every finding exactly once. Real ruff, real git repositories.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::mcp::Server;
use common::{git, write};
use serde_json::{Value, json};

/// Ten unused imports a module, sorted, each a finding with its fix.
const IMPORTS: &str = "import glob\nimport json\nimport math\nimport os\nimport random\nimport re\nimport shutil\nimport string\nimport sys\nimport time\n";

/// Fifty modules of ten findings each (500), committed.
fn five_hundred() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    for i in 0..50 {
        write(root, &format!("pkg/mod_{i:02}.py"), IMPORTS);
    }
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  ruff: { preset: ruff-lint }\n",
    );
    write(root, ".gitignore", ".qgates/\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "start"]);
    ws
}

fn server(root: &Path) -> Server {
    let path = common::path_with_tools();
    let mut s = Server::start_with_env(root, &[("PATH", Path::new(&path))]);
    s.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "raw", "version": "0"}}),
    );
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s
}

/// The text and the structured page of an answer, after checking the two together are within
/// `limit` bytes (a client may hand the model either, or both).
fn within(result: &Value, limit: usize) -> (String, Value) {
    assert_eq!(result["isError"], false, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap().to_string();
    let page = result["structuredContent"].clone();
    let json = page.to_string();
    assert!(
        text.len() + json.len() <= limit,
        "{} bytes of text and {} of JSON:\n{text}",
        text.len(),
        json.len()
    );
    (text, page)
}

/// (file, line, code) of every violation on a page.
fn shown(page: &Value) -> Vec<(String, u64, String)> {
    (page["gates"].as_array().unwrap().iter())
        .flat_map(|g| g["violations"].as_array().into_iter().flatten())
        .map(|v| {
            (
                v["file"].as_str().unwrap().to_string(),
                v["line"].as_u64().unwrap(),
                v["code"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn five_hundred_findings_come_in_pages_under_8_kb_that_reach_every_one() {
    let ws = five_hundred();
    let root = ws.path();
    let mut s = server(root);
    let first = s.call(2, "run_quality_gates", json!({"scope": "project"}));
    let (text, page) = within(&first, 8000);
    assert_eq!(page["total"], 500, "{page}");
    let n = page["shown"].as_u64().unwrap();
    assert!(
        (20..50).contains(&n),
        "{n} shown: the budget, not the count, cut the page"
    );
    assert!(
        text.lines().next().unwrap().contains(&format!(
            "showing {n} of 500 violations; the rest: offset={n}"
        )),
        "{text}"
    );
    // Each fix as text the agent can apply.
    assert!(text.contains("\n    fix: delete 1:1-2:1"), "{text}");

    let mut seen: BTreeSet<(String, u64, String)> = shown(&page).into_iter().collect();
    let mut next = page["next_offset"].as_u64();
    let mut id = 3;
    while let Some(offset) = next {
        let r = s.call(id, "last_summary", json!({"offset": offset}));
        let (_, page) = within(&r, 8000);
        let rows = shown(&page);
        assert!(!rows.is_empty(), "a page past {offset} shows something");
        for row in rows {
            assert!(seen.insert(row.clone()), "{row:?} on two pages");
        }
        next = page["next_offset"].as_u64();
        id += 1;
    }
    assert_eq!(seen.len(), 500, "every finding on exactly one page");
}

#[test]
fn one_new_finding_among_five_hundred_is_answered_under_2_kb() {
    let ws = five_hundred();
    let root = ws.path();
    write(
        root,
        "pkg/mod_07.py",
        &format!("{IMPORTS}import zipimport\n"),
    );
    let mut s = server(root);
    let r = s.call(2, "run_quality_gates", json!({}));
    let (text, page) = within(&r, 2000);
    assert_eq!(page["novelty"]["new"], 1, "{page}");
    assert_eq!(
        shown(&page),
        [("pkg/mod_07.py".to_string(), 11, "F401".to_string())],
        "{text}"
    );
    assert!(
        text.contains("`zipimport` imported but unused (ruff)"),
        "{text}"
    );
    // The file's content as checked, so an answer read after an edit is not taken as current.
    let id = page["contents"]["pkg/mod_07.py"].as_str().unwrap();
    assert!(
        text.contains(&format!("pkg/mod_07.py (as checked: blob {}):", &id[..7])),
        "{text}"
    );

    // Edited after the run: the same answer, asked again, says its findings are of the old text.
    write(root, "pkg/mod_07.py", IMPORTS);
    let again = s.call(3, "last_summary", json!({}));
    let (text, _) = within(&again, 2000);
    assert!(
        text.contains(
            "pkg/mod_07.py (changed since this check: its findings are of the text before):"
        ),
        "{text}"
    );
}

#[test]
fn a_huge_message_is_cut_and_the_answer_stays_under_8_kb() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write(root, "a.py", "x = 1\n");
    // A test runner's failure output: one finding whose message is 100 KB.
    let long = "assert 1 == 2 ".repeat(7500);
    write(
        root,
        "emit.py",
        &format!(
            "import json\nprint(json.dumps([{{\"file\": \"a.py\", \"line\": 1, \"message\": {long:?}}}, {{\"file\": \"a.py\", \"line\": 1, \"message\": \"short\"}}]))\n"
        ),
    );
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  t:\n    command: [python3, emit.py]\n    pass_files: false\n    parsing:\n      strategy: json_violations\n      violations_path: \"\"\n      field_map: { file: file, line: line, message: message }\n",
    );
    write(root, ".gitignore", ".qgates/\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "start"]);
    let mut s = server(root);
    let r = s.call(2, "run_quality_gates", json!({"scope": "project"}));
    let (text, page) = within(&r, 8000);
    assert_eq!(page["shown"], 2, "{page}");
    assert!(
        text.contains("more bytes in full_report) (t)"),
        "the cut is said: {text}"
    );
}
