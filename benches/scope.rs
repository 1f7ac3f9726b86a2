//! Scope resolution speed against `git status`, on a generated repository of 50,000 tracked files
//! with 100 modified, 300 untracked and 20,000 ignored (the target: at most 1.5 × `git status
//! --porcelain -uall`).
//!
//! `cargo bench --bench scope`; `QGATES_BENCH_RUNS` sets the number of timed runs (default 15);
//! `QGATES_BENCH_REPO=<folder>` generates the repository there, or reuses it if it is already there,
//! and keeps it (to profile, or to compare other tools on the same files).
//! Both sides run in the same process, alternating, so a busy machine slows both alike.
#![expect(
    clippy::print_stdout,
    reason = "a benchmark reports its numbers on stdout"
)]

use std::path::Path;
use std::time::{Duration, Instant};

#[path = "common/big_repo.rs"]
mod big_repo;

use big_repo::{TRACKED, git, tracked, write};
use qgates::core::scope::git::Repo;
use qgates::core::scope::{ScopeRequest, resolve};

const MODIFIED: usize = 100;
const UNTRACKED: usize = 300;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runs: usize = std::env::var("QGATES_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let tmp = tempfile::tempdir()?;
    let fresh = std::env::var_os("QGATES_BENCH_REPO")
        .is_none_or(|r| !std::path::Path::new(&r).join(".git").is_dir());
    let started = Instant::now();
    let (root, base) = big_repo::at(tmp.path(), "QGATES_BENCH_REPO", &[])?;
    let root = root.as_path();
    if fresh {
        dirty(root)?;
        println!(
            "generated {TRACKED} tracked, {MODIFIED} modified, {UNTRACKED} untracked, {} ignored files in {:.1?}",
            big_repo::IGNORED,
            started.elapsed()
        );
    }

    // What each side finds must agree, or the timing compares different work.
    let ours = Repo::discover(root)?
        .ok_or("not a repository")?
        .changed_since(Some(&base))?;
    let porcelain = git(root, &["status", "--porcelain", "-uall"])?;
    let theirs = porcelain.lines().count();
    println!(
        "changed_since finds {} files, git status lists {theirs}",
        ours.files.len()
    );
    if ours.files.len() != MODIFIED + UNTRACKED || theirs != MODIFIED + UNTRACKED {
        return Err("unexpected file counts".into());
    }

    let mut scope = Vec::with_capacity(runs);
    let mut scope_only = Vec::with_capacity(runs);
    let mut status = Vec::with_capacity(runs);
    let (mut scope_cpu, mut status_cpu) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    // One untimed run each warms the page cache and lets git refresh its index once.
    for i in 0..=runs {
        let cpu = cpu_time(libc::RUSAGE_SELF);
        let t = Instant::now();
        let repo = Repo::discover(root)?.ok_or("not a repository")?;
        let opened = t.elapsed();
        let t2 = Instant::now();
        let changes = repo.changed_since(Some(&base))?;
        let diffed = t2.elapsed();
        let cpu = cpu_time(libc::RUSAGE_SELF) - cpu;
        std::hint::black_box(changes);

        let git_cpu = cpu_time(libc::RUSAGE_CHILDREN);
        let t = Instant::now();
        std::hint::black_box(git(root, &["status", "--porcelain", "-uall"])?);
        let cli = t.elapsed();
        let git_cpu = cpu_time(libc::RUSAGE_CHILDREN) - git_cpu;
        if i > 0 {
            scope.push(opened + diffed);
            scope_only.push(diffed);
            status.push(cli);
            scope_cpu.push(cpu);
            status_cpu.push(git_cpu);
        }
    }
    let (ours, diff_only, cli) = (median(scope), median(scope_only), median(status));
    let (ours_cpu, cli_cpu) = (median(scope_cpu), median(status_cpu));
    println!("median of {runs} runs:");
    println!("  Repo::discover + changed_since(Some(HEAD))  {ours:>10.2?}");
    println!("  changed_since alone                          {diff_only:>10.2?}");
    println!("  git status --porcelain -uall                 {cli:>10.2?}");
    println!(
        "  ratio (discover + changed_since) / git status  {:.2} (target ≤ 1.50)",
        ours.as_secs_f64() / cli.as_secs_f64()
    );
    // CPU time (user + system, all threads) is steadier than wall time on a shared machine.
    println!(
        "  CPU time: ours {ours_cpu:.2?}, git status {cli_cpu:.2?} ({:.2} ×)",
        ours_cpu.as_secs_f64() / cli_cpu.as_secs_f64()
    );
    followed(root, runs * 4)?;
    small_repository(runs * 10)?;
    Ok(())
}

