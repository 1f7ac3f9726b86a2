//! Turns a YAML or shape error from serde-saphyr into one sentence that names the key and the gate
//! and says how to fix it. The library's own text is written for developers ("expected sequence
//! start"), so we match on its structured error, and the `Tree` tells which key a place belongs to.

use serde_saphyr::Error;

use super::suggest::closest;
use super::tree::{Found, Pos, Seg, Tree};
use super::yaml_syntax::{first_tab, library_text, syntax, unclosed_flow};

/// Where the problem is and what to say about it.
pub(super) fn explain(e: &Error, text: &str, tree: Option<&Tree>) -> (Pos, String) {
    let e = original(e);
    let mut pos = location(e).unwrap_or(Pos { line: 1, column: 1 });
    if library_text(e).contains("tab") {
        pos = first_tab(text, pos).unwrap_or(pos);
    }
    describe(e, pos, Some(text), tree)
}

/// `explain` for an error in a document of `gates:` and the lines of one gate, which start at
/// line `first_line` of the file. `None` for an error not about a value's shape (an unknown
/// anchor), which reading a gate on its own can cause.
pub(super) fn explain_part(e: &Error, first_line: u32, tree: &Tree) -> Option<(Pos, String)> {
    let e = original(e);
    let shape = is_wrong_type(e)
        || matches!(
            e,
            Error::SerdeUnknownField { .. }
                | Error::SerdeUnknownVariant { .. }
                | Error::SerdeMissingField { .. }
                | Error::DuplicateMappingKey { .. }
        );
    // Line 1 of the part is `gates:`; the gate's own lines follow.
    let pos = location(e).filter(|p| shape && p.line >= 2)?;
    let pos = Pos {
        line: pos.line - 2 + first_line,
        column: pos.column,
    };
    Some(describe(e, pos, None, Some(tree)))
}

fn location(e: &Error) -> Option<Pos> {
    e.location().map(Pos::from).filter(|p| p.is_known())
}

/// What to say about an error at `pos`; `text` (the whole file) finds the opening bracket of a
/// syntax error.
fn describe(e: &Error, pos: Pos, text: Option<&str>, tree: Option<&Tree>) -> (Pos, String) {
    let found = tree.and_then(|t| t.at(pos));
    let message = match e {
        Error::SerdeUnknownField {
            field, expected, ..
        } => unknown_key(field, expected, found.as_ref()),
        Error::SerdeUnknownVariant {
            variant, expected, ..
        } => unknown_value(variant, expected, found.as_ref()),
        Error::SerdeMissingField { field, .. } => {
            let (at, message) = missing_key(field, found.as_ref(), tree);
            return (at.unwrap_or(pos), message);
        }
        Error::DuplicateMappingKey { key, .. } => duplicate_key(key.as_deref(), found.as_ref()),
        _ if is_wrong_type(e) => wrong_type(e, found.as_ref()),
        Error::MultipleDocuments { .. } => {
            "the file holds more than one YAML document (`---` starts another). Keep one document."
                .to_string()
        }
        _ => match text.and_then(|text| unclosed_flow(text, pos)) {
            // The parser notices an unclosed `[` or `{` only lines later, at something that
            // makes no sense inside it; the opener is what the user has to fix.
            Some((open, c)) => {
                let close = if c == '[' { ']' } else { '}' };
                return (
                    open,
                    format!(
                        "invalid YAML: this `{c}` is never closed (the parser stumbles on line {}). Close it with `{close}`.",
                        pos.line
                    ),
                );
            }
            None => syntax(e),
        },
    };
    (pos, message)
}

/// Whether the error is about a value of the wrong type.
fn is_wrong_type(e: &Error) -> bool {
    matches!(
        e,
        Error::Unexpected { .. }
            | Error::SerdeInvalidType { .. }
            | Error::SerdeInvalidValue { .. }
            | Error::SerdeInvalidLength { .. }
            | Error::InvalidScalar { .. }
            | Error::InvalidBooleanStrict { .. }
            | Error::NullIntoString { .. }
            | Error::NonFiniteFloat { .. }
    )
}

/// The error itself, without the snippet or alias wrappers the library may add.
fn original(e: &Error) -> &Error {
    match e.without_snippet() {
        Error::AliasError { error, .. } => original(error),
        other => other,
    }
}

