//! Latency and memory of the language server, measured the way an editor sees them: a minimal
//! LSP client speaks JSON-RPC over the stdio of the built `qgates lsp` and of `ruff server` (ruff's
//! own language server, a reference peer), next to the raw tool processes, in one run. A small
//! harness of its own (medians of N, the sides interleaved and rotated) rather than criterion: each
//! sample is a round trip through a server and its processes, and what matters is the ratio to the
//! baseline measured in the same run.
//!
//! (a) Save → diagnostics, one gate (`ruff_lint`): the client writes new content to the file and
//!     sends `didChange` + `didSave` back to back, as an editor does on save; the time runs until
//!     the `publishDiagnostics` of that version arrives. Baseline: the raw `ruff check
//!     --output-format json --no-fix FILE` process, run to its end with its output captured.
//!     Reference: `ruff server` given the same two notifications (it lints the buffer in process
//!     and publishes on open and on every change; a save alone publishes nothing). Every sample
//!     writes new content (a new unused variable) with a modification time of its own, whole
//!     seconds from every other revision's (`write_revision`), so no side is answered by a cache
//!     of its own. Target: qgates ≤ raw ruff + 1 ms (medians).
//! (b) The same with the three default gates (`ruff_format`, `ruff_lint`, `mypy`). Baseline: each
//!     gate's raw process on the file, one after another. Target: qgates ≤ the slowest + 5 ms.
//!     Also, paired per sample: the mypy gate's duration in the server's report (asked untimed
//!     afterwards), and the rest of the sample (the server's own share).
//! (c) Re-save of unchanged content (one gate, then three): `didSave` alone, timed until the
//!     saved file's `publishDiagnostics` arrives (the server answers every save with the saved
//!     file's diagnostics, changed or not); they must equal the last ones, and `qgates.summary`,
//!     asked untimed afterwards, must show a report that the cache answered alone (with no log
//!     folder: a run that starts no process makes none, and the report before had one). The server
//!     runs with wrappers of ruff and mypy first on its PATH that log every start. Target: ≤ 1 ms,
//!     zero processes.
//! (d) 200 files opened at once (`ruff_lint`): 200 `didOpen` in one write to a fresh server; the
//!     time runs until all 200 files have their diagnostics (each checked against the tool's own
//!     count). Baseline: one raw `ruff check` over the 200 files. Reference: `ruff server`.
//!     Floor: a stand-in server that does nothing of its own (`stand_in_server`): it runs the
//!     same `ruff check` once the last open has arrived and replays qgates' publications, written
//!     beforehand. What it takes is what any server pays that runs the tool as a process.
//!     Target: qgates ≤ 1.2 × the raw process.
//! (e) Memory of the server process (`VmRSS` and `VmHWM` of /proc/PID/status): after
//!     `initialize`, and after `qgates.run` with scope `project` over a generated 2,000-file project
//!     with the three default gates. Targets: ≤ 10 MB after `initialize`, ≤ 40 MB after the
//!     project run (both read on the peak, `VmHWM`). While that run goes on, a request the
//!     protocol library answers at once (an unknown method) is sent every 2 ms: the longest
//!     waits for its answer are how long the server stayed deaf. Also how many of the functions
//!     listed in `link/startup-symbols.txt` (laid out together by build.rs) the binary has,
//!     against how many the benches' build had when the list was recorded (the list names the
//!     functions of the release build and of the benches' build, which differ): names carry
//!     hashes that change with the code around them and with the toolchain and dependencies,
//!     and the memory after `initialize` grows with the functions missing.
//!
//! In (a) and (b) every sample, of every side, starts at least `SPACING` after the previous
//! sample ended. The server needs the pause: it treats a trigger within 50 ms of the previous one
//! as part of a burst and waits for 50 ms of quiet (src/lsp/scheduler.rs). The other sides get
//! the same pause because a process started straight after another runs warmer than one started
//! after a pause: when only the server's samples waited, the raw `ruff check` it is compared with
//! ran about 1 ms faster (in its own CPU time, too) than the same ruff started by the server.
//! Caches: warm. The tools' caches (`.ruff_cache`, `.mypy_cache`) stay, and each side runs
//! untimed a few times first. `QGATES_BENCH_RUNS` sets N (default 5; (a) and (c) take 10 N samples
//! per side, (b) 4 N, (d) 2 N). `QGATES_BENCH_ONLY=ad` runs only the parts named (here (a) and
//! (d)); `QGATES_BENCH_SERVER_LOG=1` shows the servers' stderr.
//!
//! The binary is the one cargo builds for this package (`CARGO_BIN_EXE_qgates`, the bench
//! profile, i.e. release). The tools come from `QGATES_BENCH_TOOLS` (a folder holding `ruff` and
//! `mypy`), else the project's `.venv/bin`, else `PATH`; every side gets the same ones.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

#[path = "common/process.rs"]
mod process;
use process::{Tools, median, ms, parts_from_env, runs_from_env, timed, verdict};
#[path = "../tests/common/lsp_wire.rs"]
mod lsp_wire;
use lsp_wire::{file_uri, frame, read_frame};

