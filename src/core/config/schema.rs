//! The JSON Schema (draft-07) of `quality.yaml`, for yaml-language-server and editors.

use schemars::generate::SchemaSettings;

use super::model::RawConfig;

/// The schema as pretty JSON.
pub fn json_schema() -> String {
    let generator = SchemaSettings::draft07().into_generator();
    let schema = generator.into_root_schema_for::<RawConfig>();
    serde_json::to_string_pretty(&schema).unwrap_or_else(|_| "{}".to_string())
}
