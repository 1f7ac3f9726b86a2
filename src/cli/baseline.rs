//! `qgates baseline show|reset|set`: the branch's baseline commit and failed files.

use std::path::Path;

use super::args::BaselineCommand;
use super::output::{fail, print_stderr, print_stdout, usage};
use super::workspace::find_root;
use crate::core::report::exit;
use crate::core::scope::DETACHED;
use crate::core::scope::baseline::{BranchState, StateStore};
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
            return usage(&format!(
                "{} is not in a git repository; baselines belong to git branches.",
                root.display()
            ));
        }
        Err(e) => return usage(&e.to_string()),
    };
    let branch = repo.branch_name().unwrap_or_else(|| DETACHED.to_string());
    let store = StateStore::new(&root);
    // What to print, and the state file's warning.
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
            (out, warning)
        }),
        BaselineCommand::Reset(_) => store
            .update(|s| {
                s.branches.remove(&branch);
            })
            .map(|((), w)| {
                let out = format!(
                    "Baseline of {branch} forgotten; the next auto run checks the whole branch.\n"
                );
                (out, w)
            }),
        BaselineCommand::Set { rev, .. } => {
            let Some(sha) = repo.resolve_commit(rev) else {
                return usage(&format!("`{rev}` names no commit in this repository."));
            };
            let state = BranchState {
                baseline_sha: Some(sha.clone()),
                failed_files: Vec::new(),
            };
            store
                .update(|s| {
                    s.branches.insert(branch.clone(), state);
                })
                .map(|((), w)| (format!("Baseline of {branch} set to {sha}.\n"), w))
        }
    };
    match result {
        Ok((out, warning)) => {
            print_stdout(&out);
            if let Some(w) = warning {
                print_stderr(&format!("qgates: {w}\n"));
            }
            exit::GREEN
        }
        Err(e) => fail(exit::GATE_ERROR, &e.to_string()),
    }
}
