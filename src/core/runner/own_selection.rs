//! A tool whose own configuration chooses the files it checks (mypy's `files`, pyright's
//! `include`) answers differently when handed a list of files: the list replaces its selection.
//! When one of the places a gate's `own_selection` names is set, the gate runs without file
//! arguments, as the project runs the tool, and keeps the findings for the files in scope
//! (docs/design.md, "The tool's own file selection").
//!
//! A place is `FILE` (the file exists) or `FILE#KEY`, a dotted key inside it: a table path for
//! TOML (`pyproject.toml#tool.mypy.files`), section then key for INI (`setup.cfg#mypy.files`),
//! an object path for JSON (`pyrightconfig.json#include`). Paths are relative to the gate's `cwd`.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::Path;

use super::jsonc;
use crate::core::config::Gate;

use crate::core::detect::read_text;
use crate::core::violation::Violation;

/// Checks a place as written in `own_selection`: the problem, if any, to report at it.
pub fn check_place(place: &str) -> Option<String> {
    let (file, key) = split(place.strip_prefix(NAMES).unwrap_or(place));
    if file.is_empty() {
        return Some("names no file".into());
    }
    let path = Path::new(file);
    if path.is_absolute() || path.components().any(|c| c.as_os_str() == "..") {
        return Some("must be a path inside the gate's cwd, without `..`".into());
    }
    if key.is_some_and(|k| k.is_empty() || k.split('.').any(str::is_empty)) {
        return Some("has an empty key after `#` (write FILE or FILE#section.key)".into());
    }
    None
}

/// The first of `places` that is set in the folder `cwd`, as written.
pub fn configured<'p>(places: &'p [String], cwd: &Path) -> Option<&'p str> {
    places
        .iter()
        .find(|place| is_set(place, cwd))
        .map(String::as_str)
}

/// Where the tool's own configuration chooses its files, when it does: such a tool runs as the
/// project runs it, once and without file arguments; its findings are kept for the files asked
/// about (`keep_in_scope`, after the run).
pub fn runs_over<'g>(gate: &'g Gate, cwd: &Path) -> Option<&'g str> {
    let place = gate
        .pass_files
        .then(|| configured(&gate.own_selection, cwd))
        .flatten()?;
    tracing::debug!(
        "{}: runs over its own selection of files ({place})",
        gate.id
    );
    Some(place)
}

/// The files handed to the tool (root-relative): `files`, less those its configuration leaves
/// out when it walks (`own_exclude`), which a file named on its command line would bypass.
pub fn handed_over<'f>(
    gate: &Gate,
    files: &'f [String],
    cwd: &Path,
    own_selection: bool,
) -> Vec<&'f str> {
    let all = files.iter().map(String::as_str);
    if !gate.pass_files || own_selection || gate.own_exclude.is_empty() {
        return all.collect();
    }
    let excludes = OwnExcludes::read(&gate.own_exclude, cwd);
    let dir = gate.cwd.as_deref().map(|c| c.to_string_lossy());
    let dir = dir
        .as_deref()
        .map(|d| d.trim_start_matches("./").trim_end_matches('/'));
    all.filter(|f| {
        let rel = match dir {
            Some(d) if !d.is_empty() && d != "." => {
                f.strip_prefix(d).and_then(|r| r.strip_prefix('/'))
            }
            _ => Some(*f),
        };
        rel.is_none_or(|r| !excludes.leave_out(r))
    })
    .collect()
}

/// The arguments `args_when` adds for the places set in `cwd`: a tool that reads its
/// configuration only when told where (bandit's `-c pyproject.toml`).
pub fn args_when(gate: &Gate, cwd: &Path) -> Vec<OsString> {
    gate.args_when
        .iter()
        .filter(|(place, _)| is_set(place, cwd))
        .flat_map(|(_, args)| args.iter().map(OsString::from))
        .collect()
}

/// Keeps the findings about the files in scope, and those about no file (a configuration error,
/// a blocking error): the tool checked its whole selection, the run asked about these files.
pub fn keep_in_scope(violations: &mut Vec<Violation>, in_scope: &HashSet<&str>) {
    violations.retain(|v| v.file.as_deref().is_none_or(|f| in_scope.contains(f)));
}

fn split(place: &str) -> (&str, Option<&str>) {
    place
        .split_once('#')
        .map_or((place, None), |(file, key)| (file, Some(key)))
}

/// Whether `place` is set in the folder `cwd`: the file exists, or the key is set in it.
pub fn is_set(place: &str, cwd: &Path) -> bool {
    match split(place) {
        (file, None) => cwd.join(file).symlink_metadata().is_ok_and(|m| m.is_file()),
        _ => values(place, cwd).is_some(),
    }
}

