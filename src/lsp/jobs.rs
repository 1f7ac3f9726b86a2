//! What a folder's scheduler is asked to do, and the background work waiting for it, merged:
//! a burst of saves or opens becomes one run and nothing is dropped.

use std::collections::{BTreeSet, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::oneshot;

use crate::core::api::ScopeRequest;
use crate::core::report::Report;

pub type Reply = oneshot::Sender<Result<Arc<Report>, String>>;

pub enum Job {
    /// A file was saved: the `save` gates over the auto scope plus that file.
    Save(PathBuf),
    /// Files were opened: checked unless the cache already knows them.
    Open(Vec<PathBuf>),
    /// The configuration, trust or git HEAD changed, or the reference's findings became known:
    /// the auto scope and the open files again.
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
pub struct Pending {
    saved: BTreeSet<PathBuf>,
    /// Saved files whose diagnostics are published after the run even when they did not change:
    /// a save is answered, as the editor's other servers answer it.
    answer: BTreeSet<PathBuf>,
    opened: BTreeSet<PathBuf>,
    rescope: bool,
    pub commands: VecDeque<(ScopeRequest, Option<Vec<String>>, Reply)>,
}

impl Pending {
    pub fn add(&mut self, job: Job) {
        match job {
            Job::Save(p) => {
                self.answer.insert(p.clone());
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

    pub fn only_opened(&self) -> bool {
        !self.opened.is_empty()
            && self.saved.is_empty()
            && !self.rescope
            && self.commands.is_empty()
    }

    pub fn has_background(&self) -> bool {
        self.rescope || !self.saved.is_empty() || !self.opened.is_empty()
    }

    pub fn is_empty(&self) -> bool {
        !self.has_background() && self.commands.is_empty()
    }

    pub fn take_background(&mut self) -> Background {
        Background {
            saved: std::mem::take(&mut self.saved),
            answer: std::mem::take(&mut self.answer),
            opened: std::mem::take(&mut self.opened),
            rescope: std::mem::take(&mut self.rescope),
        }
    }

    /// A cancelled run: its files, and the saves it owed an answer, go into the next run.
    pub fn restore(&mut self, b: Background) {
        self.answer.extend(b.answer);
        self.saved.extend(b.saved);
        self.opened.extend(b.opened);
        self.rescope |= b.rescope;
    }

    /// Background work is dropped (it is asked for again when the folder becomes runnable);
    /// commands get the reason.
    pub fn refuse(&mut self, why: &str) {
        self.take_background();
        for (_, _, reply) in self.commands.drain(..) {
            let _ = reply.send(Err(why.to_string()));
        }
    }
}

/// One background run's files.
pub struct Background {
    pub saved: BTreeSet<PathBuf>,
    /// See `Pending::answer`.
    pub answer: BTreeSet<PathBuf>,
    pub opened: BTreeSet<PathBuf>,
    pub rescope: bool,
}

impl Background {
    /// Only opened files: they are checked, nothing else, and the baseline is not touched.
    pub fn only_opened(&self) -> bool {
        self.saved.is_empty() && !self.rescope
    }
}
