//! Git change detection for the `auto` and `branch` scopes, each case on a real repository made with
//! the `git` CLI in a temporary folder.

use crate::common;

use std::path::{Path, PathBuf};

use common::{git, git_cmd};
use qgates::core::scope::git::{GitError, ParentBase, Repo};
use tempfile::TempDir;

/// Like `git` but the command may fail (a merge that stops on a conflict).
fn git_may_fail(dir: &Path, args: &[&str]) {
    git_cmd(dir, args).output().expect("run git");
}

struct TestRepo {
    _tmp: TempDir,
    dir: PathBuf,
}

impl TestRepo {
    /// A repository on branch `branch` with no commit.
    fn empty_on(branch: &str) -> TestRepo {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("repo");
        std::fs::create_dir(&dir).expect("mkdir");
        git(&dir, &["init", "-q", "-b", branch]);
        configure(&dir);
        TestRepo { _tmp: tmp, dir }
    }

    /// A repository on `main` with one commit holding `a.py`, `b.py`, `pkg/c.py` and a
    /// `.gitignore` that ignores `build/` and `*.log`.
    fn new() -> TestRepo {
        let r = TestRepo::empty_on("main");
        r.write("a.py", "a = 1\n");
        r.write("b.py", "b = 1\n");
        r.write("pkg/c.py", "c = 1\n");
        r.write(".gitignore", "build/\n*.log\n");
        r.commit_all("initial");
        r
    }

    fn write(&self, rel: &str, content: &str) {
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, content).expect("write");
    }

    fn git(&self, args: &[&str]) -> String {
        git(&self.dir, args)
    }

    fn commit_all(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
        self.git(&["rev-parse", "HEAD"])
    }

    fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"])
    }

    fn open(&self) -> Repo {
        open(&self.dir)
    }
}

fn configure(dir: &Path) {
    git(dir, &["config", "user.name", "Test"]);
    git(dir, &["config", "user.email", "test@example.com"]);
    git(dir, &["config", "commit.gpgsign", "false"]);
}

fn open(dir: &Path) -> Repo {
    Repo::discover(dir)
        .expect("discover")
        .expect("a repository")
}

fn changed(repo: &Repo, base: &str) -> Vec<String> {
    repo.changed_since(Some(base)).expect("changed_since").files
}

#[test]
fn nothing_changed_is_empty_and_head_is_read() {
    let r = TestRepo::new();
    let repo = r.open();
    assert_eq!(repo.head_sha(), Some(r.head()));
    assert_eq!(repo.branch_name().as_deref(), Some("main"));
    let changes = repo.changed_since(Some(&r.head())).expect("changes");
    assert!(changes.files.is_empty(), "{:?}", changes.files);
    assert!(changes.notes.is_empty(), "{:?}", changes.notes);
}

#[test]
fn files_committed_since_the_baseline() {
    let r = TestRepo::new();
    let base = r.head();
    r.write("a.py", "a = 2\n");
    r.commit_all("change a");
    r.write("new.py", "n = 1\n");
    r.commit_all("add new");
    assert_eq!(changed(&r.open(), &base), ["a.py", "new.py"]);
}

#[test]
fn staged_files() {
    let r = TestRepo::new();
    let base = r.head();
    r.write("b.py", "b = 2\n");
    r.write("staged_new.py", "s = 1\n");
    r.git(&["add", "b.py", "staged_new.py"]);
    assert_eq!(changed(&r.open(), &base), ["b.py", "staged_new.py"]);
}

#[test]
fn unstaged_files() {
    let r = TestRepo::new();
    let base = r.head();
    r.write("pkg/c.py", "c = 2\n");
    assert_eq!(changed(&r.open(), &base), ["pkg/c.py"]);
}

#[test]
fn untracked_files_also_in_new_folders() {
    let r = TestRepo::new();
    let base = r.head();
    r.write("u.py", "u = 1\n");
    r.write("deep/er/v.py", "v = 1\n");
    assert_eq!(changed(&r.open(), &base), ["deep/er/v.py", "u.py"]);
}

