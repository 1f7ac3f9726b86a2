//! The engine: configuration, scope, running gates, parsing their output, the report.
//! It knows nothing of LSP or MCP; the faces in `cli`, `lsp` and `mcp` translate.

pub mod background;
pub mod baseline;
pub mod cache;
pub mod cache_keys;
pub mod cache_lookup;
pub mod changed_lines;
pub mod clean_room;
pub mod columns;
pub mod config;
pub mod content_id;
pub mod deps_record;
pub mod detect;
pub mod engine;
pub mod exclusive;
pub mod fix;
pub mod foreign_dirs;
pub mod gate_order;
pub mod git_changes;
pub mod hash;
pub mod kind_filter;
pub mod own_selection;
pub mod parallel;
pub mod parse;
pub mod paths;
pub mod platform;
pub mod qgates_dir;
pub mod remote_cache;
pub mod report;
pub mod request;
pub mod run_logs;
pub mod runner;
pub mod safe_fs;
pub mod scope;
pub mod scope_tracker;
pub mod scratch;
pub mod shard;
pub mod skips;
pub mod stamp;
pub mod text_diff;
pub mod tool_folders;
pub mod tool_id;
pub mod tracked;
pub mod trust;
pub mod violation;

/// What is logged without `QGATES_LOG`: warnings, but not OpenDAL's about a write cut short
/// (a shared cache past its run's deadline has its requests dropped on purpose; the report
/// says so once).
pub const DEFAULT_LOG_FILTER: &str = "warn,opendal_core=error";

/// The cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
