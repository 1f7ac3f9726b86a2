//! The preset catalog's test data: a preset (`presets/<name>.yaml`), its fixture folder
//! (`fixtures/presets/<name>/`) and what its tool must report there (`expected.yaml`, described
//! in fixtures/presets/README.md).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::{git, write};

/// `fixtures/presets/<name>/expected.yaml`.
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
    /// `file`, `file:line` or `file:line:column` (1-based, the column in characters).
    pub at: String,
    pub code: Option<String>,
    /// The text at `at`'s column; required when `at` has a column.
    #[serde(default)]
    pub points_at: Option<String>,
    /// A regex that matches the tool's own output (stdout, a newline, stderr) for this finding.
    pub tool_says: String,
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

/// One preset with its fixture and expectations.
pub struct Preset {
    pub name: String,
    /// The preset's `gate`, as written in `presets/<name>.yaml`.
    pub gate: Value,
    pub fixture: PathBuf,
    pub expected: Expected,
}

impl Preset {
    /// Reads `presets/<name>.yaml` and its fixture's `expected.yaml`.
    pub fn load(name: &str) -> Result<Preset, String> {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let preset_file = repo.join("presets").join(format!("{name}.yaml"));
        let text = std::fs::read_to_string(&preset_file)
            .map_err(|e| format!("{}: {e}", preset_file.display()))?;
        let preset: Value =
            serde_saphyr::from_str(&text).map_err(|e| format!("{}: {e}", preset_file.display()))?;
        let fixture = repo.join("fixtures/presets").join(name);
        let expected_file = fixture.join("expected.yaml");
        let text = std::fs::read_to_string(&expected_file).map_err(|e| {
            format!(
                "{}: {e} (each preset's fixture says what its tool reports there)",
                expected_file.display()
            )
        })?;
        let expected: Expected = serde_saphyr::from_str(&text)
            .map_err(|e| format!("{}: {e}", expected_file.display()))?;
        Ok(Preset {
            name: name.to_string(),
            gate: preset["gate"].clone(),
            fixture,
            expected,
        })
    }

    /// The findings `expected.yaml` lists, sorted.
    pub fn expected_places(&self) -> Vec<Place> {
        let mut places: Vec<Place> = self
            .expected
            .findings
            .iter()
            .map(|f| parse_at(&f.at, f.code.clone()))
            .collect();
        places.sort();
        places
    }
}

/// The files of a fixture, root-relative and sorted, without `expected.yaml` (the test's data).
pub fn fixture_files(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("read fixture").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("inside");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.retain(|f| f != "expected.yaml");
    out.sort();
    out
}

/// A copy of the fixture without `expected.yaml` and without `leave_out`.
pub fn copy_fixture(p: &Preset, leave_out: &[String]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for rel in fixture_files(&p.fixture) {
        if leave_out.contains(&rel) {
            continue;
        }
        let to = dir.path().join(&rel);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(p.fixture.join(&rel), &to).expect("copy");
    }
    dir
}

/// A copy of the fixture as a git repository whose configuration runs the preset alone. The
/// configuration is `.qgates/quality.yaml`, which no tool checks (yamllint would check a
/// `quality.yaml` beside the fixture's files).
pub fn project(p: &Preset, leave_out: &[String]) -> tempfile::TempDir {
    let dir = copy_fixture(p, leave_out);
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "fixture"]);
    write(
        dir.path(),
        ".qgates/quality.yaml",
        &format!("version: 1\ngates:\n  g: {{ preset: {} }}\n", p.name),
    );
    dir
}

/// The violations of a gate's result in a report, sorted.
pub fn places_of(gate: &Value) -> Vec<Place> {
    let mut places: Vec<Place> = gate["violations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| Place {
            file: v["file"].as_str().unwrap_or("(no file)").to_string(),
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
