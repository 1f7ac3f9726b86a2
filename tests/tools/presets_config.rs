//! Presets as a person writes them: `preset: NAME` alone, keys beside it, the mistakes one can
//! make with them, a preset's missing tool, and `qgates presets` (its table, JSON, `show`, the
//! schema's names and docs/presets.md). The real binary, the real ruff and mypy.

use crate::common;

use std::path::Path;

use common::{check_json, fixture_copy, gate, problem_at, qgates, workspace, write};
use serde_json::Value;

/// The example project's own `quality.yaml` writes the three Python gates by hand.
const PRESET_GATES: &str = "version: 1\nactive_gates: [ruff_format, ruff_lint, mypy]\nproject_scope:\n  include_globs: [\"src/**/*.py\"]\ngates:\n  ruff_format: { preset: ruff-format }\n  ruff_lint: { preset: ruff-lint }\n  mypy: { preset: mypy }\n";

/// An unused import (F401) and an unused variable (F841): both in ruff's default rules.
const TWO_RULES: &str = "import os\n\n\ndef f() -> None:\n    y = 1\n";

/// The codes a gate reported, sorted.
fn codes(report: &Value, id: &str) -> Vec<String> {
    let mut codes: Vec<String> = gate(report, id)["violations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| v["code"].as_str().unwrap_or_default().to_string())
        .collect();
    codes.sort();
    codes
}

/// The files a gate reported, sorted and unique.
fn files(report: &Value, id: &str) -> Vec<String> {
    let mut files: Vec<String> = gate(report, id)["violations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| v["file"].as_str().unwrap_or_default().to_string())
        .collect();
    files.sort();
    files.dedup();
    files
}

/// `qgates check` on a configuration that does not load: its exit code and stderr.
fn config_errors(root: &Path) -> (i32, String) {
    let out = qgates(root)
        .args(["check", "--scope", "project"])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `qgates presets` with `args`; panics unless it succeeds.
fn presets(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = qgates(dir.path())
        .arg("presets")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every file under `presets/`, as YAML read independently of qgates: name → content.
fn preset_files() -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&p).unwrap();
            (name, serde_saphyr::from_str::<Value>(&text).unwrap())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(!out.is_empty(), "no preset files in {}", dir.display());
    out
}

#[test]
fn presets_alone_find_what_the_hand_written_gates_find() {
    let ws = fixture_copy("python-basic");
    let root = ws.path();
    let (_, by_hand) = check_json(root, &["--scope", "project", "--no-cache"]);
    write(root, "quality.yaml", PRESET_GATES);
    let (_, by_preset) = check_json(root, &["--scope", "project", "--no-cache"]);
    for id in ["ruff_format", "ruff_lint", "mypy"] {
        let (hand, preset) = (gate(&by_hand, id), gate(&by_preset, id));
        assert!(
            hand["violations"].as_array().is_some_and(|v| !v.is_empty()),
            "the example has findings for {id}: {by_hand}"
        );
        // The mypy preset links each error code to mypy's docs, which the example's gate does
        // not; every other field must be the same.
        let without_url = |v: &Value| {
            let mut v = v.clone();
            for x in v.as_array_mut().into_iter().flatten() {
                x.as_object_mut().map(|o| o.remove("url"));
            }
            v
        };
        let (p, h) = (&preset["violations"], &hand["violations"]);
        if id == "mypy" {
            assert_eq!(without_url(p), without_url(h), "{id}");
        } else {
            assert_eq!(p, h, "{id}");
        }
        assert_eq!(preset["status"], hand["status"], "{id}");
        assert_eq!(preset["name"], hand["name"], "{id}");
    }
}

#[test]
fn a_command_and_a_name_beside_a_preset_win() {
    let ws = workspace(&[("a.py", TWO_RULES)]);
    let root = ws.path();
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  lint: { preset: ruff-lint }\n",
    );
    let (_, alone) = check_json(root, &["--scope", "project", "--no-cache"]);
    assert_eq!(codes(&alone, "lint"), ["F401", "F841"], "{alone}");
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  lint:\n    preset: ruff-lint\n    name: Unused imports\n    command: [ruff, check, --output-format, json, --no-fix, --select, F401]\n",
    );
    let (code, beside) = check_json(root, &["--scope", "project", "--no-cache"]);
    assert_eq!(code, 1, "{beside}");
    assert_eq!(gate(&beside, "lint")["name"], "Unused imports");
    assert_eq!(codes(&beside, "lint"), ["F401"], "{beside}");
    // The rest is still the preset's: its field map read the position and the fix.
    let v = &gate(&beside, "lint")["violations"][0];
    assert_eq!(
        (v["file"].as_str(), v["line"].as_u64()),
        (Some("a.py"), Some(1))
    );
    assert_eq!(v["fixable"], true, "{v}");
}

