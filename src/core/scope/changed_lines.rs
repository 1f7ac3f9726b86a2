//! Which lines of a file changed since a commit: the lines added or modified in the working tree,
//! for diff coverage. The file's text at the commit comes from git's objects (through gix), and
//! the two texts are compared line by line with `similar`.
//!
//! A file the commit does not have is new: all its lines changed, unless git records it as the
//! rename of one (the commit's tree against the index, with git's default rename detection),
//! when its lines are compared with the old file's.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use gix::ObjectId;
use similar::{DiffOp, TextDiff};

use crate::core::scope::git::{GitError, Repo, read};
use crate::core::workspace::content_id::blob_id;

/// What a run compares with, as the engine gives it to a reader that needs changed lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffBase {
    /// The run's scope mode (`auto`, `branch`, `project`, `files`).
    pub mode: &'static str,
    /// The commit the scope's changes were taken from; `None` in the `project` and `files` scopes,
    /// and before the first commit (every file is then new).
    pub commit: Option<String>,
    /// The gate's files in scope, root-relative.
    pub files: Vec<String>,
}

impl DiffBase {
    /// Whether the scope is made of changes, so changed lines mean something.
    pub fn compares(&self) -> bool {
        matches!(self.mode, "auto" | "branch")
    }
}

/// 1-based line numbers of the working-tree file, per root-relative file.
pub type ChangedLines = HashMap<String, BTreeSet<u32>>;

/// The changed lines of each of `files` (root-relative) since `commit`; `commit = None` counts
/// every line as changed. A file that cannot be read as text is left out.
pub fn changed_lines(
    root: &Path,
    commit: Option<&str>,
    files: &[String],
) -> Result<ChangedLines, GitError> {
    let mut earlier = match commit {
        Some(commit) => at_commit(root, commit, files)?,
        None => HashMap::new(),
    };
    let mut out = ChangedLines::new();
    for rel in files {
        let Ok(now) = std::fs::read_to_string(root.join(rel)) else {
            continue;
        };
        let lines = match earlier.remove(rel).and_then(|f| f.text) {
            Some(old) => lines_changed(&old, &now),
            None => (1..=line_count(&now)).collect(),
        };
        out.insert(rel.clone(), lines);
    }
    Ok(out)
}

/// A file of the working tree as it was at a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlierFile {
    /// Root-relative: the file's own path, or the one git sees it renamed from.
    pub path: String,
    /// `None` when it is not text.
    pub text: Option<String>,
    /// The working tree holds this very version under the same path.
    pub unchanged: bool,
}

/// Each of `files` (root-relative) as it was at `commit`, under its own path or the one it was
/// renamed from (the commit's tree against the index, with git's default rename detection); a
/// file the commit does not have is left out. A file the working tree holds as it was is read
/// from the working tree, not from git.
pub fn at_commit(
    root: &Path,
    commit: &str,
    files: &[String],
) -> Result<HashMap<String, EarlierFile>, GitError> {
    let mut out = HashMap::new();
    let Some(repo) = Repo::discover(root)? else {
        return Ok(out);
    };
    let mut git = repo.gix().clone();
    // The trees on the way to each file are read once for all of them.
    git.object_cache_size_if_unset(4 << 20);
    let tree = git
        .find_tree(repo.base_tree(commit)?)
        .map_err(read("the baseline commit's tree"))?;
    let mut renames: Option<HashMap<String, String>> = None;
    for rel in files {
        let path = repo.repo_path(rel);
        let now = std::fs::read(root.join(rel)).ok();
        let earlier = match version_at(&tree, &path, now.as_deref())? {
            Some(found) => Some((path, found)),
            None => {
                let renames = match &mut renames {
                    Some(r) => r,
                    None => renames.insert(renamed_from(&repo, tree.id)?),
                };
                match renames.get(&path) {
                    Some(source) => version_at(&tree, source, None)?.map(|f| (source.clone(), f)),
                    None => None,
                }
            }
        };
        let Some((source, (text, unchanged))) = earlier else {
            continue;
        };
        if let Some(path) = repo.root_path(&source) {
            out.insert(
                rel.clone(),
                EarlierFile {
                    path,
                    text,
                    unchanged,
                },
            );
        }
    }
    Ok(out)
}

/// The lines of `new` (1-based) that are not unchanged lines of `old`.
pub fn lines_changed(old: &str, new: &str) -> BTreeSet<u32> {
    let diff = TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .diff_lines(old, new);
    let mut changed = BTreeSet::new();
    for op in diff.ops() {
        let (start, len) = match *op {
            DiffOp::Equal { .. } | DiffOp::Delete { .. } => continue,
            DiffOp::Insert {
                new_index, new_len, ..
            }
            | DiffOp::Replace {
                new_index, new_len, ..
            } => (new_index, new_len),
        };
        changed.extend((start..start + len).map(|i| i as u32 + 1));
    }
    changed
}

fn line_count(text: &str) -> u32 {
    text.split_inclusive('\n').count() as u32
}

/// The text of `path` (repository-relative) in the tree (`None` when it is not text), and whether
/// `now` (the working tree's bytes) is that very version, then read from `now`; `None` when the
/// tree has no such file.
fn version_at(
    tree: &gix::Tree<'_>,
    path: &str,
    now: Option<&[u8]>,
) -> Result<Option<(Option<String>, bool)>, GitError> {
    let Some(entry) = tree
        .lookup_entry_by_path(path)
        .map_err(read("a file of the baseline commit"))?
    else {
        return Ok(None);
    };
    if !entry.mode().is_blob() {
        return Ok(None);
    }
    let id = entry.oid().to_string();
    if let Some(now) = now.filter(|b| blob_id(b).as_deref() == Some(id.as_str())) {
        return Ok(Some((String::from_utf8(now.to_vec()).ok(), true)));
    }
    let blob = entry
        .object()
        .map_err(read("a file of the baseline commit"))?;
    Ok(Some((String::from_utf8(blob.detach().data).ok(), false)))
}

/// New path → old path, for the files git sees renamed between the tree and the index.
fn renamed_from(repo: &Repo, tree: ObjectId) -> Result<HashMap<String, String>, GitError> {
    let git = repo.gix();
    let index = git.index_or_empty().map_err(read("reading the index"))?;
    let mut renames = HashMap::new();
    git.tree_index_status(
        &tree,
        &index,
        None,
        gix::status::tree_index::TrackRenames::Given(gix::diff::Rewrites::default()),
        |change, _, _| {
            if let gix::diff::index::ChangeRef::Rewrite {
                source_location,
                location,
                copy: false,
                ..
            } = change
            {
                renames.insert(location.to_string(), source_location.to_string());
            }
            Ok(gix::diff::index::Action::Continue(()))
        },
    )
    .map_err(read("finding renamed files"))?;
    Ok(renames)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_and_modified_lines_count_deleted_ones_do_not() {
        let old = "a\nb\nc\nd\n";
        let new = "a\nB\nc\nnew\nd\n";
        assert_eq!(
            lines_changed(old, new).into_iter().collect::<Vec<_>>(),
            [2, 4]
        );
        assert!(lines_changed("a\nb\nc\n", "a\nc\n").is_empty());
        assert_eq!(
            lines_changed("", "x\ny").into_iter().collect::<Vec<_>>(),
            [1, 2]
        );
    }
}
