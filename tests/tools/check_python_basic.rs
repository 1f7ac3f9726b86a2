//! `qgates check` on the bundled example with the real ruff and mypy: the exact violations those
//! tools report, in every output format.

use crate::common;

use std::path::Path;

use common::places::{Unit, token_span};
use common::{check_json, fixture_copy, gate, qgates};
use serde_json::Value;

/// (gate, file, line, column, code, fixable) of one violation.
type Row = (String, String, Option<u64>, Option<u64>, String, bool);
type Expected<'a> = (&'a str, &'a str, Option<u64>, Option<u64>, &'a str, bool);

/// Every violation the example has on its ASCII lines.
const EXPECTED: [Expected; 4] = [
    // ruff format's finding is at the first character it would change: the `+` it spaces out.
    (
        "ruff_format",
        "src/unformatted.py",
        Some(5),
        Some(20),
        "FORMAT",
        true,
    ),
    (
        "ruff_lint",
        "src/unused_import.py",
        Some(3),
        Some(8),
        "F401",
        true,
    ),
    (
        "ruff_lint",
        "src/with space.py",
        Some(3),
        Some(8),
        "F401",
        true,
    ),
    (
        "mypy",
        "src/type_error.py",
        Some(5),
        Some(12),
        "return-value",
        false,
    ),
];

fn violations(report: &Value) -> Vec<Row> {
    let mut out = Vec::new();
    for g in report["gates"].as_array().unwrap() {
        for v in g["violations"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            out.push((
                g["id"].as_str().unwrap().to_string(),
                v["file"].as_str().unwrap_or_default().to_string(),
                v["line"].as_u64(),
                v["column"].as_u64(),
                v["code"].as_str().unwrap_or_default().to_string(),
                v["fixable"].as_bool().unwrap_or(false),
            ));
        }
    }
    out.sort();
    out
}

fn expected() -> Vec<Row> {
    let mut e: Vec<_> = EXPECTED
        .iter()
        .map(|(g, f, l, c, code, fx)| (g.to_string(), f.to_string(), *l, *c, code.to_string(), *fx))
        .collect();
    // After the non-ASCII text of `unicode_line.py`, each finding on its token, found in the
    // text; the report counts code points from 1 (docs/design.md).
    let file = "src/unicode_line.py";
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/python-basic")
            .join(file),
    )
    .expect("read the example");
    for (g, code, token) in [
        ("ruff_lint", "E702", ";"),
        ("mypy", "assignment", "\"3\""),
        ("ruff_format", "FORMAT", ";"),
    ] {
        let column = token_span(&text, 3, token, Unit::CodePoint).0 as u64 + 1;
        e.push((
            g.into(),
            file.into(),
            Some(3),
            Some(column),
            code.into(),
            g == "ruff_format",
        ));
    }
    e.sort();
    e
}

const SUMMARY: &str =
    "❌ 3/3 gates failed — 7 violations (4 auto-fixable): ruff_format, ruff_lint, mypy";

