//! The `Database` methods every ToolOrchestra-style domain writes the same way, as one macro
//! used inside the domain's `impl Database`:
//!
//! ```ignore
//! impl Database for TravelDb {
//!     kit::glue::tau2_database!(tables: [packages, travelers, agents], required_outputs);
//!     fn customers(&self) -> Vec<String> { ... } // what is the domain's own
//! }
//! ```
//!
//! It writes: the tool table (`super::tools::all()`); the state hash and the table listing
//! over the named `Table` fields, in order (each listed under its field name, which is the
//! `db.json` key); the tau2 export ([`super::tau2::export_tables`]); and the delegations to
//! the domain's `ground` (`propose_calls`, `observe`), `policy` (`RULES`, checked by
//! [`super::policy::check_rules`]) and `hooks` (`user_facts`, `describe_request`,
//! `internal_ids`, `customer_records`, and `required_outputs` when named) modules. What
//! differs between domains — who the customers are, any trait method with a behaviour of
//! its own — stays written out beside it.

/// See the module documentation.
macro_rules! tau2_database {
    (tables: [$first:ident $(, $rest:ident)* $(,)?] $(, $option:ident)* $(,)?) => {
        fn tools() -> &'static [$crate::domain::Tool<Self>] {
            super::tools::all()
        }

        fn state_hash(&self) -> $crate::domain::StateHash {
            self.$first.state_hash()$(.combine(self.$rest.state_hash()))*
        }

        fn tables(&self) -> Vec<(&'static str, Vec<(String, serde_json::Value)>)> {
            vec![
                (stringify!($first), self.$first.to_json_rows()),
                $((stringify!($rest), self.$rest.to_json_rows()),)*
            ]
        }

        /// The tables as `db.json`'s top-level keys, rows in `model_dump()` form.
        fn to_tau_bench(&self) -> std::collections::BTreeMap<String, serde_json::Value> {
            $crate::domain::kit::tau2::export_tables($crate::domain::Database::tables(self))
        }

        fn propose_calls(
            &self,
            tool: &str,
            ctx: &$crate::domain::GroundingContext,
            rng: &mut rand_chacha::ChaCha8Rng,
        ) -> Vec<serde_json::Value> {
            super::ground::propose_calls(self, tool, ctx, rng)
        }

        fn observe(
            &self,
            tool: &str,
            args: &serde_json::Value,
            output: &str,
            ctx: &mut $crate::domain::GroundingContext,
        ) {
            super::ground::observe(tool, args, output, ctx)
        }

        fn check_policy(
            &self,
            tool: &str,
            args: &serde_json::Value,
        ) -> Result<(), $crate::domain::PolicyViolation> {
            $crate::domain::kit::policy::check_rules(&super::policy::RULES, self, tool, args)
        }

        fn user_facts(&self, user_id: &str) -> Vec<$crate::domain::UserFact> {
            super::hooks::user_facts(self, user_id)
        }

        fn describe_request(
            &self,
            tool: &str,
            args: &serde_json::Value,
            output: &str,
        ) -> Option<String> {
            super::hooks::describe_request(self, tool, args, output)
        }

        fn internal_ids(&self, tool: &str, args: &serde_json::Value) -> Vec<String> {
            super::hooks::internal_ids(tool, args)
        }

        fn customer_records(&self, user_id: &str) -> Vec<String> {
            super::hooks::customer_records(self, user_id)
        }

        $($crate::domain::kit::glue::tau2_database!(@option $option);)*
    };
    (@option required_outputs) => {
        fn required_outputs(
            &self,
            tool: &str,
            args: &serde_json::Value,
            output: &str,
        ) -> Vec<String> {
            super::hooks::required_outputs(tool, args, output)
        }
    };
}

pub(crate) use tau2_database;
