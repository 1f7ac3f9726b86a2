//! The runs a preset test makes: copies of the fixture as git repositories, `qgates check` on
//! them (this same program, as a user runs it), and the tool itself without qgates.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::core::api::tool_text;

use super::fixture::Fixture;

/// The gate's id in the copies' configuration.
pub const GATE: &str = "preset";

/// The preset under test: how a configuration names it, and its gate as written.
pub struct Subject {
    /// `preset:` in the copies' configuration: a catalog name, or the copy of the file.
    pub preset_ref: String,
    /// A preset file's text, copied into each project as `.qgates/preset-under-test.yaml`.
    pub file_text: Option<String>,
    /// The preset's `gate`.
    pub gate: Value,
}

/// Where a local preset file is put in each copy (the workspace root is its base).
pub const COPIED_PRESET: &str = ".qgates/preset-under-test.yaml";

/// A copy of the fixture without `expected.yaml` and without `leave_out`.
fn copy_fixture(fixture: &Fixture, leave_out: &[String]) -> Result<tempfile::TempDir, String> {
    let dir = tempfile::Builder::new()
        .prefix("qgates-preset-test-")
        .tempdir()
        .map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    for rel in fixture.files() {
        if leave_out.contains(&rel) {
            continue;
        }
        let to = dir.path().join(&rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::copy(fixture.dir.join(&rel), &to).map_err(|e| format!("{rel}: {e}"))?;
    }
    Ok(dir)
}

/// A copy of the fixture as a git repository, as a project is: some tools find the project's
/// root by its `.git` and print paths from there (djLint).
pub fn repository_of(fixture: &Fixture, leave_out: &[String]) -> Result<tempfile::TempDir, String> {
    let dir = copy_fixture(fixture, leave_out)?;
    git(dir.path(), &["init", "-q"])?;
    git(dir.path(), &["add", "-A"])?;
    git(dir.path(), &["commit", "-q", "-m", "fixture"])?;
    Ok(dir)
}

/// A copy of the fixture as a git repository whose configuration runs the preset alone. The
/// configuration is `.qgates/quality.yaml`, which no tool checks (yamllint would check a
/// `quality.yaml` beside the fixture's files).
pub fn project(
    subject: &Subject,
    fixture: &Fixture,
    leave_out: &[String],
) -> Result<tempfile::TempDir, String> {
    let dir = repository_of(fixture, leave_out)?;
    // The test's configuration is no file of the fixture: tools that lint every file git does
    // not ignore (REUSE) leave it alone, as they do in the tool's own run.
    let exclude = dir.path().join(".git/info/exclude");
    std::fs::write(&exclude, ".qgates/\n").map_err(|e| format!("{}: {e}", exclude.display()))?;
    let state = dir.path().join(".qgates");
    std::fs::create_dir_all(&state).map_err(|e| format!("{}: {e}", state.display()))?;
    if let Some(text) = &subject.file_text {
        std::fs::write(dir.path().join(COPIED_PRESET), text).map_err(|e| e.to_string())?;
    }
    let config = format!(
        "version: 1\ngates:\n  {GATE}: {{ preset: {:?} }}\n",
        subject.preset_ref
    );
    std::fs::write(state.join("quality.yaml"), config).map_err(|e| e.to_string())?;
    Ok(dir)
}

fn git(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=qgates",
            "-c",
            "user.email=qgates@example.invalid",
        ])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .map_err(|e| {
            format!("git could not run ({e}); the test makes git repositories: install git")
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Runs `qgates check ARGS --format json --no-state` in `dir`; returns the gate's result and
/// what to show when it is not as expected.
pub fn check(dir: &Path, args: &[&str]) -> Result<(Value, String), String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot find qgates itself: {e}"))?;
    let out = Command::new(me)
        .current_dir(dir)
        .arg("check")
        .args(args)
        .args(["--format", "json", "--no-state"])
        .output()
        .map_err(|e| format!("qgates check could not run: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(stdout.trim()).map_err(|e| {
        format!(
            "qgates check printed no JSON report ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    let gate = (report["gates"].as_array())
        .and_then(|g| g.iter().find(|g| g["id"] == GATE))
        .cloned()
        .ok_or_else(|| format!("no gate `{GATE}` in the report: {report}"))?;
    let mut shown = serde_json::to_string_pretty(&gate).unwrap_or_default();
    for stream in ["stdout", "stderr"] {
        if let Some(log) = gate["log"][stream].as_str() {
            let text = std::fs::read_to_string(dir.join(log)).unwrap_or_default();
            shown.push_str(&format!("\n--- the tool's {stream}:\n{}", clip(&text)));
        }
    }
    Ok((gate, shown))
}

/// The start of a long output (a failure shows enough to see what the tool said).
pub fn clip(text: &str) -> String {
    const MAX: usize = 4000;
    match text.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}\n[… {} more bytes]", &text[..i], text.len() - i),
        None => text.to_string(),
    }
}

/// Runs argv in `dir` with the gate's `env`; returns the exit code and stdout, a newline, stderr.
pub fn run_tool(gate: &Value, dir: &Path, argv: &[String]) -> Result<(i32, String), String> {
    let (program, args) = argv.split_first().ok_or("the preset's command is empty")?;
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(dir);
    for (k, v) in gate["env"].as_object().into_iter().flatten() {
        cmd.env(k, v.as_str().unwrap_or_default());
    }
    let out = cmd
        .output()
        .map_err(|e| format!("`{}` could not run: {e}", argv.join(" ")))?;
    // As qgates reads it: tools colour their output when they see `CI` in the environment, and
    // `tool_says` pins the words, not the colours.
    let text = format!("{}\n{}", tool_text(&out.stdout), tool_text(&out.stderr));
    Ok((out.status.code().unwrap_or(-1), text))
}
