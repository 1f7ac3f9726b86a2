//! One bounded walk of the repository: the files of the kinds the rules count, the folders
//! holding a manifest (candidate subprojects), and the paths the answer depends on.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::rules::{self, Kind};
use crate::core::scope::project_walker;
use crate::core::workspace::paths::relative_posix;

/// The walk stops after this many files: detection runs whenever a workspace without
/// `quality.yaml` loads its configuration, and must stay cheap in a home folder or a monorepo.
pub const MAX_FILES: usize = 20_000;

/// The bit of `Hit::kinds` that says a file is Python; the bits below it are the indexes of
/// `rules::FILE_RULES`.
const PYTHON: u32 = 1 << 31;

/// The files of one kind that a subproject holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    pub count: usize,
    /// The first one met, root-relative.
    pub first: String,
    /// The extensions among them (for `Kind::Ext`), to name them in the reason.
    pub extensions: BTreeSet<String>,
}

/// A file of a kind the rules count.
#[derive(Debug, Clone)]
pub struct Hit {
    /// Root-relative, `/`-separated.
    pub rel: String,
    kinds: u32,
}

impl Hit {
    pub fn is_python(&self) -> bool {
        self.kinds & PYTHON != 0
    }

    /// Whether it is of the kind of `rules::FILE_RULES[rule]`.
    pub fn is_of(&self, rule: usize) -> bool {
        self.kinds & (1 << rule) != 0
    }
}

#[derive(Debug, Clone, Default)]
pub struct Inventory {
    /// The files of the kinds the rules count, in the order met.
    pub hits: Vec<Hit>,
    /// The folders below the root (root-relative) holding a file that marks a subproject
    /// (`rules::marks_a_subproject`).
    pub marked: BTreeSet<String>,
    pub files_seen: usize,
    /// The walk stopped at `MAX_FILES`: counts are lower bounds.
    pub truncated: bool,
    /// Every folder walked and every ignore file met (they decide what is walked).
    pub watched: Vec<PathBuf>,
}

/// Walks `root` (up to `max_files` files), honouring .gitignore (in or out of a git repository)
/// and never following a symbolic link: a link to a folder is not entered, a link to a file is
/// not counted.
pub fn walk(root: &Path, max_files: usize) -> Inventory {
    let mut inv = Inventory::default();
    for entry in project_walker(root).build().flatten() {
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
        if let Some((folder, _)) = rel.rsplit_once('/')
            && rules::marks_a_subproject(&name)
            && !inv.marked.contains(folder)
        {
            inv.marked.insert(folder.to_string());
        }
        let mut kinds = 0;
        if Kind::Ext(&rules::PYTHON_EXTENSIONS).matches(&rel, &name) {
            kinds |= PYTHON;
        }
        for (i, (kind, _, _)) in rules::FILE_RULES.iter().enumerate() {
            if kind.matches(&rel, &name) {
                kinds |= 1 << i;
            }
        }
        if kinds != 0 {
            inv.hits.push(Hit { rel, kinds });
        }
    }
    // git's own exclude file decides what is walked too.
    inv.watched.push(root.join(".git/info/exclude"));
    inv
}

/// The files of `hits` of each kind of `rules::FILE_RULES` (in its order), and how many are
/// Python files.
pub fn tally<'a>(hits: impl Iterator<Item = &'a Hit>) -> (Vec<Found>, usize) {
    let mut kinds = vec![Found::default(); rules::FILE_RULES.len()];
    let mut python = 0;
    for hit in hits {
        python += usize::from(hit.is_python());
        for (i, ((kind, _, _), found)) in rules::FILE_RULES.iter().zip(&mut kinds).enumerate() {
            if !hit.is_of(i) {
                continue;
            }
            if found.count == 0 {
                found.first = hit.rel.clone();
            }
            found.count += 1;
            let name = hit.rel.rsplit('/').next().unwrap_or_default();
            if let (Kind::Ext(_), Some(ext)) = (kind, rules::extension(name))
                && !found.extensions.contains(ext)
            {
                found.extensions.insert(ext.to_string());
            }
        }
    }
    (kinds, python)
}

/// The names of the regular files and links directly in `dir` (at most `MAX_FILES`), read
/// apart from the walk so that a manifest is seen whatever the walk's order and bound.
pub fn folder_names(dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeSet::new();
    };
    entries
        .flatten()
        .take(MAX_FILES)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}
