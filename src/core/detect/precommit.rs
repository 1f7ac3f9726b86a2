//! `.pre-commit-config.yaml`: its hooks propose presets (`rules::PRE_COMMIT_HOOKS`), and what a
//! hook says about its files is carried into the gates of its preset: `exclude` and `files`
//! (regexes, as scope globs where the translation is exact: `regex_glob.rs`), and the arguments
//! that select files or name a configuration (`CARRIED_ARGS`). What cannot be carried is
//! written into the gate as a comment, never dropped silently.

use serde_json::Value;

use super::Tuning;
use super::regex_glob::to_globs;

pub const FILE: &str = ".pre-commit-config.yaml";

/// One hook, as far as a gate can take it over.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hook {
    pub id: String,
    pub args: Vec<String>,
    /// `files` regexes that must all match: the configuration's top-level one, then the hook's.
    pub files: Vec<String>,
    /// `exclude` regexes, each leaving files out: the top-level one, then the hook's.
    pub exclude: Vec<String>,
    /// The hook's `exclude_types`, which no gate key expresses.
    pub exclude_types: Vec<String>,
}

/// The hooks of a parsed configuration, each with the top-level `files` and `exclude`.
pub fn hooks(config: &Value) -> Vec<Hook> {
    // pre-commit's defaults select every file: they carry nothing.
    let regex = |v: &Value, key: &str, default: &str| {
        v[key]
            .as_str()
            .filter(|r| *r != default)
            .map(str::to_string)
    };
    let top_files = regex(config, "files", "");
    let top_exclude = regex(config, "exclude", "^$");
    let repos = config["repos"].as_array().into_iter().flatten();
    let hooks = repos.flat_map(|r| r["hooks"].as_array().into_iter().flatten());
    hooks
        .filter_map(|h| {
            let words = |key: &str| -> Vec<String> {
                let list = h[key].as_array().into_iter().flatten();
                list.map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_string))
                    .collect()
            };
            Some(Hook {
                id: h["id"].as_str()?.to_string(),
                args: words("args"),
                files: top_files
                    .iter()
                    .cloned()
                    .chain(regex(h, "files", ""))
                    .collect(),
                exclude: top_exclude
                    .iter()
                    .cloned()
                    .chain(regex(h, "exclude", "^$"))
                    .collect(),
                exclude_types: words("exclude_types"),
            })
        })
        .collect()
}

/// What an option of a hook's `args` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    /// Nothing: `--force-exclude`.
    Nothing,
    /// A value that means the same from any folder: a list of words, a severity.
    Value,
    /// A path from the root, where pre-commit runs hooks: rebased for a gate's `cwd`.
    Path,
}

use Takes::{Nothing, Path, Value as Word};

/// Options, with what each takes.
type Options = &'static [(&'static str, Takes)];

/// The options of hook arguments that a preset's gate takes over: they select files or name a
/// configuration, and mean to the gate's command what they meant to the hook.
const CARRIED_ARGS: &[(&[&str], Options)] = &[
    (
        &["ruff-lint", "ruff-format"],
        &[("--force-exclude", Nothing), ("--config", Path)],
    ),
    (
        &["typos"],
        &[
            ("--force-exclude", Nothing),
            ("--config", Path),
            ("--exclude", Word),
        ],
    ),
    (
        &["codespell"],
        &[
            ("--exclude-file", Path),
            ("--ignore-words", Path),
            ("-I", Path),
            ("--ignore-words-list", Word),
            ("-L", Word),
            ("--config", Path),
        ],
    ),
    (
        &["mypy"],
        &[
            ("--config-file", Path),
            ("--strict", Nothing),
            ("--ignore-missing-imports", Nothing),
        ],
    ),
    (
        &["prettier"],
        &[("--ignore-path", Path), ("--config", Path)],
    ),
    (&["eslint"], &[("--config", Path), ("-c", Path)]),
    (&["biome-format", "biome-lint"], &[("--config-path", Path)]),
    (
        &["shellcheck"],
        &[
            ("--external-sources", Nothing),
            ("-x", Nothing),
            ("--severity", Word),
            ("-S", Word),
            ("--exclude", Word),
            ("-e", Word),
        ],
    ),
    (&["yamllint"], &[("--config-file", Path), ("-c", Path)]),
    (
        &["djlint", "djlint-format"],
        &[
            ("--profile", Word),
            ("--configuration", Path),
            ("--ignore", Word),
            ("-i", Word),
            ("--include", Word),
            ("--extension", Word),
            ("-e", Word),
        ],
    ),
    (&["hadolint"], &[("--config", Path), ("--ignore", Word)]),
];

