//! Where the language server's file events come from (docs/lsp.md, "File events"): the
//! client's watcher when it declares one, else the server's own watch, as `fileWatcher` chooses;
//! either way a save checks a file changed outside the editor, and the server's watch ends with
//! its folder.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common;
use crate::lsp_e2e::{marker_repo, row, shape, summary, wait_for_state};

use common::lsp::{LspClient, TrustAnswer, WAIT, file_uri};
use common::write;
use serde_json::{Value, json};

fn client(root: &Path, trust: &Path, watching: bool, options: Value) -> LspClient {
    let mut c = LspClient::spawn(root, &trust.join("trust.json"), TrustAnswer::NotNow);
    c.watches_files = watching;
    let mut all = json!({"trusted": true});
    all.as_object_mut()
        .unwrap()
        .extend(options.as_object().unwrap().clone());
    c.initialize(all);
    c
}

/// Saves a.py (new content each time, from `version`) until a save's run checked b.py too (the
/// report, remembered before its diagnostics go out, checked two files); returns the version of
/// that save.
fn save_until_b_is_checked(c: &mut LspClient, mut version: i32) -> i32 {
    let deadline = Instant::now() + WAIT;
    loop {
        c.edit_and_save("a.py", version, &format!("x = {version}\n"));
        c.publication_of_version("a.py", version);
        if summary(c)["report"]["scope"]["files_checked"] == 2 {
            return version;
        }
        assert!(Instant::now() < deadline, "b.py was never checked");
        version += 1;
    }
}

/// A save after `b.py` appeared behind the editor's back: `b.py` is checked and recorded.
fn saves_check_a_file_changed_outside_the_editor(watching: bool) {
    let ws = marker_repo();
    let trust = tempfile::tempdir().unwrap();
    let mut c = client(ws.path(), trust.path(), watching, json!({}));
    let want = if watching { "client" } else { "server" };
    assert_eq!(c.file_events(), want);
    c.open("a.py");
    c.diagnostics("a.py");
    c.edit_and_save("a.py", 2, "x = 2\n");
    c.publication_of_version("a.py", 2);
    wait_for_state(ws.path(), |s| s.contains("a.py"));
    // A new file appears behind the editor's back (a script, a checkout, another editor). No
    // save or open says so; the scope follows events alone, so without them it would never
    // have b.py.
    write(ws.path(), "b.py", "y = 1\n");
    if watching {
        c.files_changed(&[("b.py", 1)]);
    }
    // The client's notification comes before the save, on the same stream; the server's watch
    // reports the file within moments, so this save or one soon after sees it.
    let version = save_until_b_is_checked(&mut c, 3);
    if watching {
        assert_eq!(version, 3, "the first save after the client's report");
    }
    assert_eq!(
        shape(&c.diagnostics("b.py")),
        vec![row("X1", 0, 0, 0, 0, "Lint")]
    );
    let report = summary(&mut c)["report"].clone();
    assert_eq!(report["scope"]["mode"], "auto", "{report}");
    assert_eq!(report["scope"]["files_checked"], 2, "{report}");
    wait_for_state(ws.path(), |s| s.contains("b.py"));
    c.shutdown();
}

#[test]
fn a_watching_client_reports_a_file_changed_outside_the_editor() {
    saves_check_a_file_changed_outside_the_editor(true);
}

/// Neovim on Linux declares no file watching: the server watches the folder itself.
#[test]
fn without_a_client_watcher_the_servers_own_watch_reports_a_file_changed_outside_the_editor() {
    saves_check_a_file_changed_outside_the_editor(false);
}

