//! A gate's `parsing:` section, checked and compiled: the strategy's keys, the text pattern and
//! its defaults, the JSON paths (`violations_path`, `field_map`, `fix_edits`) and conditions,
//! and a coverage report's format and thresholds.

use serde_saphyr::Spanned;

use super::error::Problems;
use super::json_paths::{parse_condition, parse_field_path, parse_pointer};
use super::model::{
    OutputFormat, RawDefaults, RawFieldMap, RawFixEdits, RawParsing, SpannedString, Strategy,
};
use super::spec::*;
use super::suggest::closest;
use crate::core::violation::Severity;

mod text;

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

/// Where a reader is written: its path in the file, and its name in messages (a reader of
/// `parsing.also` is not the gate's own `parsing`).
struct Section {
    path: Vec<String>,
    name: String,
}

impl Section {
    fn new(id: &str, also: Option<usize>) -> Self {
        let mut path = vec!["gates".to_string(), id.to_string(), "parsing".to_string()];
        let name = match also {
            Some(i) => {
                path.extend(["also".to_string(), i.to_string()]);
                format!("parsing.also[{i}]")
            }
            None => "parsing".to_string(),
        };
        Section { path, name }
    }

    /// The path of `keys` inside this section.
    fn of<'a>(&'a self, keys: &[&'a str]) -> Vec<&'a str> {
        self.path
            .iter()
            .map(String::as_str)
            .chain(keys.iter().copied())
            .collect()
    }
}

/// The gate's reader and the readers of `parsing.also`.
pub(super) fn compile_parsing(
    id: &str,
    pr: &RawParsing,
    p: &mut Problems,
) -> Option<(Reader, Vec<Reader>)> {
    let before = p.count();
    let main = compile_reader(id, pr, &Section::new(id, None), p);
    let mut also = Vec::new();
    for (i, extra) in pr.also.iter().flatten().enumerate() {
        let at = Section::new(id, Some(i));
        if extra.also.is_some() {
            let place = p.key(&at.of(&["also"]));
            p.at(place, format!("gate `{id}`: a reader under `parsing.also` has an `also` of its own. List every extra reader under the gate's one `parsing.also`."));
        }
        also.extend(compile_reader(id, extra, &at, p));
    }
    if p.count() > before {
        None
    } else {
        Some((main?, also))
    }
}

fn compile_reader(id: &str, pr: &RawParsing, at: &Section, p: &mut Problems) -> Option<Reader> {
    let Some(strategy) = &pr.strategy else {
        let place = p.key(&at.of(&[]));
        p.at(place, format!("`{}` of gate `{id}` has no `strategy`. Add `strategy:` with one of json_violations, text_violations, sarif, exit_code, junit, coverage.", at.name));
        return None;
    };
    let before = p.count();
    check_strategy_keys(id, strategy.value, pr, at, p);
    let (spec, known) = match strategy.value {
        Strategy::Sarif => (Some(ParserSpec::Sarif), sarif_fields()),
        Strategy::ExitCode => (Some(ParserSpec::ExitCode), Vec::new()),
        Strategy::Coverage => (
            compile_coverage(id, pr, &at.name, p).map(ParserSpec::Coverage),
            Vec::new(),
        ),
        Strategy::Junit => (Some(ParserSpec::Junit), Vec::new()),
        Strategy::TextViolations => match text::compile_text(id, pr, strategy, p) {
            Some((spec, groups)) => (Some(ParserSpec::Text(spec)), groups),
            None => (None, Vec::new()),
        },
        Strategy::JsonViolations => {
            let (spec, known) = compile_json(id, pr, strategy, at, p);
            (Some(ParserSpec::Json(spec)), known)
        }
    };
    let templates = compile_templates(id, pr, &known, p);
    let tabs = tabs(id, pr, p);
    if p.count() > before {
        return None;
    }
    Some(Reader {
        spec: spec?,
        templates,
        column_unit: pr.column_unit,
        tabs,
        output_file: None,
    })
}

/// How the reader's tool counts a tab: `tab_stops` or `tab_width`, from 1 to 64, not both.
fn tabs(id: &str, pr: &RawParsing, p: &mut Problems) -> TabCount {
    for (key, n) in [("tab_stops", &pr.tab_stops), ("tab_width", &pr.tab_width)] {
        if let Some(n) = n.as_ref().filter(|n| !(1..=64).contains(&n.value)) {
            p.at(
                n.referenced,
                format!("gate `{id}`: {key} must be a number of columns from 1 to 64, e.g. 8."),
            );
        }
    }
    match (&pr.tab_stops, &pr.tab_width) {
        (Some(_), Some(width)) => {
            p.at(width.referenced, format!("gate `{id}`: tab_stops and tab_width both say how the tool counts a tab. Keep the one it does: tab_stops for a tab that reaches the next multiple, tab_width for a fixed count."));
            TabCount::One
        }
        (Some(n), None) => TabCount::Stops(n.value),
        (None, Some(n)) => TabCount::Width(n.value),
        (None, None) => TabCount::One,
    }
}

/// The fields SARIF results give, for templates: every Violation field a text can hold.
fn sarif_fields() -> Vec<String> {
    VIOLATION_FIELDS
        .iter()
        .filter(|f| **f != "fixable")
        .map(|f| f.to_string())
        .collect()
}

fn compile_templates(id: &str, pr: &RawParsing, known: &[String], p: &mut Problems) -> Templates {
    let Some(t) = &pr.templates else {
        return Templates::default();
    };
    let fields = Fields::new(id, known, "the fields read");
    Templates {
        code: fields.template(&t.code, "templates.code", p),
        message: fields.template(&t.message, "templates.message", p),
        url: fields.template(&t.url, "templates.url", p),
    }
}

/// The fields a reader's templates may name.
struct Fields<'a> {
    id: &'a str,
    known: &'a [String],
    /// What `known` is, in messages ("the pattern's named groups").
    desc: &'a str,
}

