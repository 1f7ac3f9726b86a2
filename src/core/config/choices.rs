//! The words a `quality.yaml` chooses from: gate kinds, triggers, column units, cache policies,
//! parsing strategies and output layouts. Each value's doc comment is its description in the
//! schema editors show.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `ALL`, every value in order, and `as_str`, each value's word in quality.yaml.
macro_rules! words {
    ($ty:ident { $($variant:ident => $word:literal),* $(,)? }) => {
        impl $ty {
            pub const ALL: [$ty; [$($word),*].len()] = [$($ty::$variant),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $word,)*
                }
            }
        }
    };
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
    /// A test suite; not run on save unless its `run_on` says so.
    Test,
    /// An end-to-end or clean-room suite; not run on save unless its `run_on` says so.
    E2e,
    /// Installs the dependencies (uv sync, npm ci): runs before every other gate of the run, and
    /// is skipped while its `cache_inputs` (the lock files) are as at its last green run.
    Deps,
    /// Anything else.
    #[default]
    Other,
}

words!(GateKind { Format => "format", Lint => "lint", Typecheck => "typecheck", Test => "test",
    E2e => "e2e", Deps => "deps", Other => "other" });

impl GateKind {
    /// The kind named `name` (as written in quality.yaml).
    pub fn parse(name: &str) -> Option<GateKind> {
        GateKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The triggers a gate of this kind runs on when its `run_on` is not given: suites are too
    /// slow to run on every save.
    pub fn default_run_on(self) -> Vec<Trigger> {
        match self {
            GateKind::Test | GateKind::E2e => vec![Trigger::Command, Trigger::Ci],
            _ => Trigger::ALL.to_vec(),
        }
    }
}

/// What started a run; a gate's `run_on` lists the triggers it runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// A file was saved in the editor.
    Save,
    /// A run asked for by the editor's or the agent's run command.
    Command,
    /// A `qgates check` run, in continuous integration or a terminal.
    Ci,
}

words!(Trigger { Save => "save", Command => "command", Ci => "ci" });

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

/// How a tool counts a tab in its columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TabCount {
    /// One column, as any character.
    #[default]
    One,
    /// Up to the next multiple of this many columns (Checkstyle's `tabWidth`).
    Stops(u32),
    /// This many columns wherever it is (JSHint's `indent`).
    Width(u32),
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

words!(CachePolicy { PerFile => "per_file", Workspace => "workspace", None => "none" });

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
    /// JUnit XML test results (pytest `--junitxml`, vitest, jest-junit, go-junit-report,
    /// cargo-nextest): one violation per failed or errored test, and the counts of tests.
    Junit,
    /// A coverage report (coverage.py JSON, Cobertura XML or LCOV): the total against
    /// `min_percent`, and in the `auto` and `branch` scopes the changed lines no test runs.
    Coverage,
}

words!(Strategy { JsonViolations => "json_violations", TextViolations => "text_violations",
    Sarif => "sarif", ExitCode => "exit_code", Junit => "junit", Coverage => "coverage" });

impl Strategy {
    /// The keys of a reader whatever its strategy: where it reads (`output_file`), its column
    /// unit, and more readers of the same run.
    pub const EVERY_READER_KEYS: [&'static str; 3] = ["output_file", "column_unit", "also"];

    /// The `parsing` keys this strategy reads besides `strategy` and `EVERY_READER_KEYS`; any
    /// other one is a mistake (often a sign that the strategy itself is wrong).
    pub fn parsing_keys(self) -> &'static [&'static str] {
        match self {
            Strategy::JsonViolations => &[
                "format",
                "violations_path",
                "field_map",
                "filter",
                "fixable_when",
                "fix_edits",
                "line_offset",
                "column_offset",
                "tab_stops",
                "tab_width",
                "extract",
                "defaults",
                "templates",
            ],
            Strategy::TextViolations => &[
                "pattern",
                "headers",
                "stream",
                "line_offset",
                "column_offset",
                "tab_stops",
                "tab_width",
                "defaults",
                "templates",
            ],
            Strategy::Sarif => &["templates", "tab_stops", "tab_width"],
            Strategy::ExitCode | Strategy::Junit => &[],
            Strategy::Coverage => &["format", "min_percent", "min_diff_percent", "diff_severity"],
        }
    }
}

/// How JSON output is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum JsonFormat {
    /// One JSON document.
    #[default]
    Json,
    /// One JSON object per line.
    Jsonl,
}

/// `parsing.format`: the layout of the output; which values apply depends on the strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputFormat {
    /// json_violations: one JSON document (the default).
    Json,
    /// json_violations: one JSON object per line.
    Jsonl,
    /// coverage: coverage.py's JSON report (`coverage json`).
    CoverageJson,
    /// coverage: Cobertura XML (`coverage xml` and most other languages' tools).
    Cobertura,
    /// coverage: an LCOV tracefile (`coverage lcov`, c8, cargo-llvm-cov).
    Lcov,
}

words!(OutputFormat { Json => "json", Jsonl => "jsonl", CoverageJson => "coverage_json",
    Cobertura => "cobertura", Lcov => "lcov" });

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
    /// JSON Lines whose lines have text before their JSON (a timestamp, a log level): each line's
    /// JSON starts at its first `{`, and a line without one (a start or summary line) is passed
    /// over.
    Prefixed,
}
