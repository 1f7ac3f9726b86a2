//! Folders whose files are never the project's own: what tools install (virtual environments,
//! `node_modules`), what they leave behind (caches, build output), version-control data and
//! nested repositories. Every scope leaves them out, the project walk and git's changes alike,
//! whatever `.gitignore` says (docs/scopes.md): a `.venv/` that git does not ignore
//! (Python before 3.13 writes no `.gitignore` into it) would otherwise put thousands of
//! installed files into the `auto` scope while `project` leaves them out.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Folders left out by name, wherever they are.
const NAMES: [&str; 14] = [
    ".git",
    ".hg",
    ".svn",
    ".qgates",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".tox",
    ".nox",
    ".eggs",
];

/// Files that make the folder holding them a tool's: a virtual environment of any name
/// (`pyvenv.cfg`), a cache or build folder that follows the Cache Directory Tagging
/// Specification (`CACHEDIR.TAG`: cargo's `target/`, the caches of pytest, mypy and ruff), and
/// another repository (`.git`, a folder or a file).
const MARKERS: [&str; 3] = ["pyvenv.cfg", "CACHEDIR.TAG", ".git"];

/// Whether a file's name marks the folder holding it as a tool's or another repository's.
pub fn is_marker(name: &OsStr) -> bool {
    MARKERS.iter().any(|m| name == *m)
}

/// Whether the folder `dir`, named `name`, is a tool's or another repository's. The workspace
/// root itself is never asked about.
pub fn is_foreign(dir: &Path, name: &OsStr) -> bool {
    NAMES.iter().any(|n| name == *n)
        || MARKERS
            .iter()
            .any(|m| dir.join(m).symlink_metadata().is_ok())
}

/// Filters root-relative file paths, looking each folder up once.
pub struct ForeignFilter {
    root: PathBuf,
    known: HashMap<String, bool>,
}

impl ForeignFilter {
    pub fn new(root: &Path) -> Self {
        ForeignFilter {
            root: root.to_path_buf(),
            known: HashMap::new(),
        }
    }

    /// Whether `rel` (root-relative, POSIX) lies in no foreign folder.
    pub fn keeps(&mut self, rel: &str) -> bool {
        rel.match_indices('/').all(|(end, _)| {
            let folder = &rel[..end];
            if let Some(known) = self.known.get(folder) {
                return !known;
            }
            let name = folder.rsplit('/').next().unwrap_or(folder);
            let foreign = is_foreign(&self.root.join(folder), OsStr::new(name));
            self.known.insert(folder.to_string(), foreign);
            !foreign
        })
    }

    /// Removes the paths in foreign folders; returns how many went.
    pub fn retain(&mut self, files: &mut Vec<String>) -> usize {
        let before = files.len();
        files.retain(|f| self.keeps(f));
        before - files.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_foreign_by_name_or_by_what_they_hold() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for folder in ["env", "target", "vendored", "src/pkg", "build"] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        std::fs::write(root.join("env/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        std::fs::write(
            root.join("target/CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n",
        )
        .unwrap();
        std::fs::write(
            root.join("vendored/.git"),
            "gitdir: ../.git/modules/vendored\n",
        )
        .unwrap();
        let mut filter = ForeignFilter::new(root);
        let mut files: Vec<String> = [
            "env/lib/site.py",
            "target/debug/x.rs",
            "vendored/lib.py",
            "src/pkg/node_modules/a/index.js",
            "src/.venv/lib/x.py",
            "src/pkg/__pycache__/m.pyc",
            "src/pkg/mod.py",
            "build/gen.py",
            "venv.py",
            "top.py",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(filter.retain(&mut files), 6);
        assert_eq!(
            files,
            ["src/pkg/mod.py", "build/gen.py", "venv.py", "top.py"]
        );
    }
}
