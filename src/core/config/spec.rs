//! The checked, compiled configuration the engine runs: regexes compiled, pointers parsed,
//! defaults filled in.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use globset::GlobSet;
use regex::Regex;

pub use super::model::{
    CachePolicy, ColumnUnit, Extract, GateKind, JsonFormat, OutputStream, TabCount, Trigger,
};
use crate::core::violation::Severity;

/// Where the configuration came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    /// The built-in Python default (no `quality.yaml` in the workspace).
    Embedded,
    File(PathBuf),
}

#[derive(Debug, Clone)]
pub struct Config {
    pub source: ConfigSource,
    /// The active gates, in report order.
    pub gates: Vec<Gate>,
    pub project_scope: Option<Globs>,
    pub parent_branch: Option<String>,
    /// Hash of the configuration text (trust and cache keys).
    pub content_hash: String,
    /// The `cache:` section (the shared store), before the environment's word on it.
    pub cache: CacheSettings,
    /// Only new findings fail (`core::novelty`).
    pub new_only: bool,
    /// How long a warm process is kept after its last check (`core::warm`).
    pub warm_idle: Duration,
}

/// The `cache:` section as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheSettings {
    /// The shared store, if any.
    pub remote: Option<crate::core::cache::remote::StoreUrl>,
    pub read_only: bool,
    /// For all of one run's work with the shared store.
    pub timeout: Duration,
}

impl Default for CacheSettings {
    fn default() -> Self {
        CacheSettings {
            remote: None,
            read_only: false,
            timeout: Duration::from_millis(2000),
        }
    }
}

impl Config {
    pub fn gate(&self, id: &str) -> Option<&Gate> {
        self.gates.iter().find(|g| g.id == id)
    }
}

/// Compiled include/exclude globs; an empty include list includes everything.
#[derive(Debug, Clone)]
pub struct Globs {
    pub include: Option<GlobSet>,
    pub exclude: Option<GlobSet>,
    pub include_patterns: Vec<String>,
    pub exclude_patterns: Vec<String>,
}

impl Globs {
    /// Whether a root-relative POSIX path passes these globs.
    pub fn matches(&self, rel: &str) -> bool {
        !self.exclude.as_ref().is_some_and(|ex| ex.is_match(rel))
            && self.include.as_ref().is_none_or(|inc| inc.is_match(rel))
    }
}

#[derive(Debug, Clone)]
pub struct Gate {
    pub id: String,
    pub name: String,
    pub kind: GateKind,
    pub command: Vec<String>,
    /// Lower-case endings including the dot; with `files` empty too: every file.
    pub file_types: Vec<String>,
    /// `files:` globs (a file matches these or `file_types`).
    pub files: Option<FileGlobs>,
    pub scope: Option<Globs>,
    pub parser: Reader,
    /// More readers of the same output (`parsing.also`).
    pub also: Vec<Reader>,
    pub fix: Option<FixSpec>,
    pub fix_hint: Option<String>,
    pub exit_codes_ok: Vec<i32>,
    pub exit_codes_findings: Vec<i32>,
    /// The tool found something and did not check every file (never cached).
    pub exit_codes_incomplete: Vec<i32>,
    pub timeout: Duration,
    pub env: BTreeMap<String, String>,
    /// Relative to the workspace root.
    pub cwd: Option<PathBuf>,
    /// The folder the tool's relative paths start from, relative to the workspace root
    /// (default: `cwd`).
    pub paths_relative_to: Option<PathBuf>,
    pub optional: bool,
    /// How to install the tool, from the gate's preset.
    pub install: Option<String>,
    pub allow_fail: bool,
    /// The least severity that fails the gate.
    pub fail_on: Severity,
    pub pass_files: bool,
    /// Where the tool's own configuration chooses its files (`core::runner::own_selection`).
    pub own_selection: Vec<String>,
    /// Where the tool's configuration lists the paths it leaves out (`core::runner::own_selection`).
    pub own_exclude: Vec<String>,
    /// Arguments added when a place is set (`core::runner::own_selection`), in the order written.
    pub args_when: Vec<(String, Vec<String>)>,
    pub run_on: Vec<Trigger>,
    pub max_files_per_run: Option<usize>,
    pub column_unit: ColumnUnit,
    /// Keys lower-cased.
    pub severity_map: BTreeMap<String, Severity>,
    pub cache: CachePolicy,
    pub cache_inputs: Vec<String>,
    /// Never runs while another exclusive gate runs (see `core::engine::exclusive`).
    pub exclusive: bool,
    /// The tool's daemon that answers checks warm (`core::warm`).
    pub warm: Option<WarmSpec>,
    /// Stable hash of everything that defines this gate (part of cache keys).
    pub definition_hash: String,
}