#[test]
fn ignored_files_are_left_out() {
    let r = TestRepo::new();
    let base = r.head();
    r.write("build/out.py", "o = 1\n");
    r.write("debug.log", "x\n");
    r.write("pkg/trace.log", "x\n");
    r.write("kept.py", "k = 1\n");
    assert_eq!(changed(&r.open(), &base), ["kept.py"]);
}

#[test]
fn renamed_files_appear_under_their_new_name_only() {
    let r = TestRepo::new();
    let base = r.head();
    // Committed rename, staged rename (`git mv`), and a rename not yet staged.
    r.git(&["mv", "a.py", "a_renamed.py"]);
    r.commit_all("rename a");
    r.git(&["mv", "b.py", "b_renamed.py"]);
    std::fs::rename(r.dir.join("pkg/c.py"), r.dir.join("pkg/c_renamed.py")).expect("rename");
    assert_eq!(
        changed(&r.open(), &base),
        ["a_renamed.py", "b_renamed.py", "pkg/c_renamed.py"]
    );
}

#[test]
fn deleted_files_are_left_out() {
    let r = TestRepo::new();
    let base = r.head();
    // Deleted in a commit, deleted and staged, and changed in a commit then deleted unstaged.
    r.git(&["rm", "-q", "a.py"]);
    r.write("pkg/c.py", "c = 2\n");
    r.commit_all("drop a, change c");
    r.git(&["rm", "-q", "b.py"]);
    std::fs::remove_file(r.dir.join("pkg/c.py")).expect("rm");
    assert_eq!(changed(&r.open(), &base), Vec::<String>::new());
}

// The index's cache tree lets an index that is exactly the base tree skip the comparison of the
// two: each way of leaving a valid cache tree that is not the base's, or an index the cache tree
// does not fully describe, must still be compared.

#[test]
fn an_index_read_from_another_tree_is_compared_with_the_base() {
    let r = TestRepo::new();
    r.write("a.py", "a = 2\n");
    r.write("added.py", "x = 1\n");
    let base = r.commit_all("change a, add added");
    // `read-tree` writes a valid cache tree, of the older commit: the index now differs from
    // the base by a.py (back to its old content) and added.py (gone from the index).
    r.git(&["read-tree", "HEAD~1"]);
    assert_eq!(changed(&r.open(), &base), ["a.py", "added.py"]);
}

#[test]
fn a_staged_change_after_the_commit_is_found_at_the_base() {
    let r = TestRepo::new();
    let base = r.head();
    r.write("pkg/c.py", "c = 2\n");
    r.git(&["add", "pkg/c.py"]);
    // And back, unstaged: only the index differs from the base now.
    r.write("pkg/c.py", "c = 1\n");
    assert_eq!(changed(&r.open(), &base), ["pkg/c.py"]);
}

#[test]
fn an_intent_to_add_file_is_in_scope_after_a_commit() {
    let r = TestRepo::new();
    r.write("later.py", "l = 1\n");
    r.git(&["add", "-N", "later.py"]);
    r.write("b.py", "b = 2\n");
    r.git(&["add", "b.py"]);
    // The commit leaves later.py out of the tree and rebuilds the cache tree without it.
    r.git(&["commit", "-q", "-m", "change b"]);
    let base = r.head();
    assert_eq!(changed(&r.open(), &base), ["later.py"]);
}

#[test]
fn a_repository_larger_than_one_thread_handles() {
    // Over 500 entries the stat may be split across threads (git's rule, given the cores); the
    // result is the same.
    let r = TestRepo::empty_on("main");
    for i in 0..1_200 {
        r.write(
            &format!("d{:02}/f{i:04}.py", i / 100),
            &format!("v = {i}\n"),
        );
    }
    let base = r.commit_all("many");
    r.write("d03/f0333.py", "v = 'changed'\n");
    r.write("d11/f1199.py", "v = 'changed'\n");
    r.write("d05/new.py", "n = 1\n");
    r.git(&["add", "d11/f1199.py"]);
    assert_eq!(
        changed(&r.open(), &base),
        ["d03/f0333.py", "d05/new.py", "d11/f1199.py"]
    );
}

