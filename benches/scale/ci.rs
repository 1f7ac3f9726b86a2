//! The scale bench's CI parts, on fresh clones of the generated repository:
//!
//! (d) A second machine with the shared cache warm: clone A's `check --scope project` fills a
//!     Redis store (Debian's redis-server, started here on loopback); then each timed run is a
//!     fresh clone B, empty local cache, `check --scope project` with the same store. Measured:
//!     B's run, the store reads inside it (qgates' own debug line), and `git status --porcelain
//!     -uall` of the same clone. Targets: zero tool processes (ruff is a wrapper that logs every
//!     start) and B's run ≤ 1.5 × `git status` + the reads.
//! (e) 4 shards against the unsharded run (`--no-cache`): each shard's files within 10 % of a
//!     quarter, `qgates merge` of the four equal to the unsharded report (timings and log
//!     folders aside), and each shard's time against the unsharded one's.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::big_repo;
use crate::common::stores::Redis;
use crate::process::{Tools, median, ms, verdict};

/// What both machines add to the committed configuration, the same in each clone: a deadline
/// that lets clone A write all 50 000 results in one run (the default 2 s is for a store that
/// is down, not for filling one).
const CACHE: &str = "cache:\n  timeout_ms: 600000\n";

/// A `ruff` that logs each start to `$BENCH_STARTS` and runs `$BENCH_RUFF`: the same file on
/// both machines, so the tool's identity (its content) is too.
const WRAPPER: &str =
    "#!/bin/sh\necho \"ruff $*\" >> \"$BENCH_STARTS\"\nexec \"$BENCH_RUFF\" \"$@\"\n";

/// A clone of `origin` at `dir`, with the shared configuration.
fn clone(origin: &Path, dir: &Path) -> Result<(), big_repo::Error> {
    let dir_arg = dir.to_str().ok_or("a temporary folder that is not UTF-8")?;
    big_repo::git(origin, &["clone", "-q", ".", dir_arg])?;
    let config = std::fs::read_to_string(dir.join("quality.yaml"))?;
    std::fs::write(dir.join("quality.yaml"), format!("{config}{CACHE}"))?;
    Ok(())
}

struct Machine<'a> {
    tools: &'a Tools,
    bin: PathBuf,
    starts: PathBuf,
    store: String,
}

impl Machine<'_> {
    /// `qgates check --scope project` in `root` against the store: the report, the run's time
    /// and the store's read time from its debug line.
    fn check(&self, root: &Path) -> Result<(Value, Duration, Option<f64>), big_repo::Error> {
        let mut path = std::ffi::OsString::from(&self.bin);
        path.push(":");
        path.push(&self.tools.path);
        let t = Instant::now();
        let out = self
            .tools
            .command(&self.tools.qgates, root)
            .args(["check", "--scope", "project", "--format", "json"])
            .env("PATH", path)
            .env("QGATES_REMOTE_CACHE", &self.store)
            .env("QGATES_LOG", "qgates=debug")
            .env("BENCH_STARTS", &self.starts)
            .env("BENCH_RUFF", &self.tools.ruff)
            .output()?;
        let took = t.elapsed();
        let report: Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("no report ({e}): {}", String::from_utf8_lossy(&out.stderr)))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        let reads = stderr
            .lines()
            .filter_map(|l| l.split(" found in ").nth(1))
            .filter_map(|rest| rest.split(" ms").next()?.trim().parse::<f64>().ok())
            .next_back();
        Ok((report, took, reads))
    }

    fn starts(&self) -> usize {
        std::fs::read_to_string(&self.starts).map_or(0, |s| s.lines().count())
    }
}

