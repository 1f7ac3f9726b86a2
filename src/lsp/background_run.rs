//! A background run (a save, an open) from its scope to its end, and the folder's last resolved
//! `auto` scope (`AutoScope`), so a save can start its gates at once. Resolving it (a git status
//! and the branch's baseline state) costs as much as a linter's run on one file, so a save runs
//! over the last known scope plus the saved file, and the current scope is resolved once the
//! diagnostics are out: `Done::settle` then records the run, or runs a follow-up when the scope
//! had changed behind the editor's back. A save the cache answers alone does no scope work.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::oneshot;

use super::folder::Folder;
use super::jobs::Background;
use super::progress::Tracker;
use super::publish::Publisher;
use crate::core::api::{self as engine, Finished, Run, RunError, RunRequest};
use crate::core::api::{ResolvedScope, ScopeRequest};
use crate::core::config::{Config, Trigger};
use crate::core::report::Report;
use crate::core::scope::ScopeError;
use crate::core::scope::tracker::ScopeTracker;
use crate::core::workspace::paths::relative_posix;

/// The run request for a background batch.
pub(super) fn request(batch: &Background, folder: &Folder) -> RunRequest {
    let root = folder.root.clone();
    let mut req = if batch.only_opened() {
        RunRequest::new(
            root,
            ScopeRequest::Files(batch.opened.iter().cloned().collect()),
            Trigger::Save,
        )
    } else {
        let mut r = RunRequest::new(root, ScopeRequest::Auto, Trigger::Save);
        r.also = batch.saved.iter().chain(&batch.opened).cloned().collect();
        r.update_state = false; // recorded once the scope is known to be the current one
        r
    };
    req.cache = Some(folder.cache.clone());
    req
}

/// Which scope a background run goes over.
pub(super) enum Plan {
    /// Only opened files: exactly those.
    Opened(ResolvedScope),
    /// The `auto` scope as resolved just now.
    Current(ResolvedScope),
    /// The last known `auto` scope; the current one is resolved after the run if a gate
    /// started a process.
    Remembered(ResolvedScope),
}

impl Plan {
    pub(super) async fn choose(
        batch: &Background,
        folder: &Folder,
        config: &Arc<Config>,
        auto: &mut AutoScope,
    ) -> Result<Plan, String> {
        if batch.only_opened() {
            // The editor's paths are absolute and inside the folder: nothing to resolve.
            let files = batch
                .opened
                .iter()
                .filter_map(|p| relative_posix(&folder.root, p))
                .collect();
            return Ok(Plan::Opened(ResolvedScope {
                mode: "files",
                files,
                ..Default::default()
            }));
        }
        if batch.rescope {
            // The HEAD, the configuration or trust changed: nothing remembered holds.
            auto.forget();
        }
        match auto.start(config).await {
            Start::Current(scope) => Ok(Plan::Current(scope)),
            Start::Remembered(scope) => Ok(Plan::Remembered(scope)),
            Start::Unknown => resolve_now(folder.scope.clone(), config.clone())
                .await
                .map(Plan::Current),
        }
    }

    pub(super) async fn run(&self, config: &Config, req: &RunRequest) -> Result<Run, RunError> {
        let (Plan::Opened(scope) | Plan::Current(scope) | Plan::Remembered(scope)) = self;
        engine::execute(config, req, Some(scope.clone())).await
    }
}

/// A scope with the files a run adds to it (`RunRequest::also`), as the run sees it.
fn with_also(scope: &ResolvedScope, root: &Path, also: &[PathBuf]) -> ResolvedScope {
    let mut s = scope.clone();
    s.files
        .extend(also.iter().filter_map(|p| relative_posix(root, p)));
    s.files.sort_unstable();
    s.files.dedup();
    s
}

