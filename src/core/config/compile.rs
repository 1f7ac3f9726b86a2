//! Checks a parsed `quality.yaml` and compiles it into the engine's `Config`; each gate's
//! `parsing:` section is compiled in `parsing`.
//!
//! Every problem is collected (not just the first), each with its place and a fix, and they are
//! reported in file order. Places come from the `Spanned` values of the model, or, for keys and
//! values the model does not span, from the untyped `Tree` of the same text.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use globset::{Glob, GlobSet, GlobSetBuilder};
use indexmap::IndexMap;

use super::error::{ConfigError, Problems};
use super::limits::{MAX_GATES, MAX_GLOBS_PER_LIST, MAX_PATTERN_CHARS};
use super::model::{RawConfig, RawFix, RawGate, RawGlobs, SpannedString};
use super::parsing::compile_parsing;
use super::spec::*;
use super::suggest::closest;
use super::tree::LazyTree;
use crate::core::hash::stable_hash;

pub(super) fn compile(
    raw: RawConfig,
    tree: &LazyTree<'_>,
    text: &str,
    source: ConfigSource,
    file: &Path,
) -> Result<Config, ConfigError> {
    let mut p = Problems::new(file, tree);
    if raw.version.value != 1 {
        p.at(
            raw.version.referenced,
            format!(
                "version {} is not supported; this qgates reads version 1. Write `version: 1`.",
                raw.version.value
            ),
        );
    }
    check_gate_ids(&raw, &mut p);
    // Every defined gate is checked, active or not: a mistake in a gate that is switched off
    // today would otherwise surface only on the day someone switches it on.
    let mut compiled: IndexMap<&str, Gate> = IndexMap::new();
    for (id, g) in &raw.gates.value {
        if let Some(gate) = compile_gate(&id.value, g, &mut p) {
            compiled.insert(&id.value, gate);
        }
    }
    let active = active_gate_ids(&raw, &mut p);
    let gates = active
        .iter()
        .filter_map(|id| compiled.shift_remove(id.as_str()))
        .collect();
    let project_scope = raw
        .project_scope
        .as_ref()
        .and_then(|g| compile_globs(g, &mut p));
    let config = Config {
        source,
        gates,
        project_scope,
        parent_branch: raw.parent_branch,
        content_hash: stable_hash(text.as_bytes()),
    };
    p.into_result(config)
}

/// Gate ids name log files and report entries, so they stay to a safe alphabet.
/// (A gate defined twice never gets here: the YAML reader rejects duplicate keys.)
fn check_gate_ids(raw: &RawConfig, p: &mut Problems) {
    if raw.gates.value.is_empty() {
        p.at(raw.gates.referenced, "no gates are defined. Add at least one gate under `gates:`; `qgates init` writes an example.");
    }
    if let Some((id, _)) = raw.gates.value.get_index(MAX_GATES) {
        p.at(
            id.referenced,
            format!(
                "{} gates are defined; a configuration holds at most {MAX_GATES}, and this is gate {}. Merge gates that run the same tool, or remove the ones not used.",
                raw.gates.value.len(),
                MAX_GATES + 1
            ),
        );
    }
    for id in raw.gates.value.keys() {
        if id.value.is_empty()
            || !id
                .value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            p.at(
                id.referenced,
                format!("gate id `{}` may only use letters, digits, `_` and `-` (it names log files). Rename it.", id.value),
            );
        }
    }
}

/// The ids to run, in order: `active_gates` if given (each defined, none twice), else every gate.
fn active_gate_ids(raw: &RawConfig, p: &mut Problems) -> Vec<String> {
    let Some(list) = &raw.active_gates else {
        return raw.gates.value.keys().map(|k| k.value.clone()).collect();
    };
    if list.is_empty() {
        p.at(p.value(&["active_gates"]), "active_gates is empty, so nothing would run. List the gates to run, or remove active_gates to run every gate.");
    }
    let defined: Vec<&str> = raw.gates.value.keys().map(|k| k.value.as_str()).collect();
    let known: HashSet<&str> = defined.iter().copied().collect();
    // Suggestions are looked for among the gates a configuration may hold, so a list of
    // thousands of unknown ids does not compare each with thousands of gates.
    let defined = &defined[..defined.len().min(MAX_GATES)];
    let mut ids: Vec<String> = Vec::new();
    let mut listed: HashSet<&str> = HashSet::new();
    for id in list {
        if !listed.insert(&id.value) {
            p.at(
                id.referenced,
                format!(
                    "`{}` is listed twice in active_gates. Remove one.",
                    id.value
                ),
            );
        } else if !known.contains(id.value.as_str()) {
            p.at(id.referenced, undefined_gate(&id.value, defined));
        } else {
            ids.push(id.value.clone());
        }
    }
    ids
}

