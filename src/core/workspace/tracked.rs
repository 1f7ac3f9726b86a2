//! Whether git tracks a file of the workspace, asked before every run (a tracked `.qgates/` state
//! or cache is not believed; a tracked program is trusted by content). Reading the index on every
//! save would cost what a `git status` costs, so each workspace's repository is opened once and
//! its answers are kept while the index file keeps its `Stamp`.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::core::scope::git::Repo;
use crate::core::workspace::stamp::{Stamped, racy_reference};

/// A workspace's repository, and what its index answered while it kept its stamp.
struct Known {
    repo: Repo,
    answers: Option<Stamped<HashMap<String, bool>>>,
}

static REPOS: Mutex<Option<HashMap<PathBuf, Known>>> = Mutex::new(None);

/// Whether git tracks `rel` (relative to `root`, POSIX); false outside a repository.
pub fn tracks(root: &Path, rel: &str) -> bool {
    let mut repos = REPOS.lock().unwrap_or_else(PoisonError::into_inner);
    let repos = repos.get_or_insert_with(HashMap::new);
    let known = match repos.entry(root.to_path_buf()) {
        Entry::Occupied(known) => known.into_mut(),
        Entry::Vacant(entry) => {
            // Not remembered when there is none: a `git init` later is seen.
            let Some(repo) = Repo::discover(root).ok().flatten() else {
                return false;
            };
            entry.insert(Known {
                repo,
                answers: None,
            })
        }
    };
    // One look at the index per question: its stamp either still holds, or is taken anew.
    if !known.answers.as_ref().is_some_and(Stamped::holds) {
        // A racy stamp (an index written within the file system's tick) keeps nothing.
        let index = known.repo.index_path().to_path_buf();
        known.answers = Stamped::new(HashMap::new(), vec![index], racy_reference());
    }
    let Some(answers) = known.answers.as_mut().map(Stamped::value_mut) else {
        return known.repo.tracks(rel);
    };
    *answers
        .entry(rel.to_string())
        .or_insert_with(|| known.repo.tracks(rel))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::core::workspace::content_id::tests::git;

    #[test]
    fn answers_follow_the_index() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        assert!(!tracks(root, "a.sh"), "no repository yet");
        git(root, &["init", "-q"]);
        std::fs::write(root.join("a.sh"), "echo\n").unwrap();
        assert!(!tracks(root, "a.sh"));
        git(root, &["add", "a.sh"]);
        assert!(tracks(root, "a.sh"));
        git(root, &["rm", "-q", "--cached", "a.sh"]);
        assert!(!tracks(root, "a.sh"));
    }
}
