//! Workspace trust in `qgates lsp`, attacked from every request that can start a process: an
//! untrusted folder starts nothing (no gate, no fixer) whatever the client asks, folders are
//! trusted one by one, and trust covers what will actually run — each command, the program it
//! resolves to, the scripts of the workspace it runs — so a change to any of them asks again
//! before anything of it starts. Every gate and fixer records its starts in a marker file outside
//! the workspace; "nothing started" is checked only after the server has answered something that
//! comes after the request under test.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::lsp::{LspClient, TrustAnswer, WAIT, file_uri};
use common::markers::{Markers, commit_all, gate_config};
use common::{path_with_tools, tool, write};
use serde_json::{Value, json};

fn is_question(m: &Value) -> bool {
    m["method"] == "window/showMessageRequest"
}

fn question_text(q: &Value) -> &str {
    q["params"]["message"].as_str().unwrap_or_default()
}

/// The next trust question, answered with `title`; returns it.
fn answer_next_question(c: &mut LspClient, title: &str) -> Value {
    let q = c.wait_for(is_question, WAIT);
    c.answer(&q["id"], json!({ "title": title }));
    q
}

/// Waits for the next trust question after a save of `rel`. A publication for `rel` that comes
/// first means the save was checked without asking: then `not_run` (the markers of what must not
/// start) are checked at once, so a server that runs the change fails here, not after a timeout.
fn question_before_any_run(c: &mut LspClient, rel: &str, not_run: &[(&Markers, &str)]) -> Value {
    let uri = c.uri(rel);
    loop {
        let m = c.wait_for(
            |m| {
                is_question(m)
                    || (m["method"] == "textDocument/publishDiagnostics"
                        && m["params"]["uri"] == uri)
            },
            WAIT,
        );
        if is_question(&m) {
            return m;
        }
        for (markers, name) in not_run {
            assert!(
                !markers.exists(name),
                "{rel} was checked with `{name}` before anyone was asked: {m}"
            );
        }
    }
}

fn run_command(c: &mut LspClient, args: Value) -> Result<Value, Value> {
    c.request(
        "workspace/executeCommand",
        json!({"command": "qgates.run", "arguments": [args]}),
    )
}

/// A refused `qgates.run` in a folder: its answer comes after the folder's scheduler has handled
/// everything sent to it before (opens, saves, pulls), so it is the signal that they were refused.
fn assert_run_refused(c: &mut LspClient, folder: &Path) {
    let err = run_command(c, json!({"folder": folder.display().to_string()}))
        .expect_err("an untrusted folder runs nothing");
    assert!(
        err["message"]
            .as_str()
            .unwrap_or_default()
            .contains("qgates.trust"),
        "the refusal says how to trust: {err}"
    );
}

fn open_path(c: &mut LspClient, path: &Path) {
    let text = std::fs::read_to_string(path).expect("read the file to open");
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": file_uri(path), "languageId": "python", "version": 1, "text": text}}),
    );
}

fn save_path(c: &mut LspClient, path: &Path, version: i32, text: &str) {
    let uri = file_uri(path);
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
    );
    std::fs::write(path, text).expect("write");
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri}}),
    );
}

fn wait_for_publication(c: &mut LspClient, path: &Path) {
    let uri = file_uri(path);
    c.wait_for(
        |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri,
        WAIT,
    );
}

/// A committed repository at `root` whose gate `lint` records starts in marker `name`, with a
/// fixer recording in marker `<name>-fix`, and one Python file `a.py`.
fn marker_repo_at(root: &Path, markers: &Markers, name: &str) {
    let fixer = markers.fixer_argv(&format!("{name}-fix"));
    write(
        root,
        "quality.yaml",
        &gate_config(&markers.gate_argv(name), Some(&fixer)),
    );
    write(root, "a.py", "x = 1\n");
    commit_all(root);
}

/// A diagnostic as a client may send it back: its `data` names the gate with a fixer, whether or
/// not the server ever published it.
fn forged_diagnostic() -> Value {
    json!({
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}},
        "severity": 1,
        "source": "Lint",
        "message": "found",
        "data": {"gate": "lint", "fixable": true}
    })
}

fn code_actions(c: &mut LspClient, rel: &str, only: Option<&[&str]>) -> Value {
    let mut context = json!({"diagnostics": [forged_diagnostic()]});
    if let Some(only) = only {
        context["only"] = json!(only);
    }
    c.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": c.uri(rel)},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}},
            "context": context
        }),
    )
    .expect("code actions are answered")
}

