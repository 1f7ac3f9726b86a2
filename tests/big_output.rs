//! 200 MB of tool output: nothing is truncated on the way to the parser (the one violation sits
//! at the very end), and qgates' memory stays bounded by the output's size.
//! One test in its own binary, so the peak memory of child processes is qgates' alone.

mod common;

use common::{gate, qgates, tool, workspace};

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
    let out = qgates(ws.path())
        .args(["check", "--scope", "project", "--format", "json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{report}");
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

    // SAFETY: getrusage fills the struct we pass; RUSAGE_CHILDREN covers the waited-for children
    // of this test process: qgates and, through it, the tool (whose own memory is tiny).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) },
        0
    );
    let peak_bytes = usage.ru_maxrss as u64 * 1024;
    // The output is read once into memory and parsed in place: about 1× its size, never a copy
    // per stage.
    let bound = logged + logged / 2;
    assert!(
        peak_bytes < bound,
        "peak RSS {peak_bytes} bytes for {logged} bytes of output (bound {bound})"
    );
}
