//! `qgates baseline show|reset|set`: the branch's baseline commit and failed files.

use std::path::Path;

use super::args::BaselineCommand;
use super::output::{print_stderr, print_stdout};
use super::workspace::find_root;
use crate::core::report::exit;
use crate::core::scope::DETACHED;
use crate::core::scope::baseline::StateStore;
use crate::core::scope::git::Repo;

/// `qgates baseline show|reset|set`.
pub fn baseline(cmd: BaselineCommand) -> i32 {
    let args = match &cmd {
        BaselineCommand::Show(a) | BaselineCommand::Reset(a) => a,
        BaselineCommand::Set { args, .. } => args,
    };
    let root = find_root(args.root.as_deref(), Path::new("."));
    if let Err(code) = super::check::usable_qgates_dir(&root) {
        return code;
    }
    let repo = match Repo::discover(&root) {
        Ok(Some(r)) => r,
        Ok(None) => {
            print_stderr(&format!(
                "qgates: {} is not in a git repository; baselines belong to git branches.\n",
                root.display()
            ));
            return exit::USAGE;
        }
        Err(e) => {
            print_stderr(&format!("qgates: {e}\n"));
            return exit::USAGE;
        }
    };
    let branch = repo.branch_name().unwrap_or_else(|| DETACHED.to_string());
    let store = StateStore::new(&root);
    let result = match &cmd {
        BaselineCommand::Show(_) => store.load().map(|(state, warning)| {
            let entry = state.branches.get(&branch).cloned().unwrap_or_default();
            let mut out = format!(
                "branch: {branch}\nbaseline: {}\n",
                entry
                    .baseline_sha
                    .as_deref()
                    .unwrap_or("none (the next auto run checks the branch)")
            );
            if entry.failed_files.is_empty() {
                out.push_str("failed files: none\n");
            } else {
                out.push_str("failed files:\n");
                for f in &entry.failed_files {
                    out.push_str(&format!("  {f}\n"));
                }
            }
            print_stdout(&out);
            warning
        }),
        BaselineCommand::Reset(_) => store
            .update(|s| {
                s.branches.remove(&branch);
            })
            .map(|((), w)| {
                print_stdout(&format!(
                    "Baseline of {branch} forgotten; the next auto run checks the whole branch.\n"
                ));
                w
            }),
        BaselineCommand::Set { rev, .. } => {
            let Some(sha) = repo.resolve_commit(rev) else {
                print_stderr(&format!(
                    "qgates: `{rev}` names no commit in this repository.\n"
                ));
                return exit::USAGE;
            };
            store
                .update(|s| {
                    s.branches.insert(
                        branch.clone(),
                        crate::core::scope::baseline::BranchState {
                            baseline_sha: Some(sha.clone()),
                            failed_files: Vec::new(),
                        },
                    );
                })
                .map(|((), w)| {
                    print_stdout(&format!("Baseline of {branch} set to {sha}.\n"));
                    w
                })
        }
    };
    match result {
        Ok(warning) => {
            if let Some(w) = warning {
                print_stderr(&format!("qgates: {w}\n"));
            }
            exit::GREEN
        }
        Err(e) => {
            print_stderr(&format!("qgates: {e}\n"));
            exit::GATE_ERROR
        }
    }
}
