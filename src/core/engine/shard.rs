//! One machine's share of a run that a CI matrix splits (`qgates check --shard i/n`), and what its
//! report records so that `qgates merge` can check the shards belong together (docs/ci.md,
//! "Shards"). The split depends only on the resolved file list and the files' sizes, so every
//! machine computes the same one: the files, largest first, are dealt in snake order (1, 2, …,
//! n, n, …, 2, 1, …) so sizes even out. A gate without file arguments runs in shard 1 only; a
//! `deps` gate runs in every shard (the others need what it installs), counted in shard 1.

use std::cmp::Reverse;
use std::collections::HashSet;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use crate::core::config::{Config, Gate, GateKind};
use crate::core::scope::git::Repo;

/// Shard `index` of `count`, 1-based: `1/4` … `4/4`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

/// What is wrong with a shard written as text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardSpecError {
    #[error("`{0}` has no `/`")]
    NoSlash(String),
    #[error("`{0}` is not a whole number")]
    NotANumber(String),
    #[error("there must be at least one shard")]
    NoShards,
    #[error("shards count from 1")]
    Zero,
    #[error("shard {index} is past the last one, {count}")]
    PastTheEnd { index: usize, count: usize },
}

impl FromStr for Shard {
    type Err = ShardSpecError;

    fn from_str(s: &str) -> Result<Shard, ShardSpecError> {
        let (index, count) = s
            .split_once('/')
            .ok_or_else(|| ShardSpecError::NoSlash(s.to_string()))?;
        let number = |n: &str| {
            n.trim()
                .parse::<usize>()
                .map_err(|_| ShardSpecError::NotANumber(n.to_string()))
        };
        let (index, count) = (number(index)?, number(count)?);
        match (index, count) {
            (_, 0) => Err(ShardSpecError::NoShards),
            (0, _) => Err(ShardSpecError::Zero),
            (i, n) if i > n => Err(ShardSpecError::PastTheEnd { index: i, count: n }),
            (index, count) => Ok(Shard { index, count }),
        }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of {}", self.index, self.count)
    }
}

/// Deals files to `count` shards: returns each file's shard, 0-based, in the order given.
/// `files` are (path, size); sorted by size, largest first (ties by path, so the order is total
/// for distinct paths), and dealt in snake order.
pub fn deal(files: &[(&str, u64)], count: usize) -> Vec<usize> {
    let count = count.max(1);
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| (Reverse(files[i].1), files[i].0));
    let mut shard_of = vec![0; files.len()];
    for (rank, &i) in order.iter().enumerate() {
        let (round, seat) = (rank / count, rank % count);
        shard_of[i] = if round % 2 == 0 {
            seat
        } else {
            count - 1 - seat
        };
    }
    shard_of
}

/// The files of `files` (path, size) that fall to `shard`, in the order given: what one machine
/// of the matrix computes on its own, from the same list in any order.
pub fn part<'a>(files: &[(&'a str, u64)], shard: Shard) -> Vec<&'a str> {
    deal(files, shard.count)
        .into_iter()
        .zip(files)
        .filter(|(s, _)| s + 1 == shard.index)
        .map(|(_, (f, _))| *f)
        .collect()
}

use crate::core::report::parts::{NONE_HERE, RUNS_IN_FIRST};
pub use crate::core::report::{ShardInfo, is_elsewhere};

/// A gate's part in one shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateShare<'a> {
    /// Run the gate over these files. `counted` is false when another shard counts them (a
    /// `deps` gate without file arguments, which every shard runs).
    Run {
        files: Vec<&'a String>,
        counted: bool,
    },
    /// Another shard runs the gate, or holds all its files: it is skipped with this reason.
    Elsewhere(String),
}

/// One shard of a resolved scope.
#[derive(Debug, Clone)]
pub struct ShardPlan {
    pub shard: Shard,
    part: HashSet<String>,
    total: usize,
}

impl ShardPlan {
    /// The files of `files` (root-relative, as the scope resolved them) that fall to `shard`.
    /// A file's size is its own (a link's is that of the path it holds, as git stores it), so
    /// two checkouts of one commit split alike; a file that cannot be read counts as empty.
    pub fn new(root: &Path, shard: Shard, files: &[String]) -> ShardPlan {
        let sized: Vec<(&str, u64)> = files
            .iter()
            .map(|f| {
                let size = std::fs::symlink_metadata(root.join(f)).map_or(0, |m| m.len());
                (f.as_str(), size)
            })
            .collect();
        let part = part(&sized, shard).into_iter().map(str::to_owned).collect();
        ShardPlan {
            shard,
            part,
            total: files.len(),
        }
    }

