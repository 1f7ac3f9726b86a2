//! `$/progress` while gates run: one progress per gate, begun when the gate starts and ended with
//! its status (or "cancelled" when a newer trigger stopped the run).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tower_lsp_server::ls_types::ProgressToken;

use super::Session;
use crate::core::engine::RunEvent;

static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// Follows a run's events until the run ends (its sender is dropped).
pub fn track(
    session: Arc<Session>,
    mut events: mpsc::UnboundedReceiver<RunEvent>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        if !session.caps().work_done_progress {
            while events.recv().await.is_some() {}
            return;
        }
        let mut ongoing = HashMap::new();
        while let Some(event) = events.recv().await {
            match event {
                RunEvent::Started { .. } => {}
                RunEvent::GateStarted { id, name } => {
                    let n = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
                    let token = ProgressToken::String(format!("qgates/{n}"));
                    if session
                        .client
                        .create_work_done_progress(token.clone())
                        .await
                        .is_err()
                    {
                        continue;
                    }
                    let p = session
                        .client
                        .progress(token, format!("qgates: {name}"))
                        .with_message("running")
                        .begin()
                        .await;
                    ongoing.insert(id, p);
                }
                RunEvent::GateFinished { id, status } => {
                    if let Some(p) = ongoing.remove(&id) {
                        p.finish_with_message(status.as_str()).await;
                    }
                }
            }
        }
        for (_, p) in ongoing {
            p.finish_with_message("cancelled").await;
        }
    })
}
