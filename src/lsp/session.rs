//! Server-wide state shared by the handlers: the client, the open documents, the workspace
//! folders with their schedulers, and what `initialize` negotiated. Background work gets a
//! `Publisher`, not the session.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use serde::Deserialize;
use tokio::task::AbortHandle;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{ClientCapabilities, MessageType};

use super::diagnostics::{DiagnosticCaps, ExistingFindings};
use super::documents::Documents;
use super::file_events::{self, WatcherChoice};
use super::folder::{Consent, EventSource, Folder, Permission};
use super::jobs::Job;
use super::position::Encoding;
use super::publish::Publisher;
use super::scheduler;
use super::trust;

use super::locks::{lock, read, read_lock, write_lock};
use crate::core::api::children;
use crate::core::trust::Manifest;

/// What the client can do that changes what the server sends: the server sends nothing the
/// client did not declare (an undeclared capability is one the client lacks).
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientCaps {
    pub work_done_progress: bool,
    pub watched_files_dynamic: bool,
    /// `CodeAction` literals and `codeActionProvider` options; otherwise code actions are
    /// `Command`s run through `workspace/executeCommand`.
    pub code_action_literals: bool,
    pub is_preferred: bool,
    /// `workspace/applyEdit`; otherwise a command that edits returns the edit in its result.
    pub apply_edit: bool,
    pub diagnostics: DiagnosticCaps,
}

impl ClientCaps {
    /// Read once, from `initialize`.
    pub fn of(c: &ClientCapabilities) -> ClientCaps {
        let text = c.text_document.as_ref();
        let action = text.and_then(|t| t.code_action.as_ref());
        let publish = text.and_then(|t| t.publish_diagnostics.as_ref());
        let workspace = c.workspace.as_ref();
        ClientCaps {
            work_done_progress: c
                .window
                .as_ref()
                .and_then(|w| w.work_done_progress)
                .unwrap_or(false),
            watched_files_dynamic: workspace
                .and_then(|w| w.did_change_watched_files.as_ref())
                .and_then(|d| d.dynamic_registration)
                .unwrap_or(false),
            code_action_literals: action.is_some_and(|a| a.code_action_literal_support.is_some()),
            is_preferred: action.and_then(|a| a.is_preferred_support) == Some(true),
            apply_edit: workspace.and_then(|w| w.apply_edit) == Some(true),
            diagnostics: DiagnosticCaps {
                code_description: publish.and_then(|p| p.code_description_support) == Some(true),
                data: publish.and_then(|p| p.data_support) == Some(true),
                version: publish.and_then(|p| p.version_support) == Some(true),
            },
        }
    }
}

/// `initializationOptions` (unknown keys are ignored: clients share option objects).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitOptions {
    /// The editor's own workspace trust (VS Code): counts as consent to run the gates.
    pub trusted: Option<bool>,
    /// `error`, `warn`, `info`, `debug`, `trace` or a `tracing` filter.
    pub log_level: Option<String>,
    /// Announce pull diagnostics (`textDocument/diagnostic`); push is always on.
    pub pull_diagnostics: Option<bool>,
    /// Where file events come from: `auto` (default), `client`, `server` or `off`.
    pub file_watcher: Option<WatcherChoice>,
    /// The most folders the server's own watch takes per workspace folder (each is an inotify
    /// watch, shared with the user's other programs); past it, saves take a whole `git status`.
    pub max_watched_folders: Option<usize>,
    /// How findings that were there before the change are shown: `hint`, `information`
    /// (default), `same` or `hide`.
    pub existing_findings: Option<ExistingFindings>,
}

/// Server-wide state shared by the handlers and the schedulers.
pub struct Session {
    pub client: Client,
    pub docs: Arc<Documents>,
    folders: RwLock<Vec<Arc<Folder>>>,
    pub encoding: RwLock<Encoding>,
    pub caps: RwLock<ClientCaps>,
    pub options: RwLock<InitOptions>,
    schedulers: Mutex<Vec<(PathBuf, AbortHandle)>>,
    /// Where the folders' file events come from, once `initialized` settled it.
    events: Mutex<EventSource>,
}

impl Session {
    pub fn new(client: Client) -> Session {
        Session {
            client,
            docs: Arc::default(),
            folders: RwLock::new(Vec::new()),
            encoding: RwLock::new(Encoding::default()),
            caps: RwLock::new(ClientCaps::default()),
            options: RwLock::new(InitOptions::default()),
            schedulers: Mutex::new(Vec::new()),
            events: Mutex::default(),
        }
    }

    /// What background work needs to publish (see `publish`).
    pub fn publisher(&self) -> Publisher {
        Publisher {
            client: self.client.clone(),
            docs: self.docs.clone(),
            encoding: self.encoding(),
            diagnostics: self.caps().diagnostics,
            existing: read_lock(&self.options)
                .existing_findings
                .unwrap_or_default(),
        }
    }

    pub fn encoding(&self) -> Encoding {
        read(&self.encoding)
    }

    pub fn caps(&self) -> ClientCaps {
        read(&self.caps)
    }