/// A background run's end: finished and published, or published and then settled.
pub(super) async fn publish(
    out: &Publisher,
    done: Done<'_>,
    plan: Plan,
    run: Run,
    ran_tools: bool,
    shown: Shown<'_>,
    auto: &mut AutoScope,
) -> Settled {
    let (folder, config) = (done.folder, done.config);
    // A run over the remembered scope that started tools is recorded once the current scope is
    // known, resolved after the diagnostics are out so it takes no core from the tools. Any
    // other run is finished before it is shown.
    if ran_tools && let Plan::Remembered(last) = plan {
        let mut report = run.report().clone();
        report.full_report = None; // not written until the run is recorded
        show(out, folder, report, shown).await;
        let fresh = folder.scope.current_in_background(config);
        return done.settle(run, last, fresh, auto).await;
    }
    let finished = done.finish_now(run, &plan);
    show(out, folder, finished.report, shown).await;
    done.keep_scope(plan, finished.state_changed, auto);
    Settled::Done
}

/// Remembers the report for the folder's commands and publishes its diagnostics.
async fn show(out: &Publisher, folder: &Folder, report: Report, shown: Shown<'_>) {
    let report = Arc::new(report);
    folder.remember(&report, false);
    out.publish_report(folder, &report, shown.versions, shown.answer)
        .await;
    shown.progress.finish().await;
}

/// Where a run's report is shown: the documents' versions it ran over, the files whose
/// diagnostics are answered whatever they are, and the client's progress.
pub(super) struct Shown<'a> {
    pub versions: &'a HashMap<PathBuf, Option<i32>>,
    pub answer: &'a BTreeSet<PathBuf>,
    pub progress: Tracker,
}

/// What finishing a background run needs beside the run.
pub(super) struct Done<'a> {
    pub folder: &'a Folder,
    pub config: &'a Arc<Config>,
    /// The saved and opened files the run added to its scope.
    pub also: Vec<PathBuf>,
}

#[derive(Debug, PartialEq, Eq)]
pub(super) enum Settled {
    Done,
    /// The run went over a scope that was no longer the current one: run its files again.
    FollowUp,
}

impl Done<'_> {
    /// Finishes a run that has nothing left to learn: recorded in the state when it went over
    /// the current scope (a remembered scope the cache answered alone is caught up by the next
    /// run that starts a tool).
    fn finish_now(&self, mut run: Run, plan: &Plan) -> Finished {
        if let Plan::Current(scope) = plan {
            run.record_at(scope.baseline.clone());
        }
        run.finish()
    }

    /// Keeps the scope for the next save once `finish_now` is done.
    fn keep_scope(&self, plan: Plan, state_changed: bool, auto: &mut AutoScope) {
        let (folder, config) = (self.folder, self.config);
        match plan {
            // The first save after opening files finds the folder's scope resolved.
            Plan::Opened(_) if auto.is_unknown() => auto.refresh(&folder.scope, config),
            // The state moved: the next scope is resolved from it, in the background.
            Plan::Current(_) if state_changed => auto.refresh(&folder.scope, config),
            Plan::Current(scope) => auto.set(config, scope),
            Plan::Opened(_) | Plan::Remembered(_) => {}
        }
    }

    /// Finishes a run over the remembered scope that started tools, once its diagnostics are
    /// out, by comparing that scope with the one resolved after it. The same: the run is
    /// recorded. Different (a change outside the editor, a commit, a moved baseline): its files
    /// run again over the current scope, the cache answering what this run checked, and the
    /// follow-up publishes only what differs.
    async fn settle(
        &self,
        mut run: Run,
        last: ResolvedScope,
        fresh: Resolving,
        auto: &mut AutoScope,
    ) -> Settled {
        let (folder, config) = (self.folder, self.config);
        let now = match fresh.await {
            Ok(Ok(now)) => Some(now),
            Ok(Err(e)) => {
                tracing::warn!(
                    "{}: the scope could not be resolved: {e}",
                    folder.root.display()
                );
                None
            }
            Err(e) => {
                tracing::warn!("{}: resolving the scope failed: {e}", folder.root.display());
                None
            }
        };
        let settled = match now {
            None => {
                auto.forget();
                Settled::Done
            }
            Some(now)
                if with_also(&now, &folder.root, &self.also)
                    != with_also(&last, &folder.root, &self.also) =>
            {
                tracing::debug!(
                    "{}: the auto scope changed since it was remembered; its files run again",
                    folder.root.display()
                );
                auto.set_current(config, now);
                Settled::FollowUp
            }
            Some(now) => {
                run.record_at(now.baseline.clone());
                let finished = run.finish();
                if finished.state_changed {
                    auto.refresh(&folder.scope, config);
                } else {
                    auto.set(config, now);
                }
                folder.remember(&Arc::new(finished.report), false);
                return Settled::Done;
            }
        };
        folder.remember(&Arc::new(run.finish().report), false);
        settled
    }
}

