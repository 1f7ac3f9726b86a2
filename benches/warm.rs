//! Warm processes (docs/warm.md) against the tool run cold, the two sides interleaved in one
//! run.
//!
//! (a) mypy on a real typed project: the mypy 1.13.0 sdist (downloaded once into
//!     `target/bench-data/`, or `QGATES_BENCH_MYPY_SDIST`) as a git repository with one gate,
//!     `preset: mypy`. Each sample adds a module-level line with a type error to
//!     `mypy/checker.py` (a change to the module's interface); the language server's save →
//!     diagnostics of that version (dmypy kept warm) is timed against the cold `mypy` of the file
//!     as the gate runs it, its cache warm. Target: ≤ 0.3 × cold. The first save, which starts
//!     the daemon, and the daemon's memory are reported apart.
//!
//! (b) basedpyright through its language server, on the same repository and edits, against the
//!     cold `basedpyright --outputjson` of the file. Target: ≤ 0.3 × cold.
//! (c) (b) with `mypy/errors.py` edited, a module of a typical size (1 341 lines against
//!     `checker.py`'s 8 653).
//!
//! `QGATES_BENCH_RUNS` sets the samples (default 5, after 3 to warm up); `QGATES_BENCH_ONLY`
//! the parts.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/process.rs"]
mod process;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::lsp::{LspClient, TrustAnswer};
use common::lsp_wire::frame;
use process::{Tools, median, ms, parts_from_env, runs_from_env, timed, verdict};
use serde_json::{Value, json};

const SDIST: &str = "mypy-1.13.0";
const WAIT: Duration = Duration::from_secs(300);
/// One tool measured: its preset, and its cold run as the gate runs it.
struct Part {
    part: char,
    preset: &'static str,
    /// The program (in the tools' folder) and its arguments before the file.
    program: &'static str,
    args: &'static [&'static str],
    /// The finding's code on the added line.
    code: &'static str,
    warm: &'static str,
    /// The module edited.
    edited: &'static str,
    /// Whether the cold run's output flags the added line (its number, the value put there).
    flags_cold: fn(&str, usize, usize) -> bool,
}

const MYPY: Part = Part {
    part: 'a',
    preset: "mypy",
    program: "mypy",
    // presets/mypy.yaml
    args: &[
        "--no-native-parser",
        "--output",
        "json",
        "--no-error-summary",
        "--hide-error-context",
    ],
    code: "assignment",
    warm: "dmypy",
    edited: "mypy/checker.py",
    flags_cold: |out, line, _| out.contains(&format!("\"line\": {line},")),
};

const BASEDPYRIGHT: Part = Part {
    part: 'b',
    preset: "basedpyright",
    program: "basedpyright",
    args: &["--outputjson"],
    code: "reportAssignmentType",
    warm: "its language server",
    edited: "mypy/checker.py",
    flags_cold: |out, _, rev| out.contains(&format!("Literal['{rev}']")),
};

/// (b) on a module of a typical size rather than the largest.
const BASEDPYRIGHT_TYPICAL: Part = Part {
    part: 'c',
    edited: "mypy/errors.py",
    ..BASEDPYRIGHT
};

fn main() {
    let tools = Tools::find();
    let n = runs_from_env(5);
    let mut report = String::new();
    let parts = parts_from_env("abc");
    match sdist(&tools) {
        None => report.push_str(&format!(
            "skipped: the {SDIST} sdist could not be downloaded\n"
        )),
        Some(sdist) => {
            for p in [&MYPY, &BASEDPYRIGHT, &BASEDPYRIGHT_TYPICAL]
                .into_iter()
                .filter(|p| parts.contains(p.part))
            {
                report.push_str(&bench(&tools, &sdist, n, p));
            }
        }
    }
    println!("\n== Results ==\n{report}");
}

/// The sdist: given, kept from an earlier run, or downloaded with the tools' pip.
fn sdist(tools: &Tools) -> Option<PathBuf> {
    if let Some(given) = std::env::var_os("QGATES_BENCH_MYPY_SDIST") {
        return Some(PathBuf::from(given));
    }
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    let file = data.join(format!("{SDIST}.tar.gz"));
    if file.is_file() {
        return Some(file);
    }
    let pip = tools.mypy.with_file_name("pip");
    let ok = Command::new(pip)
        .args(["download", "--no-deps", "--no-binary", ":all:", "-q", "-d"])
        .arg(&data)
        .arg(SDIST.replacen('-', "==", 1))
        .status()
        .is_ok_and(|s| s.success());
    (ok && file.is_file()).then_some(file)
}

/// The sdist unpacked as a committed git repository with one gate, trusted.
fn repository(tools: &Tools, sdist: &Path, preset: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let ok = Command::new("tar")
        .args(["xzf"])
        .arg(sdist)
        .args(["--strip-components=1", "-C"])
        .arg(ws.path())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "tar xzf {}", sdist.display());
    let root = ws.path();
    common::write(
        root,
        "quality.yaml",
        &format!("version: 1\ngates:\n  {preset}: {{ preset: {preset} }}\n"),
    );
    common::write(root, ".gitignore", ".qgates/\n.mypy_cache/\n");
    common::git(root, &["init", "-q", "-b", "main"]);
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-qm", "sdist"]);
    let trusted = tools
        .command(&tools.qgates, root)
        .args(["trust", "--yes", "."])
        .env("QGATES_TRUST_FILE", root.join(".qgates-trust.json"))
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(trusted, "qgates trust");
    ws
}

