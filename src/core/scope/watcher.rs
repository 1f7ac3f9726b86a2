//! The server's own watch over a folder's working tree, for a client that cannot report file
//! changes (Neovim on Linux, for one): it reports the paths a client's file watcher would, so
//! the `ScopeTracker` follows events either way (docs/lsp.md, "File events").
//!
//! inotify has no recursive watch, so each folder gets its own: every folder of the project walk
//! (ignored folders, `.git`, `.qgates` and tools' folders such as `node_modules` or a virtual
//! environment left out, `scope::foreign_dirs`) and each folder as it appears. What was written
//! in a new folder before its watch is covered by the folder's own event: the tracker looks
//! again at everything below a reported folder. A changed `.gitignore` has the tree walked
//! again (a folder it now ignores is let go, one it no longer ignores is watched), and a folder
//! that turns out to be a tool's (its marker appears after it: a virtual environment's
//! `pyvenv.cfg`) is let go. `.git` itself is watched without its subfolders, for `HEAD`.
//!
//! When the system's watch limit runs out, the folder has more folders than the limit given, or
//! the kernel drops events (its queue overflowed), the watch can no longer vouch for every
//! change: it reports `Observed::Lost` once and nothing after.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use super::foreign_dirs::{is_foreign, is_marker};

/// What the watch reports, on its own thread.
#[derive(Debug)]
pub enum Observed<'a> {
    /// Paths created, written, removed or renamed (files or folders; `.git/HEAD` among them).
    Changed(&'a [PathBuf]),
    /// The watch can no longer vouch for every change, and why; nothing is reported after it.
    Lost(String),
}

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
    /// Watches `root`, at most `limit` folders of it, and tells `report` what changes. An error
    /// says why no watch could start.
    pub fn start(
        root: &Path,
        limit: usize,
        report: impl Fn(Observed) + Send + 'static,
    ) -> Result<FolderWatch, String> {
        let (tx, rx) = mpsc::channel();
        let events = tx.clone();
        let watcher = notify::recommended_watcher(move |e| {
            let _ = events.send(Message::Event(e));
        })
        .map_err(|e| format!("the file watcher could not start: {e}"))?;
        let mut watch = Watch {
            root: root.to_path_buf(),
            watcher,
            watched: HashSet::new(),
            limit,
            lost: false,
        };
        watch.watch_tree(root)?;
        let git = root.join(".git");
        if git.is_dir() {
            watch
                .watcher
                .watch(&git, RecursiveMode::NonRecursive)
                .map_err(|e| format!("{} could not be watched: {e}", git.display()))?;
        }
        let thread = std::thread::Builder::new()
            .name("qgates-watch".into())
            .spawn(move || watch.serve(&rx, &report))
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
    root: PathBuf,
    watcher: RecommendedWatcher,
    /// The folders watched (`.git` aside).
    watched: HashSet<PathBuf>,
    limit: usize,
    lost: bool,
}

impl Watch {
    fn serve(mut self, rx: &mpsc::Receiver<Message>, report: &dyn Fn(Observed)) {
        while let Ok(Message::Event(event)) = rx.recv() {
            if self.lost {
                continue;
            }
            let why = match event {
                Ok(event) if event.need_rescan() => {
                    Some("the system dropped file events (its queue overflowed)".to_string())
                }
                Ok(event) => self.handle(event, report).err(),
                Err(e) => Some(format!("the file watcher failed: {e}")),
            };
            if let Some(why) = why {
                self.lost = true;
                report(Observed::Lost(why));
            }
        }
    }

    /// Reports the event's paths, and follows what they change in the set of folders to watch:
    /// a folder that appeared is watched, one that went away or became a tool's (a marker file
    /// appeared in it) is not, and a changed `.gitignore` has the tree walked again.
    fn handle(&mut self, event: Event, report: &dyn Fn(Observed)) -> Result<(), String> {
        // Reads change nothing, and reporting them would report every file git's status reads.
        if matches!(event.kind, EventKind::Access(_)) {
            return Ok(());
        }
        report(Observed::Changed(&event.paths));
        for path in &event.paths {
            let Some(name) = path.file_name() else {
                continue;
            };
            if path
                .strip_prefix(&self.root)
                .is_ok_and(|p| p.starts_with(".git"))
            {
                continue;
            } else if name == ".gitignore" {
                self.rewalk()?;
            } else if is_marker(name) {
                if let Some(folder) = path.parent().filter(|f| *f != self.root) {
                    self.unwatch_below(folder);
                }
            } else if path.is_dir() && !self.watched.contains(path) && enters(path, name) {
                self.watch_tree(path)?;
            } else if self.watched.contains(path) {
                // Removed or moved away: the system dropped the watches below it itself.
                self.watched.retain(|w| !w.starts_with(path));
            }
        }
        Ok(())
    }

    /// Walks the whole tree again: folders now ignored are let go, folders no longer ignored
    /// are watched.
    fn rewalk(&mut self) -> Result<(), String> {
        let wanted: HashSet<PathBuf> = self.watch_tree(&self.root.clone())?.into_iter().collect();
        let gone: Vec<PathBuf> = self.watched.difference(&wanted).cloned().collect();
        for folder in gone {
            let _ = self.watcher.unwatch(&folder);
            self.watched.remove(&folder);
        }
        Ok(())
    }

    /// Lets go of `top` and every folder below it.
    fn unwatch_below(&mut self, top: &Path) {
        let below: Vec<PathBuf> = self
            .watched
            .iter()
            .filter(|w| w.starts_with(top))
            .cloned()
            .collect();
        for folder in below {
            let _ = self.watcher.unwatch(&folder);
            self.watched.remove(&folder);
        }
    }

    /// Watches `top` and every folder below it that is not ignored, as `.gitignore` files say
    /// now, and returns them all. Each folder is watched as the walk comes to it, before its
    /// entries are read: a folder made in it meanwhile is either read or reported.
    fn watch_tree(&mut self, top: &Path) -> Result<Vec<PathBuf>, String> {
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
        let mut folders = Vec::new();
        for entry in walk.flatten() {
            if entry.file_type().is_some_and(|t| t.is_dir()) {
                let path = entry.into_path();
                self.watch(&path)?;
                folders.push(path);
            }
        }
        Ok(folders)
    }

    fn watch(&mut self, path: &Path) -> Result<(), String> {
        if self.watched.contains(path) {
            return Ok(());
        }
        if self.watched.len() >= self.limit {
            return Err(format!(
                "the folder has more than {} folders to watch, the limit set",
                self.limit
            ));
        }
        match self.watcher.watch(path, RecursiveMode::NonRecursive) {
            Ok(()) => {
                self.watched.insert(path.to_path_buf());
                Ok(())
            }
            Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => Err(format!(
                "the system's limit of watched folders is reached after {} folders \
                 (raise fs.inotify.max_user_watches)",
                self.watched.len()
            )),
            // Gone since the walk saw it: its removal is an event of its parent.
            Err(_) => Ok(()),
        }
    }
}

/// Whether the watch enters a folder below the root: not `.git`, `.qgates` or a tool's folder.
fn enters(dir: &Path, name: &OsStr) -> bool {
    name != ".git" && name != ".qgates" && !is_foreign(dir, name)
}
