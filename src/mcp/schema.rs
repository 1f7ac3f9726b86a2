//! The tools' arguments: their JSON Schemas (sent with `tools/list`) and reading them from a call,
//! with an error that names the argument at fault.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::core::api::ScopeChoice;
use crate::core::report::page::{PageRequest, deserialize_max_violations, deserialize_offset};

/// The arguments of `run_quality_gates`. All are optional: `{}` checks what changed (`auto`).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// Which files to check. `auto` (the default): what changed since the last all-green run on
    /// this branch, plus the files that failed since. `branch`: what changed since the parent
    /// branch. `project`: every project file. `files`: the paths in `files` (the default when
    /// `files` is given).
    pub scope: Option<ScopeChoice>,
    /// Only these gates (ids from quality.yaml, e.g. ["ruff_lint"]). Default: every active gate.
    #[schemars(length(min = 1))]
    pub gates: Option<Vec<String>>,
    /// Files or folders to check, relative to the workspace root (or absolute inside it), e.g.
    /// ["src/app.py"]. Implies scope `files`.
    #[schemars(length(min = 1))]
    pub files: Option<Vec<String>>,
    /// First let each gate's fixer (e.g. ruff format) rewrite the files in scope, then check. The
    /// result's `fixed` lists the files that changed.
    #[serde(default)]
    pub fix: bool,
    /// Leave out the gates of these kinds, e.g. ["test", "e2e"] for a quick check; they are
    /// reported as skipped. Not together with `only_kinds`.
    #[schemars(with = "Option<Vec<crate::core::config::GateKind>>", length(min = 1))]
    pub skip_kinds: Option<Vec<String>>,
    /// Run only the gates of these kinds, e.g. ["lint", "format"]; the others are reported as
    /// skipped. Not together with `skip_kinds`.
    #[schemars(with = "Option<Vec<crate::core::config::GateKind>>", length(min = 1))]
    pub only_kinds: Option<Vec<String>>,
    /// Run the gates in a fresh git checkout of a commit (`rev`, default HEAD), with the
    /// configuration committed there: does it pass from scratch? Uncommitted changes, the cache
    /// and the baseline state are left out (the result's `clean_room` says how many changes);
    /// the scope is `project` unless `scope` or `files` say otherwise. Not with `fix`.
    #[serde(default)]
    pub clean_room: bool,
    /// The commit, branch or tag a clean-room run checks out (default HEAD); only with
    /// `clean_room`.
    pub rev: Option<String>,
    /// How many violations the result shows (default 50): errors first, then warnings, info,
    /// hints; by file within each. 0 shows the counts only. The result says how many it left
    /// out and names the whole report's file.
    #[serde(default, deserialize_with = "deserialize_max_violations")]
    pub max_violations: Option<usize>,
    /// Where the shown violations start in that order (default 0): the `next_offset` of a
    /// result that left some out. To page through a run without running again, call
    /// last_summary with it.
    #[serde(default, deserialize_with = "deserialize_offset")]
    pub offset: Option<usize>,
    /// Show the pre-existing violations too (default false): each violation of an `auto` or
    /// `branch` run says `"new": true|false` against the scope's base commit, and new ones come
    /// first; without this, pre-existing ones are only counted (`novelty`).
    pub include_existing: Option<bool>,
}

impl RunArgs {
    pub fn page(&self) -> PageRequest {
        PageRequest::new(self.max_violations, self.offset).with_existing(self.include_existing)
    }
}

/// The arguments of `last_summary`: which page of the last run's violations to show.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LastArgs {
    /// How many violations the result shows (default 50); 0 shows the counts only.
    #[serde(default, deserialize_with = "deserialize_max_violations")]
    pub max_violations: Option<usize>,
    /// Where the shown violations start (default 0): the `next_offset` of the previous result.
    #[serde(default, deserialize_with = "deserialize_offset")]
    pub offset: Option<usize>,
    /// Show the pre-existing violations too (default false; see run_quality_gates).
    pub include_existing: Option<bool>,
}

impl LastArgs {
    pub fn page(&self) -> PageRequest {
        PageRequest::new(self.max_violations, self.offset).with_existing(self.include_existing)
    }
}

/// Reads a tool's arguments (missing arguments read as `{}`). The error is a sentence for the
/// agent: which argument is wrong, why, and what the tool accepts.
pub fn parse_args<T: DeserializeOwned>(
    tool: &str,
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
    accepted: &str,
) -> Result<T, String> {
    let value = serde_json::Value::Object(arguments.unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let at = e.path().to_string();
        let why = e.into_inner().to_string();
        // serde already names an unknown field ("unknown field `x`, expected one of ...").
        let place = if at == "." || why.starts_with("unknown field") {
            String::new()
        } else {
            format!("argument `{at}`: ")
        };
        format!("{tool}: {place}{why}. {accepted}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> Result<RunArgs, String> {
        let serde_json::Value::Object(map) = v else {
            panic!("not an object")
        };
        parse_args(
            "run_quality_gates",
            Some(map),
            "Accepted: scope, gates, files, fix.",
        )
    }

    #[test]
    fn reads_the_arguments() {
        let a = parse(json!({"scope": "project", "gates": ["mypy"], "fix": true})).unwrap();
        assert_eq!(a.scope, Some(ScopeChoice::Project));
        assert_eq!(a.gates, Some(vec!["mypy".to_string()]));
        assert!(a.fix);
        let none = parse_args::<RunArgs>("t", None, "").unwrap();
        assert!(none.scope.is_none() && !none.fix);
    }

    #[test]
    fn errors_name_the_argument() {
        let e = parse(json!({"scop": "auto"})).unwrap_err();
        assert!(e.contains("unknown field `scop`"), "{e}");
        assert!(e.contains("Accepted: scope"), "{e}");
        let e = parse(json!({"scope": 3})).unwrap_err();
        assert!(
            e.contains("argument `scope`: invalid type: integer `3`, expected a string"),
            "{e}"
        );
        let e = parse(json!({"scope": "everything"})).unwrap_err();
        assert!(
            e.contains("argument `scope`") && e.contains("`project`"),
            "{e}"
        );
        let e = parse(json!({"gates": ["a", 1]})).unwrap_err();
        assert!(e.contains("argument `gates[1]`"), "{e}");
        let e = parse(json!({"fix": "yes"})).unwrap_err();
        assert!(e.contains("argument `fix`"), "{e}");
        let e = parse(json!({"max_violations": -5})).unwrap_err();
        assert!(
            e.contains("argument `max_violations`: -5 is negative; expected how many violations"),
            "{e}"
        );
        let e = parse(json!({"offset": "ten"})).unwrap_err();
        assert!(
            e.contains("argument `offset`: got \"ten\"; expected where the page starts"),
            "{e}"
        );
    }

    #[test]
    fn last_summary_takes_only_the_page() {
        let mut map = serde_json::Map::new();
        map.insert("scope".into(), json!("auto"));
        let e = parse_args::<LastArgs>("last_summary", Some(map), "").unwrap_err();
        assert!(
            e.contains(
                "unknown field `scope`, expected one of `max_violations`, `offset`, `include_existing`"
            ),
            "{e}"
        );
        let mut map = serde_json::Map::new();
        map.insert("offset".into(), json!(100));
        let page = parse_args::<LastArgs>("last_summary", Some(map), "")
            .unwrap()
            .page();
        assert_eq!((page.max_violations, page.offset), (50, 100));
    }
}
