//! New or pre-existing in the editor (docs/lsp.md, "New and pre-existing findings"). A save is
//! answered in milliseconds, so its findings are compared with the reference's from the cache
//! alone (`judge_from_cache`). What the cache lacks — the first save after a branch switch, a
//! file first changed — is found by a reference run in a checkout in the background; when it
//! ends the folder runs again (from the cache, so in milliseconds), and the findings are marked.
//! Meanwhile they are shown as they are, and the run's warnings say why.

pub mod reference;

use std::path::PathBuf;
use std::sync::Arc;

use super::folder::Folder;
use super::jobs::Job;
use super::locks::lock;
use crate::core::api::novelty::{Warmup, judge_against, judge_from_cache};
use crate::core::api::{NewFindings, Run, RunRequest, ScopeRequest};
use crate::core::config::Config;

/// Whether a folder's runs compare their findings, and whether only new ones count.
pub fn request_for(config: &Config, req: &mut RunRequest) {
    req.new_findings = match config.new_only {
        true => NewFindings::Only,
        false => NewFindings::Mark,
    };
}

/// Marks the findings of a background run new or pre-existing from the cache, and starts the
/// reference run for what the cache lacks.
pub async fn judge(folder: &Arc<Folder>, config: &Arc<Config>, req: &RunRequest, run: Run) -> Run {
    let Some(against) = against(folder, config, req).await else {
        return run;
    };
    let cache = folder.reference.cache(&folder.root);
    let (mut run, warmup) = judge_from_cache(config, req, run, against.as_deref(), &cache).await;
    if let Some(warmup) = warmup {
        let checked = (run.report().scope.files.iter())
            .map(|f| folder.root.join(f))
            .collect();
        let note = start(folder, config, warmup, checked);
        run.report_mut().warnings.push(note);
    }
    run
}

/// Marks the findings of a run a command asked for, with a run in a checkout for what the
/// cache lacks: someone waits for its answer.
pub async fn judge_now(
    folder: &Arc<Folder>,
    config: &Arc<Config>,
    req: &RunRequest,
    run: Run,
) -> Run {
    let Some(against) = against(folder, config, req).await else {
        return run;
    };
    let cache = folder.reference.cache(&folder.root);
    let run = judge_against(config, req, run, against.as_deref(), Some(&cache)).await;
    cache.save();
    run
}

/// What a run is compared with when its scope has no base of its own: in the editor every
/// finding is new or pre-existing against the `auto` scope's base, whatever run found it
/// (files opened, the whole project). `None`: not compared (there is no base commit, or it
/// cannot be told).
async fn against(
    folder: &Arc<Folder>,
    config: &Arc<Config>,
    req: &RunRequest,
) -> Option<Option<String>> {
    if matches!(req.scope, ScopeRequest::Auto | ScopeRequest::Branch) {
        return Some(None);
    }
    let (scope, config) = (folder.scope.clone(), config.clone());
    match tokio::task::spawn_blocking(move || scope.base(&config)).await {
        Ok(Ok(Some(base))) => Some(Some(base)),
        // Outside git, or before the first commit: nothing to compare with.
        Ok(Ok(None)) => None,
        Ok(Err(e)) => {
            tracing::warn!("the findings are not compared: {e}");
            None
        }
        Err(_) => None,
    }
}

/// Starts the reference run `warmup` stands for, unless it is under way or was done; says
/// where it stands, for the run's warnings. When it ends, the folder runs again over the
/// `checked` files (the run's) and its `auto` scope.
fn start(
    folder: &Arc<Folder>,
    config: &Arc<Config>,
    warmup: Warmup,
    checked: Vec<PathBuf>,
) -> String {
    let identity = warmup.identity();
    let commit = warmup.commit().to_owned();
    let mut warming = lock(&folder.reference.warming);
    if let Some((done, failed)) = &warming.done
        && *done == identity
    {
        return match failed {
            Some(why) => format!(
                "some findings could not be compared with those at {commit}: the gates could not run there ({why}); they count as new"
            ),
            None => format!(
                "some findings could not be compared with those at {commit}: their gates gave no complete result there; they count as new"
            ),
        };
    }
    let under_way = format!(
        "some findings are being compared with those at {commit} (their gates are running there); until then they count as new"
    );
    if warming
        .running
        .as_ref()
        .is_some_and(|(id, _)| *id == identity)
    {
        return under_way;
    }
    if let Some((_, task)) = warming.running.take() {
        // An older reference (another commit, other files): its result would not be asked for.
        task.abort();
    }
    let (folder_, config) = (folder.clone(), config.clone());
    let id = identity.clone();
    // The lock is held until the task is recorded: its end takes it.
    let task = tokio::spawn(async move {
        let cache = folder_.reference.cache(&folder_.root);
        let result = warmup.run(&config, &cache).await;
        cache.save();
        if let Err(why) = &result {
            tracing::warn!("the reference run failed: {why}");
        }
        let mut warming = lock(&folder_.reference.warming);
        warming.running = None;
        warming.done = Some((id, result.err()));
        drop(warming);
        folder_.send(Job::Open(checked));
        folder_.send(Job::Rescope);
    });
    warming.running = Some((identity, task.abort_handle()));
    under_way
}
