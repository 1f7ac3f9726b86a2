//! Checks a parsed `quality.yaml` and compiles it into the engine's `Config`.
//!
//! Every problem is collected (not just the first), each with its place and a fix, and they are
//! reported in file order. Places come from the `Spanned` values of the model, or, for keys and
//! values the model does not span, from the untyped `Tree` of the same text.

use std::path::{Path, PathBuf};
use std::time::Duration;

use globset::{Glob, GlobSet, GlobSetBuilder};
use indexmap::IndexMap;
use regex::{Regex, RegexBuilder};
use serde_saphyr::Spanned;

use super::error::{ConfigError, ConfigProblem};
use super::model::{
    OutputStream, RawConfig, RawDefaults, RawFieldMap, RawFix, RawFixEdits, RawGate, RawGlobs,
    RawParsing, SpannedString, Strategy,
};
use super::spec::*;
use super::suggest::closest;
use super::tree::{LazyTree, Pos};
use crate::core::hash::stable_hash;
use crate::core::violation::Severity;

/// The Violation fields a text pattern may capture.
pub const VIOLATION_FIELDS: [&str; 10] = [
    "file",
    "line",
    "column",
    "end_line",
    "end_column",
    "code",
    "message",
    "severity",
    "url",
    "fixable",
];

/// The problems found so far, and the means to place them.
struct Problems<'a> {
    file: &'a Path,
    tree: &'a LazyTree<'a>,
    list: Vec<ConfigProblem>,
}

impl Problems<'_> {
    /// Records a problem at `pos`; a value without a place (a default) falls back to the file's start.
    fn at(&mut self, pos: impl Into<Pos>, message: impl Into<String>) {
        let pos = Some(pos.into())
            .filter(|p| p.is_known())
            .unwrap_or(Pos { line: 1, column: 1 });
        self.list.push(ConfigProblem {
            file: self.file.to_path_buf(),
            line: pos.line,
            column: pos.column,
            message: message.into(),
        });
    }

    /// The place of the key at `path`, else of the gate `path` is in, else the file's start.
    fn key(&self, path: &[&str]) -> Pos {
        (2..=path.len())
            .rev()
            .find_map(|n| self.tree.key(&path[..n]))
            .unwrap_or(Pos { line: 1, column: 1 })
    }

    /// The place of the value at `path`, else of its key (see `key`).
    fn value(&self, path: &[&str]) -> Pos {
        self.tree
            .value(path)
            .filter(|p| p.is_known())
            .unwrap_or_else(|| self.key(path))
    }

    /// How many problems there are, to tell whether a step added any.
    fn count(&self) -> usize {
        self.list.len()
    }

    fn into_result<T>(mut self, value: T) -> Result<T, ConfigError> {
        if self.list.is_empty() {
            return Ok(value);
        }
        // Stable, so two problems at one place keep the order they were found in.
        self.list.sort_by_key(|x| (x.line, x.column));
        Err(ConfigError {
            problems: self.list,
        })
    }
}

