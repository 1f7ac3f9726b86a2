//! Public repositories nobody here wrote, checked as a new user would: for each tool, qgates'
//! findings equal what the repository's own invocation of that tool says (its pre-commit hook,
//! tox or npm command, run here directly), file, line, column and code; and a cached answer
//! equals a `--no-cache` one. The repositories are kept under `fixtures/real/` (see its README).

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::real::{Place, chars, check, clone_of, clone_of_fixture, found, own, relative};
use common::{gate, git, write};
use serde_json::Value;

/// The tracked files of the repository at `dir`.
fn tracked(dir: &Path, ending: &str) -> Vec<String> {
    git(dir, &["ls-files"])
        .lines()
        .filter(|f| f.ends_with(ending))
        .map(str::to_string)
        .collect()
}

pub(crate) fn ruff_check(root: &Path, out: &str) -> BTreeSet<Place> {
    let list: Vec<Value> = serde_json::from_str(out.trim()).unwrap_or_default();
    list.iter()
        .map(|v| {
            (
                relative(root, v["filename"].as_str().unwrap()),
                v["location"]["row"].as_u64().unwrap(),
                v["location"]["column"].as_u64().unwrap(),
                v["code"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The files a `ruff format --check --diff` would change.
fn ruff_diff_files(out: &str) -> BTreeSet<String> {
    out.lines()
        .filter_map(|l| l.strip_prefix("--- "))
        .map(|f| f.trim_start_matches("./").to_string())
        .collect()
}

pub(crate) fn mypy(root: &Path, out: &str) -> BTreeSet<Place> {
    out.lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let file = v["file"].as_str().unwrap().to_string();
            // A finding about a whole module has line and column -1.
            let line = v["line"].as_u64().unwrap_or(0);
            let column = match v["column"].as_u64() {
                Some(c) => chars(root, &file, line, c, "byte", 0),
                None => 0,
            };
            (
                file,
                line,
                column,
                v["code"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn pyright(root: &Path, out: &str) -> BTreeSet<Place> {
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    v["generalDiagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let file = relative(root, d["file"].as_str().unwrap());
            let line = d["range"]["start"]["line"].as_u64().unwrap() + 1;
            let column = d["range"]["start"]["character"].as_u64().unwrap();
            let column = chars(root, &file, line, column, "utf16", 0);
            (
                file,
                line,
                column,
                d["rule"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn typos(root: &Path, out: &str) -> BTreeSet<Place> {
    out.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "typo")
        .map(|v| {
            let file = relative(root, v["path"].as_str().unwrap());
            let line = v["line_num"].as_u64().unwrap();
            let column = chars(
                root,
                &file,
                line,
                v["byte_offset"].as_u64().unwrap(),
                "byte",
                0,
            );
            (file, line, column, "typo".to_string())
        })
        .collect()
}

/// Biome's SARIF, paths relative to `root` (the workspace; Biome ran in `cwd`).
fn biome(root: &Path, out: &str) -> BTreeSet<Place> {
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    v["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let place = &r["locations"][0]["physicalLocation"];
            let uri = place["artifactLocation"]["uri"].as_str().unwrap();
            let file = relative(root, uri.trim_start_matches("file://"));
            let region = &place["region"];
            (
                file,
                region["startLine"].as_u64().unwrap_or(0),
                region["startColumn"].as_u64().unwrap_or(0),
                r["ruleId"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn flask() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let tarball = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/real/flask-3.1.2.tar.gz");
    let status = Command::new("tar")
        .arg("xzf")
        .arg(&tarball)
        .current_dir(tmp.path())
        .status()
        .expect("tar");
    assert!(status.success());
    let root = tmp.path().join("flask-3.1.2");
    clone_of(&root);
    (tmp, root)
}

/// Flask's sdist: `[tool.mypy] files` and `[tool.pyright] include` choose the files its tox
/// `typing` environment checks with a bare `mypy` and `pyright`; its pre-commit hook runs ruff.
#[test]
fn flask_findings_equal_its_own_tools() {
    let (_tmp, root) = flask();
    let root = root.as_path();
    write(
        root,
        ".qgates/quality.yaml",
        "version: 1\ngates:\n  ruff_lint: { preset: ruff-lint }\n  ruff_format: { preset: ruff-format }\n  mypy: { preset: mypy }\n  pyright: { preset: pyright }\n",
    );
    let report = check(root, &["--scope", "project", "--no-cache"]);
    let py = tracked(root, ".py");
    let mut ruff_args = vec![
        "ruff",
        "check",
        "--output-format",
        "json",
        "--no-fix",
        "--force-exclude",
    ];
    ruff_args.extend(py.iter().map(String::as_str));
    let want = ruff_check(root, &own(root, &ruff_args).0);
    assert!(!want.is_empty());
    assert_eq!(found(&report, "ruff_lint"), want);
    let mut fmt_args = vec!["ruff", "format", "--check", "--diff", "--force-exclude"];
    fmt_args.extend(py.iter().map(String::as_str));
    let want: BTreeSet<String> = ruff_diff_files(&own(root, &fmt_args).0);
    let got: BTreeSet<String> = found(&report, "ruff_format")
        .into_iter()
        .map(|p| p.0)
        .collect();
    assert_eq!(got, want);
    let want = mypy(
        root,
        &own(
            root,
            &[
                "mypy",
                "--no-native-parser",
                "--output",
                "json",
                "--no-error-summary",
            ],
        )
        .0,
    );
    assert!(want.len() > 10, "{want:?}");
    assert!(
        want.iter()
            .all(|p| p.0.starts_with("src/") || p.0.starts_with("tests/type_check/"))
    );
    assert_eq!(found(&report, "mypy"), want);
    let want = pyright(root, &own(root, &["pyright", "--outputjson"]).0);
    assert!(!want.is_empty());
    assert_eq!(found(&report, "pyright"), want);

    // Cached answers equal fresh ones, for the project and for one file of it.
    let first = check(root, &["--scope", "project"]);
    let cached = check(root, &["--scope", "project"]);
    let file = "src/flask/app.py";
    let one = check(root, &[file]);
    let one_fresh = check(root, &[file, "--no-cache"]);
    for id in ["ruff_lint", "ruff_format", "mypy", "pyright"] {
        assert_eq!(found(&first, id), found(&report, id), "{id}");
        assert_eq!(found(&cached, id), found(&report, id), "{id}");
        assert!(
            gate(&cached, id)["cached_files"].as_u64().unwrap_or(0) > 0,
            "{id}"
        );
        let in_file: BTreeSet<Place> = found(&report, id)
            .into_iter()
            .filter(|p| p.0 == file)
            .collect();
        assert_eq!(found(&one, id), in_file, "{id}");
        assert_eq!(found(&one_fresh, id), in_file, "{id}");
    }
}

/// The full-stack FastAPI template: a backend whose `pyproject.toml` excludes `alembic` from
/// ruff, a frontend checked by Biome in its folder, typos over the whole repository with
/// `extend-exclude` (images, lock files) — each as its pre-commit hook or npm script runs it.
#[test]
fn fastapi_template_findings_equal_its_own_tools() {
    let tmp = clone_of_fixture("full-stack-fastapi-template");
    let root = tmp.path();
    write(
        root,
        ".qgates/quality.yaml",
        "version: 1\ngates:\n  ruff_lint: { preset: ruff-lint }\n  ruff_format: { preset: ruff-format }\n  typos: { preset: typos }\n  biome_lint: { preset: biome-lint, cwd: frontend }\n  biome_format: { preset: biome-format, cwd: frontend }\n",
    );
    let report = check(root, &["--scope", "project", "--no-cache"]);
    // pre-commit: `ruff check --force-exclude` and `ruff format --force-exclude` on the Python
    // files; `typos --force-exclude` on every file.
    let py = tracked(root, ".py");
    let mut ruff_args = vec![
        "ruff",
        "check",
        "--output-format",
        "json",
        "--no-fix",
        "--force-exclude",
    ];
    ruff_args.extend(py.iter().map(String::as_str));
    let want = ruff_check(root, &own(root, &ruff_args).0);
    assert!(want.iter().all(|p| !p.0.contains("alembic")), "{want:?}");
    assert_eq!(found(&report, "ruff_lint"), want);
    let mut fmt_args = vec!["ruff", "format", "--check", "--diff", "--force-exclude"];
    fmt_args.extend(py.iter().map(String::as_str));
    let want = ruff_diff_files(&own(root, &fmt_args).0);
    let got: BTreeSet<String> = found(&report, "ruff_format")
        .into_iter()
        .map(|p| p.0)
        .collect();
    assert_eq!(got, want);
    let all = tracked(root, "");
    let mut typos_args = vec!["typos", "--format", "json", "--force-exclude"];
    typos_args.extend(all.iter().map(String::as_str));
    let want = typos(root, &own(root, &typos_args).0);
    assert!(want.iter().all(|p| !p.0.ends_with(".png")), "{want:?}");
    assert_eq!(found(&report, "typos"), want);
    // `npm run lint` in frontend/: Biome over `./`, its own includes deciding (SVG and Markdown
    // among them).
    let frontend = root.join("frontend");
    let biome_args = |command: &'static str| {
        [
            "biome",
            command,
            "--reporter=sarif",
            "--max-diagnostics=none",
            "--colors=off",
            "--files-ignore-unknown=true",
            "--no-errors-on-unmatched",
            "./",
        ]
    };
    let want = biome(root, &own(&frontend, &biome_args("lint")).0);
    assert!(want.iter().any(|p| p.0.ends_with(".svg")), "{want:?}");
    assert_eq!(found(&report, "biome_lint"), want);
    let want = biome(root, &own(&frontend, &biome_args("format")).0);
    assert!(want.iter().any(|p| p.0.ends_with(".md")), "{want:?}");
    assert_eq!(found(&report, "biome_format"), want);

    let first = check(root, &["--scope", "project"]);
    let cached = check(root, &["--scope", "project"]);
    for id in [
        "ruff_lint",
        "ruff_format",
        "typos",
        "biome_lint",
        "biome_format",
    ] {
        assert_eq!(found(&first, id), found(&report, id), "{id}");
        assert_eq!(found(&cached, id), found(&report, id), "{id}");
    }
}
