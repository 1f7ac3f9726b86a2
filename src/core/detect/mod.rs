//! Detection: which of the catalog's presets a repository uses, and why. One bounded walk
//! (`walk.rs`) finds the subprojects, the root and each folder below it holding a manifest or a
//! tool's configuration (`subprojects.rs`); each one's manifests are read (`manifests.rs`) and
//! matched against data (`rules.rs`). A subproject's gates run in its folder (`cwd`); pre-commit
//! hooks carry their file selection into their tool's gates (`precommit.rs`). `qgates init`
//! writes the result with install advice (`install_advice.rs`); without a `quality.yaml` it is
//! the embedded default, every gate optional (`render.rs`, cached per root in `cache.rs`).
//!
//! Proposed: a tool the repository shows it uses (a configuration file or section, a dependency,
//! a package.json script, a pre-commit hook); a tool useful with no configuration, for the files
//! that need it (rustfmt, gofmt, shellcheck, hadolint, actionlint: `rules::FILE_RULES`); and for
//! a Python subproject, the default of each role that neither it nor an enclosing subproject
//! fills (`rules::PYTHON_ROLES`). Tools that would fail most repositories by default (spelling
//! checkers, markdownlint, yamllint, sqlfluff) only when configured; test runners are left out of
//! the embedded default (`render::embedded_text`); pytest-cov is named in a note.

mod cache;
mod install_advice;
mod manifests;
mod package_manifests;
pub(crate) use manifests::read_text;
mod precommit;
mod regex_glob;
mod render;
pub mod rules;
mod subprojects;
mod walk;

use std::path::{Path, PathBuf};

pub use cache::detect_cached;
pub use install_advice::{Advice, install_advice};
pub use render::{ToolStatus, embedded_config, embedded_text, init_file, tool_status};
pub use walk::MAX_FILES;

use crate::core::config::presets;
use subprojects::{Subproject, ancestors, is_inside, owner};
use walk::{Found, Hit, tally};

/// One proposed gate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Proposal {
    /// The preset's name (a name of `rules::ORDER`).
    pub preset: &'static str,
    /// Why, in one line: "pyproject.toml has [tool.ruff]", "12 *.sh files", "Dockerfile".
    pub why: String,
    /// The subproject's folder (root-relative, `/`-separated, empty for the root): the gate's `cwd`.
    pub dir: String,
    /// What the gate sets beside its preset.
    pub tuning: Tuning,
}

/// What a gate sets beside its preset: from its tool's pre-commit hooks, and for the subprojects
/// inside its folder that have a gate of the same preset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tuning {
    /// `scope.include_globs`, root-relative.
    pub include_globs: Vec<String>,
    /// `scope.exclude_globs`, root-relative.
    pub exclude_globs: Vec<String>,
    /// Appended to the preset's command.
    pub args: Vec<String>,
    /// What was found and not carried over, and why: written into the gate as comments.
    pub comments: Vec<String>,
}

impl Tuning {
    pub fn is_empty(&self) -> bool {
        *self == Tuning::default()
    }
}

impl Proposal {
    /// The gate's id: the preset's name with `_` for `-` (ruff-format → ruff_format), after
    /// the subproject's folder (backend → backend_ruff_format).
    pub fn gate_id(&self) -> String {
        let preset = self.preset.replace('-', "_");
        if self.dir.is_empty() {
            return preset;
        }
        format!("{}_{preset}", id_of_dir(&self.dir))
    }
}

