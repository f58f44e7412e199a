//! Checks a tool's input against its input schema before the tool runs, so a malformed call
//! is refused with `reason: input_validation` (as openreward does) instead of costing a turn.
//!
//! Covers what mcpgym's schemas use: `type` (one or a list), `enum`, `required`,
//! `additionalProperties: false`, numeric bounds, array lengths and item types, nested
//! objects. Whatever passes here, the environment still validates itself.

use rmcp::model::JsonObject;
use serde_json::Value;

/// How deep nested schemas are followed (mcpgym's are shallow; this bounds the work).
const MAX_DEPTH: usize = 8;

/// `Ok` when `input` fits the object schema `schema`; otherwise a sentence naming the first
/// problem.
pub(super) fn check_input(schema: &JsonObject, input: &JsonObject) -> Result<(), String> {
    check_object(schema, input, "", 0)
}

fn check_object(
    schema: &JsonObject,
    object: &JsonObject,
    path: &str,
    depth: usize,
) -> Result<(), String> {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                return Err(format!("the argument \"{path}{name}\" is required"));
            }
        }
    }
    for (name, value) in object {
        match properties.and_then(|p| p.get(name)) {
            Some(Value::Object(property)) => {
                check_value(property, value, &format!("{path}{name}"), depth + 1)?;
            }
            Some(_) => {}
            None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                let known: Vec<&str> = properties
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                return Err(format!(
                    "unknown argument \"{path}{name}\"; the arguments are: {}",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ));
            }
            None => {}
        }
    }
    Ok(())
}

fn type_matches(name: &str, value: &Value) -> bool {
    match name {
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => true,
    }
}

fn check_value(schema: &JsonObject, value: &Value, path: &str, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !types.is_empty() && !types.iter().any(|name| type_matches(name, value)) {
        return Err(format!(
            "the argument \"{path}\" must be {}, not {}",
            types.join(" or "),
            describe(value)
        ));
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let allowed: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(format!(
            "the argument \"{path}\" must be one of {}, not {value}",
            allowed.join(", ")
        ));
    }
    if let Some(number) = value.as_f64() {
        if let Some(minimum) = schema.get("minimum").and_then(Value::as_f64)
            && number < minimum
        {
            return Err(format!(
                "the argument \"{path}\" must be at least {minimum}"
            ));
        }
        if let Some(maximum) = schema.get("maximum").and_then(Value::as_f64)
            && number > maximum
        {
            return Err(format!("the argument \"{path}\" must be at most {maximum}"));
        }
    }
    match value {
        Value::Array(items) => {
            let count = items.len() as u64;
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                && count < min
            {
                return Err(format!(
                    "the argument \"{path}\" must have at least {min} items, not {count}"
                ));
            }
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                && count > max
            {
                return Err(format!(
                    "the argument \"{path}\" must have at most {max} items, not {count}"
                ));
            }
            if let Some(Value::Object(item_schema)) = schema.get("items") {
                for (index, item) in items.iter().enumerate() {
                    check_value(item_schema, item, &format!("{path}[{index}]"), depth + 1)?;
                }
            }
        }
        Value::Object(object) => check_object(schema, object, &format!("{path}."), depth)?,
        _ => {}
    }
    Ok(())
}

fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let mut text = value.to_string();
    if text.len() > 40 {
        let mut end = 40;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    format!("{kind} ({text})")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn checks_what_mcpgym_schemas_say() {
        let schema = object(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "word": {"type": "string"},
                "flag": {"type": ["boolean", "null"]},
                "at": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
                "dir": {"enum": ["up", "down"], "type": "string"},
                "n": {"type": "integer", "minimum": 1, "maximum": 100}
            },
            "required": ["word"]
        }));
        let ok = |v: Value| check_input(&schema, &object(v));
        assert!(ok(json!({"word": "crane"})).is_ok());
        assert!(
            ok(json!({"word": "crane", "flag": null, "at": [1, 2], "dir": "up", "n": 3.0})).is_ok()
        );
        let err = ok(json!({})).unwrap_err();
        assert!(err.contains("\"word\" is required"), "{err}");
        let err = ok(json!({"word": 5})).unwrap_err();
        assert!(err.contains("must be string, not a number (5)"), "{err}");
        let err = ok(json!({"word": "a", "x": 1})).unwrap_err();
        assert!(err.contains("unknown argument \"x\""), "{err}");
        assert!(ok(json!({"word": "a", "at": [1]})).is_err());
        assert!(ok(json!({"word": "a", "at": [1, "b"]})).is_err());
        assert!(ok(json!({"word": "a", "dir": "left"})).is_err());
        assert!(ok(json!({"word": "a", "n": 0})).is_err());
        assert!(ok(json!({"word": "a", "n": 1.5})).is_err());
        assert!(ok(json!({"word": "a", "flag": "yes"})).is_err());
    }
}