#[test]
fn parsing_keys_and_env_beside_a_preset_refine_it() {
    let ws = workspace(&[("a.py", TWO_RULES)]);
    let root = ws.path();
    // Only the severity: the preset's strategy and field map still read every finding.
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  lint:\n    preset: ruff-lint\n    parsing: { defaults: { severity: warning } }\n    env: { RUFF_CACHE_DIR: cache-from-env }\n",
    );
    let (_, report) = check_json(root, &["--scope", "project", "--no-cache"]);
    assert_eq!(codes(&report, "lint"), ["F401", "F841"], "{report}");
    for v in gate(&report, "lint")["violations"].as_array().unwrap() {
        assert_eq!(v["severity"], "warning", "{v}");
        assert_eq!(v["file"], "a.py", "{v}");
        assert!(v["line"].as_u64().is_some() && v["url"].is_string(), "{v}");
    }
    assert!(
        root.join("cache-from-env").is_dir(),
        "the gate's env reached the preset's tool"
    );
}

/// (That the preset's `exit_codes_ok` stays is checked by the unit tests of `presets::merge`:
/// every preset's is the default, `[0]`, so no run tells the two apart.)
#[test]
fn exit_codes_findings_beside_a_preset_replace_the_presets_list() {
    // ruff format exits 2 when a file does not parse; the preset counts that as findings.
    let ws = workspace(&[("broken.py", "x = (\n"), ("ugly.py", "y=2\n")]);
    let root = ws.path();
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  fmt:\n    preset: ruff-format\n    success: { exit_codes_findings: [1] }\n",
    );
    let (code, report) = check_json(root, &["--scope", "project", "--no-cache"]);
    assert_eq!(code, 3, "{report}");
    let error = gate(&report, "fmt")["error"].as_str().unwrap();
    assert!(
        error.contains("exited with code 2") && error.contains("exit_codes_findings [1]"),
        "{error}"
    );
    // Without the file ruff cannot parse, the rest of the preset's gate is untouched.
    std::fs::remove_file(root.join("broken.py")).unwrap();
    let (code, report) = check_json(root, &["--scope", "project", "--no-cache"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(codes(&report, "fmt"), ["FORMAT"], "{report}");
}

#[test]
fn files_or_file_types_beside_a_preset_replace_its_files() {
    let ws = workspace(&[
        ("src/a.py", TWO_RULES),
        ("b.py", TWO_RULES),
        ("c.pyi", "import os\n"),
    ]);
    let root = ws.path();
    let run = |extra: &str| {
        write(
            root,
            "quality.yaml",
            &format!("version: 1\ngates:\n  lint:\n    preset: ruff-lint\n{extra}"),
        );
        check_json(root, &["--scope", "project", "--no-cache"]).1
    };
    assert_eq!(files(&run(""), "lint"), ["b.py", "c.pyi", "src/a.py"]);
    assert_eq!(
        files(&run("    files: [\"src/*.py\"]\n"), "lint"),
        ["src/a.py"]
    );
    // `file_types` alone replaces the preset's `files` too: the two are one setting.
    assert_eq!(files(&run("    file_types: [.pyi]\n"), "lint"), ["c.pyi"]);
}

#[test]
fn an_unknown_preset_is_an_error_at_its_value_with_the_closest_name() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  lint:\n    preset: ruff-lnt\n",
    );
    let (code, stderr) = config_errors(ws.path());
    assert_eq!(code, 2, "{stderr}");
    let message = problem_at(&stderr, 4, 13);
    assert!(message.contains("no preset `ruff-lnt`"), "{message}");
    assert!(message.contains("did you mean `ruff-lint`?"), "{message}");
}

