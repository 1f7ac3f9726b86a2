//! `qgates merge`: the shards' JSON reports read, merged (`core::report::merge`) and printed as
//! `qgates check` prints a report.

use std::io::IsTerminal;
use std::path::Path;

use super::args::MergeArgs;
use super::check::rendered;
use super::output::{fail, print_stdout, usage};
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
            Err(why) => return usage(&why),
        }
    }
    let report = match merge_reports(shards) {
        Ok(r) => r,
        Err(e) => return usage(&e.to_string()),
    };
    match &a.out {
        Some(out) => {
            if let Err(e) = std::fs::write(out, rendered(&report, &a.output, false)) {
                return fail(
                    exit::GATE_ERROR,
                    &format!(
                        "the merged report could not be written to {}: {e}",
                        out.display()
                    ),
                );
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
    serde_path_to_error::deserialize(value).map_err(|e| {
        format!(
            "{} is not a qgates report (at `{}`: {}); {HOW}",
            path.display(),
            e.path(),
            e.inner()
        )
    })
}
