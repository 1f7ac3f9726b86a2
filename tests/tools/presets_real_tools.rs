//! Every preset of the catalog against its real tool, driven by the data in
//! `fixtures/presets/<name>/expected.yaml`: adding a preset adds a YAML file and a fixture folder,
//! and no code here. For each preset, on copies of its fixture (a git repository each):
//!
//! - `qgates check --scope project` reports exactly the expected (file, line, column, code);
//! - each expected place holds the text `points_at` names, and the fixture has non-ASCII text
//!   before a finding, so a column counted in the wrong unit would land elsewhere;
//! - the tool's own output, run here without qgates (the preset's command on the files qgates
//!   gives it), says the same: each finding's `tool_says` regex, which pins the line and column
//!   as the tool prints them (what it printed, then the report file its `output_file` names, with
//!   `{report_dir}` a folder of the test's own);
//! - the fixture without its files that have findings passes;
//! - a preset's fixer (`qgates check --fix`) leaves every file as the tool's own in-place fix
//!   (`fix_in_place`) does, and leaves a file it cannot parse alone.
//!
//! The tools are the pinned ones scripts/setup.sh installs (`.venv/bin`, `tools/bin`); a tool that
//! is missing fails the test. `QGATES_PRESETS=shellcheck,mypy` runs only the presets named.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use regex::Regex;
use serde_json::Value;

use common::presets::{Preset, copy_fixture, fixture_files, list, parse_at, places_of, project};
use common::{path_with_catalog_tools, qgates};

/// Presets checked at once, each with its runs side by side.
const WORKERS: usize = 2;