#[test]
fn the_file_watcher_option_chooses_where_events_come_from() {
    let ws = marker_repo();
    let trust = tempfile::tempdir().unwrap();
    let cases = [
        (true, json!({}), "client"),
        (false, json!({}), "server"),
        (true, json!({"fileWatcher": "server"}), "server"),
        (true, json!({"fileWatcher": "client"}), "client"),
        // Asked for the client's, which has none: no events (a whole status per save).
        (false, json!({"fileWatcher": "client"}), "off"),
        (true, json!({"fileWatcher": "off"}), "off"),
        (false, json!({"fileWatcher": "auto"}), "server"),
    ];
    for (watching, options, want) in cases {
        let mut c = client(ws.path(), trust.path(), watching, options.clone());
        assert_eq!(c.file_events(), want, "watching {watching}, {options}");
        let server_watch = usize::from(want == "server");
        assert_eq!(c.inotify_descriptors(), server_watch, "{options}");
        // Only the client's own watching is registered with it, and only when asked.
        let registered = c.all_messages().into_iter().find(|m| {
            m["method"] == "client/registerCapability"
                && m["params"]["registrations"][0]["method"] == "workspace/didChangeWatchedFiles"
        });
        let globs: Vec<String> = registered
            .iter()
            .flat_map(|m| {
                m["params"]["registrations"][0]["registerOptions"]["watchers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|w| w["globPattern"].as_str().unwrap().to_owned())
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(
            globs.contains(&"**/*".to_owned()),
            want == "client",
            "{options}: {globs:?}"
        );
        c.shutdown();
    }
}

/// A client that declares file watching but refuses the registration gets the server's watch.
#[test]
fn a_refused_registration_falls_back_to_the_servers_watch() {
    let ws = marker_repo();
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(
        ws.path(),
        &trust.path().join("trust.json"),
        TrustAnswer::NotNow,
    );
    c.refuses_registration
        .store(true, std::sync::atomic::Ordering::SeqCst);
    c.initialize(json!({"trusted": true}));
    assert_eq!(c.file_events(), "server");
    assert_eq!(c.inotify_descriptors(), 1);
    c.shutdown();
}

#[test]
fn the_servers_watch_ends_with_its_folder() {
    let ws = marker_repo();
    let trust = tempfile::tempdir().unwrap();
    let mut c = client(ws.path(), trust.path(), false, json!({}));
    assert_eq!(c.file_events(), "server");
    assert_eq!(c.inotify_descriptors(), 1);
    c.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [], "removed": [{"uri": file_uri(ws.path()), "name": "ws"}]}}),
    );
    // The watch's own event thread closes the descriptor as it ends, just after the removal.
    let deadline = Instant::now() + WAIT;
    while c.inotify_descriptors() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        c.inotify_descriptors(),
        0,
        "the watch's descriptor is closed"
    );
    c.shutdown();
}

/// Past `maxWatchedFolders` (as past the system's inotify limit) the server keeps no watch:
/// saves take a whole `git status`, and the log, `qgates.summary` and `qgates status` say so.
#[test]
fn a_lost_watch_falls_back_to_a_whole_status_and_says_so() {
    let ws = marker_repo();
    let trust = tempfile::tempdir().unwrap();
    // The root and tools/: two folders.
    let mut c = client(
        ws.path(),
        trust.path(),
        false,
        json!({"maxWatchedFolders": 1}),
    );
    let events = c.file_events();
    assert!(
        events.starts_with("lost (") && events.contains("more than 1 folders"),
        "{events}"
    );
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_qgates"))
        .arg("status")
        .arg(ws.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    let pid = c.child.as_ref().unwrap().id();
    assert!(
        text.contains(&format!(
            "file watch: the language server (pid {pid}) lost it"
        )),
        "{text}"
    );
    // Still correct, at a whole status per save: the first save sees a file written outside.
    c.open("a.py");
    c.diagnostics("a.py");
    write(ws.path(), "b.py", "y = 1\n");
    assert_eq!(save_until_b_is_checked(&mut c, 2), 2);
    c.shutdown();
    let note = ws.path().join(format!(".qgates/servers/{pid}.json"));
    assert!(!note.exists(), "the note goes with the server");
}
