//! A team's own presets (docs/presets.md, "Your own presets"): `preset: ./path.yaml` names a
//! preset file in the repository, read as the catalog's are, covered by trust, listed by
//! `qgates presets`. Real ruff, real git repositories.

use crate::common;

use std::path::Path;

use common::{check_json, git, qgates, write};
use serde_json::Value;

const OURS: &str = "tools/qgates/ourlint.yaml";

/// The catalog's ruff-lint preset, kept as the team's own file.
fn ruff_lint_preset() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/ruff-lint.yaml"))
        .unwrap()
}

fn repo(config: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write(root, "a.py", "import os\n\nx = 1\n");
    write(root, OURS, &ruff_lint_preset());
    write(root, "quality.yaml", config);
    write(root, ".gitignore", ".qgates/\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "start"]);
    ws
}

fn violations(report: &Value, gate: &str) -> Vec<Value> {
    common::gate(report, gate)["violations"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_gate_runs_from_a_preset_file_kept_in_the_repository() {
    let ws = repo(&format!(
        "version: 1\ngates:\n  ours: {{ preset: ./{OURS} }}\n  catalog: {{ preset: ruff-lint }}\n"
    ));
    let (code, report) = check_json(ws.path(), &["--scope", "project", "--no-cache"]);
    assert_eq!(code, 1, "{report}");
    let ours = violations(&report, "ours");
    assert_eq!(ours.len(), 1, "{report}");
    assert_eq!(ours, violations(&report, "catalog"));
    assert_eq!(common::gate(&report, "ours")["name"], "Ruff Lint");

    // Listed beside the catalog.
    let out = qgates(ws.path()).arg("presets").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "This workspace's own presets (named in quality.yaml):\n./{OURS}  Ruff  python  pip install ruff"
        )),
        "{text}"
    );
    let out = qgates(ws.path())
        .args(["presets", "--format", "json"])
        .output()
        .unwrap();
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let own: Vec<&Value> = (list.as_array().unwrap().iter())
        .filter(|p| p["local"] == true)
        .collect();
    assert_eq!(own.len(), 1);
    assert_eq!(own[0]["name"], format!("./{OURS}"));
}

#[test]
fn what_a_preset_file_makes_a_gate_run_is_covered_by_trust() {
    let ws = repo(&format!(
        "version: 1\ngates:\n  ours: {{ preset: ./{OURS} }}\n"
    ));
    let root = ws.path();
    let (_dir, store) = common::trusted(root);
    let trusted = || {
        let out = qgates(root)
            .env("QGATES_TRUST_FILE", &store)
            .args(["status", "--json"])
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["trusted"].clone()
    };
    assert_eq!(trusted(), true);
    // The preset file changes the command: the trust given before does not cover it.
    write(
        root,
        OURS,
        &ruff_lint_preset().replace("--force-exclude]", "--force-exclude, --isolated]"),
    );
    assert_eq!(trusted(), false);
}

#[test]
fn a_preset_path_that_cannot_be_used_is_a_configuration_error() {
    for (preset, says) in [
        ("./../elsewhere.yaml", "must be inside the repository"),
        ("./tools/qgates/missing.yaml", "does not exist"),
        ("./a.py", "is not a preset file"),
    ] {
        let ws = repo(&format!(
            "version: 1\ngates:\n  ours: {{ preset: {preset} }}\n"
        ));
        let out = qgates(ws.path())
            .args(["check", "--scope", "project"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{preset}: {stderr}");
        assert!(
            stderr.contains(&format!("gate `ours`: preset `{preset}`: ")) && stderr.contains(says),
            "{preset}: {stderr}"
        );
    }
}
