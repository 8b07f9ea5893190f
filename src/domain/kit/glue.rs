//! The `Domain` impl every domain writes the same way ([`tau2_domain!`],
//! [`tau_bench_domain!`], one line in the domain's `mod.rs`), the database struct of named
//! tables with its constructor ([`database_struct!`], in `db.rs`), and the two halves of its
//! database glue: the [`Hooks`](crate::domain::Hooks) delegations ([`database_hooks!`], all
//! ten domains) and, for the ToolOrchestra-style ones, the `Database` impl over named tables
//! ([`tau2_database!`]). They are used in the domain's `mod.rs`, beside its other impls
//! (`db.rs` holds rows only and imports no sibling, so every file of the domain may import
//! it without a circle; the paths below name the domain's modules from `mod.rs`):
//!
//! ```ignore
//! impl Database for TravelDb {
//!     kit::glue::tau2_database!(tables: [packages, travelers, agents]);
//! }
//!
//! impl Hooks for TravelDb {
//!     kit::glue::database_hooks!();
//!     fn customers(&self) -> Vec<String> { ... } // what is the domain's own
//! }
//! ```
//!
//! They write: the tool table (`self::tools::all()`); the state hash and the table listing
//! over the named `Table` fields, in order (each listed under its field name, which is the
//! `db.json` key); the tau2 export ([`super::tau2::export_tables`]); and the delegations to
//! the domain's `ground` (`propose_calls`), `policy` (`RULES`, checked by
//! [`super::policy::check_rules`]) and `hooks` (`user_facts`, `describe_request`,
//! `customer_records`, and `required_outputs` where the domain computes some) modules.
//! Internal ids, internal fields, what a read tells and what a call lets grounding learn
//! are declared in `tools.toml` ([`super::specs`]). What differs between domains — who the
//! customers are, any hook with a behaviour of its own (an `observe` that reads more than
//! `learns` can say) — stays written out beside it.

/// The `Database` impl's body for a domain whose tables are `Table` fields exported under
/// their field names (see the module documentation).
macro_rules! tau2_database {
    (tables: [$($table:ident),+ $(,)?] $(,)?) => {
        $crate::domain::kit::glue::database_tables!($($table: $table),+);
    };
}

/// The `Hooks` glue, for every domain (inside its `impl Hooks` in its `mod.rs`): the tool
/// specs (`Database::tools()`'s), and each hook delegating to the function of the same
/// name and the one signature set — `ground::propose_calls`, `policy::RULES`
/// (checked by [`super::policy::check_rules`]), `hooks::{user_facts, describe_request,
/// customer_records}`, each taking the database first where the trait method takes
/// `&self`. Internal ids, internal fields, what a read tells and what a call lets
/// grounding learn come from `tools.toml` (the trait's defaults). Where a domain's customers are the keys of one table it names
/// it, and where some reads tell what a pointer cannot select it names the function that
/// computes it (same signature as the hook, the database first), which answers every tool
/// that declares no `tells`; a domain whose calls reveal more than `learns` can say
/// names its own `observe` the same way: `database_hooks!(customers: users, observe:
/// ground::observe, required_outputs: hooks::required_outputs)`.
macro_rules! database_hooks {
    (customers: $table:ident, $($rest:tt)*) => {
        $crate::domain::kit::glue::database_hooks!($($rest)*);

        fn customers(&self) -> Vec<String> {
            self.$table.keys().map(str::to_string).collect()
        }
    };
    (customers: $table:ident) => {
        $crate::domain::kit::glue::database_hooks!(customers: $table,);
    };
    (observe: $observe:path, $($rest:tt)*) => {
        $crate::domain::kit::glue::database_hooks!($($rest)*);

        /// More than `tools.toml`'s `learns` can say: the domain's own function.
        fn observe(
            &self,
            tool: &str,
            args: &serde_json::Value,
            output: &str,
            ctx: &mut $crate::domain::GroundingContext,
        ) {
            $observe(self, tool, args, output, ctx);
        }
    };
    (required_outputs: $outputs:path $(,)?) => {
        $crate::domain::kit::glue::database_hooks!();

        /// What the read's `tells` declares, else what the domain's function computes.
        fn required_outputs(
            &self,
            tool: &str,
            args: &serde_json::Value,
            output: &str,
        ) -> Vec<String> {
            let specs = $crate::domain::Hooks::tool_specs(self);
            match $crate::domain::kit::specs::declared(specs, tool).and_then(|d| d.told(output)) {
                Some(told) => told,
                None => $outputs(self, tool, args, output),
            }
        }
    };
    () => {
        fn tool_specs(&self) -> Vec<&'static $crate::domain::ToolSpec> {
            <Self as $crate::domain::Database>::tools()
                .iter()
                .map(|t| &t.spec)
                .collect()
        }

        fn propose_calls(
            &self,
            tool: &str,
            ctx: &$crate::domain::GroundingContext,
            rng: &mut rand_chacha::ChaCha8Rng,
        ) -> Vec<serde_json::Value> {
            self::ground::propose_calls(self, tool, ctx, rng)
        }

        fn check_policy(
            &self,
            tool: &str,
            args: &serde_json::Value,
        ) -> Result<(), $crate::domain::PolicyViolation> {
            $crate::domain::kit::policy::check_rules(&self::policy::RULES, self, tool, args)
        }

        fn user_facts(&self, user_id: &str) -> Vec<$crate::domain::UserFact> {
            self::hooks::user_facts(self, user_id)
        }

        fn describe_request(
            &self,
            tool: &str,
            args: &serde_json::Value,
            output: &str,
        ) -> Option<String> {
            self::hooks::describe_request(self, tool, args, output)
        }

        fn customer_records(&self, user_id: &str) -> Vec<String> {
            self::hooks::customer_records(self, user_id)
        }
    };
}