/// The strings set at a `FILE#KEY` place: a string, or each string of a list. `None` when the
/// key is not set; a file that cannot be read or does not parse sets nothing (the tool will say
/// why when it runs).
fn values(place: &str, cwd: &Path) -> Option<Vec<String>> {
    let (file, key) = split(place);
    let text = read_text(&cwd.join(file)).ok()?;
    // Anything but TOML and JSON is read as INI (`setup.cfg`, `mypy.ini`, `.pylintrc`).
    let ext = Path::new(file).extension().and_then(|e| e.to_str());
    match ext.map(str::to_ascii_lowercase).as_deref() {
        Some("toml") => toml_values(&text, key?),
        Some("json") => json_values(&text, key?),
        _ => ini_values(&text, key?),
    }
}

fn toml_values(text: &str, key: &str) -> Option<Vec<String>> {
    let doc = text.parse::<toml_edit::DocumentMut>().ok()?;
    let item = key
        .split('.')
        .try_fold(doc.as_item(), |item, part| item.get(part))?;
    Some(match item.as_value() {
        Some(toml_edit::Value::String(s)) => vec![s.value().clone()],
        Some(toml_edit::Value::Array(list)) => list
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    })
}

fn json_values(text: &str, key: &str) -> Option<Vec<String>> {
    // pyrightconfig.json and tsconfig.json allow comments and trailing commas; a file that
    // strict JSON cannot read is read without its comments.
    let value: serde_json::Value = serde_json::from_str(text)
        .ok()
        .or_else(|| serde_json::from_str(&jsonc::plain_json(text)).ok())?;
    Some(
        match key
            .split('.')
            .try_fold(&value, |value, part| value.get(part))?
        {
            serde_json::Value::String(s) => vec![s.clone()],
            serde_json::Value::Array(list) => list
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        },
    )
}

/// `section.key` in an INI file: the value set in the section `[section]`, with its indented
/// continuation lines (mypy's multi-line `exclude`), as one string.
fn ini_values(text: &str, key: &str) -> Option<Vec<String>> {
    let (section, name) = key.rsplit_once('.')?;
    let mut current: Option<&str> = None;
    let mut found: Option<String> = None;
    for line in text.lines() {
        if let Some(value) = found.as_mut() {
            if line.starts_with([' ', '\t']) && !line.trim().is_empty() {
                value.push('\n');
                value.push_str(line.trim());
                continue;
            }
            break;
        }
        let trimmed = line.trim();
        if trimmed.starts_with(['#', ';']) {
            continue;
        }
        if let Some(header) = trimmed.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = Some(header.trim());
            continue;
        }
        if current == Some(section)
            && let Some((k, v)) = trimmed.split_once(['=', ':'])
            && k.trim().eq_ignore_ascii_case(name)
        {
            found = Some(v.trim().to_string());
        }
    }
    found.map(|v| vec![v])
}

/// An `own_exclude` place written `names:FILE#KEY` holds names of files or folders (pylint's
/// `ignore`, a list or a comma-separated string) rather than regular expressions.
const NAMES: &str = "names:";

/// The paths a tool leaves out when it walks its folders, as its configuration writes them:
/// regular expressions searched for in each path relative to the gate's `cwd`, as mypy's
/// `exclude` is, or names of files and folders (docs/design.md, "The tool's own file
/// selection").
pub struct OwnExcludes(Vec<regex::Regex>);

impl OwnExcludes {
    /// The patterns set at `places`. A pattern this regex engine cannot read (a look-around) is
    /// left out with a warning: the tool is then handed the file, as before.
    pub fn read(places: &[String], cwd: &Path) -> OwnExcludes {
        let mut patterns = Vec::new();
        for place in places {
            let (names, place) = match place.strip_prefix(NAMES) {
                Some(rest) => (true, rest),
                None => (false, place.as_str()),
            };
            let mut found = values(place, cwd).unwrap_or_default();
            if names {
                // A name is a whole part of the path: the file's or a folder's on the way.
                found = found
                    .iter()
                    .flat_map(|v| v.split(','))
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(|n| format!("(^|/){}(/|$)", regex::escape(n)))
                    .collect();
            }
            for pattern in found {
                match regex::Regex::new(&pattern) {
                    Ok(re) => patterns.push(re),
                    Err(e) => tracing::warn!(
                        "{place}: the pattern `{pattern}` cannot be read here ({e}); files it excludes are still handed to the tool"
                    ),
                }
            }
        }
        OwnExcludes(patterns)
    }

