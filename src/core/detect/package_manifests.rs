//! The dependency manifests of Ruby (`Gemfile`, `*.gemspec`), PHP (`composer.json`) and Java
//! (`pom.xml`): a tool a project depends on there is a tool it uses, as a Python or npm
//! dependency is (each preset's `detect` says which names mean its tool).

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::Evidence;
use super::rules::{self, lookup};

/// `gem "rubocop", "~> 1.60"` in a Gemfile, at the start of a line.
fn gem_line() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r#"(?m)^\s*gem\s*\(?\s*["']([A-Za-z0-9_.-]+)["']"#).expect("a valid regex")
    })
}

/// `spec.add_development_dependency "rubocop"` (or `add_dependency`) in a gemspec.
fn gemspec_dependency() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r#"\.add_(?:development_|runtime_)?dependency\s*\(?\s*["']([A-Za-z0-9_.-]+)["']"#,
        )
        .expect("a valid regex")
    })
}

/// `<artifactId>maven-checkstyle-plugin</artifactId>` in a pom.xml, a plugin's or a dependency's.
fn artifact_id() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"<artifactId>\s*([^<\s]+)\s*</artifactId>").expect("a valid regex")
    })
}

/// The gems a Gemfile (`file`) lists.
pub fn gemfile(text: &str, file: &str, ev: &mut Evidence) {
    for caps in gem_line().captures_iter(text) {
        let name = &caps[1];
        ev.add(
            lookup(rules::gems(), name),
            format!("{file} has gem {name}"),
        );
    }
}

/// The gems a gemspec (`file`) depends on.
pub fn gemspec(text: &str, file: &str, ev: &mut Evidence) {
    for caps in gemspec_dependency().captures_iter(text) {
        let name = &caps[1];
        ev.add(
            lookup(rules::gems(), name),
            format!("{file} depends on {name}"),
        );
    }
}

/// The packages of composer.json's `require` and `require-dev`.
pub fn composer_json(text: &str, file: &str, ev: &mut Evidence) {
    let Some(json) = json_manifest(text, file, ev) else {
        return;
    };
    for list in ["require", "require-dev"] {
        for name in json[list].as_object().into_iter().flat_map(|o| o.keys()) {
            ev.add(
                lookup(rules::composer_packages(), name),
                format!("{file} {list} has {name}"),
            );
        }
    }
}

/// A JSON manifest (package.json, composer.json) read; one that does not parse is noted.
pub fn json_manifest(text: &str, file: &str, ev: &mut Evidence) -> Option<Value> {
    match serde_json::from_str(text) {
        Ok(v) => Some(v),
        Err(e) => {
            ev.notes.push(format!(
                "{file} is not valid JSON ({e}); its dependencies were not read"
            ));
            None
        }
    }
}

/// The plugins and dependencies a pom.xml names.
pub fn pom_xml(text: &str, file: &str, ev: &mut Evidence) {
    for caps in artifact_id().captures_iter(text) {
        let name = &caps[1];
        ev.add(
            lookup(rules::maven_artifacts(), name),
            format!("{file} has {name}"),
        );
    }
}
