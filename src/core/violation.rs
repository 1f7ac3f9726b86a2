//! The normalized violation every parser produces and every face consumes.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// How serious a violation is. Ordered from most to least serious.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    #[default]
    Error,
    Warning,
    Info,
    Hint,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Hint => "hint",
        }
    }

    /// Reads the words tools commonly print for a severity (`E`, `warn`, `note`, `CRITICAL`…).
    /// Returns `None` for a word it does not know, so the caller can fall back to the gate default.
    pub fn from_tool_word(word: &str) -> Option<Severity> {
        let w = word.trim().to_ascii_lowercase();
        Some(match w.as_str() {
            "error" | "err" | "e" | "fatal" | "critical" | "high" | "blocker" | "major" => {
                Severity::Error
            }
            "warning" | "warn" | "w" | "medium" | "moderate" => Severity::Warning,
            "info" | "information" | "note" | "i" | "low" | "minor" | "notice" => Severity::Info,
            "hint" | "suggestion" | "style" | "h" | "none" => Severity::Hint,
            _ => return None,
        })
    }
}

/// One text replacement. Positions are 1-based; columns count characters (Unicode scalar values)
/// once the engine has normalized them, whatever unit the tool printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Edit {
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub content: String,
}

/// A fix the tool itself proposed for one violation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fix {
    /// What the fix does, as an editor's menu shows it; answers for agents leave it out (the
    /// edits say it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    pub edits: Vec<Edit>,
}

/// One finding of one gate, in the shape every face understands.
///
/// `file` is relative to the workspace root with `/` separators; `line` and `column` are 1-based
/// and columns count characters. `gate` is implied by the report section that holds the violation,
/// so it is not serialized there.
///
/// The text fields are shared `Arc<str>`s: a large output repeats a few hundred file names, codes
/// and messages across 100,000 violations, and a parser stores each distinct text once (see
/// `parse::Interner`). The fix is boxed because few violations carry one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Violation {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<Arc<str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<Arc<str>>,
    pub message: Arc<str>,
    pub severity: Severity,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fixable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<Arc<str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<Box<Fix>>,
    #[serde(default, skip_serializing)]
    pub gate: Arc<str>,
    /// Whether the run's change introduced it: `false` when the same finding was there at the
    /// run's reference (`novelty`); absent when the run did not compare.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new: Option<bool>,
}

impl Violation {
    /// A violation that only carries a message (used for file-less findings).
    pub fn message_only(gate: &str, message: impl Into<Arc<str>>) -> Self {
        Violation {
            file: None,
            line: None,
            column: None,
            end_line: None,
            end_column: None,
            code: None,
            message: message.into(),
            severity: Severity::Error,
            fixable: false,
            url: None,
            fix: None,
            gate: gate.into(),
            new: None,
        }
    }
}
