//! A detection written out: the embedded default's text, the file `qgates init` writes, and
//! whether each proposed tool is installed.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::install_advice::{Advice, install_advice};
use super::rules::PYTHON_DEFAULT;
use super::{Detection, Proposal, detect_cached, one_line};
use crate::core::config::{DEFAULT_CONFIG, Trigger, presets};
use crate::core::runner::process::resolve_program;

/// The configuration of a workspace without `quality.yaml`: the detected gates, every one
/// optional (a tool that is not installed is skipped). A plain Python repository, and one where
/// nothing is detected, get `DEFAULT_CONFIG` itself (its gates check Python files only).
///
/// Test suites (pytest, vitest) are left out: they run the project's own code, for minutes, and
/// nobody asked for them; `qgates init` proposes them.
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
    let plain = gates
        .iter()
        .all(|p| p.dir.is_empty() && p.tuning.is_empty());
    if gates.is_empty() || (names == PYTHON_DEFAULT && plain) {
        return Cow::Borrowed(DEFAULT_CONFIG);
    }
    let mut text = String::from(
        "# qgates' built-in default, detected from the repository (there is no quality.yaml).\n\
         # `qgates init` writes it out with the reasons.\nversion: 1\ngates:\n",
    );
    for p in gates {
        text.push_str(&gate_yaml(p, true, None));
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

/// The `quality.yaml` `qgates init` writes: one gate a line, with its reason as a comment, or a
/// block for a gate with more to say. `None` when nothing was detected.
pub fn init_file(detection: &Detection) -> Option<String> {
    let gates = detection.gates();
    if gates.is_empty() {
        return None;
    }
    let mut text = String::from(
        "# Written by `qgates init` from what it found here; edit freely (`qgates presets` lists the tools it knows).\nversion: 1\ngates:\n",
    );
    for p in gates {
        text.push_str(&gate_yaml(p, false, Some(&p.why)));
    }
    Some(text)
}

/// Prettier's default `printWidth`, past which it breaks a flow mapping or sequence (a comment
/// after it does not count): `qgates init` writes YAML as Prettier would.
const WIDTH: usize = 80;

/// One gate: `  id: { preset: P, cwd: D } # why` when that fits, else a block.
fn gate_yaml(p: &Proposal, optional: bool, why: Option<&str>) -> String {
    let id = p.gate_id();
    let mut keys = vec![("preset", p.preset.to_string())];
    if !p.dir.is_empty() {
        keys.push(("cwd", scalar(&p.dir)));
    }
    if optional {
        keys.push(("optional", "true".to_string()));
    }
    let comment = why.map_or_else(String::new, |w| format!(" # {w}"));
    let pairs: Vec<String> = keys.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    let line = format!("  {id}: {{ {} }}", pairs.join(", "));
    if p.tuning.is_empty() && line.len() <= WIDTH {
        return format!("{line}{comment}\n");
    }
    let mut out = format!("  {id}:{comment}\n");
    for (k, v) in keys {
        let _ = writeln!(out, "    {k}: {v}");
    }
    for note in &p.tuning.comments {
        let _ = writeln!(out, "    # {}", one_line(note));
    }
    if !p.tuning.args.is_empty() {
        out.push_str(&tuned_commands(p.preset, &p.tuning.args));
    }
    let globs = [
        ("include_globs", &p.tuning.include_globs),
        ("exclude_globs", &p.tuning.exclude_globs),
    ];
    if globs.iter().any(|(_, g)| !g.is_empty()) {
        out.push_str("    scope:\n");
        for (key, list_of) in globs.into_iter().filter(|(_, g)| !g.is_empty()) {
            let quoted: Vec<String> = list_of.iter().map(|g| quote(g)).collect();
            out.push_str(&list("      ", key, &quoted));
        }
    }
    out
}

/// The preset's `command` with the carried arguments, and its `fix` with them too when the
/// fixer is the same program: the arguments name the tool's configuration (`--config`,
/// djLint's `--profile`), and a fix made without it would undo what the check asks for.
fn tuned_commands(preset: &str, args: &[String]) -> String {
    let gate = presets::find(preset).map(|p| &p.gate);
    let mut command: Vec<String> = (gate.and_then(|g| g.command.as_ref()))
        .map(|c| c.value.clone())
        .unwrap_or_default();
    command.extend(args.iter().cloned());
    let words = |c: &[String]| -> Vec<String> { c.iter().map(|w| scalar(w)).collect() };
    let mut out = list("    ", "command", &words(&command));
    let Some(fix) = gate
        .and_then(|g| g.fix.as_ref())
        .filter(|f| f.command.value.first() == command.first())
    else {
        return out;
    };
    // Options go before a trailing `-` (stdin), which some parsers take as the end of them.
    let mut fixer = fix.command.value.clone();
    let at = fixer.len() - usize::from(fixer.last().is_some_and(|w| w == "-"));
    fixer.splice(at..at, args.iter().cloned());
    out.push_str("    fix:\n");
    out.push_str(&list("      ", "command", &words(&fixer)));
    if let Some(title) = &fix.title {
        let _ = writeln!(out, "      title: {}", scalar(title));
    }
    if let Some(codes) = &fix.exit_codes_ok {
        let codes: Vec<String> = codes.iter().map(i32::to_string).collect();
        out.push_str(&list("      ", "exit_codes_ok", &codes));
    }
    out
}

/// `key: [a, b]` when it fits in `WIDTH`, else a block sequence.
fn list(indent: &str, key: &str, items: &[String]) -> String {
    let flow = format!("{indent}{key}: [{}]\n", items.join(", "));
    if flow.len() <= WIDTH + 1 {
        return flow;
    }
    let mut out = format!("{indent}{key}:\n");
    for item in items {
        let _ = writeln!(out, "{indent}  - {item}");
    }
    out
}

/// A string as a YAML scalar: plain when nothing in it means anything to YAML (a path, an
/// option), else double-quoted.
fn scalar(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_./=+-".contains(c);
    let starts_well = s.starts_with(|c: char| c.is_ascii_alphabetic() || "_./".contains(c))
        || s.starts_with("--")
        || (s.starts_with('-') && s[1..].starts_with(|c: char| c.is_ascii_alphabetic()));
    let reserved = ["true", "false", "null", "yes", "no", "on", "off", "y", "n"];
    if s.chars().all(safe) && starts_well && !reserved.contains(&s.to_ascii_lowercase().as_str()) {
        s.to_string()
    } else {
        quote(s)
    }
}

/// A double-quoted YAML scalar (a JSON string is one).
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// Whether a preset's program is installed where a gate would look for it.
#[derive(Debug, Clone)]
pub struct ToolStatus {
    pub program: String,
    /// Where it was found, or why it was not.
    pub found: Result<PathBuf, String>,
    /// How to install it, in the subproject's package manager.
    pub install: Advice,
}

/// `None` for a preset the catalog does not have.
pub fn tool_status(root: &Path, proposal: &Proposal) -> Option<ToolStatus> {
    let preset = presets::find(proposal.preset)?;
    let command: &[String] = preset.gate.command.as_ref().map_or(&[], |c| &c.value);
    let cwd = match (&proposal.dir, &preset.gate.cwd) {
        (dir, _) if !dir.is_empty() => root.join(dir),
        (_, Some(c)) => root.join(c),
        _ => root.to_path_buf(),
    };
    let (program, found) = match command {
        [python, flag, module, ..] if flag == "-m" && python.starts_with("python") => {
            (module.clone(), python_module(python, module, root, &cwd))
        }
        _ => {
            let program = command.first().cloned().unwrap_or_default();
            let found = resolve_program(&program, root, &cwd);
            (program, found)
        }
    };
    Some(ToolStatus {
        program,
        found,
        install: install_advice(root, &proposal.dir, &preset.about.install),
    })
}

/// Where the module of a `python -m MODULE` gate is installed for the Python that would run it,
/// found without running anything (a repository's `.venv/bin/python` is its code): pip installs
/// the module's command (`pytest`) beside that Python in a virtual environment; a Python outside
/// one may have it anywhere on PATH.
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
