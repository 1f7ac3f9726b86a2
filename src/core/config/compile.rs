//! Checks a parsed `quality.yaml` and compiles it into the engine's `Config`.
//! Every problem is collected (not just the first), each with its place and a fix.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use globset::{Glob, GlobSetBuilder};
use regex::RegexBuilder;
use serde_saphyr::{Location, Spanned};

use super::error::{ConfigError, ConfigProblem};
use super::model::{
    OutputStream, RawConfig, RawDefaults, RawFieldMap, RawFixEdits, RawGate, RawGlobs, RawParsing, SpannedString,
    Strategy,
};
use super::spec::*;
use crate::core::hash::stable_hash;

/// The Violation fields a text pattern may capture.
pub const VIOLATION_FIELDS: [&str; 10] =
    ["file", "line", "column", "end_line", "end_column", "code", "message", "severity", "url", "fixable"];

struct Problems<'a> {
    file: &'a Path,
    list: Vec<ConfigProblem>,
}

impl Problems<'_> {
    fn at(&mut self, loc: Location, message: impl Into<String>) {
        let (line, column) = if loc.line() == 0 { (1, 1) } else { (loc.line() as u32, loc.column() as u32) };
        self.list.push(ConfigProblem { file: self.file.to_path_buf(), line, column, message: message.into() });
    }
}

pub(super) fn compile(raw: RawConfig, text: &str, source: ConfigSource, file: &Path) -> Result<Config, ConfigError> {
    let mut p = Problems { file, list: Vec::new() };
    if raw.version.value != 1 {
        p.at(
            raw.version.referenced,
            format!("version {} is not supported. Write `version: 1`.", raw.version.value),
        );
    }
    let mut seen = HashSet::new();
    for id in raw.gates.keys() {
        if !seen.insert(id.value.as_str()) {
            p.at(id.referenced, format!("gate `{}` is defined twice. Rename or remove one of them.", id.value));
        }
        if id.value.is_empty() || !id.value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            p.at(
                id.referenced,
                format!(
                    "gate id `{}` may only use letters, digits, `_` and `-` (it names log files). Rename it.",
                    id.value
                ),
            );
        }
    }
    let active: Vec<SpannedString> = match raw.active_gates {
        Some(list) => list,
        None => raw.gates.keys().cloned().collect(),
    };
    if raw.gates.is_empty() {
        p.at(Location::UNKNOWN, "no gates are defined. Add at least one gate under `gates:`.");
    }
    let mut gates = Vec::new();
    let mut active_seen = HashSet::new();
    for id in &active {
        if !active_seen.insert(id.value.clone()) {
            p.at(id.referenced, format!("`{}` is listed twice in active_gates. Remove one.", id.value));
            continue;
        }
        match raw.gates.iter().find(|(k, _)| k.value == id.value) {
            Some((_, g)) => {
                if let Some(gate) = compile_gate(&id.value, g, &mut p) {
                    gates.push(gate);
                }
            }
            None => {
                let known: Vec<&str> = raw.gates.keys().map(|k| k.value.as_str()).collect();
                p.at(
                    id.referenced,
                    format!(
                        "active gate `{}` has no definition under `gates`. Define it, or remove it from active_gates (defined: {}).",
                        id.value,
                        if known.is_empty() { "none".to_string() } else { known.join(", ") }
                    ),
                );
            }
        }
    }
    let project_scope = raw.project_scope.as_ref().and_then(|g| compile_globs(g, &mut p));
    if !p.list.is_empty() {
        p.list.sort_by_key(|x| (x.line, x.column));
        return Err(ConfigError { problems: p.list });
    }
    Ok(Config {
        source,
        gates,
        project_scope,
        parent_branch: raw.parent_branch,
        content_hash: stable_hash(text.as_bytes()),
    })
}

fn compile_globs(g: &RawGlobs, p: &mut Problems) -> Option<Globs> {
    let build = |list: &[SpannedString], p: &mut Problems| -> Option<Option<globset::GlobSet>> {
        if list.is_empty() {
            return Some(None);
        }
        let mut b = GlobSetBuilder::new();
        let mut ok = true;
        for s in list {
            match Glob::new(&s.value) {
                Ok(glob) => {
                    b.add(glob);
                }
                Err(e) => {
                    ok = false;
                    p.at(
                        s.referenced,
                        format!("`{}` is not a valid glob ({}). Use `*`, `**`, `?`, `[…]` and `{{a,b}}`.", s.value, e.kind()),
                    );
                }
            }
        }
        if !ok {
            return None;
        }
        b.build().ok().map(Some)
    };
    let include = build(&g.include_globs, p)?;
    let exclude = build(&g.exclude_globs, p)?;
    Some(Globs {
        include,
        exclude,
        include_patterns: g.include_globs.iter().map(|s| s.value.clone()).collect(),
        exclude_patterns: g.exclude_globs.iter().map(|s| s.value.clone()).collect(),
    })
}

