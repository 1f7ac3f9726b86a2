//! The server's own file watch (`scope::watcher`): with it as the only source of events, the
//! tracked `auto` scope sees edits made by other processes and files in folders created after
//! the watch started.

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::git;
use qgates::core::config::{Config, ConfigSource, DEFAULT_CONFIG, parse_config};
use qgates::core::scope::tracker::ScopeTracker;
use qgates::core::scope::watcher::{FolderWatch, Observed};
use qgates::core::scope::{ScopeRequest, resolve};

/// Taken by every test of this binary that starts a watch: the count of the process's inotify
/// descriptors below is only this test's while no other watch runs.
pub(crate) static ONE_WATCH_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn repository() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    std::fs::create_dir_all(root.join("d")).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    std::fs::write(root.join(".gitignore"), ".qgates/\n").unwrap();
    std::fs::write(root.join("a.py"), "a = 1\n").unwrap();
    std::fs::write(root.join("d/b.py"), "b = 1\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "initial"]);
    (tmp, root)
}

/// The tracker's scope once it lists `want` (events arrive on the watch's thread), or a
/// failure after 20 s.
fn wait_for(tracker: &ScopeTracker, config: &Config, want: &[&str]) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let files = tracker.current(config).unwrap().files;
        if files == want || Instant::now() > deadline {
            return files;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn shell(root: &Path, script: &str) {
    let ok = std::process::Command::new("sh")
        .args(["-c", script])
        .current_dir(root)
        .status()
        .unwrap()
        .success();
    assert!(ok, "{script}");
}

#[test]
fn the_watch_alone_keeps_the_scope_current() {
    let _alone = ONE_WATCH_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let (_tmp, root) = repository();
    let config = parse_config(DEFAULT_CONFIG, ConfigSource::Embedded).unwrap();
    // A tracker that answers from events alone: without the watch it would see none of the
    // changes below (`an_unreported_change_is_not_seen_and_a_reported_one_is`).
    let tracker = Arc::new(ScopeTracker::new(root.clone(), true));
    let inotify_before = common::inotify_descriptors("self");
    let (lost, lost_rx) = std::sync::mpsc::channel();
    let fed = tracker.clone();
    let watch = FolderWatch::start(&root, usize::MAX, move |o| {
        if let Observed::Lost(why) = &o {
            let _ = lost.send(why.clone());
        }
        fed.observe(&o);
    })
    .expect("the watch starts");
    assert!(tracker.current(&config).unwrap().files.is_empty());

    shell(&root, "echo 'a = 2' > a.py");
    assert_eq!(wait_for(&tracker, &config, &["a.py"]), ["a.py"]);

    // A folder and its file, written before the watch can have seen the folder.
    shell(&root, "mkdir -p new/deep && echo 'x = 1' > new/deep/x.py");
    let want = ["a.py", "new/deep/x.py"];
    assert_eq!(wait_for(&tracker, &config, &want), want);

    shell(&root, "echo 'y = 1' > new/deep/y.py && rm d/b.py");
    let want = ["a.py", "new/deep/x.py", "new/deep/y.py"];
    assert_eq!(wait_for(&tracker, &config, &want), want);
    assert_eq!(
        tracker.current(&config).unwrap(),
        resolve(&root, &config, &ScopeRequest::Auto).unwrap()
    );

    // Committed, the new folder's files are tracked: an edit of one is seen only through the
    // folder's own watch. The index is dated back so that the tracker trusts it (it is not
    // "racily clean") and re-reads only the paths reported to it.
    shell(
        &root,
        "git add -A && git commit -q -m more && touch -d '-10 seconds' .git/index",
    );
    assert_eq!(wait_for(&tracker, &config, &[]), Vec::<String>::new());
    shell(&root, "echo 'x = 2' > new/deep/x.py");
    assert_eq!(
        wait_for(&tracker, &config, &["new/deep/x.py"]),
        ["new/deep/x.py"]
    );

    assert_eq!(common::inotify_descriptors("self"), inotify_before + 1);
    drop(watch);
    assert_eq!(lost_rx.try_recv().ok(), None, "the watch was not lost");
    // The watcher's own event thread closes the descriptor as it ends, just after the drop.
    let deadline = Instant::now() + Duration::from_secs(10);
    while common::inotify_descriptors("self") != inotify_before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        common::inotify_descriptors("self"),
        inotify_before,
        "the watch's descriptor is closed"
    );
}

/// Nothing below `.git` (but its own entries, for `HEAD`), `.qgates`, tools' folders or what
/// `.gitignore` excludes is watched, whether the folder was there before the watch or appeared
/// after: writing there reports nothing.
#[test]
fn the_watch_leaves_out_ignored_and_tools_folders() {
    let _alone = ONE_WATCH_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let (_tmp, root) = repository();
    std::fs::write(root.join(".gitignore"), ".qgates/\nbuild/\nsentinel-*\n").unwrap();
    let before = "mkdir -p node_modules/pkg .venv build/out target .qgates/runs \
                  && touch .venv/pyvenv.cfg target/CACHEDIR.TAG";
    shell(&root, before);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (sentinels, sentinel_rx) = std::sync::mpsc::channel();
    let record = seen.clone();
    let _watch = FolderWatch::start(&root, usize::MAX, move |o| {
        if let Observed::Changed(paths) = &o {
            for p in paths.iter() {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                if name.starts_with("sentinel-") {
                    let _ = sentinels.send(name);
                }
                record.lock().unwrap().push(p.clone());
            }
        }
    })
    .expect("the watch starts");
    // Folders that appear while the watch runs: each is reported as it appears, not entered.
    shell(
        &root,
        "mkdir -p d/node_modules/x d/venv2 build2 && touch d/venv2/pyvenv.cfg && echo /build2/ >> .gitignore",
    );
    let settle = |n: usize| {
        std::fs::write(root.join(format!("sentinel-{n}")), "").unwrap();
        let name = format!("sentinel-{n}");
        while sentinel_rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the sentinel")
            != name
        {}
    };
    settle(0);
    seen.lock().unwrap().clear();
    let inside = [
        "node_modules/pkg/index.js",
        ".venv/lib.py",
        "build/out/a.o",
        "target/debug.rlib",
        ".qgates/runs/log",
        "d/node_modules/x/y.js",
        "d/venv2/site.py",
        "build2/z.o",
    ];
    for rel in inside {
        std::fs::write(root.join(rel), "x").unwrap();
    }
    shell(&root, "git add -A && git commit -q -m objects");
    std::fs::write(root.join("d/b.py"), "b = 2\n").unwrap();
    settle(1);
    let seen: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|p| {
            p.strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    for rel in inside {
        assert!(
            !seen.iter().any(|s| s == rel),
            "{rel} was reported: {seen:?}"
        );
    }
    assert!(
        !seen.iter().any(|s| s.starts_with(".git/objects/")),
        "{seen:?}"
    );
    assert!(seen.iter().any(|s| s == "d/b.py"), "{seen:?}");
    assert!(seen.iter().any(|s| s == ".git/index"), "{seen:?}");
}
