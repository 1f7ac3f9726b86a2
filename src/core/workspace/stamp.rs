//! A file's identity on disk (size, modification and change times, inode), so an unchanged file's
//! content hash can be reused without reading it again. Trusted only under git's racy-clean rule:
//! a file modified in the same timestamp tick as its hash was taken could be modified again in
//! that tick, keeping its stamp while changing its content; such a stamp is never recorded.

use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// How far a file's times must lie before our clock: file systems stamp times from a coarse
/// clock (a kernel tick on Linux, one or two seconds on FAT and some network mounts, whose clock
/// may also run apart).
pub const RACY_MARGIN: Duration = Duration::from_secs(2);

/// Serialized as an array to keep the cache file small: `[len, mtime s, mtime ns, ctime s,
/// ctime ns, inode]`. The change time moves on every write and cannot be set back by tools that
/// restore modification times (rsync, archive extraction), so a same-size rewrite is still seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp(u64, i64, i64, i64, i64, u64);

impl Stamp {
    pub fn of(meta: &Metadata) -> Stamp {
        let (mtime, mtime_nsec, ctime, ctime_nsec, inode) =
            crate::core::platform::file_identity(meta);
        Stamp(meta.len(), mtime, mtime_nsec, ctime, ctime_nsec, inode)
    }

    /// Whether a hash read after `reference` (`now - RACY_MARGIN` before the files were read)
    /// may be reused while the file keeps this stamp: both its times lie strictly before it.
    pub fn trustworthy(&self, reference: SystemTime) -> bool {
        let Ok(limit) = reference.duration_since(UNIX_EPOCH) else {
            return false;
        };
        let before = |secs: i64, nanos: i64| {
            u64::try_from(secs).is_ok_and(|s| {
                Duration::new(s, u32::try_from(nanos).unwrap_or(u32::MAX).min(999_999_999)) < limit
            })
        };
        before(self.1, self.2) && before(self.3, self.4)
    }
}

/// The reference a value's stamps must lie before (`Stamp::trustworthy`), read before the files
/// it is worked out from are read.
pub fn racy_reference() -> SystemTime {
    SystemTime::now() - RACY_MARGIN
}

/// A file's stamp now, following links; `None` when it is absent.
pub fn stamp_of(path: &Path) -> Option<Stamp> {
    std::fs::metadata(path).ok().map(|m| Stamp::of(&m))
}

/// A value worked out from files, with the stamps they had: the one way qgates remembers what
/// it read (a script's hash, what `init` detected, what git's index says) while those files
/// keep their stamps.
#[derive(Debug, Clone)]
pub struct Stamped<V> {
    value: V,
    stamps: Vec<(Option<Stamp>, PathBuf)>,
}

impl<V> Stamped<V> {
    /// `value`, worked out from `paths` after `reference` was read; `None` when one of them
    /// changed too recently to be trusted (it may change again without its stamp showing it).
    pub fn new(value: V, paths: Vec<PathBuf>, reference: SystemTime) -> Option<Stamped<V>> {
        let stamps: Vec<_> = paths.into_iter().map(|p| (stamp_of(&p), p)).collect();
        let trusted = stamps
            .iter()
            .all(|(s, _)| s.is_none_or(|s| s.trustworthy(reference)));
        trusted.then_some(Stamped { value, stamps })
    }

    /// The value, while every file keeps the stamp it had (an absent one stays absent).
    pub fn get(&self) -> Option<&V> {
        self.holds().then_some(&self.value)
    }

    /// The value to add to, once `holds` said it does (no second look at the files).
    pub fn value_mut(&mut self) -> &mut V {
        &mut self.value
    }

    /// Whether every file keeps the stamp it had.
    pub fn holds(&self) -> bool {
        self.stamps.iter().all(|(s, p)| stamp_of(p) == *s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_file_is_racy_and_an_old_one_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("a.py");
        std::fs::write(&p, "x = 1\n").unwrap();
        let stamp = Stamp::of(&std::fs::metadata(&p).unwrap());
        let now = SystemTime::now();
        assert!(!stamp.trustworthy(now - RACY_MARGIN));
        assert!(stamp.trustworthy(now + Duration::from_millis(50)));
    }

    #[test]
    fn a_stamped_value_holds_while_its_files_keep_their_stamps() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, gone) = (tmp.path().join("a.py"), tmp.path().join("gone.py"));
        std::fs::write(&a, "x = 1\n").unwrap();
        let now = SystemTime::now();
        let paths = vec![a.clone(), gone.clone()];
        assert!(
            Stamped::new(1, paths.clone(), now - RACY_MARGIN).is_none(),
            "a file written just now is not trusted"
        );
        let mut value = Stamped::new(1, paths, now + Duration::from_millis(50)).unwrap();
        assert_eq!(value.get(), Some(&1));
        assert!(value.holds());
        *value.value_mut() += 1;
        assert_eq!(value.get(), Some(&2));
        std::fs::write(&gone, "").unwrap();
        assert_eq!(value.get(), None, "an absent file that appears");
        std::fs::remove_file(&gone).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&a, "x = 2\n").unwrap();
        assert_eq!(value.get(), None, "a changed file");
    }

    #[test]
    fn a_same_size_rewrite_changes_the_stamp() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("a.py");
        std::fs::write(&p, "x = 1\n").unwrap();
        let before = Stamp::of(&std::fs::metadata(&p).unwrap());
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&p, "x = 2\n").unwrap();
        let after = Stamp::of(&std::fs::metadata(&p).unwrap());
        assert_ne!(before, after);
    }
}
