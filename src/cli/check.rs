//! `qgates check`: one run of the gates, rendered in the chosen format.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::args::{CheckArgs, FormatArg, OutputArgs};
use super::output::{fail, print_stderr, print_stdout, usage};
use super::workspace::{config_file, find_root};
use crate::core::api::KindFilter;
use crate::core::api::ResultCache;
use crate::core::api::children;
use crate::core::api::clean_room::{CleanRoom, CleanRoomError};
use crate::core::api::fix::execute_with_fixes;
use crate::core::api::{NewFindings, Run, RunRequest, ScopeRequest, execute, novelty};
use crate::core::api::{ScopeChoice, ScopeChoiceError, scope_request};
use crate::core::config::{self, Config, Trigger};
use crate::core::report::page::PageRequest;
use crate::core::report::{self, Report, exit};
use crate::core::workspace::qgates_dir::{self, Access};

pub fn check(a: CheckArgs) -> i32 {
    match prepare(&a) {
        Ok(prepared) => run_and_report(&a, prepared),
        Err(code) => code,
    }
}

/// What a check runs with, once every argument has been checked.
struct Prepared {
    root: PathBuf,
    access: Access,
    /// Removed when it goes out of scope, however the check ends (a signal included).
    clean_room: Option<CleanRoom>,
    config: Config,
    request: RunRequest,
    cache: Option<Arc<ResultCache>>,
    /// The results of the findings' reference (`novelty`), when compared and cached.
    reference_cache: Option<Arc<ResultCache>>,
}

/// Reads the arguments, the workspace and its configuration; an error has been said on stderr
/// and its exit code is returned.
fn prepare(a: &CheckArgs) -> Result<Prepared, i32> {
    let start = a
        .paths
        .first()
        .map(|p| p.as_path())
        .unwrap_or(Path::new("."));
    let root = find_root(a.root.as_deref(), start);
    if !root.is_dir() {
        return Err(usage(&format!(
            "the workspace root {} is not a folder. Check --root.",
            root.display()
        )));
    }
    let access = usable_qgates_dir(&root)?;
    // Made before the configuration is read: a clean room reads the one committed there.
    let clean_room = match a.clean_room.as_deref() {
        Some(rev) => Some(open_clean_room(&root, rev, a.keep_worktree)?),
        None => None,
    };
    let config = load_config(a, &root, clean_room.as_ref())?;
    let (scope, kinds) = scope_and_kinds(a, clean_room.is_some())?;
    let cache = (!a.no_cache && clean_room.is_none()).then(|| Arc::new(ResultCache::load(&root)));
    let request = match &clean_room {
        Some(c) => match c.request(scope, a.gates.clone(), Trigger::Ci) {
            Ok(r) => RunRequest {
                kinds,
                shard: a.shard,
                ..r
            },
            Err(e) => return Err(usage(&e.to_string())),
        },
        None => RunRequest {
            gates: a.gates.clone(),
            cache: cache.clone(),
            update_state: !a.no_state,
            kinds,
            shard: a.shard,
            warm: a.warm,
            new_findings: if a.new_only || config.new_only {
                NewFindings::Only
            } else {
                NewFindings::Ignore
            },
            ..RunRequest::new(root.clone(), scope, Trigger::Ci)
        },
    };
    let reference_cache = cache
        .as_ref()
        .filter(|_| request.new_findings != NewFindings::Ignore)
        .map(|_| Arc::new(ResultCache::load_reference(&root)));
    Ok(Prepared {
        root,
        access,
        clean_room,
        config,
        request,
        cache,
        reference_cache,
    })
}

fn open_clean_room(root: &Path, rev: &str, keep: bool) -> Result<CleanRoom, i32> {
    CleanRoom::open(root, rev, keep).map_err(|e| {
        // `--clean-room` takes the word after it as the revision, even a path.
        let hint = match &e {
            CleanRoomError::BadRev(_) if Path::new(rev).exists() => format!(
                " `{rev}` is a path: give the revision first, e.g. `--clean-room HEAD {rev}`."
            ),
            _ => String::new(),
        };
        let code = match e {
            CleanRoomError::BadRev(_) => exit::USAGE,
            CleanRoomError::Failed(_) => exit::GATE_ERROR,
        };
        fail(code, &format!("{e}{hint}"))
    })
}

/// The workspace's configuration, or the one committed in the clean room.
fn load_config(a: &CheckArgs, root: &Path, clean_room: Option<&CleanRoom>) -> Result<Config, i32> {
    let config_path = config_file(a.config.as_deref());
    let loaded = match clean_room {
        Some(c) => c.load_config(config_path.as_deref()),
        None => config::load_for_workspace(root, config_path.as_deref()),
    };
    let config = loaded.map_err(|e| {
        let which = match clean_room {
            Some(c) => format!(
                "the configuration committed at {} ({})",
                c.info().rev,
                c.info().worktree_fate()
            ),
            None => "the configuration".to_string(),
        };
        print_stderr(&format!(
            "{e}\nqgates: {which} has errors (see above); nothing was run.\n"
        ));
        exit::USAGE
    })?;
    // A configuration from elsewhere is said, so a report is never read as the workspace's own.
    if let Some(path) = &config_path {
        print_stderr(&format!("qgates: config: {}\n", path.display()));
    }
    Ok(config)
}

