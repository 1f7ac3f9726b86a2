//! Finding and reading `quality.yaml`.

use std::io::Read;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::Deserialize;

use super::compile::compile;
use super::error::{ConfigError, ConfigProblem};
use super::explain::{duplicate_gate, explain, explain_part};
use super::limits::{MAX_CONFIG_BYTES, file_too_large};
use super::model::{RawConfig, RawGate, SpannedString};
use super::spec::{Config, ConfigSource};
use super::tree::{LazyTree, Pos, Tree};

/// The embedded Python default (ruff format, ruff check, mypy; all optional), for a workspace
/// without `quality.yaml` that is a Python one or where nothing is detected.
pub const DEFAULT_CONFIG: &str = include_str!("default.yaml");

/// How messages name the configuration of a workspace without `quality.yaml`. The Python
/// default keeps its name: a trust record hashes it with the commands.
pub fn embedded_label(config: &Config) -> &'static str {
    let ids = config.gates.iter().map(|g| g.id.as_str());
    if ids.eq(["ruff_format", "ruff_lint", "mypy"]) {
        "the built-in Python default"
    } else {
        "the built-in default, detected from the workspace"
    }
}

/// Where a workspace's configuration lives, in the order they are tried.
pub const CONFIG_CANDIDATES: [&str; 2] = ["quality.yaml", ".qgates/quality.yaml"];

/// The configuration file of a workspace, if it has one.
pub fn discover(root: &Path) -> Option<PathBuf> {
    CONFIG_CANDIDATES
        .iter()
        .map(|c| root.join(c))
        .find(|p| p.is_file())
}

/// Loads `explicit` if given, else the workspace's own file, else the embedded default: the gates
/// detected in the workspace, every one optional (`crate::core::detect::embedded_config`).
pub fn load_for_workspace(root: &Path, explicit: Option<&Path>) -> Result<Config, ConfigError> {
    let path = match explicit {
        Some(p) if p.is_absolute() => Some(p.to_path_buf()),
        Some(p) => Some(
            std::env::current_dir()
                .map(|d| d.join(p))
                .unwrap_or_else(|_| p.to_path_buf()),
        ),
        None => discover(root),
    };
    match path {
        Some(path) => load_file(&path),
        None => parse_config(
            &crate::core::detect::embedded_config(root),
            ConfigSource::Embedded,
        ),
    }
}

/// Reads and checks one configuration file.
pub fn load_file(path: &Path) -> Result<Config, ConfigError> {
    let single = |pos: Pos, message: String| {
        ConfigError::single(path.to_path_buf(), pos.line, pos.column, message)
    };
    let bytes = read_at_most(path, MAX_CONFIG_BYTES).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => {
                "the file does not exist. Check the path, or run `qgates init` to write a starting configuration.".to_string()
            }
            std::io::ErrorKind::IsADirectory => {
                "this is a folder, not a file. Give the path of the `quality.yaml` inside it.".to_string()
            }
            _ => format!("the file cannot be read ({e}). Check that it exists and that you may read it."),
        };
        single(Pos::NONE, why)
    })?;
    if bytes.len() > MAX_CONFIG_BYTES {
        return Err(single(
            Pos { line: 1, column: 1 },
            file_too_large(bytes.len() as u64),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let (pos, message) = not_utf8(e.as_bytes(), e.utf8_error().valid_up_to());
        single(pos, message)
    })?;
    parse_config(&text, ConfigSource::File(path.to_path_buf()))
}

