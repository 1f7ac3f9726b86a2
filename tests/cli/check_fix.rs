//! `qgates check --fix`: the gates' whole-file fixers rewrite the files in scope, then the check
//! runs; a fixer that fails leaves the file as it was and the report says so.

use crate::common;

use common::{check_json, fixture_copy, gate, tool, workspace, write};

#[test]
fn the_formatter_fixes_the_example_before_the_check() {
    let ws = fixture_copy("python-basic");
    let root = ws.path();
    let before = std::fs::read_to_string(root.join("src/unformatted.py")).unwrap();
    let (code, report) = check_json(root, &["--fix", "--no-state", "src/unformatted.py"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["fixed"], serde_json::json!(["src/unformatted.py"]));
    assert_eq!(gate(&report, "ruff_format")["status"], "passed");
    let after = std::fs::read_to_string(root.join("src/unformatted.py")).unwrap();
    assert_ne!(before, after);

    // Nothing left to fix: nothing is rewritten, and the report says nothing about fixing.
    let (code, report) = check_json(root, &["--fix", "--no-state", "src/unformatted.py"]);
    assert_eq!(code, 0, "{report}");
    assert!(report.get("fixed").is_none(), "{report}");
}

/// A gate whose fixer upper-cases the file (`tr`), or fails, or prints nothing.
fn config(fixer: &str) -> String {
    format!(
        "version: 1\ngates:\n  shout:\n    command: [\"./check.sh\"]\n    file_types: [\".txt\"]\n    cache: none\n    fix: {{ command: {fixer} }}\n    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[^:\\n]+): lower case$'\n"
    )
}

/// Flags every file that has a lower-case letter.
const CHECK: &str = "#!/bin/sh\nfound=0\nfor f in \"$@\"; do\n  if grep -q '[a-z]' \"$f\"; then echo \"$f: lower case\"; found=1; fi\ndone\nexit $found\n";

#[test]
fn a_fixer_rewrites_files_and_a_failing_one_leaves_them_alone() {
    let ws = workspace(&[("a.txt", "hello\n"), ("b.txt", "OK\n")]);
    let root = ws.path();
    tool(root, "check.sh", CHECK);
    write(root, "quality.yaml", &config(r#"["tr", "a-z", "A-Z"]"#));
    let (code, report) = check_json(root, &["--fix", "--scope", "project"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["fixed"], serde_json::json!(["a.txt"]));
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "HELLO\n"
    );

    // A fixer that exits 1 when problems it cannot fix remain, as its `exit_codes_ok` says.
    write(root, "a.txt", "hello\n");
    let exits_1 = r#"["sh", "-c", "tr a-z A-Z; exit 1"], exit_codes_ok: [0, 1]"#;
    write(root, "quality.yaml", &config(exits_1));
    let (code, report) = check_json(root, &["--fix", "--scope", "project"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["fixed"], serde_json::json!(["a.txt"]));

    for (fixer, why) in [
        (r#"["sh", "-c", "exit 3"]"#, "exit code 3"),
        (r#"["sh", "-c", "tr a-z A-Z; exit 1"]"#, "exit code 1"),
        (r#"["true"]"#, "it printed nothing"),
        (
            r#"["sh", "-c", "exit 1"], exit_codes_ok: [0, 1]"#,
            "it printed nothing",
        ),
    ] {
        write(root, "a.txt", "hello\n");
        write(root, "quality.yaml", &config(fixer));
        let (code, report) = check_json(root, &["--fix", "--scope", "project"]);
        assert_eq!(code, 1, "{report}");
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).unwrap(),
            "hello\n"
        );
        assert!(report.get("fixed").is_none(), "{report}");
        let note = report["scope"]["note"].as_str().unwrap_or_default();
        assert!(
            note.contains("shout could not fix a.txt") && note.contains(why),
            "{report}"
        );
    }
}
