//! A background run (a save, an open, a rescope) from its scope to its end. Opened files alone
//! are checked as they are. Anything else runs over the `auto` scope as the folder's
//! `ScopeTracker` has it now (kept current by file events, from the client or the server's own
//! watch: docs/lsp.md, "File events"), plus the saved and opened files, and is recorded in the
//! branch's state before its diagnostics go out.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use super::folder::Folder;
use super::jobs::Background;
use super::novelty;
use super::progress::Tracker;
use super::publish::Publisher;
use crate::core::api::{ResolvedScope, RunRequest, ScopeRequest};
use crate::core::config::{Config, Trigger};
use crate::core::scope::tracker::ScopeTracker;
use crate::core::workspace::paths::relative_posix;

/// The run request for a background batch.
pub(super) fn request(batch: &Background, folder: &Folder, config: &Config) -> RunRequest {
    let root = folder.root.clone();
    let mut req = if batch.only_opened() {
        RunRequest::new(
            root,
            ScopeRequest::Files(batch.opened.iter().cloned().collect()),
            Trigger::Save,
        )
    } else {
        let mut r = RunRequest::new(root, ScopeRequest::Auto, Trigger::Save);
        r.also = batch.saved.iter().chain(&batch.opened).cloned().collect();
        r
    };
    req.cache = Some(folder.cache.clone());
    req.warm = true;
    novelty::request_for(config, &mut req);
    req
}

/// The scope a background run goes over.
pub(super) async fn scope(
    batch: &Background,
    folder: &Folder,
    config: &Arc<Config>,
) -> Result<ResolvedScope, String> {
    if batch.only_opened() {
        // The editor's paths are absolute and inside the folder: nothing to resolve.
        let files = batch
            .opened
            .iter()
            .filter_map(|p| relative_posix(&folder.root, p))
            .collect();
        return Ok(ResolvedScope {
            mode: "files",
            files,
            ..Default::default()
        });
    }
    resolve_now(folder.scope.clone(), config.clone()).await
}

/// Resolves the `auto` scope (a blocking git status, off the server's thread).
async fn resolve_now(
    scope: Arc<ScopeTracker>,
    config: Arc<Config>,
) -> Result<ResolvedScope, String> {
    match tokio::task::spawn_blocking(move || scope.current(&config)).await {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(e) => Err(format!("resolving the scope failed: {e}")),
    }
}

/// Where a run's report is shown: the documents' versions it ran over, the files whose
/// diagnostics are answered whatever they are, and the client's progress.
pub(super) struct Shown<'a> {
    pub versions: &'a HashMap<PathBuf, Option<i32>>,
    pub answer: &'a BTreeSet<PathBuf>,
    pub progress: Tracker,
}

/// Remembers the report for the folder's commands and publishes its diagnostics.
pub(super) async fn show(
    out: &Publisher,
    folder: &Folder,
    report: crate::core::report::Report,
    shown: Shown<'_>,
) {
    let report = Arc::new(report);
    folder.remember(&report, false);
    out.publish_report(folder, &report, shown.versions, shown.answer)
        .await;
    shown.progress.finish().await;
}
