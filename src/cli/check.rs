//! `qgates check`, `qgates init` and `qgates parse`.

use std::io::IsTerminal;
use std::path::Path;

use super::args::{BaselineCommand, CheckArgs, FormatArg, InitArgs, ParseArgs, ScopeArg};
use super::output::{print_stderr, print_stdout};
use super::workspace::find_root;
use crate::core::cache::ResultCache;
use crate::core::config::{self, Trigger};
use crate::core::engine::{RunRequest, run};
use crate::core::fix::run_with_fixes;
use crate::core::git_changes::Repo;
use crate::core::parse::{OutputSource, ParseContext, ReadError, SavedOutput, parse_saved_output};
use crate::core::report::{self, Report, exit};
use crate::core::request::{ScopeChoiceError, scope_request};
use crate::core::scope::DETACHED;
use crate::core::state::StateStore;

pub fn check(a: CheckArgs) -> i32 {
    let start = a
        .paths
        .first()
        .map(|p| p.as_path())
        .unwrap_or(Path::new("."));
    let root = find_root(a.root.as_deref(), a.config.as_deref(), start);
    if !root.is_dir() {
        print_stderr(&format!(
            "qgates: the workspace root {} is not a folder. Check --root.\n",
            root.display()
        ));
        return exit::USAGE;
    }
    let config = match config::load_for_workspace(&root, a.config.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            print_stderr(&format!(
                "{e}\nqgates: the configuration has errors (see above); nothing was run.\n"
            ));
            return exit::USAGE;
        }
    };
    let scope = match scope_request(a.scope.map(ScopeArg::choice), a.paths.clone()) {
        Ok(s) => s,
        Err(ScopeChoiceError::FilesNeedPaths) => {
            print_stderr(
                "qgates: --scope files needs paths: qgates check --scope files src/a.py\n",
            );
            return exit::USAGE;
        }
        Err(ScopeChoiceError::PathsWithOtherScope(s)) => {
            print_stderr(&format!(
                "qgates: --scope {} chooses the files itself; drop the paths, or use --scope files.\n",
                s.as_str()
            ));
            return exit::USAGE;
        }
    };
    let cache = (!a.no_cache).then(|| std::sync::Arc::new(ResultCache::load(&root)));
    let request = RunRequest {
        root,
        scope,
        gates: a.gates.clone(),
        trigger: Trigger::Ci,
        cache: cache.clone(),
        update_state: !a.no_state,
        also: Vec::new(),
        events: None,
        run_dirs: None,
    };
    // One thread drives the run: the gates are processes, waited for without blocking it, and
    // their outputs are parsed on the blocking pool. Worker threads would only cost start-up.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            print_stderr(&format!("qgates: cannot start the runtime: {e}\n"));
            return exit::GATE_ERROR;
        }
    };
    let report = runtime.block_on(async {
        if a.fix {
            run_with_fixes(&config, &request).await
        } else {
            run(&config, &request).await
        }
    });
    // The run is over and awaited everything it started; an idle blocking-pool thread (the
    // pruning of old run folders) need not be woken and joined before the process exits.
    runtime.shutdown_background();
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            print_stderr(&format!("qgates: {e}\n"));
            return exit::USAGE;
        }
    };
    if let Some(cache) = &cache {
        cache.save();
    }
    let terminal = std::io::stdout().is_terminal();
    let format = a.format.unwrap_or(if terminal {
        FormatArg::Text
    } else {
        FormatArg::Summary
    });
    let color = terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    print_stdout(&render(&report, format, color));
    report.exit_code()
}

