//! Latency and memory of the language server as an editor sees them, against baselines measured
//! in the same run: the raw tool process and `ruff server` (ruff's own language server). The
//! client is the tests' (`tests/common/lsp.rs`); the numbers are medians of N samples, the sides
//! interleaved.
//!
//! (a) Save → diagnostics, one gate (`ruff_lint`): new content on disk, then `didChange` +
//!     `didSave` in one write; timed until that version's `publishDiagnostics` arrives.
//!     Baseline: the raw `ruff check --output-format json --no-fix FILE`. Target: ≤ raw + 1.5 ms.
//! (b) Unchanged re-save: `didSave` alone, timed until the file's diagnostics come again; ruff
//!     behind a wrapper that logs its starts. Target: ≤ 1 ms, zero processes.
//! (c) 200 files opened at once (`ruff_lint`), in one write to a fresh server, timed until every
//!     file has its diagnostics. Baseline: `ruff server`. Target: ≤ 1.2 × ruff server.
//! (d) Resident memory (`VmRSS`) after `initialize`, and the peak (`VmHWM`) after `qgates.run`
//!     with scope `project` over a 2 000-file project with the three default gates. Targets:
//!     ≤ 20 MB and ≤ 40 MB (`ruff server` after `initialize` for reference).
//! (e) The first save after a branch switch, when the findings at the new base are not known
//!     yet: save → diagnostics (shown as they are), and save → diagnostics marked new or
//!     pre-existing (after the reference run in a checkout, in the background). (a) is the same
//!     save once they are known; with `QGATES_BENCH_BEFORE` set to a build without the
//!     comparison, (a) measures it on against off. Target: (a) ≤ off + 3 ms.
//!
//! Every sample starts at least `SPACING` after the previous one ended: the server takes saves
//! within 50 ms of each other for a burst and waits for it to end. `QGATES_BENCH_RUNS` sets N
//! (default 5; (a) and (b) take 10 N samples, (c) 2 N); `QGATES_BENCH_ONLY=ac` runs only the
//! parts named; `QGATES_BENCH_BEFORE=/path/to/qgates` measures another build beside this one
//! (named "before") on every qgates side.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/process.rs"]
mod process;

use std::collections::HashSet;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::lsp::{LspClient, TrustAnswer};
use common::lsp_wire::frame;
use process::{Tools, median, ms, parts_from_env, runs_from_env, timed, verdict};
use serde_json::{Value, json};

const SPACING: Duration = Duration::from_millis(120);
const WAIT: Duration = Duration::from_secs(120);
const OPENED: usize = 200;
const PROJECT_FILES: usize = 2_000;
const SAVED: &str = "src/app.py";

/// A build of qgates to measure.
struct Build {
    name: &'static str,
    binary: PathBuf,
}

fn main() {
    let tools = Tools::find();
    let runs = runs_from_env(5);
    let mut builds = vec![Build {
        name: "qgates",
        binary: tools.qgates.clone(),
    }];
    if let Some(before) = std::env::var_os("QGATES_BENCH_BEFORE") {
        builds.push(Build {
            name: "before",
            binary: PathBuf::from(before),
        });
    }
    for b in &builds {
        println!("{:<7} {}", b.name, b.binary.display());
    }
    println!(
        "ruff    {}\nmypy    {}\n",
        tools.ruff.display(),
        tools.mypy.display()
    );
    let only = parts_from_env("abcde");
    let mut results = String::new();
    if only.contains('a') {
        results.push_str(&save_bench(&tools, &builds, runs * 10));
    }
    if only.contains('b') {
        results.push_str(&resave_bench(&tools, &builds, runs * 10));
    }
    if only.contains('c') {
        results.push_str(&open_bench(&tools, &builds, runs * 2));
    }
    if only.contains('d') {
        results.push_str(&memory_bench(&tools, &builds));
    }
    if only.contains('e') {
        results.push_str(&branch_switch_bench(&tools, &builds[0], runs * 2));
    }
    println!("\n== Results ==\n{results}");
}

// ---------------------------------------------------------------------------------------------
// Servers, files and timing

