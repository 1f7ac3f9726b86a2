//! The language server (`qgates lsp`): end to end over stdio, in this process, under real
//! editors' declared capabilities, malformed input, workspace trust, and positions in each
//! encoding. One test binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod file_events;
mod lsp_e2e;
mod lsp_fuzz;
mod lsp_in_process;
mod lsp_profiles;
mod lsp_test_gates;
mod new_findings;
mod positions;
mod trust_lsp;
