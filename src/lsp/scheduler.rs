//! One scheduler task per workspace folder: every gate run goes through it, one at a time.
//! Triggers that arrive while a background run (save, open, rescope) is going cancel it — its
//! processes are killed when its future is dropped — and are merged with its files into the next
//! run, so a burst of saves or opens becomes one run and nothing is dropped. Runs asked for by a
//! command are not cancelled: someone waits for their answer.
//!
//! A trigger that comes after a quiet spell starts its run at once (save → diagnostics is as quick
//! as the tools). A trigger that follows another within `BURST` is part of a burst (an editor
//! saving every file, a formatter on save, a script): the run waits until the burst has been
//! quiet for `BURST`, so only the last content's diagnostics are published. Files opened together
//! are different: they arrive microseconds apart, so a run of opens waits only until they have
//! been quiet for `SETTLE`, and checks them all at once.
//!
//! A save does not wait for its `auto` scope either: it runs over the folder's last known scope
//! plus the saved file, and the current scope is resolved once its diagnostics are out (see
//! `auto_scope`); `Done::settle` then finishes the run — recorded in the branch's state when its
//! scope was the current one — or runs a follow-up when the scope had changed behind the
//! editor's back.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tower_lsp_server::ls_types::MessageType;

use super::auto_scope::{AutoScope, Resolving, Start, resolve_auto, resolve_now};
use super::folder::Folder;
use super::jobs::{Background, Job, Pending};
use super::progress;
use super::publish::Publisher;
use super::trust;
use crate::core::api::{self as engine, Finished, Run, RunError, RunEvent, RunRequest};
use crate::core::api::{ResolvedScope, ScopeRequest};
use crate::core::config::{Config, Trigger};
use crate::core::workspace::paths::relative_posix;

/// The run request for a background batch.
fn request(batch: &Background, folder: &Folder) -> RunRequest {
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
        // Recorded by the scheduler once it knows the scope was the current one.
        r.update_state = false;
        r
    };
    req.cache = Some(folder.cache.clone());
    req
}

/// Which scope a background run goes over.
enum Plan {
    /// Only opened files: exactly those.
    Opened(ResolvedScope),
    /// The `auto` scope as resolved just now.
    Current(ResolvedScope),
    /// The last known `auto` scope; the current one is resolved after the run when a gate
    /// starts a process (a run the cache answers alone needs no scope work: see `Done::settle`).
    Remembered(ResolvedScope),
}

