//! What model calls cost: the token counts of an answer ([`Usage`]), a role's prices in US
//! dollars per million tokens ([`Price`], the `price` field of a `[roles.<role>]` table),
//! the per-role record a stage run keeps in its `_manifest.json` ([`RoleUsage`]), and the
//! arithmetic between them.
//!
//! Pricing rule: prompt tokens the server served from its prefix cache (OpenAI's and vLLM's
//! `usage.prompt_tokens_details.cached_tokens`) are charged at the cached-input rate, the
//! other prompt tokens at the input rate, completion tokens at the output rate. A scripted
//! role costs nothing and is recorded as scripted, never with a price; an endpoint role
//! without a price has an unknown cost, not a zero one.
//!
//! Architecture invariant: a leaf. It knows no other module of the crate, so the LLM layer
//! (which counts tokens), the pipeline (which records them with a run) and the reports
//! (which price them) share one copy of these types.

use serde::{Deserialize, Serialize};

/// Tokens of one answer, or a sum of answers, as the server reported them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Every prompt token, cached ones included.
    pub prompt_tokens: u64,
    /// The part of `prompt_tokens` the server read from its prompt cache (0 where the
    /// server does not say; never more than `prompt_tokens`).
    #[serde(default)]
    pub cached_prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.cached_prompt_tokens += other.cached_prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;
    fn add(mut self, other: Usage) -> Usage {
        self += other;
        self
    }
}

impl Usage {
    /// Prompt tokens charged at the full input rate.
    pub fn uncached_prompt_tokens(&self) -> u64 {
        self.prompt_tokens.saturating_sub(self.cached_prompt_tokens)
    }

    /// Dollars these tokens cost at `price`.
    pub fn cost(&self, price: &Price) -> f64 {
        let cached = self.cached_prompt_tokens.min(self.prompt_tokens);
        (self.uncached_prompt_tokens() as f64 * price.input
            + cached as f64 * price.cached_input_rate()
            + self.completion_tokens as f64 * price.output)
            / 1_000_000.0
    }
}

/// One role's prices, US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Prompt tokens the server did not have cached.
    pub input: f64,
    /// Prompt tokens read from the server's prompt cache; default: `input` (no discount).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
    /// Completion tokens (reasoning included).
    pub output: f64,
}

impl Price {
    /// The rate of cached prompt tokens.
    pub fn cached_input_rate(&self) -> f64 {
        self.cached_input.unwrap_or(self.input)
    }

    /// Every rate a finite number of at least 0; the error names the field
    /// (``field `price.cached_input`: ...``).
    pub fn check(&self) -> Result<(), String> {
        let rates = [
            ("input", Some(self.input)),
            ("cached_input", self.cached_input),
            ("output", Some(self.output)),
        ];
        for (name, rate) in rates {
            if let Some(x) = rate
                && !(x.is_finite() && x >= 0.0)
            {
                return Err(format!(
                    "field `price.{name}`: {x} is not a price (US dollars per million tokens: a finite number, at least 0)"
                ));
            }
        }
        Ok(())
    }
}

/// One role's share of a stage run, as its manifest records it: who answered, the tokens of
/// every answer the run's output was made from (answers the response cache replayed count
/// with the tokens they cost when first paid for, so a resumed, re-run or sharded run
/// records what an uninterrupted one does), and the prices configured for the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleUsage {
    /// The role's name (`refiner`, `agent`, ...).
    pub role: String,
    /// `scripted:<role>`, or the endpoint's configured model.
    pub model: String,
    /// A built-in deterministic stand-in: no tokens, no price, no cost.
    pub scripted: bool,
    pub tokens: Usage,
    /// As configured when the stage ran; `None` for scripted roles and unpriced endpoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
}

impl RoleUsage {
    /// A scripted role's entry.
    pub fn scripted(role: &str, model: &str) -> RoleUsage {
        RoleUsage {
            role: role.to_string(),
            model: model.to_string(),
            scripted: true,
            tokens: Usage::default(),
            price: None,
        }
    }

    /// Dollars: 0 for a scripted role, `None` for an endpoint without a price.
    pub fn cost(&self) -> Option<f64> {
        if self.scripted {
            return Some(0.0);
        }
        self.price.as_ref().map(|p| self.tokens.cost(p))
    }

