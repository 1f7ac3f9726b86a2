//! The five things a preset test checks on copies of the fixture (docs/presets.md, "Testing a
//! preset"). Each returns what is wrong, or nothing.

use std::path::Path;

use regex::Regex;

use crate::core::api::place_is_set;
use crate::core::config::report_dir;

use super::fixture::{Fixture, NO_FILE, list, parse_at, places_of, strings};
use super::runs::{Subject, check, clip, project, repository_of, run_tool};

/// Each expected place exists in the fixture and holds `points_at`; and one finding comes after
/// non-ASCII text on its line, so a column counted in another unit would land elsewhere.
pub fn places(fixture: &Fixture) -> Result<(), String> {
    let mut after_non_ascii = false;
    for f in &fixture.expected.findings {
        let place = parse_at(f.at(), f.code.clone());
        if place.file == NO_FILE {
            continue;
        }
        let text = std::fs::read_to_string(fixture.dir.join(&place.file))
            .map_err(|e| format!("`at: {}`: {}: {e}", f.at(), place.file))?;
        if place.line == Some(0) || place.column == Some(0) {
            return Err(format!("`at: {}`: lines and columns count from 1", f.at()));
        }
        let Some(line) = place.line else { continue };
        let line_text = (text.split_inclusive('\n').nth(line as usize - 1))
            .ok_or_else(|| format!("`at: {}`: {} has no line {line}", f.at(), place.file))?;
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
                    f.at()
                ));
            }
            Some(want) if !here.starts_with(want.as_str()) => {
                return Err(format!(
                    "`at: {}` points at {here:?} in the fixture, not at `points_at: {want:?}`",
                    f.at()
                ));
            }
            Some(_) => {}
        }
    }
    // A tool that gives no lines has no column to miscount.
    let placed = (fixture.expected.findings.iter()).any(|f| parse_at(f.at(), None).line.is_some());
    if placed && !after_non_ascii {
        return Err("no finding comes after non-ASCII text on its line, so a column counted in another unit would go unnoticed: put `é` and `🎉` before one".into());
    }
    Ok(())
}

/// qgates' violations on the fixture are the expected ones, and it gave the tool the files this
/// test gives it.
pub fn report(subject: &Subject, fixture: &Fixture, files: &[String]) -> Result<(), String> {
    let dir = project(subject, fixture, &[])?;
    let (gate, shown) = check(dir.path(), &["--scope", "project"])?;
    if gate["status"] != "failed" {
        return Err(format!(
            "qgates: the gate is {}, not failed:\n{shown}",
            gate["status"]
        ));
    }
    let (got, want) = (places_of(&gate), fixture.expected_places());
    if got != want {
        return Err(format!(
            "qgates reported:{}\n  expected.yaml says:{}\n{shown}",
            list(&got),
            list(&want)
        ));
    }
    if subject.gate["pass_files"] != false && gate["files_checked"] != files.len() {
        return Err(format!(
            "qgates checked {} files, this test gives the tool {} ({files:?})",
            gate["files_checked"],
            files.len()
        ));
    }
    Ok(())
}

/// The tool's own output, run without qgates (the preset's command on the files qgates gives
/// it, in runs of at most `max_files_per_run`), says what each finding's `tool_says` pins.
pub fn tool_output(subject: &Subject, fixture: &Fixture, files: &[String]) -> Vec<String> {
    // A tool given no files (the gate passes none, or none is its) runs once without them.
    let batches = match subject.gate["pass_files"] != false && !files.is_empty() {
        true => batches(&subject.gate, files),
        false => vec![&[][..]],
    };
    let mut output = String::new();
    let mut runs = Vec::new();
    for batch in batches {
        match run_once(subject, fixture, batch) {
            Ok((code, said, argv)) => {
                output.push_str(&said);
                runs.push(format!("`{argv}` (exit code {code})"));
            }
            Err(why) => return vec![why],
        }
    }
    let mut problems = Vec::new();
    for f in &fixture.expected.findings {
        match Regex::new(&f.tool_says) {
            Err(e) => problems.push(format!("`at: {}`: tool_says is not a regex: {e}", f.at())),
            Ok(re) if !re.is_match(&output) => problems.push(format!(
                "`at: {}`: the tool's own output does not match `tool_says: {}`; {} printed:\n{}",
                f.at(),
                f.tool_says,
                runs.join(", "),
                clip(&output)
            )),
            Ok(_) => {}
        }
    }
    problems
}