/// How a reason names the file `name` of the subproject in `dir`: `backend/pyproject.toml`, or
/// `pyproject.toml` at the root.
fn shown(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// A folder as the start of a gate id, which may hold letters, digits, `_` and `-` only.
fn id_of_dir(dir: &str) -> String {
    dir.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

#[derive(Debug, Clone, Default)]
pub struct Detection {
    /// Every preset a rule proposed, the root's first, then each subproject's in path order;
    /// within one in `rules::ORDER` (whether the catalog has the preset or not).
    pub proposals: Vec<Proposal>,
    /// What could not be read, and what was found but not proposed.
    pub notes: Vec<String>,
    pub files_seen: usize,
    /// The walk stopped at `MAX_FILES`.
    pub truncated: bool,
    /// The paths the answer depends on (folders walked, files read).
    pub(crate) watched: Vec<PathBuf>,
}

impl Detection {
    /// The proposals whose preset the catalog has (a rule may name one it does not hold yet).
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

/// What the rules found in one subproject, before the Python defaults are decided.
#[derive(Debug, Default)]
pub(crate) struct Evidence {
    /// The subproject's folder (`Proposal::dir`).
    dir: String,
    found: Vec<Proposal>,
    /// Why the subproject has Python (first reason), if it does.
    python: Option<String>,
    /// Why the subproject uses pytest-cov (first reason), if it does.
    pytest_cov: Option<String>,
    /// The hooks of .pre-commit-config.yaml (read at the root).
    hooks: Vec<precommit::Hook>,
    notes: Vec<String>,
    read: Vec<PathBuf>,
}

impl Evidence {
    /// Proposes `presets` for `why`; a preset proposed already keeps its first reason (rules
    /// run from the most specific, configuration, to the least, kinds of files).
    fn add(&mut self, presets: &'static [&'static str], why: String) {
        for preset in presets {
            if !self.has(preset) {
                self.found.push(Proposal {
                    preset,
                    why: one_line(&why),
                    dir: self.dir.clone(),
                    tuning: Tuning::default(),
                });
            }
        }
    }

    fn python(&mut self, why: String) {
        self.python.get_or_insert(why);
    }

    fn has(&self, preset: &str) -> bool {
        self.found.iter().any(|p| p.preset == preset)
    }

    /// Whether its gates or tools fill `role`.
    fn fills(&self, role: &rules::PythonRole) -> bool {
        role.presets.iter().any(|p| self.has(p))
    }

    /// The Python roles (`PythonRole::noun`) its gates and tools fill.
    fn roles(&self) -> Vec<&'static str> {
        let filled = rules::PYTHON_ROLES.iter().filter(|role| self.fills(role));
        filled.map(|role| role.noun).collect()
    }
}

/// Detects the presets the repository at `root` uses (not cached; see `detect_cached`).
pub fn detect(root: &Path) -> Detection {
    detect_at_most(root, MAX_FILES)
}

fn detect_at_most(root: &Path, max_files: usize) -> Detection {
    let inv = walk::walk(root, max_files);
    let mut notes = Vec::new();
    let mut watched = inv.watched;
    let subs = subprojects::find(root, &inv.marked, &mut notes, &mut watched);
    let subs = distinct_ids(subs, &mut notes);
    let mut owned: Vec<Vec<&Hit>> = vec![Vec::new(); subs.len()];
    for hit in &inv.hits {
        owned[owner(&subs, &hit.rel)].push(hit);
    }
    // The kinds checked repository-wide are counted over every file, at the root.
    let (everywhere, _) = tally(inv.hits.iter());
    let mut proposals = Vec::new();
    let mut hooks = Vec::new();
    let mut roles: Vec<Vec<&'static str>> = Vec::new();
    for (i, sub) in subs.iter().enumerate() {
        let (kinds, python_files) = tally(owned[i].iter().copied());
        let repository_wide = (i == 0).then_some(everywhere.as_slice());
        let mut ev = gather(root, sub, python_files, &kinds, repository_wide);
        // A role an enclosing subproject's gate fills is filled here too: that gate checks
        // these files (a uv workspace's members, under the root's ruff and mypy).
        let inherited: Vec<&str> = ancestors(&subs, i)
            .flat_map(|a| roles[a].iter().copied())
            .collect();
        decide_python(&mut ev, &inherited);
        roles.push(ev.roles());
        pytest_cov_note(&mut ev);
        let mut found = std::mem::take(&mut ev.found);
        found.sort_by_key(|p| rules::ORDER.iter().position(|n| *n == p.preset));
        proposals.extend(found);
        notes.append(&mut ev.notes);
        watched.append(&mut ev.read);
        hooks.append(&mut ev.hooks);
    }
    let python_files: Vec<&str> = inv
        .hits
        .iter()
        .filter(|h| h.is_python())
        .map(|h| h.rel.as_str())
        .collect();
    tune(&mut proposals, &hooks, &python_files);
    Detection {
        proposals,
        notes,
        files_seen: inv.files_seen,
        truncated: inv.truncated,
        watched,
    }
}

/// The evidence of one subproject; for the root also the kinds of files checked wherever they
/// are (`everywhere`).
fn gather(
    root: &Path,
    sub: &Subproject,
    python_files: usize,
    kinds: &[Found],
    everywhere: Option<&[Found]>,
) -> Evidence {
    let mut ev = Evidence {
        dir: sub.dir.clone(),
        ..Default::default()
    };
    if python_files > 0 {
        let n = python_files;
        let s = if n == 1 { "" } else { "s" };
        let inside = if sub.dir.is_empty() {
            String::new()
        } else {
            format!(" in {}/", sub.dir)
        };
        ev.python(format!("{n} Python file{s}{inside}"));
    }
    // From the most specific reason to the least: the first one given is kept.
    for (file, presets) in rules::config_files() {
        if sub.names.contains(*file) {
            ev.add(presets, sub.shown(file));
        }
    }
    manifests::read_all(root, &sub.dir, &sub.names, &mut ev);
    for (i, (kind, presets, noun)) in rules::FILE_RULES.iter().enumerate() {
        let wide = presets.iter().all(|p| rules::REPOSITORY_WIDE.contains(p));
        let found = match (wide, everywhere) {
            (true, Some(all)) => &all[i],
            (false, _) => &kinds[i],
            (true, None) => continue,
        };
        if found.count > 0 {
            ev.add(presets, files_why(*kind, noun, found));
        }
    }
    ev
}

/// Of two folders whose gate ids would be the same (`a-b`, `a_b`) the second is left out: a
/// file with one id twice would not load.
fn distinct_ids(subs: Vec<Subproject>, notes: &mut Vec<String>) -> Vec<Subproject> {
    let mut kept: Vec<Subproject> = Vec::with_capacity(subs.len());
    for sub in subs {
        let id = id_of_dir(&sub.dir);
        match kept
            .iter()
            .find(|k| !k.dir.is_empty() && id_of_dir(&k.dir) == id)
        {
            Some(first) => notes.push(format!(
                "{} was not taken as a subproject: its gates would have the ids of {}'s",
                one_line(&sub.dir),
                one_line(&first.dir)
            )),
            None => kept.push(sub),
        }
    }
    kept
}

/// The pre-commit hooks of each gate's tool carried into it, and the subprojects inside a
/// gate's folder that have a gate of the same preset left to it: one file, one gate per tool.
/// A Python gate that only a hook proposed, whose folder has no Python file left to it, is
/// dropped: the hook's tool runs in the subprojects' gates, with the hook's selection.
fn tune(proposals: &mut Vec<Proposal>, hooks: &[precommit::Hook], python_files: &[&str]) {
    let mut idle = Vec::new();
    for i in 0..proposals.len() {
        let (preset, dir) = (proposals[i].preset, proposals[i].dir.clone());
        let inside = |rel: &str| dir.is_empty() || is_inside(rel, &dir);
        let nested: Vec<String> = proposals
            .iter()
            .filter(|q| q.preset == preset && !q.dir.is_empty() && q.dir != dir && inside(&q.dir))
            .map(|q| q.dir.clone())
            .collect();
        let catalog = presets::find(preset);
        let for_python = catalog.is_some_and(|p| p.about.languages == ["python"]);
        let left = python_files
            .iter()
            .any(|f| inside(f) && !nested.iter().any(|n| is_inside(f, n)));
        if for_python
            && !left
            && !nested.is_empty()
            && proposals[i].why.starts_with(precommit::FILE)
        {
            idle.push(i);
            continue;
        }
        let command = catalog
            .and_then(|p| p.gate.command.as_ref())
            .map_or(&[][..], |c| &c.value[..]);
        let tuning = &mut proposals[i].tuning;
        for hook in hooks {
            if rules::lookup(rules::pre_commit_hooks(), &hook.id).contains(&preset) {
                precommit::carry(hook, preset, command, &dir, tuning);
            }
        }
        tuning
            .exclude_globs
            .extend(nested.iter().map(|n| format!("{n}/**")));
    }
    for i in idle.into_iter().rev() {
        proposals.remove(i);
    }
}

fn pytest_cov_note(ev: &mut Evidence) {
    if let Some(why) = &ev.pytest_cov
        && ev.has("pytest")
    {
        // Not proposed: the command needs the package to measure (`--cov=src`), which only the
        // project knows, and a bare `--cov` would count the tests themselves.
        let note = format!(
            "pytest-cov is used ({why}), and the pytest gate does not measure coverage: to read it too, add `--cov=PACKAGE` and `--cov-report=json:{{report_dir}}/coverage.json` to the gate's command and a `strategy: coverage` reader with that `output_file` to its `parsing.also`"
        );
        ev.notes.push(note);
    }
}

/// For a Python subproject, the default of each role it leaves empty, and that no enclosing
/// subproject's gate fills (`inherited`).
fn decide_python(ev: &mut Evidence, inherited: &[&str]) {
    let Some(python) = ev.python.clone() else {
        return;
    };
    for role in &rules::PYTHON_ROLES {
        if !inherited.contains(&role.noun) && !ev.fills(role) {
            let why = format!(
                "{python} and no Python {} configured (the Python default)",
                role.noun
            );
            ev.add(&role.presets[..1], why);
        }
    }
}

/// The reason of a file rule: the file itself when there is one, else how many.
fn files_why(kind: rules::Kind, noun: &str, found: &Found) -> String {
    if found.count == 1 {
        return found.first.clone();
    }
    let n = found.count;
    match kind {
        rules::Kind::Ext(_) => {
            let globs: Vec<String> = found.extensions.iter().map(|e| format!("*.{e}")).collect();
            format!("{n} {} files", globs.join(" and "))
        }
        rules::Kind::Dockerfile
        | rules::Kind::Workflow
        | rules::Kind::Name(_)
        | rules::Kind::Suffix(_) => {
            format!("{n} {noun}")
        }
    }
}

/// A reason, which may quote a file name of any characters, on one line: it is written into a
/// YAML comment, where a line break would start a line of configuration.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

#[cfg(test)]
mod subprojects_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tool_proposal_tests;