/// Renders a report in one of the output formats.
pub fn render(report: &Report, format: FormatArg, color: bool) -> String {
    let mut s = match format {
        FormatArg::Summary => report.to_summary_format(),
        FormatArg::Json => report.to_json(),
        FormatArg::Text => report::text::render(report, color),
        FormatArg::Markdown => report::markdown::render(report),
        FormatArg::Sarif => report::sarif::render(report),
        FormatArg::Github => report::github::render(report),
    };
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

pub fn init(a: InitArgs) -> i32 {
    let root = find_root(a.root.as_deref(), None, Path::new("."));
    let root = if a.root.is_some() {
        root
    } else {
        std::env::current_dir().unwrap_or(root)
    };
    if !a.force
        && let Some(existing) = config::discover(&root)
    {
        print_stderr(&format!(
            "qgates: {} already exists; nothing was written. Use --force to overwrite it.\n",
            existing.display()
        ));
        return exit::USAGE;
    }
    let target = root.join("quality.yaml");
    match std::fs::write(&target, config::DEFAULT_CONFIG) {
        Ok(()) => {
            print_stdout(&format!(
                "Wrote {} (ruff format, ruff check, mypy). Run `qgates check` to use it.\n",
                target.display()
            ));
            exit::GREEN
        }
        Err(e) => {
            print_stderr(&format!("qgates: cannot write {}: {e}\n", target.display()));
            exit::USAGE
        }
    }
}

pub fn parse(a: ParseArgs) -> i32 {
    let root = find_root(a.root.as_deref(), a.config.as_deref(), Path::new("."));
    let config = match config::load_for_workspace(&root, a.config.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            print_stderr(&format!("{e}\n"));
            return exit::USAGE;
        }
    };
    let Some(gate) = config.gate(&a.gate) else {
        let known: Vec<&str> = config.gates.iter().map(|g| g.id.as_str()).collect();
        print_stderr(&format!(
            "qgates: unknown gate `{}`. Active gates: {}.\n",
            a.gate,
            known.join(", ")
        ));
        return exit::USAGE;
    };
    // Standard input is read here; a file is left to the parser.
    let read_stdin = |p: &Path| -> Result<Option<Vec<u8>>, String> {
        if p != Path::new("-") {
            return Ok(None);
        }
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf).map_err(|e| e.to_string())?;
        Ok(Some(buf))
    };
    let (stdin_out, stdin_err) = match (
        read_stdin(&a.stdout),
        a.stderr.as_deref().map(read_stdin).transpose(),
    ) {
        (Ok(o), Ok(e)) => (o, e.flatten()),
        (Err(e), _) | (_, Err(e)) => {
            print_stderr(&format!("qgates: {e}\n"));
            return exit::USAGE;
        }
    };
    fn source<'a>(stdin: &'a Option<Vec<u8>>, path: Option<&'a Path>) -> OutputSource<'a> {
        match (stdin, path) {
            (Some(bytes), _) => OutputSource::Bytes(bytes),
            (None, Some(path)) => OutputSource::File(path),
            (None, None) => OutputSource::Bytes(b""),
        }
    }
    let hint = a.stdout.display().to_string();
    let ctx = ParseContext {
        gate,
        root: &root,
        cwd: &root,
        log_hint: &hint,
    };
    match parse_saved_output(
        &ctx,
        SavedOutput {
            stdout: source(&stdin_out, Some(&a.stdout)),
            stderr: source(&stdin_err, a.stderr.as_deref()),
            exit_code: Some(a.exit_code),
        },
    ) {
        Ok(parsed) => {
            // Serialized straight from the parsed values: no intermediate JSON tree.
            #[derive(serde::Serialize)]
            struct Out<'a> {
                gate: &'a str,
                violations: &'a [crate::core::violation::Violation],
                outside_root: usize,
            }
            let out = Out {
                gate: &gate.id,
                violations: &parsed.violations,
                outside_root: parsed.outside_root,
            };
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            let _ = serde_json::to_writer(&mut stdout, &out);
            let _ = std::io::Write::write_all(&mut stdout, b"\n");
            let _ = std::io::Write::flush(&mut stdout);
            exit::GREEN
        }
        Err(ReadError::Io { path, error }) => {
            print_stderr(&format!(
                "qgates: cannot read {}: {error}\n",
                path.display()
            ));
            exit::USAGE
        }
        Err(ReadError::Parse(e)) => {
            print_stderr(&format!(
                "qgates: {} output could not be read: {e}\n",
                gate.name
            ));
            exit::GATE_ERROR
        }
    }
}

/// `qgates baseline show|reset|set`.
pub fn baseline(cmd: BaselineCommand) -> i32 {
    let args = match &cmd {
        BaselineCommand::Show(a) | BaselineCommand::Reset(a) => a,
        BaselineCommand::Set { args, .. } => args,
    };
    let root = find_root(args.root.as_deref(), None, Path::new("."));
    let repo = match Repo::discover(&root) {
        Ok(Some(r)) => r,
        Ok(None) => {
            print_stderr(&format!(
                "qgates: {} is not in a git repository; baselines belong to git branches.\n",
                root.display()
            ));
            return exit::USAGE;
        }
        Err(e) => {
            print_stderr(&format!("qgates: {e}\n"));
            return exit::USAGE;
        }
    };
    let branch = repo.branch_name().unwrap_or_else(|| DETACHED.to_string());
    let store = StateStore::new(&root);
    let result = match &cmd {
        BaselineCommand::Show(_) => store.load().map(|(state, warning)| {
            let entry = state.branches.get(&branch).cloned().unwrap_or_default();
            let mut out = format!(
                "branch: {branch}\nbaseline: {}\n",
                entry
                    .baseline_sha
                    .as_deref()
                    .unwrap_or("none (the next auto run checks the branch)")
            );
            if entry.failed_files.is_empty() {
                out.push_str("failed files: none\n");
            } else {
                out.push_str("failed files:\n");
                for f in &entry.failed_files {
                    out.push_str(&format!("  {f}\n"));
                }
            }
            print_stdout(&out);
            warning
        }),
        BaselineCommand::Reset(_) => store
            .update(|s| {
                s.branches.remove(&branch);
            })
            .map(|((), w)| {
                print_stdout(&format!(
                    "Baseline of {branch} forgotten; the next auto run checks the whole branch.\n"
                ));
                w
            }),
        BaselineCommand::Set { rev, .. } => {
            let Some(sha) = repo.resolve_commit(rev) else {
                print_stderr(&format!(
                    "qgates: `{rev}` names no commit in this repository.\n"
                ));
                return exit::USAGE;
            };
            store
                .update(|s| {
                    s.branches.insert(
                        branch.clone(),
                        crate::core::state::BranchState {
                            baseline_sha: Some(sha.clone()),
                            failed_files: Vec::new(),
                        },
                    );
                })
                .map(|((), w)| {
                    print_stdout(&format!("Baseline of {branch} set to {sha}.\n"));
                    w
                })
        }
    };
    match result {
        Ok(warning) => {
            if let Some(w) = warning {
                print_stderr(&format!("qgates: {w}\n"));
            }
            exit::GREEN
        }
        Err(e) => {
            print_stderr(&format!("qgates: {e}\n"));
            exit::GATE_ERROR
        }
    }
}
