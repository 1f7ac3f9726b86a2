//! Detection: which of the catalog's presets a repository uses, and why. It reads the
//! manifests at the root (`manifests.rs`), looks for configuration files and walks the tree
//! once, bounded (`walk.rs`); what proposes what is data (`rules.rs`). `qgates init` writes the
//! result as `quality.yaml`; without one, the embedded default is the result, every gate
//! optional (`render.rs`, cached per root in `cache.rs`).
//!
//! What is proposed:
//! - a tool the repository shows it uses: a configuration file or section, a dependency, a
//!   package.json script, a pre-commit hook;
//! - a tool that is useful with no configuration, for the files that need it: rustfmt and
//!   cargo clippy for a Cargo.toml, gofmt and go vet for a go.mod, shellcheck for shell scripts,
//!   hadolint for Dockerfiles, actionlint for GitHub workflows;
//! - for a Python repository, the Python default of each role (formatter, linter, type checker)
//!   it fills with no tool of its own: ruff format, ruff check, mypy (`rules::PYTHON_ROLES`).
//!
//! Test runners (pytest, vitest) are proposed when the repository uses them; the embedded default
//! leaves them out (`render::embedded_text`). pytest-cov is named in a note, not proposed.
//!
//! Spelling checkers (typos, codespell) run on every file, so they are proposed only when
//! configured; so are markdownlint, yamllint and sqlfluff (see `rules::FILE_RULES`).

mod cache;
mod manifests;
pub(crate) use manifests::read_text;
mod render;
pub mod rules;
mod walk;

use std::path::{Path, PathBuf};

pub use cache::detect_cached;
pub use render::{ToolStatus, embedded_config, embedded_text, init_file, tool_status};
pub use walk::MAX_FILES;

use crate::core::config::presets;

/// One proposed gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    /// The preset's name (a name of `rules::ORDER`).
    pub preset: &'static str,
    /// Why, in one line: "pyproject.toml has [tool.ruff]", "12 *.sh files", "Dockerfile".
    pub why: String,
}

impl Proposal {
    /// The gate's id: the preset's name with `_` for `-` (ruff-format → ruff_format).
    pub fn gate_id(&self) -> String {
        self.preset.replace('-', "_")
    }
}

#[derive(Debug, Clone, Default)]
pub struct Detection {
    /// Every preset a rule proposed, in `rules::ORDER`, whether the catalog has it or not.
    pub proposals: Vec<Proposal>,
    /// What could not be read, and what was found but not proposed, for the person running
    /// `qgates init`.
    pub notes: Vec<String>,
    pub files_seen: usize,
    /// The walk stopped at `MAX_FILES`.
    pub truncated: bool,
    /// The paths the answer depends on (folders walked, files read).
    pub(crate) watched: Vec<PathBuf>,
}

impl Detection {
    /// The proposals whose preset the catalog has: a rule may name a preset before the catalog
    /// holds it, and is then left out.
    pub fn gates(&self) -> Vec<&Proposal> {
        self.proposals
            .iter()
            .filter(|p| presets::find(p.preset).is_some())
            .collect()
    }

    /// The presets of `gates()`, in order.
    pub fn preset_names(&self) -> Vec<&'static str> {
        self.gates().iter().map(|p| p.preset).collect()
    }
}

/// What the rules found, before the Python default and ruff's formatter are decided.
#[derive(Debug, Default)]
pub(crate) struct Evidence {
    found: Vec<Proposal>,
    /// Why the repository has Python (first reason), if it does.
    python: Option<String>,
    /// The Python tools with no preset that the repository uses (`rules::PYTHON_ROLES`).
    other_python: Vec<&'static str>,
    /// Why the repository uses pytest-cov (first reason), if it does.
    pytest_cov: Option<String>,
    notes: Vec<String>,
    read: Vec<PathBuf>,
}

