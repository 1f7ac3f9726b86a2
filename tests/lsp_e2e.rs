//! The language server end to end: the real `qgates lsp` binary over stdio, on copies of the
//! bundled example, with the real ruff and mypy.

mod common;

use std::path::Path;

use common::fixture_copy;
use common::lsp::{LspClient, TrustAnswer};
use serde_json::{Value, json};

/// (code, start line, start character, end line, end character, source) of each diagnostic.
fn shape(diags: &[Value]) -> Vec<(String, u64, u64, u64, u64, String)> {
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

fn row(
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
    // ruff counts characters; `;` after "café ☕" is character 17 → UTF-16 offset 16.
    assert_eq!(
        shape(&c.diagnostics("src/unicode_line.py")),
        vec![
            row("E702", 2, 16, 2, 17, "Ruff Lint"),
            row("FORMAT", 0, 0, 0, 67, "Ruff Format"),
            row("assignment", 2, 28, 2, 31, "Mypy"),
        ]
    );
    assert_eq!(
        shape(&c.diagnostics("src/unused_import.py")),
        vec![row("F401", 2, 7, 2, 9, "Ruff Lint")]
    );
    assert_eq!(c.diagnostics("src/clean.py"), Vec::<Value>::new());
    c.shutdown();
}
