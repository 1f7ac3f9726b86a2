//! Where a folder's file events come from (docs/lsp.md, "File events"): the client's watcher
//! when it offers one, else the server's own (`core::scope::watcher`), so the `auto` scope
//! follows changes in either case and a save costs what the saved file costs. The
//! `fileWatcher` option forces the client's, the server's, or none.

use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use tower_lsp_server::ls_types::{
    DidChangeWatchedFilesRegistrationOptions, FileSystemWatcher, GlobPattern, Registration,
};

use super::folder::{EventSource, Folder};
use super::jobs::Job;
use super::locks::lock;
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

impl WatcherChoice {
    /// Whether the client is asked to report every file (not only the configuration and HEAD).
    pub fn asks_client(self) -> bool {
        matches!(self, WatcherChoice::Auto | WatcherChoice::Client)
    }

    /// The source once the client's registration (if any was asked) is known.
    pub fn settle(self, client_watches: bool) -> EventSource {
        match self {
            WatcherChoice::Auto if client_watches => EventSource::Client,
            WatcherChoice::Auto | WatcherChoice::Server => EventSource::Server,
            WatcherChoice::Client if client_watches => EventSource::Client,
            WatcherChoice::Client | WatcherChoice::Off => EventSource::Off,
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

/// Told that a folder's configuration file changed on disk (the server's watch saw it).
pub type ConfigChanged = Arc<dyn Fn(&Arc<Folder>, &Path) + Send + Sync>;

/// Has a folder's scope follow `events`: the client's, or a watch of the server's own started
/// for it, of at most `limit` folders (walking the folder's tree, off the server's thread).
pub fn follow(folder: &Arc<Folder>, events: EventSource, limit: usize, on_config: ConfigChanged) {
    if events == EventSource::Client {
        folder.scope.follow_events(true);
    }
    if events != EventSource::Server {
        *lock(&folder.events) = events;
        return;
    }
    // Said before the watch's thread can say it is running, or lost.
    *lock(&folder.events) = EventSource::Starting;
    let folder = folder.clone();
    tokio::task::spawn_blocking(move || start_watch(&folder, limit, on_config));
}

fn start_watch(folder: &Arc<Folder>, limit: usize, on_config: ConfigChanged) {
    let report = {
        let folder = Arc::downgrade(folder);
        move |observed: Observed| {
            if let Some(folder) = folder.upgrade() {
                observe(&folder, &observed, &on_config);
            }
        }
    };
    match FolderWatch::start(&folder.root, limit, report) {
        Ok(watch) => {
            // A folder removed while its tree was walked keeps no watch.
            if folder.keep_watch(watch) {
                folder.scope.follow_events(true);
                *lock(&folder.events) = EventSource::Server;
            }
        }
        Err(why) => lost(folder, &why),
    }
}

/// What the server's watch saw, handled as the client's events are (`did_change_watched_files`).
fn observe(folder: &Arc<Folder>, observed: &Observed, on_config: &ConfigChanged) {
    folder.scope.observe(observed);
    let paths = match observed {
        Observed::Changed(paths) => paths,
        Observed::Lost(why) => return lost(folder, why),
    };
    if paths.iter().any(|p| p.ends_with(".git/HEAD")) {
        folder.send(Job::Rescope);
    }
    if let Some(config) = paths.iter().find(|p| folder.is_config_file(p)) {
        on_config(folder, config);
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
