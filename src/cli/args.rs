//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::core::api::ScopeChoice;

#[derive(Debug, Parser)]
#[command(
    name = "qgates",
    version,
    about = "Run a repository's quality gates from one quality.yaml and get one normalized report.",
    long_about = "Run a repository's quality gates (formatters, linters, type checkers, any command) from one \
quality.yaml, and turn every tool's output into one normalized violation format.",
    after_help = "Examples:\n  qgates check                      check the whole project (see --scope)\n  qgates check src/app.py           check one file\n  qgates check --format json        machine-readable report\n  qgates check --gates ruff_lint    run only some gates\n  qgates init                       write a starting quality.yaml\n  qgates schema > quality.schema.json\n\nExit codes: 0 green, 1 violations, 2 configuration or usage error, 3 a gate could not run."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the gates and report.
    #[command(
        after_help = "Examples:\n  qgates check\n  qgates check --scope project --format text\n  qgates check src/a.py 'src/my file.py'\n  qgates check --gates ruff_format,ruff_lint --format sarif > qgates.sarif\n  qgates check --root path/to/project\n  qgates check --clean-room         does HEAD pass in a fresh checkout?\n  qgates check --clean-room main~1 --keep-worktree\n\nExit codes: 0 green, 1 violations, 2 configuration or usage error, 3 a gate could not run."
    )]
    Check(CheckArgs),
    /// Merge the JSON reports of a sharded run (`qgates check --shard i/n`) into the report of
    /// the whole run.
    #[command(
        after_help = "Examples:\n  qgates merge shard-1.json shard-2.json shard-3.json shard-4.json\n  qgates merge shards/*.json --format sarif --out qgates.sarif\n  qgates merge shards/*.json --format github\n\nEvery shard 1..n must be given once, all from the same commit, configuration, scope mode and\nnumber of files; gates that take no file arguments ran in shard 1.\n\nExit codes: 0 green, 1 violations, 2 reports that do not make one run (or are not shard\nreports), 3 a gate could not run (or the output could not be written)."
    )]
    Merge(MergeArgs),
    /// Write a quality.yaml for the tools the repository uses (found in its configuration,
    /// dependencies, pre-commit hooks and files), one line per gate with the reason.
    #[command(
        after_help = "Examples:\n  qgates init\n  qgates init --dry-run            print the file, write nothing\n  qgates init --force              replace an existing quality.yaml\n\nWhere nothing is detected, nothing is written (exit code 0) and qgates says what it looked for."
    )]
    Init(InitArgs),
    /// Print the JSON Schema (draft-07) of quality.yaml, for editors.
    Schema,
    /// Show or change the baseline of the auto scope (the last all-green commit of a branch).
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// List or stop the workspace's warm processes (the daemons that answer slow gates, e.g.
    /// dmypy for mypy).
    #[command(subcommand)]
    Daemon(DaemonCommand),
    /// Serve the gates to AI agents over the Model Context Protocol (stdio): tools
    /// run_quality_gates and last_summary.
    #[command(
        after_help = "Register it with an agent client as a stdio server, e.g.\n  {\"mcpServers\": {\"qgates\": {\"command\": \"qgates\", \"args\": [\"mcp\"]}}}\nStarted in the workspace (or given --root), it shares .qgates/ (baseline state, cache, logs) with qgates check."
    )]
    Mcp(McpArgs),
    /// Answer an agent's hook (Claude Code, Cursor, Gemini CLI): check what the agent just
    /// edited, or everything its turn changed, and tell it of new findings in its own contract.
    #[command(
        after_help = "The agent runs it with the hook's payload on stdin; `qgates init --agent NAME` writes the entries.
After an edit it checks the edited files with the gates that run on save; at the end of a turn, the auto scope.
Only new findings are said, and a turn is kept going at most once for the same findings.