pub(crate) use database_hooks;

pub(crate) use tau2_database;

/// A domain's tool list in its `tools.rs`: `kit::glue::tool_list!(SchoolDb);` writes
/// `pub fn all() -> &'static [Tool<SchoolDb>]`, the tools `build()` (the same file) lists,
/// in the order they are shown to a model, built once.
macro_rules! tool_list {
    ($db:ty) => {
        /// All tools, in the order they are listed to a model (built once by `build`).
        pub fn all() -> &'static [$crate::domain::Tool<$db>] {
            static TOOLS: std::sync::LazyLock<Vec<$crate::domain::Tool<$db>>> =
                std::sync::LazyLock::new(build);
            &TOOLS
        }
    };
}

pub(crate) use tool_list;

/// A domain's row getters in its `tools.rs`, each with its tools' "not found" error:
/// `get_named` gives tau2's "`{Noun} {id} not found`", `get_or` the message as written.
///
/// ```ignore
/// kit::glue::row_getters!(TravelDb {
///     traveler: travelers.get_named("Traveler") -> Traveler,
///     ticket: service_tickets.get_or("Ticket not found") -> ServiceTicket,
/// });
/// ```
///
/// writes `pub fn traveler<'a>(db: &'a TravelDb, id: &str) -> Result<&'a Traveler, String>`
/// and the like.
macro_rules! row_getters {
    ($db:ty { $($name:ident: $table:ident.$lookup:ident($text:literal) -> $row:ty),+ $(,)? }) => {
        $(
            pub fn $name<'a>(db: &'a $db, id: &str) -> Result<&'a $row, String> {
                db.$table.$lookup(id, $text)
            }
        )+
    };
}

pub(crate) use row_getters;

/// A read tool's function in a domain's tool table: look the row up with a getter (see
/// [`row_getters!`]) by one string argument and print it as a model
/// ([`super::pyjson::model_json`]): `("get_traveler_details", read_tool!(traveler, "traveler_id"))`.
macro_rules! read_tool {
    ($getter:ident, $key:literal) => {
        |db, a| $crate::domain::kit::pyjson::model_json($getter(db, a.str($key)?))
    };
}

pub(crate) use read_tool;

