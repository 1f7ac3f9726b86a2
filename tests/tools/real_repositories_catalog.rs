//! Public repositories that gate on tools the catalog added (XO and AVA, golangci-lint and
//! `go test`, RuboCop, Black, isort and flake8), kept under `fixtures/real/`: `qgates init`
//! proposes exactly the tools each one runs, and `qgates check` with what init wrote reports what
//! each tool reports when run the repository's way.

use crate::common;
use crate::mixed_repository::{eslint, rubocop};

use std::collections::BTreeSet;
use std::path::Path;

use common::gate;
use common::real::{
    Place, chars, check, clone_of_fixture, found, found_files, init, own, relative,
};
use serde_json::Value;

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Appends `text` to a file of the clone (a change being worked on).
fn append(root: &Path, file: &str, text: &str) {
    let path = root.join(file);
    let mut all = std::fs::read_to_string(&path).unwrap();
    all.push_str(text);
    std::fs::write(path, all).unwrap();
}

/// sindresorhus/camelcase: `"test": "xo && ava && tsd"`, with XO's and AVA's defaults.
#[test]
fn camelcase_runs_xo_and_ava_as_its_test_script_does() {
    let repo = clone_of_fixture("camelcase");
    let root = repo.path();
    assert_eq!(init(root).1, names(&["xo", "ava", "actionlint"]));
    // The test file imports `ava`, which `npm install` puts beside it.
    let ava = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/node_modules/ava");
    std::fs::create_dir_all(root.join("node_modules")).unwrap();
    std::os::unix::fs::symlink(ava, root.join("node_modules/ava")).unwrap();
    append(root, "index.js", "\nvar unused = \"é🎉\";\n");

    let report = check(root, &["--scope", "project", "--no-cache", "--no-state"]);
    let want = eslint(root, &own(root, &["xo", "--reporter=json"]).0);
    assert!(want.iter().any(|p| p.3 == "no-unused-vars"), "{want:?}");
    assert_eq!(found(&report, "xo"), want);
    let (out, err) = own(root, &["ava"]);
    assert!(
        format!("{out}{err}").contains("20 tests passed"),
        "{out}{err}"
    );
    assert_eq!(gate(&report, "ava")["status"], "passed", "{report}");
}

/// golangci-lint's JSON issues: lines from 1, columns in bytes from 1 (0: none).
fn golangci(root: &Path, out: &str) -> BTreeSet<Place> {
    let v: Value = serde_json::from_str(out.lines().next().unwrap_or("{}")).unwrap();
    (v["Issues"].as_array().into_iter().flatten())
        .map(|i| {
            let file = relative(root, i["Pos"]["Filename"].as_str().unwrap());
            let line = i["Pos"]["Line"].as_u64().unwrap();
            let column = match i["Pos"]["Column"].as_u64().unwrap_or(0) {
                0 => 0,
                c => chars(root, &file, line, c, "byte", 1),
            };
            let code = i["FromLinter"].as_str().unwrap().to_string();
            (file, line, column, code)
        })
        .collect()
}

/// go-viper/mapstructure: a `.golangci.yaml` and `go test ./...` in CI.
#[test]
fn mapstructure_runs_golangci_lint_and_its_go_tests() {
    let repo = clone_of_fixture("mapstructure");
    let root = repo.path();
    let proposed = ["gofmt", "go-vet", "golangci-lint", "go-test", "actionlint"];
    assert_eq!(init(root).1, names(&proposed));

    let report = check(root, &["--scope", "project", "--no-cache", "--no-state"]);
    let argv = [
        "golangci-lint",
        "run",
        "--allow-serial-runners",
        "--output.json.path",
        "stdout",
        "--show-stats=false",
        "--path-mode",
        "abs",
        "--max-issues-per-linter",
        "0",
        "--max-same-issues",
        "0",
        "./...",
    ];
    let want = golangci(root, &own(root, &argv).0);
    assert!(!want.is_empty());
    assert_eq!(found(&report, "golangci_lint"), want);
    let test = gate(&report, "go_test");
    assert_eq!(test["status"], "passed", "{test}");
    let (out, _) = own(root, &["go", "test", "./..."]);
    // `ok` for a package whose tests passed, `?` for one without tests.
    assert!(
        out.lines()
            .all(|l| l.starts_with("ok") || l.starts_with('?')),
        "{out}"
    );
}