Examples (in the agent's hook settings):
  qgates hook claude
  qgates hook cursor --budget 10

Exit codes: 0 answered (the answer is on stdout, as the agent's contract says), 1 the payload could not be read."
    )]
    Hook(super::hook::HookArgs),
    /// Parse a saved tool output with a gate's parsing rules: test a quality.yaml without running the tool.
    #[command(
        after_help = "Examples:\n  ruff check --output-format json src > out.json; qgates parse ruff_lint out.json --exit-code 1\n  qgates parse tests .qgates/runs/RUN/tests.reports/junit.xml\n      a gate with output_file: FILE is its report, and the reports of parsing.also are\n      the copies the run kept beside it (or give them with --report PATH)"
    )]
    Parse(ParseArgs),
    /// Run the language server over stdin/stdout (for editors).
    #[command(
        after_help = "Editors start it themselves: the VS Code extension and the Neovim plugin in editors/.\nLogs go to stderr; set QGATES_LOG=debug (or initializationOptions.logLevel) for more."
    )]
    Lsp(LspArgs),
    /// Trust what a workspace's quality.yaml runs, so the language server and the agent server
    /// run its gates.
    #[command(
        after_help = "The language server and `qgates mcp` run nothing from a repository until a person trusts it.\nqgates trust prints every command the configuration runs (argv, env, folder, the program it resolves\nto, scripts from the repository) and asks; what it records covers exactly that: a changed command,\nscript or program needs trust again. `qgates check` is your own command and needs no trust.\n\nExamples:\n  qgates trust ~/src/project\n  qgates trust --yes .              trust without asking (scripts; read the list it prints)\n\nExit codes: 0 trusted, 1 not trusted (the answer was no), 2 a configuration or usage error."
    )]
    Trust(TrustArgs),
    /// List the preset catalog (`preset: NAME` in a gate), or show one preset's gate.
    #[command(
        after_help = "Examples:\n  qgates presets\n  qgates presets show eslint\n  qgates presets --format markdown > docs/presets.md\n\nIn quality.yaml:\n  gates:\n    lint: { preset: shellcheck }"
    )]
    Presets(PresetsArgs),
    /// Show the workspace's configuration, whether it is valid and trusted, and where each
    /// gate's tool is, without running anything (for editors' health checks).
    #[command(
        after_help = "Examples:\n  qgates status\n  qgates status --json path/to/project\n\nExit codes: 0 the configuration is valid, 2 it is not."
    )]
    Status(StatusArgs),
    /// Print a shell completion script.
    #[command(
        after_help = "Examples:\n  qgates completions bash > ~/.local/share/bash-completion/completions/qgates\n  qgates completions zsh > ~/.zfunc/_qgates      (with fpath+=~/.zfunc before compinit)\n  qgates completions fish > ~/.config/fish/completions/qgates.fish"
    )]
    Completions(CompletionsArgs),
    /// Print the manual page (roff), or write one page per command to a folder.
    #[command(
        after_help = "Examples:\n  qgates man | man -l -\n  qgates man --out-dir ~/.local/share/man/man1     qgates.1, qgates-check.1, …"
    )]
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write qgates.1 and one page per command (qgates-check.1, …) into this folder instead of
    /// printing qgates.1.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PresetsArgs {
    #[command(subcommand)]
    pub show: Option<PresetsCommand>,
    /// How the list is printed.
    #[arg(long, value_enum, default_value_t = PresetsFormat::Text)]
    pub format: PresetsFormat,
}

