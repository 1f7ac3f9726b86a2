//! Every preset of the catalog against its real tool, driven by the data in
//! `fixtures/presets/<name>/expected.yaml`: adding a preset adds a YAML file and a fixture folder,
//! and no code here. Each preset is checked by `qgates presets test NAME fixtures/presets/NAME`,
//! the command a team runs on its own presets (src/cli/preset_test/): on copies of the fixture
//! (a git repository each) it checks that
//!
//! - `qgates check --scope project` reports exactly the expected (file, line, column, code);
//! - each expected place holds the text `points_at` names, and the fixture has non-ASCII text
//!   before a finding, so a column counted in the wrong unit would land elsewhere;
//! - the tool's own output, run without qgates (the preset's command on the files qgates gives
//!   it), says the same: each finding's `tool_says` regex;
//! - the fixture without its files that have findings passes;
//! - a preset's fixer (`qgates check --fix`) leaves every file as the tool's own in-place fix
//!   (`fix_in_place`) does.
//!
//! The tools are the pinned ones scripts/setup.sh installs (`.venv/bin`, `tools/bin`); a tool that
//! is missing fails the test. `QGATES_PRESETS=shellcheck,mypy` runs only the presets named.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use common::presets::{Preset, project};
use common::{path_with_catalog_tools, qgates};
use qgates::cli::preset_test::fixture::{parse_at, places_of};

/// Presets checked at once (each runs its four checks side by side).
const WORKERS: usize = 2;

/// Runs `qgates check ARGS --format json --no-state` with every catalog tool on PATH; returns
/// the gate's result and what to show when it is not as expected.
fn check(dir: &Path, args: &[&str]) -> (Value, String) {
    let out = qgates(dir)
        .env("PATH", path_with_catalog_tools())
        .arg("check")
        .args(args)
        .args(["--format", "json", "--no-state"])
        .output()
        .expect("run qgates");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("qgates printed no JSON report ({e}):\n{stdout}"));
    let gate = report["gates"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["id"] == "g"))
        .cloned()
        .unwrap_or_else(|| panic!("no gate `g` in the report: {report}"));
    let mut shown = serde_json::to_string_pretty(&gate).unwrap_or_default();
    for stream in ["stdout", "stderr"] {
        if let Some(log) = gate["log"][stream].as_str() {
            let text = std::fs::read_to_string(dir.join(log)).unwrap_or_default();
            shown.push_str(&format!("\n--- the tool's {stream}:\n{text}"));
        }
    }
    (gate, shown)
}

/// `qgates presets test NAME fixtures/presets/NAME`: what it printed when it failed.
fn check_preset(name: &str) -> Option<String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixture = format!("fixtures/presets/{name}");
    let out = qgates(repo)
        .env("PATH", path_with_catalog_tools())
        .args(["presets", "test", name, &fixture])
        .output()
        .expect("run qgates presets test");
    (!out.status.success()).then(|| {
        format!(
            "exit code {:?}\n{}{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The presets to check: every fixture folder, or those `QGATES_PRESETS` names.
fn selected() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/presets");
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .expect("fixtures/presets")
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    if let Ok(only) = std::env::var("QGATES_PRESETS") {
        let only: Vec<&str> = only.split(',').map(str::trim).collect();
        names.retain(|n| only.contains(&n.as_str()));
    }
    names
}

#[test]
fn every_preset_has_a_fixture_and_every_fixture_a_preset() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let presets: Vec<String> = std::fs::read_dir(repo.join("presets"))
        .expect("presets/")
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".yaml").map(str::to_string)
        })
        .collect();
    let fixtures: Vec<String> = std::fs::read_dir(repo.join("fixtures/presets"))
        .expect("fixtures/presets/")
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let without_fixture: Vec<&String> = presets.iter().filter(|p| !fixtures.contains(p)).collect();
    let without_preset: Vec<&String> = fixtures.iter().filter(|f| !presets.contains(f)).collect();
    assert!(
        without_fixture.is_empty() && without_preset.is_empty(),
        "presets without a fixture folder fixtures/presets/NAME: {without_fixture:?}; fixture folders without presets/NAME.yaml: {without_preset:?}"
    );
}

#[test]
fn every_preset_reports_what_its_tool_reports() {
    let names = selected();
    assert!(!names.is_empty(), "no preset selected (QGATES_PRESETS?)");
    let next = AtomicUsize::new(0);
    let failures: Mutex<BTreeMap<String, String>> = Mutex::default();
    std::thread::scope(|s| {
        for _ in 0..WORKERS.min(names.len()) {
            s.spawn(|| {
                while let Some(name) = names.get(next.fetch_add(1, Ordering::SeqCst)) {
                    if let Some(shown) = check_preset(name) {
                        failures.lock().expect("lock").insert(name.clone(), shown);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().expect("lock");
    let shown: String = failures
        .iter()
        .map(|(name, shown)| format!("\n=== preset {name}: {shown}\n"))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} presets differ from their expected.yaml: {:?}\n{shown}",
        failures.len(),
        names.len(),
        failures.keys().collect::<Vec<_>>()
    );
}

/// rustfmt checks the modules a file declares as well as the file: given `lib.rs` (which declares
/// `mod bad;`) and `bad.rs`, it prints bad.rs's diff twice. qgates reports it once.
#[test]
fn a_finding_the_tool_prints_twice_is_reported_once() {
    let p = Preset::load("rustfmt").expect("the rustfmt preset");
    let dir = project(&p, &["src/broken.rs".to_string()]);
    let lib = dir.path().join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).expect("lib.rs");
    std::fs::write(&lib, format!("{text}\nmod bad;\n")).expect("write lib.rs");
    let (gate, shown) = check(dir.path(), &["--scope", "project"]);
    assert!(
        shown.matches("Diff in ").count() == 2,
        "rustfmt no longer prints the module's diff twice; this test needs another tool that repeats a finding:\n{shown}"
    );
    let want = vec![parse_at("src/bad.rs:1", Some("FORMAT".into()))];
    assert_eq!(places_of(&gate), want, "{shown}");
}
