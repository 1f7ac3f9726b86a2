//! `qgates lsp`: the editor face. A thin translation between LSP and the engine: documents,
//! positions and diagnostics here; gates, scopes and caches in `core`.
//!
//! Dependencies go one way: `server` (the handlers) → `session`, `commands`, `actions` →
//! `scheduler` → `publish` → `diagnostics` → `position`; `session` → `file_events` (where file
//! events come from); `folder`, `jobs` and `documents` hold state and import none of them.

mod actions;
mod background_run;
mod commands;
mod diagnostics;
mod documents;
mod file_events;
mod folder;
mod framing;
mod jobs;
mod locks;
mod logging;
mod novelty;
mod position;
mod progress;
mod publish;
mod scheduler;
mod server;
mod session;
mod trust;

use tokio::sync::mpsc;
use tower_lsp_server::{LspService, Server};

use crate::core::api::children;

/// `qgates lsp`: serves stdin/stdout until the client exits or stdin closes.
pub fn main() -> i32 {
    logging::init();
    // One thread: no other thread is woken for each hand-off between tasks (blocking work
    // still goes to the blocking pool).
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("cannot start the runtime: {e}");
            return 1;
        }
    };
    // SIGTERM (and SIGINT, SIGHUP) stops the tools and ends the server with the signal's
    // conventional status; `exit` and the end of input stop them in `serve`.
    let code = runtime.block_on(async {
        let signal = children::termination_signal();
        tokio::select! {
            () = serve(tokio::io::stdin(), tokio::io::stdout()) => 0,
            Some(sig) = signal => {
                children::stop_all();
                128 + sig
            }
        }
    });
    // A read of stdin still waiting on its thread is not waited for long: the client has gone.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    code
}

/// Serves one client over a pair of streams (stdio, or pipes in tests), through `framing`'s
/// guard; the guard's answers and the library's messages share one writer.
pub async fn serve<I, O>(input: I, output: O)
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (service, socket) =
        LspService::new(|client| server::Backend::new(session::Session::new(client)));
    let session = service.inner().session.clone();
    let (server_in, to_server) = tokio::io::duplex(64 << 10);
    let (out, to_client) = mpsc::unbounded_channel();
    let guard = tokio::spawn(framing::guard_input(input, to_server, out.clone()));
    let writer = tokio::spawn(framing::write_out(to_client, output));
    Server::new(server_in, framing::Outbox(out), socket)
        .serve(service)
        .await;
    session.stop_all();
    // The guard stops reading; the writer ends once the last message (the shutdown answer) is
    // written.
    guard.abort();
    let _ = guard.await;
    let _ = writer.await;
}