/// One run of the preset's command on `files` in a copy of the fixture: its exit code, what it
/// printed and the report file it wrote, and the command line.
fn run_once(
    subject: &Subject,
    fixture: &Fixture,
    files: &[String],
) -> Result<(i32, String, String), String> {
    let dir = repository_of(fixture, &[])?;
    // A preset that writes a report file names `{report_dir}`: a folder of this test's own.
    let reports = tempfile::tempdir().map_err(|e| e.to_string())?;
    let report_dir = reports.path().to_string_lossy().into_owned();
    let mut argv: Vec<String> = (strings(&subject.gate, "command").iter())
        .map(|a| report_dir::expand(a, &report_dir))
        .collect();
    // What `args_when` adds where its place is set, then the files, as qgates runs the tool.
    for (place, args) in subject.gate["args_when"].as_object().into_iter().flatten() {
        if place_is_set(place, dir.path()) {
            argv.extend(
                args.as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|a| a.as_str())
                    .map(String::from),
            );
        }
    }
    argv.extend(files.iter().cloned());
    let (code, mut output) = run_tool(&subject.gate, dir.path(), &argv)?;
    // `tool_says` may pin the report the tool wrote as well as what it printed.
    if let Some(file) = subject.gate["output_file"].as_str() {
        let path = match file.strip_prefix("{report_dir}") {
            Some(rest) => reports.path().join(rest.trim_start_matches('/')),
            None => dir.path().join(file),
        };
        let report = std::fs::read_to_string(&path)
            .map_err(|e| format!("`{}` wrote no report at {file}: {e}", argv.join(" ")))?;
        output.push_str(&format!("\n{report}"));
    }
    Ok((code, output, argv.join(" ")))
}

/// The fixture without its files that have findings passes: the gate ran and found nothing.
pub fn clean(subject: &Subject, fixture: &Fixture) -> Result<(), String> {
    let bad: Vec<String> = (fixture.expected_places().into_iter())
        .map(|p| p.file)
        .filter(|f| f != NO_FILE)
        .collect();
    let dir = project(subject, fixture, &bad)?;
    let (gate, shown) = check(dir.path(), &["--scope", "project"])?;
    if gate["status"] != "passed" {
        return Err(format!(
            "without {bad:?} the gate is {}, not passed (the fixture needs a clean file the preset checks):\n{shown}",
            gate["status"]
        ));
    }
    Ok(())
}

/// `qgates check --fix` leaves every file of the fixture as the tool's own in-place fix does
/// (given the files qgates gives the tool, in runs of at most `max_files_per_run`).
/// `Ok(false)`: the preset has no fixer, so there was nothing to check.
pub fn fix(subject: &Subject, fixture: &Fixture, files: &[String]) -> Result<bool, String> {
    let in_place = match (&subject.gate["fix"], &fixture.expected.fix_in_place) {
        (serde_json::Value::Null, None) => return Ok(false),
        (serde_json::Value::Null, Some(_)) => {
            return Err("`fix_in_place` is given but the preset has no `fix`".into());
        }
        (_, None) => {
            return Err("the preset has a `fix`: give `fix_in_place`, the tool's own in-place fix, to check it against".into());
        }
        (_, Some(argv)) => argv,
    };
    let by_qgates = project(subject, fixture, &[])?;
    let (gate, shown) = check(by_qgates.path(), &["--fix", "--scope", "project"])?;
    let by_tool = repository_of(fixture, &[])?;
    for batch in batches(&subject.gate, files) {
        let argv: Vec<String> = in_place.iter().chain(batch).cloned().collect();
        run_tool(&subject.gate, by_tool.path(), &argv)?;
    }
    let argv = in_place;
    let read = |dir: &Path, rel: &str| std::fs::read_to_string(dir.join(rel)).unwrap_or_default();
    let mut changed = 0;
    for rel in fixture.files() {
        let (ours, theirs) = (read(by_qgates.path(), &rel), read(by_tool.path(), &rel));
        if ours != theirs {
            return Err(format!(
                "after `qgates check --fix`, {rel} is:\n{ours}\n--- `{}` made it:\n{theirs}\n{shown}",
                argv.join(" ")
            ));
        }
        changed += usize::from(theirs != read(&fixture.dir, &rel));
    }
    if changed == 0 {
        return Err(format!(
            "`{}` changed no file of the fixture: give it one to fix\n{gate}",
            argv.join(" ")
        ));
    }
    Ok(true)
}

/// `files` in runs of at most the gate's `max_files_per_run`, as qgates runs the tool.
fn batches<'f>(gate: &serde_json::Value, files: &'f [String]) -> Vec<&'f [String]> {
    let per_run = (gate["max_files_per_run"].as_u64())
        .filter(|n| *n > 0)
        .map_or(files.len().max(1), |n| n as usize);
    files.chunks(per_run).collect()
}
