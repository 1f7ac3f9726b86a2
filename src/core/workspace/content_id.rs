//! A file's content identity: the id git gives its content, a blob id, the same on every machine
//! whatever its path, times or inode, so cache keys made of it can be shared between clones.
//!
//! A tracked file whose stat still matches its index entry has the index's id, taken without
//! reading the file. Not when the entry is racily clean (modified in the same timestamp tick as
//! the index was written), nor for entries git does not keep up to date (assume-unchanged,
//! skip-worktree, intent-to-add), nor for links: those files are read and hashed, as are
//! untracked ones and files outside a repository.

use std::path::Path;

use gix::index::entry::{Flags, Mode, Stat, stat};

use crate::core::platform;
use crate::core::scope::git::Repo;

/// The blob id of `bytes`, as git computes it (lower-case hex).
pub fn blob_id(bytes: &[u8]) -> Option<String> {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes)
        .ok()
        .map(|id| id.to_string())
}

/// The index of the repository holding a workspace, read once; empty outside a repository.
pub struct IndexIds {
    index: Option<gix::worktree::Index>,
    /// The workspace root relative to the working tree, with a trailing `/` (or empty).
    prefix: String,
}

/// Every stat field compared, to the nanosecond, whatever `core.trustctime` or `core.checkStat`
/// say: a stricter match only costs a read.
const STRICT: stat::Options = stat::Options {
    trust_ctime: true,
    check_stat: true,
    use_nsec: true,
    use_stdev: false,
};

impl IndexIds {
    pub fn open(root: &Path) -> IndexIds {
        let repo = Repo::discover(root).ok().flatten();
        let index = repo.as_ref().and_then(|r| r.gix().index_or_empty().ok());
        let prefix = repo.as_ref().map(|r| r.repo_path("")).unwrap_or_default();
        IndexIds { index, prefix }
    }

    /// The index's id of `rel` (relative to the workspace root, POSIX) when the file, whose
    /// stat the caller took (`meta`), is as the index recorded it; `None` when it must be read.
    pub fn blob_id(&self, rel: &str, meta: &std::fs::Metadata) -> Option<String> {
        let index = self.index.as_ref()?;
        let name = format!("{}{rel}", self.prefix);
        let entry = index.entry_by_path(name.as_str().into())?;
        let unkept = Flags::ASSUME_VALID | Flags::SKIP_WORKTREE | Flags::INTENT_TO_ADD;
        if !matches!(entry.mode, Mode::FILE | Mode::FILE_EXECUTABLE)
            || entry.flags.intersects(unkept)
            || !meta.is_file()
        {
            return None;
        }
        let now = stat_of(meta);
        (entry.stat.matches(&now, STRICT) && !entry.stat.is_racy(index.timestamp(), STRICT))
            .then(|| entry.id.to_string())
    }
}

/// The index's view of a stat, as `Stat::from_fs` makes it (times, inode and size truncated to
/// 32 bits as git does), from the stat the caller already has rather than a second one. The
/// device is left out: it is not compared (`STRICT.use_stdev`).
fn stat_of(meta: &std::fs::Metadata) -> Stat {
    let (mtime, mtime_ns, ctime, ctime_ns, inode) = platform::file_identity(meta);
    let (uid, gid) = platform::owner_ids(meta);
    let time = |secs: i64, nsecs: i64| stat::Time {
        secs: secs as u32,
        nsecs: nsecs as u32,
    };
    Stat {
        mtime: time(mtime, mtime_ns),
        ctime: time(ctime, ctime_ns),
        dev: 0,
        ino: inode as u32,
        uid,
        gid,
        size: meta.len() as u32,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `git` in `dir` with a fixed author, asserting it succeeds (shared by the engine's unit tests).
    pub(crate) fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    fn meta(path: &Path) -> std::fs::Metadata {
        std::fs::metadata(path).unwrap()
    }

    /// The stat made from the caller's is the one gix makes itself: an entry it wrote matches.
    #[test]
    fn the_stat_made_here_is_gixs() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.py");
        std::fs::write(&path, "x = 1\n").unwrap();
        let theirs =
            Stat::from_fs(&gix::index::fs::Metadata::from_path_no_follow(&path).unwrap()).unwrap();
        assert_eq!(stat_of(&meta(&path)), Stat { dev: 0, ..theirs });
    }

    #[test]
    fn the_blob_id_is_gits() {
        // `printf 'hello\n' | git hash-object --stdin`
        assert_eq!(
            blob_id(b"hello\n").unwrap(),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
    }

    #[test]
    fn an_index_entry_answers_only_while_the_file_is_as_recorded() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        git(root, &["init", "-q"]);
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.py"), "x = 1\n").unwrap();
        // Modified well before the index is written: not racy.
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(root.join("sub/a.py"))
            .unwrap()
            .set_modified(past)
            .unwrap();
        git(root, &["add", "."]);
        let expected = blob_id(b"x = 1\n");
        // Seen from the repository's root and from a workspace in its subfolder.
        let ids = IndexIds::open(root);
        assert_eq!(
            ids.blob_id("sub/a.py", &meta(&root.join("sub/a.py"))),
            expected
        );
        let sub = IndexIds::open(&root.join("sub"));
        assert_eq!(sub.blob_id("a.py", &meta(&root.join("sub/a.py"))), expected);
        // A name the index does not hold, whatever its stat.
        assert_eq!(ids.blob_id("sub/b.py", &meta(&root.join("sub/a.py"))), None);
        // A same-size rewrite changes the stat: the file must be read.
        std::fs::write(root.join("sub/a.py"), "x = 2\n").unwrap();
        assert_eq!(
            IndexIds::open(root).blob_id("sub/a.py", &meta(&root.join("sub/a.py"))),
            None
        );
    }

    #[test]
    fn a_file_stamped_at_or_after_the_index_is_racy_and_read() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        git(root, &["init", "-q"]);
        std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
        // Modified "after" the index was written: git's racy-clean rule says its stat proves
        // nothing, whatever it matches.
        let future = std::time::SystemTime::now() + std::time::Duration::from_secs(30);
        let file = std::fs::File::options()
            .write(true)
            .open(root.join("a.py"))
            .unwrap();
        file.set_modified(future).unwrap();
        git(root, &["add", "a.py"]);
        assert_eq!(
            IndexIds::open(root).blob_id("a.py", &meta(&root.join("a.py"))),
            None
        );
    }

    #[test]
    fn outside_a_repository_nothing_is_answered() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.py"), "x = 1\n").unwrap();
        let ids = IndexIds::open(tmp.path());
        assert_eq!(ids.blob_id("a.py", &meta(&tmp.path().join("a.py"))), None);
    }
}
