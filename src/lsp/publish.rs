//! Publishing a run's result: diagnostics for every file the run checked or a finding names,
//! open or not. A file that went clean gets an empty list; a file whose list did not change gets
//! nothing (no churn), unless the run answers its save: a saved file always gets its list, as
//! other servers publish on save (the same list again changes nothing on screen, and the editor
//! knows the save was checked); a document edited since the run started keeps its diagnostics
//! until the run for its new content (stale results are dropped, never shown). The tools read files from
//! disk, so a document with unsaved changes keeps its diagnostics until it is saved: a result for
//! the file on disk would put squiggles on the wrong lines of the buffer.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tower_lsp_server::ls_types::{Diagnostic, MessageType, Uri};

use super::Session;
use super::diagnostics::{Links, config_problem, diagnostics_json};
use super::documents::path_to_uri;
use super::folder::{Folder, Published};
use super::position::Lines;
use crate::core::hash::stable_hash;
use crate::core::report::{GateStatus, Report};
use crate::core::stamp::Stamp;
use crate::core::violation::Violation;

pub async fn publish_report(
    session: &Session,
    folder: &Folder,
    report: &Arc<Report>,
    versions: &HashMap<PathBuf, Option<i32>>,
    saved: &BTreeSet<PathBuf>,
) {
    let mut by_file: BTreeMap<&str, Vec<(&str, &Violation)>> = BTreeMap::new();
    for f in &report.scope.files {
        by_file.entry(f.as_str()).or_default();
    }
    for gate in &report.gates {
        for v in &gate.violations {
            if let Some(file) = v.file.as_deref() {
                by_file.entry(file).or_default().push((&gate.name, v));
            }
        }
    }
    let enc = session.encoding();
    let mut links = Links::default();
    let mut unsent = 0;
    for (file, found) in by_file {
        let path = folder.root.join(file);
        let open = session.docs.get(&path);
        let started_with = versions.get(&path).copied().flatten();
        if open.as_ref().map(|d| d.version) != started_with {
            // Edited (or opened) since the run started: this result describes older text.
            continue;
        }
        if let Some(doc) = &open
            && !matches_disk(folder, &path, file, &doc.text)
        {
            continue;
        }
        let text: Arc<str> = match &open {
            Some(doc) => doc.text.clone(),
            None => Arc::from(std::fs::read_to_string(&path).unwrap_or_default()),
        };
        let json: Arc<[u8]> = diagnostics_json(&found, &Lines::new(&text), enc, &mut links).into();
        let version = open.as_ref().map(|d| d.version);
        {
            let mut published = folder.published.lock().unwrap_or_else(|e| e.into_inner());
            let unchanged = published
                .get(&path)
                .is_some_and(|p| *p.json == *json && p.version == version);
            if unchanged {
                if !saved.contains(&path) {
                    continue;
                }
            } else {
                published.insert(
                    path.clone(),
                    Published {
                        version,
                        json: json.clone(),
                    },
                );
            }
        }
        let uri = match open {
            Some(doc) => doc.uri,
            None => match path_to_uri(&path) {
                Some(u) => u,
                None => continue,
            },
        };
        let Some(sent) = session.send_direct(publication(&uri, &json, version)) else {
            break;
        };
        // What is ready goes out while the rest is prepared: the client reads and parses the
        // first publications on another core instead of waiting for the last one.
        unsent += sent;
        if unsent >= HAND_OVER_BYTES {
            unsent = 0;
            tokio::task::yield_now().await;
        }
    }
    show_gate_errors(session, folder, report).await;
}

