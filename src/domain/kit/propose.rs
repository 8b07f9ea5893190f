//! Grounding proposals from data: candidate values for each argument (what the
//! conversation revealed first, then the customer's own entities, then the catalogue), a
//! seeded product of them, and a dry-run filter that keeps only calls that obey the policy
//! and execute.
//!
//! A domain's `propose_calls` usually reads: build the candidate lists for the tool's
//! arguments ([`ranked`], [`tiered`]), [`combine`] them, then [`executable`]. Enum arguments come straight from the
//! tool's JSON Schema ([`enum_values`]).
//!
//! Architecture invariant: deterministic for a given RNG state; reads the state only
//! (dry runs use forks).

use crate::domain::{Environment, GroundingContext, Table, ToolSpec};
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use serde_json::{Map, Value};

/// At most this many proposals per call, in the domains' grounders (the skeleton keeps
/// six).
pub const MAX_PROPOSALS: usize = 8;

/// The conversation's customer: the context's user, else an id learned under `key`; the
/// first that `table` holds.
pub fn customer<'a, T: Clone + Serialize>(
    ctx: &GroundingContext,
    key: &str,
    table: &'a Table<T>,
) -> Option<&'a T> {
    ctx.user_id
        .iter()
        .chain(ctx.values(key))
        .find_map(|id| table.get(id))
}

/// Values for an id argument: those the context already knows first (in the order learnt,
/// filtered by `keep`), then `own` in a seeded order, without repeats.
pub fn ranked(
    ctx: &GroundingContext,
    key: &str,
    own: Vec<String>,
    keep: impl Fn(&str) -> bool,
    rng: &mut ChaCha8Rng,
) -> Vec<String> {
    let mut out: Vec<String> = ctx
        .values(key)
        .iter()
        .filter(|v| keep(v))
        .cloned()
        .collect();
    let mut rest: Vec<String> = own
        .into_iter()
        .filter(|v| keep(v) && !out.contains(v))
        .collect();
    rest.shuffle(rng);
    out.extend(rest);
    out
}

/// [`ranked`] over rows: the ids `row` finds a row for (it looks an id up and filters
/// it, e.g. the customer's own and still open), those the context knows first, then `own`
/// in a seeded order, as their rows.
pub fn ranked_rows<'a, T>(
    ctx: &GroundingContext,
    key: &str,
    own: Vec<String>,
    row: impl Fn(&str) -> Option<&'a T>,
    rng: &mut ChaCha8Rng,
) -> Vec<&'a T> {
    let ids = ranked(ctx, key, own, |id| row(id).is_some(), rng);
    ids.iter().filter_map(|id| row(id)).collect()
}

/// A customer's rows of one table, as grounding proposes them: the id argument they go by,
/// the table, the ids the customer lists, and whether a row is theirs. A domain states one
/// as a constant and ranks with [`Owned::ranked`].
pub struct Owned<D, C, T> {
    pub key: &'static str,
    pub table: fn(&D) -> &Table<T>,
    pub own: fn(&C) -> Vec<String>,
    pub mine: fn(&C, &T) -> bool,
}

impl<D, C, T: Clone + Serialize> Owned<D, C, T> {
    /// The customer's rows matching `keep` ([`ranked_rows`]): those the conversation
    /// revealed first, then their own, shuffled; with no customer, anyone's.
    pub fn ranked<'a>(
        &self,
        db: &'a D,
        ctx: &GroundingContext,
        customer: Option<&C>,
        rng: &mut ChaCha8Rng,
        keep: impl Fn(&T) -> bool,
    ) -> Vec<&'a T> {
        let own = customer.map(self.own).unwrap_or_default();
        let table = (self.table)(db);
        let row = |id: &str| {
            let r = table.get(id)?;
            (customer.is_none_or(|c| (self.mine)(c, r)) && keep(r)).then_some(r)
        };
        ranked_rows(ctx, self.key, own, row, rng)
    }
}

/// Values for an argument in tiers: those the context already knows first (in the order
/// learnt), then each tier in a seeded order (e.g. the customer's own entities, then the
/// rest of the catalogue); `keep` filters every tier, and no value repeats.
pub fn tiered(
    ctx: &GroundingContext,
    key: &str,
    tiers: Vec<Vec<String>>,
    keep: impl Fn(&str) -> bool,
    rng: &mut ChaCha8Rng,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let known = ctx.values(key).to_vec();
    for (i, tier) in std::iter::once(known).chain(tiers).enumerate() {
        let mut fresh: Vec<String> = Vec::new();
        for v in tier {
            if keep(&v) && !out.contains(&v) && !fresh.contains(&v) {
                fresh.push(v);
            }
        }
        if i > 0 {
            fresh.shuffle(rng);
        }
        out.extend(fresh);
    }
    out
}

/// Seeded shuffle of a list (for catalogue candidates).
pub fn shuffled<T>(mut items: Vec<T>, rng: &mut ChaCha8Rng) -> Vec<T> {
    items.shuffle(rng);
    items
}

