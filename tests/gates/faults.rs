//! Nothing lost silently: a `.qgates/` that cannot be written, a log cut by a full disk or a
//! file-size limit, a report that cannot be written, and state or cache writes that fail.

use crate::common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{gate, git, path_with_tools, tool, write};
use serde_json::Value;

const FINDINGS: &str = "parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[^:\\n]+\\.py):(?P<line>\\d+):(?P<column>\\d+): (?P<code>E\\d+) (?P<message>.+)$'\n";

/// A git repository with one commit and `a.py` changed since, whose one gate runs `tools/gate`.
fn repo_with_gate(tool_body: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    tool(root, "tools/gate", tool_body);
    write(
        root,
        "quality.yaml",
        &format!(
            "version: 1\ngates:\n  lint:\n    command: [tools/gate]\n    file_types: [.py]\n    {FINDINGS}"
        ),
    );
    write(root, "a.py", "x = 1\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "first"]);
    write(root, "a.py", "x = 2\n");
    ws
}

/// `qgates check --format json ARGS` in `root`, as `cmd` prepared it.
fn check_with(mut cmd: Command, root: &Path, args: &[&str]) -> Output {
    cmd.arg("check")
        .args(args)
        .args(["--format", "json"])
        .current_dir(root)
        .env("PATH", path_with_tools())
        .env("NO_COLOR", "1")
        .env_remove("QGATES_LOG")
        .output()
        .expect("run qgates")
}

fn report_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn qgates_cmd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_qgates"))
}

/// qgates limited to files of `bytes` bytes, as `ulimit -f` does (the tools inherit it).
fn with_file_size_limit(bytes: u64) -> Command {
    let mut cmd = qgates_cmd();
    // SAFETY: setrlimit is async-signal-safe; it runs in the child before exec.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    cmd
}

