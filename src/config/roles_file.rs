//! The run's roles file: one TOML that names every model role of a run, so a model release is
//! configured once instead of stage by stage (`--roles FILE`, `TRACER_ROLES`, or `roles.toml`
//! at the project root).
//!
//! ```toml
//! prompts = "prompts"                  # the role prompts' directory (default: prompts/)
//! [roles.agent]                        # every stage that has an agent uses this one ...
//! provider = "openai"
//! base_url = "http://127.0.0.1:8000/v1"
//! model = "Qwen/Qwen3-8B"
//! [stages.screened.roles.agent]        # ... except screening, which names its own
//! provider = "openai"
//! base_url = "http://127.0.0.1:8001/v1"
//! model = "Qwen/Qwen3-32B"
//! [embedder]                           # the emotion mapper's embeddings endpoint
//! ```
//!
//! A stage's settings are its `stages/<stage>.toml` (with an override merged over it), then,
//! for each role the stage uses ([`STAGE_ROLES`]) that its own file does not set, the roles
//! file's table for that stage, else its table for every stage. The merged table is what the
//! stage parses and what its config hash covers, so changing a role in the roles file makes
//! exactly the stages that use the role stale.
//!
//! Architecture invariant: this file knows roles only by name and tables only as TOML; the
//! role tables' fields are checked by the LLM layer (`llm::config`), where roles are typed.

use super::ConfigError;
use std::path::{Path, PathBuf};

/// Which model roles each stage asks for, by name: the `[roles.<role>]` tables a roles file
/// hands it (`embedder` is the emotions stage's top-level `[embedder]` table). The stages
/// check their own tables against this list, so it is the one place a stage's roles are
/// named.
pub const STAGE_ROLES: &[(&str, &[&str])] = &[
    ("grounded", &["grounder"]),
    ("refined", &["refiner"]),
    ("feelings", &["feeler"]),
    ("emotions", &["embedder"]),
    ("tasks", &["judge"]),
    ("rollouts", &["agent", "user"]),
    ("screened", &["agent", "user"]),
    ("eval", &["agent", "user"]),
    ("analysis", &["judge"]),
];

/// The role names `stage` uses (none for a stage without model roles).
pub fn roles_of(stage: &str) -> &'static [&'static str] {
    STAGE_ROLES
        .iter()
        .find(|(s, _)| *s == stage)
        .map_or(&[], |(_, r)| r)
}

/// The stage-table key that holds the prompts directory a stage's endpoint roles read.
pub const PROMPTS_KEY: &str = "prompts";

/// A parsed roles file.
#[derive(Clone, Debug)]
pub struct RolesFile {
    pub path: PathBuf,
    table: toml::Table,
}

const TOP_KEYS: [&str; 4] = ["prompts", "roles", "embedder", "stages"];

impl RolesFile {
    /// Read and shape-check a roles file (its role tables' fields are the LLM layer's to
    /// check). Every error names the file and the key.
    pub fn load(path: &Path) -> Result<RolesFile, ConfigError> {
        let err = |message: String| ConfigError::File {
            path: path.display().to_string(),
            message,
        };
        if !path.is_file() {
            return Err(err(
                "not found (the roles file: --roles FILE or TRACER_ROLES)".to_string(),
            ));
        }
        let table = super::read_table(path)?;
        for (key, value) in &table {
            if !TOP_KEYS.contains(&key.as_str()) {
                return Err(err(format!(
                    "unknown key `{key}` (a roles file holds: {})",
                    TOP_KEYS.join(", ")
                )));
            }
            let expect_table = key != "prompts";
            let shaped = if expect_table {
                value.is_table()
            } else {
                value.is_str()
            };
            if !shaped {
                return Err(err(format!(
                    "`{key}` must be {}",
                    if expect_table { "a table" } else { "a string" }
                )));
            }
        }
        if let Some(roles) = table.get("roles").and_then(|v| v.as_table()) {
            check_role_tables(roles, "roles").map_err(err)?;
        }
        if let Some(stages) = table.get("stages").and_then(|v| v.as_table()) {
            for (stage, value) in stages {
                let Some(t) = value.as_table() else {
                    return Err(err(format!("`stages.{stage}` must be a table")));
                };
                if !STAGE_ROLES.iter().any(|(s, _)| s == stage) {
                    let names: Vec<&str> = STAGE_ROLES.iter().map(|(s, _)| *s).collect();
                    return Err(err(format!(
                        "`stages.{stage}`: not a stage with model roles ({})",
                        names.join(", ")
                    )));
                }
                for (key, v) in t {
                    match key.as_str() {
                        "roles" => {
                            let Some(roles) = v.as_table() else {
                                return Err(err(format!("`stages.{stage}.roles` must be a table")));
                            };
                            check_role_tables(roles, &format!("stages.{stage}.roles"))
                                .map_err(err)?;
                            for role in roles.keys() {
                                if !roles_of(stage).contains(&role.as_str()) {
                                    return Err(err(format!(
                                        "`stages.{stage}.roles.{role}`: {stage} has no {role} role (it uses: {})",
                                        roles_of(stage).join(", ")
                                    )));
                                }
                            }
                        }
                        "embedder" if stage == "emotions" => {
                            if !v.is_table() {
                                return Err(err(format!(
                                    "`stages.{stage}.embedder` must be a table"
                                )));
                            }
                        }
                        other => {
                            return Err(err(format!(
                                "`stages.{stage}.{other}`: a stage's entry holds only `roles`{}",
                                if stage == "emotions" {
                                    " and `embedder`"
                                } else {
                                    ""
                                }
                            )));
                        }
                    }
                }
            }
        }
        Ok(RolesFile {
            path: path.to_path_buf(),
            table,
        })
    }

