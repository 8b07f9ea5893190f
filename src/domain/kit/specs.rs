//! Tool specs as data: a domain describes its tools (kind, description, arguments) in
//! `src/domain/<name>/tools.toml` and binds each to its function, so descriptions are
//! edited without touching Rust and the schema stays next to the words that explain it.
//! The file also declares what the pipeline must know about the tools' values: which
//! argument values a customer never knows (`internal`, `internal_fields`), what a read
//! tells the customer who asked for it (`tells`) and what a call lets the grounding search
//! learn for later proposals (`learns`, `learn_fields`); [`super::declared`] holds what
//! they become and the readers.
//!
//! ```toml
//! # File-wide keys come first (TOML puts a key after a table header in that table).
//! internal = ["account_id", "**/payment_id"]  # argument paths internal on every tool
//! internal_fields = ["agent_id"]     # argument and output fields no instruction may name
//! catalogue_ids = ["product_id"]      # record `*_id` fields naming the catalogue, not the customer
//! learn_fields = ["term"]            # output fields learnt besides every `*_id` string
//! learns = [{ arg = "term" }]        # learnt from every tool that takes the argument
//!
//! [[shape]]                          # a named object type, for arguments below
//! name = "payment"
//! fields = [
//!   { name = "payment_id", type = "string", description = "Saved method id." },
//!   { name = "amount", type = "number", description = "Dollars charged to it." },
//! ]
//!
//! [[tool]]                           # one of the kit's generic tools, in its place
//! kit = "think"                      # think | transfer_to_human_agents | calculate (tau2's)
//!
//! [[tool]]                           # in the order the tools are listed to a model
//! name = "schedule_appointment"
//! kind = "write"                     # read | write
//! description = "Book a new appointment ..."
//! intent = "book"                    # optional: overrides the name-inferred intent
//! args = [
//!   # type: string | integer | number | boolean | string_list | a shape's name |
//!   #       list of <type> | map of <type> (an object of any keys with <type> values)
//!   { name = "date", type = "string", description = "Date of the visit, YYYY-MM-DD." },
//!   # enum: the allowed strings (of the string, or of a list's or map's strings)
//!   { name = "cabin", type = "string", enum = ["economy", "business"] },
//!   { name = "payments", type = "list of payment", description = "How the total is split." },
//!   # optional: Python `Optional[...] = None` (may be absent or null);
//!   # default: has a default value (may be absent, never null);
//!   # nullable: must be given, may be null
//!   { name = "voucher_id", type = "string", description = "...", optional = true },
//! ]
//! # optional: argument paths whose values a customer never knows (an instruction must
//! # not name them; verification asks a stated fact to resolve them)
//! internal = ["payments/*/payment_id", "voucher_id"]
//!
//! [[tool]]
//! name = "book_package"
//! # ...
//! # optional, bookings only: the argument paths naming what is booked; cancelling a
//! # booking of it and booking it again in one task is incoherent (`cancel_rebook`)
//! target = ["package_id", "departure_date"]
//!
//! [[tool]]
//! name = "get_appointment_details"
//! kind = "read"
//! description = "..."
//! args = [{ name = "appointment_id", type = "string" }]
//! tells = ["/status", "/fee/amount"]  # optional, reads only: what the agent must tell
//! # optional: what a successful call reveals, learnt under `as` for later proposals
//! learns = [
//!   { arg = "new_date", as = "date" },              # a string argument
//!   { list = "/appointments", as = "appointment_id" },  # the strings of an output list
//!   { keys = "/payment_methods", as = "payment_id" },   # the keys of an output object
//!   { values = "/by_name", as = "product_id" },   # the string values of an output object
//! ]
//!
//! [[tool]]
//! name = "find_patient_id_by_email"
//! # ...
//! learns = [{ text = true, as = "patient_id" }]  # the whole output, when it is not JSON
//! ```
//!
//! Arguments and fields are required unless `optional` or `default` says otherwise; a
//! description may be left out (the reference leaves some out). A shape may use the shapes
//! named before it. Strings are leaked once per process (specs are `'static`, built on
//! first use).
//!
//! `internal` paths ([`ArgPath`]) go from the arguments object down, `/` between names:
//! `*` is every item of a list (or every value of an object), `**` any number of levels,
//! none too (`**/payment_id`: a `payment_id` anywhere). Each must reach a string argument
//! of its tool's schema, and a file-wide one of at least one tool's; the file-wide paths
//! apply to every tool, after the tool's own. A call's internal ids are the non-empty
//! strings its arguments hold there, each once, in path order
//! ([`Declared::internal_ids`]).
//!
//! `tells` are JSON pointers into the read's output (`""` the whole output); what they
//! tell is [`text::output_values`]: a non-empty string as it is, a number as Python prints
//! it (`7`, `1300.0`), each of those in a list, in pointer order with repeats kept. A tool
//! that declares `tells` is answered by them alone; one that does not is left to the
//! domain's `required_outputs` hook (see [`crate::domain::Hooks::required_outputs`]).
//!
//! `learns` entries are read after a successful call ([`Declared::observe`]): `arg`
//! entries first, then — when the output is not JSON — `text` entries and nothing else;
//! otherwise every `*_id` string anywhere in the output and each `learn_fields` field,
//! then `list`, `keys` and `values` entries in their order. A tool's own entries come before the
//! file-wide ones, which apply to every tool (an `arg` among them must be some tool's
//! argument).
//!
//! Errors name the file, the tool and the key that is wrong.
//!
//! Architecture invariant: parsing, schema building and reading the declared paths; knows
//! no domain.