use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Timed saves are at least this far apart (the server's burst window is 50 ms).
const SPACING: Duration = Duration::from_millis(120);
/// The longest wait for one answer before the bench gives up.
const WAIT: Duration = Duration::from_secs(120);
/// Files opened at once in (d).
const OPENED: usize = 200;
/// Files of the project in (e).
const PROJECT_FILES: usize = 2_000;
const SAVED: &str = "src/app.py";

fn main() {
    if let Some(publications) = std::env::var_os(STAND_IN) {
        stand_in_server(Path::new(&publications));
        return;
    }
    // `cargo bench` passes `--bench`; a filter argument is accepted and ignored.
    let tools = Tools::find();
    let runs = runs_from_env(5);
    println!(
        "qgates {}\nruff   {}\nmypy   {}\ncaches: warm (kept; each side ran untimed first)\ntimed saves at least {} ms apart (the server's burst window is 50 ms)\n",
        tools.qgates.display(),
        tools.ruff.display(),
        tools.mypy.display(),
        SPACING.as_millis()
    );
    // QGATES_BENCH_ONLY=ad runs only (a) and (d).
    let only = parts_from_env("abcde");
    let mut results = String::new();
    if only.contains('a') {
        results.push_str(&save_bench(&tools, runs * 10));
    }
    if only.contains('b') {
        results.push_str(&three_gates_bench(&tools, runs * 4));
    }
    if only.contains('c') {
        results.push_str(&resave_bench(&tools, runs * 10));
    }
    if only.contains('d') {
        results.push_str(&open_bench(&tools, runs * 2));
    }
    if only.contains('e') {
        results.push_str(&memory_bench(&tools));
    }
    println!("\n== Results ==\n{results}");
}

// ---------------------------------------------------------------------------------------------
// Tools and timing

/// `ruff check` as the `ruff_lint` gate runs it, over root-relative files.
fn ruff_check(tools: &Tools, root: &Path, files: &[String]) -> Command {
    let mut c = tools.command(&tools.ruff, root);
    c.args(["check", "--output-format", "json", "--no-fix"])
        .args(files);
    c
}

fn min(v: &[Duration]) -> Duration {
    v.iter().min().copied().unwrap_or_default()
}

fn row(label: &str, v: &[Duration]) -> String {
    format!(
        "    {label:<44} {:>8.1} ms (min {:.1})\n",
        ms(median(v)),
        ms(min(v))
    )
}

/// A line while a part runs: the medians so far.
fn progress(part: &str, done: usize, n: usize, sides: &[(&str, &[Duration])]) {
    let mut line = format!("    {part} {done}/{n}:");
    for (name, t) in sides {
        let _ = write!(line, " {name} {:.1} ms", ms(median(t)));
    }
    println!("{line}");
}

/// Sleeps until `SPACING` has passed since `since`.
fn space(since: Instant) {
    let left = SPACING.saturating_sub(since.elapsed());
    std::thread::sleep(left);
}

// ---------------------------------------------------------------------------------------------
// A minimal LSP client

/// A language server child process and the client's side of its stdio.
struct Lsp {
    name: &'static str,
    child: Child,
    /// Bytes for the server's stdin, written by a thread of their own: a reader that answers
    /// the server never waits for a large write to finish (which could deadlock both sides).
    writer: Sender<Vec<u8>>,
    /// The server's stdin, shared with that thread: a timed save is written here directly, so
    /// its time does not include waking the writing thread (tens of µs on an idle machine).
    stdin: Arc<Mutex<ChildStdin>>,
    /// Messages from the server, each stamped with when its last byte was read.
    incoming: Receiver<(Instant, Value)>,
    backlog: VecDeque<(Instant, Value)>,
    next_id: i64,
    root: PathBuf,
}

fn send_frames(writer: &Sender<Vec<u8>>, bytes: &[u8]) {
    writer
        .send(bytes.to_vec())
        .expect("the server reads its stdin");
}

fn write_loop(stdin: &Mutex<ChildStdin>, rx: Receiver<Vec<u8>>) {
    for bytes in rx {
        if write_frames(stdin, &bytes).is_err() {
            return;
        }
    }
}

/// Writes whole frames under the lock, so the writing thread's frames and a direct write never
/// mix their bytes.
fn write_frames(stdin: &Mutex<ChildStdin>, bytes: &[u8]) -> std::io::Result<()> {
    let mut stdin = stdin.lock().unwrap_or_else(PoisonError::into_inner);
    stdin.write_all(bytes).and_then(|()| stdin.flush())
}

/// Reads framed messages until the stream ends; answers the server's own requests as an editor
/// that accepts everything and picks nothing would (`null` results).
fn read_loop(reader: impl Read, writer: Sender<Vec<u8>>, tx: Sender<(Instant, Value)>) {
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let mut line = String::new();
    while let Some(Ok(body)) = read_frame(&mut reader, &mut line) {
        let at = Instant::now();
        let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
            continue;
        };
        // `client/registerCapability`, `window/workDoneProgress/create`,
        // `window/showMessageRequest`, `workspace/configuration` (one null per item) …
        if let (Some(id), Some(method)) = (msg.get("id"), msg["method"].as_str()) {
            let result = match method {
                "workspace/configuration" => {
                    let n = msg["params"]["items"].as_array().map_or(0, Vec::len);
                    Value::Array(vec![Value::Null; n])
                }
                _ => Value::Null,
            };
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
            let _ = writer.send(frame(&answer));
        }
        if tx.send((at, msg)).is_err() {
            return;
        }
    }
}

impl Lsp {
    /// `qgates lsp` in `root`, with its own empty trust store (trust comes from the options).
    fn qgates(tools: &Tools, root: &Path, trust: &Path, path: Option<&OsString>) -> Lsp {
        let mut c = tools.command(&tools.qgates, root);
        c.arg("lsp").env("QGATES_TRUST_FILE", trust);
        if let Some(p) = path {
            c.env("PATH", p);
        }
        Lsp::spawn("qgates lsp", c, root)
    }

    /// The stand-in server of (d) (`stand_in_server`), replaying `publications`.
    fn stand_in(tools: &Tools, root: &Path, publications: &Path, files: &[String]) -> Lsp {
        let exe = std::env::current_exe().expect("the bench's own path");
        let ruff = ruff_check(tools, root, files);
        let mut c = tools.command(&exe, root);
        c.env(STAND_IN, publications)
            .arg("--stand-in")
            .arg(ruff.get_program())
            .args(ruff.get_args());
        Lsp::spawn("stand-in", c, root)
    }

    fn ruff(tools: &Tools, root: &Path) -> Lsp {
        let mut c = tools.command(&tools.ruff, root);
        c.arg("server");
        Lsp::spawn("ruff server", c, root)
    }

