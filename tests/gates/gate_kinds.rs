//! Gate kinds and the order gates run in, with `sh` scripts standing in for the tools (what is
//! under test is qgates' ordering, not a tool): `kind: deps` gates finish before any other gate
//! starts and are skipped while their lock files are as at their last green run; `exclusive`
//! gates never overlap, in one run or across two `qgates check` processes; `test` gates do not
//! run on the editor's save; `--skip-kinds` / `--only-kinds` and their MCP arrays leave gates
//! out. Every workspace is a committed git repository.

use crate::common;

use std::path::Path;

use common::lsp::{LspClient, TrustAnswer};
use common::markers::{Markers, commit_all};
use common::mcp::Server;
use common::{check_json, gate, qgates, trusted, workspace, write};
use serde_json::{Value, json};

/// A gate's argv (a YAML flow list) running `script` with `sh -c`.
fn sh(script: &str) -> String {
    json!(["sh", "-c", script, "gate"]).to_string()
}

/// The gates' statuses in report order.
fn statuses(report: &Value) -> Vec<(String, String)> {
    report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["id"].as_str().unwrap().to_string(),
                g["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A repository with `a.py`, `uv.lock` and the given gates.
fn repo(gates: &str) -> tempfile::TempDir {
    let ws = workspace(&[("a.py", "x = 1\n"), ("uv.lock", "version = 1\n")]);
    write(
        ws.path(),
        "quality.yaml",
        &format!("version: 1\ngates:\n{gates}"),
    );
    commit_all(ws.path());
    ws
}

/// A deps gate (listed last, so config order does not put it first) that takes a while, then
/// writes `deps-done`; and two gates that fail unless `deps-done` is there when they start, and
/// record their start.
fn ordering_gates(m: &Markers) -> String {
    let done = m.path("deps-done");
    let later = |name: &str| {
        sh(&format!(
            "test -e '{}' || {{ echo 'started before the deps gate finished'; exit 3; }}; echo run >> '{}'",
            done.display(),
            m.path(name).display()
        ))
    };
    let deps = sh(&format!(
        "sleep 1; echo run >> '{}'; touch '{}'",
        m.path("deps").display(),
        done.display()
    ));
    format!(
        "  lint:\n    kind: lint\n    command: {}\n    pass_files: false\n    parsing: {{ strategy: exit_code }}\n  other:\n    command: {}\n    pass_files: false\n    parsing: {{ strategy: exit_code }}\n  deps:\n    kind: deps\n    command: {deps}\n    parsing: {{ strategy: exit_code }}\n",
        later("lint"),
        later("other"),
    )
}

#[test]
fn deps_gates_finish_before_any_other_gate_starts() {
    let m = Markers::new();
    let ws = repo(&ordering_gates(&m));
    let (code, report) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        statuses(&report),
        [
            ("lint".into(), "passed".into()),
            ("other".into(), "passed".into()),
            ("deps".into(), "passed".into())
        ],
        "{report}"
    );
    assert_eq!(
        (m.count("lint"), m.count("other"), m.count("deps")),
        (1, 1, 1)
    );
}

#[test]
fn deps_gates_come_first_for_the_agent_too() {
    let m = Markers::new();
    let ws = repo(&ordering_gates(&m));
    let mut s = started_server(ws.path());
    let r = s.call(2, "run_quality_gates", json!({"scope": "project"}));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["overall_pass"], true, "{r}");
    assert_eq!((m.count("lint"), m.count("other")), (1, 1));
}

/// A deps gate over `uv.lock` that records each run and fails while `fail` exists, and a lint
/// gate after it.
fn lock_gates(m: &Markers) -> String {
    let deps = sh(&format!(
        "echo run >> '{}'; test ! -e '{}'",
        m.path("deps").display(),
        m.path("fail").display()
    ));
    format!(
        "  deps:\n    kind: deps\n    command: {deps}\n    cache_inputs: [uv.lock]\n    parsing: {{ strategy: exit_code }}\n  lint:\n    kind: lint\n    command: {}\n    pass_files: false\n    cache: none\n    parsing: {{ strategy: exit_code }}\n",
        m.gate_argv("lint")
    )
}

