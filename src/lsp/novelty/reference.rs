//! A folder's reference for telling new findings from pre-existing ones: the results at the
//! base commit, and the reference run under way or last done (`super`).

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use tokio::task::AbortHandle;

use crate::core::api::ResultCache;

/// A folder's reference: its results, and the reference run under way or last done.
#[derive(Default)]
pub struct Reference {
    cache: OnceLock<Arc<ResultCache>>,
    pub(super) warming: Mutex<Warming>,
}

#[derive(Default)]
pub(super) struct Warming {
    /// The identity of the reference being run, and its task.
    pub(super) running: Option<(String, AbortHandle)>,
    /// The identity of the last reference run that ended, and why it failed.
    pub(super) done: Option<(String, Option<String>)>,
}

impl Reference {
    /// The reference's results (`.qgates/cache/reference.json`, shared with `qgates check`),
    /// read the first time they are needed: after the folder's `.qgates/` was found safe.
    pub fn cache(&self, root: &Path) -> Arc<ResultCache> {
        self.cache
            .get_or_init(|| Arc::new(ResultCache::load_reference(root)))
            .clone()
    }
}
