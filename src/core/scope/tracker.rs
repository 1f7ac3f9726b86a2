//! The `auto` scope of a language server's folder, kept current from what the editor reports
//! (docs/design.md, "Following changes"), so a save costs what the saved file costs, not what a
//! `git status` of the repository does.
//!
//! The scope is taken from git once. After that, the working tree's status (the expensive half)
//! is brought up to date only for the paths reported changed: saved files and the client's
//! file-watcher events; the rest (HEAD, the baseline, failed files) is recomputed on every
//! answer. The whole status is taken again when what it rests on moves (HEAD, the base commit,
//! the index, an ignore or attributes file), or when more paths were reported than it costs.
//!
//! Its answer equals `scope::resolve(root, config, Auto)` as long as every change to the working
//! tree was reported (tests/engine/scope_tracker.rs compares the two after random edits, stages,
//! checkouts and stashes). A client that cannot report file changes gets a tracker that resolves
//! in full every time (`follows_events = false`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use gix::bstr::BString;

use crate::core::config::Config;
use crate::core::scope::git::{Repo, Status};
use crate::core::scope::watcher::Observed;
use crate::core::scope::{
    ChangePlan, ResolvedScope, ScopeError, ScopeRequest, git, outside_git, resolve,
};
use crate::core::workspace::paths::relative_posix;
use crate::core::workspace::stamp::Stamp;

/// Past this many reported paths, one full status is cheaper than a status per path (and a
/// client that reports thousands of changes at once is checking out or stashing).
const MAX_REPORTED: usize = 500;

/// Reported files whose change moves the status of other files: what git ignores, and how it
/// reads files (`.gitattributes`: line endings, filters).
const RULE_FILES: [&str; 2] = [".gitignore", ".gitattributes"];

pub struct ScopeTracker {
    root: PathBuf,
    follows_events: AtomicBool,
    reported: Mutex<Reported>,
    known: Mutex<Option<Known>>,
    /// The commit the last answer's changes were taken from (`None` inside: no commit yet).
    last_base: Mutex<Option<Option<String>>>,
}

#[derive(Default)]
struct Reported {
    paths: BTreeSet<String>,
    /// More than `MAX_REPORTED` paths.
    everything: bool,
}

/// The repository, and the status of the last answer with what it rested on.
struct Known {
    repo: Repo,
    basis: Basis,
    status: Status,
}

/// What a status rests on: while all of it holds, only reported paths need a new look.
#[derive(PartialEq, Eq)]
struct Basis {
    config_hash: String,
    base: Option<String>,
    head: Option<String>,
    branch: String,
    index: Option<IndexIdentity>,
    excludes: Option<Vec<u8>>,
}

/// The index file as it was read: its stamp, and the checksum git writes at its end. The stamp
/// alone could miss a rewrite within the file system's clock tick that reuses the inode; with
/// `index.skipHash` the checksum is zeros and such a recent stamp is not trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
struct IndexIdentity {
    stamp: Stamp,
    tail: [u8; TAIL],
}

/// SHA-256 repositories end their index with 32 bytes, SHA-1 ones with 20.
const TAIL: usize = 32;

impl IndexIdentity {
    fn read(path: &Path) -> Option<IndexIdentity> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = std::fs::File::open(path).ok()?;
        let meta = file.metadata().ok()?;
        let mut tail = [0u8; TAIL];
        file.seek(SeekFrom::Start(meta.len().saturating_sub(TAIL as u64)))
            .ok()?;
        let n = file.read(&mut tail).ok()?;
        tail[n..].fill(0);
        Some(IndexIdentity {
            stamp: Stamp::of(&meta),
            tail,
        })
    }

    /// Whether an equal identity proves the index unchanged.
    fn conclusive(&self) -> bool {
        self.tail[TAIL - 20..] != [0u8; 20]
            || self.stamp.trustworthy(
                std::time::SystemTime::now() - crate::core::workspace::stamp::RACY_MARGIN,
            )
    }
}

impl ScopeTracker {
    /// `follows_events`: every change to the working tree will be reported through `changed`
    /// (the client watches the workspace's files); otherwise each answer takes the whole status.
    pub fn new(root: PathBuf, follows_events: bool) -> ScopeTracker {
        ScopeTracker {
            root,
            follows_events: AtomicBool::new(follows_events),
            reported: Mutex::default(),
            known: Mutex::default(),
            last_base: Mutex::default(),
        }
    }

    /// Whether every change to the working tree is reported from now on (the client's file
    /// watcher was registered, or went away).
    pub fn follow_events(&self, on: bool) {
        self.follows_events.store(on, Ordering::Relaxed);
    }

    /// What the server's own watch saw (`FolderWatch`): changed paths are reported; a lost watch
    /// has every answer take the whole status again.
    pub fn observe(&self, observed: &Observed) {
        match observed {
            Observed::Changed(paths) => self.changed(paths.iter().map(PathBuf::as_path)),
            Observed::Lost(_) => self.follow_events(false),
        }
    }