#[test]
fn a_deps_gate_is_skipped_while_its_lock_files_are_unchanged_since_a_green_run() {
    let m = Markers::new();
    let ws = repo(&lock_gates(&m));
    let root = ws.path();
    let run = || check_json(root, &["--scope", "project"]).1;

    let first = run();
    assert_eq!(gate(&first, "deps")["status"], "passed", "{first}");
    assert_eq!(m.count("deps"), 1);
    let second = run();
    assert_eq!(gate(&second, "deps")["status"], "skipped", "{second}");
    assert_eq!(
        gate(&second, "deps")["skip_reason"],
        "lock files unchanged since its last green run: uv.lock"
    );
    assert_eq!(m.count("deps"), 1);
    assert_eq!(m.count("lint"), 2, "the other gates still run");
    // `--no-cache` runs it as it runs every other gate.
    check_json(root, &["--scope", "project", "--no-cache"]);
    assert_eq!(m.count("deps"), 2);

    // A changed lock file: it runs again.
    write(root, "uv.lock", "version = 2\n");
    let changed = run();
    assert_eq!(gate(&changed, "deps")["status"], "passed", "{changed}");
    assert_eq!(m.count("deps"), 3);

    // A failed run is not recorded: the same lock file runs it again, and again.
    write(root, "uv.lock", "version = 3\n");
    std::fs::write(m.path("fail"), "").unwrap();
    for expected in [4, 5] {
        let (code, failed) = check_json(root, &["--scope", "project"]);
        assert_eq!(code, 1, "{failed}");
        assert_eq!(gate(&failed, "deps")["status"], "failed", "{failed}");
        assert_eq!(m.count("deps"), expected);
    }
    std::fs::remove_file(m.path("fail")).unwrap();
    assert_eq!(gate(&run(), "deps")["status"], "passed");
    assert_eq!(gate(&run(), "deps")["status"], "skipped");
    assert_eq!(m.count("deps"), 6);
}

#[test]
fn a_failed_deps_gate_lets_the_others_run_and_the_report_says_their_results_are_suspect() {
    let m = Markers::new();
    let ws = repo(&lock_gates(&m));
    std::fs::write(m.path("fail"), "").unwrap();
    let (code, report) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(gate(&report, "lint")["status"], "passed", "{report}");
    assert_eq!(m.count("lint"), 1);
    let note = report["scope"]["note"].as_str().unwrap_or_default();
    assert!(
        note.starts_with("deps gate `deps` did not pass, so the other gates ran without their dependencies installed"),
        "{report}"
    );
    // One that cannot run at all (its program is missing) is said the same way.
    let broken = lock_gates(&m).replacen(
        &sh(&format!(
            "echo run >> '{}'; test ! -e '{}'",
            m.path("deps").display(),
            m.path("fail").display()
        )),
        "[no-such-installer]",
        1,
    );
    write(
        ws.path(),
        "quality.yaml",
        &format!("version: 1\ngates:\n{broken}"),
    );
    let (code, report) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 3, "{report}");
    assert_eq!(gate(&report, "deps")["status"], "error", "{report}");
    assert_eq!(gate(&report, "lint")["status"], "passed", "{report}");
    assert_eq!(m.count("lint"), 2);
    assert!(
        report["scope"]["note"]
            .as_str()
            .unwrap_or_default()
            .starts_with("deps gate `deps` did not pass"),
        "{report}"
    );
    write(
        ws.path(),
        "quality.yaml",
        &format!("version: 1\ngates:\n{}", lock_gates(&m)),
    );
    // A deps gate that passes leaves no such note.
    std::fs::remove_file(m.path("fail")).unwrap();
    let (_, report) = check_json(ws.path(), &["--scope", "project"]);
    assert!(
        !report["scope"]["note"]
            .as_str()
            .unwrap_or_default()
            .contains("deps gate"),
        "{report}"
    );
}