fn compile_gate(id: &str, g: &RawGate, p: &mut Problems) -> Option<Gate> {
    let before = p.list.len();
    if g.command.value.is_empty() || g.command.value[0].trim().is_empty() {
        p.at(
            g.command.referenced,
            format!("gate `{id}` has an empty command. Give the program and its arguments as a list, e.g. [\"ruff\", \"check\"]."),
        );
    } else if g.command.value.len() == 1 && g.command.value[0].contains(' ') {
        p.at(
            g.command.referenced,
            format!(
                "gate `{id}`: the command is one string with spaces (`{}`); commands are argv lists and never go through a shell. Split it: [\"{}\"].",
                g.command.value[0],
                g.command.value[0].split_whitespace().collect::<Vec<_>>().join("\", \"")
            ),
        );
    }
    if !(g.timeout_s > 0.0 && g.timeout_s.is_finite()) {
        p.at(g.command.referenced, format!("gate `{id}`: timeout_s must be a positive number of seconds."));
    }
    if let Some(m) = &g.max_files_per_run
        && m.value == 0
    {
        p.at(m.referenced, format!("gate `{id}`: max_files_per_run must be at least 1."));
    }
    let overlap: Vec<i32> =
        g.success.exit_codes_ok.iter().filter(|c| g.success.exit_codes_findings.contains(c)).copied().collect();
    if !overlap.is_empty() {
        p.at(
            g.command.referenced,
            format!(
                "gate `{id}`: exit code(s) {overlap:?} are in both success.exit_codes_ok and success.exit_codes_findings. Put each code in one list."
            ),
        );
    }
    let scope = g.scope.as_ref().and_then(|s| compile_globs(s, p));
    let parser = compile_parsing(id, &g.parsing, p);
    let fix = g.fix.as_ref().and_then(|f| {
        if f.command.value.is_empty() {
            p.at(f.command.referenced, format!("gate `{id}`: fix.command is empty. Give the fixer's argv, e.g. [\"ruff\", \"format\", \"-\"]."));
            return None;
        }
        for arg in &f.command.value {
            for field in Template::parse(arg).fields() {
                if field != "file" {
                    p.at(
                        f.command.referenced,
                        format!("gate `{id}`: fix.command uses `{{{field}}}`, but only `{{file}}` is known there. Use `{{file}}` or remove it."),
                    );
                }
            }
        }
        Some(FixSpec {
            command: f.command.value.clone(),
            title: f.title.clone().unwrap_or_else(|| format!("Fix with {}", g.name.as_deref().unwrap_or(id))),
        })
    });
    let file_types = g
        .file_types
        .iter()
        .map(|t| {
            let t = t.trim().to_ascii_lowercase();
            if t.starts_with('.') || t.is_empty() { t } else { format!(".{t}") }
        })
        .collect();
    if p.list.len() > before {
        return None;
    }
    let definition_hash = stable_hash(format!("{id}\u{0}{g:?}").as_bytes());
    Some(Gate {
        id: id.to_string(),
        name: g.name.clone().unwrap_or_else(|| id.to_string()),
        kind: g.kind,
        command: g.command.value.clone(),
        file_types,
        scope,
        parser: parser?,
        fix,
        fix_hint: g.fix_hint.clone(),
        exit_codes_ok: g.success.exit_codes_ok.clone(),
        exit_codes_findings: g.success.exit_codes_findings.clone(),
        timeout: Duration::from_secs_f64(g.timeout_s.max(0.001)),
        env: g.env.clone(),
        cwd: g.cwd.as_ref().map(PathBuf::from),
        optional: g.optional,
        allow_fail: g.allow_fail,
        pass_files: g.pass_files,
        run_on: g.run_on.clone(),
        max_files_per_run: g.max_files_per_run.as_ref().map(|m| m.value),
        column_unit: g.column_unit,
        severity_map: g.severity_map.iter().map(|(k, v)| (k.trim().to_ascii_lowercase(), *v)).collect(),
        cache: g.cache,
        cache_inputs: g.cache_inputs.clone(),
        definition_hash,
    })
}

