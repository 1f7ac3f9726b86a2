//! Configuration problems: each one knows its file, line and column and says how to fix it.

use std::fmt;
use std::path::{Path, PathBuf};

use super::limits::MAX_REPORTED_PROBLEMS;
use super::tree::{LazyTree, Pos};

/// One mistake in a configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    pub file: PathBuf,
    /// 1-based; 0 when the problem has no place in the file (e.g. it cannot be read).
    pub line: u32,
    /// 1-based, in characters.
    pub column: u32,
    /// What is wrong, then how to fix it, as sentences.
    pub message: String,
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Every problem found in one configuration file (at least one).
#[derive(Debug, Clone, thiserror::Error)]
pub struct ConfigError {
    pub problems: Vec<ConfigProblem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.problems.iter().map(ToString::to_string).collect();
        f.write_str(&lines.join("\n"))
    }
}

impl ConfigError {
    /// The error for `problems` (at least one), in the order given: the first
    /// `MAX_REPORTED_PROBLEMS`, then one line that says how many more there are.
    pub fn new(mut problems: Vec<ConfigProblem>) -> Self {
        if problems.len() > MAX_REPORTED_PROBLEMS {
            let more = problems.len() - MAX_REPORTED_PROBLEMS;
            problems.truncate(MAX_REPORTED_PROBLEMS);
            let file = problems[0].file.clone();
            problems.push(ConfigProblem {
                file,
                line: 0,
                column: 0,
                message: format!(
                    "and {more} more errors, not shown (only the first {MAX_REPORTED_PROBLEMS} are). Fix these and check again."
                ),
            });
        }
        ConfigError { problems }
    }

    pub fn single(file: PathBuf, line: u32, column: u32, message: impl Into<String>) -> Self {
        ConfigError {
            problems: vec![ConfigProblem {
                file,
                line,
                column,
                message: message.into(),
            }],
        }
    }
}

/// The problems found so far, and the means to place them.
pub(super) struct Problems<'a> {
    file: &'a Path,
    pub(super) tree: &'a LazyTree<'a>,
    list: Vec<ConfigProblem>,
    /// Where a problem with a value that has no place of its own is reported: a default's, or
    /// one a preset gives (the gate that names the preset).
    pub(super) fallback: Pos,
}

impl<'a> Problems<'a> {
    pub(super) fn new(file: &'a Path, tree: &'a LazyTree<'a>) -> Self {
        Problems {
            file,
            tree,
            list: Vec::new(),
            fallback: Pos { line: 1, column: 1 },
        }
    }

    /// Records a problem at `pos`; a value without a place falls back to `fallback`.
    pub(super) fn at(&mut self, pos: impl Into<Pos>, message: impl Into<String>) {
        let pos = Some(pos.into())
            .filter(|p| p.is_known())
            .unwrap_or(self.fallback);
        self.list.push(ConfigProblem {
            file: self.file.to_path_buf(),
            line: pos.line,
            column: pos.column,
            message: message.into(),
        });
    }

    /// The place of the key at `path` or of its nearest parent inside the gate, else `fallback`
    /// when set (the gate, or its preset), else the gate's, else the file's start.
    pub(super) fn key(&self, path: &[&str]) -> Pos {
        let start = Pos { line: 1, column: 1 };
        (3..=path.len())
            .rev()
            .find_map(|n| self.tree.key(&path[..n]))
            .or_else(|| Some(self.fallback).filter(|f| *f != start))
            .or_else(|| path.get(..2).and_then(|gate| self.tree.key(gate)))
            .unwrap_or(start)
    }

    /// The place of the first item of the list at `path` that reads `text`, else of the list.
    pub(super) fn item(&self, path: &[&str], text: &str) -> Pos {
        self.tree
            .item(path, text)
            .unwrap_or_else(|| self.value(path))
    }

    /// The place of the value at `path`, else of its key (see `key`).
    pub(super) fn value(&self, path: &[&str]) -> Pos {
        self.tree
            .value(path)
            .filter(|p| p.is_known())
            .unwrap_or_else(|| self.key(path))
    }

    /// How many problems there are, to tell whether a step added any.
    pub(super) fn count(&self) -> usize {
        self.list.len()
    }

    pub(super) fn into_result<T>(mut self, value: T) -> Result<T, ConfigError> {
        if self.list.is_empty() {
            return Ok(value);
        }
        // Stable, so two problems at one place keep the order they were found in.
        self.list.sort_by_key(|x| (x.line, x.column));
        Err(ConfigError::new(self.list))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_limit_one_line_says_how_many_more_there_are() {
        let problem = |line| ConfigProblem {
            file: "quality.yaml".into(),
            line,
            column: 1,
            message: "bad".into(),
        };
        let all: Vec<ConfigProblem> = (1..=250).map(problem).collect();
        let e = ConfigError::new(all.clone());
        assert_eq!(e.problems.len(), MAX_REPORTED_PROBLEMS + 1);
        assert_eq!(
            e.problems[..MAX_REPORTED_PROBLEMS],
            all[..MAX_REPORTED_PROBLEMS]
        );
        let last = e.problems.last().unwrap();
        assert_eq!(last.line, 0);
        assert!(last.message.starts_with("and 150 more errors"), "{last}");
        let few = ConfigError::new(all[..MAX_REPORTED_PROBLEMS].to_vec());
        assert_eq!(few.problems, all[..MAX_REPORTED_PROBLEMS]);
    }
}