fn notification(method: &str, params: Value) -> Vec<u8> {
    frame(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

/// `rev`'s line: a module-level name with a type error, so every version has a finding of its
/// own on its own line.
fn with_line(original: &str, rev: usize) -> (String, usize) {
    let text = format!("{original}\nWARM_BENCH_{rev}: int = \"{rev}\"\n");
    let line = text.lines().count();
    (text, line)
}

fn flags(diags: &[Value], line: usize, code: &str) -> bool {
    diags
        .iter()
        .any(|d| d["range"]["start"]["line"] == line - 1 && d["code"] == code)
}

/// The resident memory of the warm process's group (a language server's wrapper and server),
/// as `qgates status` reads it.
fn daemon_memory_mb(root: &Path, gate: &str) -> Option<f64> {
    let state =
        std::fs::read_to_string(root.join(format!(".qgates/warm/{gate}/state.json"))).ok()?;
    let state: Value = serde_json::from_str(&state).ok()?;
    let pgid = i32::try_from(state["daemon_pid"].as_u64()?).ok()?;
    let bytes = qgates::core::platform::group_resident_bytes(pgid)?;
    Some(bytes as f64 / (1024.0 * 1024.0))
}

fn bench(tools: &Tools, sdist: &Path, n: usize, p: &Part) -> String {
    let ws = repository(tools, sdist, p.preset);
    let root = ws.path();
    let original = std::fs::read_to_string(root.join(p.edited)).unwrap();
    let modules = walkdir_count(&root.join("mypy"));
    let program = tools.mypy.with_file_name(p.program);
    println!(
        "({}) {}: {SDIST} ({modules} .py files under mypy/), {} edited, under {}",
        p.part,
        p.preset,
        p.edited,
        root.display()
    );
    let cold = |line: usize, rev: usize| {
        let mut cmd = tools.command(&program, root);
        cmd.args(p.args).arg(p.edited);
        let (d, out) = timed(&mut cmd);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            (p.flags_cold)(&text, line, rev),
            "cold {} flags the line of {rev}",
            p.program
        );
        d
    };
    // The cold side's cache, as a user's would be.
    let _ = tools
        .command(&program, root)
        .args(p.args)
        .arg(p.edited)
        .output();

    let mut cmd = tools.command(&tools.qgates, root);
    cmd.arg("lsp")
        .env("QGATES_TRUST_FILE", root.join(".qgates-trust.json"));
    let mut c = LspClient::spawn_command(cmd, root, TrustAnswer::NotNow);
    c.initialize(json!({}));
    let uri = c.uri(p.edited);
    c.send_bytes(&notification(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": original}}),
    ));
    // The first save starts the daemon, which checks the program whole.
    let (text, line) = with_line(&original, 0);
    std::fs::write(root.join(p.edited), &text).unwrap();
    let (first, diags) = c.change_and_save_timed(p.edited, &text, 2, WAIT);
    assert!(
        flags(&diags, line, p.code),
        "the first save's finding: {diags:?}"
    );
    let started_mb = daemon_memory_mb(root, p.preset);

    let (mut warm_t, mut cold_t) = (Vec::new(), Vec::new());
    let warmup = 3;
    let mut version = 2;
    for i in 0..warmup + n {
        let (text, line) = with_line(&original, i + 1);
        std::fs::write(root.join(p.edited), &text).unwrap();
        // Who goes first alternates.
        for side in [i % 2, 1 - i % 2] {
            if side == 0 {
                cold_t.push(cold(line, i + 1));
            } else {
                version += 1;
                let (d, diags) = c.change_and_save_timed(p.edited, &text, version, WAIT);
                assert!(
                    flags(&diags, line, p.code),
                    "save {i}: the finding on line {line}"
                );
                warm_t.push(d);
            }
        }
        if i + 1 == warmup {
            warm_t.clear();
            cold_t.clear();
        }
    }
    let after_mb = daemon_memory_mb(root, p.preset);
    c.shutdown();
    let _ = tools
        .command(&tools.qgates, root)
        .args(["daemon", "stop"])
        .output();

    let (w, k) = (ms(median(&warm_t)), ms(median(&cold_t)));
    let mb = |m: Option<f64>| m.map_or("unknown".into(), |m| format!("{m:.0} MB"));
    let mut s = format!(
        "({}) {}, {SDIST}, one module's interface edited, median of {n}:\n",
        p.part, p.preset
    );
    s.push_str(&format!(
        "    cold `{} {}`                 {k:8.1} ms\n",
        p.program, p.edited
    ));
    s.push_str(&format!(
        "    qgates lsp save → diagnostics ({} warm)  {w:8.1} ms\n",
        p.warm
    ));
    s.push_str(&format!(
        "    warm / cold = {:.2}   target ≤ 0.3: {}\n",
        w / k,
        verdict(w <= 0.3 * k)
    ));
    s.push_str(&format!(
        "    first save (starts the daemon, checks everything): {:.1} ms\n",
        ms(first)
    ));
    s.push_str(&format!(
        "    daemon memory: {} after its start, {} after the saves\n",
        mb(started_mb),
        mb(after_mb)
    ));
    s
}

fn walkdir_count(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() && p.file_name().is_some_and(|n| n != "typeshed") {
                walkdir_count(&p)
            } else {
                usize::from(p.extension().is_some_and(|x| x == "py"))
            }
        })
        .sum()
}
