//! The language server under the declared capabilities of real editors (`tests/fixtures/clients`):
//! the core scenario (open, diagnostics at exact places, save, quick fix, format, fix-all,
//! summary, shutdown with a run in flight) works for each, and no message the server sent uses
//! a capability the client did not declare. Then the clients that misbehave: one that declares
//! nothing, one that exits without `shutdown`, one that vanishes mid-run.

use crate::common;

#[path = "profiles/checker.rs"]
mod checker;

use std::path::Path;
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::edits::{apply, ruff_stdin};
use common::lsp::{LspClient, TrustAnswer, WAIT};
use common::{fixture_copy, git, tool};
use serde_json::{Value, json};

fn profile(file: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/clients")
        .join(file);
    serde_json::from_str(&std::fs::read_to_string(&path).expect("profile")).expect("JSON")
}

/// The bundled example as a committed git repository, with one more gate: `hang`, on `.txt`
/// files, which records its pid and sleeps (a run that is still in flight at shutdown).
fn repo() -> tempfile::TempDir {
    let ws = fixture_copy("python-basic");
    tool(
        ws.path(),
        "tools/hang",
        "#!/bin/sh\necho $$ > \"$(dirname \"$0\")/../hang.pid\"\nexec sleep 300\n",
    );
    let config = ws.path().join("quality.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text.replace(
        "active_gates: [ruff_format, ruff_lint, mypy]",
        "active_gates: [ruff_format, ruff_lint, mypy, hang]",
    ) + "  hang:\n    name: Hang\n    command: [tools/hang]\n    file_types: [.txt]\n    parsing: { strategy: exit_code }\n";
    std::fs::write(&config, text).unwrap();
    git(ws.path(), &["init", "-q"]);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-q", "-m", "start"]);
    ws
}

/// The range of the first `token` on 0-based `line` of `text`, counted in `encoding`, found in
/// the text independently of the tools.
fn place(text: &str, line: usize, token: &str, encoding: &str) -> Value {
    let l = text.lines().nth(line).expect("line");
    let at = l.find(token).expect("token");
    let column = |bytes: usize| match encoding {
        "utf-8" => bytes,
        "utf-16" => l[..bytes].encode_utf16().count(),
        "utf-32" => l[..bytes].chars().count(),
        other => panic!("encoding {other}"),
    };
    json!({
        "start": {"line": line, "character": column(at)},
        "end": {"line": line, "character": column(at + token.len())},
    })
}

fn with_code<'a>(diags: &'a [Value], code: &str) -> &'a Value {
    diags
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {diags:#?}"))
}

/// One client session under a profile.
struct Session {
    c: LspClient,
    caps: Value,
    encoding: String,
}

impl Session {
    fn literals(&self) -> bool {
        !self.caps["textDocument"]["codeAction"]["codeActionLiteralSupport"].is_null()
    }

    fn apply_edit(&self) -> bool {
        self.caps["workspace"]["applyEdit"] == true
    }

    /// The edits of the next `publishDiagnostics` of `rel` for which `done` holds.
    fn diagnostics_when(&mut self, rel: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let uri = self.c.uri(rel);
        let msg = self.c.wait_for(
            |m| {
                m["method"] == "textDocument/publishDiagnostics"
                    && m["params"]["uri"] == uri
                    && done(m["params"]["diagnostics"].as_array().unwrap())
            },
            WAIT,
        );
        msg["params"]["diagnostics"].as_array().unwrap().clone()
    }

    fn code_actions(&mut self, rel: &str, range: &Value, context: Value) -> Vec<Value> {
        let uri = self.c.uri(rel);
        let actions = self
            .c
            .request(
                "textDocument/codeAction",
                json!({"textDocument": {"uri": uri}, "range": range, "context": context}),
            )
            .expect("code actions");
        actions.as_array().cloned().unwrap_or_default()
    }

    fn execute(&mut self, command: &str, arguments: Value) -> Value {
        self.c
            .request(
                "workspace/executeCommand",
                json!({"command": command, "arguments": arguments}),
            )
            .unwrap_or_else(|e| panic!("{command}: {e}"))
    }

    /// The edits of `rel` that an editing command's result carries: sent through
    /// `workspace/applyEdit` to a client that declares it, returned in the result otherwise.
    fn edits_of_result(&mut self, rel: &str, result: &Value, applied_before: usize) -> Vec<Value> {
        let uri = self.c.uri(rel);
        let edit = if self.apply_edit() {
            assert_eq!(result["applied"], true, "{result}");
            let sent: Vec<Value> = self
                .c
                .all_messages()
                .into_iter()
                .filter(|m| m["method"] == "workspace/applyEdit")
                .collect();
            assert_eq!(sent.len(), applied_before + 1, "one applyEdit: {sent:#?}");
            sent.last().unwrap()["params"]["edit"].clone()
        } else {
            assert_eq!(result["applied"], false, "{result}");
            assert!(
                result["message"].as_str().unwrap().contains("applyEdit"),
                "{result}"
            );
            result["edit"].clone()
        };
        edit["changes"][&uri].as_array().expect("edits").clone()
    }