/// The file's first `limit + 1` bytes at most: enough to tell that it is over the limit.
fn read_at_most(path: &Path, limit: usize) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Says where a file stops being UTF-8, so the user can find the character in their editor.
fn not_utf8(bytes: &[u8], valid_up_to: usize) -> (Pos, String) {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return (
            Pos { line: 1, column: 1 },
            "the file is UTF-16 text; qgates reads UTF-8. Save it as UTF-8 (in VS Code: \"Save with Encoding\").".to_string(),
        );
    }
    // Everything before `valid_up_to` is valid UTF-8, so lines and characters can be counted there.
    let good = std::str::from_utf8(&bytes[..valid_up_to]).unwrap_or_default();
    let line = good.matches('\n').count() + 1;
    let column = good.rsplit('\n').next().unwrap_or_default().chars().count() + 1;
    let pos = Pos {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        column: u32::try_from(column).unwrap_or(u32::MAX),
    };
    (
        pos,
        format!(
            "the file is not UTF-8 text: byte 0x{:02X} here is not valid UTF-8 (Latin-1 or another legacy encoding?). Save the file as UTF-8.",
            bytes[valid_up_to]
        ),
    )
}

/// Parses and checks configuration text. `source` names the file in error messages.
pub fn parse_config(text: &str, source: ConfigSource) -> Result<Config, ConfigError> {
    let file = match &source {
        ConfigSource::Embedded => PathBuf::from("<embedded default quality.yaml>"),
        ConfigSource::File(p) => p.clone(),
    };
    let problem = |(pos, message): (Pos, String)| ConfigProblem {
        file: file.clone(),
        line: pos.line,
        column: pos.column,
        message,
    };
    if text.len() > MAX_CONFIG_BYTES {
        return Err(ConfigError::new(vec![problem((
            Pos { line: 1, column: 1 },
            file_too_large(text.len() as u64),
        ))]));
    }
    // Read typed first; the untyped tree that places problems is built only when one is found.
    let raw: RawConfig = match serde_saphyr::from_str(text) {
        Ok(raw) => raw,
        Err(e) => return Err(read_problems(&e, text, &problem)),
    };
    let tree = LazyTree::new(text);
    let compiled = compile(raw, &tree, text, source, &file);
    // A text the typed pass took but the untyped one does not is reported as before: as YAML.
    if compiled.is_err()
        && let Some(e) = tree.error()
    {
        return Err(ConfigError::new(vec![problem(explain(e, text, None))]));
    }
    compiled
}

/// Why the typed read failed: the untyped read finds syntax errors and empty files, and names
/// keys in the messages about values of the wrong shape.
fn read_problems(
    typed: &serde_saphyr::Error,
    text: &str,
    problem: &dyn Fn((Pos, String)) -> ConfigProblem,
) -> ConfigError {
    let problems = match Tree::parse(text) {
        Ok(Some(tree)) => shape_problems(typed, text, &tree).problems,
        Ok(None) => vec![(
            Pos { line: 1, column: 1 },
            "the configuration is empty. Start from `qgates init`, or write at least `version: 1` and `gates:`."
                .to_string(),
        )],
        Err(e) => vec![explain(&e, text, None)],
    };
    ConfigError::new(problems.into_iter().map(problem).collect())
}

/// The problems of a text whose typed read failed, and how many bytes were read to find them.
struct ShapeProblems {
    problems: Vec<(Pos, String)>,
    bytes_read: usize,
}

/// The reader stops at the first value of the wrong shape. So that a file with a typo in two
/// gates does not need two rounds, each gate after the one that failed is read again on its
/// own (a document of `gates:` and the gate's lines, placed back at the gate's lines), once.
/// When the first problem is outside the gates, or gates are in flow style, it is reported alone.
fn shape_problems(first: &serde_saphyr::Error, text: &str, tree: &Tree) -> ShapeProblems {
    let mut found = ShapeProblems {
        problems: vec![explain(first, text, Some(tree))],
        bytes_read: text.len(),
    };
    let Some(gates) = tree.gate_lines() else {
        return found;
    };
    let first_line = found.problems[0].0.line;
    if !gates.iter().any(|(a, b)| (*a..=*b).contains(&first_line)) {
        return found; // a mistake outside the gates may leave them unreadable as they stand
    }
    let mut part = String::new();
    for (a, b) in gates.into_iter().filter(|(a, _)| *a > first_line) {
        part.clear();
        part.push_str("gates:\n");
        tree.push_lines(a, b, &mut part);
        found.bytes_read += part.len();
        let Err(e) = serde_saphyr::from_str::<OneGate>(&part) else {
            continue;
        };
        // Read alone, a gate can fail where it does not in the file (an alias of an anchor
        // written elsewhere): only a problem of the gate's own shape is the user's.
        if let Some(problem) = explain_part(&e, a, tree) {
            found.problems.push(problem);
        }
    }
    // Read one by one, gates cannot see that two share an id.
    found.problems.extend(
        tree.repeated_gates()
            .into_iter()
            .filter(|(pos, _)| pos.line > first_line)
            .map(|(pos, id)| (pos, duplicate_gate(id))),
    );
    found.problems.sort_by_key(|(p, _)| *p);
    found
}

