//! Asking the user to trust a folder, and keeping to the answer (docs/trust.md). The
//! question shows the folder's `Manifest`, and the answer records that manifest's hash: if what
//! would run changes while the question is open, the scheduler finds the difference before the
//! first run, starts nothing, and asks again.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType};

use super::documents::Documents;
use super::folder::{Consent, Folder, Permission};
use super::jobs::Job;
use crate::core::trust::{Manifest, TrustStore};

const TRUST: &str = "Trust";
const NOT_NOW: &str = "Not now";

/// What the folder may do at start: run when the editor vouches for the folder (VS Code's
/// workspace trust) or the user trusted exactly what it would run now.
pub fn initial_consent(folder: &Folder, editor_trusts: bool) -> Consent {
    if editor_trusts {
        return Consent::Editor;
    }
    match (TrustStore::for_user(), folder.manifest()) {
        (Some(store), Some(m)) if store.is_trusted(&folder.root, &m.hash) => {
            Consent::Manifest(m.hash)
        }
        _ => Consent::No,
    }
}

/// Records trust in `manifest` (what the user was shown, or what the folder runs now when the
/// user asked by command) and runs the folder's open files.
pub fn grant(docs: &Documents, folder: &Folder, manifest: &Manifest) {
    match TrustStore::for_user() {
        Some(store) => {
            if let Err(e) = store.trust(&folder.root, &manifest.hash) {
                // Trusted for this session anyway: the user asked for it.
                tracing::warn!("cannot record trust in {}: {e}", store.path().display());
            }
        }
        None => tracing::warn!("no home folder is known: trust holds for this session only"),
    }
    folder.set_consent(Consent::Manifest(manifest.hash.clone()));
    folder.send(Job::Open(docs.under(&folder.root)));
    folder.send(Job::Rescope);
}

/// Asks the user, once at a time, whether to trust what the folder would run. `changed` says
/// the folder was trusted before and what it runs has changed since.
pub fn ask(client: Client, docs: Arc<Documents>, folder: Arc<Folder>, changed: bool) {
    if folder.asking.swap(true, Ordering::SeqCst) {
        return;
    }
    let Some(manifest) = folder.manifest() else {
        folder.asking.store(false, Ordering::SeqCst);
        return;
    };
    tokio::spawn(async move {
        let why = if changed {
            "What it runs has changed since you trusted it. "
        } else {
            ""
        };
        let question = format!(
            "qgates: run the quality gates of {}? {why}{} runs:\n{}Trust it only if you trust this repository.",
            folder.root.display(),
            folder.config_label(),
            manifest.describe(),
        );
        let item = |title: &str| MessageActionItem {
            title: title.into(),
            properties: Default::default(),
        };
        let answer = client
            .show_message_request(
                MessageType::WARNING,
                question,
                Some(vec![item(TRUST), item(NOT_NOW)]),
            )
            .await;
        folder.asking.store(false, Ordering::SeqCst);
        match answer {
            Ok(Some(item)) if item.title == TRUST => grant(&docs, &folder, &manifest),
            // Not asked again on every save; `qgates.trust` or a reload asks again.
            _ => folder.set_consent(Consent::No),
        }
    });
}

/// Whether the folder's commands may run now; when what they run changed since it was
/// trusted, the user is asked again (once at a time).
pub fn permits(client: &Client, docs: &Arc<Documents>, folder: &Arc<Folder>) -> bool {
    match folder.may_run() {
        Permission::Yes => true,
        Permission::No => false,
        Permission::Changed => {
            ask(client.clone(), docs.clone(), folder.clone(), true);
            false
        }
    }
}

/// Why nothing runs in a folder that is not trusted.
pub fn refusal(folder: &Folder) -> String {
    format!(
        "the gates of {} are not trusted (or what they run changed since), so none of its commands run. Run the command `qgates.trust` (or `qgates trust {}` in a terminal) once you have read what it runs ({}).",
        folder.root.display(),
        folder.root.display(),
        folder.config_label()
    )
}
