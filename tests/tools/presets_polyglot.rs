//! The catalog's promise at the scale of a real repository: twelve of its tools, over six
//! languages, configured in one `quality.yaml` of at most 15 lines, and every finding what each
//! tool reports on its own. Each preset's fixture is a subproject of one git repository (its
//! folder is the gate's `cwd`); what its tool reports there is its `expected.yaml`, which
//! tests/tools/presets_real_tools.rs checks against the tool's own output.

use crate::common;

use common::presets::Preset;
use common::{check_json_with, gate, git, path_with_catalog_tools, qgates, write};
use qgates::cli::preset_test::fixture::{list, places_of};

/// Python, TypeScript and JavaScript, Rust, Go, shell and Dockerfiles, as a polyglot repository
/// has them.
const PRESETS: [&str; 12] = [
    "ruff-lint",
    "ruff-format",
    "mypy",
    "eslint",
    "tsc",
    "prettier",
    "cargo-clippy",
    "rustfmt",
    "go-vet",
    "gofmt",
    "shellcheck",
    "hadolint",
];

/// One git repository holding every preset's fixture in a folder named after it.
fn polyglot_repository(presets: &[Preset]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for p in presets {
        for rel in p.fixture.files() {
            let to = dir.path().join(&p.name).join(&rel);
            std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
            std::fs::copy(p.fixture.dir.join(&rel), &to).expect("copy");
        }
    }
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "polyglot"]);
    dir
}

#[test]
fn twelve_tools_in_fifteen_lines_report_what_each_reports_alone() {
    let presets: Vec<Preset> = PRESETS
        .iter()
        .map(|name| Preset::load(name).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let repo = polyglot_repository(&presets);
    let root = repo.path();
    let mut config = String::from("version: 1\ngates:\n");
    for p in &presets {
        config.push_str(&format!("  {0}: {{ preset: {0}, cwd: {0} }}\n", p.name));
    }
    assert!(config.lines().count() <= 15, "{config}");
    write(root, "quality.yaml", &config);

    let mut with_tools = qgates(root);
    with_tools.env("PATH", path_with_catalog_tools());
    let (code, report) = check_json_with(with_tools, &["--scope", "project", "--no-state"]);
    assert_eq!(code, 1, "every fixture has findings: {report}");

    let mut problems = Vec::new();
    for p in &presets {
        let result = gate(&report, &p.name);
        let mut expected = p.fixture.expected_places();
        for place in &mut expected {
            place.file = format!("{}/{}", p.name, place.file);
        }
        expected.sort();
        let got = places_of(result);
        if expected.is_empty() || result["status"] != "failed" || got != expected {
            problems.push(format!(
                "{}: status {}, expected:{}\n  qgates reported:{}\n  {}",
                p.name,
                result["status"],
                list(&expected),
                list(&got),
                result["error"]
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {} gates differ:\n{}",
        problems.len(),
        presets.len(),
        problems.join("\n")
    );
    assert_eq!(
        report["gates"].as_array().map(Vec::len),
        Some(PRESETS.len()),
        "{report}"
    );
}
