//! One scheduler task per workspace folder: every gate run goes through it, one at a time. A
//! trigger that arrives during a background run (save, open, rescope) cancels it (dropping its
//! future kills its processes) and is merged with its files into the next run, so a burst
//! becomes one run and nothing is dropped. A run a command asked for is not cancelled: someone
//! waits for its answer.
//!
//! A trigger after a quiet spell starts its run at once. One that follows another within `BURST`
//! (an editor saving every file, a formatter on save) waits until the burst has been quiet for
//! `BURST`, so only the last content's diagnostics are published. Files opened together arrive
//! microseconds apart: a run of opens waits only for `SETTLE` of quiet, and checks them at once.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tower_lsp_server::ls_types::MessageType;

use super::background_run::{Shown, request, scope, show};
use super::folder::Folder;
use super::jobs::{Job, Pending};
use super::novelty;
use super::progress;
use super::publish::Publisher;
use super::trust;
use crate::core::api::{self as engine, RunRequest, ScopeRequest};
use crate::core::config::{Config, Trigger};

/// Triggers closer together than this are a burst; see the module docs.
const BURST: Duration = Duration::from_millis(50);

/// A run of opens (an editor restoring its tabs) starts once none has come for this long.
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
        shown: None,
    };
    scheduler.serve().await;
}

/// `None` from a step of the scheduler: the server's end of the channel is gone.
type Closed = Option<()>;

struct Scheduler {
    out: Publisher,
    show_progress: bool,
    folder: Arc<Folder>,
    rx: mpsc::UnboundedReceiver<Job>,
    pending: Pending,
    arrivals: Arrivals,
    /// The `.qgates/` problem last shown to the user.
    shown: Option<String>,
}

impl Scheduler {
    async fn serve(&mut self) -> Closed {
        self.unsafe_qgates_dir().await;
        loop {
            self.gather().await?;
            if let Some(why) = self.unsafe_qgates_dir().await {
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
            if self.pending.has_background() {
                self.run_background(&config).await?;
            }
        }
    }

    /// Waits for work, then for the rest of its batch or burst (see the module docs).
    async fn gather(&mut self) -> Closed {
        let (rx, pending, arrivals) = (&mut self.rx, &mut self.pending, &mut self.arrivals);
        if pending.is_empty() {
            let job = rx.recv().await?;
            arrivals.record();
            pending.add(job);
        }
        while let Ok(job) = rx.try_recv() {
            pending.add(job);
        }
        // Opens alone: the rest of the batch may be on its way (not a burst of saves).
        while pending.only_opened() {
            match tokio::time::timeout(SETTLE, rx.recv()).await {
                Ok(job) => pending.add(job?),
                Err(_) => break,
            }
        }
        // Inside a burst, wait for it to go quiet; a command does not wait.
        while arrivals.in_burst && pending.commands.is_empty() {
            match tokio::time::timeout(BURST, rx.recv()).await {
                Ok(job) => {
                    arrivals.record();
                    pending.add(job?);
                }
                Err(_) => arrivals.in_burst = false,
            }
        }
        Some(())
    }

    /// A run a command asked for (not cancelled by later triggers).
    async fn run_command(
        &mut self,
        config: &Arc<Config>,
        scope: ScopeRequest,
        gates: Option<Vec<String>>,
    ) -> Result<Arc<crate::core::report::Report>, String> {
        let folder = &self.folder;
        let mut req = RunRequest::new(folder.root.clone(), scope, Trigger::Command);
        req.gates = gates;
        req.cache = Some(folder.cache.clone());
        req.warm = true;
        novelty::request_for(config, &mut req);
        let versions = self.out.versions(&folder.root);
        let (tx, events) = mpsc::unbounded_channel();
        req.events = Some(tx);
        let progress = progress::track(self.out.client.clone(), self.show_progress, events);
        let result = match engine::execute(config, &req, None).await {
            Ok(run) => Ok(novelty::judge_now(folder, config, &req, run).await.finish()),
            Err(e) => Err(e),
        };
        drop(req);
        match result {
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
        }
    }

    /// A background run (saves, opens, a rescope), cancelled by the next trigger.
    async fn run_background(&mut self, config: &Arc<Config>) -> Closed {
        let batch = self.pending.take_background();
        let folder = self.folder.clone();
        let scope = match scope(&batch, &folder, config).await {
            Ok(scope) => scope,
            Err(e) => {
                tracing::warn!("{}: the run could not start: {e}", folder.root.display());
                return Some(());
            }
        };
        let mut req = request(&batch, &folder, config);
        let versions = self.out.versions(&folder.root);
        let (tx, events) = mpsc::unbounded_channel();
        req.events = Some(tx);
        let progress = progress::track(self.out.client.clone(), self.show_progress, events);
        let outcome = {
            let run = engine::execute(config, &req, Some(scope));
            tokio::pin!(run);
            tokio::select! {
                r = &mut run => Some(r),
                job = self.rx.recv() => {
                    self.arrivals.record();
                    self.pending.add(job?);
                    None
                }
            }
        };
        // The run's events end with it.
        req.events = None;
        match outcome {
            Some(Ok(run)) => {
                let report = novelty::judge(&folder, config, &req, run).await.finish();
                let shown = Shown {
                    versions: &versions,
                    answer: &batch.answer,
                    progress,
                };
                show(&self.out, &folder, report, shown).await;
            }
            Some(Err(e)) => {
                progress.cancel().await;
                tracing::warn!("{}: the run could not start: {e}", folder.root.display());
            }
            // Cancelled by a newer trigger: its files go into the next run.
            None => {
                progress.cancel().await;
                self.pending.restore(batch);
            }
        }
        Some(())
    }

    /// The error when the folder's `.qgates/` is one qgates refuses (`qgates_dir::check`):
    /// nothing runs for the folder then. Shown to the user once, and again if it changes.
    async fn unsafe_qgates_dir(&mut self) -> Option<String> {
        let Err(e) = crate::core::workspace::qgates_dir::check(&self.folder.root) else {
            self.shown = None;
            return None;
        };
        let why = format!("qgates: {e}");
        if self.shown.as_deref() != Some(why.as_str()) {
            tracing::error!("{why}");
            self.out
                .client
                .show_message(MessageType::ERROR, why.clone())
                .await;
            self.shown = Some(why.clone());
        }
        Some(why)
    }
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
