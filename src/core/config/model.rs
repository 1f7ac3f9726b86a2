//! The `quality.yaml` file as written by people: every key, its default and its documentation.
//! Deserialized with unknown keys rejected; values that need a location for a later error message
//! are `Spanned`. `compile.rs` turns this into the checked `Config` the engine runs.
//!
//! The doc comments here are the descriptions `qgates schema` shows in editors, so every key has
//! one. `Spanned<T>` fields carry `#[schemars(with = "T")]`, so the schema shows the plain type.
//! `Serialize` writes `Spanned` values without their places; `compile.rs` hashes that form, so
//! moving a gate within the file does not change its cache key.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_saphyr::{Location, Spanned};

use crate::core::violation::Severity;

/// A string with the place it was written, for error messages.
pub type SpannedString = Spanned<String>;

/// The whole `quality.yaml`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "qgates quality.yaml",
    description = "Quality gates run by qgates (CLI, language server and MCP server)."
)]
pub struct RawConfig {
    /// File format version; only 1 exists.
    #[schemars(with = "u32", extend("enum" = [1]))]
    pub version: Spanned<u32>,
    /// Gates to run, in report order. Without it, every gate under `gates`, in file order.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>", extend("minItems" = 1, "uniqueItems" = true))]
    pub active_gates: Option<Vec<SpannedString>>,
    /// Which files `--scope project` discovers (default: every file of each gate's `file_types`).
    #[serde(default)]
    pub project_scope: Option<RawGlobs>,
    /// The branch `--scope branch` compares with (default: the remote's default branch, else main/master).
    #[serde(default)]
    pub parent_branch: Option<String>,
    /// Gate definitions by id (letters, digits, `_` and `-`; the id names log files).
    #[schemars(
        with = "BTreeMap<String, RawGate>",
        extend("minProperties" = 1, "propertyNames" = { "pattern": "^[A-Za-z0-9_-]+$" })
    )]
    pub gates: Spanned<IndexMap<SpannedString, RawGate>>,
}

/// Include and exclude globs, relative to the workspace root (`**` crosses folders).
#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawGlobs {
    /// Files to take, e.g. ["src/**/*.py"]. Empty: every file.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub include_globs: Vec<SpannedString>,
    /// Files to leave out even when included, e.g. ["migrations/**"].
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub exclude_globs: Vec<SpannedString>,
}

/// What a gate checks; shown in reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GateKind {
    /// A formatter (ruff format, prettier).
    Format,
    /// A linter (ruff check, eslint).
    Lint,
    /// A type checker (mypy, tsc).
    Typecheck,
    /// A test suite.
    Test,
    /// Anything else.
    #[default]
    Other,
}

/// What started a run; a gate's `run_on` lists the triggers it runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// A file was saved in the editor.
    Save,
    /// A run asked for by a command (`qgates check`, the editor's or the agent's run command).
    Command,
    /// A run in continuous integration (`qgates check --ci`).
    Ci,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Save => "save",
            Trigger::Command => "command",
            Trigger::Ci => "ci",
        }
    }
}

/// The unit a tool counts columns in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ColumnUnit {
    /// Unicode characters (code points): ruff, most linters.
    #[default]
    Char,
    /// UTF-8 bytes: many C, Go and Rust tools, and mypy with `--no-native-parser`.
    Byte,
    /// UTF-16 code units: JavaScript tools, LSP-based tools.
    Utf16,
}

/// How results of a gate may be reused (see the result cache).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CachePolicy {
    /// A file's result holds while the file, the gate and `cache_inputs` are unchanged.
    #[default]
    PerFile,
    /// Any change in the workspace invalidates the result (type checkers).
    Workspace,
    /// Always run.
    None,
}

/// How a gate's output is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// JSON (or JSON Lines) output: `violations_path` finds the items, `field_map` reads each one.
    JsonViolations,
    /// Text output: a regex with named groups matches each violation.
    TextViolations,
    /// SARIF 2.1.0 output (`runs[].results[]`).
    Sarif,
    /// Pass/fail only: a failing exit code is one violation without a file.
    ExitCode,
}

