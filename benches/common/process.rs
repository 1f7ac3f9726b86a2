//! What the process-level benchmarks (`check`, `lsp`) share: where the tools are, and timing.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The number of timed runs: `QGATES_BENCH_RUNS` (at least 1), else `default`.
pub fn runs_from_env(default: usize) -> usize {
    std::env::var("QGATES_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
        .max(1)
}

/// The parts to run, one letter each: `QGATES_BENCH_ONLY` (e.g. `ad`), else every one of `all`.
#[allow(dead_code, reason = "benches of one part do not use it")]
pub fn parts_from_env(all: &str) -> String {
    std::env::var("QGATES_BENCH_ONLY").unwrap_or_else(|_| all.to_string())
}

/// Where the programs are, and the PATH every child gets (so qgates finds the same tools).
pub struct Tools {
    pub qgates: PathBuf,
    pub ruff: PathBuf,
    pub mypy: PathBuf,
    pub path: OsString,
}

impl Tools {
    pub fn find() -> Tools {
        let mut dirs: Vec<PathBuf> = Vec::new();
        // Folders, as in PATH: the venv's and tools/bin of another checkout, say.
        let given: Vec<PathBuf> = std::env::var_os("QGATES_BENCH_TOOLS")
            .map(|d| std::env::split_paths(&d).collect())
            .unwrap_or_default();
        dirs.extend(given.iter().cloned());
        dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin"));
        let system = std::env::var_os("PATH").unwrap_or_default();
        dirs.extend(std::env::split_paths(&system));
        let find = |name: &str| {
            dirs.iter()
                .map(|d| d.join(name))
                .find(|p| p.is_file())
                .unwrap_or_else(|| {
                    panic!("`{name}` was not found: run scripts/setup.sh, or set QGATES_BENCH_TOOLS to a folder holding ruff and mypy")
                })
        };
        let ruff = find("ruff");
        let mypy = find("mypy");
        // tools/bin: the language servers the warm presets keep (scripts/setup.sh links them).
        let linked = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/bin");
        let tool_dirs = [ruff.parent(), mypy.parent(), Some(linked.as_path())]
            .into_iter()
            .flatten()
            .chain(given.iter().map(PathBuf::as_path));
        let path = std::env::join_paths(
            tool_dirs
                .map(Path::to_path_buf)
                .chain(std::env::split_paths(&system)),
        )
        .expect("PATH entries join");
        Tools {
            // `QGATES_BENCH_QGATES` runs another build (an older one, say) in this harness.
            qgates: std::env::var_os("QGATES_BENCH_QGATES").map_or_else(
                || PathBuf::from(env!("CARGO_BIN_EXE_qgates")),
                PathBuf::from,
            ),
            ruff,
            mypy,
            path,
        }
    }

    /// The default gates' own argv (as in the embedded configuration), for running them by hand
    /// over the same root-relative files: (label, program, arguments before the files).
    #[allow(
        dead_code,
        reason = "the `check` bench uses it, the `lsp` bench does not"
    )]
    pub fn default_gates(&self) -> [(&'static str, &Path, &'static [&'static str]); 3] {
        [
            (
                "ruff format --check --diff",
                &self.ruff,
                &["format", "--check", "--diff"],
            ),
            (
                "ruff check --output-format json",
                &self.ruff,
                &["check", "--output-format", "json", "--no-fix"],
            ),
            (
                "mypy --output json",
                &self.mypy,
                // As the default gate runs it: mypy keeps one cache per parser, so a run with
                // the other one would find the cache cold every time.
                &[
                    "--no-native-parser",
                    "--output",
                    "json",
                    "--no-error-summary",
                    "--hide-error-context",
                ],
            ),
        ]
    }

    pub fn command(&self, program: &Path, root: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(root)
            .env("PATH", &self.path)
            .env_remove("QGATES_LOG")
            .stdin(Stdio::null());
        cmd
    }
}

/// Runs a command to its end, its output captured (as a script would), and times it.
pub fn timed(cmd: &mut Command) -> (Duration, Output) {
    let start = Instant::now();
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    (start.elapsed(), out)
}

pub fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    }
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}
