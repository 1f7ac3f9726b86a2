//! The plain data a report carries for the features that made it: the clean room's checkout,
//! the shard's share, a test suite's counts. The features fill them in; the report only holds
//! and shows them, so it depends on none of them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The `clean_room` section of a report: what was checked out and what was left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CleanRoomInfo {
    /// The revision as given (e.g. `HEAD`, `main~2`).
    pub rev: String,
    /// The commit it named (full id).
    pub commit: String,
    /// Where it was checked out (absolute).
    pub worktree: String,
    /// Whether the worktree was kept after the run (`--keep-worktree`); otherwise it is gone.
    pub kept: bool,
    /// Files of the working tree that differ from HEAD or are untracked: changes the run did
    /// not include.
    pub uncommitted_changes: usize,
}

impl CleanRoomInfo {
    /// `worktree removed`, or `worktree kept at PATH`.
    pub fn worktree_fate(&self) -> String {
        if self.kept {
            format!("worktree kept at {}", self.worktree)
        } else {
            "worktree removed".to_string()
        }
    }

    /// `clean room at 1a2b3c4 (HEAD): 2 uncommitted changes not included; worktree removed`.
    pub fn phrase(&self) -> String {
        let short = &self.commit[..self.commit.len().min(7)];
        let left_out = match self.uncommitted_changes {
            0 => "no uncommitted changes".to_string(),
            1 => "1 uncommitted change not included".to_string(),
            n => format!("{n} uncommitted changes not included"),
        };
        format!(
            "clean room at {short} ({}): {left_out}; {}",
            self.rev,
            self.worktree_fate()
        )
    }
}

/// What a test report counted.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct TestCounts {
    /// Every test case, whatever its outcome.
    pub total: usize,
    /// Test cases with a `<failure>` (an assertion that did not hold).
    pub failed: usize,
    /// Test cases with an `<error>` (the test could not run: an exception in a fixture, a setup).
    pub errored: usize,
    /// Test cases with `<skipped>`.
    pub skipped: usize,
}

impl TestCounts {
    pub fn plus(self, other: TestCounts) -> TestCounts {
        TestCounts {
            total: self.total + other.total,
            failed: self.failed + other.failed,
            errored: self.errored + other.errored,
            skipped: self.skipped + other.skipped,
        }
    }
}

/// What a shard's report records, beside which shard it is, for `qgates merge` to check that
/// the reports it is given are the shards of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShardInfo {
    /// This shard, 1-based.
    pub index: usize,
    /// How many shards the run was split into.
    pub count: usize,
    /// The configuration's content hash: every shard must have run the same gates.
    pub config_hash: String,
    /// HEAD's commit where the shard ran; left out outside a git repository or before the first
    /// commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Files in the whole scope, before the split.
    pub files_total: usize,
    /// The fix hints of the gates whose hint names their files (`{files}`), as configured: the
    /// merged report fills them in anew with the files of every shard.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fix_hints: BTreeMap<String, String>,
}

/// How the skip reasons of a gate that another shard runs start, so that merging ranks them
/// below a skip of the gate's own (a missing optional tool, say).
pub(crate) const RUNS_IN_FIRST: &str = "runs in shard 1 of ";
pub(crate) const NONE_HERE: &str = "none of its files fell to shard ";

/// Whether a skip reason says only that the gate ran, or had its files, in another shard.
pub fn is_elsewhere(reason: &str) -> bool {
    reason.starts_with(RUNS_IN_FIRST) || reason.starts_with(NONE_HERE)
}
