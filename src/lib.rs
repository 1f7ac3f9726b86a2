//! qgates: run a repository's quality gates from one `quality.yaml` and get one normalized
//! violation format, through a CLI, a language server and an MCP server.

pub mod cli;
pub mod core;
pub mod jsonrpc;
pub mod lsp;
pub mod mcp;
