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

#[cfg(test)]
mod tests {
    use super::*;

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
