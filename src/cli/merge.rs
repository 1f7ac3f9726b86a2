//! `qgates merge`: the shards' JSON reports read, merged (`core::report::merge`) and printed as
//! `qgates check` prints a report.

use std::io::IsTerminal;
use std::path::Path;

use super::args::MergeArgs;
use super::check::rendered;
use super::output::{print_stderr, print_stdout};
use crate::core::report::merge::{ShardReport, merge as merge_reports};
use crate::core::report::{Report, exit};

pub fn merge(a: MergeArgs) -> i32 {
    let mut shards = Vec::with_capacity(a.reports.len());
    for path in &a.reports {
        match read_report(path) {
            Ok(report) => shards.push(ShardReport {
                name: path.display().to_string(),
                report,
            }),
            Err(why) => {
                print_stderr(&format!("qgates: {why}\n"));
                return exit::USAGE;
            }
        }
    }
    let report = match merge_reports(shards) {
        Ok(r) => r,
        Err(e) => {
            print_stderr(&format!("qgates: {e}\n"));
            return exit::USAGE;
        }
    };
    match &a.out {
        Some(out) => {
            if let Err(e) = std::fs::write(out, rendered(&report, &a.output, false)) {
                print_stderr(&format!(
                    "qgates: the merged report could not be written to {}: {e}\n",
                    out.display()
                ));
                return exit::GATE_ERROR;
            }
            print_stdout(&format!("{}\n", report.summary_line()));
        }
        None => print_stdout(&rendered(
            &report,
            &a.output,
            std::io::stdout().is_terminal(),
        )),
    }
    report.exit_code()
}

/// One shard's report, or what is wrong with the file, naming it.
fn read_report(path: &Path) -> Result<Report, String> {
    const HOW: &str = "write each shard's report with `qgates check --shard i/n --format json`";
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the report {}: {e}", path.display()))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not JSON ({e}); {HOW}", path.display()))?;
    let report: Report = serde_path_to_error::deserialize(value).map_err(|e| {
        format!(
            "{} is not a qgates report (at `{}`: {}); {HOW}",
            path.display(),
            e.path(),
            e.inner()
        )
    })?;
    Ok(report)
}