/// Runs `qgates check ARGS --format json --no-state` with every catalog tool on PATH; returns
/// the gate's result and what to show when it is not as expected.
fn check(dir: &Path, args: &[&str]) -> Result<(Value, String), String> {
    let out = qgates(dir)
        .env("PATH", path_with_catalog_tools())
        .arg("check")
        .args(args)
        .args(["--format", "json", "--no-state"])
        .output()
        .expect("run qgates");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(stdout.trim()).map_err(|e| {
        format!(
            "qgates printed no JSON report ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    let gate = report["gates"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["id"] == "g"))
        .cloned()
        .ok_or_else(|| format!("no gate `g` in the report: {report}"))?;
    let mut shown = serde_json::to_string_pretty(&gate).unwrap_or_default();
    for stream in ["stdout", "stderr"] {
        if let Some(log) = gate["log"][stream].as_str() {
            let text = std::fs::read_to_string(dir.join(log)).unwrap_or_default();
            shown.push_str(&format!("\n--- the tool's {stream}:\n{}", clip(&text)));
        }
    }
    Ok((gate, shown))
}

/// The start of a long output (a failure shows enough to see what the tool said).
fn clip(text: &str) -> String {
    const MAX: usize = 4000;
    match text.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}\n[… {} more bytes]", &text[..i], text.len() - i),
        None => text.to_string(),
    }
}

/// Runs argv in `dir` with the catalog's PATH and the preset's `env`; returns the exit code and
/// stdout, a newline, stderr.
fn run_tool(p: &Preset, dir: &Path, argv: &[String]) -> Result<(i32, String), String> {
    let mut cmd = std::process::Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(dir)
        .env("PATH", path_with_catalog_tools());
    for (k, v) in p.gate["env"].as_object().into_iter().flatten() {
        cmd.env(k, v.as_str().unwrap_or_default());
    }
    let out = cmd
        .output()
        .map_err(|e| format!("`{}` could not run: {e}", argv.join(" ")))?;
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Tools colour their output when they see `CI` in the environment, as on the CI machine;
    // `tool_says` pins the words, not the colours.
    let colour = Regex::new("\x1b\\[[0-9;]*m").expect("a valid pattern");
    Ok((
        out.status.code().unwrap_or(-1),
        colour.replace_all(&text, "").into_owned(),
    ))
}

/// Whether a program is on the catalog's PATH.
fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(&path_with_catalog_tools()).any(|dir| {
        std::fs::metadata(dir.join(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// Everything wrong with one preset; empty when it does what its `expected.yaml` says.
fn check_preset(name: &str) -> Vec<String> {
    let p = match Preset::load(name) {
        Ok(p) => p,
        Err(why) => return vec![why],
    };
    let programs = [
        p.strings("command"),
        p.expected.fix_in_place.clone().unwrap_or_default(),
    ];
    let missing: Vec<&String> = programs
        .iter()
        .filter_map(|argv| argv.first())
        .filter(|program| !on_path(program))
        .collect();
    if !missing.is_empty() {
        return vec![format!(
            "{missing:?} not found on PATH (.venv/bin, tools/bin, then PATH): run scripts/setup.sh"
        )];
    }
    let mut problems = Vec::new();
    let files = match p.matching_files() {
        Ok(files) => files,
        Err(why) => return vec![why],
    };
    problems.extend(check_places(&p).err());
    // The runs are independent: side by side, a slow tool's three or four runs take the time of
    // one.
    std::thread::scope(|s| {
        let runs = [
            s.spawn(|| check_report(&p, &files).err().into_iter().collect()),
            s.spawn(|| check_tool_output(&p, &files)),
            s.spawn(|| check_clean(&p).err().into_iter().collect()),
            s.spawn(|| {
                check_fix(&p, &files)
                    .err()
                    .into_iter()
                    .collect::<Vec<String>>()
            }),
        ];
        for run in runs {
            problems.extend(run.join().unwrap_or_else(|panic| {
                let why = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
                vec![format!("a check panicked: {}", why.unwrap_or_default())]
            }));
        }
    });
    problems
}

/// Each expected place exists in the fixture and holds `points_at`; and one finding comes after
/// non-ASCII text on its line.
fn check_places(p: &Preset) -> Result<(), String> {
    let mut after_non_ascii = false;
    for f in &p.expected.findings {
        let place = parse_at(&f.at, f.code.clone());
        let text = std::fs::read_to_string(p.fixture.join(&place.file))
            .map_err(|e| format!("`at: {}`: {}: {e}", f.at, place.file))?;
        if place.line == Some(0) || place.column == Some(0) {
            return Err(format!("`at: {}`: lines and columns count from 1", f.at));
        }
        let Some(line) = place.line else { continue };
        let line_text = text
            .split_inclusive('\n')
            .nth(line as usize - 1)
            .ok_or_else(|| format!("`at: {}`: {} has no line {line}", f.at, place.file))?;
        let Some(column) = place.column else {
            after_non_ascii |= !line_text.is_ascii();
            continue;
        };
        let before: String = line_text.chars().take(column as usize - 1).collect();
        let here: String = line_text.chars().skip(column as usize - 1).collect();
        after_non_ascii |= !before.is_ascii();
        match &f.points_at {
            None => {
                return Err(format!(
                    "`at: {}` has a column: give `points_at`, the text there",
                    f.at
                ));
            }
            Some(want) if !here.starts_with(want.as_str()) => {
                return Err(format!(
                    "`at: {}` points at {here:?} in the fixture, not at `points_at: {want:?}`",
                    f.at
                ));
            }
            Some(_) => {}
        }
    }
    if !after_non_ascii {
        return Err("no finding comes after non-ASCII text on its line, so a column counted in another unit would go unnoticed: put `é` and `🎉` before one".into());
    }
    Ok(())
}

/// qgates' violations on the fixture are the expected ones, and it gave the tool the files this
/// test gives it.
fn check_report(p: &Preset, files: &[String]) -> Result<(), String> {
    let dir = project(p, &[]);
    let (gate, shown) = check(dir.path(), &["--scope", "project"])?;
    if gate["status"] != "failed" {
        return Err(format!(
            "qgates: the gate is {}, not failed:\n{shown}",
            gate["status"]
        ));
    }
    let (got, want) = (places_of(&gate), p.expected_places());
    if got != want {
        return Err(format!(
            "qgates reported:{}\n  expected.yaml says:{}\n{shown}",
            list(&got),
            list(&want)
        ));
    }
    let passes_files = p.gate["pass_files"] != false;
    if passes_files && gate["files_checked"] != files.len() {
        return Err(format!(
            "qgates checked {} files, this test gives the tool {} ({files:?})",
            gate["files_checked"],
            files.len()
        ));
    }
    Ok(())
}

/// The tool's own output, run without qgates, says what each finding's `tool_says` pins.
fn check_tool_output(p: &Preset, files: &[String]) -> Vec<String> {
    let dir = copy_fixture(p, &[]);
    // A preset that writes a report file names `{report_dir}`: a folder of this test's own here.
    let reports = tempfile::tempdir().expect("a report folder");
    let report_dir = reports.path().to_string_lossy().into_owned();
    let mut argv: Vec<String> = p
        .strings("command")
        .iter()
        .map(|a| a.replace("{report_dir}", &report_dir))
        .collect();
    if p.gate["pass_files"] != false {
        argv.extend(files.iter().cloned());
    }
    let (code, mut output) = match run_tool(p, dir.path(), &argv) {
        Ok(done) => done,
        Err(why) => return vec![why],
    };
    // `tool_says` may pin the report the tool wrote as well as what it printed.
    if let Some(file) = p.gate["output_file"].as_str() {
        let path = match file.strip_prefix("{report_dir}") {
            Some(rest) => reports.path().join(rest.trim_start_matches('/')),
            None => dir.path().join(file),
        };
        match std::fs::read_to_string(&path) {
            Ok(report) => output.push_str(&format!("\n{report}")),
            Err(e) => {
                return vec![format!(
                    "`{}` wrote no report at {file}: {e}",
                    argv.join(" ")
                )];
            }
        }
    }
    let mut problems = Vec::new();
    for f in &p.expected.findings {
        match Regex::new(&f.tool_says) {
            Err(e) => problems.push(format!("`at: {}`: tool_says is not a regex: {e}", f.at)),
            Ok(re) if !re.is_match(&output) => problems.push(format!(
                "`at: {}`: the tool's own output does not match `tool_says: {}`; `{}` printed (exit code {code}):\n{}",
                f.at,
                f.tool_says,
                argv.join(" "),
                clip(&output)
            )),
            Ok(_) => {}
        }
    }
    problems
}

/// The fixture without its files that have findings passes: the gate ran and found nothing.
fn check_clean(p: &Preset) -> Result<(), String> {
    let bad: Vec<String> = p.expected_places().into_iter().map(|pl| pl.file).collect();
    let dir = project(p, &bad);
    let (gate, shown) = check(dir.path(), &["--scope", "project"])?;
    if gate["status"] != "passed" {
        return Err(format!(
            "without {bad:?} the gate is {}, not passed (the fixture needs a clean file the preset checks):\n{shown}",
            gate["status"]
        ));
    }
    Ok(())
}

/// `qgates check --fix` leaves every file of the fixture as the tool's own in-place fix does.
fn check_fix(p: &Preset, files: &[String]) -> Result<(), String> {
    let in_place = match (&p.gate["fix"], &p.expected.fix_in_place) {
        (Value::Null, None) => return Ok(()),
        (Value::Null, Some(_)) => return Err("`fix_in_place` is given but the preset has no `fix`".into()),
        (_, None) => return Err("the preset has a `fix`: give `fix_in_place`, the tool's own in-place fix, to check it against".into()),
        (_, Some(argv)) => argv,
    };
    let by_qgates = project(p, &[]);
    let (gate, shown) = check(by_qgates.path(), &["--fix", "--scope", "project"])?;
    let by_tool = copy_fixture(p, &[]);
    let mut argv = in_place.clone();
    argv.extend(files.iter().cloned());
    run_tool(p, by_tool.path(), &argv)?;
    let read = |dir: &Path, rel: &str| std::fs::read_to_string(dir.join(rel)).unwrap_or_default();
    let mut changed = 0;
    for rel in fixture_files(&p.fixture) {
        let (ours, theirs) = (read(by_qgates.path(), &rel), read(by_tool.path(), &rel));
        if ours != theirs {
            return Err(format!(
                "after `qgates check --fix`, {rel} is:\n{ours}\n--- `{}` made it:\n{theirs}\n{shown}",
                argv.join(" ")
            ));
        }
        changed += usize::from(theirs != read(&p.fixture, &rel));
    }
    if changed == 0 {
        return Err(format!(
            "`{}` changed no file of the fixture: give it one to fix\n{gate}",
            argv.join(" ")
        ));
    }
    Ok(())
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
    let failures: Mutex<BTreeMap<String, Vec<String>>> = Mutex::default();
    std::thread::scope(|s| {
        for _ in 0..WORKERS.min(names.len()) {
            s.spawn(|| {
                while let Some(name) = names.get(next.fetch_add(1, Ordering::SeqCst)) {
                    let problems = check_preset(name);
                    if !problems.is_empty() {
                        failures
                            .lock()
                            .expect("lock")
                            .insert(name.clone(), problems);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().expect("lock");
    let shown: String = failures
        .iter()
        .map(|(name, problems)| format!("\n=== preset {name}:\n- {}\n", problems.join("\n- ")))
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
    let (gate, shown) =
        check(dir.path(), &["--scope", "project"]).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        shown.matches("Diff in ").count() == 2,
        "rustfmt no longer prints the module's diff twice; this test needs another tool that repeats a finding:\n{shown}"
    );
    let want = vec![parse_at("src/bad.rs:1", Some("FORMAT".into()))];
    assert_eq!(places_of(&gate), want, "{shown}");
}