/// Reports keys that the chosen strategy does not use, so a typo'd strategy does not go unnoticed.
fn check_unused(id: &str, pr: &RawParsing, strategy: Strategy, p: &mut Problems) {
    let name = match strategy {
        Strategy::JsonViolations => "json_violations",
        Strategy::TextViolations => "text_violations",
        Strategy::Sarif => "sarif",
        Strategy::ExitCode => "exit_code",
    };
    let json_only = strategy != Strategy::JsonViolations;
    let text_only = strategy != Strategy::TextViolations;
    let mut flag = |used_elsewhere: bool, key: &str, loc: Option<Location>| {
        if used_elsewhere && let Some(loc) = loc {
            p.at(
                loc,
                format!("gate `{id}`: `parsing.{key}` is not used by strategy {name}. Remove it, or change the strategy."),
            );
        }
    };
    flag(json_only, "format", pr.format.as_ref().map(|s| s.referenced));
    flag(json_only, "violations_path", pr.violations_path.as_ref().map(|s| s.referenced));
    flag(json_only, "field_map", pr.field_map.as_ref().map(|_| pr.strategy.referenced));
    flag(json_only, "fixable_when", pr.fixable_when.as_ref().map(|s| s.referenced));
    flag(json_only, "fix_edits", pr.fix_edits.as_ref().map(|f| f.path.referenced));
    flag(json_only, "extract", pr.extract.as_ref().map(|s| s.referenced));
    flag(text_only, "pattern", pr.pattern.as_ref().map(|s| s.referenced));
    flag(text_only, "stream", pr.stream.as_ref().map(|s| s.referenced));
    let offsets_unused = matches!(strategy, Strategy::Sarif | Strategy::ExitCode);
    flag(offsets_unused, "line_offset", pr.line_offset.as_ref().map(|s| s.referenced));
    flag(offsets_unused, "column_offset", pr.column_offset.as_ref().map(|s| s.referenced));
    flag(offsets_unused, "defaults", pr.defaults.as_ref().map(|_| pr.strategy.referenced));
}

fn compile_parsing(id: &str, pr: &RawParsing, p: &mut Problems) -> Option<ParserSpec> {
    let strategy = pr.strategy.value;
    let before = p.list.len();
    check_unused(id, pr, strategy, p);
    let spec = match strategy {
        Strategy::Sarif => Some(ParserSpec::Sarif),
        Strategy::ExitCode => Some(ParserSpec::ExitCode),
        Strategy::TextViolations => compile_text(id, pr, p).map(ParserSpec::Text),
        Strategy::JsonViolations => compile_json(id, pr, p).map(ParserSpec::Json),
    };
    if p.list.len() > before { None } else { spec }
}

fn compile_text(id: &str, pr: &RawParsing, p: &mut Problems) -> Option<TextSpec> {
    let Some(pattern) = &pr.pattern else {
        p.at(
            pr.strategy.referenced,
            format!("gate `{id}`: text_violations needs `parsing.pattern`, a regex with named groups such as (?P<file>…) and (?P<line>…). Add one."),
        );
        return None;
    };
    let regex = match RegexBuilder::new(&pattern.value).multi_line(true).size_limit(50 << 20).build() {
        Ok(r) => r,
        Err(e) => {
            let detail = e.to_string().lines().last().unwrap_or_default().trim().to_string();
            p.at(
                pattern.referenced,
                format!("gate `{id}`: the pattern is not a valid regex ({detail}). Fix it; named groups are written (?P<name>…)."),
            );
            return None;
        }
    };
    let groups: Vec<&str> = regex.capture_names().flatten().collect();
    for g in &groups {
        if !VIOLATION_FIELDS.contains(g) {
            p.at(
                pattern.referenced,
                format!(
                    "gate `{id}`: the pattern's group `{g}` is not a Violation field. Rename it to one of: {}.",
                    VIOLATION_FIELDS.join(", ")
                ),
            );
        }
    }
    if groups.is_empty() && pr.defaults.as_ref().and_then(|d| d.message.as_ref()).is_none() {
        p.at(
            pattern.referenced,
            format!("gate `{id}`: the pattern has no named groups and no default message, so its matches say nothing. Capture (?P<message>…) or set `defaults.message`."),
        );
    }
    let known: Vec<String> = groups.iter().map(|s| s.to_string()).collect();
    let defaults = compile_defaults(id, pr.defaults.as_ref(), &known, "the pattern's named groups", p);
    Some(TextSpec {
        regex,
        stream: pr.stream.as_ref().map(|s| s.value).unwrap_or(OutputStream::Stdout),
        defaults,
        line_offset: pr.line_offset.as_ref().map(|s| s.value).unwrap_or(0),
        column_offset: pr.column_offset.as_ref().map(|s| s.value).unwrap_or(0),
    })
}

