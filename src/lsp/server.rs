//! The LSP handlers. tower-lsp-server runs them concurrently, so each updates shared state
//! before its first `.await` (a didChange never lands after the didSave that follows it), and
//! anything slow goes through the folder's scheduler.

use std::sync::Arc;

use tower_lsp_server::LanguageServer;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use super::actions::{code_actions, fix_all_kind};
use super::commands;
use super::documents::uri_to_path;
use super::file_events::WatcherChoice;
use super::folder::Folder;
use super::jobs::Job;
use super::locks::{read_lock, write};
use super::logging;
use super::position::Encoding;
use super::session::{ClientCaps, InitOptions, Session};

pub struct Backend {
    pub session: Arc<Session>,
}

impl Backend {
    pub fn new(session: Session) -> Backend {
        Backend {
            session: Arc::new(session),
        }
    }

    fn is_config_file(&self, path: &std::path::Path) -> bool {
        self.session
            .folder_for(path)
            .is_some_and(|f| f.is_config_file(path))
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let s = &self.session;
        let encoding = Encoding::negotiate(
            params
                .capabilities
                .general
                .as_ref()
                .and_then(|g| g.position_encodings.as_deref()),
        );
        write(&s.encoding, encoding);
        let caps = ClientCaps::of(&params.capabilities);
        write(&s.caps, caps);
        let options: InitOptions = params
            .initialization_options
            .map(|v| {
                serde_json::from_value(v).unwrap_or_else(|e| {
                    tracing::warn!("initializationOptions ignored: {e}");
                    InitOptions::default()
                })
            })
            .unwrap_or_default();
        if let Some(level) = &options.log_level
            && let Err(e) = logging::set_level(level)
        {
            tracing::warn!("{e}");
        }
        let pull = options.pull_diagnostics == Some(true);
        write(&s.options, options);
        let roots: Vec<_> = match params.workspace_folders {
            Some(folders) if !folders.is_empty() => {
                folders.iter().filter_map(|f| uri_to_path(&f.uri)).collect()
            }
            #[allow(deprecated)]
            _ => params
                .root_uri
                .as_ref()
                .and_then(uri_to_path)
                .into_iter()
                .collect(),
        };
        for root in roots {
            s.add_folder(root);
        }
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(encoding.kind()),
                text_document_sync: Some(TextDocumentSyncCapability::Options(
                    TextDocumentSyncOptions {
                        open_close: Some(true),
                        change: Some(TextDocumentSyncKind::FULL),
                        save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                            include_text: Some(false),
                        })),
                        ..Default::default()
                    },
                )),
                // Options only for a client that takes literals (the protocol's rule).
                code_action_provider: Some(if caps.code_action_literals {
                    CodeActionProviderCapability::Options(CodeActionOptions {
                        code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, fix_all_kind()]),
                        ..Default::default()
                    })
                } else {
                    CodeActionProviderCapability::Simple(true)
                }),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: commands::ALL.iter().map(|c| c.to_string()).collect(),
                    ..Default::default()
                }),
                diagnostic_provider: pull.then(|| {
                    DiagnosticServerCapabilities::Options(DiagnosticOptions {
                        identifier: Some("qgates".into()),
                        inter_file_dependencies: true,
                        workspace_diagnostics: false,
                        ..Default::default()
                    })
                }),
                workspace: Some(WorkspaceServerCapabilities {
                    workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                        supported: Some(true),
                        change_notifications: Some(OneOf::Left(true)),
                    }),
                    file_operations: None,
                }),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "qgates".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        let s = &self.session;
        let choice = read_lock(&s.options).file_watcher.unwrap_or_default();
        let mut client_watches = false;
        // The server's own watch reports the configuration and HEAD too.
        if s.caps().watched_files_dynamic && choice != WatcherChoice::Server {
            let registration = super::file_events::registration(choice.asks_client());
            match s.client.register_capability(vec![registration]).await {
                Ok(()) => client_watches = choice.asks_client(),
                Err(e) => tracing::warn!("the client refused file watching: {e}"),
            }
        }
        let events = choice.settle(client_watches);
        tracing::info!("file events: {events:?} (fileWatcher: {choice:?})");
        s.set_file_events(events);
        for folder in s.folders() {
            self.start_folder(&folder).await;
        }
    }

    async fn shutdown(&self) -> Result<()> {
        self.session.stop_all();
        Ok(())
    }

    /// A document opened: kept, and checked unless it is a configuration file.
    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let s = &self.session;
        let doc = params.text_document;
        let Some(path) = uri_to_path(&doc.uri) else {
            return;
        };
        s.docs.open(path.clone(), doc.uri, doc.version, doc.text);
        let Some(folder) = s.folder_for(&path) else {
            tracing::debug!("{} is outside every workspace folder", path.display());
            return;
        };
        if folder.is_config_file(&path) {
            s.publisher().publish_config_problems(&folder).await;
        } else {
            // Always asked for: a file reopened with other content must be checked again, and
            // one whose content the cache knows costs no process (the cache is keyed by content).
            folder.send(Job::Open(vec![path]));
        }
    }

    /// Full sync: the last change holds the whole text.
    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let Some(path) = uri_to_path(&params.text_document.uri) else {
            return;
        };
        if let Some(change) = params.content_changes.into_iter().last() {
            let doc = params.text_document;
            self.session
                .docs
                .open(path, doc.uri, doc.version, change.text);
        }
    }

    /// A save runs the gates (or reloads the configuration, when it is the file saved).
    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        let Some(path) = uri_to_path(&params.text_document.uri) else {
            return;
        };
        let Some(folder) = self.session.folder_for(&path) else {
            return;
        };
        if folder.is_config_file(&path) {
            self.session.reload_folder(&folder).await;
        } else {
            folder.scope.changed([path.as_path()]);
            folder.send(Job::Save(path));
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        if let Some(path) = uri_to_path(&params.text_document.uri) {
            self.session.docs.close(&path);
        }
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        let mut reload = Vec::new();
        for change in params.changes {
            let Some(path) = uri_to_path(&change.uri) else {
                continue;
            };
            let Some(folder) = self.session.folder_for(&path) else {
                continue;
            };
            folder.scope.changed([path.as_path()]);
            if path.ends_with(".git/HEAD") {
                folder.send(Job::Rescope);
            } else if self.is_config_file(&path)
                && !reload.iter().any(|f: &Arc<Folder>| Arc::ptr_eq(f, &folder))
            {
                reload.push(folder);
            }
        }
        for folder in reload {
            self.session.reload_folder(&folder).await;
        }
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        for removed in params.event.removed {
            if let Some(root) = uri_to_path(&removed.uri) {
                self.session.remove_folder(&root);
            }
        }
        let added: Vec<_> = params
            .event
            .added
            .iter()
            .filter_map(|f| uri_to_path(&f.uri))
            .map(|root| self.session.add_folder(root))
            .collect();
        for folder in added {
            // An open handled before this change found no folder, or an outer one: the new
            // folder checks its open files itself, as a reloaded configuration does.
            let open = self.session.docs.under(&folder.root);
            if !open.is_empty() {
                folder.send(Job::Open(open));
            }
            self.start_folder(&folder).await;
        }
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri.clone();
        let Some(path) = uri_to_path(&uri) else {
            return Ok(None);
        };
        let Some(folder) = self.session.folder_for(&path) else {
            return Ok(None);
        };
        let actions = code_actions(&self.session, &folder, &path, &uri, &params).await;
        Ok((!actions.is_empty()).then_some(actions))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        commands::execute(&self.session, &params.command, params.arguments).await
    }

    async fn diagnostic(
        &self,
        params: DocumentDiagnosticParams,
    ) -> Result<DocumentDiagnosticReportResult> {
        let shape = self.session.caps().diagnostics;
        let items = uri_to_path(&params.text_document.uri)
            .and_then(|path| {
                let folder = self.session.folder_for(&path)?;
                if !folder.has_result_for(&path) && !self.is_config_file(&path) {
                    folder.send(Job::Open(vec![path.clone()]));
                }
                Some(folder.shown_diagnostics_of(&path, shape))
            })
            .unwrap_or_default();
        Ok(DocumentDiagnosticReportResult::Report(
            DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
                related_documents: None,
                full_document_diagnostic_report: FullDocumentDiagnosticReport {
                    result_id: None,
                    items,
                },
            }),
        ))
    }
}

impl Backend {
    /// Shows a new folder's configuration problems and asks for trust where needed.
    async fn start_folder(&self, folder: &Arc<Folder>) {
        let s = &self.session;
        s.publisher().publish_config_problems(folder).await;
        if let Some(e) = folder.config_error() {
            s.client
                .show_message(
                    MessageType::ERROR,
                    format!(
                        "qgates: the configuration of {} has errors, so no gate runs until they are fixed: {}",
                        folder.root.display(),
                        e.problems.first().map(|p| p.to_string()).unwrap_or_default()
                    ),
                )
                .await;
        } else {
            s.ask_trust(folder);
        }
    }
}
