//! New or pre-existing: the findings of an `auto` or `branch` run compared with the findings of
//! the same gates on the run's reference, the commit its scope's changes were taken from
//! (docs/design.md, "New and pre-existing findings").
//!
//! The reference's findings come from running the same gates, with the working tree's
//! configuration, over the reference versions of the files the run checked: in a clean checkout
//! of the reference commit (`clean_room`) into which the gates' own configuration files
//! (`cache_inputs`: `pyproject.toml`, `mypy.ini`, …) are copied from the working tree. So a rule
//! the change switched on finds what it finds in the old code too, and those findings are
//! pre-existing; a finding the change caused in a file it did not touch (a caller of a function
//! whose signature changed) is new, since the reference run did not find it. The reference run
//! keeps its results in a cache of its own (`ResultCache::load_reference`), since the working
//! tree's keeps one result per gate and file; when that cache holds every reference result of
//! gates that check file by file, no checkout is made.
//!
//! `judge` is a stage after the gates (`engine::execute`) and before `Run::finish`: with
//! `NewFindings::Only` a gate whose failing findings are all pre-existing passes, and the run's
//! state and exit code follow.

pub mod matching;
mod reference;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::core::cache::{KeyMaker, ResultCache};
use crate::core::config::{Config, Trigger};
use crate::core::engine::{NewFindings, Run, RunError, RunRequest, execute};
use crate::core::fix::execute_with_fixes;
use crate::core::report::{GateStatus, Novelty, Report};
use crate::core::scope::changed_lines::EarlierFile;
use crate::core::violation::Violation;
use matching::match_file;

/// A whole run with its findings judged (`judge`): the gates (the fixers first with `fix`),
/// the comparison, then the state and the report (`Run::finish`).
pub async fn run(
    config: &Config,
    request: &RunRequest,
    fix: bool,
    cache: Option<&Arc<ResultCache>>,
) -> Result<Report, RunError> {
    let run = if fix {
        execute_with_fixes(config, request).await?
    } else {
        execute(config, request, None).await?
    };
    Ok(judge(config, request, run, cache).await.finish())
}

/// Compares the run's findings with the reference's, when the request asks and the run's scope
/// is made of changes; what the cache does not know is found in a checkout of the reference. A
/// reference that cannot be run leaves the findings unmarked, and says why in the report's
/// warnings.
pub async fn judge(
    config: &Config,
    request: &RunRequest,
    run: Run,
    cache: Option<&Arc<ResultCache>>,
) -> Run {
    judge_against(config, request, run, None, cache).await
}

/// `judge`, with `against` the commit to compare with when the run's scope has none of its own
/// (see `judge_from_cache`).
pub async fn judge_against(
    config: &Config,
    request: &RunRequest,
    run: Run,
    against: Option<&str>,
    cache: Option<&Arc<ResultCache>>,
) -> Run {
    judge_with(config, request, run, against, cache, Source::Checkout)
        .await
        .0
}

/// `judge` from the cache alone (the language server, which answers a save in milliseconds):
/// the gates whose reference findings the cache does not hold stay unmarked, and the returned
/// `Warmup` finds them, in the background, for the next run. `against`: the commit to compare
/// with when the run's scope has none of its own (files opened in an editor are compared with
/// the `auto` scope's base; `Some("")`: there is no commit yet).
pub async fn judge_from_cache(
    config: &Config,
    request: &RunRequest,
    run: Run,
    against: Option<&str>,
    cache: &Arc<ResultCache>,
) -> (Run, Option<Warmup>) {
    judge_with(
        config,
        request,
        run,
        against,
        Some(cache),
        Source::CacheOnly,
    )
    .await
}

/// Where the reference's findings may come from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Checkout,
    CacheOnly,
}

async fn judge_with(
    config: &Config,
    request: &RunRequest,
    mut run: Run,
    against: Option<&str>,
    cache: Option<&Arc<ResultCache>>,
    source: Source,
) -> (Run, Option<Warmup>) {
    if request.new_findings == NewFindings::Ignore {
        return (run, None);
    }
    let mode = run.report().scope.mode.clone();
    let own = matches!(mode.as_str(), "auto" | "branch")
        .then(|| run.changed_since().unwrap_or_default().to_owned());
    let Some(commit) = own.or(against.map(str::to_owned)) else {
        if request.new_findings == NewFindings::Only {
            run.report_mut().warnings.push(format!(
                "only `auto` and `branch` runs are compared with a reference, so this `{mode}` run counts every finding as new"
            ));
        }
        return (run, None);
    };
    let (earlier, warmup) = match commit.as_str() {
        // Before the first commit there is no reference: every finding is new.
        "" => (Ok(Earlier::nothing(run.report())), None),
        _ => earlier(config, request, &run, &commit, cache, source).await,
    };
    match earlier {
        Ok(earlier) => {
            let mut unjudged = classify(&request.root, run.report_mut(), &earlier, commit.clone());
            // Those a warmup will run for: the caller says where it stands.
            unjudged.retain(|id| warmup.as_ref().is_none_or(|w| !w.gates.contains(id)));
            if !unjudged.is_empty() {
                let why = match source {
                    Source::Checkout => "their gates could not run there",
                    Source::CacheOnly => {
                        "their results are not cached, so they are compared only when asked for"
                    }
                };
                run.report_mut().warnings.push(format!(
                    "the findings of {} were not compared with those at {} ({why}), so they count as new",
                    unjudged.join(", "),
                    short(&commit)
                ));
            }
        }
        Err(why) => {
            run.report_mut().warnings.push(format!(
                "the findings could not be compared with those at {} ({why}), so none is marked new or pre-existing",
                short(&commit)
            ));
            return (run, None);
        }
    }
    (finish_judging(request, run), warmup)
}

