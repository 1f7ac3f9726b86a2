//! `$/progress` while gates run: one progress per gate, begun when the gate starts and ended with
//! its status (or "cancelled" when a newer trigger stopped the run), inside one progress for the
//! whole run (title `qgates`), ended once its diagnostics are published ("finished") or the run
//! was cancelled.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::ProgressToken;
use tower_lsp_server::{NotCancellable, OngoingProgress, Unbounded};

use crate::core::api::RunEvent;

static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// The progress of one run.
pub struct Tracker {
    task: JoinHandle<()>,
    published: oneshot::Sender<()>,
}

impl Tracker {
    /// The run's diagnostics are out: its progress ends "finished".
    pub async fn finish(self) {
        let _ = self.published.send(());
        let _ = self.task.await;
    }

    /// The run was cancelled or could not start.
    pub async fn cancel(self) {
        drop(self.published);
        let _ = self.task.await;
    }
}

/// Follows a run's events until the run ends (its sender is dropped); `enabled`: the client
/// shows work-done progress.
pub fn track(
    client: Client,
    enabled: bool,
    mut events: mpsc::UnboundedReceiver<RunEvent>,
) -> Tracker {
    let (published, finished) = oneshot::channel();
    let task = tokio::spawn(async move {
        if !enabled {
            while events.recv().await.is_some() {}
            return;
        }
        let run = begin(&client, "run", "qgates".into()).await;
        let mut ongoing = HashMap::new();
        while let Some(event) = events.recv().await {
            match event {
                RunEvent::Started { .. } => {}
                RunEvent::GateStarted { id, name } => {
                    if let Some(p) = begin(&client, "gate", format!("qgates: {name}")).await {
                        ongoing.insert(id, p);
                    }
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
        let how = match finished.await {
            Ok(()) => "finished",
            Err(_) => "cancelled",
        };
        if let Some(p) = run {
            p.finish_with_message(how).await;
        }
    });
    Tracker { task, published }
}

async fn begin(
    client: &Client,
    kind: &str,
    title: String,
) -> Option<OngoingProgress<Unbounded, NotCancellable>> {
    let n = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    let token = ProgressToken::String(format!("qgates/{kind}-{n}"));
    client.create_work_done_progress(token.clone()).await.ok()?;
    Some(
        client
            .progress(token, title)
            .with_message("running")
            .begin()
            .await,
    )
}
