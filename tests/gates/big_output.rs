//! 200 MB of tool output: nothing is truncated on the way to the parser (the one violation sits
//! at the very end), and qgates' memory stays bounded by the output's size.
//! The peak memory is that of the one qgates process this test starts (and of what it waited
//! for), read when it is reaped: the children of other tests in the same binary do not count.

use std::io::Read;
use std::process::{Command, Stdio};

use crate::common;

use common::{gate, path_with_tools, tool, workspace};

const NOISE_BYTES: u64 = 200_000_000;

#[test]
fn two_hundred_megabytes_of_output_are_parsed_whole_with_bounded_memory() {
    let ws = workspace(&[("src/a.py", "x = 1\n")]);
    tool(
        ws.path(),
        "chatty.sh",
        &format!(
            "#!/bin/sh\nyes 'progress: checking things, nothing to report on this line' | head -c {NOISE_BYTES}\necho\necho 'src/a.py:1:5: E001 the one real finding, printed last'\nexit 1\n"
        ),
    );
    let cfg = r#"version: 1
gates:
  chatty:
    command: ["./chatty.sh"]
    file_types: [".py"]
    parsing:
      strategy: text_violations
      pattern: '^(?P<file>[^:\n]+\.py):(?P<line>\d+):(?P<column>\d+): (?P<code>E\d+) (?P<message>.+)$'
"#;
    common::write(ws.path(), "quality.yaml", cfg);
    // Set up as `common::qgates` sets it up; spawned by hand, so that its own reaping (wait4)
    // gives its resource usage.
    #[expect(
        clippy::zombie_processes,
        reason = "reaped by wait4 below, which gives its resource usage"
    )]
    let mut child = Command::new(env!("CARGO_BIN_EXE_qgates"))
        .args(["check", "--scope", "project", "--format", "json"])
        .current_dir(ws.path())
        .env("PATH", path_with_tools())
        .env("NO_COLOR", "1")
        .env_remove("QGATES_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    // SAFETY: wait4 on the child this test started and has not waited for; `status` and `usage`
    // are valid out-pointers. Its usage covers qgates and the children it waited for (the tool,
    // whose own memory is tiny); `child` is not waited for again.
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let report: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(code, Some(1), "{report}");
    let g = gate(&report, "chatty");
    let v = g["violations"].as_array().unwrap();
    assert_eq!(v.len(), 1, "{g}");
    assert_eq!(v[0]["message"], "the one real finding, printed last");
    assert_eq!(
        (v[0]["line"].as_u64(), v[0]["column"].as_u64()),
        (Some(1), Some(5))
    );
    let log = ws.path().join(g["log"]["stdout"].as_str().unwrap());
    let logged = std::fs::metadata(&log).unwrap().len();
    assert!(logged > NOISE_BYTES, "the log holds all {logged} bytes");

    let peak_bytes = usage.ru_maxrss as u64 * 1024;
    // The output is read once into memory and parsed in place: about 1× its size, never a copy
    // per stage.
    let bound = logged + logged / 2;
    assert!(
        peak_bytes < bound,
        "peak RSS {peak_bytes} bytes for {logged} bytes of output (bound {bound})"
    );
}
