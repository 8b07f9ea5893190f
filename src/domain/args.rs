//! Tool arguments: validation against a tool's JSON Schema, and typed access for tool code.
//!
//! The same schema a tool publishes in the OpenAI `tools` list is the one its arguments are
//! checked against here, so the model-facing contract and the enforced one cannot drift.
//! Supported schema keywords: `type` (object, string, integer, number, boolean, array),
//! `properties`, `required`, `enum`, `items`. Unknown arguments are rejected, as a Python
//! function rejects an unexpected keyword argument.
//!
//! Architecture invariant: nothing here knows a domain; errors are plain strings that become
//! the tool's `Error: ...` observation.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Check `args` against `schema`; the error names the offending argument path.
pub fn validate(schema: &Value, args: &Value) -> Result<(), String> {
    validate_at(schema, args, "")
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn validate_at(schema: &Value, value: &Value, path: &str) -> Result<(), String> {
    let label = if path.is_empty() { "arguments" } else { path };
    if let Some(expected) = schema.get("type").and_then(Value::as_str) {
        let actual = type_name(value);
        let ok = match expected {
            "number" => matches!(actual, "number" | "integer"),
            "integer" => {
                actual == "integer" || value.as_f64().map(|f| f.fract() == 0.0).unwrap_or(false)
            }
            other => actual == other,
        };
        if !ok {
            return Err(format!(
                "argument '{label}' must be of type {expected}, got {actual}"
            ));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        let shown: Vec<String> = options.iter().map(|o| o.to_string()).collect();
        return Err(format!(
            "argument '{label}' must be one of [{}], got {value}",
            shown.join(", ")
        ));
    }
    match value {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            if let Some(required) = schema.get("required").and_then(Value::as_array) {
                for key in required.iter().filter_map(Value::as_str) {
                    if !map.contains_key(key) {
                        return Err(format!("missing required argument '{}'", join(path, key)));
                    }
                }
            }
            if let Some(props) = props {
                for (key, v) in map {
                    match props.get(key) {
                        Some(sub) => validate_at(sub, v, &join(path, key))?,
                        None => {
                            return Err(format!("unexpected argument '{}'", join(path, key)));
                        }
                    }
                }
            }
            Ok(())
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    validate_at(item_schema, item, &format!("{label}[{i}]"))?;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Typed, already-validated arguments of one tool call.
pub struct Args<'a> {
    map: &'a Map<String, Value>,
}

static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

impl<'a> Args<'a> {
    pub fn new(value: &'a Value) -> Self {
        match value.as_object() {
            Some(map) => Args { map },
            None => Args { map: &EMPTY },
        }
    }

    pub fn value(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub fn str(&self, key: &str) -> Result<&'a str, String> {
        self.value(key)
            .ok_or_else(|| format!("missing required argument '{key}'"))?
            .as_str()
            .ok_or_else(|| format!("argument '{key}' must be a string"))
    }

    pub fn opt_str(&self, key: &str) -> Option<&'a str> {
        self.value(key).and_then(Value::as_str)
    }

    pub fn i64(&self, key: &str) -> Result<i64, String> {
        let v = self
            .value(key)
            .ok_or_else(|| format!("missing required argument '{key}'"))?;
        v.as_i64()
            .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            .ok_or_else(|| format!("argument '{key}' must be an integer"))
    }

    pub fn f64(&self, key: &str) -> Result<f64, String> {
        self.value(key)
            .ok_or_else(|| format!("missing required argument '{key}'"))?
            .as_f64()
            .ok_or_else(|| format!("argument '{key}' must be a number"))
    }

    pub fn bool(&self, key: &str) -> Result<bool, String> {
        self.value(key)
            .ok_or_else(|| format!("missing required argument '{key}'"))?
            .as_bool()
            .ok_or_else(|| format!("argument '{key}' must be a boolean"))
    }

    pub fn array(&self, key: &str) -> Result<&'a Vec<Value>, String> {
        self.value(key)
            .ok_or_else(|| format!("missing required argument '{key}'"))?
            .as_array()
            .ok_or_else(|| format!("argument '{key}' must be an array"))
    }

    pub fn str_list(&self, key: &str) -> Result<Vec<&'a str>, String> {
        self.array(key)?
            .iter()
            .map(|v| {
                v.as_str()
                    .ok_or_else(|| format!("argument '{key}' must be a list of strings"))
            })
            .collect()
    }

    /// Deserialize one argument into a typed value (e.g. a list of passenger structs).
    pub fn parse<T: DeserializeOwned>(&self, key: &str) -> Result<T, String> {
        let v = self
            .value(key)
            .ok_or_else(|| format!("missing required argument '{key}'"))?;
        serde_json::from_value(v.clone()).map_err(|e| format!("argument '{key}' is malformed: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "id": {"type": "string"},
            "n": {"type": "integer"},
            "cabin": {"type": "string", "enum": ["economy", "business"]},
            "items": {"type": "array", "items": {"type": "object",
                "properties": {"x": {"type": "number"}}, "required": ["x"]}}
        }, "required": ["id"]})
    }

    #[test]
    fn accepts_valid_and_names_the_bad_argument() {
        assert!(
            validate(
                &schema(),
                &json!({"id": "a", "n": 3, "items": [{"x": 1.5}]})
            )
            .is_ok()
        );
        assert_eq!(
            validate(&schema(), &json!({"n": 1})).unwrap_err(),
            "missing required argument 'id'"
        );
        assert!(
            validate(&schema(), &json!({"id": 5}))
                .unwrap_err()
                .contains("'id'")
        );
        assert!(
            validate(&schema(), &json!({"id": "a", "cabin": "first"}))
                .unwrap_err()
                .contains("one of")
        );
        assert!(
            validate(&schema(), &json!({"id": "a", "items": [{}]}))
                .unwrap_err()
                .contains("items[0].x")
        );
        assert!(
            validate(&schema(), &json!({"id": "a", "zz": 1}))
                .unwrap_err()
                .contains("unexpected argument 'zz'")
        );
        assert!(validate(&schema(), &json!("nope")).is_err());
    }
}