fn qgates_server(tools: &Tools, build: &Build, root: &Path, path: Option<&OsString>) -> LspClient {
    let trust = root.join(".bench-trust.json");
    let path = path.unwrap_or(&tools.path);
    // Trusted as a person does from a terminal (not by the editor's word), so every run pays
    // for the check of what would run against what was trusted. A build from before `--yes`
    // trusts without it.
    let trusted = ["trust --yes", "trust"].iter().any(|args| {
        tools
            .command(&build.binary, root)
            .args(args.split(' '))
            .arg(root)
            .env("QGATES_TRUST_FILE", &trust)
            .env("PATH", path)
            .output()
            .is_ok_and(|o| o.status.success())
    });
    assert!(trusted, "{} trust failed", build.binary.display());
    let mut cmd = tools.command(&build.binary, root);
    cmd.arg("lsp")
        .env("QGATES_TRUST_FILE", trust)
        .env("PATH", path);
    let mut c = LspClient::spawn_command(cmd, root, TrustAnswer::NotNow);
    c.initialize(json!({}));
    c
}

fn ruff_server(tools: &Tools, root: &Path) -> LspClient {
    let mut cmd = tools.command(&tools.ruff, root);
    cmd.arg("server");
    let mut c = LspClient::spawn_command(cmd, root, TrustAnswer::NotNow);
    c.initialize(json!({}));
    c
}

/// `ruff check` as the `ruff_lint` gate runs it, over root-relative files.
fn ruff_check(tools: &Tools, root: &Path, files: &[String]) -> Command {
    let mut c = tools.command(&tools.ruff, root);
    c.args(["check", "--output-format", "json", "--no-fix"])
        .args(files);
    c
}

fn notification(method: &str, params: Value) -> Vec<u8> {
    frame(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

fn did_open(c: &LspClient, rel: &str, text: &str) -> Vec<u8> {
    notification(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": c.uri(rel), "languageId": "python", "version": 1, "text": text}}),
    )
}

/// Sends `bytes` and waits for the diagnostics of `rel` at `version`: the time, and them.
fn round_trip(c: &mut LspClient, bytes: &[u8], rel: &str, version: i32) -> (Duration, Vec<Value>) {
    let uri = c.uri(rel);
    let start = Instant::now();
    c.send_bytes(bytes);
    let (at, m) = c.wait_for_timed(
        |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri.as_str()
                && m["params"]["version"] == version
        },
        WAIT,
    );
    let diags = m["params"]["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    (at - start, diags)
}

/// The server process's `VmRSS` and `VmHWM`, in MB.
fn memory(c: &LspClient) -> (f64, f64) {
    let pid = c.child.as_ref().expect("a server process").id();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .expect("/proc/PID/status (Linux) is readable");
    let field = |name: &str| -> f64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .unwrap_or_else(|| panic!("{name} is missing from /proc/PID/status"))
            / 1024.0
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Sleeps until `SPACING` has passed since `since`.
fn space(since: Instant) {
    std::thread::sleep(SPACING.saturating_sub(since.elapsed()));
}

fn row(label: &str, v: &[Duration]) -> String {
    let min = v.iter().min().copied().unwrap_or_default();
    format!(
        "    {label:<46} {:>8.2} ms (min {:.2})\n",
        ms(median(v)),
        ms(min)
    )
}

/// Writes a revision with a modification time of its own (no side answers from a cache keyed
/// on the time).
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
/// unused import, and a type error.
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


def revision() -> int:
    unused_{rev} = {rev}
    return 3


def broken() -> int:
    return "not an int"
"#
    )
}

fn clean_module(i: usize) -> String {
    format!(
        "\"\"\"Clean module {i}.\"\"\"\n\n\ndef value_{i}(x: int) -> int:\n    return x + {i}\n"
    )
}

/// The default configuration, with only `gates` active when given.
fn config(gates: Option<&[&str]>) -> String {
    let default = qgates::core::config::DEFAULT_CONFIG;
    let from = "active_gates: [ruff_format, ruff_lint, mypy]";
    assert!(
        default.contains(from),
        "the default configuration changed shape"
    );
    match gates {
        None => default.to_string(),
        Some(g) => default.replacen(from, &format!("active_gates: [{}]", g.join(", ")), 1),
    }
}

/// A git repository with `quality.yaml`, `src/app.py` and `extra` files, all committed.
fn workspace(gates: Option<&[&str]>, extra: &[(String, String)]) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("qgates-lsp-bench-")
        .tempdir()
        .expect("a temporary folder");
    let root = dir.path();
    common::write(root, "quality.yaml", &config(gates));
    common::write(root, SAVED, &module(0));
    for (rel, text) in extra {
        common::write(root, rel, text);
    }
    common::git(root, &["init", "-q"]);
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-q", "-m", "bench"]);
    dir
}

/// The F841 (unused local) finding of revision `rev` is among the diagnostics.
fn has_revision(diags: &[Value], rev: usize) -> bool {
    let name = format!("unused_{rev}`");
    diags
        .iter()
        .any(|d| d["code"] == "F841" && d["message"].as_str().is_some_and(|m| m.contains(&name)))
}

