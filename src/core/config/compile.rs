//! Checks a parsed `quality.yaml` and compiles it into the engine's `Config` (each gate's
//! `parsing:` in `parsing`). Every problem is collected, each with its place and a fix.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use indexmap::IndexMap;

use super::error::{ConfigError, Problems};
use super::gate_checks::{check_command, check_exit_codes, check_numbers, check_strings};
use super::limits::{MAX_GATES, MAX_GLOBS_PER_LIST, MAX_PATTERN_CHARS};
use super::model::{RawCache, RawConfig, RawFix, RawGate, RawGlobs, SpannedString};
use super::parsing::compile_parsing;
use super::spec::*;
use super::suggest::closest;
use super::tree::{LazyTree, Pos};
use super::{local_presets, presets};
use crate::core::cache::hash::stable_hash;
use crate::core::cache::remote::StoreUrl;
use crate::core::violation::Severity;
use serde_saphyr::Spanned;

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
    // Every gate is checked, active or not, so a switched-off gate's mistake shows today.
    let mut compiled: IndexMap<&str, Gate> = IndexMap::new();
    // Where `preset: ./file.yaml` is taken from; the embedded default names none.
    let base = match &source {
        ConfigSource::File(path) => local_presets::base_of(path),
        ConfigSource::Embedded => None,
    };
    for (id, g) in &raw.gates.value {
        p.fallback = p.key(&["gates", &id.value]);
        let Some(g) = with_preset(&id.value, g, base.as_deref(), &mut p) else {
            continue;
        };
        if let Some(gate) = compile_gate(&id.value, &g, &mut p) {
            compiled.insert(&id.value, gate);
        }
    }
    p.fallback = Pos { line: 1, column: 1 };
    let active = active_gate_ids(&raw, &mut p);
    let gates = active
        .iter()
        .filter_map(|id| compiled.shift_remove(id.as_str()))
        .collect();
    let project_scope = raw
        .project_scope
        .as_ref()
        .and_then(|g| compile_globs(g, &mut p));
    let cache = compile_cache(raw.cache.as_ref(), &mut p);
    let config = Config {
        source,
        gates,
        project_scope,
        parent_branch: raw.parent_branch,
        content_hash: stable_hash(text.as_bytes()),
        cache,
        new_only: raw.new_only.unwrap_or(false),
        warm_idle: compile_warm_idle(raw.warm_idle_minutes.as_ref(), &mut p),
    };
    p.into_result(config)
}

/// Gate ids name log files and report entries, so they stay to a safe alphabet.
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
    // Suggestions come from at most MAX_GATES gates: thousands of ids stay cheap to compare.
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
            // A few names show what ids look like; all of them would flood the report.
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
    let include = glob_set(&g.include_globs, false, p);
    let exclude = glob_set(&g.exclude_globs, false, p);
    Some(Globs {
        include: include?,
        exclude: exclude?,
        include_patterns: g.include_globs.iter().map(|s| s.value.clone()).collect(),
        exclude_patterns: g.exclude_globs.iter().map(|s| s.value.clone()).collect(),
    })
}

