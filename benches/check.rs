//! Process-level timing of `qgates check` against the tools run by hand, on the same files, in
//! the same run. A small harness of its own (median of N runs) rather than criterion: each
//! sample is a whole process tree, and what matters is the ratio between the two sides.
//!
//! (a) A generated 2,000-file Python project with the default three gates: `qgates check --scope
//!     project` against `ruff format --check --diff`, `ruff check --output-format json --no-fix`
//!     and `mypy --output json …` run one after another by hand, and against the slowest of them
//!     alone. Target: qgates ≤ 1.2 × the slowest gate.
//! (b) One file, one gate: `qgates check FILE --gates ruff_lint` against the raw `ruff check`.
//!     Target: qgates ≤ raw ruff + 5 ms.
//!
//! Caches: by default both sides run warm. `.mypy_cache` and `.ruff_cache` are kept, and each
//! side runs once untimed first, so every timed run finds the same caches. `QGATES_BENCH_COLD=1`
//! deletes both caches before every timed command instead (outside the timed span).
//! `QGATES_BENCH_RUNS` sets N (default 5 for (a), 6 × that for (b)). `QGATES_BENCH_ONLY=bc` runs
//! only the parts named.
//!
//! The binary is the one cargo builds for this package (`CARGO_BIN_EXE_qgates`, the bench
//! profile, i.e. release). The tools come from `QGATES_BENCH_TOOLS` (a folder holding `ruff` and
//! `mypy`), else the project's `.venv/bin`, else `PATH`; both sides get the same ones.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

#[path = "common/process.rs"]
mod process;
use process::{Tools, median, ms, parts_from_env, runs_from_env, timed, verdict};

use std::fmt::Write as _;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

const FILES: usize = 2_000;
const MODULES_PER_PACKAGE: usize = 50;
/// The default gates, in the order of the by-hand commands.
const GATE_IDS: [&str; 3] = ["ruff_format", "ruff_lint", "mypy"];

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is accepted and ignored.
    let tools = Tools::find();
    let cold = std::env::var_os("QGATES_BENCH_COLD").is_some_and(|v| v == "1");
    let runs = runs_from_env(5);
    println!(
        "qgates {}\nruff   {}\nmypy   {}\ncaches: {}\n",
        tools.qgates.display(),
        tools.ruff.display(),
        tools.mypy.display(),
        if cold {
            "cold (.mypy_cache and .ruff_cache deleted before every timed command)"
        } else {
            "warm (kept; each side ran once untimed first)"
        }
    );
    // `QGATES_BENCH_ONLY=bc` runs only the parts named (a, b, c); default all.
    let only = parts_from_env("abc");
    let part = |p: char| only.contains(p);
    let project = if part('a') {
        project_bench(&tools, runs, cold)
    } else {
        String::new()
    };
    let single = if part('b') {
        single_file_bench(&tools, runs * 6)
    } else {
        String::new()
    };
    let rerun = if part('c') {
        rerun_bench(&tools, runs)
    } else {
        String::new()
    };
    println!("\n== Results ==\n{project}{single}{rerun}");
}

fn clear_caches(root: &Path) {
    for dir in [".mypy_cache", ".ruff_cache"] {
        let _ = std::fs::remove_dir_all(root.join(dir));
    }
}

// ---------------------------------------------------------------------------------------------
// (a) the project