impl Gate {
    /// Whether this gate checks a root-relative path, by `file_types`, `files` and `scope`. A
    /// gate with a `cwd` checks the files in that folder (a subproject's tool does not know the
    /// rest of the repository), unless its `scope` names the files it includes.
    pub fn applies_to(&self, rel: &str) -> bool {
        let typed = !self.file_types.is_empty() || self.files.is_some();
        if typed {
            let lower = rel.to_ascii_lowercase();
            let by_type = self.file_types.iter().any(|t| lower.ends_with(t.as_str()));
            if !(by_type || self.files.as_ref().is_some_and(|f| f.matches(rel))) {
                return false;
            }
        }
        let in_cwd = !self.applies_only_in_cwd() || self.in_cwd(rel);
        in_cwd && self.scope.as_ref().is_none_or(|s| s.matches(rel))
    }

    /// Whether the gate's files are limited to its `cwd`: it has one, and no `scope` includes.
    pub fn applies_only_in_cwd(&self) -> bool {
        self.cwd.is_some() && self.scope.as_ref().is_none_or(|s| s.include.is_none())
    }

    /// Whether a root-relative path is inside the gate's `cwd` (every path is when it has none).
    fn in_cwd(&self, rel: &str) -> bool {
        let Some(cwd) = self.cwd.as_deref().and_then(|c| c.to_str()) else {
            return true;
        };
        let cwd = cwd.trim_start_matches("./").trim_end_matches('/');
        cwd.is_empty() || cwd == "." || rel.strip_prefix(cwd).is_some_and(|r| r.starts_with('/'))
    }

    /// Whether these violations fail the gate: one at `fail_on` or more serious does.
    pub fn fails_with(&self, violations: &[crate::core::violation::Violation]) -> bool {
        violations.iter().any(|v| v.severity <= self.fail_on)
    }

    /// The folder the gate's commands run in.
    pub fn cwd_in(&self, root: &std::path::Path) -> PathBuf {
        self.cwd
            .as_ref()
            .map_or_else(|| root.to_path_buf(), |c| root.join(c))
    }

    /// Whether the gate reads a coverage report (and so needs the run's changed lines).
    pub fn reads_coverage(&self) -> bool {
        matches!(self.parser.spec, ParserSpec::Coverage(_))
    }

    pub fn runs_on(&self, trigger: Trigger) -> bool {
        self.run_on.contains(&trigger)
    }

    /// Maps a tool's severity word: the gate's `severity_map` first, then the common words.
    pub fn severity_of(&self, word: &str) -> Option<Severity> {
        self.severity_map
            .get(&word.trim().to_ascii_lowercase())
            .copied()
            .or_else(|| Severity::from_tool_word(word))
    }
}

/// A gate's `files:` globs, compiled: by file name, and by root-relative path.
#[derive(Debug, Clone)]
pub struct FileGlobs {
    pub names: Option<GlobSet>,
    pub paths: Option<GlobSet>,
    /// As written, for messages.
    pub patterns: Vec<String>,
}

impl FileGlobs {
    pub fn matches(&self, rel: &str) -> bool {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        self.names.as_ref().is_some_and(|g| g.is_match(name))
            || self.paths.as_ref().is_some_and(|g| g.is_match(rel))
    }
}

/// One way of reading a gate's output: the strategy and the fields rebuilt after reading.
#[derive(Debug, Clone)]
pub struct Reader {
    pub spec: ParserSpec,
    pub templates: Templates,
    /// `parsing.column_unit`: this reader's unit, when not the gate's.
    pub column_unit: Option<ColumnUnit>,
    /// How this reader's tool counts a tab in its columns (`parsing.tab_stops`, `tab_width`).
    pub tabs: TabCount,
    /// The report file this reader reads instead of the tool's output, as written (relative to
    /// the gate's cwd, or starting with `{report_dir}`): the gate's `output_file` for its own
    /// reader, `parsing.also[i].output_file` for the others.
    pub output_file: Option<String>,
}

/// `parsing.templates`: fields rebuilt from the fields read.
#[derive(Debug, Clone, Default)]
pub struct Templates {
    pub code: Option<Template>,
    pub message: Option<Template>,
    pub url: Option<Template>,
}