/// Two gates, each of which marks itself running for a while and fails (exit 3: an error) when
/// it sees another one running; each start is recorded. `exclusive` set on both or neither.
fn overlap_gates(m: &Markers, exclusive: bool) -> String {
    let running = m.path("running");
    let script = |name: &str| {
        sh(&format!(
            "me='{r}.'$$; touch \"$me\"; sleep 0.4; for f in '{r}'.*; do if [ \"$f\" != \"$me\" ] && [ -e \"$f\" ]; then rm \"$me\"; echo overlap; exit 3; fi; done; echo run >> '{}'; rm \"$me\"",
            m.path(name).display(),
            r = running.display()
        ))
    };
    format!(
        "  one:\n    command: {}\n    pass_files: false\n    exclusive: {exclusive}\n    parsing: {{ strategy: exit_code }}\n  two:\n    command: {}\n    pass_files: false\n    exclusive: {exclusive}\n    parsing: {{ strategy: exit_code }}\n",
        script("one"),
        script("two")
    )
}

#[test]
fn the_overlap_check_sees_gates_that_run_together() {
    // Without `exclusive` the two gates run at once, and the scripts say so: the check that
    // follows can fail.
    let m = Markers::new();
    let ws = repo(&overlap_gates(&m, false));
    let (code, report) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 3, "{report}");
    // The first to see the other stops (and takes its own mark away).
    assert!(report["summary"]["errored"].as_u64() >= Some(1), "{report}");
}

#[test]
fn exclusive_gates_never_overlap_in_one_run_or_across_two_processes() {
    let m = Markers::new();
    let ws = repo(&overlap_gates(&m, true));
    let (code, report) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!((m.count("one"), m.count("two")), (1, 1));

    // Two `qgates check` at once: four exclusive runs, one after another.
    let spawn = || {
        qgates(ws.path())
            .arg("check")
            .args(["--scope", "project", "--no-cache", "--format", "json"])
            .env("QGATES_LOG", "warn")
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .expect("run qgates")
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(spawn);
        let b = s.spawn(spawn);
        (a.join().unwrap(), b.join().unwrap())
    });
    for out in [&a, &b] {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!((m.count("one"), m.count("two")), (3, 3));

    // Another process holds the lock: the gates wait for it, and the log says so.
    let held = std::fs::OpenOptions::new()
        .write(true)
        .open(ws.path().join(".qgates/exclusive.lock"))
        .expect("the lock file qgates made");
    held.lock().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_qgates"))
        .current_dir(ws.path())
        .args([
            "check",
            "--scope",
            "project",
            "--no-cache",
            "--format",
            "json",
        ])
        .env_remove("QGATES_LOG")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    loop {
        let line = lines
            .recv_timeout(common::lsp::WAIT)
            .expect("qgates said it waits for the lock");
        if line.contains("waits for an exclusive gate of another qgates process") {
            break;
        }
    }
    assert_eq!(
        (m.count("one"), m.count("two")),
        (3, 3),
        "nothing ran meanwhile"
    );
    held.unlock().unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!((m.count("one"), m.count("two")), (4, 4));
}

#[test]
fn a_test_gate_does_not_run_on_save_but_does_on_the_run_command() {
    let m = Markers::new();
    let ws = repo(&format!(
        "  lint:\n    kind: lint\n    command: {}\n    file_types: [.py]\n    cache: none\n    parsing: {{ strategy: exit_code }}\n  suite:\n    kind: test\n    command: {}\n    pass_files: false\n    cache: none\n    parsing: {{ strategy: exit_code }}\n",
        m.gate_argv("lint"),
        m.gate_argv("suite")
    ));
    let (_dir, store) = trusted(ws.path());
    let mut c = LspClient::spawn(ws.path(), &store, TrustAnswer::NotNow);
    c.initialize(json!({}));
    c.open("a.py");
    c.edit_and_save("a.py", 2, "x = 2\n");
    c.publication_of_version("a.py", 2);
    assert!(m.count("lint") >= 1, "the save ran the lint gate");
    assert_eq!(m.count("suite"), 0, "a test gate does not run on save");
    c.request(
        "workspace/executeCommand",
        json!({"command": "qgates.run", "arguments": [{"scope": "project"}]}),
    )
    .expect("qgates.run");
    assert_eq!(m.count("suite"), 1, "qgates.run runs it");
    c.shutdown();
}

