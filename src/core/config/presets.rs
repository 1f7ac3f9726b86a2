//! The preset catalog: one YAML file per tool under `presets/`, embedded at build time: a gate as
//! `quality.yaml` writes it, plus `about`. A gate naming a preset takes every key it does not set
//! from it (docs/presets.md).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::model::{RawDefaults, RawFieldMap, RawGate, RawParsing, RawSuccess, RawTemplates};

include!(concat!(env!("OUT_DIR"), "/presets.rs"));

/// What a person needs to know about a preset's tool.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct About {
    /// The tool's name, e.g. ESLint.
    pub tool: String,
    /// The languages it checks, lower case, e.g. [javascript, typescript].
    pub languages: Vec<String>,
    /// How to install the tool, e.g. "npm install --save-dev eslint".
    pub install: String,
    /// The tool's home page.
    pub homepage: String,
}

/// One preset file: `about`, the gate it stands for, and what tells `qgates init` that a
/// repository uses its tool.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PresetFile {
    pub about: About,
    pub gate: RawGate,
    #[serde(default, skip_serializing_if = "Detect::is_empty")]
    pub detect: Detect,
}

/// What in a repository says it uses the preset's tool; `qgates init` proposes the preset for
/// each, with the reason (docs/init.md). Every list is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Detect {
    /// Files at a project's root that configure the tool, e.g. `.flake8`.
    #[serde(default)]
    pub config_files: Vec<String>,
    /// `[tool.NAME]` sections of pyproject.toml; a dotted NAME is a sub-table (`ruff.format`).
    #[serde(default)]
    pub pyproject_tools: Vec<String>,
    /// Sections of setup.cfg; a name ending in `.` matches every section that starts with it.
    #[serde(default)]
    pub setup_cfg_sections: Vec<String>,
    /// Python packages in a dependency list (names normalized as PEP 503 does).
    #[serde(default)]
    pub python_packages: Vec<String>,
    /// npm packages in package.json `dependencies` or `devDependencies`.
    #[serde(default)]
    pub npm_packages: Vec<String>,
    /// Top-level keys of package.json that configure the tool, e.g. `eslintConfig`.
    #[serde(default)]
    pub package_json_keys: Vec<String>,
    /// Programs named in package.json `scripts`.
    #[serde(default)]
    pub scripts: Vec<String>,
    /// Hook ids of .pre-commit-config.yaml, as the tool's own hook repository publishes them.
    #[serde(default)]
    pub pre_commit_hooks: Vec<String>,
    /// Module paths required in go.mod.
    #[serde(default)]
    pub go_mod_requires: Vec<String>,
    /// Gems in a Gemfile or a gemspec's dependencies.
    #[serde(default)]
    pub gems: Vec<String>,
    /// Packages in composer.json `require` or `require-dev`, e.g. `squizlabs/php_codesniffer`.
    #[serde(default)]
    pub composer_packages: Vec<String>,
    /// Artifact ids of a pom.xml's plugins and dependencies, e.g. `maven-checkstyle-plugin`.
    #[serde(default)]
    pub maven_artifacts: Vec<String>,
}

impl Detect {
    pub fn is_empty(&self) -> bool {
        self == &Detect::default()
    }
}

#[derive(Debug, Clone)]
pub struct Preset {
    pub name: &'static str,
    pub about: About,
    pub gate: RawGate,
    pub detect: Detect,
}

/// Every preset, sorted by name. A file that does not read is left out and logged; the tests
/// read every file, so that happens only to a build that was never tested.
pub fn catalog() -> &'static [Preset] {
    static CATALOG: OnceLock<Vec<Preset>> = OnceLock::new();
    CATALOG.get_or_init(|| {
        PRESET_FILES
            .iter()
            .filter_map(|(name, text)| match read_preset(text) {
                Ok(file) => Some(Preset {
                    name,
                    about: file.about,
                    gate: file.gate,
                    detect: file.detect,
                }),
                Err(e) => {
                    tracing::error!("preset {name} cannot be read: {e}");
                    None
                }
            })
            .collect()
    })
}

pub fn find(name: &str) -> Option<&'static Preset> {
    catalog().iter().find(|p| p.name == name)
}

pub fn names() -> impl Iterator<Item = &'static str> {
    catalog().iter().map(|p| p.name)
}

/// Reads a preset file. Its places are dropped: they are places in the preset's file, and a
/// problem with a value the preset gives is reported at the gate that names the preset.
pub fn read_preset(text: &str) -> Result<PresetFile, String> {
    let file: PresetFile = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
    let mut plain = serde_json::to_value(&file).map_err(|e| e.to_string())?;
    drop_nulls(&mut plain);
    serde_json::from_value(plain).map_err(|e| e.to_string())
}

