//! The `quality.yaml` file as written by people: every key, its default and its documentation.
//! Deserialized with unknown keys rejected; values that need a location for a later error message
//! are `Spanned`. `compile.rs` turns this into the checked `Config` the engine runs.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

use crate::core::violation::Severity;

/// A string with the place it was written, for error messages.
pub type SpannedString = Spanned<String>;

/// The whole `quality.yaml`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "qgates quality.yaml", description = "Quality gates run by qgates (CLI, language server and MCP server).")]
pub struct RawConfig {
    /// File format version; only 1 exists.
    #[schemars(with = "u32")]
    pub version: Spanned<u32>,
    /// Gates to run, in report order. Without it, every gate under `gates`, in file order.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub active_gates: Option<Vec<SpannedString>>,
    /// Which files `--scope project` discovers.
    #[serde(default)]
    pub project_scope: Option<RawGlobs>,
    /// The branch `--scope branch` compares with (default: the remote's default branch, else main/master).
    #[serde(default)]
    pub parent_branch: Option<String>,
    /// Gate definitions by id.
    #[schemars(with = "BTreeMap<String, RawGate>")]
    pub gates: IndexMap<SpannedString, RawGate>,
}

/// Include and exclude globs, relative to the workspace root (`**` crosses folders).
#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawGlobs {
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub include_globs: Vec<SpannedString>,
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub exclude_globs: Vec<SpannedString>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GateKind {
    Format,
    Lint,
    Typecheck,
    Test,
    #[default]
    Other,
}

/// What started a run; a gate's `run_on` lists the triggers it runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    Save,
    Command,
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
    /// Unicode characters (code points): Python tools, most linters.
    #[default]
    Char,
    /// UTF-8 bytes: many C, Go and Rust tools.
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    JsonViolations,
    TextViolations,
    Sarif,
    ExitCode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JsonFormat {
    /// One JSON document.
    #[default]
    Json,
    /// One JSON object per line.
    Jsonl,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    #[default]
    Stdout,
    Stderr,
    Both,
}

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
    #[schemars(with = "Option<String>")]
    pub file: Option<SpannedString>,
    #[schemars(with = "Option<String>")]
    pub line: Option<SpannedString>,
    #[schemars(with = "Option<String>")]
    pub column: Option<SpannedString>,
    #[schemars(with = "Option<String>")]
    pub end_line: Option<SpannedString>,
    #[schemars(with = "Option<String>")]
    pub end_column: Option<SpannedString>,
    #[schemars(with = "Option<String>")]
    pub code: Option<SpannedString>,
    #[schemars(with = "Option<String>")]
    pub message: Option<SpannedString>,
    #[schemars(with = "Option<String>")]
    pub severity: Option<SpannedString>,
    #[schemars(with = "Option<String>")]
    pub url: Option<SpannedString>,
}

/// Where a tool's own fix edits are: `path` and `title` inside the violation item, the rest inside
/// each edit.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawFixEdits {
    #[schemars(with = "String")]
    pub path: SpannedString,
    #[schemars(with = "Option<String>")]
    pub title: Option<SpannedString>,
    #[schemars(with = "String")]
    pub content: SpannedString,
    #[schemars(with = "String")]
    pub line: SpannedString,
    #[schemars(with = "String")]
    pub column: SpannedString,
    #[schemars(with = "String")]
    pub end_line: SpannedString,
    #[schemars(with = "String")]
    pub end_column: SpannedString,
}

/// Values for Violation fields the tool does not print; `{group}` is replaced by that group's text.
#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawDefaults {
    #[schemars(with = "Option<String>")]
    pub file: Option<SpannedString>,
    #[schemars(with = "Option<String>")]
    pub code: Option<SpannedString>,
    #[schemars(with = "Option<String>")]
    pub message: Option<SpannedString>,
    #[schemars(with = "Option<String>")]
    pub severity: Option<SpannedString>,
    #[schemars(with = "Option<String>")]
    pub url: Option<SpannedString>,
    pub fixable: Option<bool>,
}

