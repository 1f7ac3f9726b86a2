//! The server's own watch over a folder's working tree, for a client that cannot report file
//! changes (Neovim on Linux, for one): it tells the `ScopeTracker` the paths a client's file
//! watcher would, so the `auto` scope follows events either way.
//!
//! inotify has no recursive watch, so each folder gets its own: every folder of the project walk
//! (ignored folders, `.git`, `.qgates` and tools' folders such as `node_modules` or a virtual
//! environment left out, `scope::foreign_dirs`) and each folder as it appears, whose files are
//! reported then, since they may have been written before its watch. When the system's watch
//! limit runs out or the kernel drops events (its queue overflowed), the watch can no longer
//! vouch for every change: the tracker goes back to a full status per answer for this folder and
//! `on_lost` is told why, once.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;

use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use super::foreign_dirs::is_foreign;
use super::tracker::ScopeTracker;

/// What the watch's thread is sent: the watcher's events, or the end.
enum Message {
    Event(notify::Result<Event>),
    Stop,
}

/// A running watch; dropping it stops the watch and its thread, and closes its descriptors.
pub struct FolderWatch {
    stop: mpsc::Sender<Message>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FolderWatch {
    /// Watches `root` and reports its changes to `tracker`, which then follows events. An error
    /// says why no watch could start (the tracker is left as it was).
    pub fn start(
        root: &Path,
        tracker: Arc<ScopeTracker>,
        on_lost: impl Fn(String) + Send + 'static,
    ) -> Result<FolderWatch, String> {
        let (tx, rx) = mpsc::channel();
        let events = tx.clone();
        let watcher = notify::recommended_watcher(move |e| {
            let _ = events.send(Message::Event(e));
        })
        .map_err(|e| format!("the file watcher could not start: {e}"))?;
        let mut watch = Watch {
            watcher,
            watched: HashSet::new(),
            tracker,
            lost: false,
        };
        watch.add_tree(root, false)?;
        watch.tracker.follow_events(true);
        let thread = std::thread::Builder::new()
            .name("qgates-watch".into())
            .spawn(move || watch.serve(&rx, &on_lost))
            .map_err(|e| format!("the file watcher's thread could not start: {e}"))?;
        Ok(FolderWatch {
            stop: tx,
            thread: Some(thread),
        })
    }
}

impl Drop for FolderWatch {
    fn drop(&mut self) {
        let _ = self.stop.send(Message::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

struct Watch {
    watcher: RecommendedWatcher,
    watched: HashSet<PathBuf>,
    tracker: Arc<ScopeTracker>,
    lost: bool,
}

impl Watch {
    fn serve(mut self, rx: &mpsc::Receiver<Message>, on_lost: &dyn Fn(String)) {
        while let Ok(Message::Event(event)) = rx.recv() {
            if self.lost {
                continue;
            }
            let why = match event {
                Ok(event) if event.need_rescan() => {
                    Some("the system dropped file events (its queue overflowed)".to_string())
                }
                Ok(event) => self.handle(event).err(),
                Err(e) => Some(format!("the file watcher failed: {e}")),
            };
            if let Some(why) = why {
                self.lost = true;
                self.tracker.follow_events(false);
                on_lost(why);
            }
        }
    }

    /// Reports the event's paths; a folder that appeared is watched, and its files reported.
    fn handle(&mut self, event: Event) -> Result<(), String> {
        // Reads change nothing, and reporting them would report every file git's status reads.
        if matches!(event.kind, EventKind::Access(_)) {
            return Ok(());
        }
        self.tracker
            .changed(event.paths.iter().map(PathBuf::as_path));
        for path in &event.paths {
            let enters = || path.file_name().is_some_and(|name| enters(path, name));
            if path.is_dir() && !self.watched.contains(path) && enters() {
                self.add_tree(path, true)?;
            } else if self.watched.remove(path) {
                // A folder removed or moved away: the system dropped its watches below it too.
                self.watched.retain(|w| !w.starts_with(path));
            }
        }
        Ok(())
    }

    /// Watches `top` and every folder below it that is not ignored; with `report`, tells the
    /// tracker of every file found (written before the watch could see it).
    fn add_tree(&mut self, top: &Path, report: bool) -> Result<(), String> {
        // `top` itself is entered whatever it holds: the root holds `.git`.
        let walk = ignore::WalkBuilder::new(top)
            .hidden(false)
            .parents(true)
            .require_git(false)
            .filter_entry(|e| {
                e.depth() == 0
                    || !e.file_type().is_some_and(|t| t.is_dir())
                    || enters(e.path(), e.file_name())
            })
            .build();
        for entry in walk.flatten() {
            let path = entry.path();
            if !entry.file_type().is_some_and(|t| t.is_dir()) {
                if report {
                    self.tracker.changed([path]);
                }
                continue;
            }
            if self.watched.contains(path) {
                continue;
            }
            match self.watcher.watch(path, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.watched.insert(path.to_path_buf());
                }
                Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => {
                    return Err(format!(
                        "the system's limit of watched folders is reached after {} folders \
                         (raise fs.inotify.max_user_watches)",
                        self.watched.len()
                    ));
                }
                // Gone since the walk saw it: its removal is an event of its parent.
                Err(_) => {}
            }
        }
        Ok(())
    }
}

/// Whether the watch enters a folder below the root: not `.git`, `.qgates` or a tool's folder.
fn enters(dir: &Path, name: &OsStr) -> bool {
    name != ".git" && name != ".qgates" && !is_foreign(dir, name)
}
