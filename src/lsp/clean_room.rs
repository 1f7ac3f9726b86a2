//! `qgates.run` with `clean_room`: the folder's gates in a fresh git checkout of a commit (see
//! `core::clean_room`). It runs beside the folder's scheduler, not through it: it touches none of
//! the folder's files, cache or baseline state, and its diagnostics are not published (they are
//! about the commit, not the files open); the report is the command's answer.

use std::sync::Arc;

use serde_json::Value;
use tower_lsp_server::jsonrpc::Result;

use super::folder::{Consent, Folder};
use super::replies::{answer, failed};
use crate::core::api::clean_room::{DEFAULT_REV, ServerRunError, run_for_server, runs_as_trusted};
use crate::core::api::{RunRequest, ScopeRequest};
use crate::core::config::Trigger;
use crate::core::report::page::PageRequest;
use crate::core::trust::{Manifest, TrustStore};

/// Runs the clean room and answers as `qgates.run` does. The folder's own runs must be trusted
/// (by the editor's workspace trust, or by the user's trust in what the folder runs), and the
/// configuration committed at the revision must run the same (see `runs_as_trusted`).
pub async fn run_clean(
    folder: &Arc<Folder>,
    rev: Option<String>,
    scope: ScopeRequest,
    gates: Option<Vec<String>>,
    page: PageRequest,
) -> Result<Option<Value>> {
    let rev = rev.unwrap_or_else(|| DEFAULT_REV.to_string());
    let mut request = RunRequest::new(folder.root.clone(), scope, Trigger::Command);
    request.gates = gates;
    let trusted = match folder.consent() {
        Consent::Editor => None,
        consent => match trusted_manifest(folder, consent) {
            Some(m) => Some(m),
            None => {
                return Err(failed(&format!(
                    "clean room at `{rev}`: nothing was run: the folder's own gates are not trusted. Trust the folder first (answer the trust question, or run `qgates trust {}` in a terminal), then run the clean room again.",
                    folder.root.display()
                )));
            }
        },
    };
    let result = run_for_server(
        request,
        rev.clone(),
        None,
        move |config, checkout| match &trusted {
            None => Ok(()),
            Some(m) => runs_as_trusted(config, checkout, m),
        },
    )
    .await;
    match result {
        Ok(report) => Ok(Some(answer(&report, page))),
        Err(ServerRunError::Untrusted(differences)) => Err(failed(&format!(
            "clean room at `{rev}`: nothing was run: the configuration and scripts committed there run something other than what was trusted for {}. A clean room only runs what the folder runs (programs installed in .venv or node_modules aside): commit the folder's configuration and scripts, or run `qgates trust {}` in a terminal once they are the committed ones. What differs:\n{differences}",
            folder.root.display(),
            folder.root.display(),
        ))),
        Err(ServerRunError::Config(e)) => Err(failed(&format!(
            "clean room at `{rev}`: the configuration committed there has errors, so nothing was run:\n{e}"
        ))),
        Err(ServerRunError::CleanRoom(e)) => Err(failed(&e.to_string())),
        Err(ServerRunError::Run(e)) => Err(failed(&format!("clean room at `{rev}`: {e}"))),
    }
}

/// What the folder runs now, when the user trusted it: in this session (when it could not be
/// recorded) or in the trust store.
fn trusted_manifest(folder: &Folder, consent: Consent) -> Option<Manifest> {
    let manifest = folder.manifest()?;
    let in_session = matches!(&consent, Consent::Manifest(hash) if *hash == manifest.hash);
    let stored =
        || TrustStore::for_user().is_some_and(|s| s.is_trusted(&folder.root, &manifest.hash));
    (in_session || stored()).then_some(manifest)
}