fn project_bench(tools: &Tools, runs: usize, cold: bool) -> String {
    let dir = tempfile::Builder::new()
        .prefix("qgates-bench-")
        .tempdir()
        .expect("a temporary folder");
    // QGATES_BENCH_KEEP=1 keeps the project, its caches and qgates' run logs for a look.
    let kept;
    let root = if std::env::var_os("QGATES_BENCH_KEEP").is_some_and(|v| v == "1") {
        kept = dir.keep();
        kept.as_path()
    } else {
        dir.path()
    };
    let files = write_project(root);
    println!(
        "(a) project: {} Python files under {}",
        files.len(),
        root.display()
    );

    let qgates = || {
        let mut c = tools.command(&tools.qgates, root);
        // The comparison is with the tools' own work: qgates' result cache (measured in (c)) and
        // baseline state stay out of it.
        c.args([
            "check",
            "--scope",
            "project",
            "--format",
            "json",
            "--no-cache",
            "--no-state",
            "--root",
        ])
        .arg(root);
        c
    };
    // The gates' own argv from the default configuration, with the same root-relative files.
    let by_hand = tools.default_gates();
    let tool = |i: usize| {
        let (_, program, args) = by_hand[i];
        let mut c = tools.command(program, root);
        c.args(args).args(&files);
        c
    };

    // Untimed first run of each side: warms the caches (when warm) and checks that the work is
    // real: every gate ran and found something, so nothing was skipped or errored.
    if cold {
        clear_caches(root);
    }
    let (first, out) = timed(&mut qgates());
    check_report(&out, &GATE_IDS);
    println!("    first qgates run (untimed): {:.0} ms", ms(first));
    let mut first_times = Vec::new();
    for (i, (name, _, _)) in by_hand.iter().enumerate() {
        if cold {
            clear_caches(root);
        }
        let (d, out) = timed(&mut tool(i));
        first_times.push(d);
        assert_eq!(
            out.status.code(),
            Some(1),
            "`{name}` should find something in the generated project: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        println!("    first {name} run (untimed): {:.0} ms", ms(d));
    }

    // qgates running only the slowest gate (by the untimed runs) separates what qgates adds to
    // one gate from what running three at once on this machine's cores costs.
    let slow_first = (0..GATE_IDS.len())
        .max_by_key(|&i| first_times[i])
        .expect("three tools");
    let qgates_one = || {
        let mut c = qgates();
        c.args(["--gates", GATE_IDS[slow_first]]);
        c
    };
    let mut q1_times = Vec::new();
    let mut q_times = Vec::new();
    let mut tool_times: [Vec<Duration>; 3] = Default::default();
    let mut seq_times = Vec::new();
    for run in 0..runs {
        let mut one_qgates = || {
            if cold {
                clear_caches(root);
            }
            let (d, out) = timed(&mut qgates());
            assert_eq!(
                out.status.code(),
                Some(1),
                "qgates check: findings expected"
            );
            q_times.push(d);
            d
        };
        let mut one_sequence = || {
            let mut sum = Duration::ZERO;
            for (i, times) in tool_times.iter_mut().enumerate() {
                if cold {
                    clear_caches(root);
                }
                let (d, out) = timed(&mut tool(i));
                assert_eq!(
                    out.status.code(),
                    Some(1),
                    "{}: findings expected",
                    by_hand[i].0
                );
                times.push(d);
                sum += d;
            }
            seq_times.push(sum);
            sum
        };
        // Alternate which side goes first, so neither always inherits the other's page cache.
        let (q, s) = if run % 2 == 0 {
            let q = one_qgates();
            (q, one_sequence())
        } else {
            let s = one_sequence();
            (one_qgates(), s)
        };
        if cold {
            clear_caches(root);
        }
        let (q1, out) = timed(&mut qgates_one());
        assert_eq!(
            out.status.code(),
            Some(1),
            "qgates check --gates: findings expected"
        );
        q1_times.push(q1);
        println!(
            "    run {}/{runs}: qgates {:.0} ms, by hand {:.0} ms, qgates --gates {} {:.0} ms",
            run + 1,
            ms(q),
            ms(s),
            GATE_IDS[slow_first],
            ms(q1)
        );
    }

    let q = median(&q_times);
    let seq = median(&seq_times);
    let tool_medians: Vec<Duration> = tool_times.iter().map(|t| median(t)).collect();
    let (slowest_i, slowest) = tool_medians
        .iter()
        .copied()
        .enumerate()
        .max_by_key(|(_, d)| *d)
        .expect("three tools");
    let ratio_slowest = q.as_secs_f64() / slowest.as_secs_f64();
    let mut r = String::new();
    let _ = writeln!(
        r,
        "(a) {} files, 3 gates, {} caches, median of {runs}:",
        files.len(),
        if cold { "cold" } else { "warm" }
    );
    for (i, m) in tool_medians.iter().enumerate() {
        let _ = writeln!(r, "    {:<36} {:>9.0} ms", by_hand[i].0, ms(*m));
    }
    let _ = writeln!(
        r,
        "    {:<36} {:>9.0} ms",
        "by hand, one after another",
        ms(seq)
    );
    let _ = writeln!(
        r,
        "    {:<36} {:>9.0} ms",
        "qgates check --scope project",
        ms(q)
    );
    let q1 = median(&q1_times);
    let _ = writeln!(
        r,
        "    {:<36} {:>9.0} ms",
        format!("qgates check --gates {}", GATE_IDS[slow_first]),
        ms(q1)
    );
    let _ = writeln!(
        r,
        "    qgates / by hand one after another = {:.2}",
        q.as_secs_f64() / seq.as_secs_f64()
    );
    let _ = writeln!(
        r,
        "    qgates / slowest gate alone ({}) = {:.2}   target ≤ 1.2: {}",
        by_hand[slowest_i].0,
        ratio_slowest,
        verdict(ratio_slowest <= 1.2)
    );
    if slow_first == slowest_i {
        let _ = writeln!(
            r,
            "    qgates with that gate only / the gate alone = {:.2} ({:+.0} ms)",
            q1.as_secs_f64() / slowest.as_secs_f64(),
            ms(q1) - ms(slowest)
        );
    }
    r
}

/// Checks a `--format json` report: each expected gate ran and failed (it has findings).
fn check_report(out: &Output, gates: &[&str]) {
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "qgates printed no JSON report ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    for id in gates {
        let gate = report["gates"]
            .as_array()
            .and_then(|g| g.iter().find(|g| g["id"] == *id))
            .unwrap_or_else(|| panic!("gate {id} is missing from the report: {report}"));
        assert_eq!(
            gate["status"], "failed",
            "gate {id} should have run and found something: {gate}"
        );
        let n = gate["violations"].as_array().map_or(0, Vec::len);
        println!("    {id}: {n} violations");
    }
}