impl<'a> Fields<'a> {
    fn new(id: &'a str, known: &'a [String], desc: &'a str) -> Self {
        Fields { id, known, desc }
    }

    /// The template `s` (the value of `key`); each placeholder that names none of the fields is
    /// reported.
    fn template(&self, s: &Option<SpannedString>, key: &str, p: &mut Problems) -> Option<Template> {
        let (id, known, desc) = (self.id, self.known, self.desc);
        let s = s.as_ref()?;
        let t = Template::parse(&s.value);
        for field in t.fields().filter(|f| !known.iter().any(|k| k == f)) {
            let head =
                format!("gate `{id}`: {key} uses `{{{field}}}`, which matches none of {desc}");
            let message = match closest(field, known.iter().map(String::as_str)) {
                Some(best) => format!("{head} — did you mean `{{{best}}}`?"),
                None => {
                    let names = if known.is_empty() {
                        "there are none".to_string()
                    } else {
                        known.join(", ")
                    };
                    format!(
                        "{head} ({names}). Capture or map `{field}`, or write `{{{{` for a literal brace."
                    )
                }
            };
            p.at(s.referenced, message);
        }
        Some(t)
    }
}

fn compile_defaults(d: Option<&RawDefaults>, fields: &Fields, p: &mut Problems) -> Defaults {
    let Some(d) = d else {
        return Defaults::default();
    };
    let file = fields.template(&d.file, "defaults.file", p);
    let code = fields.template(&d.code, "defaults.code", p);
    let message = fields.template(&d.message, "defaults.message", p);
    let url = fields.template(&d.url, "defaults.url", p);
    let severity = d
        .severity
        .as_ref()
        .and_then(|s| default_severity(fields.id, s, p));
    Defaults {
        file,
        code,
        message,
        severity,
        url,
        fixable: d.fixable,
    }
}

/// Whether `defaults.message` is set.
fn has_default_message(pr: &RawParsing) -> bool {
    pr.defaults.as_ref().is_some_and(|d| d.message.is_some())
}

