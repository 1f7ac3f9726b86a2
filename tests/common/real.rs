//! Shared by the tests against public repositories (`tests/real_repositories*.rs`): a clone of a
//! `fixtures/real/` repository, qgates and the tools run as the repository runs them, and their
//! findings as `(file, line, column in characters from 1, code)`.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::{check_json_with, gate, git, path_with_catalog_tools, qgates};

pub type Place = (String, u64, u64, String);

/// No Go module is fetched: a test that would reach the module proxy fails here rather than
/// passing on what the network gave it.
const GOPROXY: &str = "off";

/// Runs `qgates init` with the catalog's tools (it writes quality.yaml): the text it wrote, and
/// the presets of its gates.
pub fn init(root: &Path) -> (String, BTreeSet<String>) {
    let out = qgates(root)
        .env("PATH", path_with_catalog_tools())
        .arg("init")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_to_string(root.join("quality.yaml")).unwrap();
    let config: Value = serde_saphyr::from_str(&written).unwrap();
    let presets = (config["gates"].as_object().unwrap().values())
        .filter_map(|g| g["preset"].as_str().map(str::to_string))
        .collect();
    (written, presets)
}

/// `qgates check --format json ARGS` with the catalog's tools; the run must have ended 0 or 1.
pub fn check(dir: &Path, args: &[&str]) -> Value {
    let mut cmd = qgates(dir);
    cmd.env("PATH", path_with_catalog_tools())
        .env("GOPROXY", GOPROXY);
    let (code, report) = check_json_with(cmd, args);
    assert!(code == 0 || code == 1, "exit {code}: {report}");
    report
}

/// A gate's findings; the gate must have run.
pub fn found(report: &Value, id: &str) -> BTreeSet<Place> {
    let g = gate(report, id);
    assert!(
        g["status"] == "passed" || g["status"] == "failed",
        "{id} did not run: {g}"
    );
    g["violations"]
        .as_array()
        .map(|v| v.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|v| {
            (
                v["file"].as_str().unwrap_or_default().to_string(),
                v["line"].as_u64().unwrap_or(0),
                v["column"].as_u64().unwrap_or(0),
                v["code"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The files of a gate's findings (a formatter's).
pub fn found_files(report: &Value, id: &str) -> BTreeSet<String> {
    found(report, id).into_iter().map(|p| p.0).collect()
}

/// A tool run in `dir` as the repository runs it; its stdout and its stderr.
pub fn own(dir: &Path, argv: &[&str]) -> (String, String) {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .env("PATH", path_with_catalog_tools())
        .env("NO_COLOR", "1")
        .env("GOPROXY", GOPROXY)
        .output()
        .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A column counted in `unit` (`byte`, `utf16`) from `base` (0 or 1) on a line of a file, in
/// characters from 1.
pub fn chars(root: &Path, file: &str, line: u64, column: u64, unit: &str, base: u64) -> u64 {
    let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
    let Some(text) = text.lines().nth(line.saturating_sub(1) as usize) else {
        return column + 1 - base;
    };
    let want = column - base;
    let (mut units, mut n) = (0u64, 0u64);
    for c in text.chars() {
        if units >= want {
            break;
        }
        units += match unit {
            "byte" => c.len_utf8() as u64,
            _ => c.len_utf16() as u64,
        };
        n += 1;
    }
    n + 1
}

/// A path a tool printed (absolute, or relative with `./`), relative to `root`.
pub fn relative(root: &Path, path: &str) -> String {
    let p = Path::new(path);
    let canon = root.canonicalize().unwrap();
    p.strip_prefix(&canon)
        .or_else(|_| p.strip_prefix(root))
        .map(|r| r.to_string_lossy().into_owned())
        .unwrap_or_else(|_| path.trim_start_matches("./").to_string())
}

/// The repository at `dir` committed in a fresh git repository, as a clone has it.
pub fn clone_of(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A", "-f"]);
    git(dir, &["commit", "-qm", "as published"]);
}

/// A clone of `fixtures/real/<name>` in a fresh temporary folder.
pub fn clone_of_fixture(name: &str) -> tempfile::TempDir {
    // `cp -a`: links are kept as links (the FastAPI template's point into a `.venv` it does not
    // ship).
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/real")
        .join(name)
        .join(".");
    let status = Command::new("cp")
        .arg("-a")
        .arg(&src)
        .arg(tmp.path())
        .status()
        .expect("cp");
    assert!(status.success());
    clone_of(tmp.path());
    tmp
}