/// A `textDocument/publishDiagnostics` notification around diagnostics already serialized,
/// written past the protocol library (which would turn each into a JSON value and serialize it
/// again).
fn publication(uri: &Uri, diagnostics: &[u8], version: Option<i32>) -> Vec<u8> {
    let mut out = Vec::with_capacity(diagnostics.len() + uri.as_str().len() + 112);
    out.extend_from_slice(
        br#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"#,
    );
    // A URI is a string; writing one to a vector cannot fail.
    let _ = serde_json::to_writer(&mut out, uri.as_str());
    out.extend_from_slice(br#","diagnostics":"#);
    out.extend_from_slice(diagnostics);
    if let Some(v) = version {
        out.extend_from_slice(format!(r#","version":{v}"#).as_bytes());
    }
    out.extend_from_slice(b"}}");
    out
}

/// Whether an open document's text is what is on disk, which the tools read. A stat, and the
/// content hash the run recorded for the file's stamp when the stamp could be trusted, answer
/// without reading the file (200 files opened at once are 200 reads otherwise); else the file is
/// read and compared.
/// A file that cannot be read counts as matching: its result (the run noted it vanished) is
/// published.
fn matches_disk(folder: &Folder, path: &Path, rel: &str, text: &str) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return true;
    };
    if meta.len() != text.len() as u64 {
        return false;
    }
    // Hashing goes a byte at a time: a large file is quicker read and compared.
    if text.len() <= HASH_AT_MOST
        && let Some(known) = folder.cache.known_hash(rel, &Stamp::of(&meta))
    {
        return known == stable_hash(text.as_bytes());
    }
    std::fs::read(path)
        .ok()
        .is_none_or(|disk| disk == text.as_bytes())
}

const HASH_AT_MOST: usize = 64 << 10;

/// How many bytes of publications are prepared before the output task gets to write them (a
/// pipe to the client holds 64 KiB).
const HAND_OVER_BYTES: usize = 16 << 10;

/// A gate that could not run (tool missing, crashed, garbage output) is shown once per distinct
/// message, with where its log is; it is in every report too.
async fn show_gate_errors(session: &Session, folder: &Folder, report: &Report) {
    for gate in &report.gates {
        if gate.status != GateStatus::Error {
            continue;
        }
        let Some(error) = &gate.error else { continue };
        let key = format!("{}\u{0}{error}", gate.id);
        let new = folder
            .shown_errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key);
        if new {
            session
                .client
                .show_message(
                    MessageType::WARNING,
                    format!("qgates: {} could not run: {error}", gate.name),
                )
                .await;
        }
    }
}

/// Shows the configuration's problems on the files they are in (and clears fixed ones).
pub async fn publish_config_problems(session: &Session, folder: &Folder) {
    let enc = session.encoding();
    let mut per_file: BTreeMap<PathBuf, Vec<Diagnostic>> = BTreeMap::new();
    let old: Vec<PathBuf> = std::mem::take(
        &mut *folder
            .config_files_with_problems
            .lock()
            .unwrap_or_else(|e| e.into_inner()),
    );
    for p in old {
        per_file.insert(p, Vec::new());
    }
    let mut now = Vec::new();
    if let Some(err) = folder.config_error() {
        for problem in &err.problems {
            let path = if problem.file.is_absolute() {
                problem.file.clone()
            } else {
                folder.root.join(&problem.file)
            };
            let text = session
                .docs
                .get(&path)
                .map(|d| d.text.to_string())
                .unwrap_or_else(|| std::fs::read_to_string(&path).unwrap_or_default());
            let d = config_problem(problem, &Lines::new(&text), enc);
            per_file.entry(path.clone()).or_default().push(d);
            now.push(path);
        }
    }
    now.dedup();
    *folder
        .config_files_with_problems
        .lock()
        .unwrap_or_else(|e| e.into_inner()) = now;
    for (path, items) in per_file {
        let doc = session.docs.get(&path);
        let uri = match &doc {
            Some(d) => d.uri.clone(),
            None => match path_to_uri(&path) {
                Some(u) => u,
                None => continue,
            },
        };
        session
            .client
            .publish_diagnostics(uri, items, doc.map(|d| d.version))
            .await;
    }
}