/// Reports `parsing` keys the chosen strategy does not read: a silently ignored `pattern` is
/// usually a sign that the strategy itself is the mistake.
fn check_strategy_keys(
    id: &str,
    strategy: Strategy,
    pr: &RawParsing,
    at: &Section,
    p: &mut Problems,
) {
    let present = [
        ("format", pr.format.is_some()),
        ("violations_path", pr.violations_path.is_some()),
        ("field_map", pr.field_map.is_some()),
        ("filter", pr.filter.is_some()),
        ("fixable_when", pr.fixable_when.is_some()),
        ("fix_edits", pr.fix_edits.is_some()),
        ("line_offset", pr.line_offset.is_some()),
        ("column_offset", pr.column_offset.is_some()),
        ("tab_stops", pr.tab_stops.is_some()),
        ("tab_width", pr.tab_width.is_some()),
        ("extract", pr.extract.is_some()),
        ("pattern", pr.pattern.is_some()),
        ("headers", pr.headers.is_some()),
        ("stream", pr.stream.is_some()),
        ("defaults", pr.defaults.is_some()),
        ("templates", pr.templates.is_some()),
        ("min_percent", pr.min_percent.is_some()),
        ("min_diff_percent", pr.min_diff_percent.is_some()),
        ("diff_severity", pr.diff_severity.is_some()),
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
        let place = p.key(&at.of(&[key]));
        p.at(
            place,
            format!(
                "gate `{id}`: `{}.{key}` is not used by strategy {}; only {} reads it. Remove it, or change the strategy.",
                at.name,
                strategy.as_str(),
                users.join(" and ")
            ),
        );
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

fn compile_json(
    id: &str,
    pr: &RawParsing,
    strategy: &Spanned<Strategy>,
    at: &Section,
    p: &mut Problems,
) -> (JsonSpec, Vec<String>) {
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
    if field_map.message.is_none() && !has_default_message(pr) {
        let at = p
            .tree
            .key(&at.of(&["field_map"]))
            .unwrap_or(strategy.referenced.into());
        p.at(at, format!("gate `{id}`: json_violations needs `field_map.message` (where each item's message is) or `defaults.message`. Add one."));
    }
    let mut condition = |s: &Option<SpannedString>, key: &str| {
        s.as_ref().and_then(|s| match parse_condition(&s.value) {
            Ok(c) => Some(c),
            Err(why) => {
                p.at(
                    s.referenced,
                    format!("gate `{id}`: {key} `{}` cannot be read: {why}", s.value),
                );
                None
            }
        })
    };
    let fixable_when = condition(&pr.fixable_when, "fixable_when");
    let filter = condition(&pr.filter, "filter");
    let fix_edits = pr
        .fix_edits
        .as_ref()
        .and_then(|f| compile_fix_edits(id, f, p));
    let known: Vec<String> = field_map.entries().map(|(k, _)| k.to_string()).collect();
    let fields = Fields::new(id, &known, "the field_map keys");
    let defaults = compile_defaults(pr.defaults.as_ref(), &fields, p);
    let format = match pr.format.as_ref().map(|f| (f.value, f.referenced)) {
        None | Some((OutputFormat::Json, _)) => JsonFormat::Json,
        Some((OutputFormat::Jsonl, _)) => JsonFormat::Jsonl,
        Some((other, place)) => {
            p.at(place, format!("gate `{id}`: `{}.format: {}` names a coverage report; json_violations reads `json` or `jsonl`. Use one of those, or `strategy: coverage`.", at.name, other.as_str()));
            JsonFormat::Json
        }
    };
    if let Some(e) = pr.extract.as_ref().filter(|e| e.value == Extract::Prefixed)
        && format != JsonFormat::Jsonl
    {
        p.at(
            e.referenced,
            format!(
                "gate `{id}`: `{}.extract: prefixed` reads JSON Lines: add `format: jsonl`.",
                at.name
            ),
        );
    }
    let spec = JsonSpec {
        format,
        violations_path,
        field_map,
        filter,
        fixable_when,
        fix_edits,
        line_offset: pr.line_offset.as_ref().map_or(0, |s| s.value),
        column_offset: pr.column_offset.as_ref().map_or(0, |s| s.value),
        extract: pr.extract.as_ref().map(|s| s.value),
        defaults,
    };
    (spec, known)
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

/// `strategy: coverage`: the report's format (a coverage format, not a json_violations layout)
/// and the thresholds, each a percentage.
pub(super) fn compile_coverage(
    id: &str,
    pr: &RawParsing,
    section: &str,
    p: &mut Problems,
) -> Option<CoverageSpec> {
    let before = p.count();
    let format = match pr.format.as_ref().map(|f| (f.value, f.referenced)) {
        None => None,
        Some((OutputFormat::CoverageJson, _)) => Some(CoverageFormat::CoverageJson),
        Some((OutputFormat::Cobertura, _)) => Some(CoverageFormat::Cobertura),
        Some((OutputFormat::Lcov, _)) => Some(CoverageFormat::Lcov),
        Some((other, place)) => {
            p.at(place, format!("gate `{id}`: `{}.format: {}` is a json_violations layout; a coverage report is `coverage_json`, `cobertura` or `lcov`. Use one of those, or leave `format` out to have the report recognized.", section, other.as_str()));
            None
        }
    };
    let mut percent = |v: &Option<Spanned<f64>>, key: &str| -> Option<f64> {
        let v = v.as_ref()?;
        if !(0.0..=100.0).contains(&v.value) {
            p.at(v.referenced, format!("gate `{id}`: `{}.{key}` is {}, but a percentage is between 0 and 100. Write e.g. `{key}: 80`.", section, v.value));
            return None;
        }
        Some(v.value)
    };
    let min_percent = percent(&pr.min_percent, "min_percent").unwrap_or(DEFAULT_MIN_PERCENT);
    let min_diff_percent = percent(&pr.min_diff_percent, "min_diff_percent");
    if p.count() > before {
        return None;
    }
    Some(CoverageSpec {
        format,
        min_percent,
        min_diff_percent,
        diff_severity: pr
            .diff_severity
            .as_ref()
            .map_or(Severity::Info, |s| s.value),
    })
}
