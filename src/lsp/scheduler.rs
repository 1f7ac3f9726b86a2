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
//! been quiet for `SETTLE` and checks them all at once.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use super::Session;
use super::folder::Folder;
use super::progress;
use super::publish::publish_report;
use crate::core::config::Trigger;
use crate::core::engine::{self, RunRequest};
use crate::core::report::Report;
use crate::core::scope::ScopeRequest;

pub type Reply = oneshot::Sender<Result<Arc<Report>, String>>;

pub enum Job {
    /// A file was saved: the `save` gates over the auto scope plus that file.
    Save(PathBuf),
    /// Files were opened: checked unless the cache already knows them.
    Open(Vec<PathBuf>),
    /// The configuration, trust or git HEAD changed: the auto scope and the open files again.
    Rescope,
    /// A command asked for a run and waits for its report.
    Run {
        scope: ScopeRequest,
        gates: Option<Vec<String>>,
        reply: Reply,
    },
}

/// Background work waiting to run, merged.
#[derive(Default)]
struct Pending {
    saved: BTreeSet<PathBuf>,
    opened: BTreeSet<PathBuf>,
    rescope: bool,
    commands: VecDeque<(ScopeRequest, Option<Vec<String>>, Reply)>,
}

impl Pending {
    fn add(&mut self, job: Job) {
        match job {
            Job::Save(p) => {
                self.saved.insert(p);
            }
            Job::Open(ps) => self.opened.extend(ps),
            Job::Rescope => self.rescope = true,
            Job::Run {
                scope,
                gates,
                reply,
            } => self.commands.push_back((scope, gates, reply)),
        }
    }

    fn only_opened(&self) -> bool {
        !self.opened.is_empty()
            && self.saved.is_empty()
            && !self.rescope
            && self.commands.is_empty()
    }

    fn has_background(&self) -> bool {
        self.rescope || !self.saved.is_empty() || !self.opened.is_empty()
    }

    fn is_empty(&self) -> bool {
        !self.has_background() && self.commands.is_empty()
    }

    fn take_background(&mut self) -> Background {
        Background {
            saved: std::mem::take(&mut self.saved),
            opened: std::mem::take(&mut self.opened),
            rescope: std::mem::take(&mut self.rescope),
        }
    }

    fn restore(&mut self, b: Background) {
        self.saved.extend(b.saved);
        self.opened.extend(b.opened);
        self.rescope |= b.rescope;
    }
}

struct Background {
    saved: BTreeSet<PathBuf>,
    opened: BTreeSet<PathBuf>,
    rescope: bool,
}

impl Background {
    fn request(&self, folder: &Folder) -> RunRequest {
        let root = folder.root.clone();
        let mut req = if self.saved.is_empty() && !self.rescope {
            // Only opened files: check them, nothing else; the baseline is not touched.
            RunRequest::new(
                root,
                ScopeRequest::Files(self.opened.iter().cloned().collect()),
                Trigger::Save,
            )
        } else {
            let mut r = RunRequest::new(root, ScopeRequest::Auto, Trigger::Save);
            r.also = self.saved.iter().chain(&self.opened).cloned().collect();
            r
        };
        req.cache = Some(folder.cache.clone());
        req
    }
}

/// Triggers closer together than this are a burst; see the module docs.
const BURST: Duration = Duration::from_millis(50);

/// Files opened together arrive back to back: a run of opens only starts once no other has come
/// for this long.
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

pub async fn run(session: Arc<Session>, folder: Arc<Folder>, mut rx: mpsc::UnboundedReceiver<Job>) {
    let mut pending = Pending::default();
    let mut arrivals = Arrivals::default();
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
        // Let notifications sent together (200 files opened at once) land before starting.
        tokio::task::yield_now().await;
        while let Ok(job) = rx.try_recv() {
            pending.add(job);
        }
        // Opens alone: the rest of a batch (an editor restoring its tabs) is still being read.
        // Gathered into this run instead of cancelling it, and not counted as a burst of saves.
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
        let Some(config) = folder.config() else {
            refuse(&mut pending, &config_refusal(&folder));
            continue;
        };
        if !folder.is_trusted() {
            refuse(&mut pending, &trust_refusal(&folder));
            continue;
        }
        if let Some((scope, gates, reply)) = pending.commands.pop_front() {
            let mut req = RunRequest::new(folder.root.clone(), scope, Trigger::Command);
            req.gates = gates;
            req.cache = Some(folder.cache.clone());
            let versions = snapshot(&session, &folder);
            let (tx, events) = mpsc::unbounded_channel();
            req.events = Some(tx);
            let progress = progress::track(session.clone(), events);
            let result = engine::run(&config, &req).await;
            drop(req);
            let _ = progress.await;
            let answer = match result {
                Ok(report) => {
                    let report = Arc::new(report);
                    folder.remember(&report, true);
                    publish_report(&session, &folder, &report, &versions).await;
                    Ok(report)
                }
                Err(e) => Err(e.to_string()),
            };
            let _ = reply.send(answer);
            continue;
        }
        if !pending.has_background() {
            continue;
        }
        let batch = pending.take_background();
        let mut req = batch.request(&folder);
        let versions = snapshot(&session, &folder);
        let (tx, events) = mpsc::unbounded_channel();
        req.events = Some(tx);
        let progress = progress::track(session.clone(), events);
        let outcome = {
            let run = engine::run(&config, &req);
            tokio::pin!(run);
            tokio::select! {
                r = &mut run => Some(r),
                job = rx.recv() => {
                    match job {
                        Some(job) => {
                            arrivals.record();
                            pending.add(job);
                        }
                        None => return,
                    }
                    None
                }
            }
        };
        drop(req);
        let _ = progress.await;
        match outcome {
            Some(Ok(report)) => {
                let report = Arc::new(report);
                folder.remember(&report, false);
                publish_report(&session, &folder, &report, &versions).await;
            }
            Some(Err(e)) => {
                tracing::warn!("{}: the run could not start: {e}", folder.root.display());
            }
            // Cancelled by a newer trigger: its files go into the next run.
            None => pending.restore(batch),
        }
    }
}

/// The versions of the folder's open documents when a run starts: results for a document that
/// changed since are stale and not published.
fn snapshot(session: &Session, folder: &Folder) -> HashMap<PathBuf, Option<i32>> {
    session
        .docs
        .under(&folder.root)
        .into_iter()
        .map(|p| {
            let v = session.docs.version(&p);
            (p, v)
        })
        .collect()
}

/// Background work is dropped (it is asked for again when the folder becomes runnable);
/// commands get the reason.
fn refuse(pending: &mut Pending, why: &str) {
    pending.take_background();
    for (_, _, reply) in pending.commands.drain(..) {
        let _ = reply.send(Err(why.to_string()));
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

fn trust_refusal(folder: &Folder) -> String {
    format!(
        "the gates of {} are not trusted yet, so none of its commands run. Run the command `qgates.trust` (or `qgates trust {}` in a terminal) once you have read {}.",
        folder.root.display(),
        folder.root.display(),
        folder.config_label()
    )
}
