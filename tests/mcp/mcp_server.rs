//! `qgates mcp` driven by a real client: the official Python MCP SDK (`mcp`, pinned in
//! requirements-tools.txt and installed into .venv by scripts/setup.sh) runs tests/mcp/client.py
//! against the bundled example in a git repository, and this test checks what it recorded: the
//! tools and their schemas, a result per scope equal to `qgates check --format json`, every kind
//! of bad call answered as a readable tool error, and a server that lives through them.
//!
//! The Python interpreter is `QGATES_TEST_PYTHON` if set, else the repository's `.venv/bin/python`.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{comparable, fixture_copy, git, path_with_tools, trusted};
use serde_json::Value;

fn python() -> PathBuf {
    let python = std::env::var_os("QGATES_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python"));
    let has_mcp = Command::new(&python)
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        has_mcp,
        "{} cannot import the MCP SDK: run scripts/setup.sh (or point QGATES_TEST_PYTHON at a python with `mcp` from requirements-tools.txt)",
        python.display()
    );
    python
}

/// The example, committed on `main`, then on a branch `feature` one changed file and one new one:
/// so `project`, `branch`/`auto` and `files` each check different files.
fn example_repo() -> tempfile::TempDir {
    let ws = fixture_copy("python-basic");
    let root = ws.path();
    std::fs::write(
        root.join(".gitignore"),
        ".qgates/\n.mypy_cache/\n.ruff_cache/\n",
    )
    .unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "example"]);
    git(root, &["checkout", "-qb", "feature"]);
    let changed = root.join("src/unused_import.py");
    let mut text = std::fs::read_to_string(&changed).unwrap();
    text.push_str("\n\ndef added() -> int:\n    return 1\n");
    std::fs::write(changed, text).unwrap();
    std::fs::write(root.join("src/new_module.py"), "import sys\n").unwrap();
    ws
}