fn no_actions(actions: &Value) -> bool {
    actions.is_null() || actions.as_array().is_some_and(Vec::is_empty)
}

#[test]
fn an_untrusted_folder_starts_no_gate_and_no_fixer_whatever_the_client_asks() {
    let markers = Markers::new();
    let ws = tempfile::tempdir().unwrap();
    marker_repo_at(ws.path(), &markers, "gate");
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(
        ws.path(),
        &trust.path().join("trust.json"),
        TrustAnswer::NotNow,
    );
    let init = c.initialize(json!({"pullDiagnostics": true}));
    assert!(
        init["capabilities"]["diagnosticProvider"].is_object(),
        "pull diagnostics are announced: {init}"
    );
    c.wait_for(is_question, WAIT);
    c.open("a.py");

    for only in [
        None,
        Some(&["quickfix"][..]),
        Some(&["source.fixAll.qgates"][..]),
    ] {
        let actions = code_actions(&mut c, "a.py", only);
        assert!(no_actions(&actions), "{only:?}: {actions}");
    }
    let fix_all = c.request(
        "workspace/executeCommand",
        json!({"command": "qgates.fixAll", "arguments": [{"uri": c.uri("a.py")}]}),
    );
    assert!(fix_all.is_err(), "qgates.fixAll is refused: {fix_all:?}");
    let pulled = c
        .request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": c.uri("a.py")}}),
        )
        .expect("a pull is answered");
    assert_eq!(pulled["items"], json!([]), "{pulled}");
    c.edit_and_save("a.py", 2, "x = 2\n");
    assert_run_refused(&mut c, ws.path());
    assert!(!markers.exists("gate"), "no gate started");
    assert!(!markers.exists("gate-fix"), "no fixer started");

    // The same requests start processes once the folder is trusted: the ones above could have.
    c.request(
        "workspace/executeCommand",
        json!({"command": "qgates.trust", "arguments": [{"folder": ws.path().display().to_string()}]}),
    )
    .expect("trust");
    code_actions(&mut c, "a.py", Some(&["quickfix"]));
    assert!(markers.exists("gate-fix"), "a trusted folder's fixer runs");
    run_command(&mut c, json!({})).expect("a trusted folder runs");
    assert!(markers.exists("gate"), "a trusted folder's gate runs");
    c.shutdown();
}

/// Three committed repositories side by side (their paths name them apart in messages).
fn three_repos(markers: &Markers) -> (tempfile::TempDir, [PathBuf; 3]) {
    let parent = tempfile::tempdir().unwrap();
    let roots = ["alpha", "beta", "gamma"].map(|name| {
        let root = parent.path().join(name);
        marker_repo_at(&root, markers, name);
        root
    });
    (parent, roots)
}

#[test]
fn among_several_folders_only_the_trusted_ones_run_and_a_folder_added_later_waits_for_trust() {
    let markers = Markers::new();
    let (_parent, [alpha, beta, gamma]) = three_repos(&markers);
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(&alpha, &trust.path().join("trust.json"), TrustAnswer::Hold);
    c.initialize_folders(&[&alpha, &beta], json!({}));
    // One question per folder, in either order: alpha is trusted, beta is not.
    for _ in 0..2 {
        let q = c.wait_for(is_question, WAIT);
        let title = if question_text(&q).contains(&*alpha.to_string_lossy()) {
            "Trust"
        } else {
            assert!(question_text(&q).contains(&*beta.to_string_lossy()), "{q}");
            "Not now"
        };
        c.answer(&q["id"], json!({ "title": title }));
    }
    let (a, b, g) = (alpha.join("a.py"), beta.join("a.py"), gamma.join("a.py"));
    open_path(&mut c, &a);
    open_path(&mut c, &b);
    save_path(&mut c, &a, 2, "x = 2\n");
    save_path(&mut c, &b, 2, "x = 2\n");
    wait_for_publication(&mut c, &a);
    assert!(markers.exists("alpha"), "the trusted folder runs");
    assert_run_refused(&mut c, &beta);
    assert!(!markers.exists("beta"), "the untrusted folder does not");

    c.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [{"uri": file_uri(&gamma), "name": "gamma"}], "removed": []}}),
    );
    let q = answer_next_question(&mut c, "Not now");
    assert!(question_text(&q).contains(&*gamma.to_string_lossy()), "{q}");
    open_path(&mut c, &g);
    save_path(&mut c, &g, 2, "x = 2\n");
    assert_run_refused(&mut c, &gamma);
    assert!(!markers.exists("gamma"), "the added folder waits for trust");

    let trusted = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.trust", "arguments": [{"folder": gamma.display().to_string()}]}),
        )
        .expect("trust the added folder");
    assert_eq!(
        trusted["trusted"],
        json!([gamma.display().to_string()]),
        "only the folder named is trusted"
    );
    // Trust checks the folder's open files.
    wait_for_publication(&mut c, &g);
    assert!(markers.exists("gamma"), "the folder runs once trusted");

    save_path(&mut c, &b, 3, "x = 3\n");
    assert_run_refused(&mut c, &beta);
    assert!(
        !markers.exists("beta"),
        "trusting another folder trusts not this one"
    );
    assert!(!markers.exists("beta-fix"));
    c.shutdown();
}

