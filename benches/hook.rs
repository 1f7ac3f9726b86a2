//! An agent's after-edit hook (`qgates hook claude`, docs/agents.md) against the same check run
//! by hand, the two sides interleaved in one run.
//!
//! The bundled example (`fixtures/python-basic`, its gates ruff format, ruff lint and mypy) as a
//! trusted git repository. Each sample adds a line with a type error to `src/type_error.py`;
//! (a) the hook's answer to Claude Code's `PostToolUse` payload for that edit (mypy's warm
//! process kept, as after the first edit of a session) is timed against `ruff check FILE` then
//! `mypy FILE` by hand (mypy's cache warm). Target: ≤ 1.2 × by hand.
//! (b) the hook again on the same content: every gate answered by the cache. Target: ≤ 50 ms.
//! The first edit, which starts mypy's warm process, is reported apart.
//!
//! `QGATES_BENCH_RUNS` sets the samples (default 9, after 2 to warm up).

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/process.rs"]
mod process;

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use process::{Tools, median, ms, runs_from_env, timed, verdict};

const EDITED: &str = "src/type_error.py";

/// The hook run with the payload of an edit of `EDITED`; its answer and how long it took.
fn hook(tools: &Tools, root: &Path, store: &Path) -> (Duration, String) {
    let payload = serde_json::json!({
        "session_id": "bench", "transcript_path": "/tmp/t.jsonl", "cwd": root,
        "hook_event_name": "PostToolUse", "tool_name": "Edit",
        "tool_input": {"file_path": root.join(EDITED), "old_string": "a", "new_string": "b"},
    })
    .to_string();
    let start = Instant::now();
    let mut child = tools
        .command(&tools.qgates, root)
        .args(["hook", "claude"])
        .env("QGATES_TRUST_FILE", store)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("qgates hook");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let took = start.elapsed();
    assert!(out.status.success(), "the hook failed");
    (took, String::from_utf8_lossy(&out.stdout).into_owned())
}

fn main() {
    let tools = Tools::find();
    let n = runs_from_env(9);
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/python-basic"),
        root,
    );
    common::write(root, ".gitignore", ".qgates/\n.mypy_cache/\n");
    common::git(root, &["init", "-q", "-b", "main"]);
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-qm", "example"]);
    let store = root.join(".qgates-trust.json");
    let trusted = tools
        .command(&tools.qgates, root)
        .args(["trust", "--yes", "."])
        .env("QGATES_TRUST_FILE", &store)
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(trusted, "qgates trust");
    let original = std::fs::read_to_string(root.join(EDITED)).unwrap();
    // Each edit's line, last in the module, has a finding of its own.
    let edit = |i: usize| {
        let text = format!("{original}\nbench_{i}: int = \"{i}\"\n");
        std::fs::write(root.join(EDITED), &text).unwrap();
        text.lines().count()
    };
    let by_hand = |line: usize| {
        let ruff = timed(tools.command(&tools.ruff, root).args([
            "check",
            "--output-format",
            "json",
            EDITED,
        ]))
        .0;
        let (mypy, out) = timed(tools.command(&tools.mypy, root).arg(EDITED));
        let flagged = format!("{EDITED}:{line}: error");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(&flagged),
            "mypy flags the added line"
        );
        ruff + mypy
    };
    // The answer names the finding on the edit's line.
    let names = |answer: &str, line: usize| answer.contains(&format!("\\n  {line}:"));
    // mypy's cache as a user's would be, then the first edit: it starts the warm process.
    let line = edit(0);
    by_hand(line);
    let (first, answer) = hook(&tools, root, &store);
    assert!(
        names(&answer, line),
        "the first answer names the edit: {answer}"
    );

    let (mut hooked, mut manual, mut unchanged) = (Vec::new(), Vec::new(), Vec::new());
    let warmup = 2;
    for i in 1..=warmup + n {
        let line = edit(i);
        for side in [i % 2, 1 - i % 2] {
            if side == 0 {
                manual.push(by_hand(line));
            } else {
                let (took, answer) = hook(&tools, root, &store);
                assert!(names(&answer, line), "answer {i}: {answer}");
                hooked.push(took);
            }
        }
        let (again, answer) = hook(&tools, root, &store);
        assert!(names(&answer, line), "the same answer again: {answer}");
        unchanged.push(again);
        if i == warmup {
            hooked.clear();
            manual.clear();
            unchanged.clear();
        }
    }
    let _ = tools
        .command(&tools.qgates, root)
        .args(["daemon", "stop"])
        .output();

    let (h, m, u) = (
        ms(median(&hooked)),
        ms(median(&manual)),
        ms(median(&unchanged)),
    );
    println!("\n== Results ==");
    println!("(a) after-edit hook, the bundled example, one module edited, median of {n}:");
    println!("    `ruff check` + `mypy` of the file by hand   {m:8.1} ms");
    println!("    qgates hook claude (mypy warm)              {h:8.1} ms");
    println!(
        "    hook / by hand = {:.2}   target ≤ 1.2: {}",
        h / m,
        verdict(h <= 1.2 * m)
    );
    println!(
        "    first edit (starts mypy's warm process): {:.1} ms",
        ms(first)
    );
    println!(
        "(b) the hook again, content unchanged: {u:.1} ms   target ≤ 50 ms: {}",
        verdict(u <= 50.0)
    );
}
