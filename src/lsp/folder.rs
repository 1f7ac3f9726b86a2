//! One workspace folder: its configuration (the last good one), trust, cache, last report, the
//! diagnostics published for its files, and the queue of its scheduler.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};

use tokio::sync::mpsc;
use tower_lsp_server::ls_types::Diagnostic;

use super::diagnostics::{DiagnosticCaps, shown};
use super::jobs::Job;
use super::locks::{lock, read, write, write_lock};
use super::novelty::reference::Reference;
use crate::core::api::ResultCache;
use crate::core::config::{self, Config, ConfigError, ConfigSource};
use crate::core::report::Report;
use crate::core::scope::tracker::ScopeTracker;
use crate::core::scope::watcher::FolderWatch;
use crate::core::trust::{FileHashes, Manifest};

/// On what grounds a folder's commands may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Consent {
    No,
    /// The editor's own workspace trust (VS Code) vouches for the folder.
    Editor,
    /// The user trusted the manifest with this hash.
    Manifest(String),
}

/// The answer of `Folder::may_run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    Yes,
    No,
    /// Trusted before, but what would run has changed: ask again.
    Changed,
}

/// Where the folder's file events come from (`file_events`), as `qgates.summary` tells it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum EventSource {
    /// The client has not been initialized yet.
    #[default]
    Undecided,
    Client,
    /// The server's own watch is walking the folder.
    Starting,
    /// The server's own watch (what the session settles on: one is started per folder).
    Server,
    /// None: every save takes a whole `git status`.
    Off,
    /// The server's watch was lost, for this reason: as `Off` from then on.
    Lost(String),
}

impl std::fmt::Display for EventSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EventSource::Undecided => f.write_str("undecided"),
            EventSource::Client => f.write_str("client"),
            EventSource::Starting => f.write_str("server (starting)"),
            EventSource::Server => f.write_str("server"),
            EventSource::Off => f.write_str("off"),
            EventSource::Lost(why) => write!(f, "lost ({why})"),
        }
    }
}

/// The server's own watch over a folder (`file_events`).
enum Watch {
    None,
    /// Held for its drop, which stops it.
    Running {
        _watch: FolderWatch,
    },
    /// The folder was let go (removed, or the server stops): no watch starts any more.
    Stopped,
}

/// The diagnostics last published for one file.
#[derive(Debug, Clone, Default)]
pub struct Published {
    pub version: Option<i32>,
    pub diagnostics: Vec<Diagnostic>,
    /// The log folder of the run they came from (named when not all are shown).
    pub log_dir: Option<PathBuf>,
}

pub struct Folder {
    pub root: PathBuf,
    config: RwLock<Option<Arc<Config>>>,
    /// The configuration's current problems (it stays on the last good one meanwhile).
    config_error: RwLock<Option<ConfigError>>,
    /// The configuration files that had problems published (to clear them once fixed).
    pub config_files_with_problems: Mutex<Vec<PathBuf>>,
    consent: Mutex<Consent>,
    /// Content hashes of the scripts the configuration runs, checked before every run.
    hashes: FileHashes,
    /// A trust question is on screen; don't ask twice.
    pub asking: AtomicBool,
    pub cache: Arc<ResultCache>,
    /// What findings are compared with, to tell new ones from pre-existing ones.
    pub reference: Reference,
    /// The last report (see `remember`).
    pub last: RwLock<Option<Arc<Report>>>,
    pub published: Mutex<HashMap<PathBuf, Published>>,
    /// Gate errors already shown to the user (shown once, not on every save).
    pub shown_errors: Mutex<std::collections::HashSet<String>>,
    /// The folder's `auto` scope, kept current from saves and file events (`file_events`).
    pub scope: Arc<ScopeTracker>,
    /// The server's own watch over the folder, when it is the source of file events.
    watch: Mutex<Watch>,
    pub events: Mutex<EventSource>,
    tx: mpsc::UnboundedSender<Job>,
}

impl Folder {
    pub fn new(root: PathBuf, tx: mpsc::UnboundedSender<Job>) -> Folder {
        Folder {
            scope: Arc::new(ScopeTracker::new(root.clone(), false)),
            root,
            config: RwLock::new(None),
            config_error: RwLock::new(None),
            config_files_with_problems: Mutex::new(Vec::new()),
            consent: Mutex::new(Consent::No),
            hashes: FileHashes::default(),
            asking: AtomicBool::new(false),
            cache: Arc::new(ResultCache::in_memory()),
            reference: Reference::default(),
            last: RwLock::new(None),
            published: Mutex::new(HashMap::new()),
            shown_errors: Mutex::new(Default::default()),
            watch: Mutex::new(Watch::None),
            events: Mutex::default(),
            tx,
        }
    }