impl Strategy {
    pub const ALL: [Strategy; 4] = [
        Strategy::JsonViolations,
        Strategy::TextViolations,
        Strategy::Sarif,
        Strategy::ExitCode,
    ];

    /// The `parsing` keys this strategy reads besides `strategy`; any other one is a mistake
    /// (often a sign that the strategy itself is wrong).
    pub fn parsing_keys(self) -> &'static [&'static str] {
        match self {
            Strategy::JsonViolations => &[
                "format",
                "violations_path",
                "field_map",
                "fixable_when",
                "fix_edits",
                "line_offset",
                "column_offset",
                "extract",
                "defaults",
            ],
            Strategy::TextViolations => &[
                "pattern",
                "stream",
                "line_offset",
                "column_offset",
                "defaults",
            ],
            Strategy::Sarif | Strategy::ExitCode => &[],
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::JsonViolations => "json_violations",
            Strategy::TextViolations => "text_violations",
            Strategy::Sarif => "sarif",
            Strategy::ExitCode => "exit_code",
        }
    }
}

/// How JSON output is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JsonFormat {
    /// One JSON document.
    #[default]
    Json,
    /// One JSON object per line.
    Jsonl,
}

/// Which of the tool's outputs is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    /// Standard output.
    #[default]
    Stdout,
    /// Standard error.
    Stderr,
    /// Standard output, then standard error.
    Both,
}

/// Where the JSON is inside the tool's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Extract {
    /// Take the first ```json fenced block out of prose before parsing.
    Fenced,
}

/// Where a Violation field is found inside each JSON item: a `/`-separated path, `..` climbs a level.
#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawFieldMap {
    /// The file's path (absolute or relative to the tool's working directory), e.g. `filename`.
    #[schemars(with = "Option<String>")]
    pub file: Option<SpannedString>,
    /// The 1-based start line, e.g. `location/row`.
    #[schemars(with = "Option<String>")]
    pub line: Option<SpannedString>,
    /// The start column, e.g. `location/column`.
    #[schemars(with = "Option<String>")]
    pub column: Option<SpannedString>,
    /// The end line.
    #[schemars(with = "Option<String>")]
    pub end_line: Option<SpannedString>,
    /// The end column.
    #[schemars(with = "Option<String>")]
    pub end_column: Option<SpannedString>,
    /// The rule code, e.g. `code` or `ruleId`.
    #[schemars(with = "Option<String>")]
    pub code: Option<SpannedString>,
    /// The message, e.g. `message`.
    #[schemars(with = "Option<String>")]
    pub message: Option<SpannedString>,
    /// The tool's severity word (mapped by `severity_map`), e.g. `severity`.
    #[schemars(with = "Option<String>")]
    pub severity: Option<SpannedString>,
    /// A link to the rule's documentation.
    #[schemars(with = "Option<String>")]
    pub url: Option<SpannedString>,
}

/// Where a tool's own fix edits are: `path` and `title` inside the violation item, the rest inside
/// each edit.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawFixEdits {
    /// The list of edits, inside the violation item, e.g. `fix/edits`.
    #[schemars(with = "String")]
    pub path: SpannedString,
    /// The fix's title, inside the violation item, e.g. `fix/message`.
    #[schemars(with = "Option<String>")]
    pub title: Option<SpannedString>,
    /// The replacement text, inside each edit.
    #[schemars(with = "String")]
    pub content: SpannedString,
    /// The start line, inside each edit.
    #[schemars(with = "String")]
    pub line: SpannedString,
    /// The start column, inside each edit.
    #[schemars(with = "String")]
    pub column: SpannedString,
    /// The end line, inside each edit.
    #[schemars(with = "String")]
    pub end_line: SpannedString,
    /// The end column, inside each edit.
    #[schemars(with = "String")]
    pub end_column: SpannedString,
}

