//! A repository mixing Python, TypeScript and JavaScript, C, Ruby and shell
//! (`fixtures/mixed/`): `qgates init` proposes exactly the tools it configures, and
//! `qgates check --scope project` with what init wrote reports what each tool reports when run
//! the repository's own way (file, line, column in characters, code).

use crate::common;
use crate::real_repositories::{mypy, ruff_check};
use crate::real_repositories_ts_go::tsc;

use std::collections::BTreeSet;
use std::path::Path;

use common::git;
use common::real::{Place, chars, check, found, found_files, init, own, relative};
use serde_json::Value;

/// What the repository configures: each with the evidence `init` must name.
const CONFIGURED: [(&str, &str); 8] = [
    ("black", "[tool.black]"),
    ("ruff-lint", "[tool.ruff]"),
    ("mypy", "[tool.mypy]"),
    ("eslint", "eslint.config.js"),
    ("tsc", "tsconfig.json"),
    ("clang-format", ".clang-format"),
    ("rubocop", ".rubocop.yml"),
    ("shellcheck", "scripts/deploy.sh"),
];

fn mixed() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/mixed/.");
    let copied = std::process::Command::new("cp")
        .args(["-a"])
        .arg(&from)
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(copied.success());
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "mixed"]);
    dir
}

/// ESLint's JSON: messages with 1-based lines and UTF-16 columns.
pub(crate) fn eslint(root: &Path, out: &str) -> BTreeSet<Place> {
    let files: Vec<Value> = serde_json::from_str(out.trim()).unwrap();
    let mut places = BTreeSet::new();
    for f in &files {
        let file = relative(root, f["filePath"].as_str().unwrap());
        for m in f["messages"].as_array().unwrap() {
            let line = m["line"].as_u64().unwrap();
            let column = chars(root, &file, line, m["column"].as_u64().unwrap(), "utf16", 1);
            let code = m["ruleId"].as_str().unwrap_or_default().to_string();
            places.insert((file.clone(), line, column, code));
        }
    }
    places
}

/// ShellCheck's `json1`: 1-based lines and columns, a tab counting as 8.
fn shellcheck(out: &str) -> BTreeSet<Place> {
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    v["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["file"].as_str().unwrap().to_string(),
                c["line"].as_u64().unwrap(),
                c["column"].as_u64().unwrap(),
                format!("SC{}", c["code"]),
            )
        })
        .collect()
}

/// RuboCop's JSON: 1-based lines and columns in characters.
pub(crate) fn rubocop(out: &str) -> BTreeSet<Place> {
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let mut places = BTreeSet::new();
    for f in v["files"].as_array().unwrap() {
        for o in f["offenses"].as_array().unwrap() {
            places.insert((
                f["path"].as_str().unwrap().to_string(),
                o["location"]["start_line"].as_u64().unwrap(),
                o["location"]["start_column"].as_u64().unwrap(),
                o["cop_name"].as_str().unwrap().to_string(),
            ));
        }
    }
    places
}

/// clang-format's `--dry-run` warnings: `file:line:col: warning: … [-Wclang-format-violations]`,
/// columns in bytes from 1.
fn clang_format(root: &Path, err: &str) -> BTreeSet<Place> {
    err.lines()
        .filter_map(|l| {
            let (place, _) = l.split_once(": warning: code should be clang-formatted")?;
            let mut parts = place.rsplitn(3, ':');
            let column: u64 = parts.next()?.parse().ok()?;
            let line: u64 = parts.next()?.parse().ok()?;
            let file = parts.next()?.to_string();
            let column = chars(root, &file, line, column, "byte", 1);
            Some((file, line, column, "clang-format-violations".to_string()))
        })
        .collect()
}

/// The files `black --check` would reformat (it names them by absolute path).
fn black_files(root: &Path, err: &str) -> BTreeSet<String> {
    err.lines()
        .filter_map(|l| l.strip_prefix("would reformat "))
        .map(|f| relative(root, f.trim()))
        .collect()
}

#[test]
fn init_proposes_exactly_the_configured_tools_and_check_reports_what_each_tool_does() {
    let repo = mixed();
    let root = repo.path();
    let (written, proposed) = init(root);
    let configured: BTreeSet<String> = CONFIGURED.iter().map(|(p, _)| p.to_string()).collect();
    assert_eq!(proposed, configured, "{written}");
    for (preset, evidence) in CONFIGURED {
        let line = written
            .lines()
            .find(|l| l.contains(&format!("preset: {preset} ")))
            .unwrap();
        assert!(line.contains(evidence), "{preset}: {line}");
    }

    let report = check(root, &["--scope", "project", "--no-state", "--no-cache"]);
    let tool = |argv: &[&str]| own(root, argv);

    let (_, err) = tool(&["black", "--check", "."]);
    let want = black_files(root, &err);
    assert_eq!(want, BTreeSet::from(["app/names.py".to_string()]));
    assert_eq!(found_files(&report, "black"), want);

    let (out, _) = tool(&["ruff", "check", "--output-format", "json", "--no-fix", "."]);
    let want = ruff_check(root, &out);
    assert!(!want.is_empty());
    assert_eq!(found(&report, "ruff_lint"), want);

    let (out, _) = tool(&["mypy", "--output", "json", "--no-error-summary", "app"]);
    let want = mypy(root, &out);
    assert!(!want.is_empty());
    assert_eq!(found(&report, "mypy"), want);

    let (out, _) = tool(&["eslint", "--format", "json", "web"]);
    let want = eslint(root, &out);
    assert!(!want.is_empty());
    assert_eq!(found(&report, "eslint"), want);

    let (out, _) = tool(&["tsc", "--noEmit", "--pretty", "false", "-p", "."]);
    let want = tsc(root, &out);
    assert!(!want.is_empty());
    assert_eq!(found(&report, "tsc"), want);

    let (_, err) = tool(&["clang-format", "--dry-run", "src/util.c"]);
    let want = clang_format(root, &err);
    assert!(!want.is_empty());
    assert_eq!(found(&report, "clang_format"), want);

    let (out, _) = tool(&["rubocop", "--format", "json"]);
    let want = rubocop(&out);
    assert!(!want.is_empty());
    assert_eq!(found(&report, "rubocop"), want);

    let (out, _) = tool(&["shellcheck", "--format", "json1", "scripts/deploy.sh"]);
    let want = shellcheck(&out);
    assert!(!want.is_empty());
    assert_eq!(found(&report, "shellcheck"), want);
}
