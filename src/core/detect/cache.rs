//! Detection remembered per root for the life of the process: the agent server loads the
//! configuration on every run, and without `quality.yaml` that means detecting. An answer is
//! reused while every folder walked and every file read keeps its stamp (adding, removing or
//! renaming a file changes its folder's), which costs one `lstat` per folder. As for content
//! hashes, an answer that depends on a path changed within `RACY_MARGIN` of the walk is not
//! remembered (see `workspace::stamp`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use super::{Detection, detect};
use crate::core::workspace::stamp::{RACY_MARGIN, Stamped};

/// Roots remembered at most; past it the memory starts again (a process serves a few).
const MAX_ROOTS: usize = 64;

fn memory() -> &'static Mutex<HashMap<PathBuf, Stamped<Arc<Detection>>>> {
    static MEMORY: OnceLock<Mutex<HashMap<PathBuf, Stamped<Arc<Detection>>>>> = OnceLock::new();
    MEMORY.get_or_init(Default::default)
}

/// `detect(root)`, or the answer of an earlier call while nothing it depends on has changed.
pub fn detect_cached(root: &Path) -> Arc<Detection> {
    detect_cached_at(root, SystemTime::now)
}

/// `detect_cached`, reading the time from `clock` (the tests move it on instead of waiting).
fn detect_cached_at(root: &Path, clock: impl Fn() -> SystemTime) -> Arc<Detection> {
    let remembered = memory()
        .lock()
        .ok()
        .and_then(|m| m.get(root).and_then(Stamped::get).cloned());
    if let Some(detection) = remembered {
        return detection;
    }
    // Taken before the walk: a path changed during it, or since, is never trusted.
    let reference = clock() - RACY_MARGIN;
    let detection = Arc::new(detect(root));
    let watched = detection.watched.clone();
    let Some(entry) = Stamped::new(detection.clone(), watched, reference) else {
        return detection;
    };
    if let Ok(mut m) = memory().lock() {
        if m.len() >= MAX_ROOTS && !m.contains_key(root) {
            m.clear();
        }
        m.insert(root.to_path_buf(), entry);
    }
    detection
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn presets(d: &Detection) -> Vec<&'static str> {
        d.proposals.iter().map(|p| p.preset).collect()
    }

    #[test]
    fn an_answer_is_reused_until_a_file_it_depends_on_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("scripts/deep")).unwrap();
        std::fs::write(root.join("app.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("pyproject.toml"), "[project]\nname = 'x'\n").unwrap();
        // Just written, within the racy margin: not remembered.
        let fresh = detect_cached(root);
        assert!(!Arc::ptr_eq(&fresh, &detect_cached(root)));

        // Stamped an hour after the files last changed: remembered.
        let later = || SystemTime::now() + Duration::from_secs(3600);
        let first = detect_cached_at(root, later);
        assert!(
            Arc::ptr_eq(&first, &detect_cached_at(root, later)),
            "not reused"
        );
        assert!(!presets(&first).contains(&"shellcheck"), "{first:?}");

        // A new file deep in the tree: its folder's times change.
        std::fs::write(root.join("scripts/deep/run.sh"), "echo\n").unwrap();
        let second = detect_cached_at(root, later);
        assert!(presets(&second).contains(&"shellcheck"), "{second:?}");
        assert!(Arc::ptr_eq(&second, &detect_cached_at(root, later)));

        // An edited manifest, the folder unchanged: the file's own times change.
        std::fs::write(
            root.join("pyproject.toml"),
            "[project]\nname = 'x'\n[tool.pylint.main]\n",
        )
        .unwrap();
        assert!(presets(&detect_cached_at(root, later)).contains(&"pylint"));
    }
}
