//! `qgates lsp`: the editor face. A thin translation between LSP and the engine: documents,
//! positions and diagnostics here; gates, scopes and caches in `core`.

mod actions;
mod auto_scope;
mod commands;
mod diagnostics;
mod documents;
mod folder;
mod framing;
mod input;
mod logging;
mod position;
mod progress;
mod publish;
mod scheduler;
mod server;
mod stdio;
mod text_sync;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use serde::Deserialize;
use tokio::task::AbortHandle;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType};
use tower_lsp_server::{Client, LspService, Server};

use documents::Documents;
use folder::Folder;
use position::Encoding;
use scheduler::Job;

use crate::core::trust::TrustStore;

/// What the client can do that changes what the server sends.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientCaps {
    pub work_done_progress: bool,
    pub watched_files_dynamic: bool,
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
}

/// Server-wide state shared by the handlers and the schedulers.
pub struct Session {
    pub client: Client,
    pub docs: Documents,
    folders: RwLock<Vec<Arc<Folder>>>,
    encoding: RwLock<Encoding>,
    caps: RwLock<ClientCaps>,
    options: RwLock<InitOptions>,
    trust: Option<TrustStore>,
    schedulers: Mutex<Vec<(PathBuf, AbortHandle)>>,
    /// The opens read from the client and handed to schedulers (see `input`).
    pub input: Arc<input::InputActivity>,
    /// Message bodies written to the client as they are, past the library (see `publish`).
    direct: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
    /// Between `initialize` and `shutdown`: the input guard applies the text-synchronization
    /// notifications itself (see `text_sync`).
    text_sync: std::sync::atomic::AtomicBool,
}

fn read<T: Clone>(lock: &RwLock<T>) -> T {
    lock.read().unwrap_or_else(|e| e.into_inner()).clone()
}

fn write<T>(lock: &RwLock<T>, value: T) {
    *lock.write().unwrap_or_else(|e| e.into_inner()) = value;
}

