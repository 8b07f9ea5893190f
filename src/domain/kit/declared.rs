//! What a domain's `tools.toml` declares of its tools' values, on each tool's spec, and
//! the readers the `Hooks` defaults use: the internal argument ids of a call
//! ([`ArgPath`]), what a read tells, and what a call lets the grounding search learn
//! ([`Learn`], [`observe`]). [`super::specs`] parses the file; its module docs describe
//! the keys.
//!
//! Architecture invariant: reads declarations, arguments and outputs; knows no domain.

use super::text;
use crate::domain::{GroundingContext, ToolSpec};
use serde_json::{Value, json};

/// What a `tools.toml` declares of one tool's values (see the module docs of
/// [`super::specs`]), on its
/// [`ToolSpec`]; the `Hooks` defaults read it.
#[derive(Clone, Debug, Default)]
pub struct Declared {
    /// Argument paths whose values a customer never knows: the tool's own `internal`, then
    /// the file-wide ones.
    pub internal: Vec<ArgPath>,
    /// Argument paths naming what a booking books (a show, a package's departure, a
    /// provider's slot): the tool's `target`, empty for other tools.
    pub target: Vec<ArgPath>,
    /// JSON pointers into the output whose values the agent must tell when the customer
    /// asked for this read; `None` when the tool declares none.
    pub tells: Option<&'static [&'static str]>,
    /// The argument and output fields no instruction may name: the file's
    /// `internal_fields`, one list per domain, on each of its tools.
    pub internal_fields: &'static [&'static str],
    /// The `*_id` fields of the customer's records that name the catalogue (a product, a
    /// flight, a cinema's show), public and never a fact about the customer: the file's
    /// `catalogue_ids`, one list per domain, on each of its tools.
    pub catalogue_ids: &'static [&'static str],
    /// Where a successful call reveals values the grounding search learns: the tool's own
    /// `learns`, then the file-wide ones.
    pub learns: Vec<Learn>,
    /// Output fields learnt besides every `*_id` string: the file's `learn_fields`.
    pub learn_fields: &'static [&'static str],
}

impl Declared {
    /// The internal ids among a call's arguments: the non-empty strings at the `internal`
    /// paths, each once, in path order.
    pub fn internal_ids(&self, args: &Value) -> Vec<String> {
        text::distinct_ids(self.internal.iter().flat_map(|p| p.strings(args)))
    }

    /// What a booking call books: the non-empty strings at the `target` paths, in path
    /// order (empty when the tool declares none).
    pub fn target_values(&self, args: &Value) -> Vec<String> {
        let values = self.target.iter().flat_map(|p| p.strings(args));
        values
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// What this read tells by its declaration ([`text::output_values`] at its `tells`),
    /// `None` when it declares none.
    pub fn told(&self, output: &str) -> Option<Vec<String>> {
        self.tells
            .map(|pointers| text::output_values(output, pointers))
    }

    /// Learn what a successful call of this tool revealed, in four steps: the `arg`
    /// entries; then, when the output is not JSON, the `text` entries (and nothing more);
    /// every `*_id` string anywhere in the output and the `learn_fields`
    /// ([`GroundingContext::learn_from_json`]); then the `list`, `keys` and `values`
    /// entries, in their order.
    pub fn observe(&self, args: &Value, output: &str, ctx: &mut GroundingContext) {
        for learn in &self.learns {
            if let Learn::Arg { name, key } = learn
                && let Some(value) = args.get(name).and_then(Value::as_str)
            {
                ctx.learn(key, value);
            }
        }
        let Ok(value) = serde_json::from_str::<Value>(output) else {
            for learn in &self.learns {
                if let Learn::Text { key } = learn {
                    ctx.learn(key, output);
                }
            }
            return;
        };
        ctx.learn_from_json(&value, self.learn_fields);
        for learn in &self.learns {
            match learn {
                Learn::List { pointer, key } => {
                    let listed = value.pointer(pointer).and_then(Value::as_array);
                    for id in listed.into_iter().flatten().filter_map(Value::as_str) {
                        ctx.learn(key, id);
                    }
                }
                Learn::Keys { pointer, key } => {
                    let map = value.pointer(pointer).and_then(Value::as_object);
                    for id in map.into_iter().flat_map(|m| m.keys()) {
                        ctx.learn(key, id);
                    }
                }
                Learn::Values { pointer, key } => {
                    let map = value.pointer(pointer).and_then(Value::as_object);
                    let values = map.into_iter().flat_map(|m| m.values());
                    for id in values.filter_map(Value::as_str) {
                        ctx.learn(key, id);
                    }
                }
                Learn::Arg { .. } | Learn::Text { .. } => {}
            }
        }
    }
}

/// Where a call reveals a value, and the key it is learnt under (`learns`, see the
/// module docs of [`super::specs`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Learn {
    /// The string argument `name` (`{ arg = "term" }`, `as` defaulting to the name).
    Arg { name: String, key: String },
    /// The whole output when it is not JSON: a lookup that prints a bare id.
    Text { key: String },
    /// Each string of the list at a JSON pointer into the output.
    List { pointer: String, key: String },
    /// Each key of the object at a JSON pointer into the output.
    Keys { pointer: String, key: String },
    /// Each string value of the object at a JSON pointer into the output.
    Values { pointer: String, key: String },
}

