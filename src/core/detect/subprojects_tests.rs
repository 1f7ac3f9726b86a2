//! Detection in repositories of several projects: subprojects, workspaces, and pre-commit
//! hooks carried into the gates of their tools.

use std::path::Path;

use super::tests::repo;
use super::*;
use crate::core::config::{ConfigSource, DEFAULT_CONFIG, parse_config};

/// (gate id, cwd, reason) of each proposal.
fn gates_at(root: &Path) -> Vec<(String, String, String)> {
    detect(root)
        .proposals
        .into_iter()
        .map(|p| (p.gate_id(), p.dir.clone(), p.why))
        .collect()
}

fn row(id: &str, dir: &str, why: &str) -> (String, String, String) {
    (id.to_string(), dir.to_string(), why.to_string())
}

#[test]
fn subprojects_get_gates_of_their_own_with_reasons_from_their_folder() {
    let tmp = repo(&[
        (
            "backend/pyproject.toml",
            "[project]\nname = \"app\"\n[tool.ruff]\nexclude = [\"alembic\"]\n[tool.mypy]\nstrict = true\n",
        ),
        ("backend/app/main.py", "x = 1\n"),
        (
            "frontend/package.json",
            r#"{"devDependencies": {"@biomejs/biome": "2", "typescript": "5"}}"#,
        ),
        ("frontend/biome.json", "{}\n"),
        ("frontend/tsconfig.json", "{}\n"),
        ("frontend/src/main.ts", "export {};\n"),
        ("scripts/deploy.sh", "echo\n"),
        // Not projects of the repository: test data, installed packages, ignored output.
        ("tests/fixtures/demo/pyproject.toml", "[tool.pylint.main]\n"),
        (
            "frontend/node_modules/x/package.json",
            r#"{"devDependencies": {"eslint": "9"}}"#,
        ),
        (".gitignore", "build/\n"),
        ("build/pkg/tsconfig.json", "{}\n"),
    ]);
    assert_eq!(
        gates_at(tmp.path()),
        [
            row("shellcheck", "", "scripts/deploy.sh"),
            row(
                "backend_ruff_format",
                "backend",
                "1 Python file in backend/ and no Python formatter configured (the Python default)"
            ),
            row(
                "backend_ruff_lint",
                "backend",
                "backend/pyproject.toml has [tool.ruff]"
            ),
            row(
                "backend_mypy",
                "backend",
                "backend/pyproject.toml has [tool.mypy]"
            ),
            row("frontend_biome_format", "frontend", "frontend/biome.json"),
            row("frontend_biome_lint", "frontend", "frontend/biome.json"),
            row("frontend_tsc", "frontend", "frontend/tsconfig.json"),
        ]
    );
    let d = detect(tmp.path());
    assert!(
        d.notes.iter().any(|n| n.contains("test data")),
        "{:?}",
        d.notes
    );
    // Without quality.yaml the same gates run, each optional, in its folder.
    let text = embedded_text(&d);
    let config = parse_config(&text, ConfigSource::Embedded).unwrap();
    let cwd: Vec<(&str, Option<&Path>)> = config
        .gates
        .iter()
        .map(|g| (g.id.as_str(), g.cwd.as_deref()))
        .collect();
    assert_eq!(cwd[1], ("backend_ruff_format", Some(Path::new("backend"))));
    assert!(config.gates.iter().all(|g| g.optional), "{text}");
}

