//! `qgates check --clean-room [REV]`: the gates run in a fresh git worktree of a commit, in a
//! private folder under the temporary folder (`TMPDIR`, one per test here), which is removed
//! afterwards — after a signal too, and after a kill by the next clean-room run. Real git
//! repositories in temporary folders, real ruff from the pinned tools.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{gate, git, path_with_tools, tool, write};
use serde_json::Value;

const RUFF_CONFIG: &str = "version: 1\ngates:\n  lint: { preset: ruff-lint }\n";

/// A gate that says where it runs (`started.<pid>` in `$MARK_DIR` holds its folder), then waits
/// for `$MARK_DIR/release` (at most 30 s).
const WAITING_TOOL: &str = "#!/bin/sh\npwd > \"$MARK_DIR/tmp.$$\"\nmv \"$MARK_DIR/tmp.$$\" \"$MARK_DIR/started.$$\"\ni=0\nwhile [ ! -e \"$MARK_DIR/release\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n";
const WAITING_CONFIG: &str = "version: 1\ngates:\n  wait:\n    command: [tools/wait.sh]\n    pass_files: false\n    parsing: { strategy: exit_code }\n";

/// A repository on `main` with `files` committed (tools' folders ignored).
fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    for (path, content) in files {
        write(ws.path(), path, content);
    }
    write(ws.path(), ".gitignore", ".qgates/\n.venv/\n");
    git(ws.path(), &["init", "-q", "-b", "main"]);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-qm", "start"]);
    ws
}

/// A repository whose one gate is the waiting tool.
fn waiting_repo() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    tool(ws.path(), "tools/wait.sh", WAITING_TOOL);
    write(ws.path(), "quality.yaml", WAITING_CONFIG);
    write(ws.path(), "a.py", "x = 1\n");
    write(ws.path(), ".gitignore", ".qgates/\n");
    git(ws.path(), &["init", "-q", "-b", "main"]);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-qm", "start"]);
    ws
}

/// `qgates` in `root` with its temporary folder in `tmp`.
fn qgates_tmp(root: &Path, tmp: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_qgates"));
    cmd.current_dir(root)
        .env("PATH", path_with_tools())
        .env("NO_COLOR", "1")
        .env("TMPDIR", tmp)
        .env_remove("QGATES_LOG");
    cmd
}

/// Runs `qgates check ARGS --format json`; the exit code, the report and stderr.
fn check(root: &Path, tmp: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = qgates_tmp(root, tmp)
        .arg("check")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), report, stderr)
}

/// The paths `git worktree list` shows.
fn worktrees(root: &Path) -> Vec<String> {
    git(root, &["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(str::to_string)
        .collect()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "{what} within 30 s");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The folders the waiting tools that started so far ran in.
fn started_in(marks: &Path) -> Vec<String> {
    entries(marks)
        .iter()
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("started.")
        })
        .map(|p| std::fs::read_to_string(p).unwrap().trim().to_string())
        .collect()
}