impl Session {
    fn new(
        client: Client,
        input: Arc<input::InputActivity>,
        direct: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
    ) -> Session {
        Session {
            client,
            docs: Documents::default(),
            folders: RwLock::new(Vec::new()),
            encoding: RwLock::new(Encoding::default()),
            caps: RwLock::new(ClientCaps::default()),
            options: RwLock::new(InitOptions::default()),
            trust: TrustStore::for_user(),
            schedulers: Mutex::new(Vec::new()),
            input,
            direct,
            text_sync: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub fn takes_text_sync(&self) -> bool {
        self.text_sync.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn set_takes_text_sync(&self, on: bool) {
        self.text_sync
            .store(on, std::sync::atomic::Ordering::SeqCst);
    }

    /// Sends a message body to the client past the library (see `publish`). The bytes sent;
    /// `None` when the client's output is gone.
    pub fn send_direct(&self, body: Vec<u8>) -> Option<usize> {
        let len = body.len();
        self.direct.send(body).ok().map(|()| len)
    }

    pub fn encoding(&self) -> Encoding {
        read(&self.encoding)
    }

    pub fn caps(&self) -> ClientCaps {
        read(&self.caps)
    }

    pub fn options(&self) -> InitOptions {
        read(&self.options)
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

    /// Adds a workspace folder: loads its configuration, decides trust, starts its scheduler.
    fn add_folder(self: &Arc<Self>, root: PathBuf) -> Arc<Folder> {
        if let Some(existing) = self.folders().into_iter().find(|f| f.root == root) {
            return existing;
        }
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let folder = Arc::new(Folder::new(root.clone(), tx));
        folder.reload();
        folder.set_trusted(self.trusted_already(&folder));
        let task = tokio::spawn(scheduler::run(self.clone(), folder.clone(), rx));
        self.schedulers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((root, task.abort_handle()));
        self.folders
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(folder.clone());
        folder
    }

    /// Removes a folder and stops its scheduler (killing a run in flight).
    fn remove_folder(&self, root: &Path) {
        self.folders
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|f| f.root != root);
        let mut tasks = self.schedulers.lock().unwrap_or_else(|e| e.into_inner());
        for (_, t) in tasks.iter().filter(|(r, _)| r == root) {
            t.abort();
        }
        tasks.retain(|(r, _)| r != root);
    }

    /// Stops every scheduler: their runs' processes are killed as the runs are dropped.
    fn stop_all(&self) {
        for (_, t) in self
            .schedulers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            t.abort();
        }
    }

    /// The editor's trust, or the user's recorded trust in this exact configuration.
    fn trusted_already(&self, folder: &Folder) -> bool {
        if self.options().trusted == Some(true) {
            return true;
        }
        match (&self.trust, folder.config()) {
            (Some(store), Some(config)) => store.is_trusted(&folder.root, &config.content_hash),
            _ => false,
        }
    }

    /// Records trust in the folder's current configuration and runs its gates.
    pub async fn trust_folder(&self, folder: &Arc<Folder>) -> Result<(), String> {
        let Some(config) = folder.config() else {
            return Err(format!(
                "{} has no valid configuration to trust; fix its errors first",
                folder.root.display()
            ));
        };
        if let Some(store) = &self.trust
            && let Err(e) = store.trust(&folder.root, &config.content_hash)
        {
            // Trusted for this session anyway; the user asked for it.
            tracing::warn!("cannot record trust in {}: {e}", store.path().display());
        }
        folder.set_trusted(true);
        folder.send(Job::Open(self.docs.under(&folder.root)));
        folder.send(Job::Rescope);
        Ok(())
    }

    /// Asks the user, once at a time, whether to trust a folder's configuration.
    fn ask_trust(self: &Arc<Self>, folder: &Arc<Folder>) {
        if folder.is_trusted()
            || folder.config().is_none()
            || folder
                .asking
                .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let session = self.clone();
        let folder = folder.clone();
        tokio::spawn(async move {
            let commands = folder
                .config()
                .map(|c| {
                    c.gates
                        .iter()
                        .filter_map(|g| g.command.first().cloned())
                        .collect::<std::collections::BTreeSet<_>>()
                        .into_iter()
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            let question = format!(
                "qgates: run the quality gates of {}? {} runs these commands: {commands}. Trust it only if you trust this repository.",
                folder.root.display(),
                folder.config_label(),
            );
            let answer = session
                .client
                .show_message_request(
                    MessageType::WARNING,
                    question,
                    Some(vec![
                        MessageActionItem {
                            title: "Trust".into(),
                            properties: Default::default(),
                        },
                        MessageActionItem {
                            title: "Not now".into(),
                            properties: Default::default(),
                        },
                    ]),
                )
                .await;
            folder
                .asking
                .store(false, std::sync::atomic::Ordering::SeqCst);
            if let Ok(Some(item)) = answer
                && item.title == "Trust"
                && let Err(e) = session.trust_folder(&folder).await
            {
                session.client.show_message(MessageType::ERROR, e).await;
            }
        });
    }

    /// Reads a folder's configuration again (its file changed): problems are shown where they
    /// are, the last good configuration stays, and a changed configuration needs trust again.
    async fn reload_folder(self: &Arc<Self>, folder: &Arc<Folder>) {
        let changed = folder.reload();
        publish::publish_config_problems(self, folder).await;
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
        folder
            .shown_errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        if self.trusted_already(folder) {
            folder.set_trusted(true);
            folder.send(Job::Open(self.docs.under(&folder.root)));
            folder.send(Job::Rescope);
        } else {
            folder.set_trusted(false);
            self.ask_trust(folder);
        }
    }
}

/// `qgates lsp`: serves stdin/stdout until the client exits or stdin closes.
pub fn main() -> i32 {
    logging::init();
    // One worker: a message goes from the client to a gate's process and its diagnostics back
    // without passing between threads (each hand-off wakes an idle core, tens to hundreds of
    // microseconds on a virtual machine). The work that takes long (a large output's parse,
    // git's status) goes to other threads anyway, and a multi-thread runtime keeps
    // `block_in_place` available.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("cannot start the runtime: {e}");
            return 1;
        }
    };
    runtime.block_on(async {
        let (input, output) = stdio::streams();
        serve(input, output).await;
    });
    // Dropping the runtime drops every task, so every run's process group is killed.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    0
}

/// Serves one client over a pair of streams (stdio, or pipes in tests). The client's bytes go
/// through `framing`'s guard, so a malformed message is answered and skipped instead of ending
/// the library's input.
pub async fn serve<I, O>(input: I, output: O)
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let activity = Arc::new(input::InputActivity::default());
    // Messages that go to the client past the library: the guard's answers, diagnostics.
    let (direct_tx, direct_rx) = tokio::sync::mpsc::unbounded_channel();
    let (service, socket) = LspService::build(|client| {
        let session = Session::new(client, activity.clone(), direct_tx.clone());
        server::Backend::new(session)
    })
    .finish();
    let session = service.inner().session.clone();
    let (server_in, guard_out) = tokio::io::duplex(256 << 10);
    let (server_out, merge_in) = tokio::io::duplex(256 << 10);
    let taker = session.clone();
    let take = move |kind, body: &[u8]| text_sync::take(&taker, kind, body);
    tokio::spawn(framing::guard_input(
        input, guard_out, direct_tx, activity, take,
    ));
    let merge = tokio::spawn(framing::merge_output(merge_in, output, direct_rx));
    // On a worker of the runtime like every other task, not on the thread that blocks on
    // `serve`: a message handed between the protocol and a scheduler then needs no wake-up of
    // another thread.
    let server = tokio::spawn(Server::new(server_in, server_out, socket).serve(service));
    let _ = server.await;
    session.stop_all();
    // Whatever the server wrote last (the shutdown answer) reaches the client before we return.
    let _ = merge.await;
}