    /// Whether the tool leaves out `rel` (relative to its `cwd`, `/`-separated): the path or a
    /// folder on the way to it (written with a trailing `/`, as mypy matches folders) matches.
    pub fn leave_out(&self, rel: &str) -> bool {
        if self.0.is_empty() {
            return false;
        }
        let folders = rel.match_indices('/').map(|(i, _)| &rel[..=i]);
        std::iter::once(rel)
            .chain(folders)
            .any(|p| self.0.iter().any(|re| re.is_match(p)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_place_is_set_by_its_file_or_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let mypy = places(&[
            "pyproject.toml#tool.mypy.files",
            "mypy.ini#mypy.files",
            "setup.cfg#mypy.files",
        ]);
        std::fs::write(cwd.join("pyproject.toml"), "[tool.mypy]\nstrict = true\n").unwrap();
        assert_eq!(configured(&mypy, cwd), None);
        std::fs::write(
            cwd.join("setup.cfg"),
            "[metadata]\nfiles = x\n[mypy]\n; files = no\nFiles: src, tests\n",
        )
        .unwrap();
        assert_eq!(configured(&mypy, cwd), Some("setup.cfg#mypy.files"));
        std::fs::write(
            cwd.join("pyproject.toml"),
            "[tool.mypy]\nfiles = [\"src\"]\n",
        )
        .unwrap();
        assert_eq!(
            configured(&mypy, cwd),
            Some("pyproject.toml#tool.mypy.files")
        );

        let pyright = places(&["pyrightconfig.json#include", "pyproject.toml#tool.pyright"]);
        assert_eq!(configured(&pyright, cwd), None);
        std::fs::write(
            cwd.join("pyrightconfig.json"),
            "{\n  // the sources\n  \"include\": [\"src\", \"a//b\",], /* done */\n}\n",
        )
        .unwrap();
        assert_eq!(
            configured(&pyright, cwd),
            Some("pyrightconfig.json#include")
        );
        assert_eq!(configured(&places(&["tsconfig.json"]), cwd), None);
        std::fs::write(cwd.join("tsconfig.json"), "{}").unwrap();
        assert_eq!(
            configured(&places(&["tsconfig.json"]), cwd),
            Some("tsconfig.json")
        );
    }

    #[test]
    fn excludes_are_searched_in_the_path_and_its_folders() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        std::fs::write(
            cwd.join("pyproject.toml"),
            "[tool.mypy]\nexclude = [\"venv\", \"^app/alembic/\", \"(?<=x)y\"]\n",
        )
        .unwrap();
        std::fs::write(
            cwd.join("mypy.ini"),
            "[mypy]\nexclude = (?x)(\n    ^one\\.py$\n    | two\\.pyi$\n  )\nstrict = True\n",
        )
        .unwrap();
        let toml = OwnExcludes::read(&places(&["pyproject.toml#tool.mypy.exclude"]), cwd);
        assert!(toml.leave_out("app/alembic/env.py"));
        assert!(toml.leave_out("src/venv/lib/x.py"));
        assert!(!toml.leave_out("app/main.py"));
        assert!(!toml.leave_out("app/alembic.py"));
        let ini = OwnExcludes::read(&places(&["mypy.ini#mypy.exclude"]), cwd);
        assert!(ini.leave_out("one.py") && ini.leave_out("a/two.pyi"));
        assert!(!ini.leave_out("a/one.py") && !ini.leave_out("three.py"));
        let none = OwnExcludes::read(&places(&["setup.cfg#mypy.exclude"]), cwd);
        assert!(!none.leave_out("one.py"));
        std::fs::write(
            cwd.join(".pylintrc"),
            "[MAIN]\nignore=CVS, migrations,a.b\n",
        )
        .unwrap();
        let names = OwnExcludes::read(&places(&["names:.pylintrc#MAIN.ignore"]), cwd);
        assert!(names.leave_out("app/migrations/0001.py") && names.leave_out("x/a.b"));
        assert!(!names.leave_out("app/migrations.py") && !names.leave_out("x/aab"));
    }

    #[test]
    fn a_broken_file_chooses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pyproject.toml"), "[tool.mypy\nfiles = 1").unwrap();
        assert_eq!(
            configured(&places(&["pyproject.toml#tool.mypy.files"]), dir.path()),
            None
        );
    }

    #[test]
    fn places_are_checked_as_written() {
        assert_eq!(check_place("pyproject.toml#tool.mypy.files"), None);
        assert_eq!(check_place("sub/mypy.ini"), None);
        assert!(check_place("../x.toml").is_some());
        assert!(check_place("/etc/x.toml").is_some());
        assert!(check_place("x.toml#").is_some());
        assert!(check_place("x.toml#a..b").is_some());
        assert!(check_place("#x").is_some());
    }
}