fn undefined_gate(id: &str, defined: &[&str]) -> String {
    let head = format!("active gate `{id}` has no definition under `gates`");
    match closest(id, defined.iter().copied()) {
        Some(best) => format!("{head} — did you mean `{best}`?"),
        None if defined.is_empty() => {
            format!("{head}. Define it under `gates:`, or remove it from active_gates.")
        }
        None => {
            // A few names say what the ids look like; all of them, for every unknown id, would
            // flood the report.
            const SHOWN: usize = 10;
            let mut names = defined[..defined.len().min(SHOWN)].join(", ");
            if defined.len() > SHOWN {
                names.push_str(", …");
            }
            format!("{head}. Define it, or remove it from active_gates (defined: {names}).")
        }
    }
}

fn compile_globs(g: &RawGlobs, p: &mut Problems) -> Option<Globs> {
    let include = glob_set(&g.include_globs, p);
    let exclude = glob_set(&g.exclude_globs, p);
    Some(Globs {
        include: include?,
        exclude: exclude?,
        include_patterns: g.include_globs.iter().map(|s| s.value.clone()).collect(),
        exclude_patterns: g.exclude_globs.iter().map(|s| s.value.clone()).collect(),
    })
}

/// `Some(None)`: no globs given (no filter). `None`: a glob was invalid (reported).
fn glob_set(list: &[SpannedString], p: &mut Problems) -> Option<Option<GlobSet>> {
    if list.is_empty() {
        return Some(None);
    }
    if let Some(s) = list.get(MAX_GLOBS_PER_LIST) {
        p.at(
            s.referenced,
            format!("{} globs are listed; a list holds at most {MAX_GLOBS_PER_LIST}, and this is glob {}. Replace lists of single files with broader globs (`src/**/*.py`).", list.len(), MAX_GLOBS_PER_LIST + 1),
        );
        return None;
    }
    let before = p.count();
    let mut builder = GlobSetBuilder::new();
    for s in list {
        let chars = s.value.chars().count();
        if chars > MAX_PATTERN_CHARS {
            p.at(
                s.referenced,
                format!("this glob is {chars} characters long; a glob may be at most {MAX_PATTERN_CHARS}. Shorten it, or split it into several globs."),
            );
            continue;
        }
        match Glob::new(&s.value) {
            Ok(glob) => {
                builder.add(glob);
            }
            Err(e) => p.at(
                s.referenced,
                format!("`{}` is not a valid glob ({}). Use `*`, `**`, `?`, `[…]` and `{{a,b}}`; escape a literal one as `[*]`.", s.value, e.kind()),
            ),
        }
    }
    if p.count() > before {
        return None;
    }
    builder.build().ok().map(Some)
}

fn compile_gate(id: &str, g: &RawGate, p: &mut Problems) -> Option<Gate> {
    let before = p.count();
    check_command(id, g, p);
    check_numbers(id, g, p);
    check_exit_codes(id, g, p);
    check_strings(id, g, p);
    let scope = g.scope.as_ref().and_then(|s| compile_globs(s, p));
    let parser = compile_parsing(id, &g.parsing, p);
    let fix = g.fix.as_ref().and_then(|f| compile_fix(id, g, f, p));
    if p.count() > before {
        return None;
    }
    Some(Gate {
        id: id.to_string(),
        name: g.name.clone().unwrap_or_else(|| id.to_string()),
        kind: g.kind,
        command: g.command.value.clone(),
        file_types: g
            .file_types
            .iter()
            .map(|t| normalize_file_type(t))
            .collect(),
        scope,
        parser: parser?,
        fix,
        fix_hint: g.fix_hint.clone(),
        exit_codes_ok: g.success.exit_codes_ok.clone(),
        exit_codes_findings: g.success.exit_codes_findings.clone(),
        timeout: Duration::from_secs_f64(g.timeout_s.value),
        env: g.env.clone(),
        cwd: g.cwd.as_ref().map(PathBuf::from),
        optional: g.optional,
        allow_fail: g.allow_fail,
        pass_files: g.pass_files,
        run_on: g.run_on.clone(),
        max_files_per_run: g.max_files_per_run.as_ref().map(|m| m.value),
        column_unit: g.column_unit,
        severity_map: g
            .severity_map
            .iter()
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), *v))
            .collect(),
        cache: g.cache,
        cache_inputs: g.cache_inputs.clone(),
        definition_hash: definition_hash(id, g),
    })
}

/// Hashes the gate as written, without places (`Spanned` serializes its value only), so
/// adding a line above a gate does not invalidate its cached results.
fn definition_hash(id: &str, g: &RawGate) -> String {
    let body = serde_json::to_string(g).unwrap_or_else(|_| format!("{g:?}"));
    stable_hash(format!("{id}\u{0}{body}").as_bytes())
}

/// `py` and `.PY` both mean files ending in `.py`.
fn normalize_file_type(t: &str) -> String {
    let t = t.trim().to_ascii_lowercase();
    if t.starts_with('.') || t.is_empty() {
        t
    } else {
        format!(".{t}")
    }
}