/// A gate's warm process (`RawWarm`), placeholders kept: `{state}` and `{args}` are known
/// where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WarmSpec {
    /// The tool's daemon, and the command that asks it.
    Daemon {
        serve: Vec<String>,
        check: Vec<String>,
        ready_file: Option<String>,
        /// Asked in the daemon's own protocol rather than by running `check`.
        protocol: Option<DaemonProtocol>,
    },
    /// The tool's language server over stdio, and its settings (`RawWarm::settings`).
    LanguageServer {
        command: Vec<String>,
        settings: Option<serde_json::Value>,
    },
}

/// A daemon's own protocol, which qgates speaks (`core::warm::dmypy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DaemonProtocol {
    /// mypy's daemon: length-prefixed JSON over the connection its status file names.
    Dmypy,
}

impl WarmSpec {
    /// Each command with what it is, for trust and for the daemon's identity.
    pub fn commands(&self) -> Vec<(&'static str, &Vec<String>)> {
        match self {
            WarmSpec::Daemon { serve, check, .. } => {
                vec![("warm process", serve), ("warm check", check)]
            }
            WarmSpec::LanguageServer { command, .. } => {
                vec![("warm language server", command)]
            }
        }
    }
}

/// A whole-file fixer.
#[derive(Debug, Clone)]
pub struct FixSpec {
    /// argv; `{file}` is replaced by the root-relative path.
    pub command: Vec<String>,
    pub title: String,
    /// The exit codes after which its output is the fixed text.
    pub exit_codes_ok: Vec<i32>,
}

#[derive(Debug, Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "one per gate, built once at load; a Box would only add indirection"
)]
pub enum ParserSpec {
    Json(JsonSpec),
    Text(TextSpec),
    Sarif,
    ExitCode,
    Coverage(CoverageSpec),
    Junit,
}

/// Which kind of coverage report a `coverage` gate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoverageFormat {
    /// coverage.py's JSON report (`coverage json`).
    CoverageJson,
    /// Cobertura XML (`coverage xml`, and most other languages' tools).
    Cobertura,
    /// LCOV tracefiles (`coverage lcov`, c8, cargo-llvm-cov, gcov).
    Lcov,
}

/// `strategy: coverage`: how a coverage report becomes a verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct CoverageSpec {
    /// `None`: recognized from the report's content.
    pub format: Option<CoverageFormat>,
    /// The least total line coverage that passes, 0–100.
    pub min_percent: f64,
    /// The least coverage of the changed executable lines that passes, 0–100.
    pub min_diff_percent: Option<f64>,
    /// The severity of each range of uncovered changed lines.
    pub diff_severity: Severity,
}

/// `min_percent`'s default.
pub const DEFAULT_MIN_PERCENT: f64 = 85.0;

/// A string with `{name}` placeholders, split once at load time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub parts: Vec<TemplatePart>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplatePart {
    Literal(String),
    Field(String),
}

impl Template {
    /// Splits `text` at `{name}` placeholders; `{{` and `}}` are literal braces.
    pub fn parse(text: &str) -> Template {
        let mut parts = Vec::new();
        scan(text, false, |piece| {
            parts.push(match piece {
                Piece::Literal(s) => TemplatePart::Literal(s.replace("{{", "{").replace("}}", "}")),
                Piece::Field(f) => TemplatePart::Field(f.to_string()),
            })
        });
        Template { parts }
    }

    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            TemplatePart::Field(f) => Some(f.as_str()),
            TemplatePart::Literal(_) => None,
        })
    }

    /// Fills the placeholders; a field `lookup` does not know becomes an empty string.
    pub fn render<'a>(&self, lookup: impl Fn(&str) -> Option<&'a str>) -> String {
        self.parts
            .iter()
            .map(|p| match p {
                TemplatePart::Literal(s) => s.as_str(),
                TemplatePart::Field(f) => lookup(f).unwrap_or(""),
            })
            .collect()
    }
}

