//! The shared result cache against real stores the tests start (Debian's redis-server on
//! loopback, a folder, one that refuses writes), and S3 URLs at loopback ports where nothing or
//! a silent listener answers: two machines are two clones of one repository in two folders,
//! each with its own wrappers of ruff and mypy that log every start. Clone A's run fills the
//! store; clone B's run then starts no tool and reports what A found.

use crate::common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::lsp::{LspClient, TrustAnswer};
use common::stores::{ReadOnlyFolder, Redis, files_in, free_port};
use common::{check_json_with, git, path_with_tools, tools_bin, write};
use serde_json::{Value, json};

/// Three Python files with findings of each gate and one clean one.
const FILES: [(&str, &str); 4] = [
    ("src/app/__init__.py", ""),
    ("src/app/a.py", "import os\nx=1\n"),
    ("src/app/b.py", "def f() -> int:\n    return 'x'\n"),
    ("src/app/c.py", "y = 2\n"),
];

const RUFF: &str = "  ruff_lint: { preset: ruff-lint }\n  ruff_format: { preset: ruff-format }\n";
const MYPY: &str = "  mypy: { preset: mypy }\n";

/// A wrapper the same on every machine: where it logs and what it runs come from the
/// environment, so its content (the tool's identity) names no folder of the machine.
const WRAPPER: &str = "#!/bin/sh\nname=$(basename \"$0\")\necho \"$name $*\" >> \"$QGATES_TEST_STARTS\"\nexec \"$QGATES_TEST_TOOLS/$name\" \"$@\"\n";

/// The repository both machines clone: `config` is its quality.yaml's gates (and more).
fn origin(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, text) in FILES {
        write(dir.path(), path, text);
    }
    write(dir.path(), "quality.yaml", &format!("version: 1\n{config}"));
    write(
        dir.path(),
        ".gitignore",
        ".qgates/\n.mypy_cache/\n.ruff_cache/\n__pycache__/\n",
    );
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "start"]);
    dir
}

/// One machine: a clone in `<dir>/repo`, its wrappers in `<dir>/bin`, their log in
/// `<dir>/starts.log`.
struct Machine {
    dir: tempfile::TempDir,
    root: PathBuf,
}

impl Machine {
    fn clone_of(origin: &Path) -> Machine {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("repo");
        let out = Command::new("git")
            .args(["clone", "-q"])
            .arg(origin)
            .arg(&root)
            .output()
            .expect("git clone");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for name in ["ruff", "mypy"] {
            common::tool(dir.path(), &format!("bin/{name}"), WRAPPER);
        }
        Machine { dir, root }
    }

    fn env(&self) -> Vec<(&'static str, std::ffi::OsString)> {
        let mut path = vec![self.dir.path().join("bin")];
        path.extend(std::env::split_paths(&path_with_tools()));
        vec![
            ("PATH", std::env::join_paths(path).expect("PATH")),
            (
                "QGATES_TEST_STARTS",
                self.dir.path().join("starts.log").into(),
            ),
            ("QGATES_TEST_TOOLS", tools_bin().into()),
        ]
    }

    /// `qgates` in the clone, with this machine's tools and the store's variables.
    fn qgates(&self, store: &[(&str, &str)]) -> assert_cmd::Command {
        let mut cmd = common::qgates(&self.root);
        cmd.env_remove("QGATES_REMOTE_CACHE")
            .env_remove("QGATES_REMOTE_CACHE_READ_ONLY");
        for (k, v) in self.env() {
            cmd.env(k, v);
        }
        for (k, v) in store {
            cmd.env(k, v);
        }
        cmd
    }

    /// `qgates check --scope project --format json`.
    fn check(&self, store: &[(&str, &str)]) -> (i32, Value) {
        check_json_with(self.qgates(store), &["--scope", "project"])
    }