    /// What entries must share to be one line of a sum.
    fn key(&self) -> (String, String, bool, String) {
        (
            self.role.clone(),
            self.model.clone(),
            self.scripted,
            serde_json::to_string(&self.price).unwrap_or_default(),
        )
    }
}

/// Entries of the same role, model and price added up, ordered by role, model and price:
/// the usage of a stage that opened a role more than once, or of merged shard parts.
pub fn sum_usage(entries: impl IntoIterator<Item = RoleUsage>) -> Vec<RoleUsage> {
    let mut out: std::collections::BTreeMap<(String, String, bool, String), RoleUsage> =
        std::collections::BTreeMap::new();
    for e in entries {
        match out.entry(e.key()) {
            std::collections::btree_map::Entry::Occupied(mut o) => o.get_mut().tokens += e.tokens,
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(e);
            }
        }
    }
    out.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price(input: f64, cached: Option<f64>, output: f64) -> Price {
        Price {
            input,
            cached_input: cached,
            output,
        }
    }

    fn usage(prompt: u64, cached: u64, completion: u64) -> Usage {
        Usage {
            prompt_tokens: prompt,
            cached_prompt_tokens: cached,
            completion_tokens: completion,
        }
    }

    #[test]
    fn cached_prompt_tokens_are_charged_at_the_cached_rate_the_rest_at_the_input_rate() {
        // 1M prompt tokens, 400k of them cached; 200k completion tokens.
        let u = usage(1_000_000, 400_000, 200_000);
        let p = price(2.0, Some(0.5), 8.0);
        // 600k x $2 + 400k x $0.50 + 200k x $8 per million.
        let expected = 1.2 + 0.2 + 1.6;
        assert!((u.cost(&p) - expected).abs() < 1e-12, "{}", u.cost(&p));
        // Without a cached rate, cached tokens cost the input rate.
        let flat = price(2.0, None, 8.0);
        assert!((u.cost(&flat) - (2.0 + 1.6)).abs() < 1e-12);
        // No cached tokens: cached rate irrelevant.
        assert!((usage(1_000, 0, 0).cost(&p) - 0.002).abs() < 1e-15);
        // A server reporting more cached than prompt tokens never yields a negative share.
        let odd = usage(100, 300, 0);
        assert!((odd.cost(&p) - 100.0 * 0.5 / 1e6).abs() < 1e-15);
    }

    #[test]
    fn scripted_roles_cost_zero_and_unpriced_endpoints_are_unknown() {
        let s = RoleUsage::scripted("judge", "scripted:judge");
        assert_eq!(s.cost(), Some(0.0));
        let mut e = RoleUsage {
            role: "agent".into(),
            model: "m".into(),
            scripted: false,
            tokens: usage(10, 0, 10),
            price: None,
        };
        assert_eq!(e.cost(), None);
        e.price = Some(price(1.0, None, 1.0));
        assert!((e.cost().unwrap() - 20.0 / 1e6).abs() < 1e-15);
    }

    #[test]
    fn prices_must_be_finite_and_not_negative() {
        assert!(price(0.0, Some(0.0), 0.0).check().is_ok());
        for (p, field) in [
            (price(-1.0, None, 1.0), "field `price.input`: -1 "),
            (
                price(1.0, Some(f64::NAN), 1.0),
                "field `price.cached_input`: NaN ",
            ),
            (
                price(1.0, None, f64::INFINITY),
                "field `price.output`: inf ",
            ),
        ] {
            let err = p.check().unwrap_err();
            assert!(err.starts_with(field), "{err}");
        }
    }

    #[test]
    fn sums_add_entries_of_the_same_role_model_and_price() {
        let e = |role: &str, tokens: Usage, input: f64| RoleUsage {
            role: role.into(),
            model: "m".into(),
            scripted: false,
            tokens,
            price: Some(price(input, None, 1.0)),
        };
        let sum = sum_usage([
            e("user", usage(1, 0, 1), 1.0),
            e("agent", usage(10, 5, 1), 1.0),
            e("agent", usage(20, 5, 2), 1.0),
            e("agent", usage(1, 0, 0), 3.0),
        ]);
        let lines: Vec<(&str, u64)> = sum
            .iter()
            .map(|u| (u.role.as_str(), u.tokens.prompt_tokens))
            .collect();
        assert_eq!(lines, [("agent", 30), ("agent", 1), ("user", 1)]);
        assert_eq!(sum[0].tokens, usage(30, 10, 3));
    }
}
