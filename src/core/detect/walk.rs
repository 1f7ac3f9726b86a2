//! One bounded walk of the repository: what kinds of files it has (`rules::FILE_RULES`), and
//! the folders and ignore files the answer depends on (to tell later whether it still holds).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::rules::{self, Kind};
use crate::core::paths::relative_posix;
use crate::core::scope::project_walker;

/// The walk stops after this many files: detection runs whenever a workspace without
/// `quality.yaml` loads its configuration, and must stay cheap in a home folder or a monorepo.
pub const MAX_FILES: usize = 20_000;

/// The files of one kind that the walk met.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    pub count: usize,
    /// The first one met, root-relative.
    pub first: String,
    /// The extensions among them (for `Kind::Ext`), to name them in the reason.
    pub extensions: BTreeSet<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Inventory {
    /// Per entry of `rules::FILE_RULES`, in its order.
    pub kinds: Vec<Found>,
    pub python_files: usize,
    pub files_seen: usize,
    /// The walk stopped at `MAX_FILES`: counts are lower bounds.
    pub truncated: bool,
    /// Every folder walked and every ignore file met: a file added, removed or renamed changes
    /// its folder's modification time, and the ignore files decide what is walked.
    pub watched: Vec<PathBuf>,
}

/// Walks `root` (up to `max_files` files), honouring .gitignore (in or out of a git repository)
/// and never following a symbolic link: a link to a folder is not entered, a link to a file is
/// not counted.
pub fn walk(root: &Path, max_files: usize) -> Inventory {
    let mut inv = Inventory {
        kinds: vec![Found::default(); rules::FILE_RULES.len()],
        ..Default::default()
    };
    for entry in project_walker(root).flatten() {
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            inv.watched.push(entry.path().to_path_buf());
            continue;
        }
        if !kind.is_file() {
            continue;
        }
        if inv.files_seen == max_files {
            inv.truncated = true;
            break;
        }
        inv.files_seen += 1;
        let name = entry.file_name().to_string_lossy();
        if matches!(name.as_ref(), ".gitignore" | ".ignore") {
            inv.watched.push(entry.path().to_path_buf());
        }
        let Some(rel) = relative_posix(root, entry.path()) else {
            continue;
        };
        if Kind::Ext(&rules::PYTHON_EXTENSIONS).matches(&rel, &name) {
            inv.python_files += 1;
        }
        for ((kind, _, _), found) in rules::FILE_RULES.iter().zip(&mut inv.kinds) {
            if !kind.matches(&rel, &name) {
                continue;
            }
            if found.count == 0 {
                found.first = rel.clone();
            }
            found.count += 1;
            if let (Kind::Ext(_), Some(ext)) = (kind, rules::extension(&name))
                && !found.extensions.contains(ext)
            {
                found.extensions.insert(ext.to_string());
            }
        }
    }
    // git's own exclude file decides what is walked too.
    inv.watched.push(root.join(".git/info/exclude"));
    inv
}

/// The names of the regular files and links directly in `root` (at most `MAX_FILES`), read
/// apart from the walk so that a root file is seen whatever the walk's order and bound.
pub fn root_names(root: &Path) -> BTreeSet<String> {
    let Ok(dir) = std::fs::read_dir(root) else {
        return BTreeSet::new();
    };
    dir.flatten()
        .take(MAX_FILES)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}
