//! Shared helpers for the integration tests: the built binary with the project's pinned tools on
//! PATH, throw-away workspaces, and purpose-made tools.
#![allow(
    dead_code,
    reason = "each test binary and bench uses a different subset of the helpers"
)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

/// The repository's own `.venv/bin` (made by scripts/setup.sh), holding the pinned ruff and mypy.
pub fn tools_bin() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin");
    assert!(
        bin.join("ruff").is_file() && bin.join("mypy").is_file(),
        "ruff and mypy are missing from {}: run scripts/setup.sh first",
        bin.display()
    );
    bin
}

/// PATH with the pinned tools first.
pub fn path_with_tools() -> std::ffi::OsString {
    let mut dirs = vec![tools_bin()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).expect("PATH")
}

/// The repository's `tools/bin` (made by scripts/setup.sh): links to the preset catalog's tools
/// that are not in `.venv/bin` (the npm tools, semgrep, staticcheck).
pub fn catalog_tools_bin() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/bin");
    assert!(
        bin.is_dir(),
        "{} is missing: run scripts/setup.sh first",
        bin.display()
    );
    bin
}

/// PATH with every tool the preset catalog is tested against first: `.venv/bin`, then
/// `tools/bin`, then the inherited PATH (go, gofmt, shfmt, cargo).
pub fn path_with_catalog_tools() -> std::ffi::OsString {
    let mut dirs = vec![tools_bin(), catalog_tools_bin()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).expect("PATH")
}

/// The qgates binary, run in `dir`, with the pinned tools on PATH and no colour.
pub fn qgates(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("qgates").expect("binary");
    cmd.current_dir(dir)
        .env("PATH", path_with_tools())
        .env("NO_COLOR", "1")
        .env_remove("QGATES_LOG");
    cmd
}

/// A trust store outside the workspace in which a person trusted what `root` runs (as
/// `qgates trust --yes` records it, with the pinned tools on PATH); point `QGATES_TRUST_FILE` at
/// the returned path. The folder lives as long as the returned guard.
pub fn trusted(root: &Path) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("trust.json");
    let out = qgates(root)
        .env("QGATES_TRUST_FILE", &store)
        .args(["trust", "--yes", "."])
        .output()
        .expect("qgates trust");
    assert!(
        out.status.success(),
        "qgates trust --yes failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, store)
}

/// A temporary workspace with the given files (path → content).
pub fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, content) in files {
        write(dir.path(), path, content);
    }
    dir
}

pub fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, content).expect("write");
}

/// Writes an executable script (`#!` line included in `body`) at `rel`.
pub fn tool(root: &Path, rel: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    write(root, rel, body);
    let p = root.join(rel);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    p
}

/// A copy of a fixture folder in a fresh temporary folder (tools write caches next to the files).
pub fn fixture_copy(name: &str) -> tempfile::TempDir {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&src, dir.path());
    dir
}

pub fn copy_dir(src: &Path, dst: &Path) {
    for entry in std::fs::read_dir(src).expect("read fixture") {
        let entry = entry.expect("entry");
        let name = entry.file_name();
        let name_str = name.to_string_lossy();
        if [".qgates", ".mypy_cache", ".ruff_cache", "__pycache__"].contains(&name_str.as_ref()) {
            continue;
        }
        let (s, d) = (entry.path(), dst.join(&name));
        if s.is_dir() {
            std::fs::create_dir_all(&d).expect("mkdir");
            copy_dir(&s, &d);
        } else {
            std::fs::copy(&s, &d).expect("copy");
        }
    }
}

/// Runs `qgates check --format json ARGS` in `dir`; returns the exit code and the parsed report.
pub fn check_json(dir: &Path, args: &[&str]) -> (i32, Value) {
    check_json_with(qgates(dir), args)
}

/// `check_json` with a qgates command set up by the caller (e.g. another PATH).
pub fn check_json_with(mut qgates: Command, args: &[&str]) -> (i32, Value) {
    let out = qgates
        .arg("check")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("run qgates");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}):\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

/// A report (or a page of one) with what legitimately differs between two runs of the same
/// check left out: how long things took and the run's log folder (its id is made of the time and
/// the process id); and between a page and the whole report: where the page sits, the order of
/// the violations (a page shows errors first), and the logs of gates that did not error (the
/// folder has them).
/// A report without what the comparison with the reference adds (the command line compares
/// only with `--new-only`).
pub fn without_novelty(mut report: Value) -> Value {
    let obj = report.as_object_mut().unwrap();
    obj.remove("novelty");
    for g in obj["gates"].as_array_mut().unwrap() {
        let violations = g.get_mut("violations").and_then(Value::as_array_mut);
        for v in violations.into_iter().flatten() {
            v.as_object_mut().unwrap().remove("new");
        }
    }
    report
}

pub fn comparable(report: &Value) -> Value {
    let mut r = report.clone();
    let obj = r.as_object_mut().expect("a report is an object");
    for field in [
        "timings",
        "log_dir",
        "shown",
        "total",
        "offset",
        "next_offset",
        "left_out",
        "full_report",
        // What an answer leaves to the whole report (`Report::page`).
        "config",
    ] {
        obj.remove(field);
    }
    for g in obj
        .get_mut("gates")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        let g = g.as_object_mut().expect("a gate is an object");
        g.remove("duration_ms");
        g.remove("log");
        g.remove("cached_files");
        if g.get("status").and_then(Value::as_str) != Some("error") {
            g.remove("exit_code");
        }
        if let Some(Value::Array(violations)) = g.get_mut("violations") {
            for v in violations.iter_mut() {
                let v = v.as_object_mut().expect("a violation is an object");
                v.remove("url");
                if let Some(Value::Object(fix)) = v.get_mut("fix") {
                    fix.remove("title");
                }
            }
            violations.sort_by_key(|v| v.to_string());
        }
    }
    r
}

/// The result of one gate in a report.
pub fn gate<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["gates"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["id"] == id))
        .unwrap_or_else(|| panic!("no gate {id} in {report}"))
}
/// The open inotify instances of a process (`self`, or a pid): a file watch holds one.
pub fn inotify_descriptors(process: &str) -> usize {
    std::fs::read_dir(format!("/proc/{process}/fd"))
        .unwrap()
        .flatten()
        .filter(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|t| t.to_string_lossy().contains("inotify"))
        })
        .count()
}

pub mod edits;
pub mod junit;
pub mod lsp;
pub mod lsp_wire;
pub mod markers;
pub mod mcp;
pub mod places;
pub mod presets;
pub mod real;
pub mod stores;

/// A `git` command in `dir`, isolated from the user's and the system's configuration, with an
/// identity for commits and no signing.
pub fn git_cmd(dir: &Path, args: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new("git");
    cmd.current_dir(dir)
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE");
    cmd
}

/// Runs `git` in `dir` (see [`git_cmd`]) and returns its trimmed stdout; panics with stderr when
/// it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_cmd(dir, args).output().expect("run git");
    assert!(
        out.status.success(),
        "git {args:?} failed in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The one line of `stderr` that reports a problem at `quality.yaml:line:column`.
#[track_caller]
pub fn problem_at(stderr: &str, line: u32, column: u32) -> String {
    let place = format!("quality.yaml:{line}:{column}: ");
    let found: Vec<&str> = stderr.lines().filter(|l| l.contains(&place)).collect();
    assert_eq!(found.len(), 1, "one problem at {place}, in:\n{stderr}");
    found[0].split_once(&place).unwrap().1.to_string()
}