fn scope_and_kinds(a: &CheckArgs, clean_room: bool) -> Result<(ScopeRequest, KindFilter), i32> {
    // A clean room answers for the whole commit unless told otherwise.
    let choice = match a.scope {
        None if clean_room && a.paths.is_empty() => Some(ScopeChoice::Project),
        s => s,
    };
    let scope = scope_request(choice, a.paths.clone()).map_err(|e| {
        usage(&match e {
            ScopeChoiceError::FilesNeedPaths => {
                "--scope files needs paths: qgates check --scope files src/a.py".to_string()
            }
            ScopeChoiceError::PathsWithOtherScope(s) => format!(
                "--scope {} chooses the files itself; drop the paths, or use --scope files.",
                s.as_str()
            ),
        })
    })?;
    let kinds =
        KindFilter::from_names(a.skip_kinds.as_deref(), a.only_kinds.as_deref()).map_err(|e| {
            let flag = if a.skip_kinds.is_some() {
                "--skip-kinds"
            } else {
                "--only-kinds"
            };
            usage(&format!("{flag}: {e}"))
        })?;
    Ok((scope, kinds))
}

/// Runs the gates (with the fixers first under `--fix`). SIGINT, SIGTERM and SIGHUP (Ctrl-C
/// reaches only qgates: each tool has its own process group) stop the tools, and qgates exits
/// as the signal's conventional status.
fn run_gates(
    config: &Config,
    request: &RunRequest,
    fix: bool,
    reference_cache: Option<&Arc<ResultCache>>,
) -> Result<Run, i32> {
    // One thread: the gates are processes, and their outputs are parsed on the blocking pool.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(exit::GATE_ERROR, &format!("cannot start the runtime: {e}")))?;
    let outcome = runtime.block_on(async {
        let signal = children::termination_signal();
        let run = async {
            let run = if fix {
                execute_with_fixes(config, request).await
            } else {
                execute(config, request, None).await
            };
            match run {
                Ok(run) => Ok(novelty::judge(config, request, run, reference_cache).await),
                Err(e) => Err(e),
            }
        };
        tokio::select! {
            run = run => Ok(run),
            Some(sig) = signal => Err((sig, children::stop_all())),
        }
    });
    // Idle blocking-pool threads need not be joined before the process exits.
    runtime.shutdown_background();
    match outcome {
        Ok(Ok(run)) => Ok(run),
        Ok(Err(e)) => Err(usage(&e.to_string())),
        Err((sig, stopped)) => Err(fail(
            128 + sig,
            &format!(
                "stopped by signal {sig}; {stopped} running tool{} stopped.",
                if stopped == 1 { " was" } else { "s were" }
            ),
        )),
    }
}

fn run_and_report(a: &CheckArgs, p: Prepared) -> i32 {
    let reference_cache = p.reference_cache.as_ref();
    let run = match run_gates(&p.config, &p.request, a.fix, reference_cache) {
        Ok(run) => run,
        Err(code) => return code,
    };
    let report = match p.clean_room {
        Some(clean_room) => clean_room.finish(run),
        None => run.finish(),
    };
    if let Some(cache) = &p.cache {
        cache.save();
    }
    if let Some(cache) = &p.reference_cache {
        cache.save();
    }
    if p.access == Access::ReadOnly {
        let logs = report
            .log_dir
            .as_deref()
            .map(|d| format!(" This run's logs are in {d}."))
            .unwrap_or_default();
        print_stderr(&format!(
            "qgates: {} cannot be written: the baseline state and the cache were not saved.{logs}\n",
            qgates_dir::dir(&p.root).display()
        ));
    }
    // A gate that can never run is a mistake in quality.yaml: said on stderr whatever the format.
    for g in report.gates.iter().filter(|g| g.never_applies()) {
        print_stderr(&format!(
            "qgates: warning: gate `{}` {}\n",
            g.id,
            g.skip_reason.as_deref().unwrap_or_default()
        ));
    }
    print_stdout(&rendered(
        &report,
        &a.output,
        std::io::stdout().is_terminal(),
    ));
    let code = report.exit_code();
    // The process ends here: freeing them would cost up to a second in a large monorepo.
    std::mem::forget(p.cache);
    std::mem::forget(report);
    code
}

/// A report as `--format` asks, for stdout (`terminal`: whether it is one) or a file. Without
/// `--format`: `text` on a terminal, else `summary`; colour only on a terminal without `NO_COLOR`.
pub(super) fn rendered(report: &Report, output: &OutputArgs, terminal: bool) -> String {
    let format = output.format.unwrap_or(if terminal {
        FormatArg::Text
    } else {
        FormatArg::Summary
    });
    let color = terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut s = match format {
        FormatArg::Summary => {
            // Paged as the agent server pages: scripts and agents read megabytes no better.
            let page = report
                .page(PageRequest {
                    max_violations: output.max_violations,
                    offset: output.offset,
                    include_existing: output.show_existing,
                })
                .for_command_line();
            return format!("{}\n{}\n", page.summary_line(), page.to_json());
        }
        FormatArg::Json => report.to_json(),
        FormatArg::Text => report::text::render(report, color, output.show_existing),
        FormatArg::Markdown => report::markdown::render(report),
        FormatArg::Sarif => report::sarif::render(report),
        FormatArg::Github => report::github::render(report),
    };
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// How the workspace's `.qgates/` may be used; an unsafe one (`qgates_dir::check`) is a usage
/// error, said on stderr, before anything runs or is written.
pub(super) fn usable_qgates_dir(root: &Path) -> Result<Access, i32> {
    qgates_dir::check(root).map_err(|e| usage(&e.to_string()))
}