/// Removes the keys whose value is null: a key left out, as a person writes the file.
pub fn drop_nulls(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// Whether a gate's parsing replaces the preset's instead of refining it: it names another
/// strategy, and every key of the preset's parsing belongs to the preset's strategy.
pub fn replaces_parsing(gate: &RawGate, preset: &RawGate) -> bool {
    let strategy = |g: &RawGate| g.parsing.as_ref()?.strategy.as_ref().map(|s| s.value);
    matches!((strategy(gate), strategy(preset)), (Some(a), Some(b)) if a != b)
}

/// `Type { field: gate.field.or(preset.field), … }` for the fields before `;`, and the fields
/// after it as given.
macro_rules! gate_or_preset {
    ($ty:ident, $g:ident, $p:ident; $($field:ident),* $(; $($name:ident: $value:expr),*)?) => {
        $ty { $($field: $g.$field.or($p.$field),)* $($($name: $value,)*)? }
    };
}

/// The gate a configuration runs: its own keys, and the preset's for the keys it leaves out.
/// Maps (`env`, `severity_map`, `success`, and within `parsing`) are merged key by key; a list
/// or a section (`command`, `scope`, `fix`) is replaced whole. `files` and `file_types` are one
/// setting: a gate that gives either replaces both of the preset's.
pub fn merge(gate: RawGate, preset: &RawGate) -> RawGate {
    let p = preset.clone();
    let warm = super::warm::merged(&gate, preset);
    let parsing = if replaces_parsing(&gate, preset) {
        gate.parsing
    } else {
        merge_parsing(gate.parsing, p.parsing)
    };
    let (files, file_types) = if gate.files.is_some() || gate.file_types.is_some() {
        (gate.files, gate.file_types)
    } else {
        (p.files, p.file_types)
    };
    let success = merge_fields(gate.success, p.success, |g, p| {
        gate_or_preset!(RawSuccess, g, p;
            exit_codes_ok, exit_codes_findings, exit_codes_incomplete)
    });
    gate_or_preset!(RawGate, gate, p;
        name, kind, command, scope, output_file, fix, fix_hint, timeout_s, cwd, paths_relative_to,
        optional, allow_fail, fail_on, pass_files, own_selection, own_exclude, args_when, run_on,
        max_files_per_run, column_unit, cache, cache_inputs, exclusive;
        warm: warm, preset: gate.preset, parsing: parsing, files: files, file_types: file_types,
        success: success, env: merge_map(gate.env, p.env),
        severity_map: merge_map(gate.severity_map, p.severity_map))
}

fn merge_map<V>(
    gate: Option<BTreeMap<String, V>>,
    preset: Option<BTreeMap<String, V>>,
) -> Option<BTreeMap<String, V>> {
    merge_fields(gate, preset, |g, mut p| {
        p.extend(g);
        p
    })
}

/// Key by key, and within `field_map`, `defaults` and `templates` field by field.
fn merge_parsing(gate: Option<RawParsing>, preset: Option<RawParsing>) -> Option<RawParsing> {
    merge_fields(gate, preset, |g, p| {
        let field_map = merge_fields(g.field_map, p.field_map, |g, p| {
            gate_or_preset!(RawFieldMap, g, p;
                file, line, column, end_line, end_column, code, message, severity, url)
        });
        let defaults = merge_fields(
            g.defaults,
            p.defaults,
            |g, p| gate_or_preset!(RawDefaults, g, p; file, code, message, severity, url, fixable),
        );
        let templates = merge_fields(
            g.templates,
            p.templates,
            |g, p| gate_or_preset!(RawTemplates, g, p; code, message, url),
        );
        gate_or_preset!(RawParsing, g, p;
            strategy, format, violations_path, filter, fixable_when, fix_edits, line_offset,
            column_offset, column_unit, tab_stops, tab_width, extract, pattern, headers, stream,
            min_percent, min_diff_percent, diff_severity, also, output_file;
            field_map: field_map, defaults: defaults, templates: templates)
    })
}

/// Both merged by `both`, else whichever is there.
fn merge_fields<T>(gate: Option<T>, preset: Option<T>, both: impl FnOnce(T, T) -> T) -> Option<T> {
    match (gate, preset) {
        (Some(g), Some(p)) => Some(both(g, p)),
        (g, p) => g.or(p),
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::{SpannedString, Strategy};
    use super::*;
    use crate::core::violation::Severity;

    #[test]
    fn every_preset_file_reads() {
        for (name, text) in PRESET_FILES {
            if let Err(e) = read_preset(text) {
                panic!("presets/{name}.yaml: {e}");
            }
        }
        assert_eq!(catalog().len(), PRESET_FILES.len());
    }

    #[test]
    fn every_preset_is_a_valid_gate() {
        for p in catalog() {
            let text = format!("version: 1\ngates:\n  g: {{ preset: {} }}\n", p.name);
            if let Err(e) = super::super::parse_config(&text, super::super::ConfigSource::Embedded)
            {
                panic!("preset {}: {e}", p.name);
            }
        }
    }

    /// A preset with a value in every map, unlike the catalog's (whose maps are the defaults,
    /// so a run cannot tell a merge from a replacement).
    fn preset_with_maps() -> RawGate {
        read_preset(
            "about: { tool: T, languages: [x], install: get t, homepage: https://t.example }\n\
             gate:\n  command: [t]\n  files: [\"*.t\"]\n  env: { A: from-preset, B: from-preset }\n\
             \x20 severity_map: { bad: error, meh: warning }\n\
             \x20 success: { exit_codes_ok: [0, 3], exit_codes_findings: [1] }\n\
             \x20 parsing:\n    strategy: json_violations\n    field_map: { file: f, line: l, message: m }\n\
             \x20   defaults: { code: T1 }\n",
        )
        .expect("the test preset reads")
        .gate
    }

    fn gate(yaml: &str) -> RawGate {
        serde_saphyr::from_str(yaml).expect("the test gate reads")
    }

    #[test]
    fn maps_merge_key_by_key_and_the_gates_keys_win() {
        let merged = merge(
            gate("env: { B: from-gate, C: from-gate }\nseverity_map: { meh: hint }\n"),
            &preset_with_maps(),
        );
        let env = merged.env.unwrap();
        assert_eq!(
            env.iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect::<Vec<_>>(),
            [("A", "from-preset"), ("B", "from-gate"), ("C", "from-gate")]
        );
        let severities = merged.severity_map.unwrap();
        assert_eq!(severities["bad"], Severity::Error);
        assert_eq!(severities["meh"], Severity::Hint);
    }

    #[test]
    fn one_exit_code_list_keeps_the_presets_other_list() {
        let merged = merge(
            gate("success: { exit_codes_findings: [1, 2] }\n"),
            &preset_with_maps(),
        );
        let success = merged.success.unwrap();
        assert_eq!(success.exit_codes_ok, Some(vec![0, 3]));
        assert_eq!(success.exit_codes_findings, Some(vec![1, 2]));
    }

    #[test]
    fn parsing_keys_merge_field_by_field_under_the_same_strategy() {
        let merged = merge(
            gate("parsing: { defaults: { severity: warning }, field_map: { code: c } }\n"),
            &preset_with_maps(),
        );
        let parsing = merged.parsing.unwrap();
        let fm = parsing.field_map.unwrap();
        let value = |s: Option<SpannedString>| s.map(|s| s.value);
        assert_eq!(value(fm.file), Some("f".into()));
        assert_eq!(value(fm.message), Some("m".into()));
        assert_eq!(value(fm.code), Some("c".into()));
        let defaults = parsing.defaults.unwrap();
        assert_eq!(value(defaults.code), Some("T1".into()));
        assert_eq!(value(defaults.severity), Some("warning".into()));
        assert_eq!(
            parsing.strategy.map(|s| s.value),
            Some(Strategy::JsonViolations)
        );
    }

    #[test]
    fn another_strategy_replaces_the_presets_parsing_whole() {
        let merged = merge(
            gate("parsing: { strategy: exit_code }\n"),
            &preset_with_maps(),
        );
        let parsing = merged.parsing.unwrap();
        assert!(parsing.field_map.is_none() && parsing.defaults.is_none());
    }

    #[test]
    fn files_or_file_types_on_the_gate_replace_both_of_the_presets() {
        let merged = merge(gate("file_types: [.u]\n"), &preset_with_maps());
        assert!(merged.files.is_none());
        assert_eq!(merged.file_types, Some(vec![".u".to_string()]));
        let kept = merge(gate("name: N\n"), &preset_with_maps());
        assert_eq!(
            kept.files
                .unwrap()
                .into_iter()
                .map(|s| s.value)
                .collect::<Vec<_>>(),
            ["*.t"]
        );
    }
}