/// How a gate's output becomes violations. Which keys apply depends on `strategy`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawParsing {
    #[schemars(with = "Strategy")]
    pub strategy: Spanned<Strategy>,
    // json_violations
    #[schemars(with = "Option<JsonFormat>")]
    pub format: Option<Spanned<JsonFormat>>,
    /// JSON Pointer to the array of violations; `*` flattens nested arrays; "" is the root.
    #[schemars(with = "Option<String>")]
    pub violations_path: Option<SpannedString>,
    pub field_map: Option<RawFieldMap>,
    /// `"path == 'value'"` (or `!=`): when a violation counts as auto-fixable.
    #[schemars(with = "Option<String>")]
    pub fixable_when: Option<SpannedString>,
    pub fix_edits: Option<RawFixEdits>,
    /// Added to lines the tool prints (for 0-based tools: 1).
    #[schemars(with = "Option<i64>")]
    pub line_offset: Option<Spanned<i64>>,
    /// Added to columns the tool prints (for 0-based tools: 1).
    #[schemars(with = "Option<i64>")]
    pub column_offset: Option<Spanned<i64>>,
    #[schemars(with = "Option<Extract>")]
    pub extract: Option<Spanned<Extract>>,
    // text_violations
    /// A regex (multi-line mode) with named groups named after Violation fields.
    #[schemars(with = "Option<String>")]
    pub pattern: Option<SpannedString>,
    #[schemars(with = "Option<OutputStream>")]
    pub stream: Option<Spanned<OutputStream>>,
    // text_violations and json_violations
    pub defaults: Option<RawDefaults>,
}

/// A whole-file fixer: the file's text goes in, the fixed text comes out.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawFix {
    #[schemars(with = "Vec<String>")]
    pub command: Spanned<Vec<String>>,
    #[serde(default)]
    pub input: FixInput,
    /// The code action's title, e.g. "Format with ruff".
    pub title: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FixInput {
    /// The text is piped to the fixer, which prints the fixed text.
    #[default]
    Stdin,
}

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
        RawSuccess { exit_codes_ok: default_ok(), exit_codes_findings: default_findings() }
    }
}

fn default_ok() -> Vec<i32> {
    vec![0]
}
fn default_findings() -> Vec<i32> {
    vec![1]
}
fn default_timeout() -> f64 {
    120.0
}
fn default_true() -> bool {
    true
}
fn default_run_on() -> Vec<Trigger> {
    vec![Trigger::Save, Trigger::Command, Trigger::Ci]
}

/// One gate.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawGate {
    /// Display name (default: the gate id).
    pub name: Option<String>,
    #[serde(default)]
    pub kind: GateKind,
    /// argv, never a shell string; the files to check are appended.
    #[schemars(with = "Vec<String>")]
    pub command: Spanned<Vec<String>>,
    /// File endings this gate checks, e.g. [".py", ".pyi"]. Empty: every file.
    #[serde(default)]
    pub file_types: Vec<String>,
    /// Narrows the files further.
    #[serde(default)]
    pub scope: Option<RawGlobs>,
    pub parsing: RawParsing,
    pub fix: Option<RawFix>,
    /// Shown with the gate's failures; `{files}` is replaced by the failing files.
    pub fix_hint: Option<String>,
    #[serde(default)]
    pub success: RawSuccess,
    /// Seconds before the gate's processes are killed (default 120).
    #[serde(default = "default_timeout")]
    #[schemars(with = "f64")]
    pub timeout_s: f64,
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
    /// false: a repository-wide gate, run once without file arguments.
    #[serde(default = "default_true")]
    pub pass_files: bool,
    #[serde(default = "default_run_on")]
    pub run_on: Vec<Trigger>,
    /// Split long file lists into batches of at most this many files.
    #[schemars(with = "Option<usize>")]
    pub max_files_per_run: Option<Spanned<usize>>,
    #[serde(default)]
    pub column_unit: ColumnUnit,
    /// Tool severity word → error | warning | info | hint.
    #[serde(default)]
    pub severity_map: BTreeMap<String, Severity>,
    #[serde(default)]
    pub cache: CachePolicy,
    /// Files whose content is part of the cache key (e.g. pyproject.toml).
    #[serde(default)]
    pub cache_inputs: Vec<String>,
}
