//! `--format github`: GitHub Actions workflow commands, which the runner turns into annotations
//! on the pull request's diff.
//!
//! `::error file=src/a.py,line=12,col=5,endLine=12,endColumn=9,title=Ruff Lint F401::message`,
//! `::warning` for warnings, `::notice` for info and hints. File-less violations and gates that
//! could not run become annotations without a file; the summary line comes last, as plain text.
//! Every value is escaped the way the runner unescapes it, so a message can hold newlines, `%`,
//! `,` or `::` without ending the command or starting another.

use std::fmt::Write as _;

use super::{GateResult, GateStatus, Report, known};
use crate::core::violation::{Severity, Violation};

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for g in &report.gates {
        for v in g.violations.iter().filter(|v| report.lists(v, false)) {
            annotation(&mut out, g, v);
        }
    }
    for g in report
        .gates
        .iter()
        .filter(|g| g.status == GateStatus::Error)
    {
        let mut message = g
            .error
            .clone()
            .unwrap_or_else(|| "the gate could not run (no reason recorded)".into());
        if let Some(log) = &g.log {
            let _ = write!(message, "\nLogs: {} {}", log.stdout, log.stderr);
        }
        let command = if g.allow_fail { "warning" } else { "error" };
        let title = format!("{} could not run", g.name);
        let _ = writeln!(
            out,
            "::{command} title={}::{}",
            escape_property(&title),
            escape_data(&message)
        );
    }
    // A line that is not a command is printed as it is, so this stays readable in the job log.
    // It can start with no `::` (it starts with an emoji), so it can never be read as a command.
    let _ = writeln!(out, "{}", report.summary_line());
    out
}

fn annotation(out: &mut String, g: &GateResult, v: &Violation) {
    let command = match v.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info | Severity::Hint => "notice",
    };
    let mut props: Vec<(&str, String)> = Vec::new();
    if let Some(file) = &v.file {
        props.push(("file", file.to_string()));
        if let Some(line) = known(v.line) {
            props.push(("line", line.to_string()));
            let end_line = known(v.end_line).filter(|&e| e >= line);
            // GitHub takes columns only for an annotation on one line; across lines it would
            // reject or misplace them, so they are left out there.
            let one_line = end_line.is_none_or(|e| e == line);
            let col = known(v.column);
            if let (true, Some(c)) = (one_line, col) {
                props.push(("col", c.to_string()));
            }
            if let Some(e) = end_line {
                props.push(("endLine", e.to_string()));
            }
            if let (true, Some(c), Some(ec)) = (one_line, col, known(v.end_column))
                && ec >= c
            {
                props.push(("endColumn", ec.to_string()));
            }
        }
    }
    let mut title = match &v.code {
        Some(code) => format!("{} {code}", g.name),
        None => g.name.clone(),
    };
    if g.allow_fail {
        // The job stays green for these; say why next to the red mark.
        title.push_str(" (allowed to fail)");
    }
    props.push(("title", title));

    let mut message = v.message.to_string();
    if let Some(fix) = v.fix.as_ref().filter(|f| !f.title.trim().is_empty()) {
        let _ = write!(message, "\nFix: {}", fix.title);
    }
    let props: Vec<String> = props
        .iter()
        .map(|(k, val)| format!("{k}={}", escape_property(val)))
        .collect();
    let _ = writeln!(
        out,
        "::{command} {}::{}",
        props.join(","),
        escape_data(&message)
    );
}

/// The runner's escaping for a command's message (`toCommandValue`/`escapeData` in actions/toolkit).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// The runner's escaping for a property value (`escapeProperty` in actions/toolkit): `:` and `,`
/// would otherwise end the value.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::{escape_data, escape_property};

    #[test]
    fn escaping_follows_the_runner() {
        assert_eq!(
            escape_data("100% done\r\nnext: a, b"),
            "100%25 done%0D%0Anext: a, b"
        );
        assert_eq!(escape_property("Lint: a, b\n%"), "Lint%3A a%2C b%0A%25");
        // `%` first, or the `%` of `%0A` would be escaped again.
        assert_eq!(escape_data("%0A"), "%250A");
    }
}