#[test]
fn another_strategy_without_its_keys_says_the_presets_parsing_is_not_used() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  lint:\n    preset: ruff-lint\n    parsing:\n      strategy: text_violations\n",
    );
    let (code, stderr) = config_errors(ws.path());
    assert_eq!(code, 2, "{stderr}");
    let replaced: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("quality.yaml:6:17: ") && l.contains("replaces preset"))
        .collect();
    assert_eq!(replaced.len(), 1, "{stderr}");
    assert!(
        replaced[0].contains("preset `ruff-lint`'s")
            && replaced[0].contains("none of the preset's parsing keys are used"),
        "{stderr}"
    );
}

#[test]
fn a_key_of_another_strategy_in_a_presets_parsing_is_an_error_at_its_place() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  lint:\n    preset: ruff-lint\n    parsing:\n      pattern: '^(?P<message>.+)$'\n",
    );
    let (code, stderr) = config_errors(ws.path());
    assert_eq!(code, 2, "{stderr}");
    let message = problem_at(&stderr, 6, 7);
    assert!(
        message.contains("`parsing.pattern` is not used by strategy json_violations"),
        "{message}"
    );
}

#[test]
fn a_gate_without_preset_or_command_says_to_add_one() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  lint:\n    name: Lint\n",
    );
    let (code, stderr) = config_errors(ws.path());
    assert_eq!(code, 2, "{stderr}");
    let command = stderr
        .lines()
        .find(|l| l.contains("quality.yaml:3:3: ") && l.contains("has no `command`"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        command.contains("Add the tool's argv") && command.contains("use a `preset`"),
        "{command}"
    );
}

#[test]
fn a_command_without_a_value_beside_a_preset_is_still_an_error() {
    // The key is there with nothing after it: a mistake, not "take the preset's command".
    let ws = workspace(&[("a.py", "x = 1\n")]);
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  lint:\n    preset: ruff-lint\n    command:\n",
    );
    let (code, stderr) = config_errors(ws.path());
    assert_eq!(code, 2, "{stderr}");
    let message = problem_at(&stderr, 5, 12);
    assert!(
        message.contains("`command` in gate `lint` has no value"),
        "{message}"
    );
}

/// `qgates check` with a PATH that holds `sh` and the usual system tools but not ruff.
fn check_without_ruff(root: &Path) -> (i32, Value) {
    let system = "/usr/bin:/bin";
    let found = std::process::Command::new("sh")
        .args(["-c", "command -v ruff"])
        .env("PATH", system)
        .output()
        .unwrap();
    assert!(!found.status.success(), "ruff is installed in {system}");
    let out = qgates(root)
        .env("PATH", system)
        .args(["check", "--scope", "project", "--format", "json"])
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap();
    (out.status.code().unwrap_or(-1), report)
}

#[test]
fn a_presets_missing_tool_says_how_to_install_it() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    let root = ws.path();
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  lint: { preset: ruff-lint, optional: true }\n  fmt: { preset: ruff-format }\n",
    );
    let (code, report) = check_without_ruff(root);
    assert_eq!(code, 3, "{report}");
    let lint = gate(&report, "lint");
    assert_eq!(lint["status"], "skipped", "{report}");
    let reason = lint["skip_reason"].as_str().unwrap();
    assert!(
        reason.contains("`ruff` was not found") && reason.contains("Install it: pip install ruff"),
        "{reason}"
    );
    let fmt = gate(&report, "fmt");
    assert_eq!(fmt["status"], "error", "{report}");
    let error = fmt["error"].as_str().unwrap();
    assert!(
        error.contains("`ruff` was not found") && error.contains("Install it: pip install ruff"),
        "{error}"
    );
}