// ---- where: naming a place by its path ----

/// The path to the mapping a key sits in (the found path without the key itself).
fn parent(found: Option<&Found>) -> Vec<Seg> {
    found
        .map(|f| f.path[..f.path.len().saturating_sub(1)].to_vec())
        .unwrap_or_default()
}

fn join(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if s.is_empty() => s.push_str(k),
            Seg::Key(k) => s.push_str(&format!(".{k}")),
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// "at the top level", "in gate `a`", "in `parsing.field_map` of gate `a`", "in `project_scope`".
fn place(mapping: &[Seg]) -> String {
    match mapping {
        [] => "at the top level".to_string(),
        [Seg::Key(g)] if g == "gates" => "under `gates`".to_string(),
        _ => format!("in {}", subject(mapping, "of")),
    }
}

/// "`command` in gate `a`", "`parsing.stream` in gate `a`", "gate `a`", "`version`"; `word`
/// joins a key to its gate.
fn subject(path: &[Seg], word: &str) -> String {
    match path {
        [Seg::Key(g), Seg::Key(id)] if g == "gates" => format!("gate `{id}`"),
        [Seg::Key(g), Seg::Key(id), rest @ ..] if g == "gates" => {
            format!("`{}` {word} gate `{id}`", join(rest))
        }
        other => format!("`{}`", join(other)),
    }
}

// ---- unknown keys ----

/// `parsing` keys, which people often write one level too high.
const PARSING_KEYS: [&str; 13] = [
    "strategy",
    "format",
    "violations_path",
    "field_map",
    "fixable_when",
    "fix_edits",
    "line_offset",
    "column_offset",
    "extract",
    "pattern",
    "headers",
    "stream",
    "defaults",
];

/// Gate keys, which people often write at the top level or inside `parsing`.
const GATE_KEYS: [&str; 10] = [
    "command",
    "file_types",
    "fix",
    "fix_hint",
    "success",
    "timeout_s",
    "optional",
    "allow_fail",
    "run_on",
    "cache",
];

fn unknown_key(field: &str, expected: &[&'static str], found: Option<&Found>) -> String {
    let mapping = parent(found);
    let at = place(&mapping);
    if let Some(best) = closest(field, expected.iter().copied()) {
        return format!(
            "unknown key `{field}` {at} — did you mean `{best}`? `qgates schema` lists every key."
        );
    }
    if let Some(hint) = misplaced(field, &mapping) {
        return format!("`{field}` does not belong {at}: {hint}");
    }
    if expected.len() <= 10 {
        format!(
            "unknown key `{field}` {at}. Use one of: {}.",
            expected.join(", ")
        )
    } else {
        format!("unknown key `{field}` {at}. Remove or rename it; `qgates schema` lists every key.")
    }
}

/// A known key written at the wrong level, and where it goes.
fn misplaced(field: &str, mapping: &[Seg]) -> Option<String> {
    let in_gate = matches!(mapping, [Seg::Key(g), Seg::Key(_)] if g == "gates");
    let in_parsing = matches!(mapping, [Seg::Key(g), Seg::Key(_), Seg::Key(p)] if g == "gates" && p == "parsing");
    if in_gate && PARSING_KEYS.contains(&field) {
        Some("it is a `parsing` key. Move it under the gate's `parsing:`.".to_string())
    } else if in_parsing && GATE_KEYS.contains(&field) {
        Some("it is a gate key. Move it out of `parsing:`, one level up.".to_string())
    } else if mapping.is_empty() && (GATE_KEYS.contains(&field) || field == "parsing") {
        Some("it is a gate key. Define the gate under `gates:`, e.g. `gates: { my_gate: { command: [...], parsing: {...} } }`.".to_string())
    } else {
        None
    }
}

// ---- unknown enum values ----

/// What a value of this key is called in a sentence.
fn value_noun(found: Option<&Found>) -> String {
    let Some(f) = found else {
        return "value".to_string();
    };
    let parent_key = f.path.len().checked_sub(2).and_then(|i| f.path[i].key());
    if parent_key == Some("severity_map") {
        return "severity".to_string();
    }
    match f.key() {
        Some("strategy") => "strategy".to_string(),
        Some("kind") => "gate kind".to_string(),
        Some("run_on") => "trigger".to_string(),
        Some("column_unit") => "column unit".to_string(),
        Some("cache") => "cache policy".to_string(),
        Some("stream") => "stream".to_string(),
        Some("format") => "JSON format".to_string(),
        Some("extract") => "extract mode".to_string(),
        Some("input") => "fix input".to_string(),
        Some(k) => format!("value for `{k}`"),
        None => "value".to_string(),
    }
}

fn unknown_value(variant: &str, expected: &[&'static str], found: Option<&Found>) -> String {
    let noun = value_noun(found);
    let at = found
        .map(|f| format!(" {}", value_place(f)))
        .unwrap_or_default();
    let choices = expected.join(", ");
    match closest(variant, expected.iter().copied()) {
        Some(best) => format!(
            "unknown {noun} `{variant}`{at} — did you mean `{best}`? Use one of: {choices}."
        ),
        None => format!("unknown {noun} `{variant}`{at}. Use one of: {choices}."),
    }
}

/// Where a value sits: "in gate `a`" for a key's value, "in `run_on` of gate `a`" for a list
/// item, "for `W` in `severity_map` of gate `a`" for a map's value.
fn value_place(f: &Found) -> String {
    let path = &f.path;
    let parent = &path[..path.len().saturating_sub(1)];
    if f.in_list() {
        return place(parent);
    }
    match (parent.last(), path.last()) {
        (Some(Seg::Key(map)), Some(Seg::Key(word))) if map == "severity_map" => {
            format!("for `{word}` {}", place(parent))
        }
        _ => place(&gate_part(path)),
    }
}

/// The gate a path is in, if any (`gates.a.parsing.strategy` → `gates.a`), else the path's parent.
fn gate_part(path: &[Seg]) -> Vec<Seg> {
    match path {
        [Seg::Key(g), Seg::Key(_), ..] if g == "gates" => path[..2].to_vec(),
        _ => path[..path.len().saturating_sub(1)].to_vec(),
    }
}

// ---- missing keys ----

/// A missing key is reported where its mapping starts, which for a block mapping is its first key;
/// we point at the mapping's own key instead (the gate id), so the message reads from the top.
fn missing_key(field: &str, found: Option<&Found>, tree: Option<&Tree>) -> (Option<Pos>, String) {
    let mapping: Vec<Seg> = match found {
        Some(f) if f.is_key => f.path[..f.path.len() - 1].to_vec(),
        Some(f) => f.path.clone(),
        None => Vec::new(),
    };
    let keys: Vec<&str> = mapping.iter().map(|s| s.key().unwrap_or("")).collect();
    let at = tree.and_then(|t| t.key(&keys));
    let owner = match mapping.as_slice() {
        [] => "the file".to_string(),
        path => subject(path, "of"),
    };
    let fix = match (keys.last().copied().unwrap_or(""), field) {
        (_, "version") => "Add `version: 1` at the top of the file.".to_string(),
        (_, "gates") => "Add `gates:` with at least one gate; `qgates init` writes an example.".to_string(),
        (_, "command") => "Add the tool's argv, e.g. `command: [\"ruff\", \"check\"]`.".to_string(),
        (_, "parsing") => {
            "Add how its output is read, e.g. `parsing: { strategy: exit_code }` for pass/fail only.".to_string()
        }
        (_, "strategy") => "Add `strategy:` with one of json_violations, text_violations, sarif, exit_code, junit, coverage.".to_string(),
        ("fix_edits", key) => format!("Add `{key}:`, the path to it (e.g. `{key}: {key}`)."),
        (_, key) => format!("Add `{key}:`; `qgates schema` describes it."),
    };
    (at, format!("{owner} has no `{field}`. {fix}"))
}

// ---- duplicate keys ----

pub(super) fn duplicate_gate(id: &str) -> String {
    format!("gate `{id}` is defined twice. Rename or remove one of them.")
}

fn duplicate_key(key: Option<&str>, found: Option<&Found>) -> String {
    let mapping = parent(found);
    let key = key
        .map(str::to_string)
        .or_else(|| found.and_then(|f| f.key().map(str::to_string)));
    match (key, mapping.as_slice()) {
        (Some(k), [Seg::Key(g)]) if g == "gates" => duplicate_gate(&k),
        (Some(k), m) => format!("`{k}` is written twice {}. Remove one of them.", place(m)),
        (None, m) => format!("a key is written twice {}. Remove one of them.", place(m)),
    }
}

// ---- wrong types ----

/// What a value must be, and an example of it.
type Expectation = (&'static str, &'static str);

/// What a key's value must be, and an example, by the key's path.
fn expectation(path: &[Seg]) -> Option<Expectation> {
    let keys: Vec<&str> = path.iter().filter_map(Seg::key).collect();
    let last = *keys.last()?;
    let parent = keys.len().checked_sub(2).map(|i| keys[i]).unwrap_or("");
    if keys.len() == 2 && keys[0] == "gates" {
        return Some((
            "a mapping (the gate's definition)",
            "{ command: [\"ruff\", \"check\"], parsing: { strategy: exit_code } }",
        ));
    }
    entry_expectation(parent, last).or_else(|| key_expectation(last))
}

/// The entries of the mappings whose keys are the user's own (tool words, variables, fields).
fn entry_expectation(parent: &str, key: &str) -> Option<Expectation> {
    Some(match (parent, key) {
        ("field_map", _) | ("fix_edits", _) => {
            ("a path inside each item, as a string", "location/row")
        }
        ("defaults", "fixable") => ("true or false", "true"),
        ("defaults", _) => (
            "a string",
            "\"File requires formatting. Fix: ruff format {file}\"",
        ),
        ("severity_map", _) => (
            "one of error, warning, info, hint",
            "{ CRITICAL: error, SUGGESTION: hint }",
        ),
        ("env", _) => ("a string", "{ PYTHONPATH: src }"),
        _ => return None,
    })
}

/// What the value of a key must be, whatever mapping it is in.
fn key_expectation(key: &str) -> Option<Expectation> {
    Some(match key {
        // Keys of the file, and those that choose the files a gate checks.
        "version" => ("the number 1", "version: 1"),
        "gates" => (
            "a mapping of gate ids to gate definitions",
            "gates: { ruff_lint: { command: [...], parsing: {...} } }",
        ),
        "active_gates" => ("a list of gate ids", "[ruff_format, ruff_lint]"),
        "project_scope" | "scope" => (
            "a mapping with include_globs and exclude_globs",
            "{ include_globs: [\"src/**/*.py\"] }",
        ),
        "include_globs" | "exclude_globs" => ("a list of globs", "[\"src/**/*.py\"]"),
        "file_types" => ("a list of file endings", "[\".py\", \".pyi\"]"),
        "cache_inputs" => ("a list of file paths", "[pyproject.toml]"),
        "args_when" => (
            "a mapping of places (FILE or FILE#KEY) to lists of arguments",
            "{ \"pyproject.toml#tool.bandit\": [-c, pyproject.toml] }",
        ),
        "own_exclude" => (
            "a list of FILE#KEY places",
            "[\"pyproject.toml#tool.mypy.exclude\"]",
        ),
        "own_selection" => (
            "a list of files or FILE#KEY places",
            "[\"pyproject.toml#tool.mypy.files\"]",
        ),
        // How a gate runs and what its exit codes mean.
        "command" => ("a list of strings (argv)", "[\"ruff\", \"check\"]"),
        "parsing" => (
            "a mapping with at least `strategy`",
            "{ strategy: exit_code }",
        ),
        "fix" => (
            "a mapping with the fixer's `command`",
            "{ command: [\"ruff\", \"format\", \"-\"] }",
        ),
        "success" => (
            "a mapping with exit_codes_ok and exit_codes_findings",
            "{ exit_codes_ok: [0], exit_codes_findings: [1] }",
        ),
        "exit_codes_ok" | "exit_codes_findings" | "exit_codes_incomplete" => {
            ("a list of whole numbers", "[0]")
        }
        "timeout_s" => ("a positive number of seconds", "300"),
        "env" => (
            "a mapping of variable names to strings",
            "{ PYTHONPATH: src }",
        ),
        "optional" | "allow_fail" | "pass_files" | "new_only" => ("true or false", "true"),
        "run_on" => ("a list of triggers (save, command, ci)", "[command, ci]"),
        "max_files_per_run" => ("a whole number of at least 1", "100"),
        _ => return reading_key_expectation(key),
    })
}

/// What the value of a key that says how a tool's output is read must be.
fn reading_key_expectation(key: &str) -> Option<Expectation> {
    Some(match key {
        "severity_map" => (
            "a mapping of tool words to error, warning, info or hint",
            "{ CRITICAL: error, SUGGESTION: hint }",
        ),
        "line_offset" | "column_offset" => ("a whole number", "1"),
        "tab_stops" | "tab_width" => ("a whole number of columns from 1 to 64", "8"),
        "field_map" => (
            "a mapping of Violation fields to paths",
            "{ file: filename, line: location/row, message: message }",
        ),
        "fix_edits" => (
            "a mapping of edit fields to paths",
            "{ path: fix/edits, content: content, line: location/row, … }",
        ),
        "defaults" => (
            "a mapping of Violation fields to values",
            "{ code: FORMAT, message: \"…\" }",
        ),
        "pattern" => (
            "a regex, as a string",
            "'^(?P<file>[^:]+):(?P<line>\\d+): (?P<message>.+)$'",
        ),
        "headers" => ("a list of regexes, as strings", "['^(?P<file>\\S.*)$']"),
        "violations_path" => ("a JSON Pointer, as a string", "\"/*/messages\""),
        "fixable_when" => (
            "a condition, as a string",
            "\"fix/applicability == 'safe'\"",
        ),
        // One word of a fixed list, or free text.
        "strategy" => (
            "one of json_violations, text_violations, sarif, exit_code, junit, coverage",
            "exit_code",
        ),
        "kind" => (
            "one of format, lint, typecheck, test, e2e, deps, other",
            "lint",
        ),
        "column_unit" => ("one of char, byte, utf16", "char"),
        "cache" => ("one of per_file, workspace, none", "workspace"),
        "stream" => ("one of stdout, stderr, both", "stderr"),
        "format" => (
            "one of json, jsonl (json_violations), coverage_json, cobertura, lcov (coverage)",
            "jsonl",
        ),
        "name" | "fix_hint" | "cwd" | "parent_branch" | "title" => ("a string", "\"Ruff Lint\""),
        _ => return None,
    })
}

/// What each item of a list key must be.
fn item_expectation(key: &str) -> &'static str {
    match key {
        "command" => "one string (one argument)",
        "file_types" => "a file ending such as \".py\"",
        "include_globs" | "exclude_globs" => "a glob string",
        "cache_inputs" => "a file path",
        "own_selection" => "a file, or FILE#KEY",
        "own_exclude" => "a FILE#KEY place",
        "active_gates" => "a gate id",
        "exit_codes_ok" | "exit_codes_findings" | "exit_codes_incomplete" => "a whole number",
        "run_on" => "one of save, command, ci",
        _ => "a single value",
    }
}

fn wrong_type(e: &Error, found: Option<&Found>) -> String {
    if found.is_some_and(|f| f.path.is_empty()) {
        return "the file must be a YAML mapping of keys such as `version: 1` and `gates:`, not a list or a single value. Start from `qgates init`.".to_string();
    }
    let Some(f) = found else {
        return format!(
            "{}. Give the value the type its key needs; `qgates schema` documents each key.",
            library_text(e)
        );
    };
    if f.in_list() {
        let list = &f.path[..f.path.len() - 1];
        let key = f.key().unwrap_or("");
        return format!(
            "each item of {} must be {}.",
            subject(list, "in"),
            item_expectation(key)
        );
    }
    let who = subject(&f.path, "in");
    let Some((want, example)) = expectation(&f.path) else {
        return format!(
            "{who} has the wrong type ({}). `qgates schema` documents each key.",
            library_text(e)
        );
    };
    // The classic mistake: a shell string where an argv list is wanted. Show the split form.
    if f.key() == Some("command")
        && let Some(s) = f.scalar()
    {
        let argv: Vec<String> = s.split_whitespace().map(|a| format!("\"{a}\"")).collect();
        return format!(
            "{who} must be {want}, not one string: write [{}]. Commands never go through a shell.",
            argv.join(", ")
        );
    }
    if matches!(f.node, super::tree::Node::Scalar(None)) {
        return format!("{who} has no value; it must be {want}, e.g. {example}.");
    }
    format!("{who} must be {want}, e.g. {example}.")
}