/// Writes the project and its `quality.yaml`; returns the Python files, root-relative, sorted.
fn write_project(root: &Path) -> Vec<String> {
    let config = qgates::core::config::DEFAULT_CONFIG.replacen(
        "gates:\n",
        "project_scope:\n  include_globs: [\"src/**/*.py\"]\ngates:\n",
        1,
    );
    assert!(
        config.contains("project_scope:"),
        "the default configuration changed shape; update write_project"
    );
    std::fs::write(root.join("quality.yaml"), config).expect("write quality.yaml");
    let mut files = Vec::with_capacity(FILES);
    for i in 0..FILES {
        let package = i / MODULES_PER_PACKAGE;
        let m = i % MODULES_PER_PACKAGE;
        let dir = root.join(format!("src/pkg_{package:02}"));
        let (rel, text) = if m == 0 {
            std::fs::create_dir_all(&dir).expect("create a package folder");
            (
                format!("src/pkg_{package:02}/__init__.py"),
                format!("\"\"\"Package {package} of the qgates benchmark project.\"\"\"\n"),
            )
        } else {
            (
                format!("src/pkg_{package:02}/module_{m:03}.py"),
                module(package, m),
            )
        };
        std::fs::write(root.join(&rel), text).expect("write a module");
        files.push(rel);
    }
    files.sort();
    files
}