    /// The editor vouches for the folders with its own workspace trust.
    fn editor_trusts(&self) -> bool {
        read_lock(&self.options).trusted == Some(true)
    }

    pub fn folders(&self) -> Vec<Arc<Folder>> {
        read(&self.folders)
    }

    /// The innermost workspace folder holding a path.
    pub fn folder_for(&self, path: &Path) -> Option<Arc<Folder>> {
        self.folders()
            .into_iter()
            .filter(|f| f.contains(path))
            .max_by_key(|f| f.root.as_os_str().len())
    }

    /// Where the folders' file events come from (settled in `initialized`).
    pub fn set_file_events(self: &Arc<Self>, events: EventSource) {
        *lock(&self.events) = events.clone();
        for folder in self.folders() {
            self.follow(&folder, events.clone());
        }
    }

    fn follow(self: &Arc<Self>, folder: &Arc<Folder>, events: EventSource) {
        let limit = read_lock(&self.options)
            .max_watched_folders
            .unwrap_or(usize::MAX);
        let (session, runtime) = (Arc::downgrade(self), tokio::runtime::Handle::current());
        let on_config: file_events::ConfigChanged = Arc::new(move |folder, path| {
            let Some(session) = session.upgrade() else {
                return;
            };
            // A configuration file open in the editor is reloaded when it is saved there.
            if session.docs.get(path).is_none() {
                let folder = folder.clone();
                runtime.spawn(async move { session.reload_folder(&folder).await });
            }
        });
        file_events::follow(folder, events, limit, on_config);
    }

    /// Adds a workspace folder: loads its configuration, decides trust, starts its scheduler.
    pub fn add_folder(self: &Arc<Self>, root: PathBuf) -> Arc<Folder> {
        if let Some(existing) = self.folders().into_iter().find(|f| f.root == root) {
            return existing;
        }
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let folder = Arc::new(Folder::new(root.clone(), tx));
        folder.reload();
        folder.set_consent(trust::initial_consent(&folder, self.editor_trusts()));
        let progress = self.caps().work_done_progress;
        let task = tokio::spawn(scheduler::run(
            self.publisher(),
            progress,
            folder.clone(),
            rx,
        ));
        lock(&self.schedulers).push((root, task.abort_handle()));
        write_lock(&self.folders).push(folder.clone());
        // After the folder is listed: `set_file_events` either finds it or was seen here.
        let events = lock(&self.events).clone();
        self.follow(&folder, events);
        folder
    }

    /// Removes a folder and stops its scheduler (killing a run in flight).
    pub fn remove_folder(&self, root: &Path) {
        let mut folders = write_lock(&self.folders);
        for folder in folders.iter().filter(|f| f.root == root) {
            folder.stop_watch();
        }
        folders.retain(|f| f.root != root);
        drop(folders);
        let mut tasks = lock(&self.schedulers);
        for (_, t) in tasks.iter().filter(|(r, _)| r == root) {
            t.abort();
        }
        tasks.retain(|(r, _)| r != root);
    }

    /// Stops every scheduler and every tool this server started (process groups killed and
    /// reaped before this returns).
    pub fn stop_all(&self) {
        for (_, t) in lock(&self.schedulers).drain(..) {
            t.abort();
        }
        for folder in self.folders() {
            folder.stop_watch();
        }
        let stopped = children::stop_all();
        if stopped > 0 {
            tracing::debug!("stopped {stopped} running tool(s)");
        }
    }

    /// Records trust in what the folder runs now (the user asked by command) and runs it.
    pub fn trust_folder(&self, folder: &Arc<Folder>) -> Result<Manifest, String> {
        let Some(manifest) = folder.manifest() else {
            return Err(format!(
                "{} has no valid configuration to trust; fix its errors first",
                folder.root.display()
            ));
        };
        trust::grant(&self.docs, folder, &manifest);
        Ok(manifest)
    }

    /// Asks the user, once at a time, whether to trust what a folder runs.
    pub fn ask_trust(&self, folder: &Arc<Folder>) {
        if folder.may_run() == Permission::Yes || folder.config().is_none() {
            return;
        }
        trust::ask(
            self.client.clone(),
            self.docs.clone(),
            folder.clone(),
            false,
        );
    }

    /// Reads a folder's configuration again (its file changed): problems are shown where they
    /// are, the last good configuration stays, and a changed configuration needs trust again.
    pub async fn reload_folder(self: &Arc<Self>, folder: &Arc<Folder>) {
        let changed = folder.reload();
        self.publisher().publish_config_problems(folder).await;
        if folder.config_error().is_some() {
            self.client
                .show_message(
                    MessageType::ERROR,
                    format!(
                        "qgates: the configuration of {} has errors (shown in the file); the last good configuration stays in use.",
                        folder.root.display()
                    ),
                )
                .await;
            return;
        }
        if !changed {
            return;
        }
        lock(&folder.shown_errors).clear();
        let consent = trust::initial_consent(folder, self.editor_trusts());
        let may_run = consent != Consent::No;
        folder.set_consent(consent);
        if may_run {
            folder.send(Job::Open(self.docs.under(&folder.root)));
            folder.send(Job::Rescope);
        } else {
            self.ask_trust(folder);
        }
    }
}