/// The arguments a hook's own definition (its repository's `.pre-commit-hooks.yaml`) gives its
/// tool, which the configuration does not show: a gate runs the tool as the hook did.
const HOOK_DEFINITION_ARGS: &[(&str, &[&str])] = &[
    ("djlint-django", &["--profile=django"]),
    ("djlint-reformat-django", &["--profile=django"]),
    ("djlint-jinja", &["--profile=jinja"]),
    ("djlint-reformat-jinja", &["--profile=jinja"]),
    ("djlint-nunjucks", &["--profile=nunjucks"]),
    ("djlint-reformat-nunjucks", &["--profile=nunjucks"]),
    ("djlint-handlebars", &["--profile=handlebars"]),
    ("djlint-reformat-handlebars", &["--profile=handlebars"]),
];

/// Options that make a hook change files: a gate checks, and its preset offers the fix apart.
const FIXING: [&str; 6] = [
    "--fix",
    "--write",
    "-w",
    "--write-changes",
    "--exit-non-zero-on-fix",
    "--unsafe-fixes",
];

/// Carries `hook` into the tuning of a gate of `preset` whose command is `command`, run in `dir`
/// (root-relative, empty for the root).
pub fn carry(hook: &Hook, preset: &str, command: &[String], dir: &str, tuning: &mut Tuning) {
    let id = &hook.id;
    let defined = (HOOK_DEFINITION_ARGS
        .iter()
        .find(|(hook_id, _)| hook_id == id))
    .map_or(&[][..], |(_, args)| args);
    let args: Vec<String> = (defined.iter().map(|a| a.to_string()))
        .chain(hook.args.iter().cloned())
        .collect();
    let (groups, fixing, unknown) = sort_args(&args, preset, command, dir);
    for group in groups {
        if !tuning.args.windows(group.len()).any(|w| w == group) {
            tuning.args.extend(group);
        }
    }
    if !fixing.is_empty() {
        tuning.comments.push(format!(
            "Not carried over from the {id} hook: {}, which changes files (the gate checks them).",
            quoted(&fixing)
        ));
    }
    if !unknown.is_empty() {
        tuning.comments.push(format!(
            "Not carried over from the {id} hook: {}, whose meaning for this gate is not known; add it to `command` if it applies.",
            quoted(&unknown)
        ));
    }
    for regex in &hook.exclude {
        match to_globs(regex) {
            Some(globs) => add_all(&mut tuning.exclude_globs, globs),
            None => tuning.comments.push(format!(
                "Not carried over from the {id} hook: `exclude: {}`, a regex with no exact glob; add its files to `scope.exclude_globs`.",
                one_line(regex)
            )),
        }
    }
    carry_files(hook, dir, tuning);
    if !hook.exclude_types.is_empty() {
        tuning.comments.push(format!(
            "Not carried over from the {id} hook: `exclude_types: [{}]`; add their files to `scope.exclude_globs`.",
            hook.exclude_types.join(", ")
        ));
    }
}

/// The hook's `files` as `include_globs`. A gate with a `cwd` checks only its folder unless it
/// includes files: so there a glob must stay inside the folder.
fn carry_files(hook: &Hook, dir: &str, tuning: &mut Tuning) {
    let id = &hook.id;
    let shown = |r: &String| format!("`files: {}`", one_line(r));
    if hook.files.len() > 1 {
        let both: Vec<String> = hook.files.iter().map(shown).collect();
        tuning.comments.push(format!(
            "Not carried over from the {id} hook: {}, which a file must both match (a gate's `include_globs` take any one).",
            both.join(" and ")
        ));
        return;
    }
    let Some(regex) = hook.files.first() else {
        return;
    };
    let inside = |g: String| -> Option<String> {
        if dir.is_empty() || g.starts_with(&format!("{dir}/")) {
            return Some(g);
        }
        // `*S` with no `/` in S, within `dir`, is exactly `dir/*S`.
        let rest = g.strip_prefix('*')?;
        (!rest.contains('/') && !rest.starts_with('*')).then(|| format!("{dir}/{g}"))
    };
    let globs =
        to_globs(regex).and_then(|gs| gs.into_iter().map(inside).collect::<Option<Vec<_>>>());
    match globs {
        Some(globs) => add_all(&mut tuning.include_globs, globs),
        None => tuning.comments.push(format!(
            "Not carried over from the {id} hook: {}, a regex with no exact glob inside this gate's folder; add its files to `scope.include_globs`.",
            shown(regex)
        )),
    }
}

