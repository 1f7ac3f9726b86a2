//! The in-process harness: the language server runs in this test process (`qgates::lsp::serve`)
//! over OS pipes, driven by the same client as the end-to-end tests. Protocol behaviour that needs
//! no tool process is checked here, quickly.

use crate::common;

use common::lsp::{LspClient, TrustAnswer};
use common::workspace;
use serde_json::json;

/// The server in this process, the trust question answered "not now".
fn in_process(root: &std::path::Path) -> LspClient {
    LspClient::in_process(root, TrustAnswer::NotNow)
}

#[test]
fn capabilities_and_command_argument_checks_in_process() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    let mut c = in_process(ws.path());
    let init = c.initialize(json!({"trusted": false, "logLevel": "debug"}));
    let caps = &init["capabilities"];
    assert_eq!(caps["positionEncoding"], "utf-16");
    assert_eq!(caps["textDocumentSync"]["change"], 1);
    assert_eq!(caps["textDocumentSync"]["save"]["includeText"], false);
    assert_eq!(
        caps["executeCommandProvider"]["commands"],
        json!([
            "qgates.summary",
            "qgates.run",
            "qgates.fixAll",
            "qgates.trust",
            "qgates.applyEdit"
        ])
    );
    assert_eq!(
        caps["codeActionProvider"]["codeActionKinds"],
        json!(["quickfix", "source.fixAll.qgates"])
    );
    assert!(caps.get("diagnosticProvider").is_none(), "pull is opt-in");
    let err = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.summary", "arguments": [{"run": "yes"}]}),
        )
        .unwrap_err();
    assert_eq!(err["code"], -32602);
    assert!(err["message"].as_str().unwrap().contains("`run`"), "{err}");
    // The embedded default is not trusted either: nothing runs, the answer says what to do.
    let err = c
        .request("workspace/executeCommand", json!({"command": "qgates.run"}))
        .unwrap_err();
    assert!(
        err["message"].as_str().unwrap().contains("qgates.trust"),
        "{err}"
    );
    // The trust question was asked (and answered "Not now" by the harness).
    c.wait_for(
        |m| m["method"] == "window/showMessageRequest",
        common::lsp::WAIT,
    );
    let _ = c.request("shutdown", serde_json::Value::Null);
}

#[test]
fn a_client_without_code_action_literals_gets_no_code_action_options() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    let mut c = in_process(ws.path());
    let init = c
        .initialize_as(
            &json!({"capabilities": {"textDocument": {"codeAction": {}}}}),
            json!({"trusted": false}),
        )
        .expect("initialize");
    assert_eq!(init["capabilities"]["codeActionProvider"], true);
    // `qgates.applyEdit` checks its argument as every command does.
    let err = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.applyEdit", "arguments": [{"edit": {"changes": 3}}]}),
        )
        .unwrap_err();
    assert_eq!(err["code"], -32602);
    assert!(
        err["message"].as_str().unwrap().contains("`edit.changes`"),
        "{err}"
    );
    // An edit for a client without `workspace.applyEdit` comes back in the result.
    let uri = c.uri("a.py");
    let edit = json!({"changes": {uri: [{"range": {"start": {"line": 0, "character": 0},
        "end": {"line": 0, "character": 1}}, "newText": "y"}]}});
    let result = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.applyEdit", "arguments": [{"edit": edit}]}),
        )
        .expect("applyEdit");
    assert_eq!(result["applied"], false, "{result}");
    assert_eq!(result["edits"], 1, "{result}");
    assert_eq!(result["edit"], edit, "{result}");
    let _ = c.request("shutdown", serde_json::Value::Null);
}