impl Plan {
    async fn choose(
        batch: &Background,
        folder: &Folder,
        config: &Arc<Config>,
        auto: &mut AutoScope,
    ) -> Result<Plan, String> {
        if batch.only_opened() {
            // The editor's paths, already absolute and inside the folder: no need to resolve
            // them as a `files` scope given on a command line would be.
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

    async fn run(&self, config: &Config, req: &RunRequest) -> Result<Run, RunError> {
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

/// Triggers closer together than this are a burst; see the module docs.
const BURST: Duration = Duration::from_millis(50);

/// Files opened together (an editor restoring its tabs) arrive back to back: a run of opens
/// starts once none has come for this long, so they are checked in one run. An open that comes
/// later still is not lost: it cancels the run and goes into the next one with its files.
const SETTLE: Duration = Duration::from_millis(2);

/// When the last two triggers arrived.
#[derive(Default)]
struct Arrivals {
    last: Option<Instant>,
    in_burst: bool,
}

impl Arrivals {
    fn record(&mut self) {
        let now = Instant::now();
        self.in_burst = self.last.is_some_and(|t| now.duration_since(t) < BURST);
        self.last = Some(now);
    }
}

/// The scheduler of one folder; `show_progress`: the client shows work-done progress.
pub async fn run(
    out: Publisher,
    show_progress: bool,
    folder: Arc<Folder>,
    mut rx: mpsc::UnboundedReceiver<Job>,
) {
    let mut pending = Pending::default();
    let mut arrivals = Arrivals::default();
    let mut auto = AutoScope::default();
    // Said once when the folder is loaded, and again only if the problem changes.
    let mut shown = None;
    unsafe_qgates_dir(&out, &folder, &mut shown).await;
    loop {
        if pending.is_empty() {
            match rx.recv().await {
                Some(job) => {
                    arrivals.record();
                    pending.add(job);
                }
                None => return,
            }
        }
        while let Ok(job) = rx.try_recv() {
            pending.add(job);
        }
        // Opens alone: the rest of a batch may still be on its way. Gathered into this run, and
        // not counted as a burst of saves.
        while pending.only_opened() {
            match tokio::time::timeout(SETTLE, rx.recv()).await {
                Ok(Some(job)) => pending.add(job),
                Ok(None) => return,
                Err(_) => break,
            }
        }
        // Inside a burst, wait for it to go quiet; a command does not wait.
        while arrivals.in_burst && pending.commands.is_empty() {
            match tokio::time::timeout(BURST, rx.recv()).await {
                Ok(Some(job)) => {
                    arrivals.record();
                    pending.add(job);
                }
                Ok(None) => return,
                Err(_) => arrivals.in_burst = false,
            }
        }
        if let Some(why) = unsafe_qgates_dir(&out, &folder, &mut shown).await {
            pending.refuse(&why);
            continue;
        }
        let Some(config) = folder.config() else {
            pending.refuse(&config_refusal(&folder));
            continue;
        };
        if !trust::permits(&out.client, &out.docs, &folder) {
            pending.refuse(&trust::refusal(&folder));
            continue;
        }
        if let Some((scope, gates, reply)) = pending.commands.pop_front() {
            let moves_state = matches!(scope, ScopeRequest::Auto | ScopeRequest::Branch);
            let mut req = RunRequest::new(folder.root.clone(), scope, Trigger::Command);
            req.gates = gates;
            req.cache = Some(folder.cache.clone());
            let versions = out.versions(&folder.root);
            let (tx, events) = mpsc::unbounded_channel();
            req.events = Some(tx);
            let progress = progress::track(out.client.clone(), show_progress, events);
            let result = engine::run(&config, &req).await;
            drop(req);
            let answer = match result {
                Ok(report) => {
                    let report = Arc::new(report);
                    folder.remember(&report, true);
                    out.publish_report(&folder, &report, &versions, &BTreeSet::new())
                        .await;
                    progress.finish().await;
                    Ok(report)
                }
                Err(e) => {
                    progress.cancel().await;
                    Err(e.to_string())
                }
            };
            let _ = reply.send(answer);
            if moves_state {
                // The run may have moved the baseline.
                auto.refresh(&folder.scope, &config);
            }
            continue;
        }
        if !pending.has_background() {
            continue;
        }
        let batch = pending.take_background();
        let plan = match Plan::choose(&batch, &folder, &config, &mut auto).await {
            Ok(plan) => plan,
            Err(e) => {
                tracing::warn!("{}: the run could not start: {e}", folder.root.display());
                continue;
            }
        };
        let mut req = request(&batch, &folder);
        let versions = out.versions(&folder.root);
        let (tx, mut events) = mpsc::unbounded_channel();
        req.events = Some(tx);
        let (to_progress, progress_events) = mpsc::unbounded_channel();
        let progress = progress::track(out.client.clone(), show_progress, progress_events);
        // Whether the run's gates started processes (see `Done::settle`).
        let mut ran_tools = false;
        let outcome = {
            let run = plan.run(&config, &req);
            tokio::pin!(run);
            loop {
                tokio::select! {
                    r = &mut run => break Some(r),
                    Some(event) = events.recv() => {
                        if let RunEvent::Started { gates } = &event {
                            ran_tools |= !gates.is_empty();
                        }
                        let _ = to_progress.send(event);
                    }
                    job = rx.recv() => {
                        match job {
                            Some(job) => {
                                arrivals.record();
                                pending.add(job);
                            }
                            None => return,
                        }
                        break None;
                    }
                }
            }
        };
        // The run's events end with it.
        drop(req);
        while let Ok(event) = events.try_recv() {
            let _ = to_progress.send(event);
        }
        drop(to_progress);
        match outcome {
            Some(Ok(run)) => {
                let done = Done {
                    folder: &folder,
                    config: &config,
                    also: batch.saved.iter().chain(&batch.opened).cloned().collect(),
                };
                // A run over the remembered scope that started tools is recorded once the
                // current scope is known. That scope is resolved once the diagnostics are out,
                // not beside the gates: on a machine with few cores it would take a core from
                // the tools the editor waits for. Any other run is finished before it is shown.
                let (report, unfinished, state_changed) = match plan {
                    Plan::Remembered(_) if ran_tools => {
                        let mut shown = run.report().clone();
                        // Its file is written when the run is recorded: until then no answer
                        // names it.
                        shown.full_report = None;
                        (Arc::new(shown), Some(run), false)
                    }
                    _ => {
                        let finished = done.finish_now(run, &plan);
                        (Arc::new(finished.report), None, finished.state_changed)
                    }
                };
                folder.remember(&report, false);
                out.publish_report(&folder, &report, &versions, &batch.answer)
                    .await;
                progress.finish().await;
                let settled = match (unfinished, plan) {
                    (Some(run), Plan::Remembered(last)) => {
                        let fresh = resolve_auto(folder.scope.clone(), config.clone());
                        done.settle(run, last, fresh, &mut auto).await
                    }
                    (_, plan) => {
                        done.keep_scope(plan, state_changed, &mut auto);
                        Settled::Done
                    }
                };
                if settled == Settled::FollowUp {
                    pending.restore_files(batch);
                }
            }
            Some(Err(e)) => {
                progress.cancel().await;
                tracing::warn!("{}: the run could not start: {e}", folder.root.display());
            }
            // Cancelled by a newer trigger: its files go into the next run.
            None => {
                progress.cancel().await;
                pending.restore(batch);
                match plan {
                    Plan::Current(scope) => auto.set(&config, scope),
                    // Tools ran over a remembered scope: the next run starts from a fresh one.
                    Plan::Remembered(_) if ran_tools => {
                        auto.refresh(&folder.scope, &config);
                    }
                    _ => {}
                }
            }
        }
    }
}

/// What finishing a background run needs beside the run.
struct Done<'a> {
    folder: &'a Folder,
    config: &'a Arc<Config>,
    /// The saved and opened files the run added to its scope.
    also: Vec<PathBuf>,
}

#[derive(Debug, PartialEq, Eq)]
enum Settled {
    Done,
    /// The run went over a scope that was no longer the current one: run its files again.
    FollowUp,
}

impl Done<'_> {
    /// Finishes a run that has nothing left to learn: one over the current scope is recorded in
    /// the state; an opened file's run, and a run over the remembered scope that the cache
    /// answered alone, are not (the latter's results are the ones already recorded; the state
    /// and any change behind the editor's back are caught up by the next run that starts a tool).
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
    /// out: it compares that scope with the one resolved after it. When they are the same, the
    /// run is recorded in the branch's state. When they differ (a file changed outside the
    /// editor, a commit, a moved baseline), the same files run again over the current scope,
    /// the cache answering what this run checked, so the files it missed are checked too and the
    /// state is recorded for the right scope. What this run published is right for the files'
    /// content, so nothing flickers: the follow-up publishes only what differs.
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

/// The error when the folder's `.qgates/` is one qgates refuses (`qgates_dir::check`): nothing
/// runs for the folder then. Shown to the user as an error message, unless `shown` says it was.
async fn unsafe_qgates_dir(
    out: &Publisher,
    folder: &Folder,
    shown: &mut Option<String>,
) -> Option<String> {
    let Err(e) = crate::core::workspace::qgates_dir::check(&folder.root) else {
        *shown = None;
        return None;
    };
    let why = format!("qgates: {e}");
    if shown.as_deref() != Some(why.as_str()) {
        tracing::error!("{why}");
        out.client
            .show_message(MessageType::ERROR, why.clone())
            .await;
        *shown = Some(why.clone());
    }
    Some(why)
}

fn config_refusal(folder: &Folder) -> String {
    match folder.config_error() {
        Some(e) => format!(
            "the configuration of {} has errors, so nothing runs until they are fixed:\n{e}",
            folder.root.display()
        ),
        None => format!("{} has no configuration loaded", folder.root.display()),
    }
}
