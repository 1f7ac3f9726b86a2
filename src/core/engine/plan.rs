//! The first stage of a run: which gates run, over which of the scope's files. A gate is left
//! out with its reason here — its kind is filtered out, its `run_on` lacks the trigger, none of
//! its files is in scope, its folder is missing, its lock files are as at its last green run, or
//! another shard runs it — and every other gate gets its files and how many of them count.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::RunRequest;
use super::finish::append_note;
use super::shard::{GateShare, ShardPlan};
use super::skips::{errored, skip_reason, skipped};
use crate::core::cache::KeyMaker;
use crate::core::cache::deps;
use crate::core::config::{Gate, GateKind};
use crate::core::report::GateResult;
use crate::core::runner::folder_problem;
use crate::core::scope::ResolvedScope;
use crate::core::workspace::paths::relative_posix;

/// A gate that runs (or that the cache answers), with its files.
pub(super) struct PlannedGate<'a> {
    /// Its place among the selected gates (the report's order).
    pub index: usize,
    pub gate: &'a Gate,
    pub files: Vec<&'a String>,
    /// How many of its files count as checked in this run (a shard counts only its own).
    pub in_scope: usize,
    /// A `deps` gate's key: recorded when it passes, so the next run can skip it.
    pub deps_key: Option<String>,
}

/// What runs and what does not.
pub(super) struct Plan<'a> {
    /// One slot per selected gate: filled for the gates left out, by the later stages for the
    /// others.
    pub results: Vec<Option<GateResult>>,
    pub gates: Vec<PlannedGate<'a>>,
    /// The files some planned gate checks.
    pub checked: HashSet<&'a String>,
    pub shard: Option<ShardPlan>,
}

/// Adds the request's extra files to the scope and drops the files that are gone: a file deleted
/// since the scope was read (a branch switch, a formatter, the user) is not handed to a tool that
/// would fail on it, and the scope's note says so. Project scopes too: the language server reuses
/// the walk of a folder outside git. Each file's stat is kept in `keys` for its cache key.
pub(super) fn settle_files(
    request: &RunRequest,
    selected: &[&Gate],
    keys: &KeyMaker,
    scope: &mut ResolvedScope,
) {
    add_files(&request.root, &request.also, &mut scope.files);
    let before = scope.files.len();
    let cached: Vec<&Gate> = selected
        .iter()
        .filter(|g| request.cache.is_some() && g.pass_files && KeyMaker::caches(g))
        .copied()
        .collect();
    keys.prepare(&scope.files, &|f| cached.iter().any(|g| g.applies_to(f)));
    scope.files.retain(|f| keys.is_file(f));
    let vanished = before - scope.files.len();
    if vanished > 0 {
        let note = format!(
            "{vanished} file{} vanished before the gates ran and {} skipped",
            if vanished == 1 { "" } else { "s" },
            if vanished == 1 { "was" } else { "were" }
        );
        append_note(&mut scope.note, note);
    }
}

/// Decides each selected gate's part in the run.
pub(super) fn plan<'a>(
    request: &RunRequest,
    keys: &KeyMaker,
    selected: &[&'a Gate],
    scope: &'a ResolvedScope,
) -> Plan<'a> {
    let shard = request
        .shard
        .map(|s| ShardPlan::new(&request.root, s, &scope.files));
    let mut plan = Plan {
        results: vec![None; selected.len()],
        gates: Vec::new(),
        checked: HashSet::new(),
        shard: None,
    };
    for (index, gate) in selected.iter().enumerate() {
        let files: Vec<&String> = scope.files.iter().filter(|f| gate.applies_to(f)).collect();
        let shard = shard.as_ref();
        match part(request, keys, index, gate, files, shard, &mut plan.checked) {
            Ok(planned) => plan.gates.push(planned),
            Err(result) => plan.results[index] = Some(*result),
        }
    }
    plan.shard = shard;
    plan
}

/// One gate's part: run over its files (those it counts as checked added to `checked`), or left
/// out with its result.
fn part<'a>(
    request: &RunRequest,
    keys: &KeyMaker,
    index: usize,
    gate: &'a Gate,
    files: Vec<&'a String>,
    shard: Option<&ShardPlan>,
    checked: &mut HashSet<&'a String>,
) -> Result<PlannedGate<'a>, Box<GateResult>> {
    if let Some(reason) = request.kinds.skip_reason(gate.kind) {
        return Err(Box::new(skipped(gate, reason)));
    }
    // A folder the gate names that is missing is a mistake to show, not a reason to skip it (a
    // `cwd` that is not there holds none of the gate's files).
    if gate.runs_on(request.trigger)
        && let Some(problem) = folder_problem(gate, &request.root)
    {
        return Err(Box::new(errored(gate, problem)));
    }
    if let Some(reason) = skip_reason(gate, request.trigger, &files) {
        return Err(Box::new(skipped(gate, reason)));
    }
    // A deps gate is not answered by the result cache (what it installs is not in its output)
    // but skipped while its lock files are as at its last green run.
    let deps_key = request
        .cache
        .as_ref()
        .filter(|_| gate.kind == GateKind::Deps)
        .and_then(|_| deps::key(keys, gate));
    if let Some(reason) = deps_key
        .as_deref()
        .zip(request.cache.as_deref())
        .and_then(|(key, cache)| deps::unchanged_reason(cache, gate, key))
    {
        return Err(Box::new(skipped(gate, reason)));
    }
    // A shard counts and checks only its own files, even when another shard runs the gate; a
    // gate without file arguments runs in one shard over the whole scope's.
    checked.extend(files.iter().filter(|f| shard.is_none_or(|p| p.holds(f))));
    let (files, counted) = match shard.map(|p| p.share(gate, &files)) {
        None => (files, true),
        Some(GateShare::Run { files, counted }) => (files, counted),
        Some(GateShare::Elsewhere(reason)) => return Err(Box::new(skipped(gate, reason))),
    };
    Ok(PlannedGate {
        index,
        gate,
        in_scope: if counted { files.len() } else { 0 },
        files,
        deps_key,
    })
}

/// Adds the extra files (absolute, or relative to the root) that exist inside the root.
fn add_files(root: &Path, also: &[PathBuf], files: &mut Vec<String>) {
    if also.is_empty() {
        return;
    }
    for p in also {
        let abs = root.join(p);
        if abs.is_file()
            && let Some(rel) = relative_posix(root, &abs)
        {
            files.push(rel);
        }
    }
    files.sort_unstable();
    files.dedup();
}