    /// Paths that changed on disk (saved, created, deleted; files or folders). Paths outside the
    /// folder and inside `.git` are not the working tree's: HEAD and the index are watched by
    /// their stamps.
    pub fn changed<'p>(&self, paths: impl IntoIterator<Item = &'p Path>) {
        let Ok(mut reported) = self.reported.lock() else {
            return;
        };
        for path in paths {
            let Some(rel) = relative_posix(&self.root, path) else {
                continue;
            };
            if rel.is_empty() || rel == ".git" || rel.starts_with(".git/") {
                continue;
            }
            reported.paths.insert(rel);
        }
        if reported.paths.len() > MAX_REPORTED {
            reported.everything = true;
            reported.paths.clear();
        }
    }

    /// The commit the `auto` scope's changes are taken from (`None`: there is none, before the
    /// first commit or outside git), as the last answer found it; before the first answer, found
    /// without a status (which is what costs).
    pub fn base(&self, config: &Config) -> Result<Option<String>, ScopeError> {
        if let Some(known) = self.last_base.lock().ok().and_then(|b| b.clone()) {
            return Ok(known);
        }
        let Some(repo) = Repo::discover(&self.root).map_err(git)? else {
            return Ok(None);
        };
        Ok(ChangePlan::new(&repo, &self.root, config, "auto")?.base)
    }

    /// The `auto` scope now.
    pub fn current(&self, config: &Config) -> Result<ResolvedScope, ScopeError> {
        let scope = self.current_scope(config);
        if let (Ok(scope), Ok(mut base)) = (&scope, self.last_base.lock()) {
            *base = Some(scope.changed_since.clone());
        }
        scope
    }

    fn current_scope(&self, config: &Config) -> Result<ResolvedScope, ScopeError> {
        let reported = match self.reported.lock() {
            Ok(mut r) => std::mem::take(&mut *r),
            Err(_) => Reported {
                everything: true,
                ..Default::default()
            },
        };
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        if !self.follows_events.load(Ordering::Relaxed) {
            *known = None;
            return resolve(&self.root, config, &ScopeRequest::Auto);
        }
        self.update(&mut known, config, &reported).or_else(|e| {
            // The repository changed under the handle (re-created, say): start over once.
            *known = None;
            self.update(&mut known, config, &reported).map_err(|_| e)
        })
    }

    /// Outside a git repository the scope is a walk, and nothing is kept.
    fn update(
        &self,
        known: &mut Option<Known>,
        config: &Config,
        reported: &Reported,
    ) -> Result<ResolvedScope, ScopeError> {
        let (mut repo, previous) = match known.take() {
            Some(k) => (k.repo, Some((k.basis, k.status))),
            None => match Repo::discover(&self.root).map_err(git)? {
                Some(repo) => (repo, None),
                None => return Ok(outside_git(&self.root, config, "auto")),
            },
        };
        // The index and ignore rules are read before the status: a change during it is seen
        // by the next answer.
        let index = IndexIdentity::read(&repo.index_path());
        let excludes = std::fs::read(repo.exclude_path()).ok();
        let plan = ChangePlan::new(&repo, &self.root, config, "auto")?;
        let basis = Basis {
            config_hash: config.content_hash.clone(),
            base: plan.base.clone(),
            head: plan.target.head.clone(),
            branch: plan.target.branch.clone(),
            index,
            excludes,
        };
        let rules_changed = reported.paths.iter().any(|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            RULE_FILES.contains(&name)
        });
        let index_known = basis.index.as_ref().is_none_or(IndexIdentity::conclusive);
        let status = match previous {
            Some((was, mut status))
                if was == basis && index_known && !reported.everything && !rules_changed =>
            {
                if !reported.paths.is_empty() {
                    let paths: Vec<String> = reported.paths.iter().cloned().collect();
                    let fresh = repo.worktree_status(&paths).map_err(git)?;
                    let under: Vec<BString> =
                        paths.iter().map(|p| repo.repo_path(p).into()).collect();
                    status.worktree.replace_under(&under, fresh);
                }
                status
            }
            previous => {
                // gix keeps the index it read while the file's modification time holds, so a
                // rewrite that keeps it (within a clock tick, or with the time restored) would be
                // read as the old index: a whole status opens a kept repository anew.
                if previous.is_some() {
                    let Some(fresh) = Repo::discover(&self.root).map_err(git)? else {
                        return Ok(outside_git(&self.root, config, "auto"));
                    };
                    repo = fresh;
                }
                repo.status(plan.base.as_deref()).map_err(git)?
            }
        };
        let scope = plan.scope(status.changes(&repo));
        *known = Some(Known {
            repo,
            basis,
            status,
        });
        Ok(scope)
    }
}