#[test]
fn json_has_exactly_the_violations_the_tools_report() {
    let ws = fixture_copy("python-basic");
    let (code, r) = check_json(ws.path(), &["--scope", "project"]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(violations(&r), expected(), "{r}");
    assert_eq!(r["summary"]["total_violations"], 7);
    assert_eq!(r["summary"]["auto_fixable"], 4);
    assert_eq!(r["scope"]["mode"], "project");
    assert_eq!(r["scope"]["files_checked"], 6);
    let lint = gate(&r, "ruff_lint");
    let f401 = lint["violations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["file"] == "src/unused_import.py")
        .unwrap();
    assert_eq!(f401["end_line"], 3);
    assert_eq!(f401["end_column"], 10);
    assert_eq!(
        f401["url"],
        "https://docs.astral.sh/ruff/rules/unused-import"
    );
    assert_eq!(f401["message"], "`os` imported but unused");
    // ruff's own fix: delete the import line.
    let edit = &f401["fix"]["edits"][0];
    assert_eq!(
        (edit["line"].as_u64(), edit["column"].as_u64()),
        (Some(3), Some(1))
    );
    assert_eq!(
        (edit["end_line"].as_u64(), edit["end_column"].as_u64()),
        (Some(4), Some(1))
    );
    assert_eq!(edit["content"], "");
    assert_eq!(
        lint["fix_hint"],
        "Run: ruff check --fix src/unicode_line.py src/unused_import.py 'src/with space.py'"
    );
    let fmt = gate(&r, "ruff_format");
    assert_eq!(
        fmt["violations"][0]["message"].as_str().unwrap(),
        "File requires formatting. Fix: ruff format src/unformatted.py"
    );
    let mypy = gate(&r, "mypy");
    assert_eq!(mypy["violations"][0]["severity"], "error");
}

#[test]
fn summary_format_is_the_line_then_compact_json() {
    let ws = fixture_copy("python-basic");
    let out = qgates(ws.path())
        .args(["check", "--scope", "project", "--format", "summary"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some(SUMMARY));
    let json: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(violations(&json), expected());
    assert_eq!(lines.next(), None);
    // Compact: no nulls, no empty arrays, no `fixable: false`.
    let line2 = stdout.lines().nth(1).unwrap();
    assert!(
        !line2.contains("null") && !line2.contains("[]") && !line2.contains("\"fixable\":false")
    );
}

#[test]
fn default_format_when_piped_is_summary() {
    let ws = fixture_copy("python-basic");
    let out = qgates(ws.path())
        .args(["check", "--scope", "project"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().lines().next(),
        Some(SUMMARY)
    );
}

#[test]
fn text_lists_each_violation_under_its_file() {
    let ws = fixture_copy("python-basic");
    let out = qgates(ws.path())
        .args(["check", "--scope", "project", "--format", "text"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with(SUMMARY), "{text}");
    assert!(!text.contains('\x1b'), "colour when not on a terminal");
    for (_, file, line, col, code, _) in EXPECTED {
        assert!(text.contains(file), "{file} missing:\n{text}");
        assert!(text.contains(code), "{code} missing:\n{text}");
        if let (Some(l), Some(c)) = (line, col) {
            let place = format!("{l}:{c}");
            assert!(
                text.lines()
                    .any(|t| t.trim_start().starts_with(&place) && t.contains(code)),
                "{file} {place} {code} missing:\n{text}"
            );
        }
    }
}

#[test]
fn markdown_is_a_numbered_checklist_of_every_violation() {
    let ws = fixture_copy("python-basic");
    let out = qgates(ws.path())
        .args(["check", "--scope", "project", "--format", "markdown"])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    let items: Vec<&str> = md.lines().filter(|l| l.contains(". [ ] ")).collect();
    assert_eq!(items.len(), 7, "{md}");
    for (i, item) in items.iter().enumerate() {
        assert!(
            item.trim_start().starts_with(&format!("{}. [ ] ", i + 1)),
            "{item}"
        );
    }
    assert!(md.contains("src/unused_import.py:3:8"), "{md}");
    assert!(md.contains("src/type_error.py:5:12"), "{md}");
}

#[test]
fn sarif_has_one_result_per_violation_with_its_region() {
    let ws = fixture_copy("python-basic");
    let out = qgates(ws.path())
        .args(["check", "--scope", "project", "--format", "sarif"])
        .output()
        .unwrap();
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 7);
    let f401 = results
        .iter()
        .find(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                == "src/with%20space.py"
        })
        .expect("the file with a space, percent-encoded");
    assert_eq!(f401["ruleId"], "ruff_lint/F401");
    let region = &f401["locations"][0]["physicalLocation"]["region"];
    assert_eq!(
        (region["startLine"].as_u64(), region["startColumn"].as_u64()),
        (Some(3), Some(8))
    );
}

#[test]
fn github_annotations_name_file_line_and_column() {
    let ws = fixture_copy("python-basic");
    let out = qgates(ws.path())
        .args(["check", "--scope", "project", "--format", "github"])
        .output()
        .unwrap();
    let gh = String::from_utf8(out.stdout).unwrap();
    let annotations: Vec<&str> = gh.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(annotations.len(), 7, "{gh}");
    assert!(
        gh.contains("::error file=src/unused_import.py,line=3,col=8,"),
        "{gh}"
    );
    assert!(gh.contains("file=src/with space.py,line=3,col=8,"), "{gh}");
    assert_eq!(gh.lines().last(), Some(SUMMARY));
}

#[test]
fn checking_one_clean_file_is_green() {
    let ws = fixture_copy("python-basic");
    let out = qgates(ws.path())
        .args(["check", "src/clean.py", "--format", "summary"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout.lines().next(),
        Some("✅ 3/3 gates passed — 1 file checked (files)")
    );
}

#[test]
fn checking_the_file_with_a_space_finds_its_violation() {
    let ws = fixture_copy("python-basic");
    let (code, r) = check_json(ws.path(), &["src/with space.py"]);
    assert_eq!(code, 1);
    let got = violations(&r);
    assert_eq!(got.len(), 1, "{r}");
    assert_eq!(got[0].1, "src/with space.py");
    assert_eq!(got[0].4, "F401");
}