fn compile_defaults(id: &str, d: Option<&RawDefaults>, known: &[String], known_desc: &str, p: &mut Problems) -> Defaults {
    let Some(d) = d else { return Defaults::default() };
    let template = |s: &Option<SpannedString>, key: &str, p: &mut Problems| -> Option<Template> {
        let s = s.as_ref()?;
        let t = Template::parse(&s.value);
        for f in t.fields() {
            if !known.iter().any(|k| k == f) {
                p.at(
                    s.referenced,
                    format!(
                        "gate `{id}`: defaults.{key} uses `{{{f}}}`, which matches none of {known_desc} ({}). Capture `{f}`, or write `{{{{` for a literal brace.",
                        if known.is_empty() { "none".to_string() } else { known.join(", ") }
                    ),
                );
            }
        }
        Some(t)
    };
    let file = template(&d.file, "file", p);
    let code = template(&d.code, "code", p);
    let message = template(&d.message, "message", p);
    let url = template(&d.url, "url", p);
    let severity = d.severity.as_ref().and_then(|s| match crate::core::violation::Severity::from_tool_word(&s.value) {
        Some(sev) => Some(sev),
        None => {
            p.at(
                s.referenced,
                format!("gate `{id}`: defaults.severity `{}` is not a severity. Use error, warning, info or hint.", s.value),
            );
            None
        }
    });
    Defaults { file, code, message, severity, url, fixable: d.fixable }
}

fn compile_json(id: &str, pr: &RawParsing, p: &mut Problems) -> Option<JsonSpec> {
    let violations_path = match &pr.violations_path {
        None => Vec::new(),
        Some(s) => match parse_pointer(&s.value) {
            Ok(steps) => steps,
            Err(why) => {
                p.at(s.referenced, format!("gate `{id}`: violations_path `{}` is not a JSON Pointer: {why}", s.value));
                Vec::new()
            }
        },
    };
    let empty = RawFieldMap::default();
    let fm = pr.field_map.as_ref().unwrap_or(&empty);
    let path = |s: &Option<SpannedString>, key: &str, p: &mut Problems| -> Option<FieldPath> {
        let s = s.as_ref()?;
        match parse_field_path(&s.value) {
            Ok(fp) => Some(fp),
            Err(why) => {
                p.at(s.referenced, format!("gate `{id}`: {key} `{}` is not a field path: {why}", s.value));
                None
            }
        }
    };
    let field_map = FieldMap {
        file: path(&fm.file, "field_map.file", p),
        line: path(&fm.line, "field_map.line", p),
        column: path(&fm.column, "field_map.column", p),
        end_line: path(&fm.end_line, "field_map.end_line", p),
        end_column: path(&fm.end_column, "field_map.end_column", p),
        code: path(&fm.code, "field_map.code", p),
        message: path(&fm.message, "field_map.message", p),
        severity: path(&fm.severity, "field_map.severity", p),
        url: path(&fm.url, "field_map.url", p),
    };
    if field_map.message.is_none() && pr.defaults.as_ref().and_then(|d| d.message.as_ref()).is_none() {
        p.at(
            pr.strategy.referenced,
            format!("gate `{id}`: json_violations needs `field_map.message` (where each item's message is) or `defaults.message`. Add one."),
        );
    }
    let fixable_when = pr.fixable_when.as_ref().and_then(|s| match parse_condition(&s.value) {
        Ok(c) => Some(c),
        Err(why) => {
            p.at(s.referenced, format!("gate `{id}`: fixable_when `{}` cannot be read: {why}", s.value));
            None
        }
    });
    let fix_edits = pr.fix_edits.as_ref().and_then(|f| compile_fix_edits(id, f, p));
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

fn compile_fix_edits(id: &str, f: &RawFixEdits, p: &mut Problems) -> Option<FixEditsSpec> {
    let one = |s: &Spanned<String>, key: &str, p: &mut Problems| match parse_field_path(&s.value) {
        Ok(fp) => Some(fp),
        Err(why) => {
            p.at(s.referenced, format!("gate `{id}`: fix_edits.{key} `{}` is not a field path: {why}", s.value));
            None
        }
    };
    let path = one(&f.path, "path", p);
    let title = f.title.as_ref().map(|t| one(t, "title", p));
    let content = one(&f.content, "content", p);
    let line = one(&f.line, "line", p);
    let column = one(&f.column, "column", p);
    let end_line = one(&f.end_line, "end_line", p);
    let end_column = one(&f.end_column, "end_column", p);
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
    let (op, idx, len) = if let Some(i) = s.find("==") {
        (CompareOp::Eq, i, 2)
    } else if let Some(i) = s.find("!=") {
        (CompareOp::Ne, i, 2)
    } else {
        return Err("write `path == 'value'` or `path != 'value'`, e.g. \"fix/applicability == 'safe'\".".into());
    };
    let path = parse_field_path(s[..idx].trim())?;
    let raw = s[idx + len..].trim();
    let value = raw
        .strip_prefix('\'')
        .and_then(|r| r.strip_suffix('\''))
        .or_else(|| raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')))
        .unwrap_or(raw);
    if value.is_empty() && raw.is_empty() {
        return Err("the value to compare with is missing. Write e.g. `fix/applicability == 'safe'`.".into());
    }
    Ok(Condition { path, op, value: value.to_string() })
}