/// One module. Most are clean and typed; every tenth has lint findings (an unused import, a
/// comparison to None), every tenth is unformatted, every tenth has type errors. Each imports
/// the module before it in its package, so mypy has a dependency graph to follow.
fn module(package: usize, m: usize) -> String {
    let i = package * MODULES_PER_PACKAGE + m;
    let mut s = format!(
        "\"\"\"Module {m} of package {package}.\"\"\"\n\nfrom __future__ import annotations\n\n"
    );
    let lint = i % 10 == 3;
    let unformatted = i % 10 == 5;
    let type_error = i % 10 == 7;
    if lint {
        s.push_str("import os\n");
    }
    s.push_str("from dataclasses import dataclass, field\n");
    let previous = (m > 1).then(|| m - 1);
    if let Some(p) = previous {
        // `convert_` (every fourth module) uses the previous record type too.
        let record = if i % 4 == 2 {
            format!("Record{p}, ")
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "\nfrom pkg_{package:02}.module_{p:03} import {record}helper_{p}"
        );
    }
    let factor = i % 7 + 1;
    let _ = write!(
        s,
        "

@dataclass
class Record{m}:
    \"\"\"A record with a name, a size and tags.\"\"\"

    name: str
    size: int = 0
    tags: list[str] = field(default_factory=list)

    def grow(self, by: int) -> int:
        self.size += by * {factor}
        return self.size

    def label(self) -> str:
        return f\"{{self.name}}:{{self.size}}\"
"
    );
    let inner = match previous {
        Some(p) => format!("helper_{p}(values[1:]) if len(values) > 1 else 0"),
        None => "0".to_string(),
    };
    let _ = write!(
        s,
        "

def helper_{m}(values: list[int]) -> int:
    total = {inner}
    for v in values:
        total += v * {factor}
    return total
"
    );
    match i % 4 {
        0 => {
            let _ = write!(
                s,
                "

def describe_{m}(records: dict[str, int]) -> list[str]:
    out: list[str] = []
    for key, value in sorted(records.items()):
        if value > {factor}:
            out.append(f\"{{key}}={{value}}\")
    return out
"
            );
        }
        1 => {
            let _ = write!(
                s,
                "

class Registry{m}:
    def __init__(self) -> None:
        self._items: dict[str, Record{m}] = {{}}

    def add(self, record: Record{m}) -> None:
        self._items[record.name] = record

    def find(self, name: str) -> Record{m} | None:
        return self._items.get(name)
"
            );
        }
        2 => {
            if let Some(p) = previous {
                let _ = write!(
                    s,
                    "

def convert_{m}(old: Record{p}) -> Record{m}:
    return Record{m}(name=old.name, size=old.size, tags=list(old.tags))
"
                );
            }
        }
        _ => {
            let _ = write!(
                s,
                "

LIMIT_{m} = {}
NAMES_{m} = (\"alpha\", \"beta\", \"gamma\")
",
                i * 3
            );
        }
    }
    if lint {
        let _ = write!(
            s,
            "

def check_{m}(value: int | None) -> bool:
    if value == None:
        return False
    return True
"
        );
    }
    if unformatted {
        let _ = write!(
            s,
            "

def messy_{m}( a:int,b :int )->int :
    x={{'a':a,'b':b}}
    return x['a']+x[ 'b' ]
"
        );
    }
    if type_error {
        let _ = write!(
            s,
            "

def broken_{m}() -> int:
    return \"not an int\"


def misuse_{m}() -> str:
    return helper_{m}([1, 2]) + Record{m}(name=3).label()
"
        );
    }
    s
}

// ---------------------------------------------------------------------------------------------
// (b) one file, one gate

fn single_file_bench(tools: &Tools, runs: usize) -> String {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path();
    std::fs::write(
        root.join("quality.yaml"),
        qgates::core::config::DEFAULT_CONFIG,
    )
    .expect("write quality.yaml");
    std::fs::create_dir_all(root.join("src")).expect("create src");
    let file = "src/app.py";
    let mut text = module(0, 3);
    text.push_str("\n\nimport sys\n");
    std::fs::write(root.join(file), text).expect("write the file");
    println!("\n(b) one file, one gate: {file} under {}", root.display());

    let qgates = || {
        let mut c = tools.command(&tools.qgates, root);
        c.args([
            "check",
            file,
            "--gates",
            "ruff_lint",
            "--format",
            "json",
            "--no-cache",
            "--root",
        ])
        .arg(root);
        c
    };
    let raw = || {
        let mut c = tools.command(&tools.ruff, root);
        c.args(["check", "--output-format", "json", "--no-fix", file]);
        c
    };
    let (_, out) = timed(&mut qgates());
    check_report(&out, &["ruff_lint"]);
    for _ in 0..3 {
        timed(&mut raw());
        timed(&mut qgates());
    }
    let (mut q_times, mut r_times) = (Vec::new(), Vec::new());
    for run in 0..runs {
        if run % 2 == 0 {
            q_times.push(timed(&mut qgates()).0);
            r_times.push(timed(&mut raw()).0);
        } else {
            r_times.push(timed(&mut raw()).0);
            q_times.push(timed(&mut qgates()).0);
        }
    }
    let (q, r) = (median(&q_times), median(&r_times));
    let overhead = ms(q) - ms(r);
    let min = |v: &[Duration]| v.iter().min().copied().unwrap_or_default();
    let mut s = String::new();
    let _ = writeln!(s, "(b) one file, ruff_lint only, median of {runs}:");
    let _ = writeln!(
        s,
        "    {:<36} {:>9.1} ms (min {:.1})",
        "ruff check --output-format json",
        ms(r),
        ms(min(&r_times))
    );
    let _ = writeln!(
        s,
        "    {:<36} {:>9.1} ms (min {:.1})",
        "qgates check FILE --gates ruff_lint",
        ms(q),
        ms(min(&q_times))
    );
    let _ = writeln!(
        s,
        "    qgates − raw ruff = {overhead:+.1} ms   target ≤ +5 ms: {}",
        verdict(overhead <= 5.0)
    );
    s
}

/// (c) The result cache: `check --scope project` on the generated project with an empty cache,
/// then again with nothing changed. The second run must start no tool (every gate answered all
/// its files from the cache) and take at most 10 % of the first.
fn rerun_bench(tools: &Tools, runs: usize) -> String {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path();
    let files = write_project(root);
    println!(
        "\n(c) unchanged re-run: {} Python files under {}",
        files.len(),
        root.display()
    );
    let qgates = || {
        let mut c = tools.command(&tools.qgates, root);
        c.args([
            "check",
            "--scope",
            "project",
            "--format",
            "json",
            "--no-state",
            "--root",
        ])
        .arg(root);
        c
    };
    let (mut firsts, mut seconds) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let _ = std::fs::remove_dir_all(root.join(".qgates").join("cache"));
        let (first, out) = timed(&mut qgates());
        check_report(&out, &GATE_IDS);
        let (second, out) = timed(&mut qgates());
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
        for g in report["gates"].as_array().expect("gates") {
            assert_eq!(
                g["cached_files"], g["files_checked"],
                "gate {} ran a tool on the unchanged re-run",
                g["id"]
            );
        }
        firsts.push(first);
        seconds.push(second);
    }
    let (f, s) = (median(&firsts), median(&seconds));
    let ratio = ms(s) / ms(f);
    let met = ratio <= 0.10;
    format!(
        "(c) unchanged re-run of `check --scope project` ({} files, medians of {runs}):\n    first (empty cache) {:.0} ms, second {:.1} ms, zero tool processes\n    second / first = {:.3}  (target ≤ 0.10: {})\n",
        files.len(),
        ms(f),
        ms(s),
        ratio,
        verdict(met)
    )
}