/// A `format`, a `lint` and a `test` gate that each record their start.
fn kinds_repo(m: &Markers) -> tempfile::TempDir {
    let gate = |id: &str, kind: &str| {
        format!(
            "  {id}:\n    kind: {kind}\n    command: {}\n    pass_files: false\n    cache: none\n    parsing: {{ strategy: exit_code }}\n",
            m.gate_argv(id)
        )
    };
    repo(&format!(
        "{}{}{}",
        gate("fmt", "format"),
        gate("lint", "lint"),
        gate("suite", "test")
    ))
}

#[test]
fn skip_kinds_and_only_kinds_leave_gates_out_with_the_reason() {
    let m = Markers::new();
    let ws = kinds_repo(&m);
    let (code, report) = check_json(
        ws.path(),
        &["--scope", "project", "--skip-kinds", "test,e2e"],
    );
    assert_eq!(code, 0, "{report}");
    assert_eq!(gate(&report, "suite")["status"], "skipped");
    assert_eq!(
        gate(&report, "suite")["skip_reason"],
        "kind test left out of this run (skip kinds: test, e2e)"
    );
    assert_eq!(
        (m.count("fmt"), m.count("lint"), m.count("suite")),
        (1, 1, 0)
    );

    let (_, report) = check_json(ws.path(), &["--scope", "project", "--only-kinds", "lint"]);
    assert_eq!(
        gate(&report, "fmt")["skip_reason"],
        "kind format left out of this run (only kinds: lint)"
    );
    assert_eq!(gate(&report, "suite")["status"], "skipped");
    assert_eq!(
        (m.count("fmt"), m.count("lint"), m.count("suite")),
        (1, 2, 0)
    );
}

#[test]
fn bad_kind_lists_are_usage_errors_that_list_the_kinds() {
    let m = Markers::new();
    let ws = kinds_repo(&m);
    let out = qgates(ws.path())
        .args(["check", "--skip-kinds", "tests"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--skip-kinds: unknown gate kind `tests`. The kinds are: format, lint, typecheck, test, e2e, deps, other."),
        "{err}"
    );
    let out = qgates(ws.path())
        .args(["check", "--skip-kinds", "test", "--only-kinds", "lint"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot be used with"), "{err}");
    assert_eq!(m.count("fmt") + m.count("lint") + m.count("suite"), 0);
}

/// `qgates mcp` in `root` (trusted), initialized.
fn started_server(root: &Path) -> Server {
    let mut s = Server::start(root);
    s.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}}),
    );
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s
}

#[test]
fn the_agent_leaves_kinds_out_too_and_is_told_what_it_got_wrong() {
    let m = Markers::new();
    let ws = kinds_repo(&m);
    let mut s = started_server(ws.path());
    let r = s.call(
        2,
        "run_quality_gates",
        json!({"scope": "project", "skip_kinds": ["test"]}),
    );
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(
        gate(&r["structuredContent"], "suite")["skip_reason"],
        "kind test left out of this run (skip kinds: test)"
    );
    let r = s.call(
        3,
        "run_quality_gates",
        json!({"scope": "project", "only_kinds": ["format"]}),
    );
    assert_eq!(
        gate(&r["structuredContent"], "fmt")["status"],
        "passed",
        "{r}"
    );
    assert_eq!(
        gate(&r["structuredContent"], "lint")["status"],
        "skipped",
        "{r}"
    );
    assert_eq!(
        (m.count("fmt"), m.count("lint"), m.count("suite")),
        (2, 1, 0)
    );

    let text = |r: &Value| {
        r["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let r = s.call(
        4,
        "run_quality_gates",
        json!({"only_kinds": ["lint", "unit"]}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        text(&r).starts_with("run_quality_gates: argument `only_kinds`: unknown gate kind `unit`. The kinds are: format, lint, typecheck, test, e2e, deps, other."),
        "{r}"
    );
    let r = s.call(
        5,
        "run_quality_gates",
        json!({"skip_kinds": ["test"], "only_kinds": ["lint"]}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("not both"), "{r}");
    let r = s.call(6, "run_quality_gates", json!({"skip_kinds": []}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("the list of kinds is empty"), "{r}");
    assert_eq!(
        (m.count("fmt"), m.count("lint"), m.count("suite")),
        (2, 1, 0)
    );
}
