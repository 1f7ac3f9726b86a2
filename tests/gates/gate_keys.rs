//! The gate keys that say which files a gate takes and how its output is read, run for real:
//! `files`, `parsing.filter`, `parsing.templates`, `paths_relative_to`, `fail_on` (in the CLI and
//! the editor) and `parsing.also` (with the ruff-format preset and the real ruff); and a gate
//! that can never run, which must not pass for "nothing changed". Small `sh` scripts stand in
//! for tools where what is under test is qgates', not the tool's.

use crate::common;

use std::path::Path;

use common::lsp::{LspClient, TrustAnswer};
use common::places::{Unit, token_span};
use common::{check_json, gate, git, problem_at, qgates, tool, workspace, write};
use serde_json::{Value, json};

/// A text pattern for `FILE:LINE: [SEVERITY: ]CODE MESSAGE` lines.
const PATTERN: &str =
    r"'^(?P<file>[^:\n]+):(?P<line>\d+): (?:(?P<severity>\w+): )?(?P<code>\w+) (?P<message>.+)$'";

/// A tool that reports every file it is given as `FILE:1: SEEN given`.
const ECHO_FILES: &str =
    "#!/bin/sh\nfor f in \"$@\"; do echo \"$f:1: SEEN given\"; done\n[ $# -eq 0 ] || exit 1\n";

/// A gate (YAML lines under `gates:`) running `command` whose output `PATTERN` reads.
fn text_gate(id: &str, command: &str, extra: &str) -> String {
    format!(
        "  {id}:\n    command: {command}\n{extra}    parsing:\n      strategy: text_violations\n      pattern: {PATTERN}\n"
    )
}