    fn spawn(name: &'static str, mut cmd: Command, root: &Path) -> Lsp {
        let log = std::env::var_os("QGATES_BENCH_SERVER_LOG").is_some_and(|v| v == "1");
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if log { Stdio::inherit() } else { Stdio::null() })
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        let stdin = Arc::new(Mutex::new(child.stdin.take().expect("stdin")));
        let (writer, to_write) = channel();
        let shared = Arc::clone(&stdin);
        std::thread::spawn(move || write_loop(&shared, to_write));
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        let w = writer.clone();
        std::thread::spawn(move || read_loop(stdout, w, tx));
        Lsp {
            name,
            child,
            writer,
            stdin,
            incoming: rx,
            backlog: VecDeque::new(),
            next_id: 1,
            root: root.to_path_buf(),
        }
    }

    fn uri(&self, rel: &str) -> String {
        file_uri(&self.root.join(rel))
    }

    /// `initialize` + `initialized`, with an editor's usual capabilities and push diagnostics
    /// only (no `textDocument.diagnostic`: both servers then publish).
    fn initialize(&mut self, options: Value) -> Value {
        let root_uri = file_uri(&self.root);
        let result = self.request(
            "initialize",
            json!({
                "processId": std::process::id(),
                "rootUri": root_uri,
                "workspaceFolders": [{"uri": root_uri, "name": "bench"}],
                "initializationOptions": options,
                "capabilities": {
                    "general": {"positionEncodings": ["utf-16"]},
                    "window": {"workDoneProgress": true},
                    "workspace": {
                        "didChangeWatchedFiles": {"dynamicRegistration": true},
                        "configuration": true,
                        "workspaceFolders": true
                    },
                    "textDocument": {
                        "synchronization": {"didSave": true, "dynamicRegistration": true},
                        "publishDiagnostics": {"versionSupport": true}
                    }
                }
            }),
        );
        self.notify("initialized", json!({}));
        result
    }

    fn notify(&mut self, method: &str, params: Value) {
        send_frames(
            &self.writer,
            &frame(&json!({"jsonrpc": "2.0", "method": method, "params": params})),
        );
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.try_request(method, params)
            .unwrap_or_else(|e| panic!("{}: {method} failed: {e}", self.name))
    }

    fn try_request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id;
        self.next_id += 1;
        send_frames(
            &self.writer,
            &frame(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})),
        );
        let (_, msg) = self.wait_for(|m| m["id"] == id && m.get("method").is_none(), WAIT);
        match msg.get("error") {
            Some(e) => Err(e.clone()),
            None => Ok(msg["result"].clone()),
        }
    }

    /// The next message matching `pred` (others are kept for later), with its arrival time.
    fn wait_for(&mut self, pred: impl Fn(&Value) -> bool, timeout: Duration) -> (Instant, Value) {
        if let Some(i) = self.backlog.iter().position(|(_, m)| pred(m)) {
            return self.backlog.remove(i).expect("the position exists");
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(left) {
                Ok((at, m)) if pred(&m) => return (at, m),
                Ok(other) => {
                    self.backlog.push_back(other);
                    // Diagnostics nobody waits for any more are dropped, not hoarded.
                    if self.backlog.len() > 10_000 {
                        self.backlog.pop_front();
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!(
                    "{}: no matching message within {timeout:?}; last messages: {:#?}",
                    self.name,
                    self.backlog.iter().rev().take(5).collect::<Vec<_>>()
                ),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("{}: the server closed its output", self.name)
                }
            }
        }
    }

    /// Forgets everything received so far.
    fn drain(&mut self) {
        self.backlog.clear();
        while self.incoming.try_recv().is_ok() {}
    }

    fn did_open_frame(&self, rel: &str, text: &str, version: i32) -> Vec<u8> {
        frame(
            &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
                "textDocument": {"uri": self.uri(rel), "languageId": "python", "version": version, "text": text}
            }}),
        )
    }

    fn open(&mut self, rel: &str, text: &str, version: i32) {
        let f = self.did_open_frame(rel, text, version);
        send_frames(&self.writer, &f);
    }

    /// An editor's save of new content: `didChange` (full text) and `didSave` in one write.
    /// Returns when the bytes were written.
    fn change_and_save(&mut self, rel: &str, text: &str, version: i32) -> Instant {
        let uri = self.uri(rel);
        let mut bytes = frame(
            &json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": text}]
            }}),
        );
        bytes.extend(frame(
            &json!({"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {
                "textDocument": {"uri": uri}
            }}),
        ));
        let start = Instant::now();
        write_frames(&self.stdin, &bytes).expect("the server reads its stdin");
        start
    }

    fn save(&mut self, rel: &str) -> Instant {
        let bytes = frame(
            &json!({"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {
                "textDocument": {"uri": self.uri(rel)}
            }}),
        );
        let start = Instant::now();
        write_frames(&self.stdin, &bytes).expect("the server reads its stdin");
        start
    }

    /// The diagnostics published for `rel` at `version` (earlier versions are skipped).
    fn diagnostics(&mut self, rel: &str, version: i32) -> (Instant, Vec<Value>) {
        let uri = self.uri(rel);
        let (at, m) = self.wait_for(
            |m| {
                m["method"] == "textDocument/publishDiagnostics"
                    && m["params"]["uri"] == uri.as_str()
                    && m["params"]["version"] == version
            },
            WAIT,
        );
        let items = m["params"]["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        (at, items)
    }

    /// `VmRSS`, `VmHWM`, `RssAnon` and `RssFile` of the server process, in kB.
    fn memory(&self) -> Memory {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc/PID/status (Linux) is readable");
        let field = |name: &str| -> u64 {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or_else(|| panic!("{name} is missing from /proc/PID/status"))
        };
        Memory {
            rss: field("VmRSS:"),
            hwm: field("VmHWM:"),
            anon: field("RssAnon:"),
            file: field("RssFile:"),
        }
    }

    fn shutdown(mut self) {
        let _ = self.try_request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A process's memory, in kB.
struct Memory {
    rss: u64,
    /// The peak of `rss`.
    hwm: u64,
    /// Of `rss`: the process's own (heap, stacks) …
    anon: u64,
    /// … and pages of mapped files (mostly the binary's code, shared with the page cache).
    file: u64,
}

impl Memory {
    fn line(&self) -> String {
        let mb = |kb: u64| kb as f64 / 1024.0;
        format!(
            "VmRSS {:.1} MB (anonymous {:.1}, file {:.1}), VmHWM {:.1} MB",
            mb(self.rss),
            mb(self.anon),
            mb(self.file),
            mb(self.hwm)
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Workspaces

/// Writes revision `rev` of a module with a modification time of its own, whole seconds apart
/// from every other revision's, as edits seconds apart would have. mypy takes a file whose size
/// and modification time (in whole seconds) match its cache as unchanged: revisions written
/// within one second, all of one size, were then checked or not depending on the clock, and
/// a sample took 100 or 115 ms by that alone.
fn write_revision(path: &Path, text: &str, rev: usize) {
    std::fs::write(path, text).expect("write the module");
    let at = std::time::UNIX_EPOCH + Duration::from_secs(1_600_000_000 + rev as u64);
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(at))
        .expect("set the module's modification time");
}

/// A module with one lint finding that changes with `rev` (an unused local named after it), an
/// unused import, and a type error, formatted as `ruff format` wants it.
fn module(rev: usize) -> String {
    format!(
        r#""""A module of the language-server benchmark, revision {rev}."""

from __future__ import annotations

import os
from dataclasses import dataclass, field


@dataclass
class Record:
    """A record with a name, a size and tags."""

    name: str
    size: int = 0
    tags: list[str] = field(default_factory=list)

    def grow(self, by: int) -> int:
        self.size += by * 3
        return self.size

    def label(self) -> str:
        return f"{{self.name}}:{{self.size}}"


def helper(values: list[int]) -> int:
    total = 0
    for v in values:
        total += v * 2
    return total


def revision() -> int:
    unused_{rev} = {rev}
    return helper([1, 2, 3])


def broken() -> int:
    return "not an int"
"#
    )
}

/// A clean module (no finding from any default gate).
fn clean_module(i: usize) -> String {
    format!(
        "\"\"\"Clean module {i}.\"\"\"\n\n\ndef value_{i}(x: int) -> int:\n    return x + {i}\n"
    )
}

/// The default configuration, with only `gates` active when given.
fn config(gates: Option<&[&str]>) -> String {
    let default = qgates::core::config::DEFAULT_CONFIG;
    match gates {
        None => default.to_string(),
        Some(g) => {
            let from = "active_gates: [ruff_format, ruff_lint, mypy]";
            assert!(
                default.contains(from),
                "the default configuration changed shape; update config()"
            );
            default.replacen(from, &format!("active_gates: [{}]", g.join(", ")), 1)
        }
    }
}

fn git(root: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A git repository (the auto scope reads git) with `quality.yaml`, `src/app.py` and a few clean
/// modules, all committed.
fn workspace(gates: Option<&[&str]>) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("qgates-lsp-bench-")
        .tempdir()
        .expect("a temporary folder");
    let root = dir.path();
    std::fs::write(root.join("quality.yaml"), config(gates)).expect("write quality.yaml");
    std::fs::create_dir_all(root.join("src")).expect("create src");
    std::fs::write(root.join(SAVED), module(0)).expect("write the module");
    for i in 0..20 {
        std::fs::write(root.join(format!("src/clean_{i:02}.py")), clean_module(i))
            .expect("write a module");
    }
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "bench"]);
    dir
}

/// The F841 (unused local) finding of revision `rev` is among the diagnostics.
fn has_revision(diags: &[Value], rev: usize) -> bool {
    let name = format!("unused_{rev}`");
    diags
        .iter()
        .any(|d| d["code"] == "F841" && d["message"].as_str().is_some_and(|m| m.contains(&name)))
}

fn ruff_found_revision(out: &Output, rev: usize) -> bool {
    let name = format!("unused_{rev}`");
    serde_json::from_slice::<Value>(&out.stdout)
        .ok()
        .and_then(|v| v.as_array().cloned())
        .is_some_and(|a| {
            a.iter().any(|d| {
                d["code"] == "F841" && d["message"].as_str().is_some_and(|m| m.contains(&name))
            })
        })
}

fn trust_file() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

// ---------------------------------------------------------------------------------------------
// (a) save → diagnostics, one gate

fn save_bench(tools: &Tools, n: usize) -> String {
    let ws = workspace(Some(&["ruff_lint"]));
    let root = ws.path();
    println!(
        "(a) save → diagnostics, ruff_lint only: {SAVED} under {}",
        root.display()
    );
    let trust = trust_file();
    let mut q = Lsp::qgates(tools, root, &trust.path().join("trust.json"), None);
    q.initialize(json!({"trusted": true}));
    let mut r = Lsp::ruff(tools, root);
    r.initialize(json!({}));
    let first = module(0);
    q.open(SAVED, &first, 1);
    r.open(SAVED, &first, 1);
    assert!(has_revision(&q.diagnostics(SAVED, 1).1, 0), "qgates: F841");
    assert!(
        has_revision(&r.diagnostics(SAVED, 1).1, 0),
        "ruff server: F841"
    );
    // Does `ruff server` publish on a save alone? (It does not: it lints on open and change.)
    r.save(SAVED);
    std::thread::sleep(Duration::from_millis(300));
    let on_save = r
        .incoming
        .try_iter()
        .any(|(_, m)| m["method"] == "textDocument/publishDiagnostics");
    println!(
        "    ruff server publishes on a didSave alone: {}",
        if on_save { "yes" } else { "no" }
    );

    let mut rev = 0;
    let (mut version, mut ruff_version) = (1, 1);
    // When the previous sample (of any side) ended: every sample starts SPACING after it.
    let mut last = Instant::now();
    let (mut raw_t, mut q_t, mut r_t) = (Vec::new(), Vec::new(), Vec::new());
    let warmup = 3;
    for i in 0..warmup + n {
        let timed_run = i >= warmup;
        if i > warmup && (i - warmup) % 10 == 0 {
            progress(
                "(a)",
                i - warmup,
                n,
                &[("raw", &raw_t), ("qgates", &q_t), ("ruff server", &r_t)],
            );
        }
        for side in 0..3 {
            // Rotate who goes first.
            rev += 1;
            let text = module(rev);
            write_revision(&root.join(SAVED), &text, rev);
            space(last);
            match (side + i) % 3 {
                0 => {
                    let (d, out) = timed(&mut ruff_check(tools, root, &[SAVED.to_string()]));
                    assert!(ruff_found_revision(&out, rev), "raw ruff: F841 of {rev}");
                    if timed_run {
                        raw_t.push(d);
                    }
                }
                1 => {
                    version += 1;
                    let start = q.change_and_save(SAVED, &text, version);
                    let (at, diags) = q.diagnostics(SAVED, version);
                    assert!(has_revision(&diags, rev), "qgates: F841 of {rev}");
                    if timed_run {
                        q_t.push(at - start);
                    }
                }
                _ => {
                    ruff_version += 1;
                    let start = r.change_and_save(SAVED, &text, ruff_version);
                    let (at, diags) = r.diagnostics(SAVED, ruff_version);
                    assert!(has_revision(&diags, rev), "ruff server: F841 of {rev}");
                    if timed_run {
                        r_t.push(at - start);
                    }
                }
            }
            last = Instant::now();
        }
    }
    q.shutdown();
    r.shutdown();
    let raw = ms(median(&raw_t));
    let qm = ms(median(&q_t));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "(a) save → diagnostics, one gate (ruff_lint), median of {n}:"
    );
    s.push_str(&row("raw `ruff check --output-format json FILE`", &raw_t));
    s.push_str(&row("qgates lsp: didChange+didSave → diagnostics", &q_t));
    s.push_str(&row("ruff server: didChange+didSave → diagnostics", &r_t));
    let _ = writeln!(
        s,
        "    qgates − raw ruff = {:+.1} ms   target ≤ +1 ms: {}",
        qm - raw,
        verdict(qm <= raw + 1.0)
    );
    s
}

// ---------------------------------------------------------------------------------------------
// (b) save → diagnostics, three gates

fn three_gates_bench(tools: &Tools, n: usize) -> String {
    let ws = workspace(None);
    let root = ws.path();
    println!(
        "\n(b) save → diagnostics, the three default gates: {SAVED} under {}",
        root.display()
    );
    let by_hand = tools.default_gates();
    let trust = trust_file();
    let mut q = Lsp::qgates(tools, root, &trust.path().join("trust.json"), None);
    q.initialize(json!({"trusted": true}));
    q.open(SAVED, &module(0), 1);
    let first = q.diagnostics(SAVED, 1).1;
    let sources: HashSet<&str> = first.iter().filter_map(|d| d["source"].as_str()).collect();
    assert!(
        sources.contains("Ruff Lint") && sources.contains("Mypy"),
        "qgates: lint and type findings expected, got {sources:?}"
    );
    let mut rev = 0;
    let mut version = 1;
    // When the previous sample (of any side) ended: every sample starts SPACING after it.
    let mut last = Instant::now();
    let mut tool_t: [Vec<Duration>; 3] = Default::default();
    let mut q_t = Vec::new();
    // Per qgates sample: the mypy gate's time in its report, and the rest of the sample.
    let (mut inside, mut outside): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    let warmup = 2;
    for i in 0..warmup + n {
        let timed_run = i >= warmup;
        if i > warmup {
            progress(
                "(b)",
                i - warmup,
                n,
                &[("mypy", &tool_t[2]), ("qgates", &q_t)],
            );
        }
        for side in 0..2 {
            rev += 1;
            let text = module(rev);
            write_revision(&root.join(SAVED), &text, rev);
            if (side + i) % 2 == 0 {
                for (k, (name, program, args)) in by_hand.iter().enumerate() {
                    let mut c = tools.command(program, root);
                    c.args(*args).arg(SAVED);
                    space(last);
                    let (d, out) = timed(&mut c);
                    last = Instant::now();
                    // ruff format finds nothing (exit 0); the other two find something (1).
                    let expected = if k == 0 { 0 } else { 1 };
                    assert_eq!(
                        out.status.code(),
                        Some(expected),
                        "{name}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    if timed_run {
                        tool_t[k].push(d);
                    }
                }
            } else {
                space(last);
                version += 1;
                let start = q.change_and_save(SAVED, &text, version);
                let (at, diags) = q.diagnostics(SAVED, version);
                last = Instant::now();
                assert!(has_revision(&diags, rev), "qgates: F841 of {rev}");
                assert!(
                    diags.iter().any(|d| d["source"] == "Mypy"),
                    "qgates: the mypy finding"
                );
                if timed_run {
                    q_t.push(at - start);
                    // Untimed: how long the type checker's gate took inside this save.
                    let mypy_ms = gate_ms(&mut q, "mypy");
                    last = Instant::now();
                    inside.push(mypy_ms);
                    outside.push(ms(at - start) - mypy_ms);
                }
            }
        }
    }
    q.shutdown();
    let medians: Vec<f64> = tool_t.iter().map(|t| ms(median(t))).collect();
    let (slowest_i, slowest) = medians
        .iter()
        .copied()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("three tools");
    let qm = ms(median(&q_t));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "(b) save → diagnostics, three gates (ruff_format, ruff_lint, mypy), median of {n}:"
    );
    for (k, (name, _, _)) in by_hand.iter().enumerate() {
        s.push_str(&row(&format!("raw `{name}`"), &tool_t[k]));
    }
    s.push_str(&row("qgates lsp: didChange+didSave → diagnostics", &q_t));
    let _ = writeln!(
        s,
        "    qgates − slowest gate alone ({}) = {:+.1} ms   target ≤ +5 ms: {}",
        by_hand[slowest_i].0,
        qm - slowest,
        verdict(qm <= slowest + 5.0)
    );
    let _ = writeln!(
        s,
        "    of which (paired per sample): the mypy gate inside qgates {:.0} ms (its report's duration_ms), the rest {:+.1} ms",
        median_f(&inside),
        median_f(&outside)
    );
    s
}

