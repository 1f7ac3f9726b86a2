//! Checks every message a language server sent against what the client declared in
//! `initialize`: a message that uses a capability the client did not declare is a violation.
//! Capabilities the server never uses are not checked; a method the checker does not know is a
//! violation, so a new kind of message gets its rule here before it passes.

use serde_json::Value;

/// Whether the client declared `path` (a `true` at the end of it).
fn declared(caps: &Value, path: &[&str]) -> bool {
    path.iter().fold(caps, |v, k| &v[*k]) == true
}

/// Whether the client sent anything at `path`.
fn present(caps: &Value, path: &[&str]) -> bool {
    !path.iter().fold(caps, |v, k| &v[*k]).is_null()
}

/// The violations in `messages` (everything the server sent, in order) of a client that
/// declared `caps`; `requests` are the id and method of the client's requests, to tell what
/// each response answers.
pub fn violations(caps: &Value, messages: &[Value], requests: &[(i64, String)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut commands: Vec<Value> = Vec::new();
    for m in messages {
        let mut v = |why: String| out.push(format!("{why}: {m}"));
        if let Some(method) = m["method"].as_str() {
            check_server_message(caps, method, &m["params"], &mut v);
            continue;
        }
        let answered = m["id"]
            .as_i64()
            .and_then(|id| requests.iter().find(|(i, _)| *i == id))
            .map(|(_, method)| method.as_str());
        let result = &m["result"];
        match answered {
            Some("initialize") => {
                commands = result["capabilities"]["executeCommandProvider"]["commands"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                check_initialize(caps, &result["capabilities"], &mut v);
            }
            Some("textDocument/codeAction") => {
                for action in result.as_array().into_iter().flatten() {
                    check_code_action(caps, action, &commands, &mut v);
                }
            }
            Some("textDocument/diagnostic") => {
                for d in result["items"].as_array().into_iter().flatten() {
                    check_diagnostic(caps, d, &mut v);
                }
            }
            _ => {}
        }
    }
    out
}

fn check_initialize(caps: &Value, server: &Value, v: &mut impl FnMut(String)) {
    let literals = present(
        caps,
        &["textDocument", "codeAction", "codeActionLiteralSupport"],
    );
    if server["codeActionProvider"].is_object() && !literals {
        v("codeActionProvider options to a client without codeActionLiteralSupport".into());
    }
    // UTF-16 is every client's (the protocol's default and mandatory encoding).
    let encoding = server["positionEncoding"].as_str().unwrap_or("utf-16");
    let offered = caps["general"]["positionEncodings"].as_array();
    if encoding != "utf-16" && !offered.is_some_and(|o| o.iter().any(|e| e == encoding)) {
        v(format!("position encoding {encoding} was not offered"));
    }
    if !server["diagnosticProvider"].is_null() && !present(caps, &["textDocument", "diagnostic"]) {
        v("diagnosticProvider to a client without textDocument.diagnostic".into());
    }
}

fn check_server_message(caps: &Value, method: &str, params: &Value, v: &mut impl FnMut(String)) {
    let need = |path: &[&str], v: &mut dyn FnMut(String)| {
        if !declared(caps, path) {
            v(format!("{method} without {}", path.join(".")));
        }
    };
    match method {
        "window/workDoneProgress/create" | "$/progress" => {
            need(&["window", "workDoneProgress"], v);
        }
        "client/registerCapability" | "client/unregisterCapability" => {
            let list = params["registrations"]
                .as_array()
                .or(params["unregisterations"].as_array());
            for r in list.into_iter().flatten() {
                let registered = r["method"].as_str().unwrap_or_default();
                let mut path: Vec<&str> = registered.split('/').collect();
                path.push("dynamicRegistration");
                if !declared(caps, &path) {
                    v(format!(
                        "{method} of {registered} without {}",
                        path.join(".")
                    ));
                }
            }
        }
        "workspace/applyEdit" => {
            need(&["workspace", "applyEdit"], v);
            check_workspace_edit(caps, &params["edit"], v);
        }
        "workspace/configuration" => need(&["workspace", "configuration"], v),
        "workspace/workspaceFolders" => need(&["workspace", "workspaceFolders"], v),
        "window/showDocument" => need(&["window", "showDocument", "support"], v),
        "workspace/diagnostic/refresh" => need(&["workspace", "diagnostics", "refreshSupport"], v),
        "workspace/semanticTokens/refresh"
        | "workspace/codeLens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/inlineValue/refresh" => {
            let kind = method.split('/').nth(1).unwrap_or_default();
            need(&["workspace", kind, "refreshSupport"], v);
        }
        "textDocument/publishDiagnostics" => {
            if !params["version"].is_null() {
                need(&["textDocument", "publishDiagnostics", "versionSupport"], v);
            }
            for d in params["diagnostics"].as_array().into_iter().flatten() {
                check_diagnostic(caps, d, v);
            }
        }
        "window/showMessageRequest" => {
            let extra = params["actions"].as_array().into_iter().flatten().any(|a| {
                a.as_object()
                    .is_some_and(|o| o.keys().any(|k| k != "title"))
            });
            if extra {
                need(
                    &[
                        "window",
                        "showMessage",
                        "messageActionItem",
                        "additionalPropertiesSupport",
                    ],
                    v,
                );
            }
        }
        "window/showMessage" | "window/logMessage" | "telemetry/event" | "$/logTrace" => {}
        other => v(format!("{other}: a method the checker has no rule for")),
    }
}

fn check_diagnostic(caps: &Value, d: &Value, v: &mut impl FnMut(String)) {
    let publish = &caps["textDocument"]["publishDiagnostics"];
    for (field, support) in [
        ("codeDescription", "codeDescriptionSupport"),
        ("data", "dataSupport"),
        ("relatedInformation", "relatedInformation"),
    ] {
        if !d[field].is_null() && publish[support] != true {
            v(format!(
                "diagnostic {field} without publishDiagnostics.{support}"
            ));
        }
    }
    for tag in d["tags"].as_array().into_iter().flatten() {
        let known = publish["tagSupport"]["valueSet"]
            .as_array()
            .is_some_and(|s| s.contains(tag));
        if !known {
            v(format!(
                "diagnostic tag {tag} not in publishDiagnostics.tagSupport"
            ));
        }
    }
}

fn check_code_action(caps: &Value, action: &Value, commands: &[Value], v: &mut impl FnMut(String)) {
    // A `Command` has a string `command`; a `CodeAction` literal's `command` is an object.
    if action["command"].is_string() {
        if !commands.contains(&action["command"]) {
            v(format!(
                "command {} the server did not announce",
                action["command"]
            ));
        }
        return;
    }
    let code_action = &caps["textDocument"]["codeAction"];
    if code_action["codeActionLiteralSupport"].is_null() {
        v("a CodeAction literal without codeActionLiteralSupport".into());
    }
    for (field, support) in [
        ("isPreferred", "isPreferredSupport"),
        ("disabled", "disabledSupport"),
        ("data", "dataSupport"),
    ] {
        if !action[field].is_null() && code_action[support] != true {
            v(format!("code action {field} without codeAction.{support}"));
        }
    }
    check_workspace_edit(caps, &action["edit"], v);
}

fn check_workspace_edit(caps: &Value, edit: &Value, v: &mut impl FnMut(String)) {
    let declared_edit = &caps["workspace"]["workspaceEdit"];
    if !edit["documentChanges"].is_null() && declared_edit["documentChanges"] != true {
        v("documentChanges without workspace.workspaceEdit.documentChanges".into());
    }
    if !edit["changeAnnotations"].is_null() && declared_edit["changeAnnotationSupport"].is_null() {
        v("changeAnnotations without workspace.workspaceEdit.changeAnnotationSupport".into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// One message of each rule, all breaking them for a client that declares nothing.
    fn offending() -> (Vec<Value>, Vec<(i64, String)>) {
        let diagnostic = json!({
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
            "message": "m", "codeDescription": {"href": "https://x"}, "data": {}, "tags": [1],
            "relatedInformation": []
        });
        let edit = json!({"documentChanges": [], "changeAnnotations": {}});
        let messages = vec![
            json!({"id": 1, "result": {"capabilities": {
                "codeActionProvider": {"codeActionKinds": ["quickfix"]},
                "positionEncoding": "utf-8", "diagnosticProvider": {},
                "executeCommandProvider": {"commands": ["known"]}}}}),
            json!({"id": 7, "method": "window/workDoneProgress/create", "params": {"token": "t"}}),
            json!({"method": "$/progress", "params": {"token": "t", "value": {}}}),
            json!({"id": 8, "method": "client/registerCapability", "params": {"registrations": [
                {"id": "w", "method": "workspace/didChangeWatchedFiles"}]}}),
            json!({"id": 9, "method": "workspace/applyEdit", "params": {"edit": edit}}),
            json!({"id": 10, "method": "workspace/configuration", "params": {"items": []}}),
            json!({"method": "textDocument/publishDiagnostics",
                   "params": {"uri": "file:///a", "version": 1, "diagnostics": [diagnostic]}}),
            json!({"id": 11, "method": "window/showMessageRequest",
                   "params": {"type": 1, "message": "m", "actions": [{"title": "a", "x": 1}]}}),
            json!({"id": 12, "method": "qgates/new", "params": {}}),
            json!({"id": 2, "result": [
                {"title": "a", "edit": edit, "isPreferred": true, "disabled": {"reason": "r"},
                 "data": 1},
                {"title": "b", "command": "unknown"}]}),
            json!({"id": 3, "result": {"kind": "full", "items": [diagnostic]}}),
        ];
        let requests = vec![
            (1, "initialize".to_string()),
            (2, "textDocument/codeAction".to_string()),
            (3, "textDocument/diagnostic".to_string()),
        ];
        (messages, requests)
    }

    #[test]
    fn each_undeclared_use_is_found() {
        let (messages, requests) = offending();
        let found = violations(&Value::Null, &messages, &requests);
        for expected in [
            "codeActionProvider options",
            "position encoding utf-8",
            "diagnosticProvider",
            "window/workDoneProgress/create without window.workDoneProgress",
            "$/progress without window.workDoneProgress",
            "registerCapability of workspace/didChangeWatchedFiles",
            "workspace/applyEdit without workspace.applyEdit",
            "documentChanges without",
            "changeAnnotations without",
            "workspace/configuration without",
            "publishDiagnostics without textDocument.publishDiagnostics.versionSupport",
            "diagnostic codeDescription without",
            "diagnostic data without",
            "diagnostic relatedInformation without",
            "diagnostic tag 1",
            "additionalPropertiesSupport",
            "qgates/new: a method the checker has no rule for",
            "a CodeAction literal without",
            "code action isPreferred without",
            "code action disabled without",
            "code action data without",
            "command \"unknown\" the server did not announce",
        ] {
            assert!(
                found.iter().any(|f| f.contains(expected)),
                "{expected:?} not found in {found:#?}"
            );
        }
        // The diagnostic is checked in the pull answer as in the notification.
        assert_eq!(
            found
                .iter()
                .filter(|f| f.contains("diagnostic data without"))
                .count(),
            2
        );
    }

    #[test]
    fn a_client_that_declares_everything_used_has_none() {
        let (mut messages, requests) = offending();
        messages.retain(|m| m["method"] != "qgates/new");
        let actions = messages.iter_mut().find(|m| m["id"] == 2).unwrap();
        actions["result"][1]["command"] = json!("known");
        let caps = json!({
            "general": {"positionEncodings": ["utf-8"]},
            "window": {"workDoneProgress": true,
                       "showMessage": {"messageActionItem": {"additionalPropertiesSupport": true}}},
            "workspace": {"applyEdit": true, "configuration": true,
                          "didChangeWatchedFiles": {"dynamicRegistration": true},
                          "workspaceEdit": {"documentChanges": true, "changeAnnotationSupport": {}}},
            "textDocument": {
                "diagnostic": {},
                "publishDiagnostics": {"versionSupport": true, "codeDescriptionSupport": true,
                                       "dataSupport": true, "relatedInformation": true,
                                       "tagSupport": {"valueSet": [1, 2]}},
                "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": []}},
                               "isPreferredSupport": true, "disabledSupport": true,
                               "dataSupport": true}
            }
        });
        assert_eq!(
            violations(&caps, &messages, &requests),
            Vec::<String>::new()
        );
    }
}
