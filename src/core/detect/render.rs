//! A detection written out: the embedded default's text, the file `qgates init` writes, and
//! whether each proposed tool is installed.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::rules::PYTHON_DEFAULT;
use super::{Detection, Proposal, detect_cached};
use crate::core::config::{DEFAULT_CONFIG, Trigger, presets};
use crate::core::runner::process::resolve_program;

/// The configuration of a workspace without `quality.yaml`: the detected gates, every one
/// optional (a tool that is not installed is skipped, not an error). A Python repository, and
/// one where nothing is detected, get `DEFAULT_CONFIG` itself: its gates only ever check Python
/// files, so it costs nothing where there are none, and it is what qgates always did there.
///
/// Test suites (`kind: test` or `e2e` presets: pytest, vitest) are left out: they run the
/// project's own code, for minutes, and nobody asked for them by writing a `quality.yaml`;
/// `qgates init` proposes them. So a Python repository with tests keeps the Python default, and
/// what a workspace already trusted runs stays what it was.
pub fn embedded_config(root: &Path) -> Cow<'static, str> {
    embedded_text(&detect_cached(root))
}

pub fn embedded_text(detection: &Detection) -> Cow<'static, str> {
    let gates: Vec<&Proposal> = detection
        .gates()
        .into_iter()
        .filter(|p| !runs_a_suite(p.preset))
        .collect();
    let names: Vec<&str> = gates.iter().map(|p| p.preset).collect();
    if gates.is_empty() || names == PYTHON_DEFAULT {
        return Cow::Borrowed(DEFAULT_CONFIG);
    }
    let mut text = String::from(
        "# qgates' built-in default, detected from the repository (there is no quality.yaml).\n\
         # `qgates init` writes it out with the reasons.\nversion: 1\ngates:\n",
    );
    for p in gates {
        let _ = writeln!(
            text,
            "  {}: {{ preset: {}, optional: true }}",
            p.gate_id(),
            p.preset
        );
    }
    Cow::Owned(text)
}

/// Whether the catalog's `preset` runs a test suite (its kind's default `run_on` leaves out
/// saves, as for `test` and `e2e`).
fn runs_a_suite(preset: &str) -> bool {
    presets::find(preset).is_some_and(|p| {
        let kind = p.gate.kind.unwrap_or_default();
        !kind.default_run_on().contains(&Trigger::Save)
    })
}

/// The `quality.yaml` `qgates init` writes: one line per gate, with its reason as a comment.
/// `None` when nothing was detected.
pub fn init_file(detection: &Detection) -> Option<String> {
    let gates = detection.gates();
    if gates.is_empty() {
        return None;
    }
    let entries: Vec<String> = gates
        .iter()
        .map(|p| format!("{}: {{ preset: {} }}", p.gate_id(), p.preset))
        .collect();
    let width = entries.iter().map(String::len).max().unwrap_or(0);
    let mut text = String::from(
        "# Written by `qgates init` from what it found here; edit freely (`qgates presets` lists the tools it knows).\nversion: 1\ngates:\n",
    );
    for (entry, p) in entries.iter().zip(&gates) {
        let _ = writeln!(text, "  {entry:<width$}  # {}", p.why);
    }
    Some(text)
}

/// Whether a preset's program is installed where a gate would look for it.
#[derive(Debug, Clone)]
pub struct ToolStatus {
    pub program: String,
    /// Where it was found, or why it was not.
    pub found: Result<PathBuf, String>,
    /// How to install it (the preset's `about.install`).
    pub install: String,
}

/// `None` for a preset the catalog does not have.
pub fn tool_status(root: &Path, preset: &str) -> Option<ToolStatus> {
    let preset = presets::find(preset)?;
    let command: &[String] = preset.gate.command.as_ref().map_or(&[], |c| &c.value);
    let cwd = preset
        .gate
        .cwd
        .as_ref()
        .map_or_else(|| root.to_path_buf(), |c| root.join(c));
    let install = preset.about.install.clone();
    Some(match command {
        [python, flag, module, ..] if flag == "-m" && python.starts_with("python") => ToolStatus {
            found: python_module(python, module, root, &cwd),
            program: module.clone(),
            install,
        },
        _ => {
            let program = command.first().cloned().unwrap_or_default();
            ToolStatus {
                found: resolve_program(&program, root, &cwd),
                program,
                install,
            }
        }
    })
}

/// Where the module of a `python -m MODULE` gate is installed for the Python that would run it,
/// found without running anything (a repository's `.venv/bin/python` is its code, and `qgates
/// init` runs none): pip installs a module's command of the same name (`pytest`) beside that
/// Python, in a virtual environment's `bin`; a Python outside one may have it anywhere on PATH.
fn python_module(python: &str, module: &str, root: &Path, cwd: &Path) -> Result<PathBuf, String> {
    let python = resolve_program(python, root, cwd)?;
    let bin = python.parent().unwrap_or(Path::new(""));
    if let Ok(beside) = resolve_program(&bin.join(module).to_string_lossy(), root, cwd) {
        return Ok(beside);
    }
    let in_venv = bin
        .parent()
        .is_some_and(|env| env.join("pyvenv.cfg").is_file());
    if !in_venv && let Ok(elsewhere) = resolve_program(module, root, cwd) {
        return Ok(elsewhere);
    }
    Err(format!(
        "`{module}` is not installed for {} (no `{module}` command beside it)",
        python.display()
    ))
}