// ---------------------------------------------------------------------------------------------
// (a) save → diagnostics, one gate

fn save_bench(tools: &Tools, builds: &[Build], n: usize) -> String {
    let ws = workspace(Some(&["ruff_lint"]), &[]);
    let root = ws.path();
    println!(
        "(a) save → diagnostics, ruff_lint: {SAVED} under {}",
        root.display()
    );
    let mut servers: Vec<(LspClient, i32)> = builds
        .iter()
        .map(|b| {
            let mut c = qgates_server(tools, b, root, None);
            let opened = did_open(&c, SAVED, &module(0));
            let (_, diags) = round_trip(&mut c, &opened, SAVED, 1);
            assert!(has_revision(&diags, 0), "{}: F841", b.name);
            (c, 1)
        })
        .collect();
    let mut raw_t = Vec::new();
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); builds.len()];
    let mut rev = 0;
    let mut last = Instant::now();
    let warmup = 3;
    for i in 0..warmup + n {
        for side in 0..=builds.len() {
            // Rotate who goes first.
            let side = (side + i) % (builds.len() + 1);
            rev += 1;
            let text = module(rev);
            write_revision(&root.join(SAVED), &text, rev);
            space(last);
            if side == builds.len() {
                let (d, out) = timed(&mut ruff_check(tools, root, &[SAVED.to_string()]));
                assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("unused_{rev}`")));
                raw_t.push(d);
            } else {
                let (c, version) = &mut servers[side];
                *version += 1;
                let (d, diags) = c.change_and_save_timed(SAVED, &text, *version, WAIT);
                assert!(
                    has_revision(&diags, rev),
                    "{}: F841 of {rev}",
                    builds[side].name
                );
                times[side].push(d);
            }
            last = Instant::now();
        }
        if i + 1 == warmup {
            raw_t.clear();
            times.iter_mut().for_each(Vec::clear);
        }
    }
    for (c, _) in servers {
        c.shutdown();
    }
    let raw = ms(median(&raw_t));
    let mut s = format!("(a) save → diagnostics, one gate (ruff_lint), median of {n}:\n");
    s.push_str(&row("raw `ruff check --output-format json FILE`", &raw_t));
    for (b, t) in builds.iter().zip(&times) {
        let m = ms(median(t));
        s.push_str(&row(
            &format!("{}: didChange+didSave → diagnostics", b.name),
            t,
        ));
        let _ = writeln!(
            s,
            "      {} − raw = {:+.2} ms   target ≤ +1.5 ms: {}",
            b.name,
            m - raw,
            verdict(m <= raw + 1.5)
        );
    }
    if let [now, before] = &times[..] {
        let delta = ms(median(now)) - ms(median(before));
        let _ = writeln!(
            s,
            "      qgates − before = {delta:+.2} ms   (before: a build without the comparison) target ≤ +3 ms: {}",
            verdict(delta <= 3.0)
        );
    }
    s
}

// ---------------------------------------------------------------------------------------------
// (b) unchanged re-save

