//! The JSON Schema `qgates schema` prints: its shape, and that it agrees with the loader on the
//! embedded default and on every example configuration under `fixtures/`.

use std::path::{Path, PathBuf};

use qgates::core::config::{ConfigSource, DEFAULT_CONFIG, parse_config, schema};
use serde_json::Value;

fn schema_value() -> Value {
    let text = schema::json_schema();
    serde_json::from_str(&text).expect("`qgates schema` prints JSON")
}

fn validator() -> jsonschema::Validator {
    jsonschema::draft7::new(&schema_value()).expect("the schema is a valid draft-07 schema")
}

/// YAML → JSON the way an editor's YAML plugin sees it.
fn yaml_to_json(text: &str) -> Value {
    serde_saphyr::from_str(text).expect("valid YAML")
}

/// Schema errors as "path: message" lines, for assertion messages.
fn schema_errors(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path))
        .collect()
}

/// Every `quality.yaml` under `fixtures/`, and every YAML file under `fixtures/configs/`.
/// Hidden folders (tool caches, `.qgates` run logs) are skipped.
fn example_configs() -> Vec<PathBuf> {
    fn walk(dir: &Path, in_configs: bool, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().to_string();
            if name.starts_with('.') {
                continue;
            }
            if path.is_dir() {
                walk(
                    &path,
                    in_configs || (dir.ends_with("fixtures") && name == "configs"),
                    out,
                );
            } else if name == "quality.yaml"
                || (in_configs && (name.ends_with(".yaml") || name.ends_with(".yml")))
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        false,
        &mut out,
    );
    out.sort();
    out
}