/// A save in the language server: one tracked file edited and reported to the folder's
/// `ScopeTracker` (with an ignored file the watcher reported), which brings the `auto` scope up to date from that path alone, against
/// resolving the scope in full (what every save cost before the tracker).
fn followed(root: &Path, runs: usize) -> Result<(), Box<dyn std::error::Error>> {
    use qgates::core::config::{ConfigSource, DEFAULT_CONFIG, parse_config};
    use qgates::core::scope::tracker::ScopeTracker;
    let config = parse_config(DEFAULT_CONFIG, ConfigSource::Embedded)?;
    let tracker = ScopeTracker::new(root.to_path_buf(), true);
    tracker.current(&config)?;
    let saved = tracked(TRACKED / 2 + 1);
    let (mut ours, mut full) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    let (mut ours_cpu, mut full_cpu) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for i in 0..=runs {
        // Every other save brings the file back to its committed content: it leaves the scope.
        let value = if i % 2 == 0 { i + 7 } else { TRACKED / 2 + 1 };
        write(
            root,
            &saved,
            &format!("value_{} = {value}\n", TRACKED / 2 + 1),
        )?;
        // With the save comes what an editor's watcher reports of the run before it: a file
        // written in an ignored folder (qgates' logs, a tool's cache), far from the saved one.
        tracker.changed([
            root.join(&saved).as_path(),
            root.join("ignored/d000/cache_0.bin").as_path(),
        ]);
        let cpu = cpu_time(libc::RUSAGE_SELF);
        let t = Instant::now();
        let kept = tracker.current(&config)?;
        let d = t.elapsed();
        let cpu = cpu_time(libc::RUSAGE_SELF) - cpu;
        let full_cpu_0 = cpu_time(libc::RUSAGE_SELF);
        let t = Instant::now();
        let fresh = resolve(root, &config, &ScopeRequest::Auto)?;
        let f = t.elapsed();
        let fcpu = cpu_time(libc::RUSAGE_SELF) - full_cpu_0;
        if kept != fresh {
            return Err(format!("save {i}: the followed scope differs from a fresh one").into());
        }
        if kept.files.contains(&saved) != (i % 2 == 0) {
            return Err(format!(
                "save {i}: {saved} in scope: {}",
                kept.files.contains(&saved)
            )
            .into());
        }
        if i > 0 {
            ours.push(d);
            full.push(f);
            ours_cpu.push(cpu);
            full_cpu.push(fcpu);
        }
    }
    let (ours, full) = (median(ours), median(full));
    let (ours_cpu, full_cpu) = (median(ours_cpu), median(full_cpu));
    println!("a save in the language server (one file edited and reported), median of {runs}:");
    println!("  ScopeTracker::current                        {ours:>10.2?} (CPU {ours_cpu:.2?})");
    println!("  scope::resolve(Auto) in full                 {full:>10.2?} (CPU {full_cpu:.2?})");
    Ok(())
}

