//! Every preset with a warm process (docs/warm.md) answers through it what its tool answers
//! cold: on its fixture (`fixtures/presets/<name>`), and on a file where `é`, CJK, an emoji and
//! a tab stand before each finding; and for the type checkers, a change to a file the check
//! was not asked about reaches the warm process too. Real tools from the project's setup, real git repositories.

use crate::common;

use std::path::Path;

use common::{check_json_with, git, qgates, write};
use qgates::core::config::presets;
use serde_json::Value;

/// Findings on lines where other text stands before the token, for ESLint.
const WIDE_JS: &str = "const a = \"é名😀\"; let unused = 1;\nconst b = \"x\";\tvar x = 2;\n";

/// Findings on lines where other text stands before the token, for the type checkers.
const WIDE: &str = "def f(a: str, b: int) -> None:\n    pass\n\n\nf(\"café\", \"3\")\nf(\"名前\", \"3\")\nf(\"😀\", \"3\")\nf(\"x\",\t\"3\")\nf(\"é名😀\",\t\"3\")\n";

/// The presets that have a warm process.
fn warm_presets() -> Vec<&'static str> {
    presets::catalog()
        .iter()
        .filter(|p| p.gate.warm.is_some())
        .map(|p| p.name)
        .collect()
}

fn run(root: &Path, warm: bool) -> Value {
    let mut cmd = qgates(root);
    cmd.env("PATH", common::path_with_catalog_tools());
    let mut args = vec!["--scope", "project", "--no-cache", "--no-state"];
    if warm {
        args.push("--warm");
    }
    check_json_with(cmd, &args).1
}

/// Every finding, whole, and whether the warm process answered.
fn findings(report: &Value) -> (Vec<String>, bool) {
    let gate = common::gate(report, "g");
    let mut all: Vec<String> = (gate["violations"].as_array().into_iter().flatten())
        .map(Value::to_string)
        .collect();
    all.sort();
    (all, gate["warm"] == true)
}

#[test]
fn every_warm_preset_answers_warm_what_its_tool_answers_cold() {
    let names = warm_presets();
    assert!(
        ["mypy", "pyright", "basedpyright", "eslint"]
            .iter()
            .all(|n| names.contains(n)),
        "{names:?}"
    );
    let mut problems = Vec::new();
    for name in names {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/presets")
            .join(name);
        common::copy_dir(&fixture, root);
        let _ = std::fs::remove_dir_all(root.join(".mypy_cache"));
        std::fs::remove_file(root.join("expected.yaml")).unwrap();
        let python = presets::find(name)
            .unwrap()
            .about
            .languages
            .contains(&"python".into());
        if python {
            write(root, "wide.py", WIDE);
        } else {
            write(root, "wide.js", WIDE_JS);
            // A JavaScript project has its tools in node_modules: ESLint's language server
            // loads the eslint library from there, as the command line would run it.
            let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/node_modules");
            std::os::unix::fs::symlink(tools, root.join("node_modules")).unwrap();
        }
        write(
            root,
            "quality.yaml",
            &format!("version: 1\ngates:\n  g: {{ preset: {name} }}\n"),
        );
        write(root, ".gitignore", ".qgates/\n.mypy_cache/\nnode_modules\n");
        git(root, &["init", "-q", "-b", "main"]);
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "fixture"]);
        let cold = run(root, false);
        let warm = run(root, true);
        let (cold_found, cold_warm) = findings(&cold);
        let (warm_found, served) = findings(&warm);
        if cold_warm || !served {
            problems.push(format!("{name}: warm {served} / cold {cold_warm}: {warm}"));
        }
        if cold_found.len() < 4 || warm_found != cold_found {
            problems.push(format!(
                "{name}: cold\n{cold_found:#?}\nwarm\n{warm_found:#?}"
            ));
        }
        if !python {
            let _ = qgates(root).args(["daemon", "stop"]).output();
            continue;
        }
        // A change to a file the check is not about: `g` returns another type now.
        write(root, "lib.py", "def g() -> int:\n    return 1\n");
        write(root, "use.py", "from lib import g\n\nx: int = g()\n");
        run(root, true);
        write(root, "lib.py", "def g() -> str:\n    return \"1\"\n");
        let asked = |warm: bool| {
            let mut cmd = qgates(root);
            cmd.env("PATH", common::path_with_catalog_tools());
            let mut args = vec!["use.py", "--no-cache", "--no-state"];
            if warm {
                args.push("--warm");
            }
            findings(&check_json_with(cmd, &args).1)
        };
        let (warm_use, served) = asked(true);
        let (cold_use, _) = asked(false);
        if cold_use.len() != 1 || warm_use != cold_use || !served {
            problems.push(format!(
                "{name}: after lib.py changed, cold {cold_use:?}, warm ({served}) {warm_use:?}"
            ));
        }
        let _ = qgates(root).args(["daemon", "stop"]).output();
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The other way a language server gives diagnostics: Biome's (`biome lsp-proxy`) answers no
/// pulls, so the keeper takes what it publishes for the version it was sent. Its `files` name
/// only what it takes (docs/warm.md, "Language servers"), and a file changed after the server
/// started is answered as it now stands.
#[test]
fn a_language_server_that_only_publishes_answers_what_its_tool_answers_cold() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/presets/biome-lint");
    common::copy_dir(&fixture, root);
    std::fs::remove_file(root.join("expected.yaml")).unwrap();
    write(root, "wide.js", WIDE_JS);
    write(
        root,
        "quality.yaml",
        "version: 1\ngates:\n  g:\n    preset: biome-lint\n    files: [\"*.js\"]\n    warm: { language_server: [biome, lsp-proxy] }\n",
    );
    write(root, ".gitignore", ".qgates/\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "fixture"]);
    let stop = || qgates(root).args(["daemon", "stop"]).output();

    let (cold, _) = findings(&run(root, false));
    let (warm, served) = findings(&run(root, true));
    assert!(served, "the warm process answered");
    assert!(cold.len() >= 4, "{cold:#?}");
    assert_eq!(warm, cold);

    // Changed on disk after the server has it open: the next publication is of the new text.
    write(root, "wide.js", "const a = \"é名😀\"; let other = 1;\n");
    let (cold, _) = findings(&run(root, false));
    let (warm, served) = findings(&run(root, true));
    let _ = stop();
    assert!(
        served && cold.iter().any(|f| f.contains("other")),
        "{cold:#?}"
    );
    assert_eq!(warm, cold);
}