pub(super) fn compile(
    raw: RawConfig,
    tree: &LazyTree<'_>,
    text: &str,
    source: ConfigSource,
    file: &Path,
) -> Result<Config, ConfigError> {
    let mut p = Problems {
        file,
        tree,
        list: Vec::new(),
    };
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
    let mut ids: Vec<String> = Vec::new();
    for id in list {
        if ids.contains(&id.value) {
            p.at(
                id.referenced,
                format!(
                    "`{}` is listed twice in active_gates. Remove one.",
                    id.value
                ),
            );
        } else if !defined.contains(&id.value.as_str()) {
            p.at(id.referenced, undefined_gate(&id.value, &defined));
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
        None => format!(
            "{head}. Define it, or remove it from active_gates (defined: {}).",
            defined.join(", ")
        ),
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
    let before = p.count();
    let mut builder = GlobSetBuilder::new();
    for s in list {
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

fn compile_parsing(id: &str, pr: &RawParsing, p: &mut Problems) -> Option<ParserSpec> {
    let before = p.count();
    check_strategy_keys(id, pr, p);
    let spec = match pr.strategy.value {
        Strategy::Sarif => Some(ParserSpec::Sarif),
        Strategy::ExitCode => Some(ParserSpec::ExitCode),
        Strategy::TextViolations => compile_text(id, pr, p).map(ParserSpec::Text),
        Strategy::JsonViolations => compile_json(id, pr, p).map(ParserSpec::Json),
    };
    if p.count() > before { None } else { spec }
}

/// Reports `parsing` keys the chosen strategy does not read: a silently ignored `pattern` is
/// usually a sign that the strategy itself is the mistake.
fn check_strategy_keys(id: &str, pr: &RawParsing, p: &mut Problems) {
    let strategy = pr.strategy.value;
    let present = [
        ("format", pr.format.is_some()),
        ("violations_path", pr.violations_path.is_some()),
        ("field_map", pr.field_map.is_some()),
        ("fixable_when", pr.fixable_when.is_some()),
        ("fix_edits", pr.fix_edits.is_some()),
        ("line_offset", pr.line_offset.is_some()),
        ("column_offset", pr.column_offset.is_some()),
        ("extract", pr.extract.is_some()),
        ("pattern", pr.pattern.is_some()),
        ("stream", pr.stream.is_some()),
        ("defaults", pr.defaults.is_some()),
    ];
    for (key, _) in present
        .iter()
        .filter(|(key, there)| *there && !strategy.parsing_keys().contains(key))
    {
        let users: Vec<&str> = Strategy::ALL
            .iter()
            .filter(|s| s.parsing_keys().contains(key))
            .map(|s| s.as_str())
            .collect();
        let at = p.key(&["gates", id, "parsing", key]);
        p.at(
            at,
            format!(
                "gate `{id}`: `parsing.{key}` is not used by strategy {}; only {} reads it. Remove it, or change the strategy.",
                strategy.as_str(),
                users.join(" and ")
            ),
        );
    }
}

fn compile_text(id: &str, pr: &RawParsing, p: &mut Problems) -> Option<TextSpec> {
    let Some(pattern) = &pr.pattern else {
        p.at(pr.strategy.referenced, format!("gate `{id}`: text_violations needs `parsing.pattern`, a regex with named groups such as (?P<file>…) and (?P<line>…). Add one."));
        return None;
    };
    let regex = compile_regex(id, pattern, p)?;
    let groups: Vec<String> = regex
        .capture_names()
        .flatten()
        .map(str::to_string)
        .collect();
    for g in groups
        .iter()
        .filter(|g| !VIOLATION_FIELDS.contains(&g.as_str()))
    {
        let hint = match closest(g, VIOLATION_FIELDS) {
            Some(best) => format!("Did you mean `{best}`?"),
            None => format!("Rename it to one of: {}.", VIOLATION_FIELDS.join(", ")),
        };
        p.at(
            pattern.referenced,
            format!("gate `{id}`: the pattern's group `{g}` is not a Violation field. {hint}"),
        );
    }
    if groups.is_empty()
        && pr
            .defaults
            .as_ref()
            .and_then(|d| d.message.as_ref())
            .is_none()
    {
        p.at(pattern.referenced, format!("gate `{id}`: the pattern has no named groups and there is no default message, so its matches say nothing. Capture (?P<message>…) or set `defaults.message`."));
    }
    let defaults = compile_defaults(
        id,
        pr.defaults.as_ref(),
        &groups,
        "the pattern's named groups",
        p,
    );
    Some(TextSpec {
        regex,
        stream: pr
            .stream
            .as_ref()
            .map(|s| s.value)
            .unwrap_or(OutputStream::Stdout),
        defaults,
        line_offset: pr.line_offset.as_ref().map(|s| s.value).unwrap_or(0),
        column_offset: pr.column_offset.as_ref().map(|s| s.value).unwrap_or(0),
    })
}

/// Compiles the pattern in multi-line mode; an error points at the offending character when the
/// pattern is written on one line as it is read (plain or single-quoted, no escapes).
fn compile_regex(id: &str, pattern: &SpannedString, p: &mut Problems) -> Option<Regex> {
    match RegexBuilder::new(&pattern.value)
        .multi_line(true)
        .size_limit(50 << 20)
        .build()
    {
        Ok(r) => Some(r),
        Err(e) => {
            let text = e.to_string();
            let detail = text.lines().last().unwrap_or_default().trim();
            let detail = detail.strip_prefix("error: ").unwrap_or(detail);
            let start = Pos::from(pattern.referenced);
            let at = regex_error_offset(&text, &pattern.value)
                .and_then(|offset| p.tree.place_in_scalar(start, &pattern.value, offset))
                .unwrap_or(start);
            p.at(at, format!("gate `{id}`: the pattern is not a valid regex: {detail}. Fix it; named groups are written (?P<name>…)."));
            None
        }
    }
}

/// The character offset the regex crate's caret (`^`) points at, for a one-line pattern.
fn regex_error_offset(rendered: &str, pattern: &str) -> Option<usize> {
    let lines: Vec<&str> = rendered.lines().collect();
    let shown = lines
        .iter()
        .position(|l| l.strip_prefix("    ") == Some(pattern))?;
    let caret = lines.get(shown + 1)?.strip_prefix("    ")?;
    caret.chars().position(|c| c == '^')
}

fn compile_defaults(
    id: &str,
    d: Option<&RawDefaults>,
    known: &[String],
    known_desc: &str,
    p: &mut Problems,
) -> Defaults {
    let Some(d) = d else {
        return Defaults::default();
    };
    let mut template = |s: &Option<SpannedString>, key: &str| -> Option<Template> {
        let s = s.as_ref()?;
        let t = Template::parse(&s.value);
        for f in t.fields().filter(|f| !known.iter().any(|k| k == f)) {
            p.at(
                s.referenced,
                unknown_placeholder(id, key, f, known, known_desc),
            );
        }
        Some(t)
    };
    let file = template(&d.file, "file");
    let code = template(&d.code, "code");
    let message = template(&d.message, "message");
    let url = template(&d.url, "url");
    let severity = d.severity.as_ref().and_then(|s| default_severity(id, s, p));
    Defaults {
        file,
        code,
        message,
        severity,
        url,
        fixable: d.fixable,
    }
}

fn unknown_placeholder(
    id: &str,
    key: &str,
    field: &str,
    known: &[String],
    known_desc: &str,
) -> String {
    let head = format!(
        "gate `{id}`: defaults.{key} uses `{{{field}}}`, which matches none of {known_desc}"
    );
    match closest(field, known.iter().map(String::as_str)) {
        Some(best) => format!("{head} — did you mean `{{{best}}}`?"),
        None if known.is_empty() => format!(
            "{head} (there are none). Capture or map `{field}`, or write `{{{{` for a literal brace."
        ),
        None => format!(
            "{head} ({}). Capture or map `{field}`, or write `{{{{` for a literal brace.",
            known.join(", ")
        ),
    }
}

fn default_severity(id: &str, s: &SpannedString, p: &mut Problems) -> Option<Severity> {
    let found = Severity::from_tool_word(&s.value);
    if found.is_none() {
        let names = ["error", "warning", "info", "hint"];
        let hint = closest(&s.value, names)
            .map(|b| format!(" — did you mean `{b}`?"))
            .unwrap_or_default();
        p.at(s.referenced, format!("gate `{id}`: defaults.severity `{}` is not a severity{hint}. Use error, warning, info or hint.", s.value));
    }
    found
}

fn compile_json(id: &str, pr: &RawParsing, p: &mut Problems) -> Option<JsonSpec> {
    let violations_path = match &pr.violations_path {
        None => Vec::new(),
        Some(s) => parse_pointer(&s.value).unwrap_or_else(|why| {
            p.at(
                s.referenced,
                format!(
                    "gate `{id}`: violations_path `{}` is not a JSON Pointer: {why}",
                    s.value
                ),
            );
            Vec::new()
        }),
    };
    let field_map = compile_field_map(id, pr.field_map.as_ref(), p);
    if field_map.message.is_none()
        && pr
            .defaults
            .as_ref()
            .and_then(|d| d.message.as_ref())
            .is_none()
    {
        let at = p
            .tree
            .key(&["gates", id, "parsing", "field_map"])
            .unwrap_or(pr.strategy.referenced.into());
        p.at(at, format!("gate `{id}`: json_violations needs `field_map.message` (where each item's message is) or `defaults.message`. Add one."));
    }
    let fixable_when = pr
        .fixable_when
        .as_ref()
        .and_then(|s| match parse_condition(&s.value) {
            Ok(c) => Some(c),
            Err(why) => {
                p.at(
                    s.referenced,
                    format!(
                        "gate `{id}`: fixable_when `{}` cannot be read: {why}",
                        s.value
                    ),
                );
                None
            }
        });
    let fix_edits = pr
        .fix_edits
        .as_ref()
        .and_then(|f| compile_fix_edits(id, f, p));
    let known: Vec<String> = field_map.entries().map(|(k, _)| k.to_string()).collect();
    let defaults = compile_defaults(id, pr.defaults.as_ref(), &known, "the field_map keys", p);
    Some(JsonSpec {
        format: pr.format.as_ref().map(|s| s.value).unwrap_or_default(),
        violations_path,
        field_map,
        fixable_when,
        fix_edits,
        line_offset: pr.line_offset.as_ref().map(|s| s.value).unwrap_or(0),
        column_offset: pr.column_offset.as_ref().map(|s| s.value).unwrap_or(0),
        extract: pr.extract.as_ref().map(|s| s.value),
        defaults,
    })
}

/// A field path, or a problem at its place naming `key` (e.g. `field_map.line`).
fn field_path(id: &str, s: &Spanned<String>, key: &str, p: &mut Problems) -> Option<FieldPath> {
    parse_field_path(&s.value)
        .map_err(|why| {
            p.at(
                s.referenced,
                format!(
                    "gate `{id}`: {key} `{}` is not a field path: {why}",
                    s.value
                ),
            )
        })
        .ok()
}

fn compile_field_map(id: &str, fm: Option<&RawFieldMap>, p: &mut Problems) -> FieldMap {
    let Some(fm) = fm else {
        return FieldMap::default();
    };
    let mut path = |s: &Option<SpannedString>, key: &str| {
        s.as_ref()
            .and_then(|s| field_path(id, s, &format!("field_map.{key}"), p))
    };
    FieldMap {
        file: path(&fm.file, "file"),
        line: path(&fm.line, "line"),
        column: path(&fm.column, "column"),
        end_line: path(&fm.end_line, "end_line"),
        end_column: path(&fm.end_column, "end_column"),
        code: path(&fm.code, "code"),
        message: path(&fm.message, "message"),
        severity: path(&fm.severity, "severity"),
        url: path(&fm.url, "url"),
    }
}

fn compile_fix_edits(id: &str, f: &RawFixEdits, p: &mut Problems) -> Option<FixEditsSpec> {
    let mut one =
        |s: &Spanned<String>, key: &str| field_path(id, s, &format!("fix_edits.{key}"), p);
    let path = one(&f.path, "path");
    let title = f.title.as_ref().map(|t| one(t, "title"));
    let content = one(&f.content, "content");
    let line = one(&f.line, "line");
    let column = one(&f.column, "column");
    let end_line = one(&f.end_line, "end_line");
    let end_column = one(&f.end_column, "end_column");
    Some(FixEditsSpec {
        path: path?,
        title: match title {
            Some(t) => Some(t?),
            None => None,
        },
        content: content?,
        line: line?,
        column: column?,
        end_line: end_line?,
        end_column: end_column?,
    })
}

/// Parses a JSON Pointer (RFC 6901, with `*` for "every element"). `""` and `/` are the root.
pub fn parse_pointer(s: &str) -> Result<Vec<PointerStep>, String> {
    if s.is_empty() || s == "/" {
        return Ok(Vec::new());
    }
    let Some(rest) = s.strip_prefix('/') else {
        return Err(format!(
            "a pointer starts with `/` (or is \"\" for the root). Write `/{s}`."
        ));
    };
    let mut steps = Vec::new();
    for seg in rest.split('/') {
        if seg == "*" {
            steps.push(PointerStep::Each);
            continue;
        }
        let mut out = String::new();
        let mut chars = seg.chars();
        while let Some(c) = chars.next() {
            if c == '~' {
                match chars.next() {
                    Some('0') => out.push('~'),
                    Some('1') => out.push('/'),
                    _ => {
                        return Err("`~` must be followed by 0 (for `~`) or 1 (for `/`). Escape a literal `~` as `~0`.".into());
                    }
                }
            } else {
                out.push(c);
            }
        }
        steps.push(PointerStep::Key(out));
    }
    Ok(steps)
}

/// Parses a field path such as `location/row` or `../../filePath`.
pub fn parse_field_path(s: &str) -> Result<FieldPath, String> {
    let trimmed = s.trim().trim_start_matches('/');
    if trimmed.is_empty() {
        return Err("it is empty. Name the key, e.g. `message` or `location/row`.".into());
    }
    let mut up = 0;
    let mut keys = Vec::new();
    for seg in trimmed.split('/') {
        match seg {
            ".." if keys.is_empty() => up += 1,
            ".." => return Err("`..` may only stand at the start (it climbs out of the item). Move it to the front.".into()),
            "" => return Err("it has an empty segment (`//`). Remove the extra `/`.".into()),
            k => keys.push(k.to_string()),
        }
    }
    Ok(FieldPath { up, keys })
}

/// Parses `path == 'value'` or `path != 'value'` (quotes optional).
pub fn parse_condition(s: &str) -> Result<Condition, String> {
    let (op, idx) = match (s.find("=="), s.find("!=")) {
        (Some(i), _) => (CompareOp::Eq, i),
        (None, Some(i)) => (CompareOp::Ne, i),
        (None, None) => {
            return Err("it has no `==` or `!=`. Write `path == 'value'`, e.g. \"fix/applicability == 'safe'\".".into());
        }
    };
    let path = parse_field_path(s[..idx].trim())
        .map_err(|why| format!("the path before the operator is wrong: {why}"))?;
    let raw = s[idx + 2..].trim();
    if raw.is_empty() {
        return Err(
            "the value to compare with is missing. Write e.g. `fix/applicability == 'safe'`."
                .into(),
        );
    }
    let value = raw
        .strip_prefix('\'')
        .and_then(|r| r.strip_suffix('\''))
        .or_else(|| raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')))
        .unwrap_or(raw);
    Ok(Condition {
        path,
        op,
        value: value.to_string(),
    })
}