    /// Reads the configuration again. On success it replaces the current one; on failure the
    /// last good one stays and the problems are kept for display. Returns whether the
    /// configuration's content changed.
    pub fn reload(&self) -> bool {
        match config::load_for_workspace(&self.root, None) {
            Ok(c) => {
                let changed = self
                    .config()
                    .is_none_or(|old| old.content_hash != c.content_hash);
                write(&self.config, Some(Arc::new(c)));
                write(&self.config_error, None);
                changed
            }
            Err(e) => {
                write(&self.config_error, Some(e));
                false
            }
        }
    }

    pub fn config(&self) -> Option<Arc<Config>> {
        read(&self.config)
    }

    pub fn config_error(&self) -> Option<ConfigError> {
        read(&self.config_error)
    }

    /// The file the configuration comes from (for messages).
    pub fn config_label(&self) -> String {
        match self.config() {
            Some(c) => match &c.source {
                ConfigSource::File(p) => p.display().to_string(),
                ConfigSource::Embedded => config::embedded_label(&c).into(),
            },
            None => "quality.yaml".into(),
        }
    }

    /// What the configuration would run now; `None` without a configuration.
    pub fn manifest(&self) -> Option<Manifest> {
        self.config()
            .map(|c| Manifest::of(&c, &self.root, &self.hashes))
    }

    /// On what grounds the folder runs (a clean room checks its own manifest against it).
    pub fn consent(&self) -> Consent {
        lock(&self.consent).clone()
    }

    pub fn set_consent(&self, consent: Consent) {
        *lock(&self.consent) = consent;
    }

    /// Whether the folder's commands may run now, checked before every run, fix and code
    /// action: what would run is compared with what was trusted, so a changed script, a new
    /// program in `.venv/bin` or an edited command runs nothing until trusted again.
    pub fn may_run(&self) -> Permission {
        let trusted = match &*lock(&self.consent) {
            Consent::Editor => return Permission::Yes,
            Consent::No => return Permission::No,
            Consent::Manifest(hash) => hash.clone(),
        };
        if self.manifest().is_some_and(|m| m.hash == trusted) {
            Permission::Yes
        } else {
            Permission::Changed
        }
    }

    pub fn contains(&self, path: &Path) -> bool {
        path.starts_with(&self.root)
    }

    /// Whether a path is one of the places this folder's configuration is looked for.
    pub fn is_config_file(&self, path: &Path) -> bool {
        config::CONFIG_CANDIDATES
            .iter()
            .any(|c| self.root.join(c) == path)
    }

    /// Keeps the server's watch over the folder; `false` (and the watch stopped) when the
    /// folder was let go meanwhile.
    pub fn keep_watch(&self, watch: FolderWatch) -> bool {
        let mut slot = lock(&self.watch);
        if matches!(*slot, Watch::Stopped) {
            return false;
        }
        *slot = Watch::Running { _watch: watch };
        true
    }

    /// Stops the server's watch, if it has one (its thread and descriptors end before this
    /// returns), for good, and removes the note of a lost one.
    pub fn stop_watch(&self) {
        drop(std::mem::replace(&mut *lock(&self.watch), Watch::Stopped));
        crate::core::workspace::watch_notes::remove(&self.root);
    }

    /// Queues a job for the folder's scheduler (a stopped scheduler drops it).
    pub fn send(&self, job: Job) {
        let _ = self.tx.send(job);
    }

    pub fn last_report(&self) -> Option<Arc<Report>> {
        read(&self.last)
    }

    /// Keeps a run's report as the folder's last result (what `qgates.summary` answers). A
    /// background run that checked no file (opening a file no gate applies to) does not replace
    /// a real result; a run a command asked for always does.
    pub fn remember(&self, report: &Arc<Report>, asked_for: bool) {
        if asked_for || report.scope.files_checked > 0 || self.last_report().is_none() {
            *write_lock(&self.last) = Some(report.clone());
        }
    }

    pub fn has_result_for(&self, path: &Path) -> bool {
        lock(&self.published).contains_key(path)
    }

    /// What the client is shown of them (`diagnostics::shown`), as they were published.
    pub fn shown_diagnostics_of(&self, path: &Path, caps: DiagnosticCaps) -> Vec<Diagnostic> {
        lock(&self.published)
            .get(path)
            .map(|p| shown(&p.diagnostics, p.log_dir.as_deref(), caps))
            .unwrap_or_default()
    }

    pub fn diagnostics_of(&self, path: &Path) -> Vec<Diagnostic> {
        lock(&self.published)
            .get(path)
            .map(|p| p.diagnostics.clone())
            .unwrap_or_default()
    }
}
