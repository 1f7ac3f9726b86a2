//! Each tool answers as the repository's own invocation of it would: a run that stopped early
//! caches nothing, the tool's own file selection (`files`, `include`, `exclude`, `skip`, binary
//! files) wins over the files qgates hands it, and no scope holds the files of tools' folders.
//! Against the real tools, in real git repositories.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{check_json_with, gate, git, path_with_catalog_tools, qgates, workspace, write};
use serde_json::Value;

fn check(dir: &Path, args: &[&str]) -> (i32, Value) {
    let mut cmd = qgates(dir);
    cmd.env("PATH", path_with_catalog_tools());
    check_json_with(cmd, args)
}

/// `(file, line, column, code)` of a gate's violations, sorted.
fn places(report: &Value, id: &str) -> Vec<(String, u64, u64, String)> {
    let mut out: Vec<_> = gate(report, id)["violations"]
        .as_array()
        .map(|v| v.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|v| {
            (
                v["file"].as_str().unwrap_or_default().to_string(),
                v["line"].as_u64().unwrap_or(0),
                v["column"].as_u64().unwrap_or(0),
                v["code"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// A tool run as the repository runs it, in `dir`, with the catalog's tools on PATH.
fn tool_output(dir: &Path, argv: &[&str]) -> (i32, String) {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .env("PATH", path_with_catalog_tools())
        // semgrep otherwise waits about 100 s for a version check over the network.
        .env("SEMGREP_ENABLE_VERSION_CHECK", "0")
        .env("SEMGREP_SEND_METRICS", "off")
        .output()
        .expect("run the tool");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn commit_all(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "init"]);
}

const MYPY: &str = "version: 1\ngates:\n  mypy: { preset: mypy }\n";

/// mypy stops at a blocking error (two modules named `conftest`) and reports that alone. The
/// run is marked incomplete and caches nothing: a later check of a file it never reached runs
/// mypy, and answers as `--no-cache` does.
#[test]
fn a_blocked_mypy_run_caches_nothing() {
    let ws = workspace(&[
        ("quality.yaml", MYPY),
        ("tests/conftest.py", "import os\n"),
        ("examples/x/conftest.py", "import sys\n"),
        ("src/m.py", "x: int = \"a\"\n"),
    ]);
    let dir = ws.path();
    commit_all(dir);
    let (code, blocked) = check(dir, &["--scope", "project"]);
    assert_eq!(code, 1, "{blocked}");
    let mypy = gate(&blocked, "mypy");
    assert_eq!(mypy["incomplete"], true, "{mypy}");
    assert_eq!(mypy["exit_code"], 2);
    let found = places(&blocked, "mypy");
    assert_eq!(found.len(), 1, "only the blocking error: {found:?}");
    assert!(found[0].0.ends_with("conftest.py"), "{found:?}");

    let (code, cached) = check(dir, &["src/m.py"]);
    let (_, fresh) = check(dir, &["src/m.py", "--no-cache"]);
    assert_eq!(code, 1, "{cached}");
    assert_eq!(
        gate(&cached, "mypy")["cached_files"],
        Value::Null,
        "{cached}"
    );
    assert_eq!(
        places(&cached, "mypy"),
        vec![("src/m.py".to_string(), 1, 10, "assignment".to_string())]
    );
    assert_eq!(places(&cached, "mypy"), places(&fresh, "mypy"));
    // A clean run after the fix is cached as usual.
    write(dir, "examples/x/conftest.py", "");
    std::fs::remove_file(dir.join("examples/x/conftest.py")).unwrap();
    write(dir, "src/m.py", "x: int = 1\n");
    let (code, green) = check(dir, &["--scope", "project"]);
    assert_eq!(code, 0, "{green}");
    let (_, again) = check(dir, &["--scope", "project"]);
    assert_eq!(gate(&again, "mypy")["cached_files"], 2, "{again}");
}

/// With `[tool.mypy] files` the repository runs a bare `mypy`: `files` and `exclude` choose
/// what it checks. So does the gate, and it reports for each file in scope what that run says
/// of it: nothing for a file outside `files` or excluded, even when named on the command line.
#[test]
fn mypy_runs_over_its_configured_files() {
    let ws = workspace(&[
        ("quality.yaml", MYPY),
        (
            "pyproject.toml",
            "[tool.mypy]\nfiles = [\"src\"]\nexclude = [\"^src/gen/\"]\n",
        ),
        ("src/m.py", "x: int = \"a\"\n"),
        ("src/ok.py", "y: int = 1\n"),
        ("src/gen/g.py", "z: int = \"generated\"\n"),
        ("scripts/s.py", "w: int = \"script\"\n"),
    ]);
    let dir = ws.path();
    commit_all(dir);
    let (_, own) = tool_output(
        dir,
        &[
            "mypy",
            "--no-native-parser",
            "--output",
            "json",
            "--no-error-summary",
        ],
    );
    assert!(
        own.contains("src/m.py") && !own.contains("g.py") && !own.contains("s.py"),
        "{own}"
    );
    let want = vec![("src/m.py".to_string(), 1, 10, "assignment".to_string())];
    let (_, project) = check(dir, &["--scope", "project", "--no-cache"]);
    assert_eq!(places(&project, "mypy"), want);
    for file in ["scripts/s.py", "src/gen/g.py", "src/ok.py"] {
        let (code, report) = check(dir, &[file, "--no-cache"]);
        assert_eq!(code, 0, "{file}: {report}");
        assert_eq!(places(&report, "mypy"), vec![], "{file}");
    }
    let (_, one) = check(dir, &["src/m.py"]);
    assert_eq!(places(&one, "mypy"), want);
    // The cached answer is the same.
    let (_, cached) = check(dir, &["src/m.py"]);
    assert_eq!(gate(&cached, "mypy")["cached_files"], 1, "{cached}");
    assert_eq!(places(&cached, "mypy"), want);
}

/// Without `files`, mypy's `exclude` applies only when it walks: the backend of the full-stack
/// FastAPI template runs `mypy app` in `backend/` and never checks `app/alembic/`. The gate
/// hands mypy the files in scope less those `exclude` leaves out, in its `cwd`.
#[test]
fn mypy_is_not_handed_what_its_exclude_leaves_out() {
    let ws = workspace(&[
        (
            "quality.yaml",
            "version: 1\ngates:\n  mypy: { preset: mypy, cwd: backend }\n",
        ),
        (
            "backend/pyproject.toml",
            "[tool.mypy]\nexclude = [\"venv\", \".venv\", \"alembic\"]\n",
        ),
        ("backend/app/main.py", "x: int = \"a\"\n"),
        ("backend/app/alembic/env.py", "y: int = \"b\"\n"),
    ]);
    let dir = ws.path();
    commit_all(dir);
    let (_, own) = tool_output(
        &dir.join("backend"),
        &[
            "mypy",
            "--no-native-parser",
            "--output",
            "json",
            "--no-error-summary",
            "app",
        ],
    );
    assert!(
        own.contains("app/main.py") && !own.contains("alembic"),
        "{own}"
    );
    let want = vec![(
        "backend/app/main.py".to_string(),
        1,
        10,
        "assignment".to_string(),
    )];
    let (_, project) = check(dir, &["--scope", "project", "--no-cache"]);
    assert_eq!(places(&project, "mypy"), want);
    let (code, named) = check(dir, &["backend/app/alembic/env.py", "--no-cache"]);
    assert_eq!(code, 0, "{named}");
    assert_eq!(gate(&named, "mypy")["status"], "passed", "{named}");
}

/// pyright honours `exclude` for the files it is given but not `include`: a repository with
/// `include` runs a bare `pyright`, and so does the gate.
#[test]
fn pyright_runs_over_its_included_files() {
    let ws = workspace(&[
        (
            "quality.yaml",
            "version: 1\ngates:\n  pyright: { preset: pyright }\n",
        ),
        ("pyproject.toml", "[tool.pyright]\ninclude = [\"src\"]\n"),
        ("src/m.py", "x: int = \"a\"\n"),
        ("tests/t.py", "y: int = \"b\"\n"),
    ]);
    let dir = ws.path();
    commit_all(dir);
    let (code, own) = tool_output(dir, &["pyright", "--outputjson"]);
    assert_eq!(code, 1, "{own}");
    let own: Value = serde_json::from_str(&own).unwrap();
    let own_files: Vec<&str> = own["generalDiagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["file"].as_str().unwrap())
        .collect();
    assert!(
        own_files.iter().all(|f| f.ends_with("src/m.py")),
        "{own_files:?}"
    );
    let (_, project) = check(dir, &["--scope", "project"]);
    let found = places(&project, "pyright");
    assert_eq!(found.len(), own_files.len(), "{found:?}");
    assert!(found.iter().all(|f| f.0 == "src/m.py"), "{found:?}");
    let (code, outside) = check(dir, &["tests/t.py"]);
    assert_eq!(code, 0, "{outside}");
}

/// ruff's `extend-exclude` applies to the files it is handed (`--force-exclude`, as the
/// repository's pre-commit hook passes it), typos' `extend-exclude` and its binary check too.
#[test]
fn excluded_files_given_by_name_report_nothing() {
    let ws = workspace(&[
        (
            "quality.yaml",
            "version: 1\ngates:\n  ruff_lint: { preset: ruff-lint }\n  ruff_format: { preset: ruff-format }\n  typos: { preset: typos }\n",
        ),
        (
            "pyproject.toml",
            "[tool.ruff]\nextend-exclude = [\"alembic\"]\n",
        ),
        ("_typos.toml", "[files]\nextend-exclude = [\"vendor\"]\n"),
        ("alembic/env.py", "import os\nx=1\n"),
        ("app/main.py", "import os\n"),
        ("vendor/notes.txt", "teh cat\n"),
        ("README.md", "recieve\n"),
    ]);
    let dir = ws.path();
    // A PNG whose text chunk holds misspellings: typos reads it as text when named, unless
    // told to apply its own rules to named files.
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0".to_vec();
    png.extend_from_slice(b"\0\0\0\x1ftEXtComment\0teh cat will recieve it");
    std::fs::write(dir.join("logo.png"), &png).unwrap();
    commit_all(dir);
    let (code, report) = check(dir, &["--scope", "project", "--no-cache"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(
        places(&report, "ruff_lint"),
        vec![("app/main.py".to_string(), 1, 8, "F401".to_string())]
    );
    assert_eq!(places(&report, "ruff_format"), vec![]);
    assert_eq!(
        places(&report, "typos"),
        vec![("README.md".to_string(), 1, 1, "typo".to_string())]
    );
    // Named alone, they report nothing either.
    let (code, named) = check(
        dir,
        &[
            "alembic/env.py",
            "vendor/notes.txt",
            "logo.png",
            "--no-cache",
        ],
    );
    assert_eq!(code, 0, "{named}");
    // As the repository's own runs: ruff over the project, typos over the project.
    let (_, ruff) = tool_output(dir, &["ruff", "check", "--output-format", "concise", "."]);
    assert!(
        ruff.contains("app/main.py") && !ruff.contains("alembic"),
        "{ruff}"
    );
}

/// shfmt applies an EditorConfig `ignore = true` only when it walks, unless told to apply it to
/// the files it is given (`--apply-ignore`, shfmt 3.8 and later).
#[test]
fn shfmt_leaves_out_what_editorconfig_ignores() {
    let ws = workspace(&[
        (
            "quality.yaml",
            "version: 1\ngates:\n  shfmt: { preset: shfmt }\n",
        ),
        (
            ".editorconfig",
            "root = true\n\n[vendor/**]\nignore = true\n",
        ),
        ("vendor/v.sh", "x=1;   echo  $x\n"),
        ("run.sh", "y=2;   echo  $y\n"),
    ]);
    let dir = ws.path();
    commit_all(dir);
    let (_, own) = tool_output(dir, &["shfmt", "-d", "."]);
    assert!(own.contains("run.sh") && !own.contains("vendor"), "{own}");
    let (_, project) = check(dir, &["--scope", "project", "--no-cache"]);
    assert_eq!(
        places(&project, "shfmt"),
        vec![("run.sh".to_string(), 1, 0, "FORMAT".to_string())]
    );
    let (code, named) = check(dir, &["vendor/v.sh", "--no-cache"]);
    assert_eq!(code, 0, "{named}");
}

/// Bandit reads `[tool.bandit]` only with `-c pyproject.toml`, as the repository runs it: its
/// `skips` and `exclude_dirs` apply then, to the files given too.
#[test]
fn bandit_reads_its_configuration_as_the_repository_runs_it() {
    let ws = workspace(&[
        (
            "quality.yaml",
            "version: 1\ngates:\n  bandit: { preset: bandit }\n",
        ),
        (
            "pyproject.toml",
            "[tool.bandit]\nskips = [\"B101\"]\nexclude_dirs = [\"vendor\"]\n",
        ),
        (
            "app.py",
            "import subprocess\nassert True\nsubprocess.call('ls', shell=True)\n",
        ),
        ("vendor/v.py", "import pickle\npickle.loads(b'')\n"),
    ]);
    let dir = ws.path();
    commit_all(dir);
    let (_, own) = tool_output(
        dir,
        &[
            "bandit",
            "-c",
            "pyproject.toml",
            "-r",
            ".",
            "-f",
            "json",
            "-q",
        ],
    );
    let own: Value = serde_json::from_str(&own).unwrap();
    let mut want: Vec<(String, u64, u64, String)> = own["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["filename"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("./")
                    .to_string(),
                r["line_number"].as_u64().unwrap(),
                r["col_offset"].as_u64().unwrap() + 1,
                r["test_id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    want.sort();
    assert!(
        !want.is_empty() && want.iter().all(|w| w.0 == "app.py" && w.3 != "B101"),
        "{want:?}"
    );
    let (_, project) = check(dir, &["--scope", "project", "--no-cache"]);
    assert_eq!(places(&project, "bandit"), want);
    let (code, named) = check(dir, &["vendor/v.py", "--no-cache"]);
    assert_eq!(code, 0, "{named}");
}

/// pylint's `ignore` names folders it skips when it walks, not files it is given: the gate does
/// not hand it their files.
#[test]
fn pylint_leaves_out_the_folders_its_ignore_names() {
    let ws = workspace(&[
        (
            "quality.yaml",
            "version: 1\ngates:\n  pylint: { preset: pylint }\n",
        ),
        (
            "pyproject.toml",
            "[tool.pylint.main]\nignore = [\"migrations\"]\ndisable = [\"C\"]\n",
        ),
        ("app/__init__.py", ""),
        ("app/views.py", "import os\n"),
        ("app/migrations/__init__.py", ""),
        ("app/migrations/m1.py", "import sys\n"),
    ]);
    let dir = ws.path();
    commit_all(dir);
    let (_, own) = tool_output(dir, &["pylint", "--output-format=json2", "app"]);
    assert!(
        own.contains("app/views.py") && !own.contains("m1.py"),
        "{own}"
    );
    let (_, project) = check(dir, &["--scope", "project", "--no-cache"]);
    let files: Vec<String> = places(&project, "pylint")
        .into_iter()
        .map(|p| p.0)
        .collect();
    assert_eq!(files, ["app/views.py"]);
    let (code, named) = check(dir, &["app/migrations/m1.py", "--no-cache"]);
    assert_eq!(code, 0, "{named}");
}

/// Targets named on semgrep's command line bypass `.semgrepignore`: a repository with one scans
/// `.`, and so does the gate, keeping the findings for the files in scope. oxlint told only of
/// files its `ignorePatterns` leave out prints nothing and passes (it printed a sentence and
/// exited 1).
#[test]
fn semgrep_and_oxlint_leave_out_what_they_ignore() {
    let ws = workspace(&[
        (
            "quality.yaml",
            "version: 1\ngates:\n  semgrep: { preset: semgrep }\n  oxlint: { preset: oxlint }\n",
        ),
        (
            ".semgrep.yml",
            "rules:\n  - id: no-eval\n    languages: [python]\n    severity: ERROR\n    message: no eval\n    pattern: eval(...)\n",
        ),
        (".semgrepignore", "vendor/\n"),
        (
            ".oxlintrc.json",
            "{ \"ignorePatterns\": [\"vendor/**\"] }\n",
        ),
        ("app.py", "eval('1')\n"),
        ("vendor/v.py", "eval('2')\n"),
        ("vendor/v.js", "debugger;\n"),
    ]);
    let dir = ws.path();
    commit_all(dir);
    let (_, own) = tool_output(
        dir,
        &[
            "semgrep",
            "scan",
            "--quiet",
            "--metrics=off",
            "--config",
            ".semgrep.yml",
            "--json",
            ".",
        ],
    );
    assert!(
        own.contains("app.py") && !own.contains("vendor/v.py"),
        "{own}"
    );
    let (_, project) = check(dir, &["--scope", "project", "--no-cache"]);
    assert_eq!(
        places(&project, "semgrep"),
        vec![("app.py".to_string(), 1, 1, "no-eval".to_string())]
    );
    assert_eq!(gate(&project, "oxlint")["status"], "passed", "{project}");
    let (code, named) = check(dir, &["vendor/v.py", "vendor/v.js", "--no-cache"]);
    assert_eq!(code, 0, "{named}");
}

/// codespell's `skip` names a folder; given a file in it by name, codespell would check it. The
/// repository runs a bare `codespell`, and so does the gate.
#[test]
fn codespell_skips_what_its_configuration_skips() {
    let ws = workspace(&[
        (
            "quality.yaml",
            "version: 1\ngates:\n  codespell: { preset: codespell }\n",
        ),
        (".codespellrc", "[codespell]\nskip = ./vendor\n"),
        ("vendor/a.txt", "teh cat\n"),
        ("notes.txt", "recieve\n"),
    ]);
    let dir = ws.path();
    commit_all(dir);
    let (_, own) = tool_output(dir, &["codespell"]);
    assert_eq!(own.trim(), "./notes.txt:1: recieve ==> receive");
    let (_, project) = check(dir, &["--scope", "project"]);
    assert_eq!(
        places(&project, "codespell"),
        vec![("notes.txt".to_string(), 1, 0, "misspelling".to_string())]
    );
    let (code, named) = check(dir, &["vendor/a.txt", "--no-cache"]);
    assert_eq!(code, 0, "{named}");
}

/// A virtual environment and `node_modules/` that git does not ignore (Python before 3.13
/// writes no `.gitignore` into a venv) are no files of the project: the default scope of a
/// fresh clone, `branch`, `project` and folders given by name leave them out alike.
#[test]
fn no_scope_holds_the_files_of_tools_folders() {
    let ws = workspace(&[
        (
            "quality.yaml",
            "version: 1\ngates:\n  ruff_lint: { preset: ruff-lint }\n",
        ),
        ("app.py", "x = 1\n"),
    ]);
    let dir = ws.path();
    commit_all(dir);
    git(dir, &["checkout", "-q", "-b", "work"]);
    write(dir, "app.py", "import os\n");
    write(dir, "env/pyvenv.cfg", "home = /usr/bin\n");
    write(dir, "env/lib/site-packages/pkg/mod.py", "import sys\n");
    write(dir, ".venv/lib/x.py", "import re\n");
    write(dir, "node_modules/pkg/tool.py", "import json\n");
    write(dir, "web/node_modules/pkg/index.js", "x\n");
    write(
        dir,
        "target/CACHEDIR.TAG",
        "Signature: 8a477f597d28d172789f06886806bc55\n",
    );
    write(dir, "target/gen.py", "import io\n");
    // Every Python file outside tools' folders imports something it does not use: ruff names
    // each file of the scope that it was given.
    for args in [
        vec![],
        vec!["--scope", "branch"],
        vec!["--scope", "project"],
        vec!["."],
    ] {
        let mut args = args.clone();
        args.extend(["--no-state", "--no-cache"]);
        let (code, report) = check(dir, &args);
        assert_eq!(code, 1, "{args:?}: {report}");
        let files: Vec<String> = places(&report, "ruff_lint")
            .into_iter()
            .map(|p| p.0)
            .collect();
        assert_eq!(files, ["app.py"], "{args:?}");
        if args.len() == 2 {
            assert_eq!(report["scope"]["files_in_scope"], 1, "{report}");
        }
    }
    // Named by hand, a file in a tool's folder is left out with a note.
    let (code, named) = check(dir, &["env/lib/site-packages/pkg/mod.py", "--no-state"]);
    assert_eq!(code, 0, "{named}");
    assert!(
        named["scope"]["note"]
            .as_str()
            .is_some_and(|n| n.contains("tools' folders")),
        "{named}"
    );
}