impl Evidence {
    /// Proposes `presets` for `why`; a preset proposed already keeps its first reason (rules
    /// run from the most specific, configuration, to the least, kinds of files).
    fn add(&mut self, presets: &'static [&'static str], why: String) {
        for preset in presets {
            if !self.found.iter().any(|p| p.preset == *preset) {
                self.found.push(Proposal {
                    preset,
                    why: one_line(&why),
                });
            }
        }
    }

    fn python(&mut self, why: String) {
        self.python.get_or_insert(why);
    }

    fn other_python(&mut self, name: &str) {
        if let Some(tool) = rules::other_python_tool(name)
            && !self.other_python.contains(&tool)
        {
            self.other_python.push(tool);
        }
    }

    fn has(&self, preset: &str) -> bool {
        self.found.iter().any(|p| p.preset == preset)
    }
}

/// Detects the presets the repository at `root` uses (not cached; see `detect_cached`).
pub fn detect(root: &Path) -> Detection {
    detect_at_most(root, MAX_FILES)
}

fn detect_at_most(root: &Path, max_files: usize) -> Detection {
    let mut ev = Evidence::default();
    let names = walk::root_names(root);
    let inv = walk::walk(root, max_files);
    if inv.python_files > 0 {
        let n = inv.python_files;
        ev.python(format!("{n} Python file{}", if n == 1 { "" } else { "s" }));
    }
    // From the most specific reason to the least: the first one given is kept.
    for (file, presets) in rules::CONFIG_FILES {
        if names.contains(*file) {
            ev.add(presets, (*file).to_string());
        }
    }
    for (file, tool) in rules::OTHER_PYTHON_FILES {
        if names.contains(*file) {
            ev.other_python(tool);
        }
    }
    manifests::read_all(root, &names, &mut ev);
    for ((kind, presets, noun), found) in rules::FILE_RULES.iter().zip(&inv.kinds) {
        if found.count > 0 {
            ev.add(presets, files_why(*kind, noun, found));
        }
    }
    decide_python(&mut ev);
    if let Some(why) = &ev.pytest_cov
        && ev.has("pytest")
    {
        // Not proposed: the command needs the package to measure (`--cov=src`), which only the
        // project knows, and a bare `--cov` would count the tests themselves.
        ev.notes.push(format!(
            "pytest-cov is used ({why}), and the pytest gate does not measure coverage: to read it too, add `--cov=PACKAGE` and `--cov-report=json:{{report_dir}}/coverage.json` to the gate's command and a `strategy: coverage` reader with that `output_file` to its `parsing.also`"
        ));
    }
    let mut proposals = ev.found;
    proposals.sort_by_key(|p| rules::ORDER.iter().position(|n| *n == p.preset));
    let mut watched = inv.watched;
    watched.extend(ev.read);
    Detection {
        proposals,
        notes: ev.notes,
        files_seen: inv.files_seen,
        truncated: inv.truncated,
        watched,
    }
}

/// For a Python repository, the default of each role the repository leaves empty.
fn decide_python(ev: &mut Evidence) {
    let Some(python) = ev.python.clone() else {
        return;
    };
    for role in &rules::PYTHON_ROLES {
        let filled = role.presets.iter().any(|p| ev.has(p))
            || role.others.iter().any(|o| ev.other_python.contains(o));
        if !filled {
            let why = format!(
                "{python} and no Python {} configured (the Python default)",
                role.noun
            );
            ev.add(&role.presets[..1], why);
        }
    }
}

/// The reason of a file rule: the file itself when there is one, else how many.
fn files_why(kind: rules::Kind, noun: &str, found: &walk::Found) -> String {
    if found.count == 1 {
        return found.first.clone();
    }
    let n = found.count;
    match kind {
        rules::Kind::Ext(_) => {
            let globs: Vec<String> = found.extensions.iter().map(|e| format!("*.{e}")).collect();
            format!("{n} {} files", globs.join(" and "))
        }
        rules::Kind::Dockerfile | rules::Kind::Workflow | rules::Kind::Name(_) => {
            format!("{n} {noun}")
        }
    }
}

/// A reason may quote a file name, and a name may hold any character: it is shown on one line
/// and written into a YAML comment, where a line break would start a line of configuration.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

#[cfg(test)]
mod tests;
