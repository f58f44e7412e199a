//! JSON Schemas for tool inputs and outputs, inlined.
//!
//! Some clients strip `$defs` and then fail to resolve `$ref` (Qwen-Agent does), so every
//! schema mcpgym publishes is self-contained: subschemas inlined, `type` and `properties`
//! always present.

use std::sync::Arc;

use rmcp::model::JsonObject;
use schemars::{JsonSchema, generate::SchemaSettings};

fn generate<T: JsonSchema>(for_output: bool) -> Arc<JsonObject> {
    let mut settings = SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true);
    if for_output {
        settings = settings.for_serialize();
    }
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut object = match serde_json::to_value(schema) {
        Ok(serde_json::Value::Object(object)) => object,
        _ => JsonObject::new(),
    };
    object.remove("$schema");
    object.remove("title");
    object.remove("$defs");
    object
        .entry("type")
        .or_insert_with(|| serde_json::Value::String("object".into()));
    object
        .entry("properties")
        .or_insert_with(|| serde_json::Value::Object(JsonObject::new()));
    Arc::new(object)
}

/// The input schema of a tool whose arguments deserialize into `T`.
pub fn input_schema<T: JsonSchema>() -> Arc<JsonObject> {
    generate::<T>(false)
}

/// The output schema of a tool whose `structuredContent` serializes from `T`.
pub fn output_schema<T: JsonSchema>() -> Arc<JsonObject> {
    generate::<T>(true)
}

/// The input schema of a tool that takes no arguments.
pub fn no_arguments() -> Arc<JsonObject> {
    let mut object = JsonObject::new();
    object.insert("type".into(), "object".into());
    object.insert("properties".into(), JsonObject::new().into());
    object.insert("additionalProperties".into(), false.into());
    Arc::new(object)
}

/// An object type's fields as a one-line sketch for messages:
/// `{"invalid_penalty": number, "reward": "sparse"|"shaped"}`.
pub fn describe_object<T: JsonSchema>() -> String {
    let schema = input_schema::<T>();
    let fields: Vec<String> = schema
        .get("properties")
        .and_then(serde_json::Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(name, field)| format!("{name:?}: {}", describe_value(field)))
                .collect()
        })
        .unwrap_or_default();
    format!("{{{}}}", fields.join(", "))
}

/// A field's schema as a sketch: its allowed values (`"a"|"b"`) or its type (`number`), with
/// `null` left out (every option may be left out anyway).
fn describe_value(schema: &serde_json::Value) -> String {
    use serde_json::Value;
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values
            .iter()
            .filter(|v| !v.is_null())
            .map(Value::to_string)
            .collect();
        return values.join("|");
    }
    if let Some(alternatives) = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
    {
        let described: Vec<String> = alternatives
            .iter()
            .filter(|alternative| alternative.get("type") != Some(&Value::from("null")))
            .map(describe_value)
            .collect();
        return described.join("|");
    }
    match schema.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => {
            let kinds: Vec<&str> = kinds
                .iter()
                .filter_map(Value::as_str)
                .filter(|kind| *kind != "null")
                .collect();
            kinds.join("|")
        }
        _ => "any".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::choices! {
        /// Modes.
        enum Mode: "mode" {
            /// One.
            Sparse = "sparse",
            /// Two.
            Shaped = "shaped",
        }
    }

    #[allow(dead_code)]
    #[derive(JsonSchema, serde::Deserialize)]
    struct Options {
        reward: Option<Mode>,
        invalid_penalty: Option<f64>,
        turns: u32,
    }

    #[test]
    fn objects_are_sketched_for_messages() {
        assert_eq!(
            describe_object::<Options>(),
            r#"{"invalid_penalty": number, "reward": "sparse"|"shaped", "turns": integer}"#
        );
    }

    #[allow(dead_code)]
    #[derive(JsonSchema, serde::Serialize)]
    struct Inner {
        a: u8,
    }
    #[allow(dead_code)]
    #[derive(JsonSchema, serde::Serialize)]
    struct Outer {
        rows: Vec<Inner>,
    }

    #[test]
    fn schemas_are_inlined() {
        let schema = output_schema::<Outer>();
        let text = serde_json::to_string(&*schema).unwrap();
        assert!(!text.contains("$ref"), "{text}");
        assert!(!text.contains("$defs"), "{text}");
        assert_eq!(schema["type"], "object");
    }
}
