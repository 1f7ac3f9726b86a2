//! Where a folder's file events come from (docs/lsp.md, "File events"): the client's watcher
//! when it offers one, else the server's own (`core::scope::watcher`), so the `auto` scope
//! follows changes in either case and a save costs what the saved file costs. The
//! `fileWatcher` option forces the client's, the server's, or none.

use std::path::PathBuf;
use std::sync::{Arc, Weak};

use serde::Deserialize;
use tower_lsp_server::ls_types::{
    DidChangeWatchedFilesRegistrationOptions, FileSystemWatcher, GlobPattern, Registration,
};

use super::folder::{EventSource, Folder};
use super::jobs::Job;
use super::locks::{lock, read_lock};
use super::session::Session;
use crate::core::scope::watcher::{FolderWatch, Observed};
use crate::core::workspace::watch_notes;

/// The `fileWatcher` initialization option.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WatcherChoice {
    /// The client's watcher when it offers one, else the server's.
    #[default]
    Auto,
    Client,
    Server,
    /// No file events: every save takes a whole `git status`.
    Off,
}

/// What the session settled on in `initialized`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FileEvents {
    /// `initialized` has not run yet.
    #[default]
    Undecided,
    Client,
    Server,
    Off,
}

impl WatcherChoice {
    /// Whether the client is asked to report every file (not only the configuration and HEAD).
    pub fn asks_client(self) -> bool {
        matches!(self, WatcherChoice::Auto | WatcherChoice::Client)
    }

    /// The source once the client's registration (if any was asked) is known.
    pub fn settle(self, client_watches: bool) -> FileEvents {
        match self {
            WatcherChoice::Auto if client_watches => FileEvents::Client,
            WatcherChoice::Auto | WatcherChoice::Server => FileEvents::Server,
            WatcherChoice::Client if client_watches => FileEvents::Client,
            WatcherChoice::Client | WatcherChoice::Off => FileEvents::Off,
        }
    }
}

/// The client's file watching: the configuration files and HEAD, and every file when the
/// client's events keep the `auto` scope.
pub fn registration(every_file: bool) -> Registration {
    let globs = ["**/quality.yaml", "**/.qgates/quality.yaml", "**/.git/HEAD"];
    let watchers = every_file
        .then_some("**/*")
        .into_iter()
        .chain(globs)
        .map(|g| FileSystemWatcher {
            glob_pattern: GlobPattern::String(g.into()),
            kind: None,
        })
        .collect();
    Registration {
        id: "qgates-watch".into(),
        method: "workspace/didChangeWatchedFiles".into(),
        register_options: serde_json::to_value(DidChangeWatchedFilesRegistrationOptions {
            watchers,
        })
        .ok(),
    }
}

/// Has a folder's scope follow `events`: the client's, or a watch of the server's own started
/// for it (walking the folder's tree, off the server's thread).
pub fn follow(session: &Arc<Session>, folder: &Arc<Folder>, events: FileEvents) {
    let source = match events {
        FileEvents::Client => {
            folder.scope.follow_events(true);
            EventSource::Client
        }
        FileEvents::Server => {
            let (session, folder) = (Arc::downgrade(session), folder.clone());
            let runtime = tokio::runtime::Handle::current();
            tokio::task::spawn_blocking(move || start_watch(&session, &folder, runtime));
            EventSource::Starting
        }
        FileEvents::Off => EventSource::Off,
        FileEvents::Undecided => EventSource::Undecided,
    };
    *lock(&folder.events) = source;
}

fn start_watch(session: &Weak<Session>, folder: &Arc<Folder>, runtime: tokio::runtime::Handle) {
    let report = {
        let (session, folder) = (session.clone(), Arc::downgrade(folder));
        move |observed: Observed| {
            if let Some(folder) = folder.upgrade() {
                observe(&session, &folder, &observed, &runtime);
            }
        }
    };
    let limit = session
        .upgrade()
        .and_then(|s| read_lock(&s.options).max_watched_folders)
        .unwrap_or(usize::MAX);
    match FolderWatch::start(&folder.root, limit, report) {
        Ok(watch) => {
            folder.scope.follow_events(true);
            *lock(&folder.events) = EventSource::Server;
            let listed = session
                .upgrade()
                .is_some_and(|s| s.folders().iter().any(|f| Arc::ptr_eq(f, folder)));
            // A folder removed while its tree was walked is not watched.
            if listed {
                folder.keep_watch(watch);
            }
        }
        Err(why) => lost(folder, &why),
    }
}

/// What the server's watch saw, handled as the client's events are (`did_change_watched_files`).
fn observe(
    session: &Weak<Session>,
    folder: &Arc<Folder>,
    observed: &Observed,
    runtime: &tokio::runtime::Handle,
) {
    folder.scope.observe(observed);
    let paths = match observed {
        Observed::Changed(paths) => paths,
        Observed::Lost(why) => return lost(folder, why),
    };
    if paths.iter().any(|p| p.ends_with(".git/HEAD")) {
        folder.send(Job::Rescope);
    }
    let Some(session) = session.upgrade() else {
        return;
    };
    // A configuration file open in the editor is reloaded when it is saved there.
    let edited_elsewhere = |p: &PathBuf| folder.is_config_file(p) && session.docs.get(p).is_none();
    if paths.iter().any(edited_elsewhere) {
        let folder = folder.clone();
        runtime.spawn(async move { session.reload_folder(&folder).await });
    }
}

/// The folder's saves take a whole `git status` from now on: said once in the log, and in a
/// note `qgates status` shows.
fn lost(folder: &Folder, why: &str) {
    folder.scope.follow_events(false);
    *lock(&folder.events) = EventSource::Lost(why.to_owned());
    tracing::warn!(
        "{}: no file watch ({why}); each save there takes a whole git status",
        folder.root.display()
    );
    if let Err(e) = watch_notes::write(&folder.root, why) {
        tracing::debug!("the note for qgates status could not be written: {e}");
    }
}