/// Learn what a successful call of `tool` revealed, as its declaration says
/// ([`Declared::observe`]); a tool with no spec reveals its output's `*_id` strings.
pub fn observe(
    specs: Vec<&'static ToolSpec>,
    tool: &str,
    args: &Value,
    output: &str,
    ctx: &mut GroundingContext,
) {
    declared(specs, tool)
        .unwrap_or(&UNDECLARED)
        .observe(args, output, ctx);
}

/// What a tool with no spec declares: nothing.
static UNDECLARED: Declared = Declared {
    internal: Vec::new(),
    target: Vec::new(),
    tells: None,
    internal_fields: &[],
    catalogue_ids: &[],
    learns: Vec::new(),
    learn_fields: &[],
};

/// What the tool named `tool` among `specs` declares, if there is one.
pub fn declared(specs: Vec<&'static ToolSpec>, tool: &str) -> Option<&'static Declared> {
    specs
        .into_iter()
        .find(|s| s.name == tool)
        .map(|s| &s.declared)
}

/// A path into a call's arguments, as `internal` writes it (see the module docs of
/// [`super::specs`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgPath(Vec<String>);

impl ArgPath {
    pub(super) fn parse(text: &str) -> Result<ArgPath, String> {
        let steps: Vec<String> = text.split('/').map(str::to_string).collect();
        if steps.iter().any(String::is_empty) {
            return Err("a path is names, '*' or '**' between single '/'s".into());
        }
        Ok(ArgPath(steps))
    }

    /// The path as written (`payments/*/payment_id`).
    pub(super) fn text(&self) -> String {
        self.0.join("/")
    }

    /// The strings the path reaches in `args`, in document order.
    pub fn strings<'a>(&self, args: &'a Value) -> Vec<&'a str> {
        fn walk<'a>(v: &'a Value, steps: &[String], out: &mut Vec<&'a str>) {
            let Some((step, rest)) = steps.split_first() else {
                out.extend(v.as_str());
                return;
            };
            match step.as_str() {
                "*" => value_children(v).for_each(|c| walk(c, rest, out)),
                "**" => {
                    walk(v, rest, out);
                    value_children(v).for_each(|c| walk(c, steps, out));
                }
                name => {
                    if let Some(c) = v.as_object().and_then(|m| m.get(name)) {
                        walk(c, rest, out);
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(args, &self.0, &mut out);
        out
    }

    /// Whether arguments valid under `schema` (an object schema) can hold a string here.
    pub(super) fn fits(&self, schema: &Value) -> bool {
        fn walk(schema: &Value, steps: &[String]) -> bool {
            let Some((step, rest)) = steps.split_first() else {
                let ty = &schema["type"];
                return ty == "string"
                    || ty.as_array().is_some_and(|t| t.contains(&json!("string")));
            };
            match step.as_str() {
                "*" => schema_children(schema).any(|c| walk(c, rest)),
                "**" => walk(schema, rest) || schema_children(schema).any(|c| walk(c, steps)),
                name => schema["properties"]
                    .get(name)
                    .or_else(|| schema.get("additionalProperties"))
                    .is_some_and(|c| walk(c, rest)),
            }
        }
        walk(schema, &self.0)
    }
}

/// The items of a list or the values of an object.
fn value_children(v: &Value) -> Box<dyn Iterator<Item = &Value> + '_> {
    match v {
        Value::Array(items) => Box::new(items.iter()),
        Value::Object(m) => Box::new(m.values()),
        _ => Box::new(std::iter::empty()),
    }
}

/// The schemas one step below a schema: its properties', its items', its map values'.
fn schema_children(schema: &Value) -> impl Iterator<Item = &Value> {
    let properties = schema["properties"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.values());
    properties
        .chain(schema.get("items"))
        .chain(schema.get("additionalProperties"))
}

#[cfg(test)]
mod tests {
    use super::super::specs::parse;
    use super::*;
    use crate::domain::{Args, ToolFn};

    fn echo(_: &mut (), args: &Args) -> Result<String, String> {
        Ok(args.str("x")?.to_string())
    }

    /// Each `(from, to, says)`: `src` with `from` replaced by `to` fails to parse with an
    /// error that contains `says`.
    fn each_edit_fails(src: &str, runs: &[(&str, ToolFn<()>)], wrong: &[(&str, &str, &str)]) {
        for (from, to, says) in wrong {
            assert!(src.contains(from), "{from}");
            let error = parse(&src.replace(from, to), runs).err();
            assert!(
                error.as_ref().is_some_and(|e| e.contains(says)),
                "{to}: {error:?}"
            );
        }
    }

    #[test]
    fn internal_paths_select_strings_at_any_depth_and_name_what_is_wrong() {
        let src = r#"
            internal = ["**/payment_id", "account_id"]
            internal_fields = ["agent_id"]
            [[shape]]
            name = "method"
            fields = [{ name = "payment_method_id", type = "string" }]
            [[shape]]
            name = "payment"
            fields = [
              { name = "payment_id", type = "string" },
              { name = "method", type = "method" },
              { name = "amount", type = "number" },
            ]
            [[tool]]
            kit = "think"
            [[tool]]
            name = "pay"
            kind = "write"
            description = "P."
            args = [
              { name = "payments", type = "list of payment" },
              { name = "item_ids", type = "list of string" },
              { name = "notes", type = "map of string", optional = true },
            ]
            internal = ["payments/*/method/payment_method_id", "item_ids/*", "notes/*"]
            [[tool]]
            name = "show"
            kind = "read"
            description = "S."
            args = [{ name = "account_id", type = "string" }]
            tells = ["/status", "/balance/current", ""]
        "#;
        let runs: [(&str, ToolFn<()>); 2] = [("pay", echo), ("show", echo)];
        let tools = parse(src, &runs).unwrap();
        let (think, pay, show) = (&tools[0].spec, &tools[1].spec, &tools[2].spec);
        let args = json!({
            "payment_id": "top",
            "payments": [
                {"payment_id": "p1", "method": {"payment_method_id": "m1"}, "amount": 5},
                {"payment_id": "", "method": {"payment_method_id": "m1"}},
                {"payment_id": 7, "method": null}
            ],
            "item_ids": ["i1", "i2", "p1"],
            "notes": {"a": "n1", "b": 3},
            "account_id": "acc"
        });
        assert_eq!(
            pay.declared.internal_ids(&args),
            ["m1", "i1", "i2", "p1", "n1", "top", "acc"],
            "the tool's paths, then the file's; non-empty strings, each once"
        );
        assert_eq!(
            think.declared.internal_ids(&json!({"payment_id": "x"})),
            ["x"]
        );
        assert_eq!(
            show.declared.internal_ids(&json!({"account_id": ""})),
            Vec::<String>::new()
        );
        assert_eq!(pay.declared.internal_fields, ["agent_id"]);
        assert_eq!(show.declared.internal_fields, ["agent_id"]);
        assert_eq!(pay.declared.tells, None);
        let out = r#"{"status": "open", "balance": {"current": 12.0}}"#;
        assert_eq!(show.declared.told(out).unwrap(), ["open", "12.0"]);
        assert_eq!(
            show.declared.told("\"7\"").unwrap(),
            ["7"],
            "\"\" is the whole output"
        );

        // (what to replace, with what, what the error says)
        let wrong = [
            (
                "payments/*/method/",
                "payments/*/methods/",
                "[pay] internal 'payments/*/methods/payment_method_id': no string argument",
            ),
            (
                "\"item_ids/*\"",
                "\"item_ids\"",
                "[pay] internal 'item_ids':",
            ),
            (
                "\"notes/*\"",
                "\"payments/*/amount\"",
                "internal 'payments/*/amount'",
            ),
            (
                "\"item_ids/*\"",
                "\"item_ids//*\"",
                "[pay] internal 'item_ids//*'",
            ),
            (
                "\"account_id\"]",
                "\"acount_id\"]",
                "tools.toml: internal 'acount_id'",
            ),
            (
                "**/payment_id",
                "**/method/payment_id",
                "internal '**/method/payment_id'",
            ),
            ("\"/status\"", "\"status\"", "[show] tells 'status'"),
            (
                "[\"/status\", \"/balance/current\", \"\"]",
                "[]",
                "[show] tells: no pointer",
            ),
            (
                "kind = \"read\"",
                "kind = \"write\"",
                "[show] tells: only a read tool tells",
            ),
            (
                "kit = \"think\"",
                "kit = \"think\"\ninternal = [\"thought\"]",
                "'think' takes no",
            ),
        ];
        each_edit_fails(src, &runs, &wrong);
    }

    #[test]
    fn a_booking_target_reads_its_paths_and_names_what_is_wrong() {
        let src = r#"
            [[shape]]
            name = "leg"
            fields = [{ name = "number", type = "string" }, { name = "date", type = "string" }]
            [[tool]]
            name = "book_trip"
            kind = "write"
            args = [{ name = "legs", type = "list of leg" }, { name = "seats", type = "integer" }]
            target = ["legs/*/number", "legs/*/date"]
            [[tool]]
            name = "show"
            kind = "read"
            args = [{ name = "trip_id", type = "string" }]
        "#;
        let runs: [(&str, ToolFn<()>); 2] = [("book_trip", echo), ("show", echo)];
        let tools = parse(src, &runs).unwrap();
        let legs = json!({"legs": [{"number": "F1", "date": "d1"}, {"number": "", "date": "d2"}]});
        assert_eq!(
            tools[0].spec.declared.target_values(&legs),
            ["F1", "d1", "d2"],
            "path order, empty strings left out"
        );
        assert!(tools[1].spec.declared.target.is_empty());
        let wrong = [
            (
                "\"legs/*/date\"",
                "\"seats\"",
                "[book_trip] target 'seats': no string",
            ),
            (
                "name = \"book_trip\"",
                "name = \"change_trip\"",
                "[change_trip] target: only a booking write",
            ),
            (
                "args = [{ name = \"trip_id\", type = \"string\" }]",
                "args = [{ name = \"trip_id\", type = \"string\" }]\ntarget = [\"trip_id\"]",
                "[show] target: only a booking write",
            ),
        ];
        let renamed: [(&str, ToolFn<()>); 2] = [("change_trip", echo), ("show", echo)];
        each_edit_fails(src, &runs, &wrong[..1]);
        each_edit_fails(src, &renamed, &wrong[1..2]);
        each_edit_fails(src, &runs, &wrong[2..]);
    }

    #[test]
    fn learns_follow_their_declarations_in_order_and_name_what_is_wrong() {
        let src = r#"
            learn_fields = ["term"]
            learns = [{ arg = "date" }, { arg = "new_date", as = "date" }]
            [[tool]]
            name = "find"
            kind = "read"
            args = [{ name = "email", type = "string" }]
            learns = [{ text = true, as = "member_id" }]
            [[tool]]
            name = "show"
            kind = "read"
            args = [{ name = "member_id", type = "string" }, { name = "date", type = "string" }]
            learns = [
              { arg = "member_id" },
              { list = "/loans", as = "loan_id" },
              { keys = "/cards", as = "card_id" },
              { values = "", as = "shelf" },
            ]
            [[tool]]
            name = "move"
            kind = "write"
            args = [{ name = "new_date", type = "string" }]
        "#;
        let runs: [(&str, ToolFn<()>); 3] = [("find", echo), ("show", echo), ("move", echo)];
        let tools = parse(src, &runs).unwrap();
        let specs: Vec<&'static ToolSpec> = tools
            .into_iter()
            .map(|t| &*Box::leak(Box::new(t.spec)))
            .collect();
        let learnt = |tool: &str, args: Value, output: &str| {
            let mut ctx = GroundingContext::default();
            observe(specs.clone(), tool, &args, output, &mut ctx);
            ctx.known
        };
        let find = learnt("find", json!({"email": "a@b"}), "M7");
        assert_eq!(find["member_id"], ["M7"], "a bare id is learnt");
        let json_output = learnt("find", json!({}), "{\"x_id\": \"X\"}");
        assert!(
            !json_output.contains_key("member_id"),
            "text only when not JSON"
        );
        let out = r#"{"loans": ["L1", 3, "L2"], "cards": {"C1": {}}, "term": "fall",
            "book_id": "B1", "title": "T", "note": {"author_id": "A1"}}"#;
        let show = learnt("show", json!({"member_id": "M1", "date": "d1"}), out);
        assert_eq!(show["member_id"], ["M1"]);
        assert_eq!(
            show["date"],
            ["d1"],
            "file-wide arg entries apply to every tool"
        );
        assert_eq!(show["loan_id"], ["L1", "L2"], "the strings of the list");
        assert_eq!(show["card_id"], ["C1"]);
        assert_eq!(
            show["shelf"],
            ["B1", "fall", "T"],
            "its string values, in key order"
        );
        assert_eq!(show["term"], ["fall"], "a learn_fields field");
        assert_eq!(show["author_id"], ["A1"], "every *_id at any depth");
        let moved = learnt("move", json!({"new_date": "d2"}), "Error-free text");
        assert_eq!(
            moved["date"],
            ["d2"],
            "arguments are learnt whatever the output"
        );
        assert_eq!(moved.len(), 1);
        assert!(learnt("nope", json!({"date": "d"}), "{\"a_id\": \"A\"}")["a_id"] == ["A"]);

        let wrong = [
            (
                "{ text = true, as = \"member_id\" }",
                "{ text = true }",
                "[find] learns: an entry other than arg needs 'as'",
            ),
            (
                "{ arg = \"member_id\" }",
                "{ arg = \"member\" }",
                "[show] learns: no argument 'member'",
            ),
            (
                "{ arg = \"new_date\", as = \"date\" }",
                "{ arg = \"old_date\" }",
                "tools.toml: learns: no argument 'old_date'",
            ),
            (
                "{ list = \"/loans\", as = \"loan_id\" }",
                "{ list = \"loans\", as = \"loan_id\" }",
                "[show] learns: 'loans': a JSON pointer starts with '/'",
            ),
            (
                "{ keys = \"/cards\", as = \"card_id\" }",
                "{ keys = \"/cards\", list = \"/x\", as = \"card_id\" }",
                "an entry names one of",
            ),
            (
                "{ values = \"\", as = \"shelf\" }",
                "{ value = \"\", as = \"shelf\" }",
                "unknown field `value`",
            ),
        ];
        each_edit_fails(src, &runs, &wrong);
    }
}
