//! The projects inside a repository: the root, and every folder below it that holds a manifest
//! or a tool's configuration file (`rules::marks_a_subproject`). Each gets gates of its own, run
//! in its folder; a file belongs to the nearest one that holds it.
//!
//! Left out: folders of test data (`rules::DATA_FOLDERS`: a fixture project is not checked as
//! the repository's own), folders deeper than `MAX_DEPTH`, subprojects past `MAX_SUBPROJECTS`,
//! and the members of a Cargo workspace, which its root's `cargo clippy` and `rustfmt` cover.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::manifests::read_text;
use super::rules;
use super::walk::folder_names;

/// How deep below the root a subproject may be: `packages/web/app` is 3.
pub const MAX_DEPTH: usize = 4;

/// Subprojects at most, the root aside: past it a repository is a monorepo of many packages,
/// whose gates are better written by hand than listed by the hundred.
pub const MAX_SUBPROJECTS: usize = 64;

#[derive(Debug, Clone, Default)]
pub struct Subproject {
    /// Root-relative, `/`-separated; empty for the root.
    pub dir: String,
    /// The names of the files directly in it, where its manifests are looked up.
    pub names: BTreeSet<String>,
}

impl Subproject {
    /// How a reason names a file of it: `backend/pyproject.toml`, or `pyproject.toml` at the root.
    pub fn shown(&self, name: &str) -> String {
        super::shown(&self.dir, name)
    }

    /// Whether it is `other` or holds it.
    pub fn holds(&self, other: &str) -> bool {
        self.dir.is_empty() || other == self.dir || is_inside(other, &self.dir)
    }
}

/// Whether the root-relative path `rel` is inside the folder `dir` (not `dir` itself).
pub fn is_inside(rel: &str, dir: &str) -> bool {
    rel.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// The root first, then the subprojects in path order (a folder before the folders it holds),
/// from the folders the walk found holding a manifest (`marked`).
pub fn find(
    root: &Path,
    marked: &BTreeSet<String>,
    notes: &mut Vec<String>,
    read: &mut Vec<PathBuf>,
) -> Vec<Subproject> {
    let mut found = vec![Subproject {
        dir: String::new(),
        names: folder_names(root),
    }];
    let mut cargo_workspaces: Vec<String> = Vec::new();
    if is_cargo_workspace(root, &found[0], read) {
        cargo_workspaces.push(String::new());
    }
    let (mut data, mut deep, mut past) = (0, 0, 0);
    for dir in marked {
        let parts: Vec<&str> = dir.split('/').collect();
        if parts.iter().any(|p| rules::DATA_FOLDERS.contains(p)) {
            data += 1;
            continue;
        }
        if parts.len() > MAX_DEPTH {
            deep += 1;
            continue;
        }
        // The walk did not enter a link; a folder swapped for one since is not read either.
        let path = root.join(dir);
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let mut sub = Subproject {
            dir: dir.clone(),
            names: folder_names(&path),
        };
        if cargo_workspaces
            .iter()
            .any(|w| w.is_empty() || is_inside(dir, w))
        {
            sub.names
                .retain(|n| !rules::CARGO_FILES.contains(&n.as_str()));
        }
        if !sub.names.iter().any(|n| rules::marks_a_subproject(n)) {
            continue;
        }
        if found.len() > MAX_SUBPROJECTS {
            past += 1;
            continue;
        }
        if is_cargo_workspace(root, &sub, read) {
            cargo_workspaces.push(dir.clone());
        }
        found.push(sub);
    }
    let not_taken = "hold manifests; they were not taken as subprojects";
    for (n, what) in [
        (
            data,
            format!("of test data (fixtures, testdata) {not_taken}"),
        ),
        (deep, format!("deeper than {MAX_DEPTH} levels {not_taken}")),
        (
            past,
            format!(
                "past the first {MAX_SUBPROJECTS} subprojects were not looked at; write their gates by hand"
            ),
        ),
    ] {
        if n > 0 {
            let s = if n == 1 { "" } else { "s" };
            notes.push(format!("{n} folder{s} {what}"));
        }
    }
    found
}

/// Whether the subproject's Cargo.toml has `[workspace]` (its members are then checked from it).
fn is_cargo_workspace(root: &Path, sub: &Subproject, read: &mut Vec<PathBuf>) -> bool {
    if !sub.names.contains("Cargo.toml") {
        return false;
    }
    let path = root.join(sub.shown("Cargo.toml"));
    read.push(path.clone());
    read_text(&path)
        .ok()
        .and_then(|text| text.parse::<toml_edit::DocumentMut>().ok())
        .is_some_and(|doc| doc.contains_key("workspace"))
}

/// The index in `subs` (as `find` returns them) of the subproject a root-relative file belongs
/// to: the nearest one holding it.
pub fn owner(subs: &[Subproject], rel: &str) -> usize {
    // In path order a folder comes before the folders it holds: the last match is the nearest.
    subs.iter().rposition(|s| s.holds(rel)).unwrap_or(0)
}

/// The subprojects holding `subs[i]`, nearest last.
pub fn ancestors(subs: &[Subproject], i: usize) -> impl Iterator<Item = usize> + '_ {
    (0..i).filter(move |&a| subs[a].holds(&subs[i].dir))
}
