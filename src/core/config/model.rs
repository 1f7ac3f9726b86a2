//! The `quality.yaml` file as written by people, unknown keys rejected; values a later message
//! must place are `Spanned` (shown as the plain type in the schema). The doc comments are the
//! descriptions `qgates schema` shows. `Serialize` drops places: `compile.rs` hashes that form.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

use crate::core::violation::Severity;

pub use super::choices::*;

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
    /// The result cache: a store shared across machines (CI, other developers, the editor).
    #[serde(default)]
    pub cache: Option<RawCache>,
    /// Decide by new findings only, as `qgates check --new-only`: findings that were there at
    /// the scope's base commit are counted, and fail nothing.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub new_only: Option<bool>,
    /// Minutes a warm process (a gate's `warm`) is kept after its last check (default 15).
    #[serde(default)]
    #[schemars(with = "Option<f64>", extend("exclusiveMinimum" = 0, "default" = 15.0))]
    pub warm_idle_minutes: Option<Spanned<f64>>,
    /// Gate definitions by id (letters, digits, `_` and `-`; the id names log files).
    #[schemars(
        with = "BTreeMap<String, RawGate>",
        extend("minProperties" = 1, "propertyNames" = { "pattern": "^[A-Za-z0-9_-]+$" })
    )]
    pub gates: Spanned<IndexMap<SpannedString, RawGate>>,
}