/// A piece of a text with `{name}` placeholders.
pub(super) enum Piece<'a> {
    Literal(&'a str),
    Field(&'a str),
}

/// Splits `text` at its `{name}` placeholders (names of ASCII letters, digits and `_`). `{{` is
/// skipped whole, so `{{name}}` is never a placeholder; with `shell_vars` (a command's
/// arguments), `${NAME}` (a shell variable in a `sh -c` script) is not one either, and `\{` is a
/// literal `{` (a tool's own template, such as cppcheck's `--template=\{file}:\{line}`).
pub(super) fn scan<'a>(text: &'a str, shell_vars: bool, mut each: impl FnMut(Piece<'a>)) {
    let bytes = text.as_bytes();
    let (mut i, mut lit_start) = (0, 0);
    while i < bytes.len() {
        let field_end = (bytes[i] == b'{' && !(shell_vars && i > 0 && bytes[i - 1] == b'$'))
            .then(|| text[i + 1..].find('}'))
            .flatten()
            .map(|end| i + 1 + end)
            .filter(|&end| {
                let name = &text[i + 1..end];
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            });
        if bytes[i] == b'{' && bytes.get(i + 1) == Some(&b'{') {
            i += 2;
            continue;
        }
        // In a command, `\{` is a literal brace: a tool's own template (`{file}:{line}`).
        if shell_vars && bytes[i] == b'\\' && bytes.get(i + 1) == Some(&b'{') {
            if lit_start < i {
                each(Piece::Literal(&text[lit_start..i]));
            }
            lit_start = i + 1;
            i += 2;
            continue;
        }
        match field_end {
            Some(end) => {
                if lit_start < i {
                    each(Piece::Literal(&text[lit_start..i]));
                }
                each(Piece::Field(&text[i + 1..end]));
                i = end + 1;
                lit_start = i;
            }
            None => i += 1,
        }
    }
    if lit_start < text.len() {
        each(Piece::Literal(&text[lit_start..]));
    }
}

/// Values for fields the tool does not print.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    pub file: Option<Template>,
    pub code: Option<Template>,
    pub message: Option<Template>,
    pub severity: Option<Severity>,
    pub url: Option<Template>,
    pub fixable: Option<bool>,
}

/// A path inside a JSON item: first climb `up` levels, then follow `keys`
/// (an all-digit key also indexes an array).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath {
    pub up: usize,
    pub keys: Vec<String>,
}

/// One step of `violations_path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PointerStep {
    Key(String),
    /// `*`: every element of an array (or every value of an object).
    Each,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompareOp {
    Eq,
    Ne,
}

/// `fixable_when: "fix/applicability == 'safe'"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    pub path: FieldPath,
    pub op: CompareOp,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixEditsSpec {
    /// Inside the violation item.
    pub path: FieldPath,
    pub title: Option<FieldPath>,
    /// Inside each edit.
    pub content: FieldPath,
    pub line: FieldPath,
    pub column: FieldPath,
    pub end_line: FieldPath,
    pub end_column: FieldPath,
}

/// Which Violation field a mapped path fills.
#[derive(Debug, Clone, Default)]
pub struct FieldMap {
    pub file: Option<FieldPath>,
    pub line: Option<FieldPath>,
    pub column: Option<FieldPath>,
    pub end_line: Option<FieldPath>,
    pub end_column: Option<FieldPath>,
    pub code: Option<FieldPath>,
    pub message: Option<FieldPath>,
    pub severity: Option<FieldPath>,
    pub url: Option<FieldPath>,
}

impl FieldMap {
    /// The mapped fields by Violation field name, for template look-ups.
    pub fn entries(&self) -> impl Iterator<Item = (&'static str, &FieldPath)> {
        [
            ("file", &self.file),
            ("line", &self.line),
            ("column", &self.column),
            ("end_line", &self.end_line),
            ("end_column", &self.end_column),
            ("code", &self.code),
            ("message", &self.message),
            ("severity", &self.severity),
            ("url", &self.url),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_ref().map(|p| (k, p)))
    }
}

#[derive(Debug, Clone)]
pub struct JsonSpec {
    pub format: JsonFormat,
    pub violations_path: Vec<PointerStep>,
    pub field_map: FieldMap,
    /// Only the items that match are violations.
    pub filter: Option<Condition>,
    pub fixable_when: Option<Condition>,
    pub fix_edits: Option<FixEditsSpec>,
    pub line_offset: i64,
    pub column_offset: i64,
    pub extract: Option<Extract>,
    pub defaults: Defaults,
}

#[derive(Debug, Clone)]
pub struct TextSpec {
    pub regex: Regex,
    /// Lines that say what the findings after them are about (docs/configuration.md,
    /// "Headers").
    pub headers: Vec<Regex>,
    pub stream: OutputStream,
    pub defaults: Defaults,
    pub line_offset: i64,
    pub column_offset: i64,
}