/// A committed repository whose gate is the script `scripts/lint.sh`, recording in marker `A`.
fn script_repo(markers: &Markers) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    tool(ws.path(), "scripts/lint.sh", &markers.script("A"));
    write(
        ws.path(),
        "quality.yaml",
        &gate_config(r#"["./scripts/lint.sh"]"#, None),
    );
    write(ws.path(), "a.py", "x = 1\n");
    commit_all(ws.path());
    ws
}

/// Trusts the folder through the question, then saves `a.py` (opened) and waits for its check.
fn trust_and_check_a_save(c: &mut LspClient) {
    c.initialize(json!({}));
    answer_next_question(c, "Trust");
    c.open("a.py");
    c.edit_and_save("a.py", 2, "x = 2\n");
    c.publication_of_version("a.py", 2);
}

#[test]
fn a_script_of_the_workspace_changed_on_disk_asks_again_before_it_runs() {
    let markers = Markers::new();
    let ws = script_repo(&markers);
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(
        ws.path(),
        &trust.path().join("trust.json"),
        TrustAnswer::Hold,
    );
    trust_and_check_a_save(&mut c);
    let runs = markers.count("A");
    assert!(runs >= 1, "the trusted script ran");

    // The configuration is the same; the script it runs is not.
    tool(ws.path(), "scripts/lint.sh", &markers.script("B"));
    c.edit_and_save("a.py", 3, "x = 3\n");
    let q = question_before_any_run(&mut c, "a.py", &[(&markers, "B")]);
    assert!(
        question_text(&q).contains("scripts/lint.sh"),
        "the question shows what will run: {q}"
    );
    assert!(!markers.exists("B"), "the changed script did not run");
    assert_eq!(markers.count("A"), runs, "nor did the old one");

    c.answer(&q["id"], json!({"title": "Trust"}));
    c.edit_and_save("a.py", 4, "x = 4\n");
    markers.wait_for("B");
    c.shutdown();
}

#[test]
fn a_program_appearing_in_the_workspace_venv_asks_again_before_it_runs() {
    let markers = Markers::new();
    // `qlint` on PATH, outside the workspace.
    let tools = tempfile::tempdir().unwrap();
    tool(tools.path(), "qlint", &markers.script("P"));
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        "quality.yaml",
        &gate_config(r#"["qlint"]"#, None),
    );
    write(ws.path(), "a.py", "x = 1\n");
    commit_all(ws.path());
    let trust = tempfile::tempdir().unwrap();
    let mut path = vec![tools.path().to_path_buf()];
    path.extend(std::env::split_paths(&path_with_tools()));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_qgates"));
    cmd.arg("lsp")
        .current_dir(ws.path())
        .env("PATH", std::env::join_paths(path).unwrap())
        .env("QGATES_TRUST_FILE", trust.path().join("trust.json"))
        .env_remove("QGATES_LOG");
    let mut c = LspClient::spawn_command(cmd, ws.path(), TrustAnswer::Hold);
    trust_and_check_a_save(&mut c);
    let runs = markers.count("P");
    assert!(runs >= 1, "qlint from PATH ran");

    // Nothing in the configuration changes, but `qlint` now resolves inside the workspace (an
    // ignored folder, as .venv usually is).
    tool(ws.path(), ".venv/bin/qlint", &markers.script("V"));
    c.edit_and_save("a.py", 3, "x = 3\n");
    let q = question_before_any_run(&mut c, "a.py", &[(&markers, "V")]);
    assert!(
        question_text(&q).contains(".venv/bin/qlint"),
        "the question shows the program that will run: {q}"
    );
    assert!(!markers.exists("V"), "the workspace's qlint did not run");
    assert_eq!(markers.count("P"), runs, "nor did the one on PATH");

    c.answer(&q["id"], json!({"title": "Trust"}));
    c.edit_and_save("a.py", 4, "x = 4\n");
    markers.wait_for("V");
    c.shutdown();
}