pub fn remote_cache(
    tools: &Tools,
    big: &Path,
    tmp: &Path,
    n: usize,
) -> Result<String, big_repo::Error> {
    let redis = Redis::start();
    let bin = tmp.join("bin");
    std::fs::create_dir_all(&bin)?;
    let wrapper = bin.join("ruff");
    std::fs::write(&wrapper, WRAPPER)?;
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))?;
    let machine = Machine {
        tools,
        bin,
        starts: tmp.join("starts.log"),
        store: redis.url(),
    };
    let a = tmp.join("machine-a");
    clone(big, &a)?;
    let (report, filled, _) = machine.check(&a)?;
    let files = report["scope"]["files_checked"].as_u64().unwrap_or(0);
    assert!(files > 50_000, "machine A checked the project: {report}");
    assert_eq!(
        report["warnings"],
        Value::Null,
        "the store took every result"
    );
    assert!(machine.starts() > 0, "machine A ran ruff");
    let entries = redis.cli(&["DBSIZE"]);
    std::fs::remove_dir_all(&a)?;
    let (mut runs, mut reads, mut status) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let b = tmp.join(format!("machine-b{i}"));
        clone(big, &b)?;
        let _ = std::fs::remove_file(&machine.starts);
        let (report, took, read) = machine.check(&b)?;
        assert_eq!(machine.starts(), 0, "a warm run started ruff");
        let gate = &report["gates"][0];
        assert_eq!(gate["cached_files"], gate["files_checked"], "{gate}");
        assert_eq!(report["warnings"], Value::Null, "{report}");
        let read = read.ok_or("no read time in the debug log")?;
        // After qgates' run, which reads the index and writes nothing to it.
        let t = Instant::now();
        big_repo::git(&b, &["status", "--porcelain", "-uall"])?;
        status.push(t.elapsed());
        runs.push(took);
        reads.push(Duration::from_secs_f64(read / 1000.0));
        std::fs::remove_dir_all(&b)?;
    }
    let (run, read, status) = (ms(median(&runs)), ms(median(&reads)), ms(median(&status)));
    let mut s = format!(
        "(d) a fresh clone with the shared cache (Redis, {entries} entries) warm, median of {n}:\n"
    );
    let _ = writeln!(
        s,
        "    machine A filling the store          {:>8.1} ms (once)",
        ms(filled)
    );
    let _ = writeln!(
        s,
        "    machine B: check --scope project     {run:>8.1} ms, 0 tool processes"
    );
    let _ = writeln!(s, "      of which the store's reads         {read:>8.1} ms");
    let _ = writeln!(
        s,
        "    git status --porcelain -uall         {status:>8.1} ms"
    );
    let _ = writeln!(
        s,
        "      check / (1.5 × git status + reads) {:.2}   target ≤ 1: {}",
        run / (1.5 * status + read),
        verdict(run <= 1.5 * status + read)
    );
    Ok(s)
}

/// The report with what differs between machines and runs left out.
fn comparable(mut report: Value) -> Value {
    report["timings"] = Value::Null;
    report["log_dir"] = Value::Null;
    if let Some(gates) = report["gates"].as_array_mut() {
        for gate in gates {
            for key in ["duration_ms", "log"] {
                if let Some(g) = gate.as_object_mut() {
                    g.remove(key);
                }
            }
        }
    }
    report
}

pub fn shards(tools: &Tools, big: &Path, n: usize) -> Result<String, big_repo::Error> {
    let check = |extra: &[&str]| -> Result<(Value, Vec<u8>, Duration), big_repo::Error> {
        let t = Instant::now();
        let out = tools
            .command(&tools.qgates, big)
            .args(["check", "--scope", "project", "--no-cache", "--no-state"])
            .args(["--format", "json"])
            .args(extra)
            .output()?;
        let took = t.elapsed();
        Ok((serde_json::from_slice(&out.stdout)?, out.stdout, took))
    };
    let dir = tempfile::tempdir()?;
    let (mut whole_times, mut shard_times) = (Vec::new(), vec![Vec::new(); 4]);
    let mut counts = [0u64; 4];
    let mut equal = true;
    for _ in 0..n {
        let (whole, _, took) = check(&[])?;
        whole_times.push(took);
        let mut paths = Vec::new();
        for (i, times) in shard_times.iter_mut().enumerate() {
            let (report, bytes, took) = check(&["--shard", &format!("{}/4", i + 1)])?;
            counts[i] = report["scope"]["files_checked"].as_u64().unwrap_or(0);
            times.push(took);
            let path = dir.path().join(format!("shard-{i}.json"));
            std::fs::write(&path, bytes)?;
            paths.push(path);
        }
        let merged = tools
            .command(&tools.qgates, big)
            .args(["merge", "--format", "json"])
            .args(&paths)
            .output()?;
        let merged: Value = serde_json::from_slice(&merged.stdout)?;
        equal &= comparable(merged) == comparable(whole);
    }
    let total: u64 = counts.iter().sum();
    let quarter = total as f64 / 4.0;
    let within = counts
        .iter()
        .all(|&c| (c as f64 - quarter).abs() <= 0.1 * quarter);
    let whole = ms(median(&whole_times));
    let mut s = format!("(e) 4 shards of check --scope project --no-cache, median of {n}:\n");
    let _ = writeln!(
        s,
        "    unsharded                            {whole:>8.1} ms, {total} files"
    );
    for (i, times) in shard_times.iter().enumerate() {
        let t = ms(median(times));
        let _ = writeln!(
            s,
            "    shard {}/4                            {t:>8.1} ms, {} files ({:.2} × the unsharded time)",
            i + 1,
            counts[i],
            t / whole
        );
    }
    let _ = writeln!(
        s,
        "      each shard within 10 % of a quarter: {}; merged report equal to the unsharded: {}",
        verdict(within),
        verdict(equal)
    );
    Ok(s)
}