/// The arguments to append, an option and its value in one group (those of `CARRIED_ARGS` the
/// command lacks, paths rebased for `dir`; a value apart from its option, as every parser of
/// options reads it), the arguments that fix files, and those of unknown meaning.
fn sort_args(
    args: &[String],
    preset: &str,
    command: &[String],
    dir: &str,
) -> (Vec<Vec<String>>, Vec<String>, Vec<String>) {
    let known: Options = CARRIED_ARGS
        .iter()
        .find(|(presets, _)| presets.contains(&preset))
        .map_or(&[], |(_, k)| k);
    let (mut carried, mut fixing, mut unknown) = (Vec::new(), Vec::new(), Vec::new());
    let mut rest = args.iter().peekable();
    while let Some(arg) = rest.next() {
        let (option, inline) = match arg.split_once('=') {
            Some((o, v)) if o.starts_with('-') => (o, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        if FIXING.contains(&option) {
            fixing.push(arg.clone());
            continue;
        }
        let takes = known.iter().find(|(o, _)| *o == option).map(|(_, t)| *t);
        let value = match (takes, inline) {
            (Some(Nothing), None) => {
                if !command.contains(arg) {
                    carried.push(vec![arg.clone()]);
                }
                continue;
            }
            (Some(Word | Path), Some(v)) => Some(v),
            (Some(Word | Path), None) => rest.next_if(|v| !v.starts_with('-')).cloned(),
            _ => None,
        };
        match (takes, value) {
            (Some(takes), Some(value))
                if !command
                    .iter()
                    .any(|c| c == option || c.starts_with(&format!("{option}="))) =>
            {
                let value = if takes == Path {
                    rebase(&value, dir)
                } else {
                    value
                };
                carried.push(vec![option.to_string(), value]);
            }
            _ => {
                // An unknown option's value goes with it, to be shown together.
                let mut words = vec![arg.clone()];
                while let Some(v) = rest.next_if(|v| !v.starts_with('-')) {
                    words.push(v.clone());
                }
                unknown.push(words.join(" "));
            }
        }
    }
    (carried, fixing, unknown)
}

/// A path from the root, as the tool run in `dir` reaches it; an absolute path, and a ruff
/// `--config KEY=VALUE`, stay as they are.
fn rebase(path: &str, dir: &str) -> String {
    if dir.is_empty() || path.starts_with('/') || path.contains('=') {
        return path.to_string();
    }
    let up = "../".repeat(dir.split('/').count());
    format!("{up}{}", path.trim_start_matches("./"))
}

fn add_all(list: &mut Vec<String>, globs: Vec<String>) {
    for glob in globs {
        if !list.contains(&glob) {
            list.push(glob);
        }
    }
}

fn quoted(words: &[String]) -> String {
    let words: Vec<String> = words.iter().map(|w| format!("`{}`", one_line(w))).collect();
    words.join(", ")
}

/// A regex as written in a one-line comment: verbose mode's lines joined.
fn one_line(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    super::one_line(&words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn file_selecting_arguments_are_carried_and_the_rest_noted() {
        let typos = args(&["typos", "--format", "json"]);
        let (carried, fixing, unknown) = sort_args(
            &args(&["--force-exclude", "--write-changes"]),
            "typos",
            &typos,
            "",
        );
        assert_eq!(carried, [args(&["--force-exclude"])]);
        assert_eq!((fixing, unknown), (args(&["--write-changes"]), vec![]));
        // What the preset has already is not added twice.
        let with = args(&["typos", "--force-exclude"]);
        assert!(
            sort_args(&args(&["--force-exclude"]), "typos", &with, "")
                .0
                .is_empty()
        );

        let codespell = args(&["codespell"]);
        let hook = args(&[
            "--exclude-file",
            "docs/words.txt",
            "-L",
            "crate,ser",
            "--count",
            "3",
        ]);
        let (carried, _, unknown) = sort_args(&hook, "codespell", &codespell, "backend");
        assert_eq!(
            carried,
            [
                args(&["--exclude-file", "../docs/words.txt"]),
                args(&["-L", "crate,ser"])
            ]
        );
        assert_eq!(unknown, args(&["--count 3"]));
    }

    #[test]
    fn a_hook_is_carried_into_a_gate_with_comments_for_what_is_not() {
        let config: Value = serde_saphyr::from_str(
            "exclude: '^vendor/'\nrepos:\n- repo: local\n  hooks:\n  - id: ruff\n    args: [--fix, --config, ruff.toml]\n    exclude: '^(?!x)'\n    files: '\\.py$'\n",
        )
        .unwrap();
        let hooks = hooks(&config);
        assert_eq!(hooks.len(), 1);
        let mut tuning = Tuning::default();
        carry(
            &hooks[0],
            "ruff-lint",
            &args(&["ruff", "check"]),
            "backend",
            &mut tuning,
        );
        assert_eq!(tuning.args, args(&["--config", "../ruff.toml"]));
        assert_eq!(tuning.exclude_globs, args(&["vendor/**"]));
        assert_eq!(tuning.include_globs, args(&["backend/*.py"]));
        assert_eq!(tuning.comments.len(), 2, "{:?}", tuning.comments);
        assert!(
            tuning.comments[0].contains("`--fix`"),
            "{:?}",
            tuning.comments
        );
        assert!(
            tuning.comments[1].contains("`exclude: ^(?!x)`"),
            "{:?}",
            tuning.comments
        );
    }
}