/// The `enum` values of an argument in a tool's schema.
pub fn enum_values(spec: &ToolSpec, arg: &str) -> Vec<Value> {
    spec.parameters
        .pointer(&format!("/properties/{arg}/enum"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Argument objects combining one value per `(name, candidates)` entry: the first
/// combination takes every list's first value (the most plausible), the rest follow in a
/// seeded order; at most `cap`. An empty candidate list yields no combination.
pub fn combine(params: &[(&str, Vec<Value>)], cap: usize, rng: &mut ChaCha8Rng) -> Vec<Value> {
    if params.iter().any(|(_, c)| c.is_empty()) || cap == 0 {
        return Vec::new();
    }
    let total: usize = params
        .iter()
        .map(|(_, c)| c.len())
        .fold(1usize, |a, n| a.saturating_mul(n));
    let mut indices: Vec<usize> = (0..total.min(4096)).collect();
    if indices.len() > 1 {
        indices[1..].shuffle(rng);
    }
    indices
        .into_iter()
        .take(cap)
        .map(|mut i| {
            let mut obj = Map::new();
            for (name, cands) in params {
                obj.insert(name.to_string(), cands[i % cands.len()].clone());
                i /= cands.len();
            }
            Value::Object(obj)
        })
        .collect()
}

/// The proposals (in order) that pass the policy and execute on a fork, at most `max`.
pub fn executable(
    env: &dyn Environment,
    tool: &str,
    proposals: impl IntoIterator<Item = Value>,
    max: usize,
) -> Vec<Value> {
    proposals
        .into_iter()
        .filter(|args| {
            env.check_policy(tool, args).is_ok() && !env.fork().invoke(tool, args).is_error
        })
        .take(max)
        .collect()
}

/// The items without repeats, first occurrences kept in order (candidate lists built from
/// several sources often propose one call twice).
pub fn distinct(items: impl IntoIterator<Item = Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// Strings of a JSON list as `Value`s.
pub fn values<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> Vec<Value> {
    items
        .into_iter()
        .map(|s| Value::String(s.as_ref().to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use serde_json::json;

    #[test]
    fn combine_is_seeded_and_leads_with_the_first_choices() {
        let params = [
            ("a", values(["a1", "a2"])),
            ("b", vec![json!(1), json!(2), json!(3)]),
        ];
        let mut r1 = ChaCha8Rng::seed_from_u64(7);
        let mut r2 = ChaCha8Rng::seed_from_u64(7);
        let x = combine(&params, 10, &mut r1);
        assert_eq!(x, combine(&params, 10, &mut r2));
        assert_eq!(x.len(), 6);
        assert_eq!(x[0], json!({"a": "a1", "b": 1}));
        assert!(combine(&[("a", vec![])], 5, &mut r1).is_empty());
        assert_eq!(
            distinct([json!(1), json!(2), json!(1), json!(3), json!(2)]),
            [json!(1), json!(2), json!(3)]
        );
    }

    #[test]
    fn ranked_rows_are_the_known_then_the_own_rows_the_lookup_keeps() {
        let mut ctx = GroundingContext::default();
        ctx.learn("id", "b");
        ctx.learn("id", "z");
        let rows: std::collections::BTreeMap<String, u32> = [
            ("a".into(), 1),
            ("b".into(), 2),
            ("c".into(), 3),
            ("d".into(), 4),
        ]
        .into();
        let row = |id: &str| rows.get(id).filter(|n| **n != 3);
        let own = vec!["a".to_string(), "c".into(), "d".into()];
        let r = ranked_rows(&ctx, "id", own, row, &mut ChaCha8Rng::seed_from_u64(1));
        assert_eq!(r[0], &2);
        let mut rest: Vec<u32> = r[1..].iter().map(|n| **n).collect();
        rest.sort();
        assert_eq!(rest, [1, 4]);
    }

    #[test]
    fn tiered_goes_known_then_tier_by_tier_without_repeats() {
        let mut ctx = GroundingContext::default();
        ctx.learn("id", "c2");
        ctx.learn("id", "gone");
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let own = vec!["o1".to_string(), "o2".into(), "o1".into()];
        let rest = vec!["c1".to_string(), "c2".into(), "c3".into(), "o2".into()];
        let r = tiered(&ctx, "id", vec![own, rest], |v| v != "gone", &mut rng);
        assert_eq!(r[0], "c2");
        assert_eq!(r.len(), 5);
        let mut own_part = r[1..3].to_vec();
        own_part.sort();
        assert_eq!(own_part, ["o1", "o2"]);
        let mut rest_part = r[3..].to_vec();
        rest_part.sort();
        assert_eq!(rest_part, ["c1", "c3"]);
    }

    #[test]
    fn ranked_puts_known_values_first() {
        let mut ctx = GroundingContext::default();
        ctx.learn("id", "k2");
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let r = ranked(
            &ctx,
            "id",
            vec!["o1".into(), "k2".into(), "o2".into()],
            |_| true,
            &mut rng,
        );
        assert_eq!(r[0], "k2");
        assert_eq!(r.len(), 3);
    }
}
