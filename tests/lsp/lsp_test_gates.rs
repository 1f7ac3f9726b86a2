//! A test suite as a gate in the editor: `qgates.run` runs the pytest preset of the
//! python-tests example, and the failing test is a diagnostic at its assertion's line.

use crate::common;

use common::fixture_copy;
use common::lsp::{LspClient, TrustAnswer, WAIT};
use serde_json::{Value, json};

#[test]
fn a_failing_test_is_a_diagnostic_at_its_assertion() {
    let ws = fixture_copy("python-tests");
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(
        ws.path(),
        &trust.path().join("trust.json"),
        TrustAnswer::NotNow,
    );
    c.initialize(json!({"trusted": true}));
    let rel = "tests/test_prices.py";
    c.open(rel);
    c.request(
        "workspace/executeCommand",
        json!({"command": "qgates.run", "arguments": [{"scope": "project"}]}),
    )
    .expect("qgates.run");
    let uri = c.uri(rel);
    let published = c.wait_for(
        |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["diagnostics"]
                    .as_array()
                    .is_some_and(|d| !d.is_empty())
        },
        WAIT,
    );
    let diagnostics: Vec<Value> = published["params"]["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    let d = &diagnostics[0];
    let text = std::fs::read_to_string(ws.path().join(rel)).unwrap();
    let assertion = text
        .lines()
        .position(|l| l.contains("assert line == "))
        .unwrap();
    assert_eq!(d["range"]["start"]["line"], assertion, "{d:#}");
    assert_eq!(
        d["code"],
        "tests/test_prices.py::test_receipt_line_shows_euros"
    );
    assert_eq!(d["severity"], 1, "an error: {d:#}");
    assert!(
        d["message"].as_str().unwrap().contains("AssertionError"),
        "{d:#}"
    );
    c.shutdown();
}