/// ruby/rake: `bundle exec rubocop` in CI, clean; a change with offences is reported as RuboCop
/// reports it.
#[test]
fn rake_runs_rubocop_as_its_ci_does() {
    let repo = clone_of_fixture("rake");
    let root = repo.path();
    assert_eq!(init(root).1, names(&["actionlint", "rubocop"]));
    let report = check(root, &["--scope", "project", "--no-cache", "--no-state"]);
    let want = rubocop(&own(root, &["rubocop", "--format", "json"]).0);
    assert_eq!(found(&report, "rubocop"), want);

    // Single quotes, where its configuration enforces double ones.
    append(root, "lib/rake.rb", "X = { :prix => 'é🎉' }\n");
    let report = check(root, &["--scope", "project", "--no-cache", "--no-state"]);
    let want = rubocop(&own(root, &["rubocop", "--format", "json"]).0);
    assert!(want.iter().any(|p| p.0 == "lib/rake.rb"), "{want:?}");
    assert_eq!(found(&report, "rubocop"), want);
}

/// flake8's default text, `file:line:col: CODE message` (its `show-source` lines left out).
fn flake8(out: &str) -> BTreeSet<Place> {
    out.lines()
        .filter_map(|l| {
            let (file, rest) = l.split_once(':')?;
            let (line, rest) = rest.split_once(':')?;
            let (column, rest) = rest.split_once(": ")?;
            let code = rest.split_whitespace().next()?.to_string();
            let file = file.trim_start_matches("./").to_string();
            Some((file, line.parse().ok()?, column.parse().ok()?, code))
        })
        .collect()
}

/// econchick/interrogate (its sources and configuration): Black, isort, flake8 and interrogate
/// as its pre-commit hooks run them, mypy for its `[tool.mypy]`, pytest for its
/// `[tool.pytest.ini_options]`.
#[test]
fn interrogate_runs_black_isort_flake8_and_interrogate_as_its_hooks_do() {
    let repo = clone_of_fixture("interrogate");
    let root = repo.path();
    let proposed = [
        "black",
        "isort",
        "flake8",
        "interrogate",
        "mypy",
        "pytest",
        "actionlint",
    ];
    assert_eq!(init(root).1, names(&proposed));
    // Two imports out of order, after the code (`os` again).
    append(
        root,
        "src/interrogate/utils.py",
        "\nimport sys  # é🎉\nimport os\n\nsys.exit()\n",
    );
    // A function without a docstring: one miss, the total still above its `fail-under` (95).
    append(
        root,
        "src/interrogate/badge_gen.py",
        "\n\ndef résumé_badge():\n    return None\n",
    );

    let gates = ["--gates", "black,isort,flake8,interrogate"];
    let report = check(
        root,
        &[&gates[..], &["--scope", "project", "--no-state"]].concat(),
    );
    let (_, err) = own(root, &["black", "--check", "."]);
    let want: BTreeSet<String> = (err.lines())
        .filter_map(|l| l.strip_prefix("would reformat "))
        .map(|f| relative(root, f.trim()))
        .collect();
    assert_eq!(found_files(&report, "black"), want);
    let (_, err) = own(root, &["isort", "--check-only", "."]);
    let want: BTreeSet<String> = (err.lines())
        .filter_map(|l| l.strip_prefix("ERROR: "))
        .filter_map(|l| l.split_once(" Imports are incorrectly sorted"))
        .map(|(f, _)| relative(root, f))
        .collect();
    assert!(want.contains("src/interrogate/utils.py"), "{want:?}");
    assert_eq!(found_files(&report, "isort"), want);
    let want = flake8(&own(root, &["flake8", "."]).0);
    assert!(want.iter().any(|p| p.3 == "E402"), "{want:?}");
    assert_eq!(found(&report, "flake8"), want);
    // Its `exclude` is set, so it runs over the project as its CI does.
    let (out, _) = own(root, &["interrogate", "-vv", "--no-color"]);
    let missed: Vec<&str> = out.lines().filter(|l| l.ends_with("MISSED |")).collect();
    let [row] = missed[..] else {
        panic!("one miss expected:\n{out}")
    };
    let line: u64 = (row.split_once("(L").and_then(|(_, r)| r.split_once(')')))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("no line in {row:?}"));
    assert!(row.starts_with("| résumé_badge (L"), "{row}");
    assert!(out.contains("RESULT: PASSED (minimum: 95.0%"), "{out}");
    let want = BTreeSet::from([(
        "src/interrogate/badge_gen.py".to_string(),
        line,
        0,
        "missing-docstring".to_string(),
    )]);
    assert_eq!(found(&report, "interrogate"), want);
    assert_eq!(gate(&report, "interrogate")["status"], "passed", "{report}");
}