/// `Some(None)`: no globs given (no filter). `None`: a glob was invalid (reported).
/// `file_globs`: case is ignored and `*` stays within a folder, as for `files:`; scope globs keep
/// their own rules (case kept, `*` crosses folders).
fn glob_set(list: &[SpannedString], file_globs: bool, p: &mut Problems) -> Option<Option<GlobSet>> {
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
        match GlobBuilder::new(&s.value)
            .case_insensitive(file_globs)
            .literal_separator(file_globs)
            .build()
        {
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

/// The gate with its preset's keys filled in; `None` when the preset does not exist or cannot
/// be read (reported). `base`: where a preset file's path is taken from.
fn with_preset(id: &str, g: &RawGate, base: Option<&Path>, p: &mut Problems) -> Option<RawGate> {
    let Some(name) = &g.preset else {
        return Some(g.clone());
    };
    if local_presets::is_path(&name.value) {
        let read = base
            .ok_or_else(|| {
                "a preset file is named by a quality.yaml, not the built-in default".to_string()
            })
            .and_then(|base| local_presets::read(base, &name.value));
        return match read {
            Ok(file) => {
                p.fallback = name.referenced.into();
                Some(presets::merge(g.clone(), &file.gate))
            }
            Err(why) => {
                p.at(
                    name.referenced,
                    format!("gate `{id}`: preset `{}`: {why}", name.value),
                );
                None
            }
        };
    }
    let Some(preset) = presets::find(&name.value) else {
        let hint = match closest(&name.value, presets::names()) {
            Some(best) => format!("did you mean `{best}`?"),
            None => "`qgates presets` lists them.".to_string(),
        };
        p.at(
            name.referenced,
            format!("gate `{id}`: there is no preset `{}` — {hint}", name.value),
        );
        return None;
    };
    p.fallback = name.referenced.into();
    Some(presets::merge(g.clone(), &preset.gate))
}

fn compile_gate(id: &str, g: &RawGate, p: &mut Problems) -> Option<Gate> {
    let before = p.count();
    let command = check_command(id, g, p);
    check_numbers(id, g, p);
    let (exit_codes_ok, exit_codes_findings, exit_codes_incomplete) = check_exit_codes(id, g, p);
    check_strings(id, g, p);
    let scope = g.scope.as_ref().and_then(|s| compile_globs(s, p));
    let files = g
        .files
        .as_ref()
        .and_then(|list| compile_file_globs(id, list, p));
    super::report_dir::check_command(id, g, p);
    let readers = compile_gate_parsing(id, g, p);
    let output_files = super::report_dir::output_files(id, g, p);
    let fix = g.fix.as_ref().and_then(|f| compile_fix(id, g, f, p));
    let warm = super::warm::compile_warm(id, g, p);
    // A coverage reader in `parsing.also` (a test run that measures itself) counts too.
    let reads_coverage = readers.as_ref().is_some_and(|(r, also)| {
        std::iter::once(r)
            .chain(also)
            .any(|r| matches!(r.spec, ParserSpec::Coverage(_)))
    });
    if reads_coverage {
        check_coverage_not_cached(id, g, p);
    }
    if p.count() > before {
        return None;
    }
    let (mut parser, mut also) = readers?;
    for (reader, file) in std::iter::once(&mut parser)
        .chain(&mut also)
        .zip(output_files)
    {
        reader.output_file = file;
    }
    let parts = GateParts {
        command,
        exit_codes_ok,
        exit_codes_findings,
        exit_codes_incomplete,
        scope,
        files,
        parser,
        also,
        fix,
        warm,
    };
    Some(assemble_gate(id, g, parts, reads_coverage))
}

fn check_coverage_not_cached(id: &str, g: &RawGate, p: &mut Problems) {
    if let Some(cache) = g.cache.filter(|c| *c != CachePolicy::None) {
        let at = p.value(&["gates", id, "cache"]);
        p.at(at, format!("gate `{id}` reads a coverage report, and such a gate is never cached (its result depends on the whole test run and on the run's baseline, which no cache key holds), so `cache: {}` cannot apply. Remove `cache`.", cache.as_str()));
    }
}

/// What `compile_gate` compiled and checked of a gate's keys.
struct GateParts {
    command: Vec<String>,
    exit_codes_ok: Vec<i32>,
    exit_codes_findings: Vec<i32>,
    exit_codes_incomplete: Vec<i32>,
    scope: Option<Globs>,
    files: Option<FileGlobs>,
    parser: Reader,
    also: Vec<Reader>,
    fix: Option<FixSpec>,
    warm: Option<WarmSpec>,
}

/// The gate from its checked parts and the keys as written or defaulted. A coverage gate reads
/// the whole test run's report once, without file arguments, after the tests (on save the saved
/// file is newer than any report), never cached (no key holds the totals or the baseline), and
/// fails on its minimums, not on the changed lines it lists (`info` unless `diff_severity`).
fn assemble_gate(id: &str, g: &RawGate, parts: GateParts, reads_coverage: bool) -> Gate {
    let kind = g.kind.unwrap_or_default();
    let pass_files = g
        .pass_files
        .unwrap_or(!reads_coverage && kind != GateKind::Deps);
    let fail_on = g.fail_on.unwrap_or(if reads_coverage {
        Severity::Warning
    } else {
        Severity::Hint
    });
    let run_on = g.run_on.clone().unwrap_or_else(|| {
        if reads_coverage {
            vec![Trigger::Command, Trigger::Ci]
        } else {
            kind.default_run_on()
        }
    });
    let cache = g.cache.unwrap_or(if reads_coverage {
        CachePolicy::None
    } else if pass_files {
        CachePolicy::PerFile
    } else {
        CachePolicy::Workspace
    });
    Gate {
        id: id.to_string(),
        name: g.name.clone().unwrap_or_else(|| id.to_string()),
        kind,
        command: parts.command,
        file_types: g
            .file_types
            .iter()
            .flatten()
            .map(|t| normalize_file_type(t))
            .collect(),
        files: parts.files,
        scope: parts.scope,
        parser: parts.parser,
        also: parts.also,
        fix: parts.fix,
        fix_hint: g.fix_hint.clone(),
        exit_codes_ok: parts.exit_codes_ok,
        exit_codes_findings: parts.exit_codes_findings,
        exit_codes_incomplete: parts.exit_codes_incomplete,
        timeout: Duration::from_secs_f64(g.timeout_s.as_ref().map_or(120.0, |t| t.value)),
        env: g.env.clone().unwrap_or_default(),
        cwd: g.cwd.as_ref().map(PathBuf::from),
        paths_relative_to: g.paths_relative_to.as_ref().map(PathBuf::from),
        optional: g.optional.unwrap_or(false),
        install: g
            .preset
            .as_ref()
            .and_then(|n| presets::find(&n.value))
            .map(|p| p.about.install.clone()),
        allow_fail: g.allow_fail.unwrap_or(false),
        fail_on,
        pass_files,
        run_on,
        max_files_per_run: g.max_files_per_run.as_ref().map(|m| m.value),
        column_unit: g.column_unit.unwrap_or_default(),
        severity_map: g
            .severity_map
            .iter()
            .flatten()
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), *v))
            .collect(),
        cache,
        cache_inputs: g.cache_inputs.clone().unwrap_or_default(),
        own_selection: g.own_selection.clone().unwrap_or_default(),
        own_exclude: g.own_exclude.clone().unwrap_or_default(),
        args_when: g
            .args_when
            .iter()
            .flatten()
            .map(|(place, args)| (place.clone(), args.clone()))
            .collect(),
        exclusive: g.exclusive.unwrap_or(false),
        warm: parts.warm,
        definition_hash: definition_hash(id, g),
    }
}