/// A folder of wrappers of ruff and mypy that log every start, and a PATH with them first.
fn wrappers(tools: &Tools) -> (tempfile::TempDir, OsString) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let log = dir.path().join("starts.log");
    for (name, real) in [("ruff", &tools.ruff), ("mypy", &tools.mypy)] {
        common::tool(
            dir.path(),
            name,
            &format!(
                "#!/bin/sh\necho \"{name} $*\" >> '{}'\nexec '{}' \"$@\"\n",
                log.display(),
                real.display()
            ),
        );
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

fn resave_bench(tools: &Tools, builds: &[Build], n: usize) -> String {
    let ws = workspace(Some(&["ruff_lint"]), &[]);
    let root = ws.path();
    println!(
        "\n(b) unchanged re-save, ruff_lint: {SAVED} under {}",
        root.display()
    );
    let (wrap, path) = wrappers(tools);
    let save = |c: &LspClient| {
        notification(
            "textDocument/didSave",
            json!({"textDocument": {"uri": c.uri(SAVED)}}),
        )
    };
    let mut s = format!("(b) unchanged re-save → diagnostics, one gate, median of {n}:\n");
    for b in builds {
        let mut c = qgates_server(tools, b, root, Some(&path));
        let opened = did_open(&c, SAVED, &module(0));
        let (_, first) = round_trip(&mut c, &opened, SAVED, 1);
        // The first save puts the file in the remembered scope.
        let saved = save(&c);
        let (_, again) = round_trip(&mut c, &saved, SAVED, 1);
        assert_eq!(again, first);
        let before = starts(wrap.path());
        let mut t = Vec::new();
        let mut last = Instant::now();
        for _ in 0..n {
            space(last);
            let (d, diags) = round_trip(&mut c, &saved, SAVED, 1);
            assert_eq!(diags, first, "{}: the same diagnostics", b.name);
            t.push(d);
            last = Instant::now();
        }
        let processes = starts(wrap.path()) - before;
        c.shutdown();
        let m = ms(median(&t));
        s.push_str(&row(&format!("{}: didSave → diagnostics", b.name), &t));
        let _ = writeln!(
            s,
            "      processes started: {processes}   target ≤ 1 ms, none: {}",
            verdict(m <= 1.0 && processes == 0)
        );
    }
    s
}

// ---------------------------------------------------------------------------------------------
// (c) 200 files opened at once

fn open_bench(tools: &Tools, builds: &[Build], n: usize) -> String {
    let files: Vec<(String, String)> = (0..OPENED)
        .map(|i| {
            let text = if i % 4 == 0 {
                clean_module(i)
            } else {
                module(10_000 + i)
            };
            (format!("src/opened/m_{i:03}.py"), text)
        })
        .collect();
    let ws = workspace(Some(&["ruff_lint"]), &files);
    let root = ws.path();
    println!(
        "\n(c) {OPENED} files opened at once, ruff_lint: under {}",
        root.display()
    );
    let rels: Vec<String> = files.iter().map(|(f, _)| f.clone()).collect();
    let (raw, _) = timed(&mut ruff_check(tools, root, &rels));
    // Every file's diagnostics, from a fresh server: the time until the last file has them.
    let open_all = |mut c: LspClient| -> Duration {
        let uris: HashSet<String> = rels.iter().map(|f| c.uri(f)).collect();
        let bytes: Vec<u8> = files.iter().flat_map(|(f, t)| did_open(&c, f, t)).collect();
        let start = Instant::now();
        c.send_bytes(&bytes);
        let mut seen = HashSet::new();
        let mut last = start;
        while seen.len() < uris.len() {
            let (at, m) =
                c.wait_for_timed(|m| m["method"] == "textDocument/publishDiagnostics", WAIT);
            let uri = m["params"]["uri"].as_str().unwrap_or_default().to_string();
            if uris.contains(&uri) && seen.insert(uri) {
                last = at;
            }
        }
        c.shutdown();
        last - start
    };
    let mut ruff_t = Vec::new();
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); builds.len()];
    for i in 0..n + 1 {
        let d = open_all(ruff_server(tools, root));
        if i > 0 {
            ruff_t.push(d);
        }
        for (b, t) in builds.iter().zip(&mut times) {
            let d = open_all(qgates_server(tools, b, root, None));
            if i > 0 {
                t.push(d);
            }
        }
    }
    let ruff = ms(median(&ruff_t));
    let mut s = format!("(c) {OPENED} files opened at once → all diagnostics, median of {n}:\n");
    let _ = writeln!(
        s,
        "    {:<46} {:>8.2} ms (once)",
        "raw `ruff check` of the 200 files",
        ms(raw)
    );
    s.push_str(&row("ruff server", &ruff_t));
    for (b, t) in builds.iter().zip(&times) {
        let m = ms(median(t));
        s.push_str(&row(b.name, t));
        let _ = writeln!(
            s,
            "      {} / ruff server = {:.2}   target ≤ 1.2: {}",
            b.name,
            m / ruff,
            verdict(m <= 1.2 * ruff)
        );
    }
    s
}

// ---------------------------------------------------------------------------------------------
// (d) memory

fn project_files() -> Vec<(String, String)> {
    let mut files = Vec::new();
    for i in 0..PROJECT_FILES {
        let dir = format!("src/pkg_{:02}", i / 50);
        if i % 50 == 0 {
            files.push((format!("{dir}/__init__.py"), String::new()));
            continue;
        }
        let text = if i % 4 == 0 {
            module(i)
        } else if i % 10 == 5 {
            format!("def messy_{i}( a:int,b :int )->int :\n    return a+b\n")
        } else {
            clean_module(i)
        };
        files.push((format!("{dir}/m_{i:04}.py"), text));
    }
    files
}

