//! The domain kit: what every domain shares, so a domain module holds only what is its own
//! (its rows, its tools' behaviour, its generator's distributions, its policy rules).
//!
//! - [`calc`]: the one `calculate` (Python's `round(x, 2)` exactly).
//! - [`pyjson`]: outputs as the references print them (`json.dumps`, tau2's `to_json_str`).
//! - [`python`]: Python value semantics (insertion-ordered dicts, hash-canonical rows,
//!   `float(str)`, `%.2f`, `repr`, tables read in file order).
//! - [`pytext`]: hand-written text outputs as Python-f-string templates over a row.
//! - [`schema`]: JSON Schema builders and the [`schema::tool`] constructor (intent inferred).
//! - [`ids`]: id minting (length counters, max+1 over a prefix, fixed slot lists).
//! - [`clock`]: the simulation clock and calendar arithmetic (no wall clock anywhere).
//! - [`facts`]: identity / name / entity user facts.
//! - [`templates`]: request sentences as data (`src/domain/<name>/requests.toml`).
//! - [`propose`]: candidate values, seeded combinations and the dry-run filter for
//!   grounding proposals.
//! - [`policy`]: named policy rules per write tool, shared by grounding, graph
//!   verification and task verification.
//! - [`text`]: small phrasing helpers.
//! - [`specs`]: tool specs as data (`src/domain/<name>/tools.toml`) bound to their
//!   functions, with what they declare of their values (internal ids and fields, what a
//!   read tells, what a call lets grounding learn) in [`declared`], which the `Hooks`
//!   defaults read.
//! - [`strptime`]: Python's `datetime.strptime` for the numeric date formats reference
//!   tools parse (what they accept and refuse).
//! - [`generic`]: the generic tools (`think`, `transfer_to_human_agents`, `calculate`).
//! - [`draw`]: seeded draws for generators (uniform, weighted, codes, digits, unique
//!   emails).
//! - [`glue`]: the `Domain` impl and the `Database` glue as one-line macros.
//! - [`tau2`]: what the ToolOrchestra tau2-style domains share (`db.json` tables in
//!   `model_dump()` form, `YY-MM-DD` dates, Python's `int()`, saved payment methods).
//! - [`rows`]: row shapes several domains share (a name, a postal address, a saved
//!   payment method).
//! - [`tau2_generic`]: the generic tools in tau2's wording (`calculate`'s refusal).
//!
//! The conformance suite (`domain::conformance`, tests only) runs over every registered
//! domain, so a new domain inherits those tests.
//!
//! Architecture invariant: the kit knows no particular domain, and nothing above the
//! domain layer (stages, artifacts, LLMs, CLI).

pub mod calc;
pub mod clock;
pub mod declared;
pub mod draw;
pub mod facts;
pub mod generic;
pub mod glue;
pub mod ids;
pub mod policy;
pub mod propose;
pub mod pyjson;
pub mod pytext;
pub mod python;
pub mod rows;
pub mod schema;
/// The domain `tracer scaffold domain` copies; compiled in tests, where the conformance
/// suite runs over it.
#[cfg(test)]
pub mod skeleton;
pub mod specs;
pub mod strptime;
pub mod tau2;
pub mod tau2_generic;
pub mod tau_bench;
pub mod templates;
pub mod text;