/// The gate's parsing, which a gate (or its preset) must give.
fn compile_gate_parsing(id: &str, g: &RawGate, p: &mut Problems) -> Option<(Reader, Vec<Reader>)> {
    let Some(parsing) = &g.parsing else {
        let at = p.key(&["gates", id]);
        p.at(at, format!("gate `{id}` has no `parsing`. Add how its output is read, e.g. `parsing: {{ strategy: exit_code }}` for pass/fail only, or use a `preset`."));
        return None;
    };
    let before = p.count();
    let spec = compile_parsing(id, parsing, p);
    if p.count() > before
        && let (Some(name), Some(preset)) = (
            &g.preset,
            g.preset.as_ref().and_then(|n| presets::find(&n.value)),
        )
        && presets::replaces_parsing(g, &preset.gate)
    {
        let at = p.value(&["gates", id, "parsing", "strategy"]);
        p.at(at, format!("gate `{id}`: its parsing strategy replaces preset `{}`'s, so none of the preset's parsing keys are used. Give the whole `parsing` section, or keep the preset's strategy and set only the keys to change.", name.value));
    }
    spec
}

/// Compiles `files:` globs: a glob without `/` matches a file's name, one with `/` its path.
fn compile_file_globs(id: &str, list: &[SpannedString], p: &mut Problems) -> Option<FileGlobs> {
    let mut names = Vec::new();
    let mut paths = Vec::new();
    for s in list {
        if s.value.trim().is_empty() {
            p.at(s.referenced, format!("gate `{id}`: an entry of `files` is empty. Give a glob such as \"*.sh\" or \"Dockerfile\"."));
        } else if s.value.contains('/') {
            paths.push(Spanned::new(
                s.value.trim_start_matches("./").to_string(),
                s.referenced,
                s.defined,
            ));
        } else {
            names.push(s.clone());
        }
    }
    let names = glob_set(&names, true, p);
    let paths = glob_set(&paths, true, p);
    Some(FileGlobs {
        names: names?,
        paths: paths?,
        patterns: list.iter().map(|s| s.value.clone()).collect(),
    })
}

/// Hashes the gate as run (preset filled in) without places (`Spanned` serializes its value), so
/// a line added above a gate keeps its cached results, while a changed preset drops them.
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
        exit_codes_ok: f.exit_codes_ok.clone().unwrap_or_else(|| vec![0]),
        title: f
            .title
            .clone()
            .unwrap_or_else(|| format!("Fix with {}", g.name.as_deref().unwrap_or(id))),
    })
}

/// `warm_idle_minutes`: more than nothing; 15 minutes when not set.
fn compile_warm_idle(raw: Option<&Spanned<f64>>, p: &mut Problems) -> Duration {
    match raw {
        None => Duration::from_secs(15 * 60),
        Some(m) if m.value > 0.0 && m.value.is_finite() && m.value <= 10_080.0 => {
            Duration::from_secs_f64(m.value * 60.0)
        }
        Some(m) => {
            p.at(m.referenced, "warm_idle_minutes must be more than 0 and at most a week (10080), e.g. 15 (the default).");
            Duration::from_secs(15 * 60)
        }
    }
}

/// The longest `cache.timeout_ms`: a shared cache that needs more costs more than it saves.
const MAX_TIMEOUT_MS: u64 = 600_000;

/// The `cache:` section; a `remote` URL qgates cannot use is reported at its place.
fn compile_cache(raw: Option<&RawCache>, p: &mut Problems) -> CacheSettings {
    let mut settings = CacheSettings::default();
    let Some(raw) = raw else {
        return settings;
    };
    if let Some(url) = &raw.remote {
        match StoreUrl::parse(&url.value) {
            Ok(parsed) => settings.remote = Some(parsed),
            Err(e) => p.at(url.referenced, format!("cache.remote: {e}")),
        }
    }
    settings.read_only = raw.read_only.unwrap_or(false);
    if let Some(t) = &raw.timeout_ms {
        if (1..=MAX_TIMEOUT_MS).contains(&t.value) {
            settings.timeout = Duration::from_millis(t.value);
        } else {
            p.at(
                t.referenced,
                format!("cache.timeout_ms must be between 1 and {MAX_TIMEOUT_MS} milliseconds, e.g. 2000 (the default)."),
            );
        }
    }
    settings
}