/// Runs the Python client against `qgates mcp` in `root`; returns its transcript.
fn transcript(root: &Path) -> Value {
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let out_file = root.join(".qgates-transcript.json");
    let (_store_dir, store) = trusted(root);
    let out = Command::new(python())
        .arg(&client)
        .arg(env!("CARGO_BIN_EXE_qgates"))
        .arg(root)
        .arg(&client) // a file that exists outside the workspace
        .arg(&out_file)
        .env("PATH", path_with_tools())
        .env("NO_COLOR", "1")
        .env("QGATES_TRUST_FILE", &store)
        .env_remove("QGATES_LOG")
        .output()
        .expect("run the Python MCP client");
    assert!(
        out.status.success(),
        "the MCP client failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(&out_file).expect("transcript")).unwrap()
}

fn text(result: &Value, i: usize) -> &str {
    result["texts"][i]
        .as_str()
        .unwrap_or_else(|| panic!("no text {i} in {result}"))
}

/// The answer's text lists every violation of its structured page under its file, with the
/// content the file was checked at, and nothing more than one summary line besides.
fn assert_text_lists_the_page(text: &str, page: &Value) {
    let violations: Vec<&Value> = (page["gates"].as_array().unwrap().iter())
        .flat_map(|g| g["violations"].as_array().into_iter().flatten())
        .collect();
    for v in &violations {
        let file = v["file"].as_str().unwrap();
        let blob = page["contents"][file]
            .as_str()
            .unwrap_or_else(|| panic!("{file}'s content in {page}"));
        let heading = format!("{file} (as checked: blob {}):", &blob[..7]);
        let at = text
            .find(&heading)
            .unwrap_or_else(|| panic!("{heading} in:\n{text}"));
        let row = format!(
            "  {}:{} {} {} ",
            v["line"],
            v["column"],
            v["severity"].as_str().unwrap(),
            v["code"].as_str().unwrap()
        );
        assert!(text[at..].contains(&row), "{row} under {file} in:\n{text}");
    }
    let rows = text
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
        .count();
    assert_eq!(rows, violations.len(), "{text}");
}

fn error_text(result: &Value) -> &str {
    assert_eq!(result["is_error"], true, "not a tool error: {result}");
    text(result, 0)
}

#[test]
fn a_real_client_gets_the_same_reports_as_the_cli_and_readable_errors() {
    let ws = example_repo();
    let t = transcript(ws.path());

    // The tools, with schemas an agent can rely on.
    assert_eq!(t["server"]["name"], "qgates");
    let tools = t["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["run_quality_gates", "last_summary"]);
    let run = &tools[0];
    assert_eq!(run["input_schema"]["additionalProperties"], false);
    let props: Vec<&str> = run["input_schema"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        props,
        [
            "scope",
            "gates",
            "files",
            "fix",
            "skip_kinds",
            "only_kinds",
            "clean_room",
            "rev",
            "max_violations",
            "offset",
            "include_existing"
        ]
    );
    assert_eq!(tools[1]["input_schema"]["additionalProperties"], false);
    for tool in tools {
        assert_eq!(tool["output_schema"]["type"], "object", "{tool}");
    }

    let last = &t["last_before_any_run"];
    assert!(error_text(last).contains("No run yet"), "{last}");

    // Each scope: the summary line first, the report as structured content and as text, and the
    // same report as `qgates check --format json`.
    let mut modes = Vec::new();
    let mut browsed_in_cli = 0;
    for s in t["scopes"].as_array().unwrap() {
        let (mcp, cli) = (&s["mcp"], &s["cli"]);
        assert_eq!(mcp["is_error"], false, "{s}");
        let report = &mcp["structured"];
        let summary = text(mcp, 0);
        assert!(summary.starts_with('❌'), "{summary}");
        assert_text_lists_the_page(text(mcp, 0), report);
        assert_eq!(cli["code"], 1, "{cli}");
        assert_eq!(
            report["shown"], report["total"],
            "a small run is shown whole"
        );
        assert!(report.get("next_offset").is_none(), "{report}");
        assert_eq!(
            common::without_novelty(comparable(report)),
            comparable(&cli["report"]),
            "scope {}: MCP and CLI differ",
            s["scope"]
        );
        // What a person browses stays in the whole report: each rule's page, each fix's title.
        let browsed = |r: &Value| {
            let violations = (r["gates"].as_array().unwrap().iter())
                .flat_map(|g| g["violations"].as_array().cloned().unwrap_or_default());
            violations
                .filter(|v| v.get("url").is_some() || v["fix"].get("title").is_some())
                .count()
        };
        browsed_in_cli += browsed(&cli["report"]);
        assert_eq!(browsed(report), 0, "{report}");
        modes.push(report["scope"]["mode"].as_str().unwrap().to_string());
    }
    assert_eq!(modes, ["project", "files", "branch", "auto"]);
    assert!(
        browsed_in_cli > 0,
        "the whole reports have rule pages and fix titles"
    );
    let files_checked =
        |i: usize| t["scopes"][i]["mcp"]["structured"]["scope"]["files_checked"].clone();
    assert_eq!(files_checked(0), 7, "project: every file of the example");
    assert_eq!(files_checked(1), 2, "files: the two given");
    assert_eq!(files_checked(2), 2, "branch: the changed and the new file");
    assert_eq!(files_checked(3), 2, "auto without a baseline: as branch");
    assert_eq!(
        t["last_after_runs"]["structured"], t["scopes"][3]["mcp"]["structured"],
        "last_summary returns the last run"
    );

    // The branch's changes add `import sys` to a new module; the example's unused `os` was
    // there at the merge-base. By default the new finding is shown, the old one counted.
    let branch = &t["scopes"][2]["mcp"]["structured"];
    assert_eq!(branch["novelty"]["new"], 1, "{branch}");
    assert_eq!(branch["novelty"]["existing"], 1, "{branch}");
    let page = &t["branch_default_page"]["structured"];
    let shown: Vec<(&str, bool)> = page["gates"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["violations"].as_array().into_iter().flatten())
        .map(|v| (v["file"].as_str().unwrap(), v["new"].as_bool().unwrap()))
        .collect();
    assert_eq!(shown, [("src/new_module.py", true)], "{page}");
    assert_eq!(page["novelty"]["existing"], 1, "{page}");
    let line = text(&t["branch_default_page"], 0);
    assert!(
        line.contains("1 new violation (1 pre-existing; 2 auto-fixable)"),
        "{line}"
    );

    // Bad calls: tool errors that say what is wrong and what to do.
    let expect = [
        (
            "wrong type",
            "argument `scope`: invalid type: integer `5`, expected a string",
        ),
        (
            "unknown scope",
            "unknown scope `everything`, expected one of `auto`",
        ),
        (
            "unknown field",
            "unknown field `bogus`, expected one of `scope`, `gates`, `files`, `fix`",
        ),
        (
            "wrong item type",
            "argument `gates[1]`: invalid type: integer `7`",
        ),
        (
            "unknown gate",
            "unknown gate `nope`. Active gates: ruff_format, ruff_lint, mypy",
        ),
        ("empty gates", "argument `gates` is empty"),
        ("outside the workspace", "is outside the workspace"),
        (
            "climbing out",
            "`../../outside.py` is outside the workspace",
        ),
        (
            "missing file",
            "`src/missing.py` does not exist in the workspace",
        ),
        ("files scope without files", "scope `files` needs the paths"),
        (
            "files with another scope",
            "scope `project` chooses the files itself",
        ),
        (
            "fix not a boolean",
            "argument `fix`: invalid type: string \"yes\", expected a boolean",
        ),
        ("last_summary with arguments", "unknown field `scope`"),
    ];
    let bad = t["bad"].as_array().unwrap();
    assert_eq!(bad.len(), expect.len());
    for (result, (what, says)) in bad.iter().zip(expect) {
        assert_eq!(result["what"], what);
        let message = error_text(result);
        assert!(message.contains(says), "{what}: {message}");
    }
    // An unknown tool is a protocol error (the MCP rule), still with a readable message.
    let unknown = t["unknown_tool"]["protocol_error"].as_str().unwrap();
    assert!(
        unknown.contains("unknown tool `run_everything`"),
        "{unknown}"
    );

    let broken = error_text(&t["broken_config"]);
    assert!(
        broken.contains("quality.yaml:5:11") && broken.contains("unknown gate kind `sometimes`"),
        "{broken}"
    );
    assert!(broken.contains("Fix quality.yaml"), "{broken}");

    // Two calls at once: one runs, the other is told to wait.
    let both = t["concurrent"].as_array().unwrap();
    let errors: Vec<&Value> = both.iter().filter(|r| r["is_error"] == true).collect();
    assert_eq!(errors.len(), 1, "{both:?}");
    assert!(
        text(errors[0], 0).contains("already in progress"),
        "{}",
        errors[0]
    );

    // The server lived on.
    let after = &t["after_errors"];
    assert_eq!(after["is_error"], false, "{after}");
    assert!(text(after, 0).starts_with("✅"), "{after}");

    // fix: the formatter rewrote the file, then the check passed.
    let fix = &t["fix"];
    assert_eq!(fix["is_error"], false, "{fix}");
    assert_eq!(
        fix["structured"]["fixed"],
        serde_json::json!(["src/unformatted.py"])
    );
    assert!(text(fix, 0).ends_with("fixed 1 file first"), "{fix}");
    assert_eq!(fix["structured"]["overall_pass"], true, "{fix}");
}
