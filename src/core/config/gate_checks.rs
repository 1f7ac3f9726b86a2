//! Checks of a gate's keys that their types cannot make: the command's shape, the numbers, the
//! exit code lists, and the strings whose contents qgates reads (places, templates, folders).

use std::path::{Component, Path};
use std::time::Duration;

use super::error::Problems;
use super::model::RawGate;
use super::spec::Template;

/// The gate's argv. Commands are argv lists and never go through a shell; the usual mistake is
/// one string with spaces, which would look for a program literally named "ruff check".
pub(super) fn check_command(id: &str, g: &RawGate, p: &mut Problems) -> Vec<String> {
    let Some(command) = &g.command else {
        let at = p.key(&["gates", id]);
        p.at(at, format!("gate `{id}` has no `command`. Add the tool's argv, e.g. `command: [\"ruff\", \"check\"]`, or use a `preset` (`qgates presets` lists them)."));
        return Vec::new();
    };
    let argv = &command.value;
    if argv.is_empty() || argv[0].trim().is_empty() {
        p.at(command.referenced, format!("gate `{id}` has an empty command. Give the program and its arguments as a list, e.g. [\"ruff\", \"check\"]."));
    } else if argv.len() == 1 && argv[0].trim().contains(char::is_whitespace) {
        let split: Vec<String> = argv[0]
            .split_whitespace()
            .map(|a| format!("\"{a}\""))
            .collect();
        p.at(
            command.referenced,
            format!("gate `{id}`: the command is one string with spaces, but commands are argv lists and never go through a shell. Split it: [{}].", split.join(", ")),
        );
    }
    argv.clone()
}

pub(super) fn check_numbers(id: &str, g: &RawGate, p: &mut Problems) {
    // `Duration` panics on values it cannot hold (1e300 s); a bad file must never crash us.
    if let Some(t) = &g.timeout_s
        && !(t.value > 0.0 && Duration::try_from_secs_f64(t.value).is_ok())
    {
        p.at(
            t.referenced,
            format!("gate `{id}`: timeout_s must be a positive number of seconds, e.g. 120."),
        );
    }
    if let Some(m) = &g.max_files_per_run
        && m.value == 0
    {
        p.at(m.referenced, format!("gate `{id}`: max_files_per_run must be at least 1. Remove it to pass every file in one run."));
    }
}

/// The exit codes of a run without and with findings, and of one that stopped early; each code
/// means one thing (an incomplete run found something too).
pub(super) fn check_exit_codes(
    id: &str,
    g: &RawGate,
    p: &mut Problems,
) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    let s = g.success.clone().unwrap_or_default();
    let ok = s.exit_codes_ok.unwrap_or_else(|| vec![0]);
    let findings = s.exit_codes_findings.unwrap_or_else(|| vec![1]);
    let incomplete = s.exit_codes_incomplete.unwrap_or_default();
    let path = ["gates", id, "success", "exit_codes_incomplete"];
    for code in incomplete.iter().filter(|c| ok.contains(c)) {
        let at = p.item(&path, &code.to_string());
        p.at(at, format!("gate `{id}`: exit code {code} is in success.exit_codes_ok and success.exit_codes_incomplete, but a run that stopped early is no clean run. Keep it in one list."));
    }
    // A list the gate does not write comes from its preset (or the default): say so, or the
    // user is told to fix a list they cannot see.
    let preset = g.preset.as_ref().map(|n| n.value.as_str());
    let written = |key: &str| p.tree.value(&["gates", id, "success", key]).is_some();
    let (ours, theirs) = match preset {
        Some(name) if !written("exit_codes_findings") => {
            ("exit_codes_ok", Some(("exit_codes_findings", name)))
        }
        Some(name) if !written("exit_codes_ok") => {
            ("exit_codes_findings", Some(("exit_codes_ok", name)))
        }
        _ => ("exit_codes_findings", None),
    };
    let path = ["gates", id, "success", ours];
    for code in findings.iter().filter(|c| ok.contains(c)) {
        let at = p.item(&path, &code.to_string());
        let message = match theirs {
            Some((list, name)) => format!(
                "gate `{id}`: exit code {code} is in success.{ours}, and the preset `{name}` has it in success.{list}. Set success.{list} too, so each code is in one list."
            ),
            None => format!(
                "gate `{id}`: exit code {code} is in both success.exit_codes_ok and success.exit_codes_findings. Keep it in one list."
            ),
        };
        p.at(at, message);
    }
    if ok.is_empty() {
        let at = p.value(&["gates", id, "success", "exit_codes_ok"]);
        p.at(at, format!("gate `{id}`: success.exit_codes_ok is empty, so the gate could never pass. List the exit code of a clean run, e.g. [0]."));
    }
    (ok, findings, incomplete)
}

/// Strings whose contents qgates reads: placeholders in `fix_hint`, the `cwd` path, `run_on`,
/// the places of `own_selection`, `own_exclude` and `args_when`.
pub(super) fn check_strings(id: &str, g: &RawGate, p: &mut Problems) {
    let conditions: Option<Vec<String>> = g.args_when.as_ref().map(|m| m.keys().cloned().collect());
    for (key, places) in [
        ("own_selection", &g.own_selection),
        ("own_exclude", &g.own_exclude),
        ("args_when", &conditions),
    ] {
        for place in places.iter().flatten() {
            let problem = crate::core::runner::own_selection::check_place(place).or_else(|| {
                (key == "own_exclude" && !place.contains('#'))
                    .then(|| "names no key: write FILE#section.key".to_string())
            });
            let Some(problem) = problem else { continue };
            let path = ["gates", id, key];
            let at = p.item(&path, place);
            p.at(at, format!("gate `{id}`: {key} `{place}` {problem}."));
        }
    }
    if let Some(hint) = &g.fix_hint {
        for field in Template::parse(hint).fields().filter(|f| *f != "files") {
            let at = p.value(&["gates", id, "fix_hint"]);
            p.at(at, format!("gate `{id}`: fix_hint uses `{{{field}}}`, but only `{{files}}` (the failing files) is known there. Use `{{files}}`, or write `{{{{` for a literal brace."));
        }
    }
    for (key, dir) in [("cwd", &g.cwd), ("paths_relative_to", &g.paths_relative_to)] {
        if let Some(dir) = dir
            && leaves_workspace(dir)
        {
            let at = p.value(&["gates", id, key]);
            p.at(at, format!("gate `{id}`: {key} `{dir}` must be a folder inside the workspace, relative to its root (e.g. `backend`)."));
        }
    }
    if g.files.as_ref().is_some_and(Vec::is_empty) {
        let at = p.value(&["gates", id, "files"]);
        p.at(at, format!("gate `{id}`: files is empty, so the gate would check no file. List globs such as \"*.sh\" or \"Dockerfile\", or remove files to use file_types."));
    }
    if g.run_on.as_ref().is_some_and(Vec::is_empty) {
        let at = p.value(&["gates", id, "run_on"]);
        p.at(at, format!("gate `{id}`: run_on is empty, so the gate never runs. List triggers (save, command, ci), or remove run_on to run on all."));
    }
}

/// Whether a relative path from the workspace root could point outside it: it is absolute, or
/// climbs with `..`.
pub(super) fn leaves_workspace(path: &str) -> bool {
    let path = Path::new(path);
    path.is_absolute() || path.components().any(|c| c == Component::ParentDir)
}