pub use super::declared::{ArgPath, Declared, Learn, declared};
use super::schema;
use crate::domain::{Intent, Tool, ToolFn, ToolKind, ToolSpec};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecFile {
    /// Argument paths internal on every tool.
    #[serde(default)]
    internal: Vec<String>,
    #[serde(default)]
    internal_fields: Vec<String>,
    /// `*_id` fields of the customer's records that name the catalogue.
    #[serde(default)]
    catalogue_ids: Vec<String>,
    /// What every tool that fits lets the grounding search learn.
    #[serde(default)]
    learns: Vec<LearnEntry>,
    #[serde(default)]
    learn_fields: Vec<String>,
    #[serde(default)]
    shape: Vec<ShapeEntry>,
    tool: Vec<ToolEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShapeEntry {
    name: String,
    fields: Vec<ArgSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolEntry {
    /// One of the kit's generic tools ([`kit_tool`]), which brings its own spec and
    /// function: the entry names nothing else.
    kit: Option<String>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    intent: Option<Intent>,
    #[serde(default)]
    args: Vec<ArgSpec>,
    #[serde(default)]
    internal: Vec<String>,
    #[serde(default)]
    tells: Option<Vec<String>>,
    #[serde(default)]
    learns: Vec<LearnEntry>,
    #[serde(default)]
    target: Vec<String>,
}

/// One `learns` entry: a source (`arg`, `text`, `list`, `keys` or `values`) and the key it is
/// learnt under (`as`; an `arg` defaults to its own name).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LearnEntry {
    arg: Option<String>,
    #[serde(default)]
    text: bool,
    list: Option<String>,
    keys: Option<String>,
    values: Option<String>,
    #[serde(rename = "as")]
    key: Option<String>,
}

impl LearnEntry {
    /// The entry as a [`Learn`]; the error (after `owner: `) says what is wrong.
    fn parse(self) -> Result<Learn, String> {
        let sources = usize::from(self.arg.is_some())
            + usize::from(self.text)
            + usize::from(self.list.is_some())
            + usize::from(self.keys.is_some())
            + usize::from(self.values.is_some());
        if sources != 1 {
            return Err("an entry names one of arg, text, list, keys or values".into());
        }
        let named = |key: Option<String>| key.ok_or("an entry other than arg needs 'as'");
        let pointer = |p: String| {
            if p.is_empty() || p.starts_with('/') {
                Ok(p)
            } else {
                Err(format!(
                    "'{p}': a JSON pointer starts with '/' (\"\" is the whole output)"
                ))
            }
        };
        Ok(match (self.arg, self.list, self.keys, self.values) {
            (Some(name), ..) => Learn::Arg {
                key: self.key.unwrap_or_else(|| name.clone()),
                name,
            },
            (_, Some(p), ..) => Learn::List {
                pointer: pointer(p)?,
                key: named(self.key)?,
            },
            (_, _, Some(p), _) => Learn::Keys {
                pointer: pointer(p)?,
                key: named(self.key)?,
            },
            (.., Some(p)) => Learn::Values {
                pointer: pointer(p)?,
                key: named(self.key)?,
            },
            _ => Learn::Text {
                key: named(self.key)?,
            },
        })
    }
}

/// `learns` entries, each parsed; an `arg` must be an argument `fits` accepts. The error
/// starts with `owner` (file, tool and key).
fn learns(
    entries: Vec<LearnEntry>,
    owner: &str,
    fits: impl Fn(&str) -> bool,
) -> Result<Vec<Learn>, String> {
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        let learn = entry.parse().map_err(|e| format!("{owner}: {e}"))?;
        if let Learn::Arg { name, .. } = &learn
            && !fits(name)
        {
            return Err(format!("{owner}: no argument '{name}' to learn from"));
        }
        out.push(learn);
    }
    Ok(out)
}

