//! Tool specs as data: a domain describes its tools (kind, description, arguments) in
//! `src/domain/<name>/tools.toml` and binds each to its function, so descriptions are
//! edited without touching Rust and the schema stays next to the words that explain it.
//!
//! ```toml
//! [[tool]]                           # in the order the tools are listed to a model
//! name = "schedule_appointment"
//! kind = "write"                     # read | write
//! description = "Book a new appointment ..."
//! intent = "book"                    # optional: overrides the name-inferred intent
//! args = [
//!   # type: string | integer | number | boolean | string_list
//!   { name = "date", type = "string", description = "Date of the visit, YYYY-MM-DD." },
//!   # optional: Python `Optional[...] = None` (may be absent or null);
//!   # default: has a default value (may be absent, never null)
//!   { name = "voucher_id", type = "string", description = "...", optional = true },
//! ]
//! ```
//!
//! Arguments are required unless `optional` or `default` says otherwise. Strings are leaked
//! once per process (specs are `'static`, built on first use).
//!
//! Architecture invariant: parsing and schema building only; knows no domain.

use super::schema;
use crate::domain::{Intent, Tool, ToolFn, ToolKind};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecFile {
    tool: Vec<ToolEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolEntry {
    name: String,
    kind: String,
    description: String,
    #[serde(default)]
    intent: Option<Intent>,
    #[serde(default)]
    args: Vec<ArgSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ArgSpec {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    description: String,
    #[serde(default)]
    optional: bool,
    #[serde(default)]
    default: Option<toml::Value>,
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn arg_schema(arg: &ArgSpec, tool: &str) -> Result<Value, String> {
    let d = arg.description.as_str();
    let base = match arg.kind.as_str() {
        "string" => schema::string(d),
        "integer" => schema::integer(d),
        "number" => schema::number(d),
        "boolean" => schema::boolean(d),
        "string_list" => schema::string_list(d),
        other => {
            return Err(format!(
                "tools.toml: [{tool}] argument '{}' has unknown type '{other}'",
                arg.name
            ));
        }
    };
    Ok(if arg.optional {
        schema::nullable(base)
    } else {
        base
    })
}

/// Parse a `tools.toml` and bind each table to the function of the same name in `runs`.
/// The error names the tool (and argument) that is wrong, a tool with no function, or a
/// function with no spec.
pub fn parse<D>(source: &str, runs: &[(&str, ToolFn<D>)]) -> Result<Vec<Tool<D>>, String> {
    let file: SpecFile = toml::from_str(source).map_err(|e| format!("tools.toml: {e}"))?;
    let mut tools = Vec::with_capacity(file.tool.len());
    for spec in file.tool {
        let name = spec.name;
        let kind = match spec.kind.as_str() {
            "read" => ToolKind::Read,
            "write" => ToolKind::Write,
            other => {
                return Err(format!(
                    "tools.toml: [{name}] kind must be read or write, not '{other}'"
                ));
            }
        };
        let run = runs
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
            .ok_or_else(|| format!("tools.toml: [{name}] has no tool function"))?;
        let mut properties = Vec::with_capacity(spec.args.len());
        let mut required = Vec::new();
        for arg in &spec.args {
            properties.push((arg.name.as_str(), arg_schema(arg, &name)?));
            if !arg.optional && arg.default.is_none() {
                required.push(arg.name.as_str());
            }
        }
        let parameters = schema::object(&properties, &required);
        let mut tool = schema::tool(leak(name), kind, leak(spec.description), parameters, run);
        if let Some(intent) = spec.intent {
            tool = schema::with_intent(tool, intent);
        }
        tools.push(tool);
    }
    if let Some((missing, _)) = runs
        .iter()
        .find(|(n, _)| !tools.iter().any(|t| t.spec.name == *n))
    {
        return Err(format!("tools.toml: no spec for tool function '{missing}'"));
    }
    Ok(tools)
}

/// Parse a domain's built-in `tools.toml`; a broken built-in file is a bug the domain's
/// tests and the conformance suite report, so this yields no tools rather than panicking.
pub fn builtin<D>(source: &str, runs: &[(&str, ToolFn<D>)]) -> Vec<Tool<D>> {
    parse(source, runs).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Args;

    fn echo(_: &mut (), args: &Args) -> Result<String, String> {
        Ok(args.str("x")?.to_string())
    }

    #[test]
    fn builds_schemas_in_file_order_and_names_what_is_wrong() {
        let src = r#"
            [[tool]]
            name = "b_tool"
            kind = "write"
            description = "B."
            intent = "cancel"
            args = [
              { name = "x", type = "string", description = "X." },
              { name = "n", type = "integer", description = "N.", optional = true },
              { name = "flag", type = "boolean", description = "F.", default = true },
            ]
            [[tool]]
            name = "a_tool"
            kind = "read"
            description = "A."
        "#;
        let runs: [(&str, ToolFn<()>); 2] = [("a_tool", echo), ("b_tool", echo)];
        let tools = parse(src, &runs).unwrap();
        assert_eq!(tools[0].spec.name, "b_tool", "file order is kept");
        let b = &tools[0].spec;
        assert_eq!(b.kind, ToolKind::Write);
        assert_eq!(b.intent, Intent::Cancel);
        assert_eq!(b.parameters["required"], serde_json::json!(["x"]));
        assert_eq!(
            b.parameters["properties"]["n"]["type"],
            serde_json::json!(["integer", "null"])
        );
        assert_eq!(tools[1].spec.intent, Intent::Lookup);
        let one = |body: &str| format!("[[tool]]\nname = \"c\"\ndescription = \"C.\"\n{body}");
        let no_fn = parse::<()>(&one("kind = \"read\""), &[])
            .err()
            .unwrap_or_default();
        assert!(no_fn.contains("[c] has no tool function"), "{no_fn}");
        let bad = parse::<()>(&one("kind = \"maybe\""), &[])
            .err()
            .unwrap_or_default();
        assert!(bad.contains("[c] kind"), "{bad}");
        let no_spec = parse(
            src,
            &[
                ("a_tool", echo as ToolFn<()>),
                ("b_tool", echo),
                ("z", echo),
            ],
        )
        .err()
        .unwrap_or_default();
        assert!(no_spec.contains("'z'"), "{no_spec}");
        let bad_type = parse(
            &one(
                "kind = \"read\"\nargs = [{ name = \"q\", type = \"date\", description = \"Q.\" }]",
            ),
            &[("c", echo as ToolFn<()>)],
        )
        .err()
        .unwrap_or_default();
        assert!(bad_type.contains("argument 'q'"), "{bad_type}");
    }
}