/// Values for Violation fields the tool does not print; `{name}` is replaced by that field's value
/// (a text pattern's named group, or a `field_map` key).
#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawDefaults {
    /// The file, e.g. "{file}".
    #[schemars(with = "Option<String>")]
    pub file: Option<SpannedString>,
    /// The rule code, e.g. FORMAT.
    #[schemars(with = "Option<String>")]
    pub code: Option<SpannedString>,
    /// The message; say how to fix it, e.g. "File requires formatting. Fix: ruff format {file}".
    #[schemars(with = "Option<String>")]
    pub message: Option<SpannedString>,
    /// The severity: error, warning, info or hint (or a word tools print, such as `warn`).
    #[schemars(with = "Option<String>")]
    pub severity: Option<SpannedString>,
    /// A link to documentation.
    #[schemars(with = "Option<String>")]
    pub url: Option<SpannedString>,
    /// Whether such a violation is auto-fixable.
    pub fixable: Option<bool>,
}

/// How a gate's output becomes violations. Which keys apply depends on `strategy`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawParsing {
    /// How the output is read.
    #[schemars(with = "Strategy")]
    pub strategy: Spanned<Strategy>,
    // json_violations
    /// json_violations: one JSON document (default) or JSON Lines.
    #[schemars(with = "Option<JsonFormat>", extend("default" = "json"))]
    pub format: Option<Spanned<JsonFormat>>,
    /// json_violations: JSON Pointer to the array of violations; `*` flattens nested arrays; "" is
    /// the root (default).
    #[schemars(with = "Option<String>", extend("default" = ""))]
    pub violations_path: Option<SpannedString>,
    /// json_violations: where each Violation field is inside an item.
    pub field_map: Option<RawFieldMap>,
    /// json_violations: `"path == 'value'"` (or `!=`): when a violation counts as auto-fixable.
    #[schemars(with = "Option<String>")]
    pub fixable_when: Option<SpannedString>,
    /// json_violations: where the tool's own fix edits are (offered as quick fixes).
    pub fix_edits: Option<RawFixEdits>,
    /// json_violations and text_violations: added to lines the tool prints (for 0-based tools: 1).
    #[schemars(with = "Option<i64>", extend("default" = 0))]
    pub line_offset: Option<Spanned<i64>>,
    /// json_violations and text_violations: added to columns the tool prints (for 0-based tools: 1).
    #[schemars(with = "Option<i64>", extend("default" = 0))]
    pub column_offset: Option<Spanned<i64>>,
    /// json_violations: take the JSON out of surrounding prose first.
    #[schemars(with = "Option<Extract>")]
    pub extract: Option<Spanned<Extract>>,
    // text_violations
    /// text_violations: a regex (multi-line mode) with named groups named after Violation fields,
    /// e.g. '^(?P<file>[^:]+):(?P<line>\d+): (?P<message>.+)$'.
    #[schemars(with = "Option<String>")]
    pub pattern: Option<SpannedString>,
    /// text_violations: which output is matched.
    #[schemars(with = "Option<OutputStream>", extend("default" = "stdout"))]
    pub stream: Option<Spanned<OutputStream>>,
    // text_violations and json_violations
    /// json_violations and text_violations: values for the fields the tool does not print.
    pub defaults: Option<RawDefaults>,
}

/// A whole-file fixer: the file's text goes in, the fixed text comes out.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawFix {
    /// The fixer's argv; `{file}` is replaced by the file's path, e.g. ["ruff", "format",
    /// "--stdin-filename", "{file}", "-"].
    #[schemars(with = "Vec<String>", extend("minItems" = 1))]
    pub command: Spanned<Vec<String>>,
    /// How the text reaches the fixer.
    #[serde(default)]
    pub input: FixInput,
    /// The code action's title (default: "Fix with <gate name>"), e.g. "Format with ruff".
    pub title: Option<String>,
}