/// Whether a tool's parameters have an argument of this name.
fn has_arg(parameters: &Value, name: &str) -> bool {
    parameters["properties"].get(name).is_some()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ArgSpec {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    optional: bool,
    #[serde(default)]
    nullable: bool,
    #[serde(default)]
    default: Option<toml::Value>,
    #[serde(default, rename = "enum")]
    values: Option<Vec<String>>,
}

impl ArgSpec {
    fn required(&self) -> bool {
        !self.optional && self.default.is_none()
    }
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The schema of a type name (see the module docs); `values` restricts its strings.
fn type_schema(
    ty: &str,
    values: Option<&[String]>,
    shapes: &BTreeMap<String, Value>,
) -> Result<Value, String> {
    let ty = ty.trim();
    if let Some(inner) = ty.strip_prefix("list of ") {
        return Ok(json!({"type": "array", "items": type_schema(inner, values, shapes)?}));
    }
    if let Some(inner) = ty.strip_prefix("map of ") {
        let inner = type_schema(inner, values, shapes)?;
        return Ok(json!({"type": "object", "additionalProperties": inner}));
    }
    match ty {
        "string" => Ok(match values {
            Some(values) => json!({"type": "string", "enum": values}),
            None => json!({"type": "string"}),
        }),
        "string_list" => type_schema("list of string", values, shapes),
        "integer" | "number" | "boolean" if values.is_none() => Ok(json!({"type": ty})),
        "integer" | "number" | "boolean" => Err(format!("'enum' needs strings, not {ty}")),
        _ => shapes
            .get(ty)
            .cloned()
            .ok_or_else(|| format!("unknown type '{ty}'")),
    }
}

/// One argument's (or field's) schema: its type, description and nullability.
fn arg_schema(arg: &ArgSpec, shapes: &BTreeMap<String, Value>) -> Result<Value, String> {
    let mut schema = type_schema(&arg.kind, arg.values.as_deref(), shapes)?;
    if let Some(d) = &arg.description {
        schema["description"] = json!(d);
    }
    Ok(if arg.optional || arg.nullable {
        schema::nullable(schema)
    } else {
        schema
    })
}

/// An object schema from argument specs (a tool's parameters or a shape's fields); the
/// error names `owner` and the argument that is wrong.
fn object_schema(
    args: &[ArgSpec],
    shapes: &BTreeMap<String, Value>,
    owner: &str,
) -> Result<Value, String> {
    let mut properties = Map::new();
    for arg in args {
        let schema = arg_schema(arg, shapes)
            .map_err(|e| format!("tools.toml: [{owner}] argument '{}': {e}", arg.name))?;
        properties.insert(arg.name.clone(), schema);
    }
    let required: Vec<&str> = args
        .iter()
        .filter(|a| a.required())
        .map(|a| a.name.as_str())
        .collect();
    Ok(json!({"type": "object", "properties": properties, "required": required}))
}

/// Parse a `tools.toml` and bind each table to the function of the same name in `runs`.
/// The error names the tool (and argument or key) that is wrong, a tool with no function,
/// or a function with no spec.
pub fn parse<D>(source: &str, runs: &[(&str, ToolFn<D>)]) -> Result<Vec<Tool<D>>, String> {
    let file: SpecFile = toml::from_str(source).map_err(|e| format!("tools.toml: {e}"))?;
    let mut shapes = BTreeMap::new();
    for shape in &file.shape {
        let schema = object_schema(&shape.fields, &shapes, &shape.name)?;
        shapes.insert(shape.name.clone(), schema);
    }
    let everywhere = paths(&file.internal, "tools.toml: internal")?;
    let internal_fields = leak_list(file.internal_fields);
    let catalogue_ids = leak_list(file.catalogue_ids);
    let learn_fields = leak_list(file.learn_fields);
    let mut tools = Vec::with_capacity(file.tool.len());
    for spec in file.tool {
        let mut tool = if let Some(kit) = &spec.kit {
            let bare = spec.name.is_empty() && spec.kind.is_empty() && spec.description.is_empty();
            let declares = !spec.internal.is_empty()
                || spec.tells.is_some()
                || !spec.learns.is_empty()
                || !spec.target.is_empty();
            if !bare || declares || spec.intent.is_some() || !spec.args.is_empty() {
                return Err(format!(
                    "tools.toml: the kit's tool '{kit}' takes no other keys"
                ));
            }
            kit_tool(kit).ok_or_else(|| format!("tools.toml: no kit tool '{kit}'"))?
        } else {
            named_tool(spec, &shapes, runs)?
        };
        tool.spec
            .declared
            .internal
            .extend(everywhere.iter().cloned());
        tool.spec.declared.internal_fields = internal_fields;
        tool.spec.declared.catalogue_ids = catalogue_ids;
        tool.spec.declared.learn_fields = learn_fields;
        tools.push(tool);
    }
    let fits_some = |name: &str| tools.iter().any(|t| has_arg(&t.spec.parameters, name));
    let everywhere_learns = learns(file.learns, "tools.toml: learns", fits_some)?;
    for tool in &mut tools {
        let declared = &mut tool.spec.declared;
        declared.learns.extend(everywhere_learns.iter().cloned());
    }
    if let Some((missing, _)) = runs
        .iter()
        .find(|(n, _)| !tools.iter().any(|t| t.spec.name == *n))
    {
        return Err(format!("tools.toml: no spec for tool function '{missing}'"));
    }
    if let Some(path) = everywhere
        .iter()
        .find(|p| !tools.iter().any(|t| p.fits(&t.spec.parameters)))
    {
        return Err(format!(
            "tools.toml: internal '{}': no tool has a string argument there",
            path.text()
        ));
    }
    Ok(tools)
}

/// A `[[tool]]` of the domain's own, bound to its function in `runs`, with what it declares.
fn named_tool<D>(
    spec: ToolEntry,
    shapes: &BTreeMap<String, Value>,
    runs: &[(&str, ToolFn<D>)],
) -> Result<Tool<D>, String> {
    if spec.name.is_empty() {
        return Err("tools.toml: a [[tool]] needs a name (or names a kit tool)".into());
    }
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
    let parameters = object_schema(&spec.args, shapes, &name)?;
    let internal = paths(&spec.internal, &format!("tools.toml: [{name}] internal"))?;
    if let Some(path) = internal.iter().find(|p| !p.fits(&parameters)) {
        return Err(format!(
            "tools.toml: [{name}] internal '{}': no string argument there",
            path.text()
        ));
    }
    let target = paths(&spec.target, &format!("tools.toml: [{name}] target"))?;
    if let Some(path) = target.iter().find(|p| !p.fits(&parameters)) {
        return Err(format!(
            "tools.toml: [{name}] target '{}': no string argument there",
            path.text()
        ));
    }
    let owner = format!("tools.toml: [{name}] learns");
    let learns = learns(spec.learns, &owner, |arg| has_arg(&parameters, arg))?;
    let tells = spec.tells.map(|t| tells(&name, kind, t)).transpose()?;
    let mut tool = schema::tool(leak(name), kind, leak(spec.description), parameters, run);
    if let Some(intent) = spec.intent {
        tool = schema::with_intent(tool, intent);
    }
    if !target.is_empty() && tool.spec.intent != Intent::Book {
        return Err(format!(
            "tools.toml: [{}] target: only a booking write (intent \"book\") names a target",
            tool.spec.name
        ));
    }
    tool.spec.declared.internal = internal;
    tool.spec.declared.target = target;
    tool.spec.declared.tells = tells;
    tool.spec.declared.learns = learns;
    Ok(tool)
}

/// `internal` paths, each parsed; the error starts with `key` (file, tool and key).
/// A remote domain's tools (`src/remote`): the specs its server lists (name, kind,
/// description, schema), each with what the domain's `tools.toml` declares of it by name —
/// the declaration keys of the built-in format (`internal`, `target`, `tells`, `learns`,
/// `intent` and the file-wide ones), without `kind`, `description` or `args`, which the
/// server owns. A `[[tool]]` naming a tool the server does not list is an error.
pub fn declare(source: Option<&str>, listed: Vec<ToolSpec>) -> Result<Vec<ToolSpec>, String> {
    let Some(source) = source else {
        return Ok(listed);
    };
    let file: SpecFile = toml::from_str(source).map_err(|e| format!("tools.toml: {e}"))?;
    let everywhere = paths(&file.internal, "tools.toml: internal")?;
    let internal_fields = leak_list(file.internal_fields);
    let catalogue_ids = leak_list(file.catalogue_ids);
    let learn_fields = leak_list(file.learn_fields);
    let mut specs = listed;
    for entry in file.tool {
        let name = entry.name.clone();
        if entry.kit.is_some() || name.is_empty() {
            return Err(
                "tools.toml: a remote domain's [[tool]] names one of its server's tools (no `kit`)"
                    .into(),
            );
        }
        if !entry.kind.is_empty() || !entry.description.is_empty() || !entry.args.is_empty() {
            return Err(format!(
                "tools.toml: [{name}] kind, description and args come from the server's tools/list; leave them out"
            ));
        }
        let spec = specs
            .iter_mut()
            .find(|s| s.name == name)
            .ok_or_else(|| format!("tools.toml: [{name}] the server lists no such tool"))?;
        let internal = paths(&entry.internal, &format!("tools.toml: [{name}] internal"))?;
        if let Some(path) = internal.iter().find(|p| !p.fits(&spec.parameters)) {
            return Err(format!(
                "tools.toml: [{name}] internal '{}': no string argument there",
                path.text()
            ));
        }
        let target = paths(&entry.target, &format!("tools.toml: [{name}] target"))?;
        let owner = format!("tools.toml: [{name}] learns");
        let parameters = spec.parameters.clone();
        spec.declared.learns = learns(entry.learns, &owner, |a| has_arg(&parameters, a))?;
        spec.declared.tells = entry
            .tells
            .map(|t| tells(&name, spec.kind, t))
            .transpose()?;
        if let Some(intent) = entry.intent {
            spec.intent = intent;
        }
        spec.declared.internal = internal;
        spec.declared.target = target;
    }
    let fits_some = |name: &str| specs.iter().any(|t| has_arg(&t.parameters, name));
    let everywhere_learns = learns(file.learns, "tools.toml: learns", fits_some)?;
    for spec in &mut specs {
        spec.declared.internal.extend(everywhere.iter().cloned());
        spec.declared.internal_fields = internal_fields;
        spec.declared.catalogue_ids = catalogue_ids;
        spec.declared.learn_fields = learn_fields;
        spec.declared
            .learns
            .extend(everywhere_learns.iter().cloned());
    }
    Ok(specs)
}

fn paths(texts: &[String], key: &str) -> Result<Vec<ArgPath>, String> {
    texts
        .iter()
        .map(|p| ArgPath::parse(p).map_err(|e| format!("{key} '{p}': {e}")))
        .collect()
}

/// A read's `tells`: JSON pointers into its output, at least one.
fn tells(
    name: &str,
    kind: ToolKind,
    pointers: Vec<String>,
) -> Result<&'static [&'static str], String> {
    if kind != ToolKind::Read {
        return Err(format!(
            "tools.toml: [{name}] tells: only a read tool tells"
        ));
    }
    if pointers.is_empty() {
        return Err(format!(
            "tools.toml: [{name}] tells: no pointer (leave the key out)"
        ));
    }
    if let Some(bad) = pointers
        .iter()
        .find(|p| !p.is_empty() && !p.starts_with('/'))
    {
        return Err(format!(
            "tools.toml: [{name}] tells '{bad}': a JSON pointer starts with '/' (\"\" is the whole output)"
        ));
    }
    Ok(leak_list(pointers))
}

fn leak_list(items: Vec<String>) -> &'static [&'static str] {
    Box::leak(
        items
            .into_iter()
            .map(leak)
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    )
}