/// A resolution under way (`ScopeTracker::current_in_background`, at a lower priority, so it
/// does not delay the diagnostics going out); awaiting it gives the scope.
pub type Resolving = oneshot::Receiver<Result<ResolvedScope, ScopeError>>;

/// Resolves the `auto` scope now: the run waits for it.
pub async fn resolve_now(
    scope: Arc<ScopeTracker>,
    config: Arc<Config>,
) -> Result<ResolvedScope, String> {
    match tokio::task::spawn_blocking(move || scope.current(&config)).await {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(e) => Err(format!("resolving the scope failed: {e}")),
    }
}

#[derive(Default)]
enum Memo {
    #[default]
    Unknown,
    /// Resolved a while ago: a run may start over it, but must check it against a fresh one.
    Known(ResolvedScope),
    /// Resolved during the last run, which found it differed from the one it ran over: the
    /// follow-up run uses it as it is.
    Current(ResolvedScope),
    /// Being resolved in the background (after a run moved the baseline, say).
    Resolving(Resolving),
}

/// How the next `auto` run gets its scope.
pub enum Start {
    /// Resolved just now: run over it and record the run in the state.
    Current(ResolvedScope),
    /// The last known scope: run over it at once and resolve the current one after the run.
    Remembered(ResolvedScope),
    /// None known: resolve it first.
    Unknown,
}

/// The last `auto` scope of one folder, for the configuration it was resolved with.
#[derive(Default)]
pub struct AutoScope {
    config_hash: String,
    memo: Memo,
}

impl AutoScope {
    /// How the next run starts. A resolution under way (it started when the last run ended,
    /// so it is normally done) is waited for.
    pub async fn start(&mut self, config: &Config) -> Start {
        if self.config_hash != config.content_hash {
            self.forget();
            return Start::Unknown;
        }
        match std::mem::take(&mut self.memo) {
            Memo::Unknown => Start::Unknown,
            Memo::Known(s) => {
                self.memo = Memo::Known(s.clone());
                Start::Remembered(s)
            }
            Memo::Current(s) => {
                self.memo = Memo::Known(s.clone());
                Start::Current(s)
            }
            Memo::Resolving(handle) => match handle.await {
                Ok(Ok(s)) => {
                    self.memo = Memo::Known(s.clone());
                    Start::Remembered(s)
                }
                _ => Start::Unknown,
            },
        }
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self.memo, Memo::Unknown)
    }

    fn keep(&mut self, config: &Config, memo: Memo) {
        self.config_hash = config.content_hash.clone();
        self.memo = memo;
    }

    /// A scope that was current a moment ago.
    pub fn set(&mut self, config: &Config, scope: ResolvedScope) {
        self.keep(config, Memo::Known(scope));
    }

    /// A scope resolved just now, for the follow-up run to use as it is.
    pub fn set_current(&mut self, config: &Config, scope: ResolvedScope) {
        self.keep(config, Memo::Current(scope));
    }

    /// Starts resolving the scope again in the background (the state or the repository changed).
    pub fn refresh(&mut self, scope: &Arc<ScopeTracker>, config: &Arc<Config>) {
        self.keep(config, Memo::Resolving(scope.current_in_background(config)));
    }

    /// Forgets the scope (a resolution under way finishes unread).
    pub fn forget(&mut self) {
        self.memo = Memo::Unknown;
    }
}
