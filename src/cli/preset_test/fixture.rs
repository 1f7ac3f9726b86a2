//! A preset's fixture folder: its files, what `expected.yaml` says the tool reports there, and
//! the places qgates reported, in one shape so the two compare (docs/presets.md, "Testing a
//! preset").

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::core::config::{ConfigSource, parse_config};

/// `expected.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    pub findings: Vec<Finding>,
    /// The tool's own in-place fix (the files are appended); required when the preset has `fix`.
    #[serde(default)]
    pub fix_in_place: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// `file`, `file:line` or `file:line:column` (1-based, the column in characters); none for a
    /// finding about no file (the project as a whole).
    pub at: Option<String>,
    pub code: Option<String>,
    /// The text at `at`'s column; required when `at` has a column.
    #[serde(default)]
    pub points_at: Option<String>,
    /// A regex that matches the tool's own output (stdout, a newline, stderr) for this finding.
    pub tool_says: String,
}

/// The file of a finding about no file, as `Place`s show it.
pub const NO_FILE: &str = "(no file)";

impl Finding {
    /// Where it is, as written (`NO_FILE` for a finding about no file).
    pub fn at(&self) -> &str {
        self.at.as_deref().unwrap_or(NO_FILE)
    }
}

/// Where a violation is, and its code: what qgates and `expected.yaml` are compared on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub file: String,
    pub line: Option<u64>,
    pub column: Option<u64>,
    pub code: Option<String>,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(column) = self.column {
            write!(f, ":{column}")?;
        }
        write!(f, " {}", self.code.as_deref().unwrap_or("(no code)"))
    }
}

/// Reads an `at` (`file`, `file:line` or `file:line:column`).
pub fn parse_at(at: &str, code: Option<String>) -> Place {
    let mut parts: Vec<&str> = at.split(':').collect();
    let mut numbers = Vec::new();
    while numbers.len() < 2
        && parts.len() > 1
        && let Some(n) = parts.last().and_then(|p| p.parse::<u64>().ok())
    {
        numbers.insert(0, n);
        parts.pop();
    }
    Place {
        file: parts.join(":"),
        line: numbers.first().copied(),
        column: numbers.get(1).copied(),
        code,
    }
}

/// A fixture folder and its `expected.yaml`.
pub struct Fixture {
    pub dir: PathBuf,
    pub expected: Expected,
}

impl Fixture {
    pub fn load(dir: &Path) -> Result<Fixture, String> {
        let file = dir.join("expected.yaml");
        let text = std::fs::read_to_string(&file).map_err(|e| {
            format!(
                "{}: {e}; a fixture folder holds the files the tool checks and `expected.yaml`, \
                 what it reports there (docs/presets.md, \"Testing a preset\")",
                file.display()
            )
        })?;
        let expected =
            serde_saphyr::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        Ok(Fixture {
            dir: dir.to_path_buf(),
            expected,
        })
    }

    /// The findings `expected.yaml` lists, sorted.
    pub fn expected_places(&self) -> Vec<Place> {
        let mut places: Vec<Place> = (self.expected.findings.iter())
            .map(|f| parse_at(f.at(), f.code.clone()))
            .collect();
        places.sort();
        places
    }

    /// The fixture's files, root-relative and sorted, without `expected.yaml` (the test's data).
    pub fn files(&self) -> Vec<String> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(root, &path, out);
                } else if let Ok(rel) = path.strip_prefix(root) {
                    out.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.dir, &self.dir, &mut out);
        out.retain(|f| f != "expected.yaml");
        out.sort();
        out
    }

    /// The fixture's files the gate checks, as qgates chooses them (its `files` and
    /// `file_types`); every file when it names none.
    pub fn matching_files(&self, gate: &Value) -> Result<Vec<String>, String> {
        let text = serde_json::json!({ "version": 1, "gates": { "preset": gate } }).to_string();
        let config = parse_config(&text, ConfigSource::Embedded)
            .map_err(|e| format!("the preset's gate does not load:\n{e}"))?;
        let gate = config
            .gate("preset")
            .ok_or("the preset's gate does not load")?;
        Ok((self.files().into_iter())
            .filter(|rel| gate.applies_to(rel))
            .collect())
    }
}

/// A list of strings of a gate, e.g. its `command`; empty when it has none.
pub fn strings(gate: &Value, key: &str) -> Vec<String> {
    (gate[key].as_array().into_iter().flatten())
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// The violations of a gate's result in a JSON report, sorted.
pub fn places_of(gate: &Value) -> Vec<Place> {
    let mut places: Vec<Place> = (gate["violations"].as_array().into_iter().flatten())
        .map(|v| Place {
            file: v["file"].as_str().unwrap_or(NO_FILE).to_string(),
            line: v["line"].as_u64(),
            column: v["column"].as_u64(),
            code: v["code"].as_str().map(str::to_string),
        })
        .collect();
    places.sort();
    places
}

/// One place a line, for messages.
pub fn list(places: &[Place]) -> String {
    places.iter().map(|p| format!("\n    {p}")).collect()
}