/// The result cache's settings. The local cache (`.qgates/cache/`) needs none; `remote` adds a
/// store shared across machines behind it (docs/remote-cache.md).
#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawCache {
    /// The shared store: file:///abs/folder, redis://host:port[/db], s3://bucket[/prefix]?endpoint=…&region=…
    /// or gha (GitHub Actions' cache).
    /// Credentials come from the environment, never from here. The environment variable
    /// QGATES_REMOTE_CACHE overrides it (an empty value turns it off).
    #[schemars(with = "Option<String>")]
    pub remote: Option<SpannedString>,
    /// Only read the shared store, never write it (e.g. for pull requests from forks);
    /// QGATES_REMOTE_CACHE_READ_ONLY=1 says the same.
    #[schemars(with = "Option<bool>", extend("default" = false))]
    pub read_only: Option<bool>,
    /// Milliseconds all of one run's work with the shared store may take, reads and writes
    /// together; past it the run goes on with the local cache (default 2000).
    #[schemars(with = "Option<u64>", extend("minimum" = 1, "default" = 2000))]
    pub timeout_ms: Option<Spanned<u64>>,
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
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawParsing {
    /// How the output is read (required, unless a preset gives it).
    #[schemars(with = "Strategy")]
    #[serde(default, deserialize_with = "present")]
    pub strategy: Option<Spanned<Strategy>>,
    // json_violations
    /// json_violations: one JSON document (`json`, the default) or JSON Lines (`jsonl`).
    /// coverage: `coverage_json`, `cobertura` or `lcov` (default: recognized from the report).
    #[schemars(with = "Option<OutputFormat>", extend("default" = "json"))]
    pub format: Option<Spanned<OutputFormat>>,
    /// json_violations: JSON Pointer to the array of violations; `*` flattens nested arrays; "" is
    /// the root (default).
    #[schemars(with = "Option<String>", extend("default" = ""))]
    pub violations_path: Option<SpannedString>,
    /// json_violations: where each Violation field is inside an item.
    pub field_map: Option<RawFieldMap>,
    /// json_violations: `"path == 'value'"` (or `!=`): only the items that match are violations,
    /// e.g. "reason == 'compiler-message'" for cargo's JSON lines.
    #[schemars(with = "Option<String>")]
    pub filter: Option<SpannedString>,
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
    /// The unit this reader's columns count in, when it is not the gate's `column_unit` (a tool
    /// that counts its syntax errors differently from its other messages).
    #[schemars(with = "ColumnUnit")]
    #[serde(default, deserialize_with = "present")]
    pub column_unit: Option<ColumnUnit>,
    /// A tool whose columns count a tab up to the next multiple of this many (Checkstyle's
    /// `tabWidth`, 8): after a tab its column is further right than the tab's one character.
    #[schemars(with = "Option<u32>", extend("minimum" = 1, "maximum" = 64))]
    pub tab_stops: Option<Spanned<u32>>,
    /// A tool whose columns count a tab as this many wherever it is (JSHint's `indent`, 4).
    #[schemars(with = "Option<u32>", extend("minimum" = 1, "maximum" = 64))]
    pub tab_width: Option<Spanned<u32>>,
    /// json_violations: take the JSON out of surrounding prose first.
    #[schemars(with = "Option<Extract>")]
    pub extract: Option<Spanned<Extract>>,
    // text_violations
    /// text_violations: a regex (multi-line mode) with named groups named after Violation fields,
    /// e.g. '^(?P<file>[^:]+):(?P<line>\d+): (?P<message>.+)$'.
    #[schemars(with = "Option<String>")]
    pub pattern: Option<SpannedString>,
    /// text_violations: regexes (multi-line mode) of the lines that say what the findings after
    /// them are about, e.g. '^(?P<file>\\S.*)$' for a tool that names each file once above its
    /// findings. Their named groups fill what a finding's own match leaves out, until a later
    /// header's match sets them again; a `dir` group is the folder a relative `file` is in.
    #[schemars(with = "Option<Vec<String>>")]
    pub headers: Option<Vec<SpannedString>>,
    /// text_violations: which output is matched.
    #[schemars(with = "Option<OutputStream>", extend("default" = "stdout"))]
    pub stream: Option<Spanned<OutputStream>>,
    // text_violations and json_violations
    /// json_violations and text_violations: values for the fields the tool does not print.
    pub defaults: Option<RawDefaults>,
    /// json_violations and text_violations: fields rewritten from what was read, e.g.
    /// { code: "SC{code}", url: "https://www.shellcheck.net/wiki/SC{code}" }.
    pub templates: Option<RawTemplates>,
    // coverage
    /// coverage: the least total line coverage, in percent, that passes (default 85).
    #[schemars(with = "Option<f64>", extend("minimum" = 0, "maximum" = 100, "default" = 85.0))]
    pub min_percent: Option<Spanned<f64>>,
    /// coverage: the least share of changed executable lines that tests run, in percent, in the
    /// `auto` and `branch` scopes (default: none; uncovered changed lines are only reported).
    #[schemars(with = "Option<f64>", extend("minimum" = 0, "maximum" = 100))]
    pub min_diff_percent: Option<Spanned<f64>>,
    /// coverage: the severity of each range of changed lines no test runs (default info).
    #[schemars(with = "Option<Severity>", extend("default" = "info"))]
    pub diff_severity: Option<Spanned<Severity>>,
    /// More readers of the same run (e.g. a tool's "cannot parse this file" lines on stderr);
    /// the violations of all of them are reported.
    pub also: Option<Vec<RawParsing>>,
    /// Only in a reader of `parsing.also`: the file this reader reads instead of the tool's
    /// output, as the gate's `output_file` (the gate's own reader uses the gate's key).
    #[schemars(with = "Option<String>")]
    pub output_file: Option<SpannedString>,
}

/// Fields rebuilt from the fields read: `{name}` is the value read for that field (a text
/// pattern's named group, a `field_map` key, or what SARIF gives); a template whose fields were
/// not all read leaves its field as read.
#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawTemplates {
    /// The rule code, e.g. "SC{code}".
    #[schemars(with = "Option<String>")]
    pub code: Option<SpannedString>,
    /// The message, e.g. "{message} ({code})".
    #[schemars(with = "Option<String>")]
    pub message: Option<SpannedString>,
    /// A link to the rule's documentation, e.g. "https://docs.example/rules/{code}".
    #[schemars(with = "Option<String>")]
    pub url: Option<SpannedString>,
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
    /// The exit codes after which the fixer's output is the fixed text (default [0]), e.g.
    /// [0, 1] for a fixer that exits 1 when problems it cannot fix remain (standard, phpcbf).
    pub exit_codes_ok: Option<Vec<i32>>,
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
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSuccess {
    /// The tool ran and found nothing (default [0]).
    #[schemars(with = "Vec<i32>", extend("default" = [0]))]
    #[serde(default, deserialize_with = "present")]
    pub exit_codes_ok: Option<Vec<i32>>,
    /// The tool ran and found something (default [1]).
    #[schemars(with = "Vec<i32>", extend("default" = [1]))]
    #[serde(default, deserialize_with = "present")]
    pub exit_codes_findings: Option<Vec<i32>>,
    /// The tool found something and stopped before checking every file it was given (mypy's
    /// blocking errors: 2). Its findings count, and nothing of the run is cached: a file it did
    /// not reach is not clean (default []).
    #[schemars(with = "Vec<i32>", extend("default" = []))]
    #[serde(default, deserialize_with = "present")]
    pub exit_codes_incomplete: Option<Vec<i32>>,
}

