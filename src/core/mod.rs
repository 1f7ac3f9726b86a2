//! The engine: configuration, scope, running gates, parsing their output, the report.
//! It knows nothing of LSP or MCP; the faces in `cli`, `lsp` and `mcp` translate.

pub(crate) mod api;
pub mod cache;
pub(crate) mod clean_room;
pub mod config;
pub mod detect;
pub mod engine;
pub(crate) mod fix;
pub mod novelty;
pub mod parse;
pub mod platform;
pub mod report;
pub mod runner;
pub mod scope;
pub(crate) mod trust;
pub mod violation;
pub mod warm;
pub(crate) mod workspace;

/// The cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
