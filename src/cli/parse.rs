//! `qgates parse GATE FILE`: a gate's parsing rules tried on a saved output, without running it.

use std::path::{Path, PathBuf};

use super::args::ParseArgs;
use super::output::{fail, print_stderr, usage};
use super::workspace::{config_file, find_root};
use crate::core::api::report_files::{batch_of, kept_report};
use crate::core::config;
use crate::core::parse::{
    OutputSource, ParseContext, Parsed, ReadError, SavedOutput, parse_saved_with_reports,
};
use crate::core::report::{CoverageTotals, TestCounts, Violation, exit};

pub fn parse(a: ParseArgs) -> i32 {
    let root = find_root(a.root.as_deref(), Path::new("."));
    let config = match load_config(&a, &root) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let Some(gate) = config.gate(&a.gate) else {
        let known: Vec<&str> = config.gates.iter().map(|g| g.id.as_str()).collect();
        return usage(&format!(
            "unknown gate `{}`. Active gates: {}.",
            a.gate,
            known.join(", ")
        ));
    };
    let (stdin_out, stdin_err) = match read_stdin(&a) {
        Ok(read) => read,
        Err(e) => return usage(&e),
    };
    let hint = a.stdout.display().to_string();
    // The tool ran in the gate's `cwd`, as `qgates check` runs it: the paths it printed are taken
    // from there, so both give the same root-relative files.
    let cwd = gate.cwd_in(&root);
    let ctx = ParseContext {
        gate,
        root: &root,
        cwd: &cwd,
        log_hint: &hint,
        diff: None,
    };
    // A gate that reads a report file (`output_file`) gets FILE as that report: the copy a run
    // kept in its log folder is what is parsed again. The readers of `parsing.also` that read
    // their own report get theirs from `--report`, or from beside FILE.
    let also_reports = match also_reports(gate, &a) {
        Ok(paths) => paths,
        Err(why) => return usage(&why),
    };
    let shown: Vec<Option<String>> = also_reports
        .iter()
        .map(|p| p.as_ref().map(|p| p.display().to_string()))
        .collect();
    let given = source(&stdin_out, Some(&a.stdout));
    let (stdout, first) = match gate.parser.output_file {
        Some(_) => (OutputSource::Bytes(b""), Some((given, hint.as_str()))),
        None => (given, None),
    };
    let reports: Vec<Option<(OutputSource, &str)>> =
        std::iter::once(first)
            .chain(also_reports.iter().zip(&shown).map(|(path, shown)| {
                Some((OutputSource::File(path.as_deref()?), shown.as_deref()?))
            }))
            .collect();
    let saved = SavedOutput {
        stdout,
        stderr: source(&stdin_err, a.stderr.as_deref()),
        exit_code: Some(a.exit_code),
    };
    match parse_saved_with_reports(&ctx, saved, &reports) {
        Ok(parsed) => {
            print_parsed(gate, &parsed);
            exit::GREEN
        }
        Err(ReadError::Io { path, error }) => {
            usage(&format!("cannot read {}: {error}", path.display()))
        }
        Err(ReadError::Parse(e)) => fail(
            exit::GATE_ERROR,
            &format!("{} output could not be read: {e}", gate.name),
        ),
    }
}

fn load_config(a: &ParseArgs, root: &Path) -> Result<config::Config, i32> {
    let config_path = config_file(a.config.as_deref());
    config::load_for_workspace(root, config_path.as_deref()).map_err(|e| {
        print_stderr(&format!("{e}\n"));
        exit::USAGE
    })
}

/// The bytes of a saved output given as `-`, read from standard input; `None`: a file, left to
/// the parser.
type Stdin = Option<Vec<u8>>;

/// The saved stdout and stderr given as `-`, read from standard input here.
fn read_stdin(a: &ParseArgs) -> Result<(Stdin, Stdin), String> {
    let read = |p: &Path| -> Result<Option<Vec<u8>>, String> {
        if p != Path::new("-") {
            return Ok(None);
        }
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf).map_err(|e| e.to_string())?;
        Ok(Some(buf))
    };
    let out = read(&a.stdout)?;
    let err = a.stderr.as_deref().map(read).transpose()?.flatten();
    Ok((out, err))
}