/// One gate. Every key but `command` and `parsing` has a default; a `preset` gives those two and
/// more, and any key set beside it wins over the preset's.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawGate {
    /// A gate from qgates' catalog (`qgates presets` lists them), e.g. `ruff-lint` or `eslint`.
    #[schemars(with = "String")]
    #[serde(default, deserialize_with = "present")]
    pub preset: Option<SpannedString>,
    /// Display name (default: the gate id).
    #[schemars(with = "String")]
    #[serde(default, deserialize_with = "present")]
    pub name: Option<String>,
    /// What the gate checks.
    #[schemars(with = "GateKind", extend("default" = "other"))]
    #[serde(default, deserialize_with = "present")]
    pub kind: Option<GateKind>,
    /// argv, never a shell string, e.g. ["ruff", "check"]; the files to check are appended.
    /// `{report_dir}` is replaced by the run's report folder (see `output_file`).
    #[schemars(with = "Vec<String>", extend("minItems" = 1))]
    #[serde(default, deserialize_with = "present")]
    pub command: Option<Spanned<Vec<String>>>,
    /// File endings this gate checks, e.g. [".py", ".pyi"]. Without it and `files`: every file.
    #[schemars(with = "Vec<String>")]
    #[serde(default, deserialize_with = "present")]
    pub file_types: Option<Vec<String>>,
    /// Globs of the files this gate checks: without a `/` a glob matches the file's name
    /// (`Dockerfile`, `*.sh`), with one the path from the workspace root (`.github/workflows/*.yml`).
    /// Case is ignored. Replaces `file_types` when both come from a preset and the gate.
    #[schemars(with = "Vec<String>")]
    #[serde(default, deserialize_with = "present")]
    pub files: Option<Vec<SpannedString>>,
    /// Narrows the gate's files further with globs.
    #[schemars(with = "RawGlobs")]
    #[serde(default, deserialize_with = "present")]
    pub scope: Option<RawGlobs>,
    /// A report file the tool writes, read instead of its stdout; relative to `cwd`, or
    /// `{report_dir}/…`: a fresh folder in the run's log folder that `command` can name too,
    /// e.g. "{report_dir}/junit.xml" with `--junitxml={report_dir}/junit.xml`. A file in the
    /// workspace is removed before each run, so a stale report is never read.
    #[schemars(with = "String")]
    #[serde(default, deserialize_with = "present")]
    pub output_file: Option<SpannedString>,
    /// How the tool's output becomes violations.
    #[schemars(with = "RawParsing")]
    #[serde(default, deserialize_with = "present")]
    pub parsing: Option<RawParsing>,
    /// A whole-file fixer, offered as a code action (e.g. "Format with ruff").
    #[schemars(with = "RawFix")]
    #[serde(default, deserialize_with = "present")]
    pub fix: Option<RawFix>,
    /// Shown with the gate's failures; `{files}` is replaced by the failing files.
    #[schemars(with = "String")]
    #[serde(default, deserialize_with = "present")]
    pub fix_hint: Option<String>,
    /// Which exit codes mean "no findings" and "findings"; any other is an error.
    #[schemars(with = "RawSuccess", extend("default" = { "exit_codes_ok": [0], "exit_codes_findings": [1] }))]
    #[serde(default, deserialize_with = "present")]
    pub success: Option<RawSuccess>,
    /// Seconds before the gate's processes are killed (default 120).
    #[schemars(with = "f64", extend("exclusiveMinimum" = 0, "default" = 120.0))]
    #[serde(default, deserialize_with = "present")]
    pub timeout_s: Option<Spanned<f64>>,
    /// Environment variables set for the tool, e.g. { PYTHONPATH: src }.
    #[schemars(with = "BTreeMap<String, String>")]
    #[serde(default, deserialize_with = "present")]
    pub env: Option<BTreeMap<String, String>>,
    /// Working directory, relative to the workspace root. The gate then checks only the files
    /// in that folder, unless its `scope` has `include_globs`.
    #[schemars(with = "String")]
    #[serde(default, deserialize_with = "present")]
    pub cwd: Option<String>,
    /// The folder the tool's relative paths start from, relative to the workspace root, when it is
    /// not `cwd` (e.g. a cargo workspace's root while `cwd` is one of its members).
    #[schemars(with = "String")]
    #[serde(default, deserialize_with = "present")]
    pub paths_relative_to: Option<String>,
    /// A missing tool skips the gate instead of failing it.
    #[schemars(with = "bool", extend("default" = false))]
    #[serde(default, deserialize_with = "present")]
    pub optional: Option<bool>,
    /// Findings are reported but never block the run or the baseline.
    #[schemars(with = "bool", extend("default" = false))]
    #[serde(default, deserialize_with = "present")]
    pub allow_fail: Option<bool>,
    /// The least severity that fails the gate (default hint: every finding). Findings below it
    /// are shown but do not fail the gate.
    #[schemars(with = "Severity", extend("default" = "hint"))]
    #[serde(default, deserialize_with = "present")]
    pub fail_on: Option<Severity>,
    /// false: a repository-wide gate (a type checker over the project, a test suite), run once
    /// without file arguments, and only when one of its files is in scope. Default true, but
    /// false for `kind: deps` (an installer takes no file arguments).
    #[schemars(with = "bool", extend("default" = true))]
    #[serde(default, deserialize_with = "present")]
    pub pass_files: Option<bool>,
    /// Where the tool's own configuration chooses its files, relative to `cwd`: `FILE` (it
    /// exists) or `FILE#KEY` (a dotted key in a TOML, JSON or INI file), e.g.
    /// ["pyproject.toml#tool.mypy.files", "mypy.ini#mypy.files"]. When one is set, the tool runs
    /// without file arguments, as the project runs it, and its findings are kept for the files
    /// in scope.
    #[schemars(with = "Vec<String>")]
    #[serde(default, deserialize_with = "present")]
    pub own_selection: Option<Vec<String>>,
    /// Where the tool's configuration lists regular expressions of the paths it leaves out when
    /// it walks its folders, relative to `cwd` (`FILE#KEY`), e.g. ["pyproject.toml#tool.mypy.exclude"];
    /// `names:FILE#KEY` lists names of files and folders instead (pylint's `ignore`). A file that
    /// matches is not handed to the tool, and reports nothing.
    #[schemars(with = "Vec<String>")]
    #[serde(default, deserialize_with = "present")]
    pub own_exclude: Option<Vec<String>>,
    /// Arguments added after `command` when a place is set in `cwd` (`FILE`, or `FILE#KEY` as in
    /// `own_selection`): for a tool that reads its configuration only when told where, e.g.
    /// { "pyproject.toml#tool.bandit": [-c, pyproject.toml] }.
    #[schemars(with = "BTreeMap<String, Vec<String>>")]
    #[serde(default, deserialize_with = "present")]
    pub args_when: Option<IndexMap<String, Vec<String>>>,
    /// When the gate runs: on save, on command, in CI. Default all three, but [command, ci] for
    /// `kind: test` and `kind: e2e`.
    #[schemars(with = "Vec<Trigger>", extend("default" = ["save", "command", "ci"]))]
    #[serde(default, deserialize_with = "present")]
    pub run_on: Option<Vec<Trigger>>,
    /// Split long file lists into batches of at most this many files.
    #[schemars(with = "usize", extend("minimum" = 1))]
    #[serde(default, deserialize_with = "present")]
    pub max_files_per_run: Option<Spanned<usize>>,
    /// The unit the tool counts columns in.
    #[schemars(with = "ColumnUnit", extend("default" = "char"))]
    #[serde(default, deserialize_with = "present")]
    pub column_unit: Option<ColumnUnit>,
    /// Tool severity word → error | warning | info | hint, e.g. { CRITICAL: error, SUGGESTION: hint }.
    #[schemars(with = "BTreeMap<String, Severity>")]
    #[serde(default, deserialize_with = "present")]
    pub severity_map: Option<BTreeMap<String, Severity>>,
    /// How the gate's results are reused (workspace for gates without file arguments).
    #[schemars(with = "CachePolicy", extend("default" = "per_file"))]
    #[serde(default, deserialize_with = "present")]
    pub cache: Option<CachePolicy>,
    /// Files whose content is part of the cache key (e.g. pyproject.toml). For `kind: deps`,
    /// the lock files: while they are as at the gate's last green run, it is skipped (without
    /// them it always runs), e.g. [uv.lock, pyproject.toml].
    #[schemars(with = "Vec<String>")]
    #[serde(default, deserialize_with = "present")]
    pub cache_inputs: Option<Vec<String>>,
    /// Never runs at the same time as another exclusive gate, in this run or in another qgates
    /// process on the same workspace (gates that share a database, a port, a build folder).
    #[schemars(with = "bool", extend("default" = false))]
    #[serde(default, deserialize_with = "present")]
    pub exclusive: Option<bool>,
    /// A warm process that answers the gate's checks from memory (docs/warm.md), used by the
    /// language server and the agent server, and by `qgates check --warm`. Presets of slow
    /// tools have one (mypy: dmypy); `false` turns it off.
    #[serde(default, deserialize_with = "present")]
    pub warm: Option<RawWarmSetting>,
}

