//! qgates on a large repository: the generated 50 000-file monorepo (`common/big_repo.rs`, the
//! `scope` bench's generator) against the same work in a repository of one file, measured in one
//! run, the sides interleaved.
//!
//! (a) The language server, one `ruff_lint` gate: a save of `src/app.py` (new content,
//!     `didChange` + `didSave` in one write) in each repository, the baseline at HEAD so the `auto`
//!     scope is the saved file in both. Measured: the server's own CPU per save (user + system of
//!     its process from `/proc`, from before the save until the next one, so the scope work after
//!     the diagnostics counts) and save → diagnostics. Targets: CPU ≤ 2 × the one-file
//!     repository's, latency ≤ the one-file repository's + 3 ms. Measured twice: with a client
//!     that watches files (VS Code) and with one that does not (Neovim on Linux: the server
//!     watches the folder itself), the server's memory (VmRSS) after the saves reported for each.
//!
//! (b) The `auto` scope: resolved in full (what `qgates check` and MCP do once per run), and as the
//!     language server keeps it after a save of one file (`ScopeTracker`), against
//!     `git status --porcelain -uall` of the same tree. Target: full ≤ 1.5 × `git status`.
//! (c) `qgates check --scope project --no-cache` with one quick gate (`ruff_lint`) over every
//!     file, against the raw `ruff check .` of the repository and `ruff check` given the same
//!     files as arguments, as the gate is (reported, no target).
//! (d), (e) The shared cache on a fresh clone, and 4 shards: `scale/ci.rs`.
//!
//! `QGATES_BENCH_RUNS=N` (default 5; (a) takes 10 N saves a side), `QGATES_BENCH_ONLY=abcde`,
//! `QGATES_BENCH_SCALE_REPO=<folder>` keeps the generated repository (reused when present).

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

#[path = "common/big_repo.rs"]
mod big_repo;
#[path = "scale/ci.rs"]
mod ci;
#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/process.rs"]
#[allow(dead_code, reason = "not every part of the shared timing is used here")]
mod process;

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use common::lsp::{LspClient, TrustAnswer};
use common::lsp_wire::frame;
use process::{Tools, median, ms, parts_from_env, runs_from_env, verdict};
use serde_json::{Value, json};

const SAVED: &str = "src/app.py";
const WAIT: Duration = Duration::from_secs(120);
/// Longer than the server's burst window (50 ms), and than its scope work after a save.
const SPACING: Duration = Duration::from_millis(150);

fn main() -> Result<(), big_repo::Error> {
    let tools = Tools::find();
    let runs = runs_from_env(5);
    let only = parts_from_env("abcde");
    let tmp = tempfile::tempdir()?;
    let started = Instant::now();
    let (big, _) = big_repo::at(
        &tmp.path().join("big"),
        "QGATES_BENCH_SCALE_REPO",
        &[("quality.yaml", &config()), (SAVED, &module(0))],
    )?;
    println!(
        "50 000-file repository at {} ({:.1?})",
        big.display(),
        started.elapsed()
    );
    let mut results = String::new();
    if only.contains('a') {
        for watching in [true, false] {
            results.push_str(&save_cpu(&tools, &big, runs * 10, watching)?);
        }
    }
    if only.contains('b') {
        results.push_str(&auto_scope(&big, runs * 4)?);
    }
    if only.contains('c') {
        results.push_str(&project_check(&tools, &big, runs)?);
    }
    if only.contains('d') {
        results.push_str(&ci::remote_cache(&tools, &big, tmp.path(), runs)?);
    }
    if only.contains('e') {
        results.push_str(&ci::shards(&tools, &big, runs.div_ceil(2))?);
    }
    println!("\n== Results ==\n{results}");
    Ok(())
}

/// One `ruff_lint` gate, as the default configuration has it.
fn config() -> String {
    qgates::core::config::DEFAULT_CONFIG.replacen(
        "active_gates: [ruff_format, ruff_lint, mypy]",
        "active_gates: [ruff_lint]",
        1,
    )
}

/// A module whose one finding (an unused local) changes with `rev`.
fn module(rev: usize) -> String {
    format!(
        "\"\"\"Saved module.\"\"\"\n\n\ndef revision() -> int:\n    unused_{rev} = {rev}\n    return 3\n"
    )
}