#[test]
fn a_workspace_root_covers_its_members_and_leaves_them_their_own_gates() {
    // A Cargo workspace: one clippy and one rustfmt at the root cover every member.
    let tmp = repo(&[
        ("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n"),
        ("crates/a/Cargo.toml", "[package]\nname = \"a\"\n"),
        ("crates/a/src/lib.rs", ""),
        ("crates/b/Cargo.toml", "[package]\nname = \"b\"\n"),
        ("crates/b/src/lib.rs", ""),
    ]);
    assert_eq!(
        gates_at(tmp.path()),
        [
            row("rustfmt", "", "Cargo.toml"),
            row("cargo_clippy", "", "Cargo.toml")
        ]
    );

    // A uv workspace: the root's ruff and mypy fill the members' roles; the formatter, which
    // nothing fills, is each member's, and the root's ruff leaves the member with its own.
    let tmp = repo(&[
        (
            "pyproject.toml",
            "[tool.uv.workspace]\nmembers = [\"packages/*\"]\n[tool.ruff]\n[tool.mypy]\n",
        ),
        (
            "packages/core/pyproject.toml",
            "[project]\nname = \"core\"\n",
        ),
        ("packages/core/core.py", ""),
        (
            "packages/web/pyproject.toml",
            "[project]\nname = \"web\"\n[tool.ruff]\nline-length = 100\n",
        ),
        ("packages/web/web.py", ""),
    ]);
    let d = detect(tmp.path());
    let ids: Vec<String> = d.proposals.iter().map(Proposal::gate_id).collect();
    assert_eq!(
        ids,
        [
            "ruff_lint",
            "mypy",
            "packages_core_ruff_format",
            "packages_web_ruff_format",
            "packages_web_ruff_lint"
        ]
    );
    assert_eq!(d.proposals[0].tuning.exclude_globs, ["packages/web/**"]);

    // An npm workspace's root: typescript there serves the members, which run their own tsc.
    let tmp = repo(&[
        (
            "package.json",
            r#"{"workspaces": ["packages/*"], "devDependencies": {"typescript": "5", "eslint": "9"}}"#,
        ),
        ("packages/ui/package.json", r#"{"name": "ui"}"#),
        ("packages/ui/tsconfig.json", "{}\n"),
    ]);
    let ids: Vec<String> = detect(tmp.path())
        .proposals
        .iter()
        .map(Proposal::gate_id)
        .collect();
    assert_eq!(ids, ["eslint", "packages_ui_tsc"]);

    // go.work: each module gets its Go gates, run in its folder.
    let tmp = repo(&[
        ("go.work", "go 1.22\nuse (./api ./worker)\n"),
        ("api/go.mod", "module example.com/api\n"),
        ("api/main.go", "package main\n"),
        ("worker/go.mod", "module example.com/worker\n"),
        ("worker/main.go", "package main\n"),
    ]);
    let ids: Vec<String> = detect(tmp.path())
        .proposals
        .iter()
        .map(Proposal::gate_id)
        .collect();
    assert_eq!(
        ids,
        ["api_gofmt", "api_go_vet", "worker_gofmt", "worker_go_vet"]
    );
}

#[test]
fn pre_commit_hooks_carry_their_file_selection_into_the_gates() {
    let tmp = repo(&[
        ("app.py", ""),
        (
            ".pre-commit-config.yaml",
            r#"exclude: '^vendor/'
repos:
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.15.0
    hooks:
      - id: ruff-check
        args: [--fix, --force-exclude]
        exclude: |
            (?x)^(
                migrations/.*|
                docs/conf\.py
            )$
      - id: ruff-format
        exclude: '^(?!src/)'
  - repo: https://github.com/codespell-project/codespell
    rev: v2.4.1
    hooks:
      - id: codespell
        args: [--exclude-file, .codespell-exclude, --check-hidden]
"#,
        ),
    ]);
    let d = detect(tmp.path());
    let by_id = |id: &str| d.proposals.iter().find(|p| p.gate_id() == id).unwrap();
    let lint = &by_id("ruff_lint").tuning;
    assert_eq!(
        lint.exclude_globs,
        ["vendor/**", "migrations/**", "docs/conf.py"]
    );
    assert!(
        lint.comments.len() == 1 && lint.comments[0].contains("`--fix`"),
        "{lint:?}"
    );
    // The preset may have --force-exclude already; it is then not added again.
    let command = &presets::find("ruff-lint")
        .unwrap()
        .gate
        .command
        .as_ref()
        .unwrap()
        .value;
    assert_eq!(
        lint.args.contains(&"--force-exclude".to_string()),
        !command.contains(&"--force-exclude".to_string())
    );
    let format = &by_id("ruff_format").tuning;
    assert_eq!(format.exclude_globs, ["vendor/**"]);
    assert!(
        format.comments[0].contains("`exclude: ^(?!src/)`, a regex with no exact glob"),
        "{format:?}"
    );
    let codespell = &by_id("codespell").tuning;
    assert_eq!(codespell.args, ["--exclude-file", ".codespell-exclude"]);
    assert!(
        codespell.comments[0].contains("`--check-hidden`"),
        "{codespell:?}"
    );

    // Written out, every gate loads, and what was not carried over is said in the gate.
    let text = init_file(&d).unwrap();
    assert!(
        text.contains("    # Not carried over from the ruff-format hook: `exclude: ^(?!src/)`"),
        "{text}"
    );
    let config = parse_config(&text, ConfigSource::Embedded).unwrap();
    let lint = config.gates.iter().find(|g| g.id == "ruff_lint").unwrap();
    assert!(!lint.applies_to("migrations/0001.py") && lint.applies_to("app.py"));
    let codespell = config.gates.iter().find(|g| g.id == "codespell").unwrap();
    assert!(
        codespell
            .command
            .ends_with(&["--exclude-file".into(), ".codespell-exclude".into()])
    );
    // A Python repository with excludes to keep is no longer the plain Python default.
    assert_ne!(embedded_text(&d), DEFAULT_CONFIG);
}

#[test]
fn a_hook_for_subprojects_tools_goes_into_their_gates() {
    let hook =
        "repos:\n- repo: local\n  hooks:\n  - id: ruff\n    exclude: ^backend/app/alembic/\n";
    let tmp = repo(&[
        (".pre-commit-config.yaml", hook),
        ("backend/pyproject.toml", "[tool.ruff]\n"),
        ("backend/app/main.py", ""),
    ]);
    let d = detect(tmp.path());
    let lint: Vec<(String, Vec<String>)> = d
        .proposals
        .iter()
        .filter(|p| p.preset == "ruff-lint")
        .map(|p| (p.gate_id(), p.tuning.exclude_globs.clone()))
        .collect();
    // No root gate that would check nothing: every Python file is the backend's.
    assert_eq!(
        lint,
        [(
            "backend_ruff_lint".to_string(),
            vec!["backend/app/alembic/**".to_string()]
        )]
    );
    // With Python files of its own the root keeps the hook's gate, leaving backend/ to its own.
    std::fs::write(tmp.path().join("setup.py"), "").unwrap();
    let d = detect(tmp.path());
    let root = d
        .proposals
        .iter()
        .find(|p| p.gate_id() == "ruff_lint")
        .unwrap();
    assert_eq!(
        root.tuning.exclude_globs,
        ["backend/app/alembic/**", "backend/**"]
    );
}

#[test]
fn a_hook_s_own_arguments_reach_the_gate_and_its_fixer() {
    let hook = "repos:\n- repo: https://github.com/djlint/djLint\n  rev: v1.36.4\n  hooks:\n  - id: djlint-reformat-django\n  - id: djlint-django\n    args: [--ignore, H006]\n";
    let tmp = repo(&[(".pre-commit-config.yaml", hook), ("templates/a.html", "")]);
    let d = detect(tmp.path());
    let text = init_file(&d).unwrap();
    let config = parse_config(&text, ConfigSource::Embedded).unwrap();
    let gate = |id: &str| config.gates.iter().find(|g| g.id == id).unwrap();
    // The hooks' own definitions choose the Django profile; the configuration adds `--ignore`.
    assert!(
        gate("djlint").command.ends_with(&[
            "--profile".into(),
            "django".into(),
            "--ignore".into(),
            "H006".into()
        ]),
        "{text}"
    );
    let format = gate("djlint_format");
    assert!(
        format
            .command
            .ends_with(&["--profile".into(), "django".into()]),
        "{text}"
    );
    // The fixer formats as the check does, the options before stdin's `-`.
    let fixer = &format.fix.as_ref().unwrap().command;
    assert!(
        fixer.ends_with(&["--profile".into(), "django".into(), "-".into()]),
        "{text}"
    );
}