/// The same comparison on a repository of 20 files (one modified, one untracked): the size of a
/// language server's every save in a small project, where thread hand-offs, not file system
/// work, decide the time.
fn small_repository(runs: usize) -> Result<(), Box<dyn std::error::Error>> {
    let tmp = tempfile::tempdir()?;
    let root = tmp.path();
    git(root, &["init", "-q", "-b", "main"])?;
    git(root, &["config", "user.name", "Bench"])?;
    git(root, &["config", "user.email", "bench@example.com"])?;
    for i in 0..20 {
        write(root, &format!("pkg/m{i:02}.py"), &format!("v = {i}\n"))?;
    }
    std::thread::sleep(Duration::from_millis(1100));
    git(root, &["add", "-A"])?;
    git(root, &["commit", "-q", "-m", "initial"])?;
    let base = git(root, &["rev-parse", "HEAD"])?.trim().to_owned();
    write(root, "pkg/m03.py", "v = 'changed'\n")?;
    write(root, "pkg/new.py", "n = 1\n")?;
    let found = Repo::discover(root)?
        .ok_or("not a repository")?
        .changed_since(Some(&base))?
        .files;
    if found != ["pkg/m03.py", "pkg/new.py"] {
        return Err(format!("small repository: unexpected files {found:?}").into());
    }
    let (mut ours, mut theirs) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for i in 0..=runs {
        let t = Instant::now();
        let repo = Repo::discover(root)?.ok_or("not a repository")?;
        std::hint::black_box(repo.changed_since(Some(&base))?);
        let d = t.elapsed();
        let t = Instant::now();
        std::hint::black_box(git(root, &["status", "--porcelain", "-uall"])?);
        if i > 0 {
            ours.push(d);
            theirs.push(t.elapsed());
        }
    }
    // The whole `auto` scope as a language server resolves it on every save: the state file
    // (baseline = HEAD, as after a green run), discovery, ancestry and the status.
    std::fs::write(
        root.join("quality.yaml"),
        qgates::core::config::DEFAULT_CONFIG,
    )?;
    let config = qgates::core::config::load_for_workspace(root, None)?;
    qgates::core::scope::baseline::StateStore::new(root).update(|s| {
        s.branches.insert(
            "main".into(),
            qgates::core::scope::baseline::BranchState {
                baseline_sha: Some(base.clone()),
                failed_files: Vec::new(),
            },
        );
    })?;
    let mut auto = Vec::with_capacity(runs);
    for i in 0..=runs {
        let t = Instant::now();
        let scope = resolve(root, &config, &ScopeRequest::Auto)?;
        let d = t.elapsed();
        let python: Vec<&String> = scope.files.iter().filter(|f| f.ends_with(".py")).collect();
        if i == 0 && python != ["pkg/m03.py", "pkg/new.py"] {
            return Err(format!("small repository: auto scope {:?}", scope.files).into());
        }
        if i > 0 {
            auto.push(d);
        }
    }
    let (ours, theirs, auto) = (median(ours), median(theirs), median(auto));
    println!("small repository (20 files, 1 modified, 1 untracked), median of {runs} runs:");
    println!("  Repo::discover + changed_since(Some(HEAD))  {ours:>10.2?}");
    println!("  scope::resolve(Auto), state file included    {auto:>10.2?}");
    println!("  git status --porcelain -uall (a process)     {theirs:>10.2?}");
    Ok(())
}

/// User plus system time of this process (`RUSAGE_SELF`) or of its finished children.
fn cpu_time(who: libc::c_int) -> Duration {
    // SAFETY: getrusage fills the struct it is given; a zeroed rusage is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `who` is one of the two constants.
    unsafe { libc::getrusage(who, &mut usage) };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// The changes the comparison finds: modified files spread over the tree, as real edits are, and
/// untracked ones.
fn dirty(root: &Path) -> Result<(), Box<dyn std::error::Error>> {
    for i in 0..MODIFIED {
        let n = i * (TRACKED / MODIFIED);
        write(root, &tracked(n), &format!("value_{n} = {}\n", n + 1))?;
    }
    for i in 0..UNTRACKED {
        write(root, &format!("d{:03}/new_{i}.py", i % 500), "new = 1\n")?;
    }
    Ok(())
}