/// `warm: false`, or how the gate's warm process runs.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RawWarmSetting {
    /// `false`: always run the tool cold; `true`: the preset's warm process.
    Switch(bool),
    Spec(RawWarm),
}

/// A warm process kept by qgates, one of two kinds. A tool's own daemon: `serve` runs it in
/// the foreground for as long as it is kept; `check` asks it about the files (they are
/// appended), and its output is read as the gate's. Or the tool's language server
/// (`language_server`, over stdio): qgates opens the files in it and reads its diagnostics.
/// `{state}` is the process's folder (`.qgates/warm/<gate id>`); `{args}`, a whole item, the
/// gate's command after its program.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawWarm {
    /// e.g. [dmypy, --status-file, "{state}/dmypy.json", daemon, --, "{args}"]
    #[serde(default)]
    pub serve: Option<Vec<String>>,
    /// e.g. [dmypy, --status-file, "{state}/dmypy.json", check]
    #[serde(default)]
    pub check: Option<Vec<String>>,
    /// The tool's language server over stdio, e.g. [pyright-langserver, --stdio].
    #[serde(default)]
    pub language_server: Option<Vec<String>>,
    /// What the language server is answered when it asks for its settings
    /// (`workspace/configuration`); `{folder_uri}` in a string is the workspace folder's URI.
    /// Without it, nothing: the server's defaults and the project's configuration files.
    #[serde(default)]
    #[schemars(with = "Option<BTreeMap<String, serde_json::Value>>")]
    pub settings: Option<serde_json::Value>,
    /// A file `serve` writes once it takes checks, e.g. "{state}/dmypy.json".
    #[serde(default)]
    pub ready_file: Option<String>,
    /// `dmypy`: qgates asks the daemon in its own protocol, through the connection named in
    /// `ready_file`, instead of starting `check`'s client for every check.
    #[serde(default)]
    pub protocol: Option<String>,
}

/// A key that is there must have a value: `command:` with nothing after it is a mistake to
/// report (at its place), not the same as leaving the key out.
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}
