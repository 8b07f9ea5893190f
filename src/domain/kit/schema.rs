//! JSON Schema builders for tool specs, and the one constructor of a [`Tool`].
//!
//! Every domain describes its tools with these, so the `tools` list a model sees and the
//! validator in [`crate::domain::args`] read one schema. Descriptions are the domain's own.
//!
//! Architecture invariant: builds values only; knows no domain.

use crate::domain::{Intent, Tool, ToolFn, ToolKind, ToolSpec};
use serde_json::{Map, Value, json};

pub fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

pub fn integer(description: &str) -> Value {
    json!({"type": "integer", "description": description})
}

pub fn number(description: &str) -> Value {
    json!({"type": "number", "description": description})
}

pub fn boolean(description: &str) -> Value {
    json!({"type": "boolean", "description": description})
}

/// A string restricted to `values`.
pub fn one_of(values: &[&str], description: &str) -> Value {
    json!({"type": "string", "enum": values, "description": description})
}

pub fn array(items: Value, description: &str) -> Value {
    json!({"type": "array", "items": items, "description": description})
}

pub fn string_list(description: &str) -> Value {
    array(json!({"type": "string"}), description)
}

/// An object schema from `(name, schema)` pairs; `required` lists the mandatory names.
pub fn object(properties: &[(&str, Value)], required: &[&str]) -> Value {
    let props: Map<String, Value> = properties
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    json!({"type": "object", "properties": props, "required": required})
}

/// An object schema whose arguments are all required strings, from `(name, description)`
/// pairs (the most common tool signature).
pub fn strings(args: &[(&str, &str)]) -> Value {
    let props: Vec<(&str, Value)> = args.iter().map(|(k, d)| (*k, string(d))).collect();
    let required: Vec<&str> = args.iter().map(|(k, _)| *k).collect();
    object(&props, &required)
}

/// The same schema, also accepting JSON `null` (Python `Optional[...]` with no default).
pub fn nullable(mut schema: Value) -> Value {
    if let Some(t) = schema.get("type").cloned() {
        schema["type"] = json!([t, "null"]);
    }
    schema
}

/// A tool from its parts; the intent is inferred from the name (see [`Intent::infer`]) and
/// can be overridden with [`with_intent`]. Transfer tools end the episode.
pub fn tool<D>(
    name: &'static str,
    kind: ToolKind,
    description: &'static str,
    parameters: Value,
    run: ToolFn<D>,
) -> Tool<D> {
    Tool {
        spec: ToolSpec {
            name,
            kind,
            description,
            parameters,
            terminates: name.starts_with("transfer_to_human"),
            intent: Intent::infer(name, kind),
            declared: Default::default(),
        },
        run,
    }
}

/// Override a tool's inferred intent.
pub fn with_intent<D>(mut t: Tool<D>, intent: Intent) -> Tool<D> {
    t.spec.intent = intent;
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_makes_every_argument_a_required_string() {
        let s = strings(&[("id", "The id."), ("note", "A note.")]);
        assert_eq!(s["required"], json!(["id", "note"]));
        assert_eq!(
            s["properties"]["note"],
            json!({"type": "string", "description": "A note."})
        );
        assert_eq!(strings(&[])["properties"], json!({}));
    }
}
