//! The JSON Schema (draft-07) of `quality.yaml`, for yaml-language-server and editors.
//!
//! Generated from the serde model by schemars, then adjusted where the generated form helps
//! editors less than it could: enums whose values have doc comments come out as `oneOf` lists of
//! `const`s, which many editors do not offer as completions, so they become plain `enum`s (with
//! `enumDescriptions`, which VS Code's YAML extension shows); and the `parsing` keys each strategy
//! does not read are forbidden, matching the check `qgates` itself makes.

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use super::model::{RawConfig, Strategy};
use super::presets;

/// The schema as pretty JSON.
pub fn json_schema() -> String {
    serde_json::to_string_pretty(&json_schema_value()).unwrap_or_else(|_| "{}".to_string())
}

/// The schema as a JSON value.
pub fn json_schema_value() -> Value {
    let generator = SchemaSettings::draft07().into_generator();
    let mut schema = generator.into_root_schema_for::<RawConfig>().to_value();
    if let Some(defs) = schema.get_mut("definitions").and_then(Value::as_object_mut) {
        for def in defs.values_mut() {
            plain_enum(def);
        }
        if let Some(parsing) = defs.get_mut("RawParsing") {
            strategy_keys(parsing);
        }
        if let Some(gate) = defs.get_mut("RawGate") {
            preset_or_command(gate);
        }
    }
    unwrap_doc_lines(&mut schema);
    schema_first(schema)
}

/// Doc comments wrap at the source's line width; an editor's hover should reflow them, so a
/// single line break becomes a space (a blank line, a paragraph break, stays).
fn unwrap_doc_lines(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match (key.as_str(), value) {
                    ("description", Value::String(s)) => *s = reflow(s),
                    ("enumDescriptions", Value::Array(items)) => {
                        for item in items.iter_mut() {
                            if let Value::String(s) = item {
                                *s = reflow(s);
                            }
                        }
                    }
                    (_, value) => unwrap_doc_lines(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unwrap_doc_lines),
        _ => {}
    }
}

fn reflow(s: &str) -> String {
    s.split("\n\n")
        .map(|para| {
            para.split('\n')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// `$schema`, `title` and `description` first, as people expect to read them.
fn schema_first(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return schema;
    };
    let mut out = Map::new();
    for key in ["$schema", "title", "description"] {
        if let Some(v) = map.remove(key) {
            out.insert(key.to_string(), v);
        }
    }
    out.extend(map);
    Value::Object(out)
}

/// `oneOf: [{const, description}…]` → `enum` + `enumDescriptions`, keeping the enum's own description.
fn plain_enum(def: &mut Value) {
    let Some(variants) = def.get("oneOf").and_then(Value::as_array) else {
        return;
    };
    let mut values = Vec::new();
    let mut descriptions = Vec::new();
    for v in variants {
        let Some(c) = v.get("const") else { return };
        values.push(c.clone());
        descriptions.push(v.get("description").cloned().unwrap_or_else(|| json!("")));
    }
    let Some(obj) = def.as_object_mut() else {
        return;
    };
    obj.remove("oneOf");
    obj.insert("type".into(), json!("string"));
    obj.insert("enum".into(), Value::Array(values));
    obj.insert("enumDescriptions".into(), Value::Array(descriptions));
}

/// Adds, for each strategy, "if `strategy` is this, the keys it does not read must be absent"
/// (and `text_violations` needs `pattern`), on `RawParsing`'s schema.
fn strategy_keys(schema: &mut Value) {
    let all: Vec<&str> = match schema.get("properties").and_then(Value::as_object) {
        Some(props) => props
            .keys()
            .map(String::as_str)
            .filter(|k| *k != "strategy" && !Strategy::EVERY_READER_KEYS.contains(k))
            .collect(),
        None => return,
    };
    let mut rules = Vec::new();
    for strategy in Strategy::ALL {
        let used = strategy.parsing_keys();
        let forbidden: Map<String, Value> = all
            .iter()
            .filter(|k| !used.contains(k))
            .map(|k| (k.to_string(), Value::Bool(false)))
            .collect();
        let mut then = json!({ "properties": forbidden });
        if strategy == Strategy::TextViolations {
            then["required"] = json!(["pattern"]);
        }
        rules.push(json!({
            "if": { "properties": { "strategy": { "const": strategy.as_str() } }, "required": ["strategy"] },
            "then": then,
        }));
    }
    if let Some(obj) = schema.as_object_mut() {
        obj.insert("allOf".into(), Value::Array(rules));
    }
}

/// A gate names a preset, or gives its own `command` and `parsing`; `preset` completes to the
/// catalog's names, each described by its tool and languages.
fn preset_or_command(gate: &mut Value) {
    let catalog = presets::catalog();
    if let Some(preset) = gate.pointer_mut("/properties/preset") {
        preset["type"] = json!("string");
        preset["enum"] = catalog.iter().map(|p| json!(p.name)).collect();
        preset["enumDescriptions"] = catalog
            .iter()
            .map(|p| {
                json!(format!(
                    "{} ({})",
                    p.about.tool,
                    p.about.languages.join(", ")
                ))
            })
            .collect();
    }
    if let Some(obj) = gate.as_object_mut() {
        obj.insert(
            "anyOf".into(),
            json!([{ "required": ["preset"] }, { "required": ["command", "parsing"] }]),
        );
    }
}
