//! Finding the workspace root for a command.

use std::path::{Path, PathBuf};

use crate::core::config::CONFIG_CANDIDATES;
use crate::core::paths::lexical_clean;

/// The root: `--root` if given; else, with `--config`, the folder holding it (the parent of a
/// `.qgates` folder); else the nearest folder at or above `start` with a configuration, else the
/// nearest with `.git`, else `start` itself.
pub fn find_root(explicit: Option<&Path>, config: Option<&Path>, start: &Path) -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let absolute = |p: &Path| {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            cwd.join(p)
        }
    };
    if let Some(root) = explicit {
        return lexical_clean(&absolute(root));
    }
    if let Some(cfg) = config {
        let cfg = absolute(cfg);
        if let Some(dir) = cfg.parent() {
            let dir = if dir.file_name().is_some_and(|n| n == ".qgates") {
                dir.parent().unwrap_or(dir)
            } else {
                dir
            };
            return lexical_clean(dir);
        }
    }
    let start = absolute(start);
    // A file, or a path that does not exist (yet): start from the nearest folder above it.
    let start = start
        .ancestors()
        .find(|a| a.is_dir())
        .map(Path::to_path_buf)
        .unwrap_or(cwd.clone());
    let start = lexical_clean(&start);
    let ancestors = || start.ancestors();
    if let Some(dir) = ancestors().find(|d| CONFIG_CANDIDATES.iter().any(|c| d.join(c).is_file())) {
        return dir.to_path_buf();
    }
    if let Some(dir) = ancestors().find(|d| d.join(".git").exists()) {
        return dir.to_path_buf();
    }
    start
}
