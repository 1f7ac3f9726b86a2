//! A detection written out: the embedded default's text, the file `qgates init` writes, and
//! whether each proposed tool is installed.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::rules::PYTHON_DEFAULT;
use super::{Detection, detect_cached};
use crate::core::config::{DEFAULT_CONFIG, presets};
use crate::core::runner::process::resolve_program;

/// The configuration of a workspace without `quality.yaml`: the detected gates, every one
/// optional (a tool that is not installed is skipped, not an error). A Python repository, and
/// one where nothing is detected, get `DEFAULT_CONFIG` itself: its gates only ever check Python
/// files, so it costs nothing where there are none, and it is what qgates always did there.
pub fn embedded_config(root: &Path) -> Cow<'static, str> {
    embedded_text(&detect_cached(root))
}

pub fn embedded_text(detection: &Detection) -> Cow<'static, str> {
    let gates = detection.gates();
    if gates.is_empty() || detection.preset_names() == PYTHON_DEFAULT {
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
    let program = preset
        .gate
        .command
        .as_ref()
        .and_then(|c| c.value.first().cloned())
        .unwrap_or_default();
    let cwd = preset
        .gate
        .cwd
        .as_ref()
        .map_or_else(|| root.to_path_buf(), |c| root.join(c));
    Some(ToolStatus {
        found: resolve_program(&program, root, &cwd),
        program,
        install: preset.about.install.clone(),
    })
}