/// The files a gate reported, sorted and unique.
fn files(report: &Value, id: &str) -> Vec<String> {
    let mut files: Vec<String> = gate(report, id)["violations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["file"].as_str().map(str::to_string))
        .collect();
    files.sort();
    files.dedup();
    files
}

/// `qgates check ARGS` in `root`: exit code, stdout and stderr.
fn check_out(root: &Path, args: &[&str]) -> (i32, String, String) {
    let out = qgates(root).arg("check").args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The 1-based line and column where `token` stands in `text` (its one occurrence).
fn place_of(text: &str, token: &str) -> (u32, u32) {
    let (i, _) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(token))
        .unwrap_or_else(|| panic!("{token} not in:\n{text}"));
    let (col, _) = token_span(text, i + 1, token, Unit::CodePoint);
    (i as u32 + 1, col as u32 + 1)
}

#[test]
fn files_globs_match_names_anywhere_and_paths_from_the_root() {
    let ws = workspace(&[
        ("Dockerfile", "FROM scratch\n"),
        ("sub/dockerfile", "FROM scratch\n"),
        ("Dockerfile.dev", "FROM scratch\n"),
        ("run.sh", "echo hi\n"),
        ("scripts/deploy.sh", "echo hi\n"),
        (".github/workflows/ci.yml", "on: push\n"),
        (".github/workflows/nested/deep.yml", "on: push\n"),
        ("config/ci.yml", "a: 1\n"),
        ("other.yml", "a: 1\n"),
        ("pyproject.toml", "[project]\n"),
        ("a.py", "x = 1\n"),
    ]);
    let root = ws.path();
    tool(root, "tools/seen", ECHO_FILES);
    let gates = [
        text_gate("docker", "[tools/seen]", "    files: [Dockerfile]\n"),
        text_gate("shell", "[tools/seen]", "    files: [\"*.sh\"]\n"),
        text_gate(
            "workflows",
            "[tools/seen]",
            "    files: [\"./.github/workflows/*.yml\"]\n",
        ),
        text_gate(
            "either",
            "[tools/seen]",
            "    files: [Dockerfile]\n    file_types: [.toml]\n",
        ),
    ];
    write(
        root,
        "quality.yaml",
        &format!("version: 1\ngates:\n{}", gates.concat()),
    );
    let (_, report) = check_json(root, &["--scope", "project", "--no-cache"]);
    // By name, in any folder, whatever its case; `Dockerfile.dev` is another name.
    assert_eq!(files(&report, "docker"), ["Dockerfile", "sub/dockerfile"]);
    assert_eq!(files(&report, "shell"), ["run.sh", "scripts/deploy.sh"]);
    // By path from the root: `*` stays in its folder, and a `.yml` elsewhere is not one.
    assert_eq!(files(&report, "workflows"), [".github/workflows/ci.yml"]);
    // `files` or `file_types`: either takes a file.
    assert_eq!(
        files(&report, "either"),
        ["Dockerfile", "pyproject.toml", "sub/dockerfile"]
    );
}

#[test]
fn a_gate_with_a_cwd_checks_that_folder_with_its_own_tools() {
    let ws = workspace(&[
        ("run.sh", "echo hi\n"),
        ("web/build.sh", "echo hi\n"),
        ("web/scripts/deploy.sh", "echo hi\n"),
        ("webapp/other.sh", "echo hi\n"),
    ]);
    let root = ws.path();
    // The subproject's own tool folder is looked in before the workspace's.
    tool(root, "web/node_modules/.bin/seen", ECHO_FILES);
    let gates = [
        text_gate("web", "[seen]", "    files: [\"*.sh\"]\n    cwd: web\n"),
        text_gate(
            "widened",
            "[seen]",
            "    files: [\"*.sh\"]\n    cwd: web/\n    scope: { include_globs: [\"**/*.sh\"] }\n",
        ),
    ];
    write(
        root,
        "quality.yaml",
        &format!("version: 1\ngates:\n{}", gates.concat()),
    );
    let (_, report) = check_json(root, &["--scope", "project", "--no-cache"]);
    // Only the files inside `web/` (not `webapp/`, whose name only starts the same).
    assert_eq!(
        files(&report, "web"),
        ["web/build.sh", "web/scripts/deploy.sh"]
    );
    // A scope that includes files says which, wherever they are.
    assert_eq!(
        files(&report, "widened"),
        [
            "run.sh",
            "web/build.sh",
            "web/scripts/deploy.sh",
            "webapp/other.sh"
        ]
    );
    // A gate whose folder has none of its files says it never applies, and why.
    write(
        root,
        "quality.yaml",
        &format!(
            "version: 1\ngates:\n{}",
            text_gate("none", "[seen]", "    files: [\"*.py\"]\n    cwd: web\n")
        ),
    );
    let (_, report) = check_json(root, &["--scope", "project", "--no-cache"]);
    assert_eq!(
        gate(&report, "none")["skip_reason"],
        "never applies: no file in the project matches its files (*.py) in its cwd (web). Fix `files` or `cwd` in quality.yaml, or remove the gate.",
        "{report}"
    );
}

/// A repository whose `rust` gate takes `*.rs` files: `src/app.py` and, if `with_rust`,
/// `src/lib.rs`, committed on `main`.
fn repo_with_rust_gate(with_rust: bool) -> tempfile::TempDir {
    let ws = workspace(&[("src/app.py", "x = 1\n")]);
    let root = ws.path();
    if with_rust {
        write(root, "src/lib.rs", "fn main() {}\n");
    }
    tool(root, "tools/ok", "#!/bin/sh\nexit 0\n");
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  py:\n    command: [tools/ok]\n    file_types: [.py]\n    parsing: { strategy: exit_code }\n  rust:\n    command: [tools/ok]\n    files: [\"*.rs\"]\n    parsing: { strategy: exit_code }\n",
    );
    common::markers::commit_all(root);
    ws
}

const NEVER: &str = "never applies: no file in the project matches its files (*.rs). Fix `files` in quality.yaml, or remove the gate.";

#[test]
fn a_gate_no_project_file_matches_is_said_to_never_apply() {
    let ws = repo_with_rust_gate(false);
    let root = ws.path();
    // A project run looked at every file; an `auto` run (one changed file) must look further.
    write(root, "src/app.py", "x = 2\n");
    for scope in ["project", "auto"] {
        let (code, report) = check_json(root, &["--scope", scope]);
        assert_eq!(code, 0, "a warning, not a failure: {report}");
        let rust = gate(&report, "rust");
        assert_eq!(rust["status"], "skipped", "{report}");
        assert_eq!(rust["skip_reason"], NEVER, "{scope}: {report}");
        let (_, stdout, stderr) = check_out(root, &["--scope", scope, "--format", "summary"]);
        let first = stdout.lines().next().unwrap();
        assert!(
            first.contains("1 gate never applies (no project file matches): rust"),
            "{first}"
        );
        assert_eq!(
            stderr.lines().collect::<Vec<_>>(),
            [format!("qgates: warning: gate `rust` {NEVER}")],
            "{stderr}"
        );
        let (_, text, _) = check_out(root, &["--scope", scope, "--format", "text"]);
        assert!(text.contains(&format!("rust: skipped — {NEVER}")), "{text}");
    }
}

#[test]
fn a_gate_whose_files_exist_outside_the_change_is_only_skipped() {
    let ws = repo_with_rust_gate(true);
    let root = ws.path();
    write(root, "src/app.py", "x = 2\n");
    let (code, stdout, stderr) = check_out(root, &["--format", "json"]);
    assert_eq!(code, 0, "{stdout}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(gate(&report, "rust")["skip_reason"], "no matching files");
    assert!(!stderr.contains("never applies"), "{stderr}");
    // The last `.rs` file goes: from now on the gate can never run.
    std::fs::remove_file(root.join("src/lib.rs")).unwrap();
    git(root, &["commit", "-qam", "no more rust"]);
    write(root, "src/app.py", "x = 3\n");
    let (_, report) = check_json(root, &[]);
    assert_eq!(gate(&report, "rust")["skip_reason"], NEVER, "{report}");
}

#[test]
fn a_filter_keeps_only_the_json_items_that_match() {
    let ws = workspace(&[("src/main.rs", "fn main() {}\n")]);
    let root = ws.path();
    // cargo's JSON lines: artifacts, messages, the end of the build.
    tool(
        root,
        "tools/cargo",
        "#!/bin/sh\ncat <<'EOF'\n{\"reason\":\"compiler-artifact\",\"message\":{\"message\":\"not a finding\"}}\n{\"reason\":\"compiler-message\",\"message\":{\"level\":\"error\",\"message\":\"mismatched types\",\"code\":{\"code\":\"E0308\"},\"spans\":[{\"file_name\":\"src/main.rs\",\"line_start\":1,\"column_start\":4}]}}\n{\"reason\":\"compiler-message\",\"message\":{\"level\":\"warning\",\"message\":\"unused variable\",\"code\":{\"code\":\"unused_variables\"},\"spans\":[{\"file_name\":\"src/main.rs\",\"line_start\":1,\"column_start\":1}]}}\n{\"reason\":\"build-finished\",\"success\":false}\nEOF\nexit 101\n",
    );
    let config = |filter: &str| {
        format!(
            "version: 1\ngates:\n  cargo:\n    command: [tools/cargo]\n    files: [\"*.rs\"]\n    pass_files: false\n    success: {{ exit_codes_findings: [101] }}\n    parsing:\n      strategy: json_violations\n      format: jsonl\n      filter: {filter}\n      field_map: {{ file: message/spans/0/file_name, line: message/spans/0/line_start, column: message/spans/0/column_start, code: message/code/code, message: message/message, severity: message/level }}\n"
        )
    };
    write(
        root,
        "quality.yaml",
        &config("\"reason == 'compiler-message'\""),
    );
    let (code, report) = check_json(root, &["--scope", "project", "--no-cache"]);
    assert_eq!(code, 1, "{report}");
    let found: Vec<(&str, &str)> = gate(&report, "cargo")["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["code"].as_str().unwrap(), v["severity"].as_str().unwrap()))
        .collect();
    assert_eq!(
        found,
        [("unused_variables", "warning"), ("E0308", "error")],
        "{report}"
    );
    // A filter that does not read is an error at its place.
    let bad = config("\"reason = 'compiler-message'\"");
    write(root, "quality.yaml", &bad);
    let (code, _, stderr) = check_out(root, &["--scope", "project"]);
    assert_eq!(code, 2, "{stderr}");
    let (line, column) = place_of(&bad, "\"reason = ");
    let message = problem_at(&stderr, line, column);
    assert!(
        message.contains("filter `reason = 'compiler-message'` cannot be read")
            && message.contains("has no `==` or `!=`"),
        "{message}"
    );
}

const SC_TEMPLATES: &str =
    "      templates: { code: \"SC{code}\", url: \"https://www.shellcheck.net/wiki/SC{code}\" }\n";

#[test]
fn templates_rebuild_fields_from_text_and_json_output() {
    let ws = workspace(&[("run.sh", "echo $1\n")]);
    let root = ws.path();
    tool(
        root,
        "tools/sc-text",
        "#!/bin/sh\necho \"$1:1:6: warning: Double quote to prevent globbing. [2086]\"\nexit 1\n",
    );
    tool(
        root,
        "tools/sc-json",
        "#!/bin/sh\necho \"{\\\"comments\\\":[{\\\"file\\\":\\\"$1\\\",\\\"line\\\":1,\\\"column\\\":6,\\\"level\\\":\\\"warning\\\",\\\"code\\\":2086,\\\"message\\\":\\\"Double quote to prevent globbing.\\\"}]}\"\nexit 1\n",
    );
    let text = format!(
        "  text:\n    command: [tools/sc-text]\n    files: [\"*.sh\"]\n    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[^:]+):(?P<line>\\d+):(?P<column>\\d+): (?P<severity>\\w+): (?P<message>.+) \\[(?P<code>\\d+)\\]$'\n{SC_TEMPLATES}"
    );
    let json = format!(
        "  json:\n    command: [tools/sc-json]\n    files: [\"*.sh\"]\n    parsing:\n      strategy: json_violations\n      violations_path: /comments\n      field_map: {{ file: file, line: line, column: column, code: code, message: message, severity: level }}\n{SC_TEMPLATES}"
    );
    write(
        root,
        "quality.yaml",
        &format!("version: 1\ngates:\n{text}{json}"),
    );
    let (code, report) = check_json(root, &["--scope", "project", "--no-cache"]);
    assert_eq!(code, 1, "{report}");
    for id in ["text", "json"] {
        let v = &gate(&report, id)["violations"][0];
        assert_eq!(v["code"], "SC2086", "{id}: {report}");
        assert_eq!(v["url"], "https://www.shellcheck.net/wiki/SC2086", "{id}");
        assert_eq!(v["message"], "Double quote to prevent globbing.", "{id}");
        assert_eq!(
            (v["line"].as_u64(), v["column"].as_u64()),
            (Some(1), Some(6))
        );
    }
    // A placeholder that names nothing read is an error at its place.
    let bad = format!(
        "version: 1\ngates:\n{}",
        json.replace("wiki/SC{code}", "wiki/SC{cod}")
    );
    write(root, "quality.yaml", &bad);
    let (code, _, stderr) = check_out(root, &["--scope", "project"]);
    assert_eq!(code, 2, "{stderr}");
    let (line, column) = place_of(&bad, "\"https://www.shellcheck.net/wiki/SC{cod}\"");
    let message = problem_at(&stderr, line, column);
    assert!(
        message.contains("templates.url uses `{cod}`")
            && message.contains("did you mean `{code}`?"),
        "{message}"
    );
}

#[test]
fn paths_relative_to_is_where_the_tools_paths_start() {
    let ws = workspace(&[("a/b/x.py", "x = 1\n")]);
    let root = ws.path();
    // Run in a/b, printing paths from a (as cargo does from its workspace's root).
    let gate_with = |key: &str| {
        format!(
            "version: 1\ngates:\n{}",
            text_gate(
                "lint",
                "[sh, -c, \"echo 'b/x.py:1: E1 bad'; exit 1\"]",
                &format!("    cwd: a/b\n{key}"),
            )
        )
    };
    write(
        root,
        "quality.yaml",
        &gate_with("    paths_relative_to: a\n"),
    );
    let (code, report) = check_json(root, &["--scope", "project", "--no-cache"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(files(&report, "lint"), ["a/b/x.py"], "{report}");
    // Without it the path is read from cwd, and names no file of the workspace.
    write(root, "quality.yaml", &gate_with(""));
    let (_, report) = check_json(root, &["--scope", "project", "--no-cache"]);
    assert_eq!(files(&report, "lint"), ["a/b/b/x.py"], "{report}");
    // A folder that does not exist: the gate cannot be read right, so it is an error.
    write(
        root,
        "quality.yaml",
        &gate_with("    paths_relative_to: nowhere\n"),
    );
    let (code, report) = check_json(root, &["--scope", "project", "--no-cache"]);
    assert_eq!(code, 3, "{report}");
    let error = gate(&report, "lint")["error"].as_str().unwrap();
    assert!(
        error.contains("paths_relative_to `nowhere` is not a folder in the workspace"),
        "{error}"
    );
    // Outside the workspace: a configuration error at the value.
    for outside in ["../elsewhere", "/tmp"] {
        let bad = gate_with(&format!("    paths_relative_to: {outside}\n"));
        write(root, "quality.yaml", &bad);
        let (code, _, stderr) = check_out(root, &["--scope", "project"]);
        assert_eq!(code, 2, "{stderr}");
        let (line, column) = place_of(&bad, outside);
        let message = problem_at(&stderr, line, column);
        assert!(
            message.contains(&format!(
                "paths_relative_to `{outside}` must be a folder inside the workspace"
            )),
            "{message}"
        );
    }
}

/// A workspace whose `lint` gate (`fail_on: error`) reports what `tools/lint` prints.
fn fail_on_error_workspace(output: &str) -> tempfile::TempDir {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    let root = ws.path();
    tool(
        root,
        "tools/lint",
        &format!("#!/bin/sh\nprintf '{output}'\nexit 1\n"),
    );
    write(
        root,
        "quality.yaml",
        &format!(
            "version: 1\ngates:\n{}",
            text_gate(
                "lint",
                "[tools/lint]",
                "    file_types: [.py]\n    fail_on: error\n    cache: none\n"
            )
        ),
    );
    ws
}

#[test]
fn fail_on_error_passes_with_warnings_and_still_lists_them() {
    let ws = fail_on_error_workspace("a.py:1: warning: W1 careful\\n");
    let (code, report) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 0, "{report}");
    let lint = gate(&report, "lint");
    assert_eq!(lint["status"], "passed", "{report}");
    let v = &lint["violations"][0];
    assert_eq!(
        (v["code"].as_str(), v["severity"].as_str()),
        (Some("W1"), Some("warning"))
    );
    // An error among them fails it.
    let ws = fail_on_error_workspace("a.py:1: warning: W1 careful\\na.py:1: error: E1 broken\\n");
    let (code, report) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(gate(&report, "lint")["status"], "failed");
    assert_eq!(
        gate(&report, "lint")["violations"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn fail_on_error_warnings_do_not_make_their_file_fail() {
    // a.py has a warning, b.py an error: the gate fails for b.py alone.
    let ws = fail_on_error_workspace("a.py:1: warning: W1 careful\\nb.py:1: error: E1 broken\\n");
    let root = ws.path();
    write(root, "b.py", "y = 1\n");
    common::markers::commit_all(root);
    git(root, &["checkout", "-qb", "feature"]);
    write(root, "a.py", "x = 2\n");
    write(root, "b.py", "y = 2\n");
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(files(&report, "lint"), ["a.py", "b.py"]);
    // The files the next `auto` run checks again are those that failed.
    let state: Value =
        serde_json::from_slice(&std::fs::read(root.join(".qgates/state.json")).unwrap()).unwrap();
    assert_eq!(
        state["branches"]["feature"]["failed_files"],
        json!(["b.py"]),
        "{state}"
    );
}

#[test]
fn fail_on_error_warnings_are_shown_in_the_editor() {
    let ws = fail_on_error_workspace("a.py:1: warning: W1 careful\\n");
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(ws.path(), &trust.path().join("t.json"), TrustAnswer::NotNow);
    c.initialize(json!({"trusted": true}));
    c.open("a.py");
    let diagnostics = c.diagnostics("a.py");
    let shown: Vec<(Value, Value)> = diagnostics
        .iter()
        .map(|d| (d["code"].clone(), d["severity"].clone()))
        .collect();
    assert_eq!(shown, [(json!("W1"), json!(2))], "{diagnostics:?}");
    let summary = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.summary"}),
        )
        .unwrap();
    assert_eq!(
        summary["report"]["gates"][0]["status"], "passed",
        "{summary}"
    );
    assert_eq!(summary["report"]["overall_pass"], true, "{summary}");
    c.shutdown();
}

#[test]
fn the_format_preset_reports_a_file_ruff_cannot_parse_beside_the_files_to_format() {
    // Text with accents before the error: ruff counts the column in characters.
    let broken = "x = 1\ns = \"héllo wörld\" ) + 1\n";
    let ws = workspace(&[
        ("broken.py", broken),
        ("ugly.py", "y=2\n"),
        ("fine.py", "z = 3\n"),
    ]);
    let root = ws.path();
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  fmt: { preset: ruff-format }\n",
    );
    let (code, report) = check_json(root, &["--scope", "project", "--no-cache"]);
    assert_eq!(code, 1, "{report}");
    let fmt = gate(&report, "fmt");
    assert_eq!(fmt["status"], "failed", "{report}");
    let (start, _) = token_span(broken, 2, ")", Unit::CodePoint);
    let found: Vec<Value> = fmt["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| json!([v["file"], v["code"], v["line"], v["column"]]))
        .collect();
    assert_eq!(
        found,
        [
            json!(["broken.py", "invalid-syntax", 2, start + 1]),
            json!(["ugly.py", "FORMAT", 1, 2])
        ],
        "{report}"
    );
}

#[test]
fn a_problem_in_a_reader_of_parsing_also_is_reported_at_that_reader() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    let root = ws.path();
    let yaml = "version: 1\ngates:\n  lint:\n    command: [x]\n    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[^:]+): (?P<message>.+)$'\n      also:\n        - strategy: json_violations\n          pattern: '^never$'\n          field_map: { message: m }\n        - stream: stderr\n          pattern: '^(?P<message>.+)$'\n";
    write(root, "quality.yaml", yaml);
    let (code, _, stderr) = check_out(root, &["--scope", "project"]);
    assert_eq!(code, 2, "{stderr}");
    let (line, column) = place_of(yaml, "pattern: '^never$'");
    let message = problem_at(&stderr, line, column);
    assert!(
        message.contains("`parsing.also[0].pattern` is not used by strategy json_violations"),
        "{message}"
    );
    let (line, column) = place_of(yaml, "stream: stderr");
    let message = problem_at(&stderr, line, column);
    assert!(
        message.contains("`parsing.also[1]` of gate `lint` has no `strategy`"),
        "{message}"
    );
    // The gate's own parsing is fine: nothing points at it.
    assert_eq!(stderr.matches("quality.yaml:").count(), 2, "{stderr}");
}