#[derive(Debug, Subcommand)]
pub enum PresetsCommand {
    /// Print the gate a preset stands for, as quality.yaml would write it.
    Show {
        /// The preset's name, e.g. eslint.
        name: String,
    },
    /// Run a preset against a fixture folder as the catalog's presets are tested: the expected
    /// findings, the tool's own output, a clean run and the fix.
    #[command(
        after_help = "The fixture folder holds the files the tool checks and expected.yaml, what it must report\nthere (docs/presets.md, \"Testing a preset\"). The tool must be on PATH.\n\nExamples:\n  qgates presets test ./tools/qgates/ourlint.yaml tools/qgates/ourlint-fixture\n  qgates presets test shellcheck fixtures/presets/shellcheck\n\nExit codes: 0 every check passed, 1 one failed, 2 a usage error (no such preset, no expected.yaml),\n3 the test could not run (the tool is missing)."
    )]
    Test {
        /// A catalog preset's name, or the path of a preset file.
        preset: String,
        /// The fixture folder.
        fixture: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PresetsFormat {
    /// A table for people.
    Text,
    /// One JSON array: name, tool, languages, install, homepage.
    Json,
    /// The Markdown table of docs/presets.md.
    Markdown,
}

#[derive(Debug, Args)]
pub struct LspArgs {
    /// Talk over stdin/stdout (the default and only transport; accepted for clients that pass it).
    #[arg(long)]
    pub stdio: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The workspace folder (default: the one holding the current folder).
    pub dir: Option<std::path::PathBuf>,
    /// One JSON object instead of lines for people.
    #[arg(long)]
    pub json: bool,
    /// The configuration file (default: quality.yaml or .qgates/quality.yaml in the workspace).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The workspace folder (default: the one holding the current folder).
    pub dir: Option<std::path::PathBuf>,
    /// The configuration file, when the servers are started with `--config`.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Trust without asking (for scripts); what is trusted is still printed.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Subcommand)]
pub enum BaselineCommand {
    /// Print the current branch's baseline commit and failed files.
    Show(BaselineArgs),
    /// Forget the current branch's baseline and failed files: the next auto run checks the branch.
    Reset(BaselineArgs),
    /// Make a commit the current branch's baseline (and forget its failed files).
    Set {
        /// A commit, branch or tag, e.g. HEAD~3 or main.
        rev: String,
        #[command(flatten)]
        args: BaselineArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum DaemonCommand {
    /// List the workspace's warm processes: gate, process id, age, memory.
    List(DaemonArgs),
    /// Stop the workspace's warm processes (the next check starts them again).
    Stop(DaemonArgs),
}

#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// Only this gate's.
    #[arg(long)]
    pub gate: Option<String>,
    /// The workspace root (default: found from the current folder).
    #[arg(long)]
    pub root: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct BaselineArgs {
    /// The workspace root (default: found from the current folder).
    #[arg(long)]
    pub root: Option<PathBuf>,
}

/// `--scope`: the engine's scope names, with their help.
impl ValueEnum for ScopeChoice {
    fn value_variants<'a>() -> &'a [Self] {
        &ScopeChoice::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let help = match self {
            ScopeChoice::Auto => {
                "Changed since the last all-green run on this branch, plus files that failed since"
            }
            ScopeChoice::Branch => "Changed since the merge-base with the parent branch",
            ScopeChoice::Project => {
                "Every file of the project (project_scope globs, honouring .gitignore)"
            }
            ScopeChoice::Files => "Only the paths given",
        };
        Some(clap::builder::PossibleValue::new(self.as_str()).help(help))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// The summary line, then compact JSON (default when stdout is not a terminal).
    Summary,
    /// Coloured, per file, for people (default on a terminal).
    Text,
    /// The compact JSON report.
    Json,
    /// A numbered checklist per violation.
    Markdown,
    /// SARIF 2.1.0, for code-scanning uploads.
    Sarif,
    /// GitHub Actions workflow annotations.
    Github,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files or folders to check (implies --scope files).
    pub paths: Vec<PathBuf>,
    /// Which files to check. Default: `files` when paths are given, else `auto`.
    #[arg(long, value_enum)]
    pub scope: Option<ScopeChoice>,
    /// Only these gates, comma-separated ids.
    #[arg(long, value_delimiter = ',')]
    pub gates: Option<Vec<String>>,
    /// Leave out the gates of these kinds, comma-separated (format, lint, typecheck, test, e2e,
    /// deps, other), e.g. `--skip-kinds test,e2e`; they are reported as skipped.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "KINDS",
        conflicts_with = "only_kinds"
    )]
    pub skip_kinds: Option<Vec<String>>,
    /// Run only the gates of these kinds, comma-separated, e.g. `--only-kinds lint,format`; the
    /// others are reported as skipped.
    #[arg(long, value_delimiter = ',', value_name = "KINDS")]
    pub only_kinds: Option<Vec<String>>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Check only shard I of N of the scope's files (1-based, e.g. `2/4`), for a CI matrix whose
    /// reports `qgates merge` combines. The split depends only on the files and their sizes;
    /// gates without file arguments run in shard 1. The baseline state is not advanced.
    #[arg(long, value_name = "I/N", value_parser = parse_shard, conflicts_with = "fix")]
    pub shard: Option<crate::core::api::Shard>,
    /// The configuration file (default: quality.yaml or .qgates/quality.yaml in the workspace root,
    /// else the embedded default). It does not move the root: the files checked are still the
    /// workspace's.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// First let each gate's fixer (`fix` in quality.yaml, e.g. ruff format) rewrite the files in
    /// scope, then check; the report lists the files that changed.
    #[arg(long)]
    pub fix: bool,
    /// Decide by new findings only: each finding of an `auto` or `branch` run is compared with
    /// those of the same gates at the scope's base commit, and the gates fail and the exit code
    /// is non-zero only for findings the change introduced; pre-existing ones are counted.
    #[arg(long)]
    pub new_only: bool,
    /// Ask the warm process of gates that have one (mypy: dmypy), starting it if none runs,
    /// as the language server and the agent server do; it is kept for the next run
    /// (`qgates daemon stop` ends it).
    #[arg(long)]
    pub warm: bool,
    /// Do not read or advance the baseline state in .qgates/state.json.
    #[arg(long)]
    pub no_state: bool,
    /// Run every gate on every file, ignoring (and not updating) the result cache in .qgates/cache/.
    #[arg(long)]
    pub no_cache: bool,
    /// The workspace root (default: going up from the first path, or the current folder, the
    /// nearest folder that holds quality.yaml or .qgates/quality.yaml, else the nearest that holds
    /// .git, else the folder it started from). --config does not change it.
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Run the gates in a fresh git worktree of REV (default HEAD), with the configuration
    /// committed there: does the commit pass from scratch? Uncommitted changes, the cache and
    /// the baseline state are left out; the scope is `project` unless --scope or paths say
    /// otherwise (`auto` means `branch` there). The worktree is removed afterwards.
    #[arg(long, value_name = "REV", num_args = 0..=1, default_missing_value = crate::core::api::clean_room::DEFAULT_REV, conflicts_with = "fix")]
    pub clean_room: Option<String>,
    /// Keep the clean room's worktree after the run (the report names it); remove it with
    /// `git worktree remove PATH`.
    #[arg(long, requires = "clean_room")]
    pub keep_worktree: bool,
}

/// `--shard I/N`, with the rule in the message whatever is wrong.
fn parse_shard(s: &str) -> Result<crate::core::api::Shard, String> {
    s.parse()
        .map_err(|e| format!("--shard takes i/n with 1 ≤ i ≤ n, e.g. 2/4 ({e})"))
}

/// How a report is printed: shared by `check` and `merge`.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format. Default: `text` on a terminal, else `summary`.
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// `summary` shows at most this many violations, the most serious first (0: the counts
    /// only); its summary line says how many were left out and where the whole report is.
    #[arg(long, value_name = "N", default_value_t = crate::core::report::page::DEFAULT_MAX_VIOLATIONS)]
    pub max_violations: usize,
    /// `summary` shows the violations from this place in that order (the summary line gives
    /// the next page's).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: usize,
    /// `text` and `summary` list the pre-existing violations of a `--new-only` run too (they
    /// are counted either way).
    #[arg(long)]
    pub show_existing: bool,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The JSON reports of the shards (`qgates check --shard i/n --format json`), one per shard.
    #[arg(required = true, value_name = "REPORT.json")]
    pub reports: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Write the report to this file instead of stdout (stdout then gets the summary line).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The configuration file (default: quality.yaml or .qgates/quality.yaml in the workspace
    /// root, else the embedded default). Read anew for every run.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The workspace root (default: the nearest folder above the current one that holds a
    /// configuration or a .git). Relative `files` in tool calls are taken from here.
    #[arg(long)]
    pub root: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Overwrite an existing quality.yaml.
    #[arg(long)]
    pub force: bool,
    /// Print the file to stdout (the explanation to stderr) instead of writing it.
    #[arg(long)]
    pub dry_run: bool,
    /// The workspace root (default: the current folder).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Also set up this agent: its hooks (`qgates hook AGENT`) and its MCP server entry, merged
    /// into its settings files. An existing quality.yaml is then kept as it is.
    #[arg(long, value_enum, value_name = "AGENT", conflicts_with = "dry_run")]
    pub agent: Option<super::hook::Agent>,
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// The gate whose parsing rules to use.
    pub gate: String,
    /// The saved standard output of the tool ("-" reads stdin); for a gate with `output_file`,
    /// the report it wrote (a run keeps a copy in its log folder).
    pub stdout: PathBuf,
    /// The saved standard error of the tool.
    #[arg(long)]
    pub stderr: Option<PathBuf>,
    /// The report of a reader of `parsing.also` that reads one (its `output_file`), one per such
    /// reader in their order. Default: the copy the run kept beside FILE in its log folder.
    #[arg(long = "report", value_name = "PATH")]
    pub reports: Vec<PathBuf>,
    /// The exit code the tool returned (the exit_code strategy needs it).
    #[arg(long, default_value_t = 1)]
    pub exit_code: i32,
    /// The configuration file (default: quality.yaml or .qgates/quality.yaml in the workspace
    /// root, else the embedded default).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The workspace root (default: the nearest folder above the current one that holds a
    /// configuration or a .git). Paths in the output are made relative to it, from the gate's
    /// `cwd` as `qgates check` runs it.
    #[arg(long)]
    pub root: Option<PathBuf>,
}