/// Commands are argv lists and never go through a shell; the usual mistake is one string with
/// spaces, which would look for a program literally named "ruff check".
fn check_command(id: &str, g: &RawGate, p: &mut Problems) {
    let argv = &g.command.value;
    if argv.is_empty() || argv[0].trim().is_empty() {
        p.at(g.command.referenced, format!("gate `{id}` has an empty command. Give the program and its arguments as a list, e.g. [\"ruff\", \"check\"]."));
    } else if argv.len() == 1 && argv[0].trim().contains(char::is_whitespace) {
        let split: Vec<String> = argv[0]
            .split_whitespace()
            .map(|a| format!("\"{a}\""))
            .collect();
        p.at(
            g.command.referenced,
            format!("gate `{id}`: the command is one string with spaces, but commands are argv lists and never go through a shell. Split it: [{}].", split.join(", ")),
        );
    }
}

fn check_numbers(id: &str, g: &RawGate, p: &mut Problems) {
    // `Duration` panics on values it cannot hold (1e300 s); a bad file must never crash us.
    if !(g.timeout_s.value > 0.0 && Duration::try_from_secs_f64(g.timeout_s.value).is_ok()) {
        p.at(
            g.timeout_s.referenced,
            format!("gate `{id}`: timeout_s must be a positive number of seconds, e.g. 120."),
        );
    }
    if let Some(m) = &g.max_files_per_run
        && m.value == 0
    {
        p.at(m.referenced, format!("gate `{id}`: max_files_per_run must be at least 1. Remove it to pass every file in one run."));
    }
}

/// An exit code means one thing: "ran, found nothing" or "ran, found something".
fn check_exit_codes(id: &str, g: &RawGate, p: &mut Problems) {
    let s = &g.success;
    let path = ["gates", id, "success", "exit_codes_findings"];
    for code in s
        .exit_codes_findings
        .iter()
        .filter(|c| s.exit_codes_ok.contains(c))
    {
        let at = p
            .tree
            .item(&path, &code.to_string())
            .unwrap_or_else(|| p.value(&path));
        p.at(at, format!("gate `{id}`: exit code {code} is in both success.exit_codes_ok and success.exit_codes_findings. Keep it in one list."));
    }
    if s.exit_codes_ok.is_empty() {
        let at = p.value(&["gates", id, "success", "exit_codes_ok"]);
        p.at(at, format!("gate `{id}`: success.exit_codes_ok is empty, so the gate could never pass. List the exit code of a clean run, e.g. [0]."));
    }
}

/// Strings whose contents qgates reads: placeholders in `fix_hint`, the `cwd` path, `run_on`.
fn check_strings(id: &str, g: &RawGate, p: &mut Problems) {
    if let Some(hint) = &g.fix_hint {
        for field in Template::parse(hint).fields().filter(|f| *f != "files") {
            let at = p.value(&["gates", id, "fix_hint"]);
            p.at(at, format!("gate `{id}`: fix_hint uses `{{{field}}}`, but only `{{files}}` (the failing files) is known there. Use `{{files}}`, or write `{{{{` for a literal brace."));
        }
    }
    if let Some(cwd) = &g.cwd
        && (Path::new(cwd).is_absolute()
            || Path::new(cwd)
                .components()
                .any(|c| c == std::path::Component::ParentDir))
    {
        let at = p.value(&["gates", id, "cwd"]);
        p.at(at, format!("gate `{id}`: cwd `{cwd}` must be a folder inside the workspace, relative to its root (e.g. `backend`)."));
    }
    if g.run_on.is_empty() {
        let at = p.value(&["gates", id, "run_on"]);
        p.at(at, format!("gate `{id}`: run_on is empty, so the gate never runs. List triggers (save, command, ci), or remove run_on to run on all."));
    }
}

fn compile_fix(id: &str, g: &RawGate, f: &RawFix, p: &mut Problems) -> Option<FixSpec> {
    if f.command.value.is_empty() {
        p.at(f.command.referenced, format!("gate `{id}`: fix.command is empty. Give the fixer's argv, e.g. [\"ruff\", \"format\", \"-\"]."));
        return None;
    }
    for arg in &f.command.value {
        for field in Template::parse(arg).fields().filter(|f| *f != "file") {
            let at = p
                .tree
                .item(&["gates", id, "fix", "command"], arg)
                .unwrap_or(f.command.referenced.into());
            p.at(at, format!("gate `{id}`: fix.command uses `{{{field}}}`, but only `{{file}}` is known there. Use `{{file}}` or remove it."));
        }
    }
    Some(FixSpec {
        command: f.command.value.clone(),
        title: f
            .title
            .clone()
            .unwrap_or_else(|| format!("Fix with {}", g.name.as_deref().unwrap_or(id))),
    })
}
