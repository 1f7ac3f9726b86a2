//! Finding and reading `quality.yaml`.

use std::path::{Path, PathBuf};

use super::compile::compile;
use super::error::{ConfigError, ConfigProblem};
use super::explain::explain;
use super::model::RawConfig;
use super::spec::{Config, ConfigSource};
use super::tree::{LazyTree, Pos, Tree};

/// The embedded default configuration (Python: ruff format, ruff check, mypy; all optional).
pub const DEFAULT_CONFIG: &str = include_str!("default.yaml");

/// Where a workspace's configuration lives, in the order they are tried.
pub const CONFIG_CANDIDATES: [&str; 2] = ["quality.yaml", ".qgates/quality.yaml"];

/// The configuration file of a workspace, if it has one.
pub fn discover(root: &Path) -> Option<PathBuf> {
    CONFIG_CANDIDATES
        .iter()
        .map(|c| root.join(c))
        .find(|p| p.is_file())
}

/// Loads `explicit` if given, else the workspace's own file, else the embedded default.
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
        None => parse_config(DEFAULT_CONFIG, ConfigSource::Embedded),
    }
}

/// Reads and checks one configuration file.
pub fn load_file(path: &Path) -> Result<Config, ConfigError> {
    let single = |pos: Pos, message: String| {
        ConfigError::single(path.to_path_buf(), pos.line, pos.column, message)
    };
    let bytes = std::fs::read(path).map_err(|e| {
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
    let text = String::from_utf8(bytes).map_err(|e| {
        let (pos, message) = not_utf8(e.as_bytes(), e.utf8_error().valid_up_to());
        single(pos, message)
    })?;
    parse_config(&text, ConfigSource::File(path.to_path_buf()))
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
    // Read typed first: a valid file is then read once. The untyped tree that places problems
    // is built only when one is found (see `LazyTree`).
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
        return Err(ConfigError {
            problems: vec![problem(explain(e, text, None))],
        });
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
    let tree = match Tree::parse(text) {
        Ok(Some(tree)) => tree,
        Ok(None) => {
            return ConfigError {
                problems: vec![problem((
                    Pos { line: 1, column: 1 },
                    "the configuration is empty. Start from `qgates init`, or write at least `version: 1` and `gates:`."
                        .to_string(),
                ))],
            };
        }
        Err(e) => {
            return ConfigError {
                problems: vec![problem(explain(&e, text, None))],
            };
        }
    };
    ConfigError {
        problems: shape_problems(typed, text, &tree)
            .into_iter()
            .map(problem)
            .collect(),
    }
}

/// The reader stops at the first value of the wrong shape. So that a file with a typo in two
/// gates does not need two rounds, the gate that failed is blanked out (its lines emptied, so
/// every other place keeps its line and column) and the text is read again, for as long as
/// each new problem lies inside a gate that is still there. A problem outside every gate, or
/// a gate written in flow style, ends the search: blanking more would invent problems.
fn shape_problems(first: &serde_saphyr::Error, text: &str, tree: &Tree) -> Vec<(Pos, String)> {
    let mut found = vec![explain(first, text, Some(tree))];
    let Some(gates) = tree.gate_lines() else {
        return found;
    };
    let mut lines: Vec<&str> = text.lines().collect();
    let mut blanked = vec![false; gates.len()];
    loop {
        let pos = found.last().map(|(p, _)| *p).unwrap_or_default();
        let Some(i) = gates
            .iter()
            .position(|(a, b)| (*a..=*b).contains(&pos.line))
        else {
            break;
        };
        if std::mem::replace(&mut blanked[i], true) {
            break;
        }
        let (a, b) = gates[i];
        let end = (b as usize).min(lines.len());
        for line in &mut lines[(a - 1) as usize..end] {
            *line = "";
        }
        if blanked.iter().all(|b| *b) {
            break; // `gates:` itself would now be empty, which is not the user's mistake.
        }
        let masked = lines.join("\n");
        match serde_saphyr::from_str::<RawConfig>(&masked) {
            Ok(_) => break,
            Err(e) => {
                let next = explain(&e, &masked, Some(tree));
                if !gates
                    .iter()
                    .enumerate()
                    .any(|(j, (a, b))| !blanked[j] && (*a..=*b).contains(&next.0.line))
                {
                    break;
                }
                found.push(next);
            }
        }
    }
    found.sort_by_key(|(p, _)| *p);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_utf8_counts_characters_before_the_bad_byte() {
        let bytes = b"version: 1\n# caf\xc3\xa9 \xe9\n";
        let e = String::from_utf8(bytes.to_vec()).unwrap_err();
        let (pos, message) = not_utf8(bytes, e.utf8_error().valid_up_to());
        assert_eq!(pos, Pos { line: 2, column: 8 });
        assert!(message.contains("0xE9"), "{message}");
    }
}
