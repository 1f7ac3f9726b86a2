//! `qgates presets test PRESET FIXTURE`: runs a preset against a fixture folder the way the
//! catalog's own presets are tested, so a team keeps its own presets as honest
//! (docs/presets.md, "Testing a preset"). On copies of the fixture, each a git repository:
//!
//! - every place `expected.yaml` names holds the text it names, and one finding comes after
//!   non-ASCII text on its line;
//! - `qgates check --scope project` reports exactly the expected findings;
//! - the tool's own output, run without qgates on the files qgates gives it, matches each
//!   finding's `tool_says`;
//! - the fixture without the files that have findings passes;
//! - with a fixer, `qgates check --fix` leaves every file as the tool's own in-place fix does.

mod checks;
pub mod fixture;
mod runs;

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use super::output::{print_stdout, usage};
use crate::core::api::resolve_program;
use crate::core::config::limits::MAX_CONFIG_BYTES;
use crate::core::config::presets;
use crate::core::report::exit;
use fixture::{Fixture, strings};
use runs::{COPIED_PRESET, Subject};

/// One check's outcome: passed (with what it showed), not applicable, or what is wrong.
enum Outcome {
    Passed(String),
    NotApplicable(String),
    Failed(Vec<String>),
}

pub fn test(preset: &str, fixture_dir: &Path) -> i32 {
    let subject = match subject(preset) {
        Ok(s) => s,
        Err(why) => return usage(&why),
    };
    let fixture = match Fixture::load(fixture_dir) {
        Ok(f) => f,
        Err(why) => return usage(&why),
    };
    let mut out = format!("preset {preset} on {}\n", fixture_dir.display());
    let outcomes = match run_checks(&subject, &fixture) {
        Ok(outcomes) => outcomes,
        Err(why) => {
            let _ = writeln!(out, "  cannot run: {why}");
            print_stdout(&out);
            return exit::GATE_ERROR;
        }
    };
    let mut failed = 0;
    for (name, outcome) in &outcomes {
        match outcome {
            Outcome::Passed(what) => {
                let _ = writeln!(out, "  ok    {name}: {what}");
            }
            Outcome::NotApplicable(why) => {
                let _ = writeln!(out, "  -     {name}: {why}");
            }
            Outcome::Failed(problems) => {
                failed += 1;
                let _ = writeln!(out, "  FAIL  {name}:");
                for p in problems {
                    let _ = writeln!(out, "        {}", p.replace('\n', "\n        "));
                }
            }
        }
    }
    if failed == 0 {
        let _ = writeln!(
            out,
            "The preset does what {} says.",
            fixture_dir.join("expected.yaml").display()
        );
        print_stdout(&out);
        exit::GREEN
    } else {
        let _ = writeln!(out, "{failed} of {} checks failed.", outcomes.len());
        print_stdout(&out);
        exit::VIOLATIONS
    }
}

/// The preset named on the command line: a catalog name, or a preset file (a path).
fn subject(preset: &str) -> Result<Subject, String> {
    let is_file = preset.contains('/') || preset.ends_with(".yaml") || preset.ends_with(".yml");
    if !is_file {
        let found = presets::find(preset).ok_or_else(|| {
            format!("there is no catalog preset `{preset}`; give a preset file's path (e.g. ./tools/qgates/{preset}.yaml) or a name `qgates presets` lists")
        })?;
        return Ok(Subject {
            preset_ref: preset.to_string(),
            file_text: None,
            gate: gate_value(&found.gate),
        });
    }
    let path = Path::new(preset);
    let meta = std::fs::metadata(path).map_err(|e| format!("{preset}: {e}"))?;
    if meta.len() > MAX_CONFIG_BYTES as u64 {
        return Err(format!(
            "{preset} is {} bytes; a preset file is at most {MAX_CONFIG_BYTES}",
            meta.len()
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{preset}: {e}"))?;
    let file = presets::read_preset(&text).map_err(|e| {
        format!("{preset} is not a preset file: {e} (`qgates presets show NAME` prints a catalog preset's gate to start from)")
    })?;
    Ok(Subject {
        preset_ref: format!("./{COPIED_PRESET}"),
        file_text: Some(text),
        gate: gate_value(&file.gate),
    })
}

fn gate_value(gate: &crate::core::config::model::RawGate) -> Value {
    let mut v = serde_json::to_value(gate).unwrap_or(Value::Null);
    presets::drop_nulls(&mut v);
    v
}

/// The checks, in order, each with its outcome. An error: the test cannot run at all (a tool
/// missing, the fixture's files unreadable).
fn run_checks(
    subject: &Subject,
    fixture: &Fixture,
) -> Result<Vec<(&'static str, Outcome)>, String> {
    let programs = [
        strings(&subject.gate, "command"),
        fixture.expected.fix_in_place.clone().unwrap_or_default(),
    ];
    // Found as `qgates check` finds it (PATH, and the fixture's own tool folders).
    let here = &fixture.dir;
    let missing: Vec<&String> = (programs.iter().filter_map(|argv| argv.first()))
        .filter(|program| resolve_program(program, here, here).is_err())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{missing:?} not found on PATH; install the tool (the preset's `about.install` says how)"
        ));
    }
    let files = fixture.matching_files(&subject.gate)?;
    let count = fixture.expected.findings.len();
    let of = |r: Result<(), String>, what: String| match r {
        Ok(()) => Outcome::Passed(what),
        Err(why) => Outcome::Failed(vec![why]),
    };
    // The runs are independent: side by side, a slow tool's four runs take the time of one.
    Ok(std::thread::scope(|s| {
        let report = s.spawn(|| checks::report(subject, fixture, &files));
        let tool = s.spawn(|| checks::tool_output(subject, fixture, &files));
        let clean = s.spawn(|| checks::clean(subject, fixture));
        let fix = s.spawn(|| checks::fix(subject, fixture, &files));
        let panicked = |_| Err("the check panicked".to_string());
        vec![
            (
                "places",
                of(
                    checks::places(fixture),
                    "each expected place holds the text it names, one after non-ASCII text".into(),
                ),
            ),
            (
                "report",
                of(
                    report.join().unwrap_or_else(panicked),
                    format!("qgates check reports exactly the {count} expected findings"),
                ),
            ),
            (
                "tool",
                match tool.join() {
                    Ok(problems) if problems.is_empty() => Outcome::Passed(
                        "the tool's own output says each finding as `tool_says` pins it".into(),
                    ),
                    Ok(problems) => Outcome::Failed(problems),
                    Err(_) => Outcome::Failed(vec!["the check panicked".into()]),
                },
            ),
            (
                "clean",
                of(
                    clean.join().unwrap_or_else(panicked),
                    "without the files that have findings, the gate passes".into(),
                ),
            ),
            (
                "fix",
                match fix.join() {
                    Ok(Ok(true)) => Outcome::Passed(
                        "qgates check --fix leaves every file as `fix_in_place` does".into(),
                    ),
                    Ok(Ok(false)) => Outcome::NotApplicable("the preset has no fixer".into()),
                    Ok(Err(why)) => Outcome::Failed(vec![why]),
                    Err(_) => Outcome::Failed(vec!["the check panicked".into()]),
                },
            ),
        ]
    }))
}