/// The duration of gate `id` in the server's last report (`qgates.summary`), in ms.
fn gate_ms(q: &mut Lsp, id: &str) -> f64 {
    let summary = q.request(
        "workspace/executeCommand",
        json!({"command": "qgates.summary", "arguments": [{}]}),
    );
    let gates = summary["report"]["gates"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    gates
        .iter()
        .find(|g| g["id"] == id)
        .and_then(|g| g["duration_ms"].as_f64())
        .unwrap_or_else(|| panic!("qgates: no {id} gate with a duration in the last report"))
}

fn median_f(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

// ---------------------------------------------------------------------------------------------
// (c) re-save of unchanged content

/// A folder of wrappers, one per tool, that log each start to `starts.log` and run the tool.
fn wrappers(tools: &Tools) -> (tempfile::TempDir, OsString) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let log = dir.path().join("starts.log");
    for (name, real) in [("ruff", &tools.ruff), ("mypy", &tools.mypy)] {
        let p = dir.path().join(name);
        std::fs::write(
            &p,
            format!(
                "#!/bin/sh\necho \"{name} $*\" >> '{}'\nexec '{}' \"$@\"\n",
                log.display(),
                real.display()
            ),
        )
        .expect("write a wrapper");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let mut dirs = vec![dir.path().to_path_buf()];
    dirs.extend(std::env::split_paths(&tools.path));
    let path = std::env::join_paths(dirs).expect("PATH entries join");
    (dir, path)
}

fn starts(wrappers: &Path) -> usize {
    std::fs::read_to_string(wrappers.join("starts.log"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

fn resave_bench(tools: &Tools, n: usize) -> String {
    let mut s = String::new();
    for (label, gates) in [
        ("one gate (ruff_lint)", Some(&["ruff_lint"][..])),
        ("three gates (ruff_format, ruff_lint, mypy)", None),
    ] {
        let ws = workspace(gates);
        let root = ws.path();
        println!(
            "\n(c) re-save of unchanged content, {label}: {SAVED} under {}",
            root.display()
        );
        let (wrap, path) = wrappers(tools);
        let trust = trust_file();
        let mut q = Lsp::qgates(tools, root, &trust.path().join("trust.json"), Some(&path));
        q.initialize(json!({"trusted": true}));
        // Opened, then edited and saved: the file is in the auto scope, the cache knows its new
        // content, and the last report is one whose tools ran (it has a log folder).
        let opened = module(0);
        std::fs::write(root.join(SAVED), &opened).expect("write the module");
        q.open(SAVED, &opened, 1);
        q.diagnostics(SAVED, 1);
        let text = module(1);
        std::fs::write(root.join(SAVED), &text).expect("write the module");
        let mut last_save = q.change_and_save(SAVED, &text, 2);
        let published_before = q.diagnostics(SAVED, 2).1;
        let summary = |q: &mut Lsp| {
            q.request(
                "workspace/executeCommand",
                json!({"command": "qgates.summary", "arguments": [{}]}),
            )
        };
        let first_log = summary(&mut q)["report"]["log_dir"].clone();
        assert!(!first_log.is_null(), "the first run's tools wrote logs");
        let uri = q.uri(SAVED);
        let before = starts(wrap.path());
        assert!(before > 0, "the wrappers logged the first runs");
        let mut times = Vec::new();
        let mut engine_ms = Vec::new();
        for i in 0..n + 2 {
            space(last_save);
            q.drain();
            let start = q.save(SAVED);
            last_save = start;
            // The server answers a save with the saved file's diagnostics, changed or not.
            let (at, m) = q.wait_for(
                |m| {
                    m["method"] == "textDocument/publishDiagnostics"
                        && m["params"]["uri"] == uri.as_str()
                },
                WAIT,
            );
            let d = at - start;
            assert_eq!(
                m["params"]["diagnostics"].as_array(),
                Some(&published_before),
                "the same diagnostics again"
            );
            // Untimed: the report behind the publication is new, and the cache answered it.
            // A run that starts no process makes no log folder: the report before the loop had
            // one (its tools ran), so the first one here is new, and each is the cache's alone.
            let report = summary(&mut q)["report"].clone();
            assert!(
                report["log_dir"].is_null(),
                "a new report, with no log folder, for the save (before: {first_log}): {report}"
            );
            for g in report["gates"].as_array().expect("gates") {
                assert_eq!(
                    g["cached_files"], g["files_checked"],
                    "gate {} ran a tool on an unchanged re-save: {g}",
                    g["id"]
                );
            }
            if i >= 2 {
                times.push(d);
                engine_ms.push(report["timings"]["total_ms"].as_u64().unwrap_or(0));
            }
        }
        q.shutdown();
        let processes = starts(wrap.path()) - before;
        let m = ms(median(&times));
        engine_ms.sort_unstable();
        let _ = writeln!(
            s,
            "(c) re-save of unchanged content, {label}, median of {n}:"
        );
        s.push_str(&row("didSave → the saved file's diagnostics", &times));
        let _ = writeln!(
            s,
            "    the report's own total_ms (median) {} ms; processes started {processes}",
            engine_ms[engine_ms.len() / 2]
        );
        let _ = writeln!(
            s,
            "    target ≤ 1 ms and zero processes: {}",
            verdict(m <= 1.0 && processes == 0)
        );
    }
    s
}

// ---------------------------------------------------------------------------------------------
// (d) 200 files opened at once

fn open_bench(tools: &Tools, n: usize) -> String {
    let ws = workspace(Some(&["ruff_lint"]));
    let root = ws.path();
    let files: Vec<String> = (0..OPENED)
        .map(|i| format!("src/opened/m_{i:03}.py"))
        .collect();
    std::fs::create_dir_all(root.join("src/opened")).expect("create a folder");
    let texts: Vec<String> = (0..OPENED)
        .map(|i| {
            if i % 4 == 0 {
                clean_module(i)
            } else {
                module(10_000 + i)
            }
        })
        .collect();
    for (f, t) in files.iter().zip(&texts) {
        std::fs::write(root.join(f), t).expect("write a module");
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "opened"]);
    println!(
        "\n(d) {OPENED} files opened at once, ruff_lint only: under {}",
        root.display()
    );
    // What ruff finds per file: the count each server must publish.
    let (_, out) = timed(&mut ruff_check(tools, root, &files));
    let found: Vec<Value> = serde_json::from_slice(&out.stdout).expect("ruff's JSON");
    let mut expected: HashMap<String, usize> = files.iter().map(|f| (f.clone(), 0)).collect();
    for d in &found {
        let abs = PathBuf::from(d["filename"].as_str().expect("a filename"));
        let rel = abs
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| abs.to_string_lossy().into_owned());
        *expected.entry(rel).or_default() += 1;
    }
    assert!(
        expected.values().sum::<usize>() > OPENED,
        "ruff finds something in most files"
    );

    // Returns the time and the publications that completed the 200 files, as they came.
    let open_all = |server: &mut Lsp| -> (Duration, Vec<Value>) {
        let mut bytes = Vec::new();
        for (f, t) in files.iter().zip(&texts) {
            bytes.extend(server.did_open_frame(f, t, 1));
        }
        let uris: HashMap<String, &String> = files.iter().map(|f| (server.uri(f), f)).collect();
        let start = Instant::now();
        send_frames(&server.writer, &bytes);
        let mut seen: HashSet<String> = HashSet::new();
        let mut last = start;
        let mut publications = Vec::new();
        while seen.len() < files.len() {
            let (at, m) =
                server.wait_for(|m| m["method"] == "textDocument/publishDiagnostics", WAIT);
            let uri = m["params"]["uri"].as_str().unwrap_or_default().to_string();
            let Some(rel) = uris.get(&uri) else { continue };
            let count = m["params"]["diagnostics"].as_array().map_or(0, Vec::len);
            assert_eq!(
                count, expected[*rel],
                "{}: {rel} got {count} diagnostics, ruff finds {}",
                server.name, expected[*rel]
            );
            if seen.insert(uri) {
                last = at;
                publications.push(m);
            }
        }
        (last - start, publications)
    };

    // The stand-in replays the publications of qgates' untimed first run.
    let replay = tempfile::NamedTempFile::new().expect("a temporary file");
    let (mut raw_t, mut q_t, mut r_t, mut s_t) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let trust = trust_file();
    let warmup = 1;
    for i in 0..warmup + n {
        let timed_run = i >= warmup;
        if i > warmup {
            progress(
                "(d)",
                i - warmup,
                n,
                &[
                    ("raw", &raw_t),
                    ("qgates", &q_t),
                    ("ruff server", &r_t),
                    ("stand-in", &s_t),
                ],
            );
        }
        // qgates first in the untimed round: the stand-in needs its publications.
        for side in 0..4 {
            match (side + i) % 4 {
                0 => {
                    let mut q = Lsp::qgates(tools, root, &trust.path().join("trust.json"), None);
                    q.initialize(json!({"trusted": true}));
                    let (d, publications) = open_all(&mut q);
                    q.shutdown();
                    if timed_run {
                        q_t.push(d);
                    } else {
                        let frames: Vec<u8> = publications.iter().flat_map(frame).collect();
                        std::fs::write(replay.path(), frames).expect("write the publications");
                    }
                }
                1 => {
                    let (d, out) = timed(&mut ruff_check(tools, root, &files));
                    assert_eq!(out.status.code(), Some(1), "raw ruff finds something");
                    if timed_run {
                        raw_t.push(d);
                    }
                }
                2 => {
                    let mut r = Lsp::ruff(tools, root);
                    r.initialize(json!({}));
                    let (d, _) = open_all(&mut r);
                    r.shutdown();
                    if timed_run {
                        r_t.push(d);
                    }
                }
                _ => {
                    let mut s = Lsp::stand_in(tools, root, replay.path(), &files);
                    s.initialize(json!({}));
                    let (d, _) = open_all(&mut s);
                    s.shutdown();
                    if timed_run {
                        s_t.push(d);
                    }
                }
            }
        }
    }
    let ratio = median(&q_t).as_secs_f64() / median(&raw_t).as_secs_f64();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "(d) {OPENED} files opened at once, ruff_lint only, median of {n} (a fresh server each):"
    );
    s.push_str(&row(
        &format!("raw `ruff check` over the {OPENED} files"),
        &raw_t,
    ));
    s.push_str(&row("qgates lsp: didOpen ×200 → all diagnostics", &q_t));
    s.push_str(&row("ruff server: didOpen ×200 → all diagnostics", &r_t));
    s.push_str(&row("stand-in: didOpen ×200 → all diagnostics", &s_t));
    let _ = writeln!(
        s,
        "    qgates / raw ruff = {ratio:.2}   target ≤ 1.2: {}",
        verdict(ratio <= 1.2)
    );
    let _ = writeln!(
        s,
        "    stand-in / raw ruff = {:.2}: the floor under any server that runs the tool (see `stand_in_server`)",
        median(&s_t).as_secs_f64() / median(&raw_t).as_secs_f64()
    );
    s
}

/// The environment variable that makes this binary the stand-in server of (d), naming the file
/// of publications it replays.
const STAND_IN: &str = "QGATES_BENCH_STAND_IN";

/// The floor under (d): a stand-in server that does nothing of its own. It answers `initialize`
/// and `shutdown`; when the last of the 200 `didOpen` messages has arrived (found by a byte
/// search, nothing parsed), it runs the same `ruff check` over the same files (given on its
/// command line, so it needs nothing from the messages), reads its output whole, and writes
/// qgates' own publications of an earlier run in one write, prepared beforehand. What remains is
/// what any server pays that runs the tool as a process: the client's write of the opens, the
/// process, and the client reading the diagnostics. A real server also reads the opens, parses
/// the tool's output and builds the publications.
fn stand_in_server(publications: &Path) {
    let replay = std::fs::read(publications).expect("the publications to replay");
    let argv: Vec<OsString> = std::env::args_os()
        .skip_while(|a| a != "--stand-in")
        .skip(1)
        .collect();
    let (program, args) = argv.split_first().expect("a command after --stand-in");
    let mut reader = BufReader::with_capacity(1 << 16, std::io::stdin().lock());
    let mut out = std::io::stdout().lock();
    let mut line = String::new();
    let mut opens = 0;
    let open = b"\"textDocument/didOpen\"";
    while let Some(Ok(body)) = read_frame(&mut reader, &mut line) {
        if body.windows(open.len()).any(|w| w == open) {
            opens += 1;
            if opens == OPENED {
                let ran = Command::new(program)
                    .args(args)
                    .stdin(Stdio::null())
                    .output()
                    .expect("the stand-in runs ruff");
                std::hint::black_box(&ran.stdout);
                let _ = out.write_all(&replay).and_then(|()| out.flush());
            }
            continue;
        }
        let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
            continue;
        };
        match (msg.get("id"), msg["method"].as_str()) {
            (Some(id), Some(method)) => {
                let result = if method == "initialize" {
                    json!({"capabilities": {}})
                } else {
                    Value::Null
                };
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
                let _ = out.write_all(&frame(&answer)).and_then(|()| out.flush());
            }
            (None, Some("exit")) => return,
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (e) memory

/// A generated project: `PROJECT_FILES` modules in packages of 50, every fourth with lint and
/// type findings, every tenth unformatted.
fn write_project(root: &Path) {
    std::fs::write(
        root.join("quality.yaml"),
        config(None).replacen(
            "gates:\n",
            "project_scope:\n  include_globs: [\"src/**/*.py\"]\ngates:\n",
            1,
        ),
    )
    .expect("write quality.yaml");
    for i in 0..PROJECT_FILES {
        let dir = root.join(format!("src/pkg_{:02}", i / 50));
        if i % 50 == 0 {
            std::fs::create_dir_all(&dir).expect("create a package");
            std::fs::write(dir.join("__init__.py"), "").expect("write a package");
            continue;
        }
        let text = if i % 4 == 0 {
            module(i)
        } else if i % 10 == 5 {
            format!("def messy_{i}( a:int,b :int )->int :\n    return a+b\n")
        } else {
            clean_module(i)
        };
        std::fs::write(dir.join(format!("m_{i:04}.py")), text).expect("write a module");
    }
}

fn memory_bench(tools: &Tools) -> String {
    // After initialize, on a small workspace.
    let ws = workspace(None);
    let trust = trust_file();
    let mut q = Lsp::qgates(tools, ws.path(), &trust.path().join("trust.json"), None);
    q.initialize(json!({"trusted": true}));
    std::thread::sleep(Duration::from_millis(300));
    let m0 = q.memory();
    q.shutdown();

    let dir = tempfile::Builder::new()
        .prefix("qgates-lsp-bench-")
        .tempdir()
        .expect("a temporary folder");
    let root = dir.path();
    write_project(root);
    println!(
        "\n(e) memory: a {PROJECT_FILES}-file project under {}",
        root.display()
    );
    let mut q = Lsp::qgates(tools, root, &trust.path().join("trust.json"), None);
    q.initialize(json!({"trusted": true}));
    let start = Instant::now();
    // Sent without waiting for its answer: meanwhile a request the protocol library answers at
    // once (an unknown method) is sent over and over, to see how long the server stays deaf.
    let run_id = q.next_id;
    q.next_id += 1;
    send_frames(
        &q.writer,
        &frame(
            &json!({"jsonrpc": "2.0", "id": run_id, "method": "workspace/executeCommand",
            "params": {"command": "qgates.run", "arguments": [{"scope": "project"}]}}),
        ),
    );
    let mut waits = Vec::new();
    let answer = loop {
        let done = q
            .backlog
            .iter()
            .position(|(_, m)| m["id"] == run_id && m.get("method").is_none());
        if let Some(i) = done {
            break q.backlog.remove(i).expect("the position exists").1["result"].clone();
        }
        let asked = Instant::now();
        let refused = q.try_request("qgates/ping", json!({}));
        assert!(refused.is_err(), "an unknown method is refused");
        waits.push(asked.elapsed());
        std::thread::sleep(Duration::from_millis(2));
    };
    let took = start.elapsed();
    let report = &answer["report"];
    let mut violations = 0;
    for g in report["gates"].as_array().expect("gates") {
        assert_eq!(
            g["status"], "failed",
            "every gate ran and found something: {g}"
        );
        violations += g["violations"].as_array().map_or(0, Vec::len);
    }
    let m1 = q.memory();
    println!(
        "    project run: {:.1} s, {} files checked, {violations} violations",
        took.as_secs_f64(),
        report["scope"]["files_checked"]
    );
    q.shutdown();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "(e) memory of the qgates lsp process (targets read on VmHWM, the peak):"
    );
    let _ = writeln!(
        s,
        "    after initialize:               {}   target ≤ 10 MB: {}",
        m0.line(),
        verdict(m0.hwm <= 10 * 1024)
    );
    let _ = writeln!(
        s,
        "    after a {PROJECT_FILES}-file project run: {}   target ≤ 40 MB: {}",
        m1.line(),
        verdict(m1.hwm <= 40 * 1024)
    );
    let _ = writeln!(
        s,
        "    ({} files, three gates, {violations} violations, {:.1} s)",
        report["scope"]["files_checked"],
        took.as_secs_f64()
    );
    let mut longest = waits.clone();
    longest.sort_unstable_by(|a, b| b.cmp(a));
    let _ = writeln!(
        s,
        "    while it ran, {} requests answered at once by the protocol library: median {:.2} ms, the longest {}",
        waits.len(),
        ms(median(&waits)),
        longest
            .iter()
            .take(3)
            .map(|d| format!("{:.1} ms", ms(*d)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(s, "    {}", startup_order(&tools.qgates));
    s
}

/// How many of the functions `link/startup-symbols.txt` lists the binary has (read with `nm`),
/// against how many the benches' build had when the list was recorded.
fn startup_order(binary: &Path) -> String {
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("link/startup-symbols.txt");
    let Ok(list) = std::fs::read_to_string(&list) else {
        return format!("no {}: code laid out as the crates put it", list.display());
    };
    let listed: HashSet<&str> = list
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    // "# bench build: N of these functions", written by scripts/order-symbols.sh.
    let recorded = list.lines().find_map(|l| {
        l.strip_prefix("# bench build: ")?
            .split_whitespace()
            .next()?
            .parse::<usize>()
            .ok()
    });
    let nm = Command::new("nm")
        .arg("--defined-only")
        .arg(binary)
        .output();
    let Some(nm) = nm.ok().filter(|o| o.status.success()) else {
        return "start-up functions laid out together: unknown (no `nm` to read the binary)".into();
    };
    let names = String::from_utf8_lossy(&nm.stdout);
    let found: HashSet<&str> = names
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|name| listed.contains(name))
        .collect();
    // Names carry hashes that change with the code around them (a closure added, a dependency
    // updated): each one lost may put its function back among the rest, and the memory after
    // `initialize` grows with them.
    match recorded {
        Some(recorded) => format!(
            "start-up functions laid out together: {} of the {recorded} this build had when the list was recorded{}",
            found.len(),
            if found.len() * 100 < recorded * 97 {
                ": the list is stale, record it again with scripts/order-symbols.sh"
            } else {
                ""
            }
        ),
        None => format!(
            "start-up functions laid out together: {} of the {} listed",
            found.len(),
            listed.len()
        ),
    }
}
