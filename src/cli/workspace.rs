//! Finding the workspace root and the configuration file for a command.

use std::path::{Path, PathBuf};

use super::output::usage;
use crate::core::config::CONFIG_CANDIDATES;
use crate::core::workspace::paths::lexical_clean;

/// The workspace of `qgates status` and `qgates trust` (`for_what`: what the folder is given
/// for), resolved through links; a `dir` that is not a folder is a usage error.
pub fn given_workspace(dir: Option<&Path>, for_what: &str) -> Result<PathBuf, i32> {
    let start = dir.unwrap_or(Path::new("."));
    if !start.is_dir() {
        return Err(usage(&format!(
            "{} is not a folder. Give the workspace folder {for_what}.",
            start.display()
        )));
    }
    let root = find_root(None, start);
    Ok(root.canonicalize().unwrap_or(root))
}

/// The root: `--root` if given; else the nearest folder at or above `start` that holds a
/// configuration (`quality.yaml` or `.qgates/quality.yaml`), else the nearest that holds `.git`,
/// else `start` itself (the folder above it, when `start` is a file or does not exist).
///
/// `--config` plays no part: it says which file to read, not which files to check, so a shared
/// configuration kept in another folder checks the repository the command runs in.
pub fn find_root(explicit: Option<&Path>, start: &Path) -> PathBuf {
    if let Some(root) = explicit {
        return lexical_clean(&absolute(root));
    }
    let start = absolute(start);
    // A file, or a path that does not exist (yet): start from the nearest folder above it.
    let start = start
        .ancestors()
        .find(|a| a.is_dir())
        .map(Path::to_path_buf)
        .unwrap_or_else(current_dir);
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

/// The `--config` file as every command uses it: absolute and with links resolved, so reports,
/// `qgates status` and what `qgates trust` records name the same file however the path was
/// spelled (`../shared/quality.yaml` from one folder, an absolute path in a server's settings).
/// A path that cannot be resolved (it does not exist) is kept, made absolute, for loading to
/// report.
pub fn config_file(arg: Option<&Path>) -> Option<PathBuf> {
    let path = absolute(arg?);
    Some(path.canonicalize().unwrap_or_else(|_| lexical_clean(&path)))
}

fn current_dir() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        current_dir().join(p)
    }
}
