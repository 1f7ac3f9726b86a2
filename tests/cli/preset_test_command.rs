//! `qgates presets test PRESET FIXTURE` (docs/presets.md, "Testing a preset"): a team's preset
//! file run against its fixture folder with the real ruff, passing, failing with what differed,
//! and refusing what it cannot run.

use crate::common;

use std::path::Path;

use common::{qgates, write};

/// A team's copy of the catalog's ruff-lint preset and of its fixture, in a folder of its own.
fn team_preset() -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let preset = std::fs::read_to_string(repo.join("presets/ruff-lint.yaml")).unwrap();
    write(dir.path(), "tools/qgates/ourlint.yaml", &preset);
    for name in ["bad.py", "clean.py", "expected.yaml"] {
        let text = std::fs::read_to_string(repo.join("fixtures/presets/ruff-lint").join(name));
        write(
            dir.path(),
            &format!("tools/qgates/ourlint/{name}"),
            &text.unwrap(),
        );
    }
    dir
}

fn presets_test(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = qgates(dir)
        .args(["presets", "test"])
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

#[test]
fn a_preset_that_does_what_its_fixture_says_passes_every_check() {
    let dir = team_preset();
    let args = ["./tools/qgates/ourlint.yaml", "tools/qgates/ourlint"];
    let (code, out) = presets_test(dir.path(), &args);
    assert_eq!(code, Some(0), "{out}");
    for check in ["places", "report", "tool", "clean", "fix"] {
        assert!(
            out.contains(&format!("  ok    {check}: ")),
            "{check}:\n{out}"
        );
    }
    assert!(out.contains("exactly the 2 expected findings"), "{out}");
}

#[test]
fn a_finding_the_tool_does_not_report_fails_with_both_lists() {
    let dir = team_preset();
    let expected = dir.path().join("tools/qgates/ourlint/expected.yaml");
    let text = std::fs::read_to_string(&expected).unwrap();
    // The F821 finding is said to be one line lower than where ruff reports it.
    let moved = text
        .replace("at: bad.py:4:28", "at: bad.py:5:28")
        .replace("\"row\": 4", "\"row\": 5");
    assert_ne!(moved, text);
    std::fs::write(&expected, moved).unwrap();
    let args = ["tools/qgates/ourlint.yaml", "tools/qgates/ourlint"];
    let (code, out) = presets_test(dir.path(), &args);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("  FAIL  report:"), "{out}");
    assert!(
        out.contains("bad.py:4:28 F821"),
        "what qgates reported:\n{out}"
    );
    assert!(
        out.contains("bad.py:5:28 F821"),
        "what expected.yaml says:\n{out}"
    );
    assert!(out.contains("  FAIL  tool:"), "ruff says row 4:\n{out}");
    assert!(out.contains("checks failed"), "{out}");
}

#[test]
fn a_missing_tool_a_bad_preset_file_and_a_folder_without_expectations_are_refused() {
    let dir = team_preset();
    let preset = dir.path().join("tools/qgates/ourlint.yaml");
    let text = std::fs::read_to_string(&preset).unwrap();
    let fixture = "tools/qgates/ourlint";

    write(
        dir.path(),
        "tools/qgates/missing.yaml",
        &text.replace("command: [ruff,", "command: [no-such-linter-here,"),
    );
    let (code, out) = presets_test(dir.path(), &["tools/qgates/missing.yaml", fixture]);
    assert_eq!(code, Some(3), "{out}");
    assert!(
        out.contains("no-such-linter-here") && out.contains("not found"),
        "{out}"
    );

    write(
        dir.path(),
        "tools/qgates/typo.yaml",
        &text.replace("gate:", "gaet:"),
    );
    let (code, out) = presets_test(dir.path(), &["tools/qgates/typo.yaml", fixture]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("is not a preset file") && out.contains("gaet"),
        "{out}"
    );

    let (code, out) = presets_test(dir.path(), &["tools/qgates/ourlint.yaml", "tools"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("expected.yaml"), "{out}");

    let (code, out) = presets_test(dir.path(), &["rufff-lint", fixture]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("no catalog preset `rufff-lint`"), "{out}");
}

/// A preset whose `args_when` points the tool at a configuration file the fixture has: the
/// tool's own run gets those arguments too, as qgates gives them (E501 is not among ruff's
/// default rules, so without `--config strict.toml` ruff would not say it).
#[test]
fn the_tools_own_run_gets_what_args_when_adds() {
    let dir = team_preset();
    let root = dir.path();
    let preset = std::fs::read_to_string(root.join("tools/qgates/ourlint.yaml")).unwrap();
    // No fixer: ruff cannot fix a long line.
    let without_fix: String = preset
        .lines()
        .filter(|l| !l.starts_with("  fix: "))
        .map(|l| format!("{l}\n"))
        .collect();
    let with_config = without_fix.replace(
        "  command: [ruff,",
        "  args_when: { strict.toml: [--config, strict.toml] }\n  command: [ruff,",
    );
    assert_ne!(with_config, preset);
    write(root, "tools/qgates/strict.yaml", &with_config);
    let fixture = "tools/qgates/strict";
    write(
        root,
        &format!("{fixture}/strict.toml"),
        "line-length = 20\n\n[lint]\nselect = [\"E501\"]\n",
    );
    write(
        root,
        &format!("{fixture}/bad.py"),
        "x = \"é🎉 une ligne trop longue\"\n",
    );
    write(root, &format!("{fixture}/clean.py"), "y = 1\n");
    write(
        root,
        &format!("{fixture}/expected.yaml"),
        "findings:\n  - at: bad.py:1:20\n    code: E501\n    points_at: rop longue\n    tool_says: '\"code\": \"E501\",'\n",
    );
    let (code, out) = presets_test(root, &["tools/qgates/strict.yaml", fixture]);
    assert!(out.contains("  ok    tool: "), "{out}");
    assert_eq!(code, Some(0), "{out}");
}