/// A document of `gates:` and one gate.
#[derive(Deserialize)]
struct OneGate {
    #[serde(rename = "gates")]
    _gates: IndexMap<SpannedString, RawGate>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` gates, each with a value of the wrong shape (a command written as one string).
    fn broken_gates(count: usize) -> String {
        let mut text = String::from("version: 1\ngates:\n");
        for i in 0..count {
            text.push_str(&format!(
                "  gate_{i}:\n    command: \"tool {i}\"\n    parsing: {{ strategy: exit_code }}\n"
            ));
        }
        text
    }

    #[test]
    fn every_broken_gate_is_found_reading_each_gate_once() {
        let text = broken_gates(2_000);
        let typed = serde_saphyr::from_str::<RawConfig>(&text).unwrap_err();
        let tree = Tree::parse(&text).unwrap().unwrap();
        let found = shape_problems(&typed, &text, &tree);
        assert_eq!(found.problems.len(), 2_000);
        for (i, (pos, message)) in found.problems.iter().enumerate() {
            assert_eq!(pos.line as usize, 4 + 3 * i, "{message}");
            assert!(message.contains(&format!("gate `gate_{i}`")), "{message}");
            assert!(
                message.contains(&format!("[\"tool\", \"{i}\"]")),
                "{message}"
            );
        }
        // Read again from the start after each problem, the file would be read 2 000 times.
        assert!(
            found.bytes_read < 3 * text.len(),
            "{} bytes read for a {}-byte file",
            found.bytes_read,
            text.len()
        );
    }

    #[test]
    fn a_gate_id_used_again_after_the_first_problem_is_reported() {
        let text = "version: 1\ngates:\n  a:\n    command: tool a\n    parsing: { strategy: exit_code }\n  b:\n    command: [tool]\n    parsing: { strategy: exit_code }\n  b:\n    command: [tool]\n    parsing: { strategy: exit_code }\n";
        let e = parse_config(text, ConfigSource::Embedded).unwrap_err();
        let lines: Vec<u32> = e.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, [4, 9], "{e}");
        assert!(
            e.problems[1].message.contains("gate `b` is defined twice"),
            "{e}"
        );
    }

    #[test]
    fn a_gate_read_alone_reports_no_problem_of_the_cut() {
        // `b` uses an anchor written in `a`: read alone, it would not know it.
        let text = "version: 1\ngates:\n  a:\n    command: &cmd [\"tool\"]\n    timeout_s: soon\n    parsing: { strategy: exit_code }\n  b:\n    command: *cmd\n    parsing: { strategy: exit_code }\n  c:\n    command: tool c\n    parsing: { strategy: exit_code }\n";
        let e = parse_config(text, ConfigSource::Embedded).unwrap_err();
        let lines: Vec<u32> = e.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, [5, 11], "{e}");
    }

    #[test]
    fn not_utf8_counts_characters_before_the_bad_byte() {
        let bytes = b"version: 1\n# caf\xc3\xa9 \xe9\n";
        let e = String::from_utf8(bytes.to_vec()).unwrap_err();
        let (pos, message) = not_utf8(bytes, e.utf8_error().valid_up_to());
        assert_eq!(pos, Pos { line: 2, column: 8 });
        assert!(message.contains("0xE9"), "{message}");
    }
}