    /// The prompts directory the file names, if any.
    pub fn prompts(&self) -> Option<&str> {
        self.table.get("prompts").and_then(|v| v.as_str())
    }

    /// Every `(where, role, table)` the file holds: `where` is `roles` or
    /// `stages.<stage>.roles` (and `embedder` / `stages.emotions.embedder` for the embedder,
    /// whose role name is `embedder`), for a checker of the tables' fields.
    pub fn role_tables(&self) -> Vec<(String, String, toml::Table)> {
        let mut out = Vec::new();
        let mut push_roles = |at: &str, roles: Option<&toml::Value>| {
            for (role, t) in roles.and_then(|v| v.as_table()).into_iter().flatten() {
                if let Some(t) = t.as_table() {
                    out.push((format!("{at}.{role}"), role.clone(), t.clone()));
                }
            }
        };
        push_roles("roles", self.table.get("roles"));
        if let Some(stages) = self.table.get("stages").and_then(|v| v.as_table()) {
            for (stage, t) in stages {
                push_roles(&format!("stages.{stage}.roles"), t.get("roles"));
            }
        }
        if let Some(t) = self.table.get("embedder").and_then(|v| v.as_table()) {
            out.push(("embedder".into(), "embedder".into(), t.clone()));
        }
        if let Some(t) = self
            .table
            .get("stages")
            .and_then(|s| s.get("emotions"))
            .and_then(|e| e.get("embedder"))
            .and_then(|v| v.as_table())
        {
            out.push((
                "stages.emotions.embedder".into(),
                "embedder".into(),
                t.clone(),
            ));
        }
        out
    }

    /// The table the file gives `role` in `stage`: the stage's own, else the general one.
    fn table_for(&self, stage: &str, role: &str) -> Option<toml::Value> {
        let own = self.table.get("stages").and_then(|s| s.get(stage));
        if role == "embedder" {
            return own
                .and_then(|t| t.get("embedder"))
                .or_else(|| self.table.get("embedder"))
                .cloned();
        }
        own.and_then(|t| t.get("roles"))
            .and_then(|r| r.get(role))
            .or_else(|| self.table.get("roles").and_then(|r| r.get(role)))
            .cloned()
    }

    /// Hand `stage` the roles it uses that its own table does not set, and the prompts
    /// directory when one of its roles is an endpoint and it names none itself.
    pub fn merge_into(&self, stage: &str, table: &mut toml::Table) {
        for role in roles_of(stage) {
            let Some(given) = self.table_for(stage, role) else {
                continue;
            };
            if *role == "embedder" {
                table.entry("embedder").or_insert(given);
                continue;
            }
            let roles = table
                .entry("roles")
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            if let Some(roles) = roles.as_table_mut() {
                roles.entry(role.to_string()).or_insert(given);
            }
        }
        if let Some(dir) = self.prompts()
            && !table.contains_key(PROMPTS_KEY)
            && has_endpoint_role(table)
        {
            table.insert(PROMPTS_KEY.into(), toml::Value::String(dir.to_string()));
        }
    }
}

/// Whether a stage table's `[roles]` name any endpoint (`provider = "openai"`).
pub fn has_endpoint_role(table: &toml::Table) -> bool {
    table
        .get("roles")
        .and_then(|r| r.as_table())
        .is_some_and(|roles| roles.values().any(is_endpoint))
}

