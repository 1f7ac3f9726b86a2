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
//! A save does not wait for its `auto` scope either: see `background_run`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tower_lsp_server::ls_types::MessageType;

use super::auto_scope::AutoScope;
use super::background_run::{Done, Plan, Settled, Shown, publish, request};
use super::folder::Folder;
use super::jobs::{Job, Pending};
use super::progress;
use super::publish::Publisher;
use super::trust;
use crate::core::api::{self as engine, RunEvent, RunRequest, ScopeRequest};
use crate::core::config::{Config, Trigger};

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
    rx: mpsc::UnboundedReceiver<Job>,
) {
    let mut scheduler = Scheduler {
        out,
        show_progress,
        folder,
        rx,
        pending: Pending::default(),
        arrivals: Arrivals::default(),
        auto: AutoScope::default(),
        shown: None,
    };
    scheduler.serve().await;
}

/// Whether the scheduler goes on: `Closed` once the server's end of the channel is gone.
enum Flow {
    Go,
    Closed,
}

struct Scheduler {
    out: Publisher,
    show_progress: bool,
    folder: Arc<Folder>,
    rx: mpsc::UnboundedReceiver<Job>,
    pending: Pending,
    arrivals: Arrivals,
    auto: AutoScope,
    /// The `.qgates/` problem said to the user: said once when the folder is loaded, and again
    /// only if the problem changes.
    shown: Option<String>,
}

impl Scheduler {
    async fn serve(&mut self) {
        unsafe_qgates_dir(&self.out, &self.folder, &mut self.shown).await;
        loop {
            if let Flow::Closed = self.gather().await {
                return;
            }
            if let Some(why) = unsafe_qgates_dir(&self.out, &self.folder, &mut self.shown).await {
                self.pending.refuse(&why);
                continue;
            }
            let Some(config) = self.folder.config() else {
                self.pending.refuse(&config_refusal(&self.folder));
                continue;
            };
            if !trust::permits(&self.out.client, &self.out.docs, &self.folder) {
                self.pending.refuse(&trust::refusal(&self.folder));
                continue;
            }
            if let Some((scope, gates, reply)) = self.pending.commands.pop_front() {
                let answer = self.run_command(&config, scope, gates).await;
                let _ = reply.send(answer);
                continue;
            }
            if self.pending.has_background()
                && let Flow::Closed = self.run_background(&config).await
            {
                return;
            }
        }
    }

    /// Waits for work, then for the rest of its batch or burst (see the module docs).
    async fn gather(&mut self) -> Flow {
        let (rx, pending, arrivals) = (&mut self.rx, &mut self.pending, &mut self.arrivals);
        if pending.is_empty() {
            match rx.recv().await {
                Some(job) => {
                    arrivals.record();
                    pending.add(job);
                }
                None => return Flow::Closed,
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
                Ok(None) => return Flow::Closed,
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
                Ok(None) => return Flow::Closed,
                Err(_) => arrivals.in_burst = false,
            }
        }
        Flow::Go
    }

    /// A run a command asked for: not cancelled by later triggers, someone waits for it.
    async fn run_command(
        &mut self,
        config: &Arc<Config>,
        scope: ScopeRequest,
        gates: Option<Vec<String>>,
    ) -> Result<Arc<crate::core::report::Report>, String> {
        let folder = &self.folder;
        let moves_state = matches!(scope, ScopeRequest::Auto | ScopeRequest::Branch);
        let mut req = RunRequest::new(folder.root.clone(), scope, Trigger::Command);
        req.gates = gates;
        req.cache = Some(folder.cache.clone());
        let versions = self.out.versions(&folder.root);
        let (tx, events) = mpsc::unbounded_channel();
        req.events = Some(tx);
        let progress = progress::track(self.out.client.clone(), self.show_progress, events);
        let result = engine::run(config, &req).await;
        drop(req);
        let answer = match result {
            Ok(report) => {
                let report = Arc::new(report);
                folder.remember(&report, true);
                self.out
                    .publish_report(folder, &report, &versions, &BTreeSet::new())
                    .await;
                progress.finish().await;
                Ok(report)
            }
            Err(e) => {
                progress.cancel().await;
                Err(e.to_string())
            }
        };
        if moves_state {
            // The run may have moved the baseline.
            self.auto.refresh(&folder.scope, config);
        }
        answer
    }

    /// A background run (saves, opens, a rescope), cancelled by the next trigger.
    async fn run_background(&mut self, config: &Arc<Config>) -> Flow {
        let batch = self.pending.take_background();
        let folder = self.folder.clone();
        let plan = match Plan::choose(&batch, &folder, config, &mut self.auto).await {
            Ok(plan) => plan,
            Err(e) => {
                tracing::warn!("{}: the run could not start: {e}", folder.root.display());
                return Flow::Go;
            }
        };
        let mut req = request(&batch, &folder);
        let versions = self.out.versions(&folder.root);
        let (tx, mut events) = mpsc::unbounded_channel();
        req.events = Some(tx);
        let (to_progress, progress_events) = mpsc::unbounded_channel();
        let progress =
            progress::track(self.out.client.clone(), self.show_progress, progress_events);
        // Whether the run's gates started processes (see `background_run::publish`).
        let mut ran_tools = false;
        let outcome = {
            let run = plan.run(config, &req);
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
                    job = self.rx.recv() => {
                        let Some(job) = job else { return Flow::Closed };
                        self.arrivals.record();
                        self.pending.add(job);
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
                    config,
                    also: batch.saved.iter().chain(&batch.opened).cloned().collect(),
                };
                let shown = Shown {
                    versions: &versions,
                    answer: &batch.answer,
                    progress,
                };
                let settled =
                    publish(&self.out, done, plan, run, ran_tools, shown, &mut self.auto).await;
                if settled == Settled::FollowUp {
                    self.pending.restore_files(batch);
                }
            }
            Some(Err(e)) => {
                progress.cancel().await;
                tracing::warn!("{}: the run could not start: {e}", folder.root.display());
            }
            // Cancelled by a newer trigger: its files go into the next run.
            None => {
                progress.cancel().await;
                self.pending.restore(batch);
                match plan {
                    Plan::Current(scope) => self.auto.set(config, scope),
                    // Tools ran over a remembered scope: the next run starts from a fresh one.
                    Plan::Remembered(_) if ran_tools => {
                        self.auto.refresh(&folder.scope, config);
                    }
                    _ => {}
                }
            }
        }
        Flow::Go
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
