//! The engine through the real binary, with small scripts standing in for tools: how gates end,
//! the gate keys and kinds, scopes, the local and shared result caches, report files and paging,
//! faults, hostile input and state, big outputs, and no tool left running after a signal.
//! One test binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod big_output;
mod faults;
mod gate_keys;
mod gate_kinds;
mod hostile_sizes;
mod hostile_state;
mod remote_cache;
mod report_files;
mod report_paging;
mod result_cache;
mod runner_statuses;
mod scope_auto;
mod signals;
mod whole_gates;