#[test]
fn a_file_staged_for_deletion_but_present_again_is_in_scope() {
    let r = TestRepo::new();
    let base = r.head();
    r.git(&["rm", "-q", "--cached", "a.py"]);
    assert_eq!(changed(&r.open(), &base), ["a.py"]);
}

#[test]
fn names_with_spaces_and_non_ascii_letters() {
    let r = TestRepo::new();
    let base = r.head();
    r.write("src/café ü.py", "x = 1\n");
    r.commit_all("add café");
    r.write("src/naïve file.py", "y = 1\n");
    r.write("日本/名前.py", "z = 1\n");
    assert_eq!(
        changed(&r.open(), &base),
        ["src/café ü.py", "src/naïve file.py", "日本/名前.py"]
    );
}

#[test]
fn detached_head_is_noted_and_still_works() {
    let r = TestRepo::new();
    let base = r.head();
    r.write("a.py", "a = 2\n");
    let second = r.commit_all("change a");
    r.git(&["checkout", "-q", "--detach", &second]);
    r.write("u.py", "u = 1\n");
    let repo = r.open();
    assert_eq!(repo.branch_name(), None);
    assert_eq!(repo.head_sha(), Some(second));
    let changes = repo.changed_since(Some(&base)).expect("changes");
    assert_eq!(changes.files, ["a.py", "u.py"]);
    assert!(
        changes.notes.iter().any(|n| n.contains("detached")),
        "{:?}",
        changes.notes
    );
}

#[test]
fn a_repository_with_no_commit_yet() {
    let r = TestRepo::empty_on("trunk");
    r.write(".gitignore", "*.log\n");
    r.write("staged.py", "s = 1\n");
    r.git(&["add", "staged.py"]);
    r.write("untracked.py", "u = 1\n");
    r.write("x.log", "x\n");
    let repo = r.open();
    assert_eq!(repo.head_sha(), None);
    assert_eq!(repo.branch_name().as_deref(), Some("trunk"));
    assert_eq!(repo.parent_branch_base(None).expect("parent"), None);
    assert!(!repo.is_ancestor_of_head("0123456789012345678901234567890123456789"));
    let changes = repo.changed_since(None).expect("changes");
    assert_eq!(changes.files, [".gitignore", "staged.py", "untracked.py"]);
}

#[test]
fn a_baseline_reset_away_is_no_longer_an_ancestor() {
    let r = TestRepo::new();
    let first = r.head();
    r.write("a.py", "a = 2\n");
    let gone = r.commit_all("to be reset away");
    let repo = r.open();
    assert!(repo.is_ancestor_of_head(&first));
    assert!(repo.is_ancestor_of_head(&gone));
    r.git(&["reset", "-q", "--hard", "HEAD~1"]);
    let repo = r.open();
    assert!(!repo.is_ancestor_of_head(&gone));
    assert!(repo.is_ancestor_of_head(&first));
    // Not a commit at all, or not hexadecimal.
    assert!(!repo.is_ancestor_of_head("0123456789012345678901234567890123456789"));
    assert!(!repo.is_ancestor_of_head("not-a-sha"));
    // A commit that no longer exists is an error from changed_since, not an empty scope.
    let missing = repo.changed_since(Some("0123456789012345678901234567890123456789"));
    assert!(
        matches!(missing, Err(GitError::UnknownCommit(_))),
        "{missing:?}"
    );
}

#[test]
fn a_baseline_rebased_away_is_no_longer_an_ancestor() {
    let r = TestRepo::new();
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write("f.py", "f = 1\n");
    let before_rebase = r.commit_all("feature work");
    r.git(&["checkout", "-q", "main"]);
    r.write("m.py", "m = 1\n");
    r.commit_all("main moves on");
    r.git(&["checkout", "-q", "feature"]);
    r.git(&["rebase", "-q", "main"]);
    let repo = r.open();
    assert_ne!(repo.head_sha().as_deref(), Some(before_rebase.as_str()));
    assert!(!repo.is_ancestor_of_head(&before_rebase));
}