#[test]
#[allow(clippy::print_stderr, reason = "a skipped test says why")]
fn a_read_only_qgates_folder_still_runs_the_gates_and_keeps_their_exit_code() {
    let ws = repo_with_gate("#!/bin/sh\necho 'a.py:1:1: E1 one finding'\nexit 1\n");
    let root = ws.path();
    std::fs::create_dir(root.join(".qgates")).unwrap();
    let mode = |p: &Path, m: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    };
    // Another user's checkout: readable, not writable. Root writes through any mode, so as root
    // qgates runs as `nobody` (setpriv), for whom the modes hold.
    for dir in [root, &root.join(".qgates"), &root.join("tools")] {
        mode(dir, 0o555);
    }
    // SAFETY: geteuid cannot fail.
    let as_root = unsafe { libc::geteuid() } == 0;
    if as_root && Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: running as root without setpriv, no user for whom the modes hold");
        return;
    }
    let cmd = || {
        if as_root {
            let mut cmd = Command::new("setpriv");
            cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(env!("CARGO_BIN_EXE_qgates"))
                .env("HOME", "/nonexistent");
            cmd
        } else {
            qgates_cmd()
        }
    };
    for args in [&[][..], &["--no-state"][..]] {
        let out = check_with(cmd(), root, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let report = report_of(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {report}\n{stderr}");
        let g = gate(&report, "lint");
        assert_eq!(g["violations"][0]["message"], "one finding", "{g}");
        assert!(
            stderr.contains(".qgates cannot be written") && stderr.contains("logs are in"),
            "{stderr}"
        );
        let log = g["log"]["stdout"].as_str().unwrap();
        assert_eq!(
            std::fs::read_to_string(log).unwrap(),
            "a.py:1:1: E1 one finding\n"
        );
    }
    assert_eq!(std::fs::read_dir(root.join(".qgates")).unwrap().count(), 0);
    for dir in [root, &root.join(".qgates"), &root.join("tools")] {
        mode(dir, 0o755);
    }
}

#[test]
fn a_log_cut_by_the_file_size_limit_is_an_error_of_its_gate() {
    // 1 MiB of findings against a 64 KiB limit. The wrapper's `head` dies of SIGXFSZ and the
    // wrapper goes on to exit 1, as if the findings were all there.
    let ws = repo_with_gate("#!/bin/sh\nyes 'a.py:1:1: E1 finding' | head -c 1048576\nexit 1\n");
    let out = check_with(
        with_file_size_limit(64 << 10),
        ws.path(),
        &["--scope", "project"],
    );
    let report = report_of(&out);
    assert_eq!(out.status.code(), Some(3), "{report}");
    let g = gate(&report, "lint");
    assert_eq!(g["status"], "error", "{g}");
    let msg = g["error"].as_str().unwrap();
    assert!(
        msg.contains("could not all be written") && msg.contains("file-size limit of 65536"),
        "{msg}"
    );

    // The tool writing past the limit itself (qgates ignores SIGXFSZ and its tools inherit
    // that: the write fails with EFBIG, and `yes` ends on it).
    let ws = repo_with_gate("#!/bin/sh\nexec yes 'a.py:1:1: E1 finding'\n");
    let out = check_with(
        with_file_size_limit(64 << 10),
        ws.path(),
        &["--scope", "project"],
    );
    let report = report_of(&out);
    assert_eq!(out.status.code(), Some(3), "{report}");
    let msg = gate(&report, "lint")["error"].as_str().unwrap().to_owned();
    assert!(msg.contains("file-size limit of 65536"), "{msg}");
}

/// Under `ulimit -f 0` nothing can be written: a tool that prints nothing and exits clean has
/// lost nothing and passes; one that found something could keep none of it, and says so.
#[test]
fn under_a_file_size_limit_of_zero_a_silent_clean_tool_passes() {
    let ws = repo_with_gate(
        "#!/bin/sh
exit 0
",
    );
    let out = check_with(with_file_size_limit(0), ws.path(), &["--scope", "project"]);
    let report = report_of(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(gate(&report, "lint")["status"], "passed", "{report}");

    let ws = repo_with_gate(
        "#!/bin/sh
echo 'a.py:1:1: E1 one finding'
exit 1
",
    );
    let out = check_with(with_file_size_limit(0), ws.path(), &["--scope", "project"]);
    let report = report_of(&out);
    assert_eq!(out.status.code(), Some(3), "{report}");
    let msg = gate(&report, "lint")["error"].as_str().unwrap().to_owned();
    assert!(msg.contains("file-size limit of 0 bytes"), "{msg}");
}

#[test]
#[allow(clippy::print_stderr, reason = "a skipped test says why")]
fn a_log_cut_by_a_full_disk_is_an_error_of_its_gate() {
    // The run logs on a 64 KiB file system of their own (a mount namespace: root only).
    let ws = repo_with_gate("#!/bin/sh\nyes 'a.py:1:1: E1 finding' | head -c 1048576\nexit 1\n");
    let runs = ws.path().join(".qgates/runs");
    std::fs::create_dir_all(&runs).unwrap();
    let probe = Command::new("unshare")
        .args(["-m", "mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&runs)
        .output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!(
            "skipped: cannot mount a small file system here (unshare -m needs root): {probe:?}"
        );
        return;
    }
    let mut cmd = Command::new("unshare");
    cmd.args([
        "-m",
        "sh",
        "-c",
        "mount -t tmpfs -o size=64k tmpfs \"$1\" && shift && exec \"$@\"",
        "sh",
    ])
    .arg(&runs)
    .arg(env!("CARGO_BIN_EXE_qgates"));
    let out = check_with(cmd, ws.path(), &["--scope", "project"]);
    let report = report_of(&out);
    assert_eq!(out.status.code(), Some(3), "{report}");
    let g = gate(&report, "lint");
    assert_eq!(g["status"], "error", "{g}");
    let msg = g["error"].as_str().unwrap();
    assert!(msg.contains("the disk holding it is full"), "{msg}");
}

#[test]
fn failed_state_and_cache_writes_leave_no_temporary_files() {
    // Limit 16 bytes: the tool's empty logs fit, state.json and the cache do not.
    let ws = repo_with_gate("#!/bin/sh\nexit 0\n");
    let root = ws.path();
    let out = check_with(with_file_size_limit(16), root, &[]);
    let report = report_of(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    let note = report["scope"]["note"].as_str().unwrap_or_default();
    assert!(note.contains("could not be saved"), "{report}");
    let mut left = Vec::new();
    for dir in [root.join(".qgates"), root.join(".qgates/cache")] {
        for entry in std::fs::read_dir(&dir).into_iter().flatten() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name.contains(".tmp-") {
                left.push(name);
            }
        }
    }
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn a_report_that_cannot_be_written_is_an_error() {
    let ws = repo_with_gate("#!/bin/sh\necho 'a.py:1:1: E1 one finding'\nexit 1\n");
    let mut cmd = qgates_cmd();
    cmd.stdout(
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap(),
    );
    let out = check_with(cmd, ws.path(), &["--scope", "project"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("could not be written to stdout") && stderr.contains("No space left"),
        "{stderr}"
    );
}

#[test]
fn a_closed_pipe_ends_quietly_with_the_gates_exit_code() {
    // `qgates check | head -0`: the reader is gone before the report is written.
    let ws = repo_with_gate("#!/bin/sh\necho 'a.py:1:1: E1 one finding'\nexit 1\n");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut cmd = qgates_cmd();
    cmd.stdout(Stdio::from(writer));
    let out = check_with(cmd, ws.path(), &["--scope", "project"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("could not be written"), "{stderr}");
}