fn source<'a>(stdin: &'a Option<Vec<u8>>, path: Option<&'a Path>) -> OutputSource<'a> {
    match (stdin, path) {
        (Some(bytes), _) => OutputSource::Bytes(bytes),
        (None, Some(path)) => OutputSource::File(path),
        (None, None) => OutputSource::Bytes(b""),
    }
}

/// The parsed output as one line of JSON, serialized straight from the parsed values: no
/// intermediate JSON tree.
fn print_parsed(gate: &config::Gate, parsed: &Parsed) {
    #[derive(serde::Serialize)]
    struct Out<'a> {
        gate: &'a str,
        violations: &'a [Violation],
        outside_root: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        coverage: Option<&'a CoverageTotals>,
        tests: Option<TestCounts>,
    }
    let out = Out {
        gate: &gate.id,
        violations: &parsed.violations,
        outside_root: parsed.outside_root,
        coverage: parsed.coverage.as_ref(),
        tests: parsed.tests,
    };
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let _ = serde_json::to_writer(&mut stdout, &out);
    let _ = std::io::Write::write_all(&mut stdout, b"\n");
    let _ = std::io::Write::flush(&mut stdout);
}

/// The report file of each reader of `parsing.also` (`None` for one that reads the tool's
/// output): the `--report` paths in order, else the copies the run kept beside FILE.
fn also_reports(gate: &config::Gate, a: &ParseArgs) -> Result<Vec<Option<PathBuf>>, String> {
    let id = &gate.id;
    let cwd = gate.cwd.clone().unwrap_or_default();
    let wanted: Vec<(usize, &str)> = gate
        .also
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((i, r.output_file.as_deref()?)))
        .collect();
    let mut paths: Vec<Option<PathBuf>> = vec![None; gate.also.len()];
    let key = |i: usize, file: &str| format!("{file} (parsing.also[{i}].output_file)");
    if !a.reports.is_empty() {
        if a.reports.len() != wanted.len() {
            let names: Vec<String> = wanted.iter().map(|(i, f)| key(*i, f)).collect();
            return Err(format!(
                "gate `{id}` reads {} report{} besides FILE{}{}, but {} --report {} given: give one --report per report, in that order",
                wanted.len(),
                if wanted.len() == 1 { "" } else { "s" },
                if names.is_empty() { "" } else { ": " },
                names.join(", "),
                a.reports.len(),
                if a.reports.len() == 1 { "was" } else { "were" },
            ));
        }
        for ((i, file), path) in wanted.iter().zip(&a.reports) {
            if std::fs::metadata(path).is_err() {
                return Err(format!(
                    "the report {} given with --report for {} does not exist",
                    path.display(),
                    key(*i, file)
                ));
            }
            paths[*i] = Some(path.clone());
        }
        return Ok(paths);
    }
    if wanted.is_empty() {
        return Ok(paths);
    }
    let first = gate.parser.output_file.as_deref();
    let batch = (a.stdout != Path::new("-"))
        .then(|| batch_of(&a.stdout, first, &cwd))
        .flatten();
    let Some((run_dir, stem)) = batch else {
        let (i, file) = wanted[0];
        let runs = Path::new(".qgates/runs/<run>");
        let kept_as = match first {
            Some(file) => kept_report(runs, id, 0, file, &cwd),
            None => runs.join(format!("{id}.stdout")),
        };
        return Err(format!(
            "gate `{id}` also reads the report {}, and FILE {} is not where a run keeps {} (like {}), so that report cannot be found beside it. Give it with --report PATH",
            key(i, file),
            a.stdout.display(),
            if first.is_some() {
                "the gate's report"
            } else {
                "the gate's output"
            },
            kept_as.display()
        ));
    };
    for (i, file) in wanted {
        let kept = kept_report(&run_dir, &stem, i + 1, file, &cwd);
        if std::fs::symlink_metadata(&kept).is_err() {
            return Err(format!(
                "gate `{id}` also reads the report {}, and the run did not keep it beside FILE: {} does not exist. Give it with --report PATH",
                key(i, file),
                kept.display()
            ));
        }
        paths[i] = Some(kept);
    }
    Ok(paths)
}