/// How a whole-file fixer gets the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FixInput {
    /// The text is piped to the fixer, which prints the fixed text.
    #[default]
    Stdin,
}

/// Which exit codes mean the tool ran; any other exit code makes the gate an error.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSuccess {
    /// The tool ran and found nothing (default [0]).
    #[serde(default = "default_ok")]
    pub exit_codes_ok: Vec<i32>,
    /// The tool ran and found something (default [1]).
    #[serde(default = "default_findings")]
    pub exit_codes_findings: Vec<i32>,
}

impl Default for RawSuccess {
    fn default() -> Self {
        RawSuccess {
            exit_codes_ok: default_ok(),
            exit_codes_findings: default_findings(),
        }
    }
}

fn default_ok() -> Vec<i32> {
    vec![0]
}
fn default_findings() -> Vec<i32> {
    vec![1]
}
fn default_timeout() -> Spanned<f64> {
    Spanned::new(120.0, Location::UNKNOWN, Location::UNKNOWN)
}
fn default_true() -> bool {
    true
}
fn default_run_on() -> Vec<Trigger> {
    vec![Trigger::Save, Trigger::Command, Trigger::Ci]
}

/// One gate.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawGate {
    /// Display name (default: the gate id).
    pub name: Option<String>,
    /// What the gate checks.
    #[serde(default)]
    pub kind: GateKind,
    /// argv, never a shell string, e.g. ["ruff", "check"]; the files to check are appended.
    #[schemars(with = "Vec<String>", extend("minItems" = 1))]
    pub command: Spanned<Vec<String>>,
    /// File endings this gate checks, e.g. [".py", ".pyi"]. Empty: every file.
    #[serde(default)]
    pub file_types: Vec<String>,
    /// Narrows the gate's files further with globs.
    #[serde(default)]
    pub scope: Option<RawGlobs>,
    /// How the tool's output becomes violations.
    pub parsing: RawParsing,
    /// A whole-file fixer, offered as a code action (e.g. "Format with ruff").
    pub fix: Option<RawFix>,
    /// Shown with the gate's failures; `{files}` is replaced by the failing files.
    pub fix_hint: Option<String>,
    /// Which exit codes mean "no findings" and "findings"; any other is an error.
    #[serde(default)]
    pub success: RawSuccess,
    /// Seconds before the gate's processes are killed.
    #[serde(default = "default_timeout")]
    #[schemars(with = "f64", extend("exclusiveMinimum" = 0))]
    pub timeout_s: Spanned<f64>,
    /// Environment variables set for the tool, e.g. { PYTHONPATH: src }.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory, relative to the workspace root.
    pub cwd: Option<String>,
    /// A missing tool skips the gate instead of failing it.
    #[serde(default)]
    pub optional: bool,
    /// Findings are reported but never block the run or the baseline.
    #[serde(default)]
    pub allow_fail: bool,
    /// false: a repository-wide gate (e.g. a test suite), run once without file arguments.
    #[serde(default = "default_true")]
    pub pass_files: bool,
    /// When the gate runs: on save, on command, in CI (default: all three).
    #[serde(default = "default_run_on")]
    pub run_on: Vec<Trigger>,
    /// Split long file lists into batches of at most this many files.
    #[schemars(with = "Option<usize>", extend("minimum" = 1))]
    pub max_files_per_run: Option<Spanned<usize>>,
    /// The unit the tool counts columns in.
    #[serde(default)]
    pub column_unit: ColumnUnit,
    /// Tool severity word → error | warning | info | hint, e.g. { CRITICAL: error, SUGGESTION: hint }.
    #[serde(default)]
    pub severity_map: BTreeMap<String, Severity>,
    /// How the gate's results are reused.
    #[serde(default)]
    pub cache: CachePolicy,
    /// Files whose content is part of the cache key (e.g. pyproject.toml).
    #[serde(default)]
    pub cache_inputs: Vec<String>,
}
