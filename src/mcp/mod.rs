//! The agent face: `qgates mcp`, a Model Context Protocol server over stdio (the official Rust
//! SDK, rmcp). Tools `run_quality_gates` and `last_summary` drive the same engine as
//! `qgates check`; this module only translates arguments in and reports out.

mod line_guard;
mod schema;
mod server;
mod tools;

use std::path::PathBuf;
use std::time::Duration;

use rmcp::ServiceExt;

pub use server::QgatesServer;

/// Serves MCP on stdin/stdout until the client closes the connection; returns the exit code.
/// Logs go to stderr: stdout carries only the protocol.
pub fn serve(root: PathBuf, config_path: Option<PathBuf>) -> i32 {
    let server = match QgatesServer::new(root, config_path) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!("qgates mcp: the tool schemas could not be built: {e}");
            return crate::core::report::exit::GATE_ERROR;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("qgates mcp: cannot start the runtime: {e}");
            return crate::core::report::exit::GATE_ERROR;
        }
    };
    runtime.block_on(async {
        let (input, output, writer) = line_guard::guard(tokio::io::stdin(), tokio::io::stdout());
        let code = serve_on(server, input, output).await;
        // Every answer written before the exit; a guard still reading a live stdin (the library
        // stopped on an error) is not waited for.
        let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
        code
    })
}

async fn serve_on(
    server: QgatesServer,
    input: impl tokio::io::AsyncRead + Send + Unpin + 'static,
    output: impl tokio::io::AsyncWrite + Send + Unpin + 'static,
) -> i32 {
    let service = match server.serve((input, output)).await {
        Ok(s) => s,
        Err(e) => {
            tracing::error!("qgates mcp: the client did not complete the MCP handshake: {e}");
            return crate::core::report::exit::USAGE;
        }
    };
    match service.waiting().await {
        Ok(_) => crate::core::report::exit::GREEN,
        Err(e) => {
            tracing::error!("qgates mcp: the server stopped: {e}");
            crate::core::report::exit::GATE_ERROR
        }
    }
}