    fn applied_so_far(&self) -> usize {
        self.c
            .all_messages()
            .iter()
            .filter(|m| m["method"] == "workspace/applyEdit")
            .count()
    }

    /// The edits of `rel` a code action makes: a literal's own, or what its command does.
    fn edits_of_action(&mut self, rel: &str, action: &Value) -> Vec<Value> {
        if let Some(command) = action["command"].as_str() {
            assert!(
                !self.literals(),
                "a command to a client with literals: {action}"
            );
            let before = self.applied_so_far();
            let result = self.execute(command, action["arguments"].clone());
            return self.edits_of_result(rel, &result, before);
        }
        assert!(self.literals(), "a literal to a client without: {action}");
        let uri = self.c.uri(rel);
        action["edit"]["changes"][&uri]
            .as_array()
            .expect("edits")
            .clone()
    }
}

fn find_action<'a>(actions: &'a [Value], title: &str) -> &'a Value {
    actions
        .iter()
        .find(|a| a["title"].as_str().is_some_and(|t| t.contains(title)))
        .unwrap_or_else(|| panic!("no {title:?} in {actions:#?}"))
}

fn wait_exit(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        assert!(Instant::now() < deadline, "the server did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for the `hang` tool to write its pid.
fn wait_for_hang(root: &Path) {
    let pid_file = root.join("hang.pid");
    let deadline = Instant::now() + WAIT;
    while !std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n')) {
        assert!(Instant::now() < deadline, "the hang tool never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until the `hang` tool is gone (or a zombie that its new parent reaps).
fn wait_hang_gone(root: &Path) {
    let pid = std::fs::read_to_string(root.join("hang.pid")).unwrap();
    let stat = format!("/proc/{}/stat", pid.trim());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let state = std::fs::read_to_string(&stat).unwrap_or_default();
        let code = state.rsplit(')').next().unwrap_or("").trim().chars().next();
        if state.is_empty() || code == Some('Z') {
            return;
        }
        assert!(Instant::now() < deadline, "the tool still runs: {state}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn core_scenario(file: &str) {
    let profile = profile(file);
    let ws = repo();
    let root = ws.path();
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(root, &trust.path().join("t.json"), TrustAnswer::NotNow);
    let init = c
        .initialize_as(&profile, json!({"trusted": true}))
        .expect("initialize");
    let encoding = init["capabilities"]["positionEncoding"]
        .as_str()
        .unwrap_or("utf-16")
        .to_string();
    let mut s = Session {
        c,
        caps: profile["capabilities"].clone(),
        encoding,
    };
    let enc = s.encoding.clone();
    let read = |rel: &str| std::fs::read_to_string(root.join(rel)).unwrap();

    // Open: each finding on its token, in the negotiated encoding.
    for rel in [
        "src/unicode_line.py",
        "src/unused_import.py",
        "src/type_error.py",
        "src/unformatted.py",
    ] {
        s.c.open(rel);
    }
    let unicode = s.c.diagnostics("src/unicode_line.py");
    assert_eq!(
        with_code(&unicode, "E702")["range"],
        place(&read("src/unicode_line.py"), 2, ";", &enc)
    );
    let unused = s.c.diagnostics("src/unused_import.py");
    assert_eq!(
        with_code(&unused, "F401")["range"],
        place(&read("src/unused_import.py"), 2, "os", &enc)
    );
    let typed = s.c.diagnostics("src/type_error.py");
    assert_eq!(
        with_code(&typed, "return-value")["range"],
        place(&read("src/type_error.py"), 4, "text.split()", &enc)
    );
    let unformatted = s.c.diagnostics("src/unformatted.py");

    // Save: a second unused import is found.
    let rel = "src/unused_import.py";
    let text = read(rel).replace("import os\n", "import os\nimport sys\n");
    s.c.edit_and_save(rel, 2, &text);
    let unused = s.diagnostics_when(rel, |d| d.len() == 2);
    let os = unused
        .iter()
        .find(|d| d["range"] == place(&text, 2, "os", &enc))
        .expect("F401 on os")
        .clone();

    // Quick fix, from the diagnostic as the client got it (with or without `data`).
    let actions = s.code_actions(rel, &os["range"], json!({"diagnostics": [os]}));
    let fix = find_action(&actions, "Remove unused import").clone();
    let fixed = apply(&text, &s.edits_of_action(rel, &fix), &enc);
    assert!(
        !fixed.contains("import os") && fixed.contains("import sys"),
        "{fixed}"
    );

    // Format.
    let format = with_code(&unformatted, "FORMAT").clone();
    let actions = s.code_actions(
        "src/unformatted.py",
        &format["range"],
        json!({"diagnostics": [format]}),
    );
    let action = find_action(&actions, "Format with ruff").clone();
    let before = read("src/unformatted.py");
    let formatted = apply(
        &before,
        &s.edits_of_action("src/unformatted.py", &action),
        &enc,
    );
    assert_eq!(
        formatted,
        ruff_stdin(root, &["format"], "src/unformatted.py", &before)
    );
    assert_ne!(formatted, before);

    // Fix-all: the code action, and the command.
    let expected = ruff_stdin(
        root,
        &["format"],
        rel,
        &ruff_stdin(root, &["check", "--fix-only"], rel, &text),
    );
    let actions = s.code_actions(
        rel,
        &os["range"],
        json!({"diagnostics": [], "only": ["source.fixAll"]}),
    );
    let all = find_action(&actions, "fix all").clone();
    assert_eq!(apply(&text, &s.edits_of_action(rel, &all), &enc), expected);
    let before = s.applied_so_far();
    let uri = s.c.uri(rel);
    let result = s.execute("qgates.fixAll", json!([{"uri": uri}]));
    let edits = s.edits_of_result(rel, &result, before);
    assert_eq!(apply(&text, &edits, &enc), expected);

    // Summary.
    let summary = s.execute("qgates.summary", json!([]));
    assert!(summary["summary_line"].is_string(), "{summary}");

    // Shutdown with a run in flight.
    std::fs::write(root.join("notes.txt"), "notes\n").unwrap();
    let notes = s.c.uri("notes.txt");
    s.c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": notes}}),
    );
    wait_for_hang(root);
    let answer = s.c.request("shutdown", Value::Null);
    assert_eq!(answer, Ok(Value::Null));
    let messages = s.c.all_messages();
    let requests = s.c.requests.clone();
    let status = s.c.shutdown().expect("status");
    assert!(status.success(), "{status:?}");
    wait_hang_gone(root);

    let found = checker::violations(&s.caps, &messages, &requests);
    assert_eq!(found, Vec::<String>::new(), "{file}");
    // What the client declared is used (the checker saw the messages it judges).
    let sent = |method: &str| messages.iter().any(|m| m["method"] == method);
    assert_eq!(
        sent("$/progress"),
        s.caps["window"]["workDoneProgress"] == true,
        "progress"
    );
    assert_eq!(
        sent("client/registerCapability"),
        s.caps["workspace"]["didChangeWatchedFiles"]["dynamicRegistration"] == true,
        "file watching"
    );
}

#[test]
fn neovim_0_6() {
    core_scenario("neovim-0.6.1.json");
}

#[test]
fn neovim_0_11() {
    core_scenario("neovim-0.11.0.json");
}

#[test]
fn vscode_1_65() {
    core_scenario("vscode-1.65.2.json");
}

#[test]
fn emacs_29_eglot() {
    core_scenario("emacs-29.1-eglot.json");
}

#[test]
fn minimal_client() {
    core_scenario("minimal.json");
}

/// A server whose standard error goes to a file, to look for panics.
fn spawn_logged(root: &Path, logs: &Path) -> LspClient {
    let stderr = std::fs::File::create(logs.join("stderr.log")).unwrap();
    LspClient::spawn_with_stderr(
        root,
        &logs.join("trust.json"),
        TrustAnswer::NotNow,
        Stdio::from(stderr),
    )
}

fn assert_no_panic(logs: &Path) {
    let stderr = std::fs::read_to_string(logs.join("stderr.log")).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_client_that_declares_nothing_is_answered_and_exit_ends_the_server() {
    let ws = repo();
    let logs = tempfile::tempdir().unwrap();
    let mut c = spawn_logged(ws.path(), logs.path());
    // No `capabilities` object at all: the protocol requires one, so this is invalid params,
    // answered; the server waits for a proper `initialize` or `exit`.
    let err = c
        .initialize_as(&json!({}), json!({"trusted": true}))
        .unwrap_err();
    assert_eq!(err["code"], -32602, "{err}");
    c.notify("exit", Value::Null);
    let mut child = c.child.take().unwrap();
    wait_exit(&mut child);
    assert_no_panic(logs.path());
}

#[test]
fn exit_without_shutdown_ends_the_server() {
    let ws = repo();
    let logs = tempfile::tempdir().unwrap();
    let mut c = spawn_logged(ws.path(), logs.path());
    c.initialize_as(&profile("minimal.json"), json!({"trusted": true}))
        .expect("initialize");
    c.open("src/unused_import.py");
    c.diagnostics("src/unused_import.py");
    c.notify("exit", Value::Null);
    let mut child = c.child.take().unwrap();
    // The protocol's status for an exit without shutdown is 1.
    let status = wait_exit(&mut child);
    assert!(status.code().is_some(), "{status:?}");
    assert_no_panic(logs.path());
}

#[test]
fn a_client_that_vanishes_mid_run_ends_the_server() {
    let ws = repo();
    let logs = tempfile::tempdir().unwrap();
    let mut c = spawn_logged(ws.path(), logs.path());
    c.initialize_as(&profile("minimal.json"), json!({"trusted": true}))
        .expect("initialize");
    std::fs::write(ws.path().join("notes.txt"), "notes\n").unwrap();
    let notes = c.uri("notes.txt");
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": notes}}),
    );
    wait_for_hang(ws.path());
    let mut child = c.child.take().unwrap();
    c.close_input();
    let status = wait_exit(&mut child);
    assert!(status.code().is_some(), "{status:?}");
    wait_hang_gone(ws.path());
    assert_no_panic(logs.path());
}