    /// Whether `file` falls to this shard.
    pub fn holds(&self, file: &str) -> bool {
        self.part.contains(file)
    }

    /// How many files fall to this shard.
    pub fn len(&self) -> usize {
        self.part.len()
    }

    pub fn is_empty(&self) -> bool {
        self.part.is_empty()
    }

    /// What `gate` does in this shard, given its files in the whole scope.
    pub fn share<'a>(&self, gate: &Gate, files: &[&'a String]) -> GateShare<'a> {
        let first = self.shard.index == 1;
        if !gate.pass_files && (first || gate.kind == GateKind::Deps) {
            return GateShare::Run {
                files: files.to_vec(),
                counted: first,
            };
        }
        if !gate.pass_files {
            return GateShare::Elsewhere(format!(
                "{RUNS_IN_FIRST}{} (it takes no file arguments: one run checks them all)",
                self.shard.count
            ));
        }
        let own: Vec<&String> = files.iter().copied().filter(|f| self.holds(f)).collect();
        if own.is_empty() {
            return GateShare::Elsewhere(format!("{NONE_HERE}{}", self.shard));
        }
        GateShare::Run {
            files: own,
            counted: true,
        }
    }

    /// What the report records: the shard, the configuration, HEAD's commit in `root`, and the
    /// whole scope's size.
    pub fn info(&self, config: &Config, root: &Path) -> ShardInfo {
        let commit = Repo::discover(root)
            .ok()
            .flatten()
            .and_then(|r| r.head_sha());
        let fix_hints = config
            .gates
            .iter()
            .filter_map(|g| {
                let hint = g.fix_hint.as_ref()?;
                (hint.contains("{file}") || hint.contains("{files}"))
                    .then(|| (g.id.clone(), hint.clone()))
            })
            .collect();
        ShardInfo {
            index: self.shard.index,
            count: self.shard.count,
            config_hash: config.content_hash.clone(),
            commit,
            files_total: self.total,
            fix_hints,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert_eq!("2/4".parse(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!("1/1".parse(), Ok(Shard { index: 1, count: 1 }));
        assert_eq!(
            "5/4".parse::<Shard>(),
            Err(ShardSpecError::PastTheEnd { index: 5, count: 4 })
        );
        assert_eq!("0/3".parse::<Shard>(), Err(ShardSpecError::Zero));
        assert_eq!("1/0".parse::<Shard>(), Err(ShardSpecError::NoShards));
        assert_eq!(
            "a/b".parse::<Shard>(),
            Err(ShardSpecError::NotANumber("a".into()))
        );
        assert_eq!(
            "3".parse::<Shard>(),
            Err(ShardSpecError::NoSlash("3".into()))
        );
        assert_eq!(
            "-1/4".parse::<Shard>(),
            Err(ShardSpecError::NotANumber("-1".into()))
        );
    }

    #[test]
    fn dealt_largest_first_in_snake_order() {
        // Sizes 9 8 7 6 5 4 3 over 3 shards: 9→1 8→2 7→3, 6→3 5→2 4→1, 3→1.
        let files = [
            ("g", 3),
            ("a", 9),
            ("c", 7),
            ("b", 8),
            ("e", 5),
            ("d", 6),
            ("f", 4),
        ];
        assert_eq!(deal(&files, 3), vec![0, 0, 2, 1, 1, 2, 0]);
        // Equal sizes go by path, so the order of the list does not matter.
        let a = deal(&[("x", 1), ("y", 1)], 2);
        let b = deal(&[("y", 1), ("x", 1)], 2);
        assert_eq!(a, vec![0, 1]);
        assert_eq!(b, vec![1, 0]);
    }

    #[test]
    fn sizes_even_out() {
        // 100 files of sizes 1..=100 over 4 shards: each gets 25 files and 1261 to 1264 bytes
        // (5050 / 4 = 1262.5), where dealing round-robin would give the first shard 1300 and the
        // last 1225.
        let names: Vec<String> = (1..=100).map(|i| format!("f{i:03}")).collect();
        let files: Vec<(&str, u64)> = names
            .iter()
            .zip(1u64..)
            .map(|(n, s)| (n.as_str(), s))
            .collect();
        let shards = deal(&files, 4);
        for s in 0..4 {
            let (count, bytes) = files
                .iter()
                .zip(&shards)
                .filter(|(_, x)| **x == s)
                .fold((0, 0), |(c, b), ((_, size), _)| (c + 1, b + size));
            assert_eq!(count, 25);
            assert!((1261..=1264).contains(&bytes), "shard {s}: {bytes}");
        }
    }
}
