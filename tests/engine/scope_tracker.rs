//! The `auto` scope kept current from file events (`ScopeTracker`) against a fresh resolution,
//! after random edits, deletions, stages, commits, checkouts, stashes, ignore rules and runs
//! that move the baseline, on a real repository made with the `git` CLI. The events are what a
//! file watcher reports: every path whose content changed on disk, or (`folders`) a deleted
//! folder as one path.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{git, git_cmd};
use proptest::prelude::*;
use qgates::core::config::{Config, ConfigSource, DEFAULT_CONFIG, parse_config};
use qgates::core::scope::baseline::StateStore;
use qgates::core::scope::tracker::ScopeTracker;
use qgates::core::scope::{ScopeRequest, resolve};

const FILES: [&str; 8] = [
    "a.py",
    "b.py",
    "d/c.py",
    "d/e/f.py",
    "g.txt",
    "h.log",
    "x/y.py",
    "d/e/new.py",
];

#[derive(Debug, Clone)]
pub(crate) enum Op {
    Write(usize, u8),
    Delete(usize),
    RemoveFolder(bool),
    Stage(usize),
    StageAll,
    Unstage(usize),
    Commit,
    Switch(bool),
    Stash,
    StashPop,
    Ignore(usize),
    /// A green run: the baseline moves to HEAD and no file is failed.
    Green,
    /// A red run: the file is recorded as failed.
    Failed(usize),
}

pub(crate) fn op() -> impl Strategy<Value = Op> {
    let file = 0..FILES.len();
    prop_oneof![
        6 => (file.clone(), 0u8..3).prop_map(|(f, v)| Op::Write(f, v)),
        2 => file.clone().prop_map(Op::Delete),
        1 => any::<bool>().prop_map(Op::RemoveFolder),
        3 => file.clone().prop_map(Op::Stage),
        1 => Just(Op::StageAll),
        1 => file.clone().prop_map(Op::Unstage),
        2 => Just(Op::Commit),
        1 => any::<bool>().prop_map(Op::Switch),
        1 => Just(Op::Stash),
        1 => Just(Op::StashPop),
        1 => file.clone().prop_map(Op::Ignore),
        2 => Just(Op::Green),
        1 => file.prop_map(Op::Failed),
    ]
}

/// Runs git, failing quietly: a switch over conflicting changes or a pop of no stash is refused,
/// as it would be for a user.
fn try_git(dir: &Path, args: &[&str]) {
    git_cmd(dir, args).output().expect("run git");
}

pub(crate) fn apply(root: &Path, op: &Op) {
    let path = |f: usize| root.join(FILES[f]);
    match op {
        Op::Write(f, v) => {
            let p = path(*f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("x = {v}\n")).unwrap();
        }
        Op::Delete(f) => {
            let _ = std::fs::remove_file(path(*f));
        }
        Op::RemoveFolder(inner) => {
            let _ = std::fs::remove_dir_all(root.join(if *inner { "d/e" } else { "x" }));
        }
        Op::Stage(f) => try_git(root, &["add", "-A", "--", FILES[*f]]),
        Op::StageAll => git(root, &["add", "-A"]).truncate(0),
        Op::Unstage(f) => try_git(root, &["reset", "-q", "--", FILES[*f]]),
        Op::Commit => try_git(root, &["commit", "-q", "-m", "change"]),
        Op::Switch(other) => {
            let branch = if *other { "topic" } else { "main" };
            if *other {
                try_git(root, &["branch", "topic"]);
            }
            try_git(root, &["switch", "-q", branch]);
        }
        Op::Stash => try_git(root, &["stash", "-q", "-u"]),
        Op::StashPop => try_git(root, &["stash", "pop", "-q"]),
        Op::Ignore(f) => {
            let mut rules = std::fs::read_to_string(root.join(".gitignore")).unwrap_or_default();
            rules.push_str(FILES[*f]);
            rules.push('\n');
            std::fs::write(root.join(".gitignore"), rules).unwrap();
        }
        Op::Green => {
            let head = git(root, &["rev-parse", "HEAD"]);
            let branch = current_branch(root);
            StateStore::new(root)
                .update(|s| {
                    let entry = s.branches.entry(branch).or_default();
                    entry.baseline_sha = Some(head);
                    entry.failed_files.clear();
                })
                .unwrap();
        }
        Op::Failed(f) => {
            let branch = current_branch(root);
            StateStore::new(root)
                .update(|s| {
                    let entry = s.branches.entry(branch).or_default();
                    entry.failed_files.push(FILES[*f].to_string());
                    entry.failed_files.sort();
                    entry.failed_files.dedup();
                })
                .unwrap();
        }
    }
}

fn current_branch(root: &Path) -> String {
    let name = git(root, &["branch", "--show-current"]);
    if name.is_empty() {
        "(detached HEAD)".to_string()
    } else {
        name
    }
}

/// Every file of the working tree (`.git` aside) with its content: what a watcher sees.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if entry.file_name() == ".git" {
                continue;
            }
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, &mut out);
    out
}