/// The server's own CPU time so far (user + system, every thread), from `/proc/PID/stat`.
fn cpu(c: &LspClient) -> Duration {
    let pid = c.child.as_ref().expect("a server process").id();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat[stat.rfind(')').expect("a stat line") + 2..]
        .split(' ')
        .collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Duration::from_micros(ticks * 1_000_000 / per_second)
}

/// `watching`: the client declares file watching (VS Code); otherwise it does not (Neovim on
/// Linux) and the server watches the folder itself.
fn server(tools: &Tools, root: &Path, watching: bool) -> LspClient {
    // In the ignored .qgates/ folder: no untracked file in either scope.
    let trust = root.join(".qgates/bench-trust.json");
    let ok = tools
        .command(&tools.qgates, root)
        .args(["trust", "--yes"])
        .arg(root)
        .env("QGATES_TRUST_FILE", &trust)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "qgates trust failed in {}", root.display());
    let mut cmd = tools.command(&tools.qgates, root);
    cmd.arg("lsp").env("QGATES_TRUST_FILE", trust);
    let mut c = LspClient::spawn_command(cmd, root, TrustAnswer::NotNow);
    c.watches_files = watching;
    c.initialize(json!({}));
    c
}

/// The server's resident memory (VmRSS), in MiB.
fn rss_mib(c: &LspClient) -> f64 {
    let pid = c.child.as_ref().expect("a server process").id();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn notification(method: &str, params: Value) -> Vec<u8> {
    frame(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

/// Writes revision `rev` of the saved module and sends the editor's save of it; waits for its
/// diagnostics, which must name the revision.
fn save(c: &mut LspClient, root: &Path, rev: usize, version: i32) -> Duration {
    let text = module(rev);
    std::fs::write(root.join(SAVED), &text).expect("write the module");
    let (took, diagnostics) = c.change_and_save_timed(SAVED, &text, version, WAIT);
    let name = format!("unused_{rev}`");
    let found =
        (diagnostics.iter()).any(|d| d["message"].as_str().is_some_and(|s| s.contains(&name)));
    assert!(found, "the diagnostics of revision {rev}: {diagnostics:?}");
    took
}

/// A repository holding only the configuration and the saved module.
fn one_file_repository(dir: &Path) -> Result<(), big_repo::Error> {
    big_repo::git(dir, &["init", "-q", "-b", "main"])?;
    big_repo::git(dir, &["config", "user.name", "Bench"])?;
    big_repo::git(dir, &["config", "user.email", "bench@example.com"])?;
    big_repo::write(dir, ".gitignore", ".qgates/\n")?;
    big_repo::write(dir, "quality.yaml", &config())?;
    big_repo::write(dir, SAVED, &module(0))?;
    big_repo::git(dir, &["add", "-A"])?;
    big_repo::git(dir, &["commit", "-q", "-m", "initial"])?;
    Ok(())
}

fn save_cpu(
    tools: &Tools,
    big: &Path,
    n: usize,
    watching: bool,
) -> Result<String, big_repo::Error> {
    let small_dir = tempfile::tempdir()?;
    let small = small_dir.path();
    one_file_repository(small)?;
    let roots = [big, small];
    // The baseline at HEAD, as after a green run: the `auto` scope is then what changed, in
    // both repositories the saved file alone.
    for root in roots {
        big_repo::git(root, &["checkout", "-q", "--", SAVED])?;
        let state = qgates::core::scope::baseline::StateStore::new(root);
        let head = big_repo::git(root, &["rev-parse", "HEAD"])?
            .trim()
            .to_owned();
        state.update(|s| {
            s.branches.insert(
                "main".into(),
                qgates::core::scope::baseline::BranchState {
                    baseline_sha: Some(head),
                    failed_files: Vec::new(),
                },
            );
        })?;
    }
    let client = if watching {
        "a client that watches files"
    } else {
        "a client that does not watch files"
    };
    println!("(a) saves in the language server, ruff_lint, {SAVED}, {client}");
    let mut servers: Vec<(LspClient, i32)> = roots
        .iter()
        .map(|root| {
            let mut c = server(tools, root, watching);
            let uri = c.uri(SAVED);
            c.send_bytes(&notification(
                "textDocument/didOpen",
                json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": module(0)}}),
            ));
            c.wait_for(
                |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri.as_str(),
                WAIT,
            );
            (c, 1)
        })
        .collect();
    let want = if watching { "client" } else { "server" };
    for (c, _) in &mut servers {
        let events = c.file_events();
        assert_eq!(events, want, "the server's file events");
    }
    // CPU comes from /proc in clock ticks (10 ms), so it is taken over all the timed saves of a
    // side and divided: the server is idle between them (each save's work, scope resolution
    // included, ends within `SPACING`).
    let mut lat_t: [Vec<Duration>; 2] = Default::default();
    let mut raw_t: [Vec<Duration>; 2] = Default::default();
    let mut cpu_from = [Duration::ZERO; 2];
    let warmup = 3;
    let mut rev = 0;
    for i in 0..warmup + n {
        if i == warmup {
            for (side, (c, _)) in servers.iter().enumerate() {
                cpu_from[side] = cpu(c);
            }
        }
        for k in 0..2 {
            let side = (k + i) % 2;
            rev += 1;
            let (c, version) = &mut servers[side];
            *version += 1;
            let started = Instant::now();
            let latency = save(c, roots[side], rev, *version);
            std::thread::sleep(SPACING.saturating_sub(started.elapsed()));
            // The tool alone on the same file: what the repository costs ruff itself.
            let t = Instant::now();
            let ran = tools
                .command(&tools.ruff, roots[side])
                .args(["check", "--output-format", "json", "--no-fix", SAVED])
                .output()
                .is_ok_and(|o| o.status.code().is_some());
            let raw = t.elapsed();
            assert!(ran, "ruff ran");
            if i >= warmup {
                lat_t[side].push(latency);
                raw_t[side].push(raw);
            }
        }
    }
    let per_save = |side: usize| ms(cpu(&servers[side].0) - cpu_from[side]) / n as f64;
    let (big_cpu, small_cpu) = (per_save(0), per_save(1));
    let (big_rss, small_rss) = (rss_mib(&servers[0].0), rss_mib(&servers[1].0));
    for (c, _) in servers {
        c.shutdown();
    }
    let (big_lat, small_lat) = (ms(median(&lat_t[0])), ms(median(&lat_t[1])));
    let (big_raw, small_raw) = (ms(median(&raw_t[0])), ms(median(&raw_t[1])));
    let mut s = format!(
        "(a) a save in the language server, one gate (ruff_lint), {client} (file events: {want}), {n} saves:\n"
    );
    let rows = [
        ("server CPU per save (mean), 50 000 files", big_cpu),
        ("server CPU per save (mean), one file", small_cpu),
    ];
    for (label, v) in rows {
        let _ = writeln!(s, "    {label:<44} {v:>8.2} ms");
    }
    let _ = writeln!(
        s,
        "      ratio {:.2} ×   target ≤ 2 ×: {}",
        big_cpu / small_cpu.max(0.01),
        verdict(big_cpu <= 2.0 * small_cpu)
    );
    let rows = [
        ("save → diagnostics (median), 50 000 files", big_lat),
        ("save → diagnostics (median), one file", small_lat),
        ("raw ruff check of the file, 50 000 files", big_raw),
        ("raw ruff check of the file, one file", small_raw),
    ];
    for (label, v) in rows {
        let _ = writeln!(s, "    {label:<44} {v:>8.2} ms");
    }
    let _ = writeln!(
        s,
        "      difference {:+.2} ms   target ≤ +3 ms: {}",
        big_lat - small_lat,
        verdict(big_lat <= small_lat + 3.0)
    );
    let _ = writeln!(
        s,
        "    server memory (VmRSS) after the saves: 50 000 files {big_rss:.1} MiB, one file {small_rss:.1} MiB"
    );
    Ok(s)
}

fn auto_scope(big: &Path, n: usize) -> Result<String, big_repo::Error> {
    use qgates::core::config::{ConfigSource, parse_config};
    use qgates::core::scope::tracker::ScopeTracker;
    use qgates::core::scope::{ScopeRequest, resolve};
    let config = parse_config(&config(), ConfigSource::Embedded)?;
    let tracker = ScopeTracker::new(big.to_path_buf(), true);
    tracker.current(&config)?;
    let saved = big.join(big_repo::tracked(777));
    let (mut full, mut kept, mut status) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..=n {
        // New content every time. (Content back to the committed one would have `git status`
        // refresh the index's stat data, and a rewritten index costs the tracker one whole
        // status: docs/design.md, "Following changes in the language server".)
        std::fs::write(&saved, format!("value_777 = {}\n", 1000 + i))?;
        tracker.changed([saved.as_path()]);
        let t = Instant::now();
        let followed = tracker.current(&config)?;
        let k = t.elapsed();
        let t = Instant::now();
        let fresh = resolve(big, &config, &ScopeRequest::Auto)?;
        let f = t.elapsed();
        let t = Instant::now();
        let porcelain = big_repo::git(big, &["status", "--porcelain", "-uall"])?;
        let g = t.elapsed();
        assert_eq!(
            followed, fresh,
            "the followed scope differs from a fresh one"
        );
        assert_eq!(
            fresh.files.len(),
            porcelain.lines().count(),
            "git status and the scope disagree"
        );
        if i > 0 {
            kept.push(k);
            full.push(f);
            status.push(g);
        }
    }
    let (full, kept, status) = (ms(median(&full)), ms(median(&kept)), ms(median(&status)));
    let mut s = format!("(b) the auto scope, 50 000 files, median of {n}:\n");
    let _ = writeln!(s, "    resolved in full (check, MCP)       {full:>8.2} ms");
    let _ = writeln!(s, "    kept after a save (language server) {kept:>8.2} ms");
    let _ = writeln!(
        s,
        "    git status --porcelain -uall        {status:>8.2} ms"
    );
    let _ = writeln!(
        s,
        "      full / git status {:.2} ×   target ≤ 1.5 ×: {}",
        full / status,
        verdict(full <= 1.5 * status)
    );
    Ok(s)
}

fn project_check(tools: &Tools, big: &Path, n: usize) -> Result<String, big_repo::Error> {
    // The files the gate is given: every Python file git does not ignore.
    let listed = big_repo::git(
        big,
        &["ls-files", "-co", "--exclude-standard", "--", "*.py"],
    )?;
    let files: Vec<&str> = listed.lines().collect();
    let (mut ours, mut raw, mut raw_files) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..=n {
        let t = Instant::now();
        let out = tools
            .command(&tools.qgates, big)
            .args([
                "check",
                "--scope",
                "project",
                "--no-cache",
                "--no-state",
                "--format",
                "json",
            ])
            .output()?;
        let d = t.elapsed();
        let report: Value = serde_json::from_slice(&out.stdout)?;
        assert_eq!(
            report["gates"][0]["files_checked"].as_u64(),
            Some(files.len() as u64),
            "ruff_lint ran over every Python file: {report}"
        );
        let t = Instant::now();
        let status = tools
            .command(&tools.ruff, big)
            .args(["check", "--output-format", "json", "--no-fix", "."])
            .output()?
            .status;
        let r = t.elapsed();
        assert!(status.code().is_some(), "ruff ran");
        let t = Instant::now();
        let status = tools
            .command(&tools.ruff, big)
            .args(["check", "--output-format", "json", "--no-fix"])
            .args(&files)
            .output()?
            .status;
        let rf = t.elapsed();
        assert!(status.code().is_some(), "ruff ran");
        if i > 0 {
            ours.push(d);
            raw.push(r);
            raw_files.push(rf);
        }
    }
    let raw_files = ms(median(&raw_files));
    let (ours, raw) = (ms(median(&ours)), ms(median(&raw)));
    let mut s = format!("(c) check --scope project, ruff_lint over 50 001 files, median of {n}:\n");
    let _ = writeln!(s, "    qgates check                        {ours:>8.1} ms");
    let _ = writeln!(s, "    raw ruff check .                    {raw:>8.1} ms");
    let _ = writeln!(
        s,
        "    raw ruff check FILES… (as the gate) {raw_files:>8.1} ms"
    );
    let _ = writeln!(
        s,
        "      ratio {:.2} × ruff check ., {:.2} × ruff check FILES…",
        ours / raw,
        ours / raw_files
    );
    Ok(s)
}