#[test]
fn a_fixer_script_changed_on_disk_does_not_run_from_a_code_action() {
    let markers = Markers::new();
    let ws = tempfile::tempdir().unwrap();
    tool(ws.path(), "scripts/fix.sh", &markers.fixer_script("fix-A"));
    write(
        ws.path(),
        "quality.yaml",
        &gate_config(&markers.gate_argv("gate"), Some(r#"["./scripts/fix.sh"]"#)),
    );
    write(ws.path(), "a.py", "x = 1\n");
    commit_all(ws.path());
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(
        ws.path(),
        &trust.path().join("trust.json"),
        TrustAnswer::Hold,
    );
    c.initialize(json!({}));
    answer_next_question(&mut c, "Trust");
    c.open("a.py");
    // Checked, so the answer has been taken.
    c.publication("a.py");
    code_actions(&mut c, "a.py", Some(&["quickfix"]));
    let fixes = markers.count("fix-A");
    assert!(fixes >= 1, "the trusted fixer ran");

    // Code actions run the fixer in the request itself, not through a run of the gates.
    tool(ws.path(), "scripts/fix.sh", &markers.fixer_script("fix-B"));
    code_actions(&mut c, "a.py", Some(&["quickfix"]));
    code_actions(&mut c, "a.py", Some(&["source.fixAll.qgates"]));
    let _ = c.request(
        "workspace/executeCommand",
        json!({"command": "qgates.fixAll", "arguments": [{"uri": c.uri("a.py")}]}),
    );
    assert!(!markers.exists("fix-B"), "the changed fixer did not run");
    assert_eq!(markers.count("fix-A"), fixes, "nor did the old one");
    let q = c.wait_for(is_question, WAIT);
    assert!(
        question_text(&q).contains("scripts/fix.sh"),
        "the question shows what will run: {q}"
    );
    c.shutdown();
}

/// Writes `quality.yaml` and tells the server it was saved.
fn save_config(c: &mut LspClient, text: &str) {
    write(&c.root.clone(), "quality.yaml", text);
    let uri = c.uri("quality.yaml");
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri}}),
    );
}

#[test]
fn a_trust_answer_covers_only_the_configuration_it_was_asked_about() {
    let markers = Markers::new();
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        "quality.yaml",
        &gate_config(&markers.gate_argv("1"), None),
    );
    write(ws.path(), "a.py", "x = 1\n");
    commit_all(ws.path());
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(
        ws.path(),
        &trust.path().join("trust.json"),
        TrustAnswer::Hold,
    );
    c.initialize(json!({}));
    let first = c.wait_for(is_question, WAIT);
    c.open("a.py");

    // While the question is on screen, the configuration changes to one that runs something
    // else. It is broken for a moment on the way: the server publishes a configuration's
    // problems and clears them once it reads a good one, so the cleared list is the sign that
    // it has read the new configuration (a good one replacing a good one publishes nothing).
    save_config(&mut c, "version: 1\ngates: [\n");
    let broken = c.publication("quality.yaml");
    assert_ne!(broken["diagnostics"], json!([]), "{broken}");
    save_config(&mut c, &gate_config(&markers.gate_argv("2"), None));
    let fixed = c.publication("quality.yaml");
    assert_eq!(fixed["diagnostics"], json!([]), "{fixed}");

    // The answer is about the first configuration, which is no longer the one that would run.
    c.answer(&first["id"], json!({"title": "Trust"}));
    let second = question_before_any_run(&mut c, "a.py", &[(&markers, "1"), (&markers, "2")]);
    assert_ne!(second["id"], first["id"]);
    assert!(
        question_text(&second).contains(&*markers.path("2").to_string_lossy()),
        "the new question shows the new command: {second}"
    );
    assert_run_refused(&mut c, ws.path());
    assert!(
        !markers.exists("1"),
        "the old configuration's gate did not run"
    );
    assert!(
        !markers.exists("2"),
        "the new configuration's gate did not run"
    );
    c.shutdown();
}
