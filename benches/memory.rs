//! Peak memory of parsing 100,000 violations, against the size of the tool's output.
//! Target: peak ≤ 4 × the output.
//!
//! Two measurements for each output (100,000 ruff JSON violations with the default `ruff_lint`
//! gate; 100,000 lines of mypy text with a `text_violations` gate):
//! - the real command: `qgates parse GATE FILE --exit-code 1` as a child, stdout to /dev/null;
//!   its peak resident set size comes from `wait4`, which reports that one child's rusage (what
//!   `getrusage(RUSAGE_CHILDREN)` gives for a process with a single child, without folding in
//!   the children measured before it). This includes the process itself (binary, runtime), the
//!   output (read whole), the parse and the printing of the violations as JSON.
//! - in process: the output's size plus the most heap bytes `parse_output` holds on top of it,
//!   counted by a global allocator: what parsing an output held whole costs, without the CLI
//!   around it.
//!
//! Also the RSS of the same command over an empty output, as the floor the process costs anyway.
//!
//! The children are measured before this process holds anything large, and the outputs are
//! written by a helper run of this benchmark: Linux starts a child on its parent's memory (vfork)
//! and carries the parent's peak RSS into the child's `ru_maxrss` at `exec`, so a child spawned
//! after generating or parsing 66 MiB of output would report at least that much itself.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use qgates::core::config::{ConfigSource, parse_config};
use qgates::core::parse::{ParseContext, ToolOutput, parse_output};

const N: usize = 100_000;

/// The system allocator, counting the bytes held now and the most held since the last reset.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn note_alloc(size: usize) {
    let now = HELD.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; only counters are updated around it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on to `System`.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note_alloc(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note_alloc(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) };
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            HELD.fetch_sub(layout.size(), Ordering::Relaxed);
            note_alloc(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The output's size plus the most heap `parse_output` held on top of what was held before it:
/// the peak of a process that holds nothing but the output and parses it.
fn in_process_peak(config_text: &str, gate: &str, stdout: &[u8]) -> (u64, usize) {
    let config = parse_config(config_text, ConfigSource::Embedded).expect("config loads");
    let gate = config.gate(gate).expect("gate is active");
    let root = Path::new(common::FAKE_ROOT);
    let ctx = ParseContext {
        gate,
        root,
        cwd: root,
        log_hint: "bench",
        diff: None,
    };
    let before = HELD.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let parsed = parse_output(
        &ctx,
        ToolOutput {
            stdout,
            stderr: b"",
            exit_code: Some(1),
        },
    )
    .unwrap_or_else(|e| panic!("{} output did not parse: {e}", gate.id));
    let peak = (PEAK.load(Ordering::Relaxed) - before + stdout.len()) as u64;
    (peak, parsed.violations.len())
}

/// Runs `qgates parse` as a child and returns its peak RSS in bytes.
#[expect(
    clippy::zombie_processes,
    reason = "the child is reaped by libc::wait4, which also returns its rusage"
)]
fn child_peak_rss(qgates: &Path, config: &Path, gate: &str, output: &Path) -> u64 {
    let child = Command::new(qgates)
        .args(["parse", gate])
        .arg(output)
        .args(["--exit-code", "1", "--root", common::FAKE_ROOT, "--config"])
        .arg(config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", qgates.display()));
    let pid = libc::pid_t::try_from(child.id()).expect("a pid fits pid_t");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet waited for; the pointers are to live locals.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(
        reaped,
        pid,
        "wait4 failed: {}",
        std::io::Error::last_os_error()
    );
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "qgates parse {gate} failed (wait status {status})"
    );
    let max_rss = u64::try_from(usage.ru_maxrss).expect("ru_maxrss is not negative");
    // Linux reports KiB; macOS reports bytes.
    if cfg!(target_os = "macos") {
        max_rss
    } else {
        max_rss * 1024
    }
}

/// Set on the helper run that writes the outputs into the folder it names.
const WRITE_OUTPUTS: &str = "QGATES_MEMORY_BENCH_WRITE_TO";

/// The measured outputs: what they are, the gate that reads them, their file name.
const CASES: [(&str, &str, &str); 2] = [
    (
        "ruff JSON, 100,000 violations",
        "ruff_lint",
        "ruff_lint.out",
    ),
    ("mypy text, 100,000 lines", "mypy_text", "mypy_text.out"),
];

fn generate(gate: &str) -> String {
    match gate {
        "ruff_lint" => common::ruff_json(N),
        _ => common::mypy_text(N),
    }
}

fn main() {
    if let Some(dir) = std::env::var_os(WRITE_OUTPUTS) {
        for (_, gate, file) in CASES {
            std::fs::write(Path::new(&dir).join(file), generate(gate)).expect("write the output");
        }
        return;
    }
    let qgates = PathBuf::from(env!("CARGO_BIN_EXE_qgates"));
    let dir = tempfile::tempdir().expect("a temporary folder");
    let helper = Command::new(std::env::current_exe().expect("the benchmark's own path"))
        .env(WRITE_OUTPUTS, dir.path())
        .status()
        .expect("run the output writer");
    assert!(helper.success(), "writing the outputs failed: {helper}");
    let config_text = common::config_with_text_gate();
    let config = dir.path().join("quality.yaml");
    std::fs::write(&config, &config_text).expect("write quality.yaml");

    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "[]\n").expect("write the empty output");
    let floor = child_peak_rss(&qgates, &config, "ruff_lint", &empty);

    let mut report = String::new();
    let _ = writeln!(
        report,
        "qgates parse over an empty output: peak RSS {:.1} MiB (the process floor)\n",
        mib(floor)
    );
    // Every child first, while this process is still small (see the top of the file).
    let rss: Vec<u64> = CASES
        .iter()
        .map(|(_, gate, file)| child_peak_rss(&qgates, &config, gate, &dir.path().join(file)))
        .collect();
    for ((what, gate, file), rss) in CASES.into_iter().zip(rss) {
        let output = std::fs::read(dir.path().join(file)).expect("read the output");
        let size = output.len() as u64;
        let (heap, parsed) = in_process_peak(&config_text, gate, &output);
        assert_eq!(parsed, N, "{gate}: {parsed} of {N} violations parsed");
        let ratio = rss as f64 / size as f64;
        let _ = writeln!(
            report,
            "{what} ({gate}): output {:.1} MiB\n    qgates parse peak RSS {:.1} MiB = {:.2} × output   target ≤ 4: {}\n    without the process floor: {:.2} × output\n    in process, output + parse_output's peak heap {:.1} MiB = {:.2} × output\n",
            mib(size),
            mib(rss),
            ratio,
            if ratio <= 4.0 { "met" } else { "NOT met" },
            rss.saturating_sub(floor) as f64 / size as f64,
            mib(heap),
            heap as f64 / size as f64,
        );
        drop(output);
    }
    println!("{report}");
}
