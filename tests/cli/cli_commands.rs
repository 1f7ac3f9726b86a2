//! The command line itself: init, schema, parse, --help/--version, configuration discovery and
//! usage errors (exit code 2 with a message that says what to do).

use crate::common;

use common::{qgates, tool, workspace, write};

fn run(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = qgates(dir).args(args).output().expect("run qgates");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The gates of the Python default, one line each, as `qgates init` writes them.
const PYTHON_GATES: [&str; 3] = [
    "  ruff_format: { preset: ruff-format }",
    "  ruff_lint: { preset: ruff-lint }",
    "  mypy: { preset: mypy }",
];

fn has_python_gates(text: &str) -> bool {
    PYTHON_GATES.iter().all(|g| text.contains(g))
}

#[test]
fn init_writes_the_detected_gates_and_refuses_to_overwrite_without_force() {
    let ws = workspace(&[("app.py", "x = 1\n")]);
    let (code, out, _) = run(ws.path(), &["init"]);
    assert_eq!(code, 0);
    assert!(out.contains("quality.yaml"), "{out}");
    let written = std::fs::read_to_string(ws.path().join("quality.yaml")).unwrap();
    assert!(has_python_gates(&written), "{written}");

    write(ws.path(), "quality.yaml", "version: 1\n# mine\n");
    let (code, _, err) = run(ws.path(), &["init"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("already exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("quality.yaml")).unwrap(),
        "version: 1\n# mine\n"
    );

    let (code, _, _) = run(ws.path(), &["init", "--force"]);
    assert_eq!(code, 0);
    let written = std::fs::read_to_string(ws.path().join("quality.yaml")).unwrap();
    assert!(has_python_gates(&written), "{written}");
}

#[test]
fn init_also_respects_a_config_in_the_qgates_folder() {
    let ws = workspace(&[(".qgates/quality.yaml", "version: 1\n")]);
    let (code, _, err) = run(ws.path(), &["init"]);
    assert_eq!(code, 2, "{err}");
    assert!(!ws.path().join("quality.yaml").exists());
}

#[test]
fn schema_is_draft_07_json() {
    let ws = workspace(&[]);
    let (code, out, _) = run(ws.path(), &["schema"]);
    assert_eq!(code, 0);
    let schema: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    assert!(schema["properties"]["gates"].is_object());
}

#[test]
fn help_has_examples_and_version_matches_the_package() {
    let ws = workspace(&[]);
    let (code, out, _) = run(ws.path(), &["--help"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("Examples:") && out.contains("qgates check"),
        "{out}"
    );
    let (code, out, _) = run(ws.path(), &["check", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("Exit codes: 0 green, 1 violations"), "{out}");
    let (code, out, _) = run(ws.path(), &["--version"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), format!("qgates {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn a_broken_configuration_exits_2_with_its_place_and_runs_nothing() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    tool(ws.path(), "ok.sh", "#!/bin/sh\ntouch ran\nexit 0\n");
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  a:\n    command: [\"./ok.sh\"]\n    timout_s: 5\n    parsing: { strategy: exit_code }\n",
    );
    let (code, out, err) = run(ws.path(), &["check", "--scope", "project"]);
    assert_eq!(code, 2);
    assert!(out.is_empty(), "{out}");
    // The gate's command is valid and would write `ran`: only the mistake stops it.
    assert!(
        err.contains("quality.yaml:5:5") && err.contains("did you mean `timeout_s`"),
        "{err}"
    );
    assert!(!ws.path().join("ran").exists());
}

#[test]
fn config_discovery_and_explicit_config() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    tool(ws.path(), "ok.sh", "#!/bin/sh\nexit 0\n");
    let cfg = |id: &str| {
        format!(
            "version: 1\ngates:\n  {id}:\n    command: [\"./ok.sh\"]\n    parsing: {{ strategy: exit_code }}\n"
        )
    };
    write(ws.path(), ".qgates/quality.yaml", &cfg("from_dot_qgates"));
    let (_, r) = common::check_json(ws.path(), &[]);
    assert_eq!(r["gates"][0]["id"], "from_dot_qgates");
    write(ws.path(), "quality.yaml", &cfg("from_root"));
    let (_, r) = common::check_json(ws.path(), &[]);
    assert_eq!(r["gates"][0]["id"], "from_root");
    write(ws.path(), "other.yaml", &cfg("from_flag"));
    let (_, r) = common::check_json(ws.path(), &["--config", "other.yaml"]);
    assert_eq!(r["gates"][0]["id"], "from_flag");
    let (code, _, err) = run(ws.path(), &["check", "--config", "missing.yaml"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("missing.yaml") && err.contains("does not exist"),
        "{err}"
    );
}

#[test]
fn the_root_is_found_from_the_paths_given() {
    let ws = workspace(&[("proj/a.py", "x = 1\n")]);
    tool(ws.path(), "proj/ok.sh", "#!/bin/sh\nexit 0\n");
    write(
        ws.path(),
        "proj/quality.yaml",
        "version: 1\ngates:\n  g:\n    command: [\"./ok.sh\"]\n    parsing: { strategy: exit_code }\n",
    );
    let (code, r) = common::check_json(ws.path(), &["proj/a.py"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["gates"][0]["id"], "g");
    assert_eq!(r["scope"]["files_checked"], 1);
}

#[test]
fn usage_errors_say_what_to_do() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    let (code, _, err) = run(ws.path(), &["check", "--scope", "files"]);
    assert_eq!(code, 2);
    assert!(err.contains("needs paths"), "{err}");
    let (code, _, err) = run(ws.path(), &["check", "nope.py"]);
    assert_eq!(code, 2);
    assert!(err.contains("`nope.py` does not exist"), "{err}");
    let (code, _, err) = run(ws.path(), &["check", "--format", "yaml"]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid value 'yaml'"), "{err}");
    let (code, _, err) = run(ws.path(), &["frobnicate"]);
    assert_eq!(code, 2);
    assert!(err.contains("unrecognized subcommand"), "{err}");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("b.py"), "").unwrap();
    let b = outside.path().join("b.py");
    let (code, _, err) = run(ws.path(), &["check", "--root", ".", b.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("outside the workspace root"), "{err}");
}

#[test]
fn parse_reads_a_saved_output_with_a_gates_rules() {
    let ws = workspace(&[]);
    let saved = "[{\"filename\": \"a.py\", \"location\": {\"row\": 2, \"column\": 5}, \"end_location\": {\"row\": 2, \"column\": 9}, \"code\": \"F821\", \"message\": \"Undefined name `x`\", \"url\": null, \"fix\": null}]";
    write(ws.path(), "out.json", saved);
    let (code, out, err) = run(ws.path(), &["parse", "ruff_lint", "out.json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["violations"][0]["code"], "F821");
    assert_eq!(v["violations"][0]["line"], 2);
    write(ws.path(), "bad.json", "<html>502 Bad Gateway</html>");
    let (code, _, err) = run(ws.path(), &["parse", "ruff_lint", "bad.json"]);
    assert_eq!(code, 3);
    assert!(err.contains("not valid JSON"), "{err}");
}

#[test]
fn status_reports_config_trust_and_tools_without_running_anything() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    tool(
        ws.path(),
        "tools/lint",
        "#!/bin/sh\ntouch \"$(dirname \"$0\")/../ran\"\n",
    );
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\nactive_gates: [lint, gone]\ngates:\n  lint:\n    command: [tools/lint]\n    parsing: { strategy: exit_code }\n  gone:\n    command: [no-such-tool-qgates]\n    optional: true\n    parsing: { strategy: exit_code }\n",
    );
    let trust = tempfile::tempdir().unwrap();
    let trust_file = trust.path().join("trust.json");
    let status = |dir: &std::path::Path| {
        let out = qgates(dir)
            .env("QGATES_TRUST_FILE", &trust_file)
            .args(["status", "--json"])
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap(),
        )
    };
    let (code, s) = status(ws.path());
    assert_eq!(code, 0, "{s}");
    assert_eq!(s["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(s["config_ok"], true);
    assert!(
        s["config"].as_str().unwrap().ends_with("quality.yaml"),
        "{s}"
    );
    assert_eq!(s["trusted"], false);
    assert_eq!(s["gates"][0]["id"], "lint");
    assert_eq!(s["gates"][0]["found"], true);
    assert_eq!(s["gates"][1]["found"], false);
    assert!(
        s["gates"][1]["problem"]
            .as_str()
            .unwrap()
            .contains("not found"),
        "{s}"
    );
    assert!(!ws.path().join("ran").exists(), "status runs no gate");

    // What would run, with the workspace's own script covered by content.
    let runs = s["runs"].as_str().unwrap();
    assert!(runs.contains("• gate lint: tools/lint FILES…"), "{runs}");
    assert!(
        runs.contains("runs tools/lint from this repository (sha256 "),
        "{runs}"
    );
    assert!(runs.contains("no-such-tool-qgates"), "{runs}");

    // From a script, `qgates trust` shows what runs and trusts nothing without --yes.
    let trust = |args: &[&str]| {
        qgates(ws.path())
            .env("QGATES_TRUST_FILE", &trust_file)
            .arg("trust")
            .args(args)
            .output()
            .unwrap()
    };
    let out = trust(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("• gate lint: tools/lint"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("qgates trust --yes"));
    assert_eq!(status(ws.path()).1["trusted"], false);
    let out = trust(&["--yes"]);
    assert!(out.status.success());
    assert_eq!(status(ws.path()).1["trusted"], true);

    // The script it runs changes: trusted no more.
    write(
        ws.path(),
        "tools/lint",
        "#!/bin/sh\nrm -rf \"$HOME/nothing-here\"\n",
    );
    assert_eq!(status(ws.path()).1["trusted"], false);
    assert!(trust(&["-y"]).status.success());
    assert_eq!(status(ws.path()).1["trusted"], true);

    // A broken file: exit 2, the error with its place, and nothing trusted.
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\nactive_gates: [lint\n",
    );
    let (code, s) = status(ws.path());
    assert_eq!(code, 2);
    assert_eq!(s["config_ok"], false);
    assert_eq!(s["trusted"], false);
    assert!(
        s["config_errors"]
            .as_str()
            .unwrap()
            .contains("quality.yaml:"),
        "{s}"
    );

    // For people: lines, not JSON.
    let (code, out, _) = run(ws.path(), &["status"]);
    assert_eq!(code, 2);
    assert!(out.contains("configuration errors"), "{out}");
}
