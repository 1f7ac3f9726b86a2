//! Configuration problems: each one knows its file, line and column and says how to fix it.

use std::fmt;
use std::path::PathBuf;

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
        if self.line == 0 {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file.display(),
                self.line,
                self.column,
                self.message
            )
        }
    }
}

/// Every problem found in one configuration file (at least one).
#[derive(Debug, Clone, thiserror::Error)]
pub struct ConfigError {
    pub problems: Vec<ConfigProblem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl ConfigError {
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
