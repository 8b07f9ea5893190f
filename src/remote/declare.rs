//! `domain.toml`: how to reach a remote domain and what Tracer must know of it that the
//! protocol does not say — its customers, where an argument's values come from, the policy
//! rules the tools do not enforce (docs/remote-domains.md). Parsed strictly: an unknown key
//! is an error naming the file and the key.
//!
//! Architecture invariant: parsing and checks only; no I/O beyond reading the file.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainFile {
    /// The program and its arguments, run in the domain's folder (stdio transport).
    #[serde(default)]
    pub command: Vec<String>,
    /// A loopback URL (HTTP transport), instead of `command`.
    pub url: Option<String>,
    /// The public environment it mirrors, or what it is (for `tracer list` and the docs).
    #[serde(default)]
    pub reference: Option<String>,
    /// Seconds each call may take (30 by default; starting the process gets the same).
    #[serde(default = "default_timeout")]
    pub timeout_s: f64,
    /// Whether training tasks use a database of their own (`tracer/reset` with split train).
    #[serde(default)]
    pub separate_train_db: bool,
    /// Whether the policy has the agent look the customer up before changing anything.
    #[serde(default = "yes")]
    pub identifies_customer: bool,
    pub customers: Customers,
    #[serde(default)]
    pub draw: Vec<Draw>,
    #[serde(default)]
    pub rule: Vec<Rule>,
    /// How a scripted instruction says who the customer is ("You are a busy nurse {tie}."):
    /// the domain's own ties (e.g. "who fills prescriptions at this pharmacy").
    #[serde(default)]
    pub ties: Vec<String>,
}

fn default_timeout() -> f64 {
    30.0
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Customers {
    /// The state table whose keys are the customers.
    pub table: String,
    /// The argument name a customer's id goes by.
    pub key: String,
    /// What the customer knows about themself; the first is how they identify.
    #[serde(default)]
    pub facts: Vec<Fact>,
    /// Rows the customer owns in other tables.
    #[serde(default)]
    pub owns: Vec<Owns>,
    /// The reads that show the customer's records.
    #[serde(default)]
    pub records: Vec<Record>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fact {
    pub kind: String,
    /// A second-person sentence with `{field}` placeholders from the customer's row.
    pub say: String,
    /// The fields whose values the sentence reveals.
    #[serde(default)]
    pub values: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Owns {
    pub table: String,
    /// The row field that holds the customer's id.
    pub owner: String,
    pub kind: String,
    pub say: String,
    #[serde(default)]
    pub values: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub tool: String,
    pub arg: String,
    /// The table whose customer-owned keys the read is called with; none: the customer's id.
    pub table: Option<String>,
    pub owner: Option<String>,
}

/// Where an argument's values come from.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Draw {
    pub arg: String,
    /// The keys of this table (or the values of `field` in its rows) ...
    pub table: Option<String>,
    pub field: Option<String>,
    /// ... of the rows whose `owner` field is the customer's id ...
    pub owner: Option<String>,
    /// ... and whose fields hold one of the listed values.
    #[serde(default, rename = "where")]
    pub filter: BTreeMap<String, Vec<toml::Value>>,
    /// Or a fixed list of values.
    pub values: Option<Vec<toml::Value>>,
    /// Only for these tools (all tools taking the argument when empty).
    #[serde(default)]
    pub tools: Vec<String>,
}

/// A policy rule as data: the call breaks it when the row its argument names has `field`
/// in `not_in` (or, with `in`, outside it).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub name: String,
    pub tool: String,
    pub arg: String,
    pub table: String,
    pub field: String,
    #[serde(default)]
    pub not_in: Vec<toml::Value>,
    #[serde(default, rename = "in")]
    pub only: Vec<toml::Value>,
    /// The violation's sentence; `{arg}` placeholders from the call.
    pub say: String,
}

impl DomainFile {
    /// Read and check `domain.toml`; the error names the file and what is wrong.
    pub fn read(path: &Path) -> Result<DomainFile, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file: DomainFile =
            toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let bad = |why: String| Err(format!("{}: {why}", path.display()));
        match (file.command.is_empty(), &file.url) {
            (true, None) => return bad("names neither `command` nor `url`".into()),
            (false, Some(_)) => return bad("names both `command` and `url` (choose one)".into()),
            _ => {}
        }
        if !(file.timeout_s > 0.0 && file.timeout_s <= 3600.0) {
            return bad(format!(
                "timeout_s: {} is not between 0 and 3600 seconds",
                file.timeout_s
            ));
        }
        for (i, d) in file.draw.iter().enumerate() {
            if d.table.is_some() == d.values.is_some() {
                return bad(format!(
                    "draw[{i}] ({}): name either `table` or `values`",
                    d.arg
                ));
            }
            if d.table.is_none() && (d.owner.is_some() || d.field.is_some() || !d.filter.is_empty())
            {
                return bad(format!(
                    "draw[{i}] ({}): `owner`, `field` and `where` go with `table`",
                    d.arg
                ));
            }
        }
        for r in &file.rule {
            if r.not_in.is_empty() == r.only.is_empty() {
                return bad(format!("rule '{}': give either `not_in` or `in`", r.name));
            }
        }
        if file
            .customers
            .facts
            .first()
            .is_some_and(|f| f.kind != "identity")
        {
            return bad(
                "customers.facts: the first fact is the identity (kind \"identity\")".into(),
            );
        }
        Ok(file)
    }
}