#[test]
fn is_draft_07_with_title_and_required_keys() {
    let s = schema_value();
    assert_eq!(s["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(s["type"], "object");
    assert_eq!(s["required"], serde_json::json!(["version", "gates"]));
    assert!(
        s["title"]
            .as_str()
            .is_some_and(|t| t.contains("quality.yaml"))
    );
    assert_eq!(s["properties"]["version"]["enum"], serde_json::json!([1]));
}

#[test]
fn gates_is_an_object_of_gate_definitions() {
    let s = schema_value();
    let gates = &s["properties"]["gates"];
    assert_eq!(gates["type"], "object");
    assert_eq!(
        gates["additionalProperties"]["$ref"],
        "#/definitions/RawGate"
    );
    assert_eq!(gates["minProperties"], 1);
    let gate = &s["definitions"]["RawGate"];
    assert_eq!(
        gate["anyOf"],
        serde_json::json!([{ "required": ["preset"] }, { "required": ["command", "parsing"] }])
    );
    let names = gate["properties"]["preset"]["anyOf"][0]["enum"]
        .as_array()
        .expect("preset names are listed");
    assert!(names.contains(&serde_json::json!("ruff-lint")), "{names:?}");
}

/// `Spanned<T>` is how the loader remembers places; the schema must show plain `T`.
#[test]
fn spanned_values_appear_as_their_plain_types() {
    let s = schema_value();
    assert!(
        !schema::json_schema().contains("Spanned"),
        "a Spanned type leaked into the schema"
    );
    let gate = &s["definitions"]["RawGate"]["properties"];
    assert_eq!(gate["command"]["type"], "array");
    assert_eq!(gate["command"]["items"]["type"], "string");
    assert_eq!(gate["timeout_s"]["type"], "number");
    assert_eq!(s["properties"]["version"]["type"], "integer");
    let parsing = &s["definitions"]["RawParsing"]["properties"];
    assert_eq!(
        parsing["pattern"]["type"],
        serde_json::json!(["string", "null"])
    );
    assert_eq!(
        parsing["strategy"]["allOf"][0]["$ref"],
        "#/definitions/Strategy"
    );
    let field_map = &s["definitions"]["RawFieldMap"]["properties"];
    assert_eq!(
        field_map["message"]["type"],
        serde_json::json!(["string", "null"])
    );
}

#[test]
fn enums_list_their_values() {
    let s = schema_value();
    let defs = &s["definitions"];
    let values = |name: &str| -> Vec<String> {
        defs[name]["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("{name} has no `enum` list: {}", defs[name]))
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(
        values("Strategy"),
        [
            "json_violations",
            "text_violations",
            "sarif",
            "exit_code",
            "junit",
            "coverage"
        ]
    );
    assert_eq!(
        values("GateKind"),
        [
            "format",
            "lint",
            "typecheck",
            "test",
            "e2e",
            "deps",
            "other"
        ]
    );
    assert_eq!(values("Trigger"), ["save", "command", "ci"]);
    assert_eq!(values("ColumnUnit"), ["char", "byte", "utf16"]);
    assert_eq!(values("CachePolicy"), ["per_file", "workspace", "none"]);
    assert_eq!(values("OutputStream"), ["stdout", "stderr", "both"]);
    assert_eq!(
        values("OutputFormat"),
        ["json", "jsonl", "coverage_json", "cobertura", "lcov"]
    );
    assert_eq!(values("Severity"), ["error", "warning", "info", "hint"]);
    // Value descriptions for editors that show them, one per value.
    assert_eq!(
        defs["Strategy"]["enumDescriptions"]
            .as_array()
            .map(Vec::len),
        Some(6)
    );
}

/// Every key of every object has a description (the doc comments), and every object that the
/// loader closes with `deny_unknown_fields` is closed in the schema too.
#[test]
fn every_key_is_described_and_objects_are_closed() {
    let s = schema_value();
    let mut objects = vec![("(root)".to_string(), &s)];
    for (name, def) in s["definitions"].as_object().expect("definitions") {
        objects.push((name.clone(), def));
    }
    let mut checked = 0;
    for (name, obj) in objects {
        let Some(props) = obj.get("properties").and_then(Value::as_object) else {
            continue;
        };
        assert_eq!(
            obj["additionalProperties"], false,
            "{name} accepts unknown keys"
        );
        assert!(
            obj["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{name} has no description"
        );
        for (key, prop) in props {
            let d = prop["description"].as_str().unwrap_or_default();
            assert!(!d.is_empty(), "{name}.{key} has no description");
            assert!(
                !d.contains('\n'),
                "{name}.{key}: description keeps a line break: {d:?}"
            );
            checked += 1;
        }
    }
    assert!(checked > 60, "only {checked} keys found");
}

#[test]
fn defaults_are_shown() {
    let s = schema_value();
    let gate = &s["definitions"]["RawGate"]["properties"];
    assert_eq!(gate["timeout_s"]["default"], 120.0);
    assert_eq!(gate["kind"]["default"], "other");
    assert_eq!(gate["pass_files"]["default"], true);
    assert_eq!(gate["optional"]["default"], false);
    assert_eq!(
        gate["run_on"]["default"],
        serde_json::json!(["save", "command", "ci"])
    );
    assert_eq!(gate["cache"]["default"], "per_file");
    assert_eq!(gate["column_unit"]["default"], "char");
    assert_eq!(
        gate["success"]["default"],
        serde_json::json!({"exit_codes_ok": [0], "exit_codes_findings": [1]})
    );
    let parsing = &s["definitions"]["RawParsing"]["properties"];
    assert_eq!(parsing["format"]["default"], "json");
    assert_eq!(parsing["stream"]["default"], "stdout");
    assert_eq!(parsing["violations_path"]["default"], "");
}

#[test]
fn embedded_default_passes_the_schema() {
    let v = validator();
    let instance = yaml_to_json(DEFAULT_CONFIG);
    assert_eq!(schema_errors(&v, &instance), Vec::<String>::new());
}

#[test]
fn example_configs_pass_the_schema_and_load() {
    let v = validator();
    let files = example_configs();
    assert!(
        files.len() >= 5,
        "expected the examples under fixtures/configs, found {files:?}"
    );
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable fixture");
        let instance = yaml_to_json(&text);
        let errors = schema_errors(&v, &instance);
        assert!(
            errors.is_empty(),
            "{} fails the schema:\n{}",
            path.display(),
            errors.join("\n")
        );
        // What the schema accepts, qgates must load: an editor showing no squiggle must not
        // be followed by a configuration error.
        if let Err(e) = parse_config(&text, ConfigSource::File(path.clone())) {
            panic!(
                "{} passes the schema but does not load:\n{e}",
                path.display()
            );
        }
    }
}

#[test]
fn unknown_keys_fail_the_schema() {
    let v = validator();
    let base = "version: 1\ngates:\n  a:\n    command: [x]\n    parsing: { strategy: exit_code }\n";
    assert!(v.is_valid(&yaml_to_json(base)));
    for bad in [
        format!("{base}verison: 1\n"),
        format!("{base}    comand: [x]\n"),
        "version: 1\ngates:\n  a:\n    command: [x]\n    parsing: { strategy: exit_code, patern: x }\n".to_string(),
        "version: 1\ngates:\n  a:\n    command: [x]\n    parsing: { strategy: json_violations, field_map: { mesage: m } }\n".to_string(),
    ] {
        let instance = yaml_to_json(&bad);
        assert!(!v.is_valid(&instance), "the schema accepts an unknown key:\n{bad}");
        assert!(parse_config(&bad, ConfigSource::Embedded).is_err());
    }
}

#[test]
fn schema_rejects_what_the_loader_rejects_by_shape() {
    let v = validator();
    let gate = |body: &str| format!("version: 1\ngates:\n  a:\n{body}");
    for bad in [
        "version: 2\ngates:\n  a: { command: [x], parsing: { strategy: exit_code } }\n".to_string(),
        "version: 1\ngates: {}\n".to_string(),
        gate("    command: \"ruff check\"\n    parsing: { strategy: exit_code }\n"),
        gate("    command: []\n    parsing: { strategy: exit_code }\n"),
        gate("    command: [x]\n    optional: 3\n    parsing: { strategy: exit_code }\n"),
        gate("    command: [x]\n    parsing: { strategy: jsn_violations }\n"),
        gate("    command: [x]\n    parsing: { strategy: text_violations }\n"),
        gate(
            "    command: [x]\n    parsing: { strategy: json_violations, pattern: x, field_map: { message: m } }\n",
        ),
        gate("    command: [x]\n    parsing: { strategy: exit_code, defaults: { message: m } }\n"),
        gate("    command: [x]\n    timeout_s: 0\n    parsing: { strategy: exit_code }\n"),
        gate("    command: [x]\n    max_files_per_run: 0\n    parsing: { strategy: exit_code }\n"),
        gate(
            "    command: [x]\n    severity_map: { W: warn }\n    parsing: { strategy: exit_code }\n",
        ),
        "version: 1\ngates:\n  bad id: { command: [x], parsing: { strategy: exit_code } }\n"
            .to_string(),
    ] {
        let instance = yaml_to_json(&bad);
        assert!(!v.is_valid(&instance), "the schema accepts:\n{bad}");
        assert!(
            parse_config(&bad, ConfigSource::Embedded).is_err(),
            "the loader accepts:\n{bad}"
        );
    }
}

/// A gate may name a catalog preset or a preset file in the repository; another name is
/// refused by the schema as by qgates.
#[test]
fn a_preset_is_a_catalog_name_or_a_file_in_the_repository() {
    let v = validator();
    let with = |preset: &str| {
        yaml_to_json(&format!(
            "version: 1\ngates:\n  g: {{ preset: {preset} }}\n"
        ))
    };
    assert_eq!(schema_errors(&v, &with("ruff-lint")), Vec::<String>::new());
    assert_eq!(
        schema_errors(&v, &with("./tools/qgates/ours.yaml")),
        Vec::<String>::new()
    );
    assert!(!schema_errors(&v, &with("no-such-preset")).is_empty());
}
