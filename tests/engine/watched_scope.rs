//! The `auto` scope kept current with the server's own watch (`scope::watcher`) as the only
//! source of events, against a fresh resolution: the same random edits, deletions, stages,
//! commits, checkouts, stashes, ignore rules and runs as `scope_tracker`, made by other
//! processes, and nothing told to the tracker but what the watch saw.

use std::path::Path;
use std::sync::{Arc, mpsc};
use std::time::{Duration, SystemTime};

use proptest::prelude::*;
use qgates::core::scope::tracker::ScopeTracker;
use qgates::core::scope::watcher::{FolderWatch, Observed};
use qgates::core::scope::{ScopeRequest, resolve};

use crate::folder_watch::ONE_WATCH_AT_A_TIME;
use crate::scope_tracker::{apply, config, op, repository};

/// What the test hears from the watch: a sentinel file it saw, or the watch lost.
enum Heard {
    Sentinel(String),
    Lost(String),
}

/// Writes an ignored sentinel file and waits until the watch reports it. The system delivers a
/// watch's events in order, and the tracker is told of each before the next is read, so every
/// change made before the sentinel has reached the tracker by then.
fn settle(root: &Path, heard: &mpsc::Receiver<Heard>, n: usize) -> Result<(), String> {
    let name = format!("sentinel-{n}");
    std::fs::write(root.join(&name), "").unwrap();
    loop {
        match heard.recv_timeout(Duration::from_secs(20)) {
            Ok(Heard::Sentinel(s)) if s == name => return Ok(()),
            Ok(Heard::Sentinel(_)) => {}
            Ok(Heard::Lost(why)) => return Err(format!("the watch was lost: {why}")),
            Err(_) => return Err(format!("the watch never reported {name}")),
        }
    }
}

/// A tracker fed by a watch of `root` alone, and what the test hears from the watch: the
/// sentinel files `settle` writes (git ignores them), or the watch lost.
fn watched(root: &Path) -> (Arc<ScopeTracker>, mpsc::Receiver<Heard>, FolderWatch) {
    std::fs::write(root.join(".git/info/exclude"), "sentinel-*\n").unwrap();
    let tracker = Arc::new(ScopeTracker::new(root.to_path_buf(), true));
    let (tx, heard) = mpsc::channel();
    let fed = tracker.clone();
    let watch = FolderWatch::start(root, usize::MAX, move |o| {
        fed.observe(&o);
        let news = match &o {
            Observed::Changed(paths) => paths
                .iter()
                .filter_map(|p| p.file_name()?.to_str())
                .filter(|name| name.starts_with("sentinel-"))
                .map(|name| Heard::Sentinel(name.to_owned()))
                .collect(),
            Observed::Lost(why) => vec![Heard::Lost(why.clone())],
        };
        for n in news {
            let _ = tx.send(n);
        }
    })
    .unwrap();
    (tracker, heard, watch)
}

/// Dates the index back, as one written a while ago: a fresh one is "racily clean" and has the
/// tracker take the whole status, which would not test the watch's events.
fn age_index(root: &Path) {
    if let Ok(index) = std::fs::File::options()
        .write(true)
        .open(root.join(".git/index"))
    {
        let _ = index.set_modified(SystemTime::now() - Duration::from_secs(10));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn the_scope_followed_through_the_watch_equals_a_fresh_resolution(
        ops in prop::collection::vec(op(), 1..24),
        aged in any::<bool>(),
    ) {
        let _alone = ONE_WATCH_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let (_tmp, root) = repository();
        let config = config();
        let (tracker, heard, watch) = watched(&root);
        let first = tracker.current(&config).unwrap();
        prop_assert_eq!(&first, &resolve(&root, &config, &ScopeRequest::Auto).unwrap());
        for (step, op) in ops.iter().enumerate() {
            apply(&root, op);
            if aged {
                age_index(&root);
            }
            settle(&root, &heard, step).map_err(TestCaseError::fail)?;
            let followed = tracker.current(&config).unwrap();
            let fresh = resolve(&root, &config, &ScopeRequest::Auto).unwrap();
            prop_assert_eq!(
                &followed, &fresh,
                "after step {} ({:?}) of {:?}", step, op, ops
            );
        }
        drop(watch);
    }
}

/// A file created and deleted between two answers leaves nothing behind, and one deleted and
/// created again is seen with its new content.
#[test]
fn a_file_created_and_deleted_between_answers_is_not_in_the_scope() {
    let _alone = ONE_WATCH_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let (_tmp, root) = repository();
    let config = config();
    let (tracker, heard, _watch) = watched(&root);
    assert!(tracker.current(&config).unwrap().files.is_empty());
    std::fs::write(root.join("tmp.py"), "t = 1\n").unwrap();
    std::fs::remove_file(root.join("tmp.py")).unwrap();
    age_index(&root);
    settle(&root, &heard, 0).unwrap();
    assert!(tracker.current(&config).unwrap().files.is_empty());
    std::fs::remove_file(root.join("a.py")).unwrap();
    std::fs::write(root.join("a.py"), "a = 2\n").unwrap();
    settle(&root, &heard, 1).unwrap();
    assert_eq!(tracker.current(&config).unwrap().files, ["a.py"]);
    assert_eq!(
        tracker.current(&config).unwrap(),
        resolve(&root, &config, &ScopeRequest::Auto).unwrap()
    );
}