/// A domain's database struct in its `db.rs`: one public `Table` field per table, named as
/// the table is (its `db.json` key), and `new`, taking each table's rows as a map, in field
/// order. Fields after a `;` are not tables: they start at their `Default` (retail's
/// lifecycle). Attributes and doc comments go on the struct:
///
/// ```ignore
/// kit::glue::database_struct! {
///     /// The whole movie theater state.
///     MovieDb { movies: Movie, theaters: Theater, bookings: Booking }
/// }
/// ```
macro_rules! database_struct {
    (
        $(#[$meta:meta])*
        $db:ident {
            $($table:ident: $row:ty),+
            $(; $($(#[$xmeta:meta])* $extra:ident: $xty:ty),+)? $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone)]
        pub struct $db {
            $(pub $table: $crate::domain::Table<$row>,)+
            $($($(#[$xmeta])* pub $extra: $xty,)+)?
        }

        impl $db {
            pub fn new($($table: std::collections::BTreeMap<String, $row>),+) -> Self {
                $db {
                    $($table: $crate::domain::Table::new(stringify!($table), $table),)+
                    $($($extra: Default::default(),)+)?
                }
            }
        }
    };
}

pub(crate) use database_struct;

/// The `Database` impl's body, inside the domain's `impl Database` in its `mod.rs`: `kit::glue::database_tables!(customers: customers, support_tickets: tickets)`
/// lists each table under its exported name with the `Table` field holding it, in order.
/// It writes the tool table (`self::tools::all()`), the state hash and the table listing
/// over those fields, and the export (each table as an object keyed by row id, as
/// [`super::tau2::export_tables`] writes it); a domain whose reference keeps its data
/// otherwise names its export function (`fn(&Self) -> BTreeMap<String, Value>`) after the
/// tables: `database_tables!(users: users, orders: orders; export: tau_bench::export)`.
macro_rules! database_tables {
    ($($name:ident: $field:ident),+ $(,)?) => {
        $crate::domain::kit::glue::database_tables!(@body [$($name: $field),+] |db| {
            $crate::domain::kit::tau2::export_tables($crate::domain::Database::tables(db))
        });
    };
    ($($name:ident: $field:ident),+ ; export: $export:path $(,)?) => {
        $crate::domain::kit::glue::database_tables!(@body [$($name: $field),+] |db| $export(db));
    };
    (@body [$($name:ident: $field:ident),+] |$db:ident| $export:expr) => {
        fn tools() -> &'static [$crate::domain::Tool<Self>] {
            self::tools::all()
        }

        fn state_hash(&self) -> $crate::domain::StateHash {
            $crate::domain::StateHash::default()$(.combine(self.$field.state_hash()))+
        }

        fn tables(&self) -> Vec<(&'static str, Vec<(String, serde_json::Value)>)> {
            vec![$((stringify!($name), self.$field.to_json_rows())),+]
        }

        /// The tables as the reference's top-level keys (`db.json` keys or data files).
        fn to_tau_bench(&self) -> std::collections::BTreeMap<String, serde_json::Value> {
            let $db = self;
            $export
        }
    };
}

pub(crate) use database_tables;

/// The `Domain` impl of a ToolOrchestra-style domain, in its `mod.rs`:
/// `kit::glue::tau2_domain!(School, "school", SchoolDb);`. The tool specs are the
/// database's tools'; the paper gives these domains a training database of their own
/// (`separate_train_db`), drawn by `generate::generate(seed, split)`; a reference `db.json`
/// is read by `SchoolDb::import(&tables, origin)`. A domain with no public reference names
/// what it is instead: `tau2_domain!(Skeleton, "skeleton", SkeletonDb, reference: "none")`.
macro_rules! tau2_domain {
    ($domain:ident, $name:literal, $db:ty) => {
        $crate::domain::kit::glue::tau2_domain!($domain, $name, $db, reference: "ToolOrchestra tau2");
    };
    ($domain:ident, $name:literal, $db:ty, reference: $reference:literal) => {
        impl $crate::domain::Domain for $domain {
            fn name(&self) -> &'static str {
                $name
            }

            fn tool_specs(&self) -> Vec<&'static $crate::domain::ToolSpec> {
                <$db as $crate::domain::Database>::tools()
                    .iter()
                    .map(|t| &t.spec)
                    .collect()
            }

            fn reference(&self) -> &'static str {
                $reference
            }

            /// The paper gives the ToolOrchestra domains a training database of their own.
            fn separate_train_db(&self) -> bool {
                true
            }

            fn generate(
                &self,
                seed: u64,
                split: $crate::domain::Split,
            ) -> Box<dyn $crate::domain::Environment> {
                Box::new(generate::generate(seed, split))
            }

            fn import_tables(
                &self,
                tables: std::collections::BTreeMap<String, serde_json::Value>,
                origin: &std::path::Path,
            ) -> Result<Box<dyn $crate::domain::Environment>, $crate::domain::DomainError> {
                let db = <$db>::import(&tables, origin)?;
                let known: Vec<&str> = $crate::domain::Database::tables(&db)
                    .into_iter()
                    .map(|(name, _)| name)
                    .collect();
                $crate::domain::kit::tau2::check_import(&tables, &known, origin)?;
                Ok(Box::new(db))
            }
        }
    };
}

pub(crate) use tau2_domain;

/// The `Domain` impl of a tau-bench-style domain (airline, retail, telecom, telehealth), in
/// its `mod.rs`: `kit::glue::tau_bench_domain!(Telecom, "telecom", TelecomDb, reference:
/// "tau-emotion-bench", import: db::import);`. The tool specs are the database's tools'; one database serves every
/// split, as the references keep one for their test and train tasks, drawn by
/// `generate::generate(seed)`; a reference data directory is read by the `import`
/// function. `rulesets: <expr>` declares [`crate::domain::Domain::rulesets`].
macro_rules! tau_bench_domain {
    ($domain:ident, $name:literal, $db:ty, reference: $reference:literal, import: $import:path $(, rulesets: $rulesets:expr)? $(,)?) => {
        impl $crate::domain::Domain for $domain {
            fn name(&self) -> &'static str {
                $name
            }

            fn reference(&self) -> &'static str {
                $reference
            }

            fn tool_specs(&self) -> Vec<&'static $crate::domain::ToolSpec> {
                <$db as $crate::domain::Database>::tools()
                    .iter()
                    .map(|t| &t.spec)
                    .collect()
            }

            $(
                fn rulesets(&self) -> &'static [$crate::domain::Ruleset] {
                    $rulesets
                }
            )?

            /// One database for every split, as the reference keeps one for all its tasks.
            fn generate(
                &self,
                seed: u64,
                _split: $crate::domain::Split,
            ) -> Box<dyn $crate::domain::Environment> {
                Box::new(generate::generate(seed))
            }

            fn import_tau_bench(
                &self,
                dir: &std::path::Path,
            ) -> Result<Box<dyn $crate::domain::Environment>, $crate::domain::DomainError> {
                Ok(Box::new($import(dir)?))
            }
        }
    };
}

pub(crate) use tau_bench_domain;