#[test]
fn the_table_and_the_json_list_every_preset_file() {
    let table = presets(&[]);
    let json: Value = serde_json::from_str(&presets(&["--format", "json"])).unwrap();
    let listed = json.as_array().unwrap();
    let files = preset_files();
    assert_eq!(listed.len(), files.len(), "{json}");
    for ((name, file), entry) in files.iter().zip(listed) {
        let about = &file["about"];
        assert_eq!(entry["name"], name.as_str(), "{entry}");
        for key in ["tool", "languages", "install", "homepage"] {
            assert_eq!(entry[key], about[key], "{name}: {key}");
        }
        let languages: Vec<&str> = about["languages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        let row = table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name.as_str()))
            .unwrap_or_else(|| panic!("no row for {name} in:\n{table}"));
        let cells: Vec<&str> = row
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(
            cells,
            [
                name.as_str(),
                about["tool"].as_str().unwrap(),
                &languages.join(", "),
                about["install"].as_str().unwrap()
            ],
            "{row}"
        );
    }
    assert!(table.starts_with("NAME"), "{table}");
}

#[test]
fn a_shown_preset_put_in_a_configuration_finds_what_the_preset_finds() {
    let shown = presets(&["show", "ruff-lint"]);
    let gate_yaml: String = shown
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("  {l}\n"))
        .collect();
    assert!(gate_yaml.starts_with("  ruff-lint:\n"), "{shown}");
    let ws = workspace(&[("a.py", TWO_RULES), ("b.py", "x = 1\n")]);
    let root = ws.path();
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  ruff-lint: { preset: ruff-lint }\n",
    );
    let (_, by_preset) = check_json(root, &["--scope", "project", "--no-cache"]);
    write(
        root,
        "quality.yaml",
        &format!("version: 1\ngates:\n{gate_yaml}"),
    );
    let (code, by_copy) = check_json(root, &["--scope", "project", "--no-cache"]);
    assert_eq!(code, 1, "{by_copy}");
    let (copy, preset) = (gate(&by_copy, "ruff-lint"), gate(&by_preset, "ruff-lint"));
    assert_eq!(codes(&by_copy, "ruff-lint"), ["F401", "F841"]);
    for key in ["name", "status", "violations", "fix_hint", "files_checked"] {
        assert_eq!(copy[key], preset[key], "{key}");
    }
}

#[test]
fn showing_an_unknown_preset_is_a_usage_error_with_the_closest_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = qgates(dir.path())
        .args(["presets", "show", "ruff-lnt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no preset `ruff-lnt`") && stderr.contains("did you mean `ruff-lint`?"),
        "{stderr}"
    );
}

#[test]
fn the_schema_completes_exactly_the_catalogs_names() {
    let dir = tempfile::tempdir().unwrap();
    let out = qgates(dir.path()).arg("schema").output().unwrap();
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<Value> = preset_files()
        .into_iter()
        .map(|(n, _)| Value::String(n))
        .collect();
    assert_eq!(
        schema["definitions"]["RawGate"]["properties"]["preset"]["anyOf"][0]["enum"],
        Value::Array(names)
    );
}

#[test]
fn docs_presets_md_matches_the_catalog() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/presets.md");
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    let generated = presets(&["--format", "markdown"]);
    assert!(
        written == generated,
        "docs/presets.md does not match the preset catalog. Regenerate it: `cargo run -- presets --format markdown > docs/presets.md`"
    );
    for (name, _) in preset_files() {
        assert!(generated.contains(&format!("| `{name}` |")), "{name}");
    }
}
