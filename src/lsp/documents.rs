//! The documents the editor has open: their URI as the client spelled it, version and text.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dashmap::DashMap;
use tower_lsp_server::ls_types::Uri;

#[derive(Debug, Clone)]
pub struct Document {
    pub uri: Uri,
    pub version: i32,
    pub text: Arc<str>,
}

/// Open documents by file path (a path has one URI, however the client encodes it).
#[derive(Debug, Default)]
pub struct Documents {
    by_path: DashMap<PathBuf, Document>,
}

impl Documents {
    /// Opens a document, or replaces the text of an open one.
    pub fn open(&self, path: PathBuf, uri: Uri, version: i32, text: String) {
        let text = Arc::from(text);
        self.by_path.insert(path, Document { uri, version, text });
    }

    pub fn close(&self, path: &Path) {
        self.by_path.remove(path);
    }

    pub fn get(&self, path: &Path) -> Option<Document> {
        self.by_path.get(path).map(|d| d.clone())
    }

    pub fn version(&self, path: &Path) -> Option<i32> {
        self.by_path.get(path).map(|d| d.version)
    }

    /// The open documents under a folder.
    pub fn under(&self, root: &Path) -> Vec<PathBuf> {
        self.by_path
            .iter()
            .filter(|e| e.key().starts_with(root))
            .map(|e| e.key().clone())
            .collect()
    }
}

/// A `file:` URI as a path; `None` for other schemes.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    if uri.scheme().as_str() != "file" {
        return None;
    }
    let path = uri.to_file_path()?.into_owned();
    path.is_absolute()
        .then(|| crate::core::workspace::paths::lexical_clean(&path))
}