/// The reference's findings: those the cache holds, then the rest from a checkout, or (from the
/// cache alone) what a `Warmup` would find.
async fn earlier(
    config: &Config,
    request: &RunRequest,
    run: &Run,
    commit: &str,
    cache: Option<&Arc<ResultCache>>,
    source: Source,
) -> (Result<Earlier, String>, Option<Warmup>) {
    let wanted = match reference::Wanted::of(&request.root, run, commit).await {
        Ok(w) => w,
        Err(why) => return (Err(why), None),
    };
    // A gate with nothing left to look up there is known at once. One whose results are not
    // cached (`cache: none`: a test suite, say) and that found nothing now has nothing to mark:
    // it is not run there (its fixed findings go uncounted).
    let (mut findings, mut missing) = (HashMap::new(), Vec::new());
    let found_now =
        |id: &str| (run.report().gates.iter()).any(|g| g.id == id && !g.violations.is_empty());
    for gate in &wanted.gates {
        if gate.pass_files && wanted.to_check(gate).next().is_none() {
            findings.insert(gate.id.clone(), Vec::new());
        } else if KeyMaker::caches(gate) || found_now(&gate.id) {
            missing.push(gate.id.clone());
        }
    }
    if let Some(cache) = cache
        && !missing.is_empty()
    {
        let stamps = request.cache.as_deref();
        findings.extend(
            reference::cached(config, &request.root, stamps, &wanted, &missing, cache).await,
        );
        missing.retain(|id| !findings.contains_key(id));
    }
    let mut warmup = None;
    if !missing.is_empty() {
        match source {
            // What is run in the background is for the cache: a gate whose results it does not
            // keep is left unmarked (`qgates check` runs it there on the spot).
            Source::CacheOnly => {
                missing.retain(|id| {
                    wanted
                        .gates
                        .iter()
                        .any(|g| g.id == *id && KeyMaker::caches(g))
                });
                warmup = (!missing.is_empty()).then(|| Warmup {
                    root: request.root.clone(),
                    trigger: request.trigger,
                    wanted: wanted.clone(),
                    gates: missing,
                });
            }
            Source::Checkout => {
                let at = reference::Checkout {
                    config,
                    root: &request.root,
                    trigger: request.trigger,
                    cache,
                };
                match reference::checked_out(at, &wanted, missing).await {
                    Ok(found) => findings.extend(found),
                    Err(why) => return (Err(why), None),
                }
            }
        }
    }
    add_unchanged(run, &wanted, &mut findings);
    let earlier = Earlier {
        findings,
        files: wanted.files,
    };
    (Ok(earlier), warmup)
}

/// The findings of each gate that checks file by file in the files that are as they were at
/// the reference are the findings now: they join what was found there for the changed ones.
fn add_unchanged(
    run: &Run,
    wanted: &reference::Wanted,
    findings: &mut HashMap<String, Vec<Violation>>,
) {
    for gate in wanted.gates.iter().filter(|g| reference::per_file(g)) {
        let Some(found) = findings.get_mut(&gate.id) else {
            continue;
        };
        // A checkout run may have checked unchanged files too (for another gate's sake).
        let changed: Vec<&str> = wanted
            .to_check(gate)
            .map(|(_, e)| e.path.as_str())
            .collect();
        found.retain(|v| v.file.as_deref().is_some_and(|f| changed.contains(&f)));
        let now = run.report().gates.iter().find(|g| g.id == gate.id);
        found.extend(
            now.into_iter()
                .flat_map(|g| &g.violations)
                .filter(|v| {
                    v.file
                        .as_deref()
                        .is_some_and(|f| wanted.unchanged.contains(f))
                })
                .cloned(),
        );
    }
}

/// The reference's findings that the cache lacked, to be found in a checkout in the background
/// (`judge_from_cache`).
pub struct Warmup {
    root: PathBuf,
    trigger: Trigger,
    wanted: reference::Wanted,
    gates: Vec<String>,
}

impl Warmup {
    /// What sets this work apart (the reference, the files changed since, the gates to run):
    /// the same identity is the same work.
    pub fn identity(&self) -> String {
        let mut unchanged: Vec<&String> = self.wanted.unchanged.iter().collect();
        unchanged.sort();
        format!("{} {unchanged:?} {:?}", self.wanted.identity(), self.gates)
    }

    /// The commit compared with, abbreviated.
    pub fn commit(&self) -> &str {
        short(&self.wanted.commit)
    }