#[test]
fn parent_branch_from_the_remote_default_branch() {
    let r = TestRepo::new();
    let tmp = tempfile::tempdir().expect("tempdir");
    let remote = tmp.path().join("remote.git");
    git(
        tmp.path(),
        &["init", "-q", "--bare", "-b", "develop", "remote.git"],
    );
    let remote_url = remote.to_str().expect("utf-8 temp path");
    // The remote's default branch is `develop`, not `main`: that must win over the local `main`.
    r.git(&["branch", "develop"]);
    r.git(&["remote", "add", "origin", remote_url]);
    r.git(&["push", "-q", "origin", "develop", "main"]);
    r.git(&["remote", "set-head", "origin", "-a"]);
    // develop moves on, so its merge-base with main differs from the tip of main.
    r.git(&["checkout", "-q", "develop"]);
    r.write("d.py", "d = 1\n");
    let develop_tip = r.commit_all("develop work");
    r.git(&["push", "-q", "origin", "develop"]);
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write("f.py", "f = 1\n");
    r.commit_all("feature work");

    let repo = r.open();
    let base = repo.parent_branch_base(None).expect("parent");
    assert_eq!(
        base,
        Some(ParentBase {
            name: "origin/develop".to_owned(),
            sha: develop_tip,
        })
    );
}

#[test]
fn parent_branch_main_is_the_merge_base() {
    let r = TestRepo::new();
    let fork = r.head();
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write("f.py", "f = 1\n");
    r.commit_all("feature work");
    r.git(&["checkout", "-q", "main"]);
    r.write("m.py", "m = 1\n");
    r.commit_all("main moves on");
    r.git(&["checkout", "-q", "feature"]);
    r.write("wip.py", "w = 1\n");

    let repo = r.open();
    let base = repo
        .parent_branch_base(None)
        .expect("parent")
        .expect("base");
    assert_eq!(base.name, "main");
    assert_eq!(base.sha, fork);
    // The branch scope: the branch's commits and the working tree, not main's later commit.
    assert_eq!(changed(&repo, &base.sha), ["f.py", "wip.py"]);
}

#[test]
fn parent_branch_master() {
    let r = TestRepo::empty_on("master");
    r.write("a.py", "a = 1\n");
    let fork = r.commit_all("initial");
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write("f.py", "f = 1\n");
    r.commit_all("feature work");
    let base = r.open().parent_branch_base(None).expect("parent");
    assert_eq!(
        base,
        Some(ParentBase {
            name: "master".to_owned(),
            sha: fork,
        })
    );
}

#[test]
fn parent_branch_only_on_the_remote() {
    // A CI checkout: the feature branch locally, `main` only as origin/main, no origin/HEAD.
    let r = TestRepo::new();
    let fork = r.head();
    r.git(&["update-ref", "refs/remotes/origin/main", &fork]);
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.git(&["branch", "-q", "-D", "main"]);
    r.write("f.py", "f = 1\n");
    r.commit_all("feature work");
    let base = r.open().parent_branch_base(None).expect("parent");
    assert_eq!(
        base,
        Some(ParentBase {
            name: "origin/main".to_owned(),
            sha: fork,
        })
    );
}

#[test]
fn parent_branch_from_configuration() {
    let r = TestRepo::new();
    r.git(&["checkout", "-q", "-b", "release"]);
    r.write("r.py", "r = 1\n");
    let release_fork = r.commit_all("release work");
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write("f.py", "f = 1\n");
    r.commit_all("feature work");

    let repo = r.open();
    // Without configuration, main wins.
    let default = repo
        .parent_branch_base(None)
        .expect("parent")
        .expect("base");
    assert_eq!(default.name, "main");
    let configured = repo
        .parent_branch_base(Some("release"))
        .expect("parent")
        .expect("base");
    assert_eq!(
        configured,
        ParentBase {
            name: "release".to_owned(),
            sha: release_fork,
        }
    );
    let unknown = repo.parent_branch_base(Some("no-such-branch"));
    assert!(
        matches!(unknown, Err(GitError::UnknownParentBranch(ref n)) if n == "no-such-branch"),
        "{unknown:?}"
    );
}