fn memory_bench(tools: &Tools, builds: &[Build]) -> String {
    let ws = workspace(None, &project_files());
    let root = ws.path();
    println!(
        "\n(d) memory: {PROJECT_FILES} files under {}",
        root.display()
    );
    // An answer the protocol library gives at once: everything sent before it was read.
    let settle = |c: &mut LspClient| {
        let _ = c.request("qgates/unknown", json!({}));
    };
    let mut s = String::from("(d) resident memory of the server process:\n");
    let mut ruff = ruff_server(tools, root);
    settle(&mut ruff);
    let (ruff_rss, _) = memory(&ruff);
    ruff.shutdown();
    let _ = writeln!(
        s,
        "    {:<46} {ruff_rss:>8.1} MB",
        "ruff server, after initialize"
    );
    for b in builds {
        let mut c = qgates_server(tools, b, root, None);
        settle(&mut c);
        let (rss, _) = memory(&c);
        let report = c
            .request(
                "workspace/executeCommand",
                json!({"command": "qgates.run", "arguments": [{"scope": "project"}]}),
            )
            .expect("the project run");
        let checked = report["report"]["scope"]["files_checked"]
            .as_u64()
            .unwrap_or(0);
        assert!(
            checked as usize >= PROJECT_FILES - 50,
            "{}: {checked} files checked",
            b.name
        );
        let (after, peak) = memory(&c);
        c.shutdown();
        let _ = writeln!(
            s,
            "    {:<46} {rss:>8.1} MB   target ≤ 20 MB: {}",
            format!("{}, after initialize", b.name),
            verdict(rss <= 20.0)
        );
        let _ = writeln!(
            s,
            "    {:<46} {after:>8.1} MB (peak {peak:.1})   target ≤ 40 MB: {}",
            format!("{}, after the project run", b.name),
            verdict(peak <= 40.0)
        );
    }
    s
}

// ---------------------------------------------------------------------------------------------
// (e) the first save after a branch switch

/// The severity of the unused-import finding (`F401`, the same in every revision: pre-existing
/// once compared) among `diags`.
fn import_severity(diags: &[Value]) -> Option<i64> {
    diags
        .iter()
        .find(|d| d["code"] == "F401")
        .and_then(|d| d["severity"].as_i64())
}

fn branch_switch_bench(tools: &Tools, build: &Build, n: usize) -> String {
    let ws = workspace(Some(&["ruff_lint"]), &[]);
    let root = ws.path();
    println!(
        "\n(e) the first save after a branch switch, ruff_lint: {SAVED} under {}",
        root.display()
    );
    // Branch k grows from main's k-th commit, whose version of the module no run has seen: on
    // it, the findings at the base are not known until they are run for.
    let warmup = 1;
    for k in 0..warmup + n {
        common::write(root, SAVED, &module(10_000 + k));
        common::git(root, &["commit", "-qam", &format!("base {k}")]);
        common::git(root, &["branch", &format!("from-{k}")]);
    }
    let mut c = qgates_server(tools, build, root, None);
    let on_disk = std::fs::read_to_string(root.join(SAVED)).expect("the module");
    let opened = did_open(&c, SAVED, &on_disk);
    round_trip(&mut c, &opened, SAVED, 1);
    let uri = c.uri(SAVED);
    let (mut first, mut marked) = (Vec::new(), Vec::new());
    let mut version = 1;
    for k in 0..warmup + n {
        common::git(root, &["checkout", "-qf", &format!("from-{k}")]);
        // As the editor's file watcher reports it; the server takes the new HEAD before the save.
        c.files_changed(&[(".git/HEAD", 2), (SAVED, 2)]);
        std::thread::sleep(Duration::from_millis(400));
        c.drain();
        version += 1;
        let rev = 20_000 + k;
        let text = module(rev);
        write_revision(&root.join(SAVED), &text, rev);
        let start = Instant::now();
        let (d, diags) = c.change_and_save_timed(SAVED, &text, version, WAIT);
        assert!(has_revision(&diags, rev), "F841 of {rev}");
        assert_eq!(
            import_severity(&diags),
            Some(1),
            "the first save after the switch is answered before the comparison: {diags:?}"
        );
        let (at, _) = c.wait_for_timed(
            |m| {
                m["method"] == "textDocument/publishDiagnostics"
                    && m["params"]["uri"] == uri.as_str()
                    && import_severity(m["params"]["diagnostics"].as_array().map_or(&[], |d| d))
                        == Some(3)
            },
            WAIT,
        );
        if k >= warmup {
            first.push(d);
            marked.push(at - start);
        }
    }
    c.shutdown();
    let mut s = format!(
        "(e) first save after a branch switch (findings at the base not known), median of {n}:\n"
    );
    s.push_str(&row(&format!("{}: save → diagnostics", build.name), &first));
    s.push_str(&row(
        &format!("{}: save → marked new/pre-existing", build.name),
        &marked,
    ));
    s
}