    /// Runs the gates on the reference in a checkout; their results go into `cache`, where
    /// `judge_from_cache` finds them.
    pub async fn run(self, config: &Config, cache: &Arc<ResultCache>) -> Result<(), String> {
        let at = reference::Checkout {
            config,
            root: &self.root,
            trigger: self.trigger,
            cache: Some(cache),
        };
        reference::checked_out(at, &self.wanted, self.gates)
            .await
            .map(|_| ())
    }
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(7)]
}

/// With `NewFindings::Only`, a failed gate whose failing findings were all there before passes.
fn finish_judging(request: &RunRequest, mut run: Run) -> Run {
    if request.new_findings != NewFindings::Only {
        return run;
    }
    let fail_on: HashMap<String, _> = run
        .gates()
        .iter()
        .map(|g| (g.id.clone(), g.fail_on))
        .collect();
    let report = run.report_mut();
    for gate in &mut report.gates {
        let Some(&fail_on) = fail_on.get(&gate.id) else {
            continue;
        };
        let fails = gate
            .violations
            .iter()
            .any(|v| v.severity <= fail_on && v.new != Some(false));
        if gate.status == GateStatus::Failed && !fails {
            gate.status = GateStatus::Passed;
        }
    }
    report.recount();
    if let Some(n) = &mut report.novelty {
        n.new_only = true;
    }
    run
}

/// The reference's findings: per gate id, its violations under the reference's paths (a gate
/// that is not there is not compared); with the reference versions of the files, by their
/// current paths.
#[derive(Default)]
pub(crate) struct Earlier {
    pub findings: HashMap<String, Vec<Violation>>,
    pub files: HashMap<String, EarlierFile>,
}

impl Earlier {
    /// No reference at all (no commit yet): every gate found nothing there.
    fn nothing(report: &Report) -> Earlier {
        Earlier {
            findings: (report.gates.iter())
                .map(|g| (g.id.clone(), Vec::new()))
                .collect(),
            files: HashMap::new(),
        }
    }
}

/// Marks each finding of `report` new or pre-existing against `earlier`, the findings at
/// `reference`, and counts. Returns the gates with findings that were not compared (`earlier`
/// lacks them).
fn classify(root: &Path, report: &mut Report, earlier: &Earlier, reference: String) -> Vec<String> {
    // The reference's path of each file → its path now.
    let now_path: HashMap<&str, &str> = earlier
        .files
        .iter()
        .map(|(now, then)| (then.path.as_str(), now.as_str()))
        .collect();
    let mut counts = Novelty {
        reference,
        ..Default::default()
    };
    let mut unjudged = Vec::new();
    let mut fixed = Vec::new();
    for gate in &mut report.gates {
        let Some(then_all) = earlier.findings.get(&gate.id) else {
            // Not compared: not known to be pre-existing, so counted as new (and failing with
            // `NewFindings::Only`), but not marked.
            if !gate.violations.is_empty() {
                counts.new += gate.violations.len();
                unjudged.push(gate.id.clone());
            }
            continue;
        };
        let mut then_by_file: HashMap<Option<&str>, Vec<&Violation>> = HashMap::new();
        for v in then_all {
            let file = v.file.as_deref().map(|f| *now_path.get(f).unwrap_or(&f));
            then_by_file.entry(file).or_default().push(v);
        }
        let mut now_by_file: HashMap<Option<String>, Vec<usize>> = HashMap::new();
        for (i, v) in gate.violations.iter().enumerate() {
            now_by_file
                .entry(v.file.as_deref().map(str::to_owned))
                .or_default()
                .push(i);
        }
        for (file, indices) in &now_by_file {
            let now: Vec<&Violation> = indices.iter().map(|i| &gate.violations[*i]).collect();
            let then = then_by_file.remove(&file.as_deref()).unwrap_or_default();
            let earlier_file = file.as_deref().and_then(|f| earlier.files.get(f));
            // A file as it was there has been read already.
            let now_text = match earlier_file {
                Some(e) if e.unchanged => e.text.clone(),
                _ => file
                    .as_deref()
                    .and_then(|f| std::fs::read_to_string(root.join(f)).ok()),
            };
            // A file the run did not check is as it was at the reference (every changed file
            // is in the scope); one the reference lacks has no findings there to match.
            let then_text = match earlier_file {
                Some(e) => e.text.as_deref(),
                None => now_text.as_deref(),
            };
            let m = match_file(&now, now_text.as_deref(), &then, then_text);
            counts.fixed += m.fixed.len();
            fixed.extend(m.fixed.iter().map(|&i| then[i].clone()));
            for (i, new) in indices.iter().zip(m.new) {
                gate.violations[*i].new = Some(new);
                if new {
                    counts.new += 1;
                } else {
                    counts.existing += 1;
                }
            }
        }
        // Files with findings at the reference and none now.
        for gone in then_by_file.into_values() {
            counts.fixed += gone.len();
            fixed.extend(gone.into_iter().cloned());
        }
    }
    counts.fixed_violations = fixed;
    report.novelty = Some(counts);
    unjudged
}