/// The paths a watcher reports between two snapshots; with `folders`, a folder that is gone
/// is reported as itself rather than file by file (as VS Code reports a deleted folder).
fn events(
    root: &Path,
    before: &BTreeMap<PathBuf, Vec<u8>>,
    after: &BTreeMap<PathBuf, Vec<u8>>,
    folders: bool,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for (path, content) in before {
        if after.get(path) != Some(content) {
            out.push(path.clone());
        }
    }
    out.extend(after.keys().filter(|p| !before.contains_key(*p)).cloned());
    if folders {
        out = out
            .into_iter()
            .map(|p| {
                // The highest folder below the root that no longer exists.
                let gone = p
                    .ancestors()
                    .filter(|a| a.starts_with(root) && *a != root && !a.exists())
                    .last()
                    .map(Path::to_path_buf);
                gone.unwrap_or(p)
            })
            .collect();
        out.sort();
        out.dedup();
    }
    out
}

pub(crate) fn config() -> Config {
    parse_config(DEFAULT_CONFIG, ConfigSource::Embedded).expect("the default configuration")
}

pub(crate) fn repository() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    std::fs::create_dir(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    std::fs::write(root.join(".gitignore"), "*.log\n.qgates/\n").unwrap();
    std::fs::write(root.join("a.py"), "a = 1\n").unwrap();
    std::fs::create_dir_all(root.join("d/e")).unwrap();
    std::fs::write(root.join("d/e/f.py"), "f = 1\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "initial"]);
    (tmp, root)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn the_followed_scope_equals_a_fresh_resolution(
        ops in prop::collection::vec(op(), 1..24),
        folders in any::<bool>(),
    ) {
        let (_tmp, root) = repository();
        let config = config();
        let tracker = ScopeTracker::new(root.clone(), true);
        let first = tracker.current(&config).unwrap();
        prop_assert_eq!(&first, &resolve(&root, &config, &ScopeRequest::Auto).unwrap());
        for (step, op) in ops.iter().enumerate() {
            let before = snapshot(&root);
            apply(&root, op);
            let after = snapshot(&root);
            let changed = events(&root, &before, &after, folders);
            tracker.changed(changed.iter().map(PathBuf::as_path));
            let followed = tracker.current(&config).unwrap();
            let fresh = resolve(&root, &config, &ScopeRequest::Auto).unwrap();
            prop_assert_eq!(
                &followed, &fresh,
                "after step {} ({:?}) of {:?}, events {:?}", step, op, ops, changed
            );
        }
    }
}

/// Without events a change on disk stays unseen: the tracker really answers from what it was
/// told (which is why a client that cannot watch files gets `follows_events = false`, which
/// resolves in full every time).
#[test]
fn an_unreported_change_is_not_seen_and_a_reported_one_is() {
    let (_tmp, root) = repository();
    let config = config();
    let following = ScopeTracker::new(root.clone(), true);
    let not_following = ScopeTracker::new(root.clone(), false);
    assert!(following.current(&config).unwrap().files.is_empty());
    std::fs::write(root.join("a.py"), "a = 2\n").unwrap();
    assert!(following.current(&config).unwrap().files.is_empty());
    assert_eq!(not_following.current(&config).unwrap().files, ["a.py"]);
    following.changed([root.join("a.py").as_path()]);
    assert_eq!(following.current(&config).unwrap().files, ["a.py"]);
}

/// A stage is seen without any event: the index's identity changed.
#[test]
fn a_stage_or_a_commit_is_seen_from_the_index_and_head() {
    let (_tmp, root) = repository();
    let config = config();
    let tracker = ScopeTracker::new(root.clone(), true);
    assert!(tracker.current(&config).unwrap().files.is_empty());
    std::fs::write(root.join("b.py"), "b = 1\n").unwrap();
    git(&root, &["add", "b.py"]);
    // The file was created unreported, but staging it rewrote the index.
    assert_eq!(tracker.current(&config).unwrap().files, ["b.py"]);
    git(&root, &["commit", "-q", "-m", "b"]);
    let after_commit = tracker.current(&config).unwrap();
    assert_eq!(
        after_commit,
        resolve(&root, &config, &ScopeRequest::Auto).unwrap()
    );
}

/// A commit whose index keeps an old modification time (a rewrite within the clock's tick, or a
/// tool that restores times) is still read anew: the whole status does not reuse the index the
/// repository handle read before.
#[test]
fn an_index_rewritten_with_an_old_time_is_read_anew() {
    let (_tmp, root) = repository();
    let config = config();
    let tracker = ScopeTracker::new(root.clone(), true);
    assert!(tracker.current(&config).unwrap().files.is_empty());
    std::fs::write(root.join("a.py"), "a = 2\n").unwrap();
    tracker.changed([root.join("a.py").as_path()]);
    assert_eq!(tracker.current(&config).unwrap().files, ["a.py"]);
    git(&root, &["commit", "-q", "-am", "a"]);
    let index = std::fs::File::options()
        .write(true)
        .open(root.join(".git/index"))
        .unwrap();
    index
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(10))
        .unwrap();
    let fresh = resolve(&root, &config, &ScopeRequest::Auto).unwrap();
    assert!(fresh.files.is_empty());
    assert_eq!(tracker.current(&config).unwrap(), fresh);
}
