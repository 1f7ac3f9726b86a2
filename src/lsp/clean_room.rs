//! `qgates.run` with `clean_room`: the folder's gates in a fresh git checkout of a commit (see
//! `core::clean_room`). It runs beside the folder's scheduler, not through it: it touches none of
//! the folder's files, cache or baseline state, and its diagnostics are not published (they are
//! about the commit, not the files open); the report is the command's answer.

use std::sync::Arc;

use serde_json::Value;
use tower_lsp_server::jsonrpc::Result;

use super::commands::{answer, failed};
use super::folder::{Consent, Folder};
use crate::core::clean_room::{
    DEFAULT_REV, ServerRequest, ServerRunError, run_for_server, trusted_at,
};
use crate::core::report::page::PageRequest;
use crate::core::scope::ScopeRequest;

/// The checked arguments of a clean-room run.
pub struct CleanArgs {
    pub rev: Option<String>,
    pub scope: ScopeRequest,
    pub gates: Option<Vec<String>>,
    pub page: PageRequest,
}

/// Runs the clean room and answers as `qgates.run` does. What the configuration committed at
/// the revision runs must be trusted for the folder: by the editor's own workspace trust, or by
/// the user's trust in exactly that (a person's decision, as for the folder's own runs).
pub async fn run_clean(folder: &Arc<Folder>, args: CleanArgs) -> Result<Option<Value>> {
    let rev = args.rev.unwrap_or_else(|| DEFAULT_REV.to_string());
    let request = ServerRequest {
        root: folder.root.clone(),
        rev: rev.clone(),
        config_path: None,
        scope: args.scope,
        gates: args.gates,
        kinds: Default::default(),
    };
    let consent = folder.consent();
    let root = folder.root.clone();
    let result = run_for_server(request, move |config, checkout| match consent {
        Consent::Editor => Ok(()),
        // Trust given in this session (when it could not be recorded) counts too.
        Consent::Manifest(hash) => {
            trusted_at(config, checkout, &root).or_else(|m| match m.hash == hash {
                true => Ok(()),
                false => Err(m),
            })
        }
        Consent::No => trusted_at(config, checkout, &root),
    })
    .await;
    match result {
        Ok(report) => Ok(Some(answer(&report, args.page))),
        Err(ServerRunError::Untrusted(manifest)) => Err(failed(&format!(
            "clean room at `{rev}`: nothing was run: what the configuration committed there runs (in a clean checkout, without the folder's .venv or node_modules) is not what was trusted for {}. Run `qgates trust {}` in a terminal once the working tree's configuration is the committed one, or trust the folder in the editor. {} runs:\n{}",
            folder.root.display(),
            folder.root.display(),
            manifest.source,
            manifest.describe()
        ))),
        Err(ServerRunError::Config(e)) => Err(failed(&format!(
            "clean room at `{rev}`: the configuration committed there has errors, so nothing was run:\n{e}"
        ))),
        Err(ServerRunError::CleanRoom(e)) => Err(failed(&e.to_string())),
        Err(ServerRunError::Run(e)) => Err(failed(&format!("clean room at `{rev}`: {e}"))),
    }
}
