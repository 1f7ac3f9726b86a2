//! Publishing a run's result: diagnostics for every file the run checked or a finding names,
//! open or not. A file that went clean gets an empty list; an unchanged list is not sent again
//! (no churn), except to a saved file, as other servers publish on save. A document edited since
//! the run started, or whose unsaved text is not the file on disk the tools read, keeps its
//! diagnostics: the result would put squiggles on the wrong lines.
//!
//! A finding that was there before the change is shown as `existingFindings` says (lower, by
//! default: `diagnostics::ExistingFindings`).
//!
//! A file with more findings than `MAX_DIAGNOSTICS_PER_FILE` is shown the first ones and a note
//! (`diagnostics::shown`); the rest go to the log at level info.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{Diagnostic, MessageType, Uri};

use super::diagnostics::{
    DiagnosticCaps, ExistingFindings, MAX_DIAGNOSTICS_PER_FILE, config_problem, shown,
    to_diagnostic,
};
use super::documents::Documents;
use super::folder::{Folder, Published};
use super::locks::lock;
use super::position::{Encoding, Lines};
use crate::core::report::Violation;
use crate::core::report::{GateStatus, Report};

/// What background work needs of the session to publish: the client, the open documents, the
/// negotiated encoding and the diagnostic fields the client takes.
#[derive(Clone)]
pub struct Publisher {
    pub client: Client,
    pub docs: Arc<Documents>,
    pub encoding: Encoding,
    pub diagnostics: DiagnosticCaps,
    /// How pre-existing findings are shown.
    pub existing: ExistingFindings,
}

impl Publisher {
    /// The versions of a folder's open documents when a run starts: results for a document
    /// that changed since are stale and not published.
    pub fn versions(&self, root: &Path) -> HashMap<PathBuf, Option<i32>> {
        self.docs
            .under(root)
            .into_iter()
            .map(|p| {
                let v = self.docs.version(&p);
                (p, v)
            })
            .collect()
    }

    pub async fn publish_report(
        &self,
        folder: &Folder,
        report: &Report,
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
        let log_dir = report.log_dir.as_deref().map(|d| folder.root.join(d));
        for (file, found) in by_file {
            let path = folder.root.join(file);
            let open = self.docs.get(&path);
            let version = open.as_ref().map(|d| d.version);
            if version != versions.get(&path).copied().flatten() {
                // Edited (or opened) since the run started: this result describes older text.
                continue;
            }
            if let Some(doc) = &open
                && !matches_disk(&path, &doc.text)
            {
                continue;
            }
            let text: Arc<str> = match &open {
                Some(doc) => doc.text.clone(),
                None => Arc::from(std::fs::read_to_string(&path).unwrap_or_default()),
            };
            let lines = Lines::new(&text);
            let diagnostics: Vec<Diagnostic> = found
                .iter()
                .filter_map(|(gate, v)| {
                    let d = to_diagnostic(gate, v, &lines, self.encoding);
                    match v.new {
                        Some(false) => self.existing.show(d),
                        _ => Some(d),
                    }
                })
                .collect();
            {
                let mut published = lock(&folder.published);
                let unchanged = published
                    .get(&path)
                    .is_some_and(|p| p.diagnostics == diagnostics && p.version == version);
                if unchanged && !saved.contains(&path) {
                    continue;
                }
                published.insert(
                    path.clone(),
                    Published {
                        version,
                        diagnostics: diagnostics.clone(),
                        log_dir: log_dir.clone(),
                    },
                );
            }
            for d in diagnostics.iter().skip(MAX_DIAGNOSTICS_PER_FILE) {
                tracing::info!(
                    "not shown in the editor: {file}:{}:{}: [{}] {}",
                    d.range.start.line + 1,
                    d.range.start.character + 1,
                    d.source.as_deref().unwrap_or_default(),
                    d.message
                );
            }
            let Some(uri) = open.map(|d| d.uri).or_else(|| Uri::from_file_path(&path)) else {
                continue;
            };
            // Whole in `published` (quick fixes read it), shaped and capped for the client.
            let shaped = shown(&diagnostics, log_dir.as_deref(), self.diagnostics);
            self.client
                .publish_diagnostics(uri, shaped, self.diagnostics.version(version))
                .await;
        }
        self.show_gate_errors(folder, report).await;
    }

    /// A gate that could not run (tool missing, crashed, garbage output) is shown once per
    /// distinct message; it is in every report too.
    async fn show_gate_errors(&self, folder: &Folder, report: &Report) {
        for gate in &report.gates {
            if gate.status != GateStatus::Error {
                continue;
            }
            let Some(error) = &gate.error else { continue };
            let key = format!("{}\u{0}{error}", gate.id);
            let new = lock(&folder.shown_errors).insert(key);
            if new {
                self.client
                    .show_message(
                        MessageType::WARNING,
                        format!("qgates: {} could not run: {error}", gate.name),
                    )
                    .await;
            }
        }
    }

    /// Shows the configuration's problems on the files they are in (and clears fixed ones).
    pub async fn publish_config_problems(&self, folder: &Folder) {
        let enc = self.encoding;
        let mut per_file: BTreeMap<PathBuf, Vec<Diagnostic>> = BTreeMap::new();
        // The files that had problems get an empty list unless they still have some.
        for p in std::mem::take(&mut *lock(&folder.config_files_with_problems)) {
            per_file.insert(p, Vec::new());
        }
        let mut now = Vec::new();
        if let Some(err) = folder.config_error() {
            // Each file is read and its lines found once, not once per problem.
            let mut lines_of: HashMap<PathBuf, Lines> = HashMap::new();
            for problem in &err.problems {
                let path = if problem.file.is_absolute() {
                    problem.file.clone()
                } else {
                    folder.root.join(&problem.file)
                };
                let lines = lines_of.entry(path.clone()).or_insert_with(|| {
                    Lines::new(&match self.docs.get(&path) {
                        Some(d) => d.text.to_string(),
                        None => std::fs::read_to_string(&path).unwrap_or_default(),
                    })
                });
                let d = config_problem(problem, lines, enc);
                per_file.entry(path.clone()).or_default().push(d);
                now.push(path);
            }
        }
        now.dedup();
        *lock(&folder.config_files_with_problems) = now;
        for (path, items) in per_file {
            let doc = self.docs.get(&path);
            let version = doc.as_ref().map(|d| d.version);
            let Some(uri) = doc.map(|d| d.uri).or_else(|| Uri::from_file_path(&path)) else {
                continue;
            };
            self.client
                .publish_diagnostics(uri, items, self.diagnostics.version(version))
                .await;
        }
    }
}

/// Whether an open document's text is what is on disk, which the tools read. A file that cannot
/// be read counts as matching: its result (the run noted it vanished) is published.
fn matches_disk(path: &Path, text: &str) -> bool {
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() != text.len() as u64 => false,
        _ => std::fs::read(path)
            .ok()
            .is_none_or(|disk| disk == text.as_bytes()),
    }
}