#[test]
fn no_parent_branch_when_none_exists() {
    let r = TestRepo::empty_on("trunk");
    r.write("a.py", "a = 1\n");
    r.commit_all("initial");
    assert_eq!(r.open().parent_branch_base(None).expect("parent"), None);
}

#[test]
fn a_folder_that_is_not_a_repository() {
    let tmp = tempfile::tempdir().expect("tempdir");
    assert!(Repo::discover(tmp.path()).expect("discover").is_none());
}

#[test]
fn a_merge_in_progress_is_noted_and_conflicts_are_in_scope() {
    let r = TestRepo::new();
    let base = r.head();
    r.git(&["checkout", "-q", "-b", "other"]);
    r.write("a.py", "a = 'other'\n");
    r.commit_all("other side");
    r.git(&["checkout", "-q", "main"]);
    r.write("a.py", "a = 'main'\n");
    r.commit_all("main side");
    git_may_fail(&r.dir, &["merge", "-q", "other"]);
    assert!(
        r.dir.join(".git/MERGE_HEAD").exists(),
        "the merge should stop"
    );

    let changes = r.open().changed_since(Some(&base)).expect("changes");
    assert_eq!(changes.files, ["a.py"]);
    assert!(
        changes.notes.iter().any(|n| n.contains("merge")),
        "{:?}",
        changes.notes
    );
}

#[test]
fn a_shallow_clone_is_noted() {
    let r = TestRepo::new();
    let first = r.head();
    r.write("a.py", "a = 2\n");
    r.commit_all("second");
    let tmp = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}", r.dir.display());
    git(tmp.path(), &["clone", "-q", "--depth", "1", &url, "clone"]);
    let clone = tmp.path().join("clone");
    configure(&clone);
    std::fs::write(clone.join("b.py"), "b = 2\n").expect("write");

    let repo = open(&clone);
    // The first commit is beyond the clone's depth.
    assert!(!repo.is_ancestor_of_head(&first));
    let head = repo.head_sha().expect("head");
    let changes = repo.changed_since(Some(&head)).expect("changes");
    assert_eq!(changes.files, ["b.py"]);
    assert!(
        changes.notes.iter().any(|n| n.contains("shallow")),
        "{:?}",
        changes.notes
    );
}

#[test]
fn a_workspace_root_in_a_subfolder_sees_only_its_own_files() {
    let r = TestRepo::new();
    let base = r.head();
    r.write("pkg/c.py", "c = 2\n");
    r.write("pkg/sub/d.py", "d = 1\n");
    r.write("pkgother/e.py", "e = 1\n");
    r.write("a.py", "a = 2\n");

    let repo = open(&r.dir.join("pkg"));
    assert_eq!(repo.head_sha(), Some(base.clone()));
    assert_eq!(changed(&repo, &base), ["c.py", "sub/d.py"]);
    // A root given through `..` names the same folder.
    let repo = open(&r.dir.join("pkg/sub/.."));
    assert_eq!(changed(&repo, &base), ["c.py", "sub/d.py"]);
}

#[test]
fn a_workspace_root_with_a_wildcard_in_its_name() {
    let r = TestRepo::new();
    let base = r.head();
    r.write("we[ir]d*/x.py", "x = 1\n");
    r.write("weird/y.py", "y = 1\n");
    let repo = open(&r.dir.join("we[ir]d*"));
    assert_eq!(changed(&repo, &base), ["x.py"]);
}

#[test]
fn submodules_are_not_entered() {
    let inner = TestRepo::new();
    let r = TestRepo::new();
    let base = r.head();
    let url = format!("file://{}", inner.dir.display());
    r.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        &url,
        "vendor/inner",
    ]);
    r.commit_all("add submodule");
    std::fs::write(r.dir.join("vendor/inner/a.py"), "a = 3\n").expect("write");
    std::fs::write(r.dir.join("vendor/inner/new.py"), "n = 3\n").expect("write");
    assert_eq!(changed(&r.open(), &base), [".gitmodules"]);
}