/// The kit's generic tool of this name: `think`, `transfer_to_human_agents` (both
/// [`super::generic`]) or `calculate` (tau2's wording, [`super::tau2_generic`]).
fn kit_tool<D>(name: &str) -> Option<Tool<D>> {
    match name {
        "think" => Some(super::generic::think()),
        "transfer_to_human_agents" => Some(super::generic::transfer_to_human_agents()),
        "calculate" => Some(super::tau2_generic::calculate()),
        _ => None,
    }
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

    #[test]
    fn shapes_lists_maps_and_enums_build_nested_schemas() {
        let src = r#"
            [[shape]]
            name = "leg"
            fields = [
              { name = "flight", type = "string", description = "F." },
              { name = "note", type = "string", optional = true },
            ]
            [[shape]]
            name = "trip"
            fields = [{ name = "legs", type = "list of leg" }]
            [[tool]]
            name = "t"
            kind = "write"
            description = "T."
            args = [
              { name = "trip", type = "trip", description = "The trip." },
              { name = "grades", type = "map of string", enum = ["a", "b"], optional = true },
              { name = "cabin", type = "string", enum = ["x", "y"] },
              { name = "insurance", type = "string", nullable = true },
            ]
        "#;
        let runs: [(&str, ToolFn<()>); 1] = [("t", echo)];
        let p = &parse(src, &runs).unwrap()[0].spec.parameters;
        let leg = serde_json::json!({"type": "object", "required": ["flight"], "properties": {
            "flight": {"type": "string", "description": "F."},
            "note": {"type": ["string", "null"]}}});
        assert_eq!(
            p["properties"]["trip"],
            serde_json::json!({"type": "object", "description": "The trip.", "required": ["legs"],
                "properties": {"legs": {"type": "array", "items": leg}}})
        );
        assert_eq!(
            p["properties"]["grades"],
            serde_json::json!({"type": ["object", "null"],
                "additionalProperties": {"type": "string", "enum": ["a", "b"]}})
        );
        assert_eq!(
            p["properties"]["cabin"],
            serde_json::json!({"type": "string", "enum": ["x", "y"]})
        );
        assert_eq!(
            p["required"],
            serde_json::json!(["trip", "cabin", "insurance"])
        );
        assert_eq!(
            p["properties"]["insurance"]["type"],
            serde_json::json!(["string", "null"])
        );
        let unknown = parse(&src.replace("list of leg", "list of seg"), &runs)
            .err()
            .unwrap_or_default();
        assert!(
            unknown.contains("[trip] argument 'legs': unknown type 'seg'"),
            "{unknown}"
        );
        let bad_enum = parse(&src.replace("\"map of string\"", "\"integer\""), &runs)
            .err()
            .unwrap_or_default();
        assert!(bad_enum.contains("argument 'grades'"), "{bad_enum}");
    }
}