/// `qgates check --clean-room` with the waiting tool, started in the background.
fn spawn_waiting(root: &Path, tmp: &Path, marks: &Path) -> Child {
    qgates_tmp(root, tmp)
        .args(["check", "--clean-room", "--format", "json"])
        .env("MARK_DIR", marks)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn an_uncommitted_fix_is_left_out_and_the_worktree_is_removed() {
    let ws = repo(&[("quality.yaml", RUFF_CONFIG), ("a.py", "import os\n")]);
    let root = ws.path();
    let tmp = tempfile::tempdir().unwrap();
    // The fix is in the working tree only, with a new file beside it.
    write(root, "a.py", "x = 1\n");
    write(root, "notes.txt", "to do\n");
    let (code, plain, _) = check(root, tmp.path(), &["--scope", "project"]);
    assert_eq!(code, 0, "the working tree passes: {plain}");

    let head = git(root, &["rev-parse", "HEAD"]);
    let (code, report, stderr) = check(root, tmp.path(), &["--clean-room"]);
    assert_eq!(code, 1, "the commit still fails: {report}\n{stderr}");
    let lint = gate(&report, "lint");
    assert_eq!(lint["violations"][0]["file"], "a.py", "{lint}");
    assert_eq!(lint["violations"][0]["code"], "F401");
    assert_eq!(report["scope"]["mode"], "project");
    // quality.yaml, a.py, .gitignore: not the worktree's `.git` file.
    assert_eq!(report["scope"]["files_in_scope"], 3, "{}", report["scope"]);
    let clean = &report["clean_room"];
    assert_eq!(clean["rev"], "HEAD");
    assert_eq!(clean["commit"], head.as_str());
    assert_eq!(clean["kept"], false);
    assert_eq!(clean["uncommitted_changes"], 2, "{clean}");
    let worktree = PathBuf::from(clean["worktree"].as_str().unwrap());
    assert!(worktree.starts_with(tmp.path()), "{}", worktree.display());
    assert!(!worktree.exists(), "the worktree is gone");
    assert_eq!(
        worktrees(root),
        vec![root.canonicalize().unwrap().display().to_string()]
    );
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
    // The logs outlive the checkout, where the report says.
    let log_dir = report["log_dir"].as_str().unwrap();
    assert!(
        root.join(log_dir).join("lint.stdout").is_file(),
        "{log_dir}"
    );
    let saved: Value =
        serde_json::from_slice(&std::fs::read(root.join(log_dir).join("report.json")).unwrap())
            .unwrap();
    assert_eq!(saved["clean_room"], *clean);

    // The summary line says it, as the text report does.
    let out = qgates_tmp(root, tmp.path())
        .args(["check", "--clean-room", "--format", "summary"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let first = stdout.lines().next().unwrap();
    assert!(
        first.ends_with(&format!(
            "clean room at {} (HEAD): 2 uncommitted changes not included; worktree removed",
            &head[..7]
        )),
        "{first}"
    );
}

#[test]
fn the_checkout_uses_the_workspaces_installed_tools_when_it_has_none() {
    // No quality.yaml (the built-in default, every gate optional) and ruff only in the
    // workspace's .venv, not on PATH: the checkout has no .venv, and still runs that ruff
    // rather than skipping every gate as "not installed".
    let ws = repo(&[("a.py", "import os\n")]);
    write(ws.path(), "a.py", "x = 1\n");
    let ruff = common::tools_bin().join("ruff");
    std::fs::create_dir_all(ws.path().join(".venv/bin")).unwrap();
    std::os::unix::fs::symlink(&ruff, ws.path().join(".venv/bin/ruff")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = qgates_tmp(ws.path(), tmp.path())
        .env("PATH", "/usr/bin:/bin")
        .args(["check", "--clean-room", "--format", "json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{report}");
    let lint = report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == "ruff_lint")
        .unwrap();
    assert_eq!(lint["status"], "failed", "{report}");
    assert_eq!(lint["violations"][0]["code"], "F401");
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn keep_worktree_keeps_it_names_it_and_hands_it_to_the_user() {
    let ws = repo(&[("quality.yaml", RUFF_CONFIG), ("a.py", "import os\n")]);
    let root = ws.path();
    write(root, "a.py", "x = 1\n");
    git(root, &["commit", "-qam", "fixed"]);
    let tmp = tempfile::tempdir().unwrap();
    let (code, report, stderr) = check(
        root,
        tmp.path(),
        &["--clean-room", "HEAD~1", "--keep-worktree"],
    );
    assert_eq!(code, 1, "the first commit fails: {report}\n{stderr}");
    let clean = &report["clean_room"];
    assert_eq!(clean["rev"], "HEAD~1");
    assert_eq!(clean["kept"], true);
    assert_eq!(clean["uncommitted_changes"], 0);
    let kept = clean["worktree"].as_str().unwrap();
    assert_eq!(
        std::fs::read_to_string(Path::new(kept).join("a.py")).unwrap(),
        "import os\n",
        "the worktree holds the commit"
    );
    assert!(worktrees(root).contains(&kept.to_string()));
    // Unlocked: the user's now; a later clean-room run leaves it alone.
    assert!(!git(root, &["worktree", "list", "--porcelain"]).contains("locked"));
    let (code, again, _) = check(root, tmp.path(), &["--clean-room"]);
    assert_eq!(code, 0, "HEAD passes: {again}");
    assert!(
        Path::new(kept).join("a.py").is_file(),
        "the kept worktree stays"
    );
    let out = qgates_tmp(root, tmp.path())
        .args([
            "check",
            "--clean-room",
            "HEAD~1",
            "--keep-worktree",
            "--format",
            "text",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("no uncommitted changes; worktree kept at "),
        "{text}"
    );
    git(root, &["worktree", "remove", "--force", kept]);
}

#[test]
fn a_revision_that_names_no_commit_is_a_usage_error_and_makes_nothing() {
    let ws = repo(&[("quality.yaml", RUFF_CONFIG), ("a.py", "x = 1\n")]);
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, stderr) = check(ws.path(), tmp.path(), &["--clean-room", "no-such-branch"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("`no-such-branch` does not name a commit"),
        "{stderr}"
    );
    assert!(entries(tmp.path()).is_empty());
    assert_eq!(worktrees(ws.path()).len(), 1);
    // The word after --clean-room is the revision, even a path: the error says how to give both.
    let (code, _, stderr) = check(ws.path(), tmp.path(), &["--clean-room", "a.py"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("`--clean-room HEAD a.py`"), "{stderr}");
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn git_failing_to_add_the_worktree_is_an_error_with_its_message_and_leaves_nothing() {
    let ws = repo(&[("quality.yaml", RUFF_CONFIG), ("a.py", "x = 1\n")]);
    let root = ws.path();
    // A file where git keeps its worktrees' data: `git worktree add` cannot make its entry.
    std::fs::write(root.join(".git/worktrees"), "in the way\n").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, stderr) = check(root, tmp.path(), &["--clean-room"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("`git worktree add` could not check out HEAD"),
        "{stderr}"
    );
    assert!(
        stderr.contains(".git/worktrees"),
        "git's own message: {stderr}"
    );
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));

    // Outside a repository, and in a bare one, it says what is wrong.
    let plain = tempfile::tempdir().unwrap();
    write(plain.path(), "quality.yaml", RUFF_CONFIG);
    let (code, _, stderr) = check(plain.path(), tmp.path(), &["--clean-room"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("is not in one"), "{stderr}");
    let bare = tempfile::tempdir().unwrap();
    git(bare.path(), &["init", "-q", "--bare"]);
    let (code, _, stderr) = check(bare.path(), tmp.path(), &["--clean-room", "--root", "."]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("is a bare repository"), "{stderr}");
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn two_clean_room_runs_at_once_use_different_worktrees() {
    let ws = waiting_repo();
    let (tmp, marks) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = spawn_waiting(ws.path(), tmp.path(), marks.path());
    let second = spawn_waiting(ws.path(), tmp.path(), marks.path());
    // Both gates are running at the same time before either may finish.
    wait_until("both gates started", || started_in(marks.path()).len() == 2);
    let folders = started_in(marks.path());
    assert_ne!(folders[0], folders[1], "one worktree each");
    std::fs::write(marks.path().join("release"), "").unwrap();
    let mut used = Vec::new();
    for child in [first, second] {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        used.push(
            report["clean_room"]["worktree"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    assert_ne!(used[0], used[1]);
    let mut ran = folders.clone();
    ran.sort();
    used.sort();
    assert_eq!(ran, used, "each gate ran in its run's worktree");
    assert_eq!(worktrees(ws.path()).len(), 1);
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn a_signal_during_the_run_removes_the_worktree() {
    let ws = waiting_repo();
    let (tmp, marks) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut child = spawn_waiting(ws.path(), tmp.path(), marks.path());
    wait_until("the gate started", || started_in(marks.path()).len() == 1);
    assert_eq!(worktrees(ws.path()).len(), 2);
    // SAFETY: signalling a child of this test.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(worktrees(ws.path()).len(), 1);
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
}

#[test]
fn the_next_run_removes_what_a_killed_run_left_and_nothing_else() {
    let ws = waiting_repo();
    let root = ws.path();
    let (tmp, marks) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // The user's own worktree, locked with a reason of their own.
    let mine = tempfile::tempdir().unwrap();
    let mine_path = mine.path().join("mine");
    git(
        root,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            "--lock",
            &mine_path.to_string_lossy(),
        ],
    );
    // Another repository's clean room of a run that is gone (a process that has exited).
    let other = waiting_repo();
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let other_stale = tmp
        .path()
        .join(format!("qgates-clean-room-{}-0-0", gone.id()))
        .join("other");
    git(
        other.path(),
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            "--lock",
            "--reason",
            &format!("qgates clean room, pid {}", gone.id()),
            &other_stale.to_string_lossy(),
        ],
    );

    let mut killed = spawn_waiting(root, tmp.path(), marks.path());
    wait_until("the gate started", || started_in(marks.path()).len() == 1);
    killed.kill().unwrap();
    killed.wait().unwrap();
    std::fs::write(marks.path().join("release"), "").unwrap();
    let left = worktrees(root);
    assert_eq!(left.len(), 3, "the killed run's worktree is left: {left:?}");
    let stale = left
        .iter()
        .find(|w| Path::new(w).starts_with(tmp.path()))
        .unwrap()
        .clone();

    let out = qgates_tmp(root, tmp.path())
        .args(["check", "--clean-room"])
        .env("MARK_DIR", marks.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = worktrees(root);
    assert!(
        !after.contains(&stale),
        "the stale worktree is removed: {after:?}"
    );
    assert!(!Path::new(&stale).exists());
    assert!(
        !Path::new(&stale).parent().unwrap().exists(),
        "with its folder"
    );
    assert_eq!(after.len(), 2, "the user's worktree stays: {after:?}");
    assert!(mine_path.join("quality.yaml").is_file());
    assert!(
        other_stale.join("quality.yaml").is_file(),
        "another repository's stays"
    );
    assert_eq!(worktrees(other.path()).len(), 2);
    git(
        other.path(),
        &[
            "worktree",
            "remove",
            "--force",
            "--force",
            &other_stale.to_string_lossy(),
        ],
    );
    git(
        root,
        &[
            "worktree",
            "remove",
            "--force",
            "--force",
            &mine_path.to_string_lossy(),
        ],
    );
}

#[test]
fn a_shallow_clone_says_why_an_older_commit_is_missing() {
    let ws = repo(&[("quality.yaml", RUFF_CONFIG), ("a.py", "import os\n")]);
    write(ws.path(), "a.py", "x = 1\n");
    git(ws.path(), &["commit", "-qam", "fixed"]);
    let clones = tempfile::tempdir().unwrap();
    let url = format!("file://{}", ws.path().display());
    git(
        clones.path(),
        &["clone", "-q", "--depth", "1", &url, "shallow"],
    );
    let shallow = clones.path().join("shallow");
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, stderr) = check(&shallow, tmp.path(), &["--clean-room", "HEAD~1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("The repository is shallow"), "{stderr}");
    assert!(stderr.contains("git fetch --unshallow"), "{stderr}");
    // HEAD itself is there: a shallow clone checks it.
    let (code, report, stderr) = check(&shallow, tmp.path(), &["--clean-room"]);
    assert_eq!(code, 0, "{report}\n{stderr}");
    assert!(entries(tmp.path()).is_empty());
}
