//! Finding and reading `quality.yaml`.

use std::path::{Path, PathBuf};

use super::compile::compile;
use super::error::ConfigError;
use super::model::RawConfig;
use super::spec::{Config, ConfigSource};

/// The embedded default configuration (Python: ruff format, ruff check, mypy; all optional).
pub const DEFAULT_CONFIG: &str = include_str!("default.yaml");

/// Where a workspace's configuration lives, in the order they are tried.
pub const CONFIG_CANDIDATES: [&str; 2] = ["quality.yaml", ".qgates/quality.yaml"];

/// The configuration file of a workspace, if it has one.
pub fn discover(root: &Path) -> Option<PathBuf> {
    CONFIG_CANDIDATES.iter().map(|c| root.join(c)).find(|p| p.is_file())
}

/// Loads `explicit` if given, else the workspace's own file, else the embedded default.
pub fn load_for_workspace(root: &Path, explicit: Option<&Path>) -> Result<Config, ConfigError> {
    let path = match explicit {
        Some(p) if p.is_absolute() => Some(p.to_path_buf()),
        Some(p) => Some(std::env::current_dir().map(|d| d.join(p)).unwrap_or_else(|_| p.to_path_buf())),
        None => discover(root),
    };
    match path {
        Some(path) => load_file(&path),
        None => parse_config(DEFAULT_CONFIG, ConfigSource::Embedded),
    }
}

/// Reads and checks one configuration file.
pub fn load_file(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        let why = if e.kind() == std::io::ErrorKind::NotFound {
            "the file does not exist. Check the path, or run `qgates init` to write a starting configuration.".to_string()
        } else if e.kind() == std::io::ErrorKind::InvalidData {
            "the file is not UTF-8 text. Save it as UTF-8.".to_string()
        } else {
            format!("the file cannot be read ({e}). Check its permissions.")
        };
        ConfigError::single(path.to_path_buf(), 0, 0, why)
    })?;
    parse_config(&text, ConfigSource::File(path.to_path_buf()))
}

/// Parses and checks configuration text. `source` names the file in error messages.
pub fn parse_config(text: &str, source: ConfigSource) -> Result<Config, ConfigError> {
    let file = match &source {
        ConfigSource::Embedded => PathBuf::from("<embedded default quality.yaml>"),
        ConfigSource::File(p) => p.clone(),
    };
    if text.trim().is_empty() {
        return Err(ConfigError::single(
            file,
            1,
            1,
            "the configuration is empty. Start from `qgates init`, or write at least `version: 1` and `gates:`.",
        ));
    }
    let raw: RawConfig = serde_saphyr::from_str(text).map_err(|e| yaml_error(&file, &e))?;
    compile(raw, text, source, &file)
}

/// Turns a YAML or shape error into one problem with a place and a hint.
fn yaml_error(file: &Path, e: &serde_saphyr::Error) -> ConfigError {
    let (line, column) = e
        .location()
        .map(|l| (l.line() as u32, l.column() as u32))
        .filter(|(l, _)| *l > 0)
        .unwrap_or((1, 1));
    let raw = first_line(&e.to_string());
    ConfigError::single(file.to_path_buf(), line, column, explain_yaml_error(&raw))
}

/// The first line of a rendered message (the rest is a source snippet we print ourselves).
fn first_line(s: &str) -> String {
    let mut line = s.lines().next().unwrap_or(s).trim();
    // We print the place first ourselves; drop the library's own "error: line X column Y:".
    line = line.strip_prefix("error:").unwrap_or(line).trim_start();
    if let Some(rest) = line.strip_prefix("line ")
        && let Some(i) = rest.find(": ")
        && rest[..i].chars().all(|c| c.is_ascii_digit() || c == ' ' || c.is_ascii_alphabetic())
    {
        line = &rest[i + 2..];
    }
    match line.find(" at line ") {
        Some(i) => line[..i].to_string(),
        None => line.to_string(),
    }
}

/// Adds how to fix it to the library's description of what is wrong.
fn explain_yaml_error(raw: &str) -> String {
    let lower = raw.to_ascii_lowercase();
    let hint = if lower.contains("unknown field") {
        "Remove or rename the key; `qgates schema` lists every key qgates knows."
    } else if lower.contains("unknown variant") {
        "Use one of the values listed."
    } else if lower.contains("missing field") {
        "Add the key; `qgates schema` documents it."
    } else if lower.contains("invalid type") || lower.contains("expected") {
        "Give the value the type the key needs; `qgates schema` documents each key."
    } else {
        "Fix the YAML syntax at that place (indentation, quotes, a missing `:`)."
    };
    let raw = raw.trim_end_matches('.');
    format!("{raw}. {hint}")
}
