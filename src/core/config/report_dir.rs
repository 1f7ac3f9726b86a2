//! Report files: `output_file` and the `{report_dir}` placeholder (a fresh folder in the run's
//! log folder), checked here beside the one expansion the runner uses, so the two agree.

use super::error::Problems;
use super::gate_checks::leaves_workspace;
use super::model::{RawGate, SpannedString};
use super::spec::{Piece, scan};

/// The one placeholder of `command` arguments and `output_file`.
pub const REPORT_DIR: &str = "report_dir";

/// The `{name}` placeholders of `text`. `{{` and `}}` are literal braces, and `${NAME}` (a shell
/// variable in a `sh -c` script) is not a placeholder.
pub fn placeholders(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    scan(text, true, |part| {
        if let Piece::Field(name) = part {
            found.push(name);
        }
    });
    found
}

/// `text` with `{report_dir}` replaced by `dir`; everything else (literal braces included)
/// stays as written.
pub fn expand(text: &str, dir: &str) -> String {
    let mut out = String::with_capacity(text.len() + dir.len());
    scan(text, true, |part| match part {
        Piece::Field(name) if name == REPORT_DIR => out.push_str(dir),
        Piece::Field(name) => out.push_str(&format!("{{{name}}}")),
        Piece::Literal(s) => out.push_str(s),
    });
    out
}

/// Whether `text` names the report folder.
pub fn mentions_report_dir(text: &str) -> bool {
    placeholders(text).contains(&REPORT_DIR)
}

/// Where an `output_file` is: inside the report folder (the path below it) or in the workspace
/// (relative to the gate's cwd).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputPlace<'a> {
    ReportDir(&'a str),
    Workspace(&'a str),
}

/// Splits a checked `output_file`.
pub fn output_place(file: &str) -> OutputPlace<'_> {
    let marker = format!("{{{REPORT_DIR}}}");
    match file.strip_prefix(&marker) {
        Some(rest) => OutputPlace::ReportDir(rest.trim_start_matches('/')),
        None => OutputPlace::Workspace(file),
    }
}

/// Checks the placeholders of the gate's `command`: only `{report_dir}` is known there.
pub(super) fn check_command(id: &str, g: &RawGate, p: &mut Problems) {
    let Some(command) = &g.command else {
        return;
    };
    for arg in &command.value {
        for name in placeholders(arg).into_iter().filter(|n| *n != REPORT_DIR) {
            let at = p
                .tree
                .item(&["gates", id, "command"], arg)
                .unwrap_or(command.referenced.into());
            p.at(at, format!("gate `{id}`: the command uses `{{{name}}}`, but only `{{{REPORT_DIR}}}` (a fresh folder for the tool's report files) is known there. Remove it."));
        }
    }
}

/// The checked `output_file` of each reader: the gate's key for its own reader, then
/// `parsing.also[i].output_file` for the others.
pub(super) fn output_files(id: &str, g: &RawGate, p: &mut Problems) -> Vec<Option<String>> {
    let parsing = g.parsing.as_ref();
    if let Some(file) = parsing.and_then(|pr| pr.output_file.as_ref()) {
        p.at(file.referenced, format!("gate `{id}`: `parsing.output_file` is for the readers of `parsing.also`; the gate's own reader takes the gate's `output_file`. Move it up a level, beside `command`."));
    }
    let also = parsing
        .and_then(|pr| pr.also.as_ref())
        .into_iter()
        .flatten();
    std::iter::once((g.output_file.as_ref(), "output_file".to_string()))
        .chain(also.enumerate().map(|(i, r)| {
            (
                r.output_file.as_ref(),
                format!("parsing.also[{i}].output_file"),
            )
        }))
        .map(|(file, key)| {
            let file = file?;
            check_output_file(id, &key, file, p);
            Some(file.value.clone())
        })
        .collect()
}

/// Checks an `output_file` (`key` names it in messages): a path relative to the gate's cwd and
/// inside it, or one below `{report_dir}`.
fn check_output_file(id: &str, key: &str, file: &SpannedString, p: &mut Problems) {
    let text = file.value.as_str();
    let fix = format!(
        "Write a path relative to the gate's cwd (e.g. `reports/junit.xml`), or one in the run's report folder (e.g. `{{{REPORT_DIR}}}/junit.xml`, with `--junitxml={{{REPORT_DIR}}}/junit.xml` in the command)."
    );
    if text.trim().is_empty() {
        p.at(
            file.referenced,
            format!("gate `{id}`: {key} is empty. {fix}"),
        );
        return;
    }
    for name in placeholders(text).into_iter().filter(|n| *n != REPORT_DIR) {
        p.at(file.referenced, format!("gate `{id}`: {key} uses `{{{name}}}`, but only `{{{REPORT_DIR}}}` is known there. {fix}"));
    }
    let rest = match output_place(text) {
        OutputPlace::ReportDir(rest) => rest,
        OutputPlace::Workspace(rest) => {
            if mentions_report_dir(rest) {
                p.at(file.referenced, format!("gate `{id}`: {key} `{text}` has `{{{REPORT_DIR}}}` inside it; it may only stand at the start. {fix}"));
                return;
            }
            rest
        }
    };
    if rest.is_empty() || rest.ends_with('/') {
        p.at(
            file.referenced,
            format!("gate `{id}`: {key} `{text}` names a folder, not a file. {fix}"),
        );
    } else if leaves_workspace(rest) {
        p.at(file.referenced, format!("gate `{id}`: {key} `{text}` must stay inside the workspace (no absolute path, no `..`), so a repository cannot make qgates delete or read a file outside it. {fix}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_placeholders_count() {
        assert_eq!(
            placeholders("--junitxml={report_dir}/j.xml"),
            ["report_dir"]
        );
        assert!(placeholders("echo ${HOME} {{report_dir}} {} {a b}").is_empty());
        assert_eq!(placeholders("{x}{report_dir}"), ["x", "report_dir"]);
        // A tool's own template, its braces escaped.
        assert!(placeholders(r"--template=\{file}:\{line}: \{message}").is_empty());
    }

    #[test]
    fn expansion_keeps_everything_else() {
        assert_eq!(
            expand("--o={report_dir}/j.xml ${X} {{y}} {other}", "/r"),
            "--o=/r/j.xml ${X} {{y}} {other}"
        );
        assert_eq!(
            expand(
                r"--template=\{file}:\{line} \{report_dir} {report_dir}",
                "/r"
            ),
            "--template={file}:{line} {report_dir} /r"
        );
        assert_eq!(
            output_place("{report_dir}/a.xml"),
            OutputPlace::ReportDir("a.xml")
        );
        assert_eq!(
            output_place("out/a.xml"),
            OutputPlace::Workspace("out/a.xml")
        );
    }
}
