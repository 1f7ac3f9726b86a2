//! The engine: configuration, scope, running gates, parsing their output, the report.
//! It knows nothing of LSP or MCP; the faces in `cli`, `lsp` and `mcp` translate.

pub mod artifacts;
pub mod background;
pub mod cache;
pub mod config;
pub mod engine;
pub mod fix;
pub mod git_changes;
pub mod hash;
pub mod parse;
pub mod report;
pub mod request;
pub mod runner;
pub mod scope;
pub mod stamp;
pub mod state;
pub mod text_diff;
pub mod trust;
pub mod violation;

/// The cores this process may use, read once: `available_parallelism` reads the control group's
/// files on every call (five system calls on Linux), and every run and parse asks.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