    /// One line per tool start: `ruff check … FILES`.
    fn starts(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("starts.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// What a run found, without what differs between two runs of the same content: times, log
/// folders, which results came from a cache, the exit codes of processes that did not run.
fn verdict(report: &Value) -> Value {
    let mut r = report.clone();
    for key in ["timings", "log_dir", "warnings"] {
        r.as_object_mut().unwrap().remove(key);
    }
    for g in r["gates"].as_array_mut().unwrap() {
        for key in ["duration_ms", "cached_files", "log", "exit_code"] {
            g.as_object_mut().unwrap().remove(key);
        }
    }
    r
}

fn warnings(report: &Value) -> Vec<String> {
    report["warnings"]
        .as_array()
        .map(|w| w.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// Clone A fills the store (`entries` counts what it holds); clone B, with a fresh `.qgates`,
/// starts no tool and reports what A reported, every file from the cache.
fn two_machines_share(config: &str, url: &str, entries: &dyn Fn() -> usize) {
    let origin = origin(config);
    let store = [("QGATES_REMOTE_CACHE", url)];
    let a = Machine::clone_of(origin.path());
    let (code_a, report_a) = a.check(&store);
    assert_eq!(code_a, 1, "{report_a}");
    assert_eq!(warnings(&report_a), Vec::<String>::new());
    assert!(!a.starts().is_empty(), "A ran the tools");
    let gates = report_a["gates"].as_array().unwrap().len();
    assert_eq!(
        entries(),
        FILES.len() * gates,
        "one entry per gate and file"
    );

    let b = Machine::clone_of(origin.path());
    let (code_b, report_b) = b.check(&store);
    assert_eq!(b.starts(), Vec::<String>::new(), "B started a tool");
    assert_eq!(code_b, code_a);
    assert_eq!(verdict(&report_b), verdict(&report_a));
    for g in report_b["gates"].as_array().unwrap() {
        assert_eq!(g["cached_files"], FILES.len(), "{g}");
    }
    assert_eq!(warnings(&report_b), Vec::<String>::new());
}

#[test]
fn two_machines_share_results_through_redis() {
    let redis = Redis::start();
    two_machines_share(&format!("gates:\n{RUFF}"), &redis.url(), &|| {
        redis.keys().len()
    });
}

/// With mypy too: a `cache: workspace` gate's key (every project file's identity) is the same
/// on both clones.
#[test]
fn two_machines_share_results_through_a_folder() {
    let store = tempfile::tempdir().unwrap();
    let url = format!("file://{}", store.path().display());
    two_machines_share(&format!("gates:\n{RUFF}{MYPY}"), &url, &|| {
        files_in(store.path())
    });
}

#[test]
fn a_corrupt_entry_is_not_believed_and_is_replaced() {
    let redis = Redis::start();
    let origin = origin(&format!("gates:\n{RUFF}"));
    let url = redis.url();
    let store = [("QGATES_REMOTE_CACHE", url.as_str())];
    let a = Machine::clone_of(origin.path());
    let (_, report_a) = a.check(&store);
    let keys = redis.keys();
    let damaged = &keys[0];
    assert_eq!(redis.cli(&["SET", damaged, "QGRC\u{1}garbage"]), "OK");

    let b = Machine::clone_of(origin.path());
    let (_, report_b) = b.check(&store);
    let starts = b.starts();
    assert_eq!(
        starts.len(),
        1,
        "only the damaged entry's gate runs: {starts:?}"
    );
    let files: Vec<&str> = starts[0]
        .split(' ')
        .filter(|a| a.ends_with(".py"))
        .collect();
    assert_eq!(files.len(), 1, "for its one file: {starts:?}");
    assert_eq!(verdict(&report_b), verdict(&report_a));
    assert_eq!(warnings(&report_b), Vec::<String>::new());
    let value = redis.cli(&["GET", damaged]);
    assert!(!value.contains("garbage"), "the fresh result replaced it");
}

/// Read-only writes nothing; what a machine could not share is written by its next run that may.
#[test]
fn read_only_writes_nothing() {
    let store = tempfile::tempdir().unwrap();
    let url = format!("file://{}", store.path().display());
    // Said by the environment.
    let origin_env = origin(&format!("gates:\n{RUFF}"));
    let a = Machine::clone_of(origin_env.path());
    let (code, report) = a.check(&[
        ("QGATES_REMOTE_CACHE", &url),
        ("QGATES_REMOTE_CACHE_READ_ONLY", "1"),
    ]);
    assert_eq!(code, 1);
    assert_eq!(warnings(&report), Vec::<String>::new());
    assert_eq!(files_in(store.path()), 0);
    // Said by quality.yaml.
    let origin_yaml = origin(&format!(
        "cache:\n  remote: {url}\n  read_only: true\ngates:\n{RUFF}"
    ));
    let (_, report) = Machine::clone_of(origin_yaml.path()).check(&[]);
    assert_eq!(warnings(&report), Vec::<String>::new());
    assert_eq!(files_in(store.path()), 0);
    // Allowed to write, the same machine shares what it could not before, running nothing:
    // the count above could see entries.
    let started = a.starts().len();
    a.check(&[("QGATES_REMOTE_CACHE", &url)]);
    assert_eq!(a.starts().len(), started, "the local cache answered");
    assert_eq!(files_in(store.path()), FILES.len() * 2);
}

/// The exit code of a run of `config` with no shared cache, on a machine of its own.
fn exit_code_without_a_store(origin: &Path) -> i32 {
    Machine::clone_of(origin)
        .check(&[("QGATES_REMOTE_CACHE", "")])
        .0
}

/// Exactly one warning, naming `store`.
#[track_caller]
fn one_warning_naming(report: &Value, store: &str) -> String {
    let w = warnings(report);
    assert_eq!(w.len(), 1, "{report}");
    assert!(w[0].contains(store), "{w:?} names {store}");
    w[0].clone()
}

/// A read-only token: a folder store on a read-only mount (every write refused as a
/// permission), and a Redis user whose ACL allows reading only (given by the user and password
/// variables).
#[test]
fn a_store_that_refuses_writes_gives_one_warning_not_an_error() {
    let origin = origin(&format!("gates:\n{RUFF}"));
    let expected = exit_code_without_a_store(origin.path());
    let folder = ReadOnlyFolder::new();
    let redis = Redis::start();
    let acl = [
        "ACL", "SETUSER", "reader", "on", ">secret", "~*", "+@read", "+select", "+client", "+ping",
    ];
    assert_eq!(redis.cli(&acl), "OK");
    let redis_url = redis.url();
    let cases: [(&str, Vec<(&str, &str)>); 2] = [
        (&folder.url(), vec![]),
        (
            &redis_url,
            vec![
                ("QGATES_REMOTE_CACHE_USER", "reader"),
                ("QGATES_REMOTE_CACHE_PASSWORD", "secret"),
            ],
        ),
    ];
    for (url, mut env) in cases {
        env.push(("QGATES_REMOTE_CACHE", url));
        let (code, report) = Machine::clone_of(origin.path()).check(&env);
        assert_eq!(code, expected, "{report}");
        let warning = one_warning_naming(&report, url);
        assert!(warning.contains("permission denied"), "{warning}");
        assert!(
            warning.contains("QGATES_REMOTE_CACHE_READ_ONLY"),
            "{warning}"
        );
    }
    assert_eq!(files_in(folder.dir.path()), 0);
    assert_eq!(files_in(&folder.dir.path().join(".tmp")), 0);
    assert_eq!(redis.keys(), Vec::<String>::new());
}

#[test]
fn a_store_stopped_between_runs_or_during_one_leaves_the_run_to_finish_locally() {
    let mut redis = Redis::start();
    let url = redis.url();
    // A gate that stops the store while the gates run (after the reads, before the writes),
    // and finishes once the store no longer answers.
    let stop = "kill -9 \"$QGATES_TEST_STORE_PID\" 2>/dev/null; while redis-cli -p \"$QGATES_TEST_STORE_PORT\" ping >/dev/null 2>&1; do sleep 0.01; done";
    let config = format!(
        "gates:\n{RUFF}  stop_store:\n    command: [sh, -c, '{stop}']\n    pass_files: false\n    cache: none\n    parsing: {{ strategy: exit_code }}\n"
    );
    let origin = origin(&config);
    let expected = exit_code_without_a_store(origin.path());
    let pid = redis.child.id().to_string();
    let a = Machine::clone_of(origin.path());
    let port = redis.port.to_string();
    let (code, report) = a.check(&[
        ("QGATES_REMOTE_CACHE", &url),
        ("QGATES_TEST_STORE_PID", &pid),
        ("QGATES_TEST_STORE_PORT", &port),
    ]);
    assert_eq!(code, expected, "{report}");
    let warning = one_warning_naming(&report, &url);
    assert!(warning.contains("written"), "{warning}");
    assert!(
        redis.child.try_wait().unwrap().is_some(),
        "the gate stopped the store"
    );

    // Between runs: the store is gone before the run starts.
    redis.stop();
    let b = Machine::clone_of(origin.path());
    let (code, report) = b.check(&[("QGATES_REMOTE_CACHE", &url)]);
    assert_eq!(code, expected);
    let warning = one_warning_naming(&report, &url);
    assert!(warning.contains("not reachable"), "{warning}");
}

/// An S3 store at a loopback port, as reports name it: what OpenDAL's stores (S3, GitHub
/// Actions' cache) do over HTTP when the server is not there or does not answer.
fn s3_at(port: u16) -> String {
    format!("s3://qgates/ci?endpoint=http://127.0.0.1:{port}&region=us-east-1")
}

#[test]
fn an_unreachable_store_costs_one_warning_and_not_the_run() {
    let origin = origin(&format!("gates:\n{RUFF}"));
    let expected = exit_code_without_a_store(origin.path());
    for url in [
        format!("redis://127.0.0.1:{}/0", free_port()),
        s3_at(free_port()),
    ] {
        let m = Machine::clone_of(origin.path());
        let (code, report) = m.check(&[("QGATES_REMOTE_CACHE", &url)]);
        assert_eq!(code, expected, "{report}");
        one_warning_naming(&report, &url);
        // Shown in the text output too (on a machine whose local cache does not answer all).
        let out = Machine::clone_of(origin.path())
            .qgates(&[("QGATES_REMOTE_CACHE", &url)])
            .args(["check", "--scope", "project", "--format", "text"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!("Warning: shared cache {url}")),
            "{text}"
        );
    }
}

/// Results recorded while the store was down are the local cache's own: the next run that
/// reaches a store answers them locally, starting no tool, and shares them then.
#[test]
fn results_a_run_could_not_share_are_shared_by_the_next() {
    let origin = origin(&format!("gates:\n{RUFF}"));
    let a = Machine::clone_of(origin.path());
    let down = format!("redis://127.0.0.1:{}/0", free_port());
    let (code, report) = a.check(&[("QGATES_REMOTE_CACHE", &down)]);
    assert_eq!(code, 1, "{report}");
    one_warning_naming(&report, &down);
    let started = a.starts();
    assert!(!started.is_empty(), "A ran the tools");

    let redis = Redis::start();
    let store = [("QGATES_REMOTE_CACHE", redis.url())];
    let store: Vec<(&str, &str)> = store.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (again, report_again) = a.check(&store);
    assert_eq!(again, code);
    assert_eq!(a.starts(), started, "the local cache answered");
    assert_eq!(warnings(&report_again), Vec::<String>::new());
    assert_eq!(
        redis.keys().len(),
        FILES.len() * 2,
        "one entry per gate and file"
    );

    let b = Machine::clone_of(origin.path());
    let (code_b, report_b) = b.check(&store);
    assert_eq!(b.starts(), Vec::<String>::new(), "B started a tool");
    assert_eq!(code_b, code);
    assert_eq!(verdict(&report_b), verdict(&report));
}

#[test]
fn a_url_qgates_cannot_use_is_a_warning_from_the_environment_and_an_error_in_the_file() {
    let origin_ok = origin(&format!("gates:\n{RUFF}"));
    let expected = exit_code_without_a_store(origin_ok.path());
    let (code, report) = Machine::clone_of(origin_ok.path())
        .check(&[("QGATES_REMOTE_CACHE", "ftp://cache.example/x")]);
    assert_eq!(code, expected, "{report}");
    let warning = one_warning_naming(&report, "ftp://cache.example/x");
    assert!(warning.contains("QGATES_REMOTE_CACHE"), "{warning}");
    assert!(
        warning.contains("redis://host:port"),
        "the forms: {warning}"
    );

    let origin_bad = origin(&format!(
        "cache:\n  remote: ftp://cache.example/x\ngates:\n{RUFF}"
    ));
    let out = Machine::clone_of(origin_bad.path())
        .qgates(&[])
        .args(["check", "--scope", "project"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let problem = common::problem_at(&stderr, 3, 11);
    assert!(problem.contains("file:///absolute/folder"), "{problem}");
}

#[test]
fn a_store_that_never_answers_costs_the_timeout_and_says_so() {
    // Accepts every connection and never says a word.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    let origin = origin(&format!("cache:\n  timeout_ms: 300\ngates:\n{RUFF}"));
    let expected = exit_code_without_a_store(origin.path());
    for url in [format!("redis://127.0.0.1:{port}/0"), s3_at(port)] {
        let (code, report) =
            Machine::clone_of(origin.path()).check(&[("QGATES_REMOTE_CACHE", &url)]);
        assert_eq!(code, expected, "{report}");
        let warning = one_warning_naming(&report, &url);
        assert!(
            warning.contains("did not answer within 300 ms"),
            "{warning}"
        );
    }
}

#[test]
fn the_editor_gets_a_files_results_from_the_store_without_running_a_tool() {
    let redis = Redis::start();
    let origin = origin(&format!("gates:\n{RUFF}"));
    let a = Machine::clone_of(origin.path());
    a.check(&[("QGATES_REMOTE_CACHE", &redis.url())]);

    let b = Machine::clone_of(origin.path());
    let trust = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_qgates"));
    cmd.arg("lsp")
        .current_dir(&b.root)
        .env("QGATES_TRUST_FILE", trust.path().join("trust.json"))
        .env("QGATES_REMOTE_CACHE", redis.url())
        .env_remove("QGATES_LOG");
    for (k, v) in b.env() {
        cmd.env(k, v);
    }
    let mut c = LspClient::spawn_command(cmd, &b.root, TrustAnswer::Trust);
    c.initialize(json!({}));
    c.open("src/app/a.py");
    let diagnostics = c.diagnostics("src/app/a.py");
    let codes: Vec<&str> = diagnostics
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert!(
        codes.contains(&"F401") && codes.contains(&"FORMAT"),
        "{diagnostics:?}"
    );
    // The server has finished whatever it started once it has exited.
    c.shutdown();
    assert_eq!(
        b.starts(),
        Vec::<String>::new(),
        "the editor started a tool"
    );
}

#[test]
fn nothing_is_fetched_before_the_workspace_is_trusted() {
    // Counts the connections made to the "store".
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = connections.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.push(stream);
        }
    });
    let origin = origin(&format!("gates:\n{RUFF}"));
    let m = Machine::clone_of(origin.path());
    let trust = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_qgates"));
    cmd.arg("lsp")
        .current_dir(&m.root)
        .env("QGATES_TRUST_FILE", trust.path().join("trust.json"))
        .env("QGATES_REMOTE_CACHE", format!("redis://127.0.0.1:{port}/0"))
        .env_remove("QGATES_LOG");
    for (k, v) in m.env() {
        cmd.env(k, v);
    }
    let mut c = LspClient::spawn_command(cmd, &m.root, TrustAnswer::NotNow);
    c.initialize(json!({}));
    c.open("src/app/a.py");
    // A run asked for is refused: the server has judged the folder untrusted.
    let refused = c.request(
        "workspace/executeCommand",
        json!({"command": "qgates.run", "arguments": [{}]}),
    );
    assert!(refused.is_err(), "{refused:?}");
    c.shutdown();
    assert_eq!(connections.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(m.starts(), Vec::<String>::new());
}

#[test]
fn status_names_the_store_and_whether_it_answered() {
    let mut redis = Redis::start();
    let url = redis.url();
    let origin = origin(&format!("gates:\n{RUFF}"));
    let m = Machine::clone_of(origin.path());
    let status = |m: &Machine| -> Value {
        let out = m
            .qgates(&[("QGATES_REMOTE_CACHE", &url)])
            .args(["status", "--json"])
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let up = status(&m);
    assert_eq!(up["remote_cache"]["url"], url.as_str());
    assert_eq!(up["remote_cache"]["answered"], true, "{up}");
    redis.stop();
    let down = status(&m);
    assert_eq!(down["remote_cache"]["answered"], false, "{down}");
    assert!(
        down["remote_cache"]["problem"]
            .as_str()
            .unwrap()
            .contains("not reachable")
    );
    // Without one, nothing is said.
    let none = m.qgates(&[]).args(["status", "--json"]).output().unwrap();
    let none: Value = serde_json::from_slice(&none.stdout).unwrap();
    assert!(none.get("remote_cache").is_none(), "{none}");
}
