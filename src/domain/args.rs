//! Tool arguments: validation against a tool's JSON Schema, and typed access for tool code.
//!
//! The same schema a tool publishes in the OpenAI `tools` list is the one its arguments are
//! checked against here, so the model-facing contract and the enforced one cannot drift.
//! Supported schema keywords: `type` (object, string, integer, number, boolean, array),
//! `properties`, `required`, `enum`, `items`. Unknown arguments are rejected, as a Python
//! function rejects an unexpected keyword argument. An integer must fit a 64-bit signed
//! integer: `1e308` or `2**64` is an argument error, never silently clamped to `i64::MAX`
//! (a departure from Python, whose integers are unbounded; no real call needs them).
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

/// An integral JSON number as i64: `None` when it is not integral, `Some(Err)` when it is
/// but does not fit (so it is reported, never saturated).
fn integer(v: &Value) -> Option<Result<i64, ()>> {
    if let Some(i) = v.as_i64() {
        return Some(Ok(i));
    }
    if v.as_u64().is_some() {
        return Some(Err(()));
    }
    let f = v.as_f64()?;
    if f.fract() != 0.0 {
        return None;
    }
    // -2^63 is exact in f64; 2^63 is the first value past i64::MAX.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    Some(if (-LIMIT..LIMIT).contains(&f) {
        Ok(f as i64)
    } else {
        Err(())
    })
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
            "integer" => match integer(value) {
                Some(Ok(_)) => true,
                Some(Err(())) => {
                    return Err(format!(
                        "argument '{label}' is out of range for an integer, got {value}"
                    ));
                }
                None => false,
            },
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
        match integer(v) {
            Some(Ok(i)) => Ok(i),
            Some(Err(())) => Err(format!(
                "argument '{key}' is out of range for an integer, got {v}"
            )),
            None => Err(format!("argument '{key}' must be an integer")),
        }
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

    #[test]
    fn integers_out_of_range_are_errors_not_saturated() {
        let huge: Value = serde_json::from_str(r#"{"id": "a", "n": 1e308}"#).unwrap();
        let two_64: Value =
            serde_json::from_str(r#"{"id": "a", "n": 18446744073709551616}"#).unwrap();
        let u64_max: Value =
            serde_json::from_str(r#"{"id": "a", "n": 18446744073709551615}"#).unwrap();
        for args in [&huge, &two_64, &u64_max] {
            let err = validate(&schema(), args).unwrap_err();
            assert!(err.contains("'n' is out of range for an integer"), "{err}");
            let err = Args::new(args).i64("n").err().unwrap();
            assert!(err.contains("out of range"), "{err}");
        }
        let fine = json!({"id": "a", "n": 3.0});
        assert!(validate(&schema(), &fine).is_ok());
        assert_eq!(Args::new(&fine).i64("n"), Ok(3));
        let min: Value = serde_json::from_str(r#"{"n": -9223372036854775808}"#).unwrap();
        assert_eq!(Args::new(&min).i64("n"), Ok(i64::MIN));
        assert!(
            Args::new(&json!({"n": 2.5}))
                .i64("n")
                .unwrap_err()
                .contains("must be an integer")
        );
    }
}