/// Whether a role table asks for an endpoint.
pub fn is_endpoint(role: &toml::Value) -> bool {
    role.get("provider").and_then(|p| p.as_str()) == Some("openai")
}

fn check_role_tables(roles: &toml::Table, at: &str) -> Result<(), String> {
    for (role, t) in roles {
        if !t.is_table() {
            return Err(format!("`{at}.{role}` must be a table"));
        }
    }
    Ok(())
}

/// `over` merged into `base`: tables merged key by key (recursively), every other value
/// replaced. How a stage override applies over `stages/<stage>.toml`.
pub fn merge_tables(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge_tables(b, o),
            (_, v) => {
                base.insert(key, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> Result<RolesFile, String> {
        let dir = std::env::temp_dir().join(format!(
            "tracer-roles-file-{}-{}",
            std::process::id(),
            text.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("roles.toml");
        std::fs::write(&path, text).unwrap();
        let r = RolesFile::load(&path).map_err(|e| e.to_string());
        std::fs::remove_dir_all(&dir).ok();
        r
    }

    const AGENT: &str = "provider = \"openai\"\nbase_url = \"http://a/v1\"\nmodel = \"m\"\n";

    #[test]
    fn a_stage_gets_the_roles_it_uses_and_its_own_file_wins() {
        let rf = file(&format!(
            "prompts = \"my-prompts\"\n[roles.agent]\n{AGENT}[roles.refiner]\n{AGENT}\
             [stages.screened.roles.agent]\nprovider = \"openai\"\nbase_url = \"http://b/v1\"\nmodel = \"big\"\n"
        ))
        .unwrap();
        // rollouts: the general agent, and the prompts directory (its agent is an endpoint).
        let mut t = toml::Table::new();
        rf.merge_into("rollouts", &mut t);
        assert_eq!(
            t["roles"]["agent"]["base_url"].as_str(),
            Some("http://a/v1")
        );
        assert!(t["roles"].get("refiner").is_none(), "{t:?}");
        assert_eq!(t[PROMPTS_KEY].as_str(), Some("my-prompts"));
        // screened: its own agent.
        let mut t = toml::Table::new();
        rf.merge_into("screened", &mut t);
        assert_eq!(t["roles"]["agent"]["model"].as_str(), Some("big"));
        // A stage file's own table wins over the roles file.
        let mut t: toml::Table = "[roles.refiner]\nprovider = \"scripted\"".parse().unwrap();
        rf.merge_into("refined", &mut t);
        assert_eq!(t["roles"]["refiner"]["provider"].as_str(), Some("scripted"));
        assert!(
            t.get(PROMPTS_KEY).is_none(),
            "no endpoint role, no prompts: {t:?}"
        );
        // A stage without roles gets nothing.
        let mut t = toml::Table::new();
        rf.merge_into("traces", &mut t);
        assert!(t.is_empty(), "{t:?}");
    }

    #[test]
    fn shape_errors_name_the_file_and_key() {
        for (text, expected) in [
            ("rolez = 1", "unknown key `rolez`"),
            ("prompts = 3", "`prompts` must be a string"),
            ("[roles]\nagent = 1", "`roles.agent` must be a table"),
            (
                "[stages.traces.roles.agent]\nprovider = \"scripted\"",
                "`stages.traces`",
            ),
            (
                "[stages.refined.roles.agent]\nprovider = \"scripted\"",
                "refined has no agent role",
            ),
            ("[stages.refined]\nseed = 3", "`stages.refined.seed`"),
        ] {
            let e = file(text).unwrap_err();
            assert!(e.contains("roles.toml: "), "{e}");
            assert!(e.contains(expected), "{text:?} -> {e}");
        }
    }

    #[test]
    fn an_override_merges_key_by_key() {
        let mut base: toml::Table =
            "a = 1\n[caps.bank]\nx = 1\ny = 2\n[roles.grounder]\nprovider = \"openai\""
                .parse()
                .unwrap();
        let over: toml::Table = "a = 2\n[caps.bank]\ny = 3\n[caps.movie]\nx = 9"
            .parse()
            .unwrap();
        merge_tables(&mut base, over);
        assert_eq!(base["a"].as_integer(), Some(2));
        assert_eq!(base["caps"]["bank"]["x"].as_integer(), Some(1));
        assert_eq!(base["caps"]["bank"]["y"].as_integer(), Some(3));
        assert_eq!(base["caps"]["movie"]["x"].as_integer(), Some(9));
        assert_eq!(
            base["roles"]["grounder"]["provider"].as_str(),
            Some("openai")
        );
    }
}
