//! How stages obtain their LLM roles: the `[roles.<role>]` tables of a stage TOML are
//! resolved to scripted stand-ins or preflighted endpoints sharing one response cache
//! (`output/.llm-cache.redb`, so a re-run or resume never pays twice).

use crate::config::{Check, ConfigError, Paths};
use crate::llm::{self, LlmError, Provider, Role, RoleConfig, RoleModel, RolesConfig};
use crate::pipeline::{PipelineError, StageContext};
use std::path::{Path, PathBuf};

/// The output root's response cache (commands outside a stage run use it; a stage's roles
/// use [`StageContext::response_cache`], which is a shard's own file when sharded).
pub fn cache_path(paths: &Paths) -> PathBuf {
    paths.output.join(crate::pipeline::RESPONSE_CACHE)
}

/// Fold every shard's response cache into the output root's, so one file holds every
/// answer. Call it holding the output lock exclusively (then no shard runs); one line per
/// file, to log.
pub fn fold_shard_caches(paths: &Paths) -> Result<Vec<String>, LlmError> {
    let sources: Vec<PathBuf> = crate::pipeline::shard::cache_files(&paths.output)
        .into_iter()
        .map(|(.., path)| path)
        .collect();
    llm::cache::fold_into(&cache_path(paths), &sources)
}

/// Before shard `shard` of `stage` runs: its response cache also reads the output root's
/// and those of the stage's shards of other counts (an earlier split), so a re-sharded or
/// resumed run never asks again what any run answered. Caches of the same count are
/// siblings that may be running now; they own other items.
pub fn share_answers_with_shard(paths: &Paths, stage: &str, shard: crate::pipeline::Shard) {
    let mut others = vec![cache_path(paths)];
    others.extend(
        crate::pipeline::shard::cache_files(&paths.output)
            .into_iter()
            .filter(|(s, part, _)| s == stage && part.count != shard.count)
            .map(|(.., path)| path),
    );
    llm::cache::read_also(
        &crate::pipeline::shard::cache_path(&paths.output, stage, shard),
        others,
    );
}

/// The model id a role records, from its config alone (as [`RoleModel::model_id`] reports
/// it once opened): a merge writes the same summary without opening any endpoint.
pub fn configured_model_id(roles: &RolesConfig, role: Role) -> String {
    llm::configured_model_id(roles, role)
}

/// Check the `[roles.*]` tables of a stage config without side effects: only roles the
/// stage uses (`used`), each one valid. Errors name the file and the table.
pub fn check_roles(path: &Path, roles: &RolesConfig, used: &[Role]) -> Result<(), ConfigError> {
    let c = Check::new(path);
    for (role, cfg) in roles {
        let field = format!("roles.{role}");
        if !used.contains(role) {
            let names: Vec<&str> = used.iter().map(|r| r.as_str()).collect();
            return Err(c.error(
                &field,
                if names.is_empty() {
                    "this stage uses no LLM role".to_string()
                } else {
                    format!(
                        "this stage has no {role} role (it uses: {})",
                        names.join(", ")
                    )
                },
            ));
        }
        check_role_table(&c, &field, &role.context(), cfg)?;
    }
    Ok(())
}

/// Check one role-shaped table (`[roles.<role>]`, `[embedder]`).
pub fn check_role_table(
    c: &Check,
    field: &str,
    context: &str,
    cfg: &RoleConfig,
) -> Result<(), ConfigError> {
    cfg.validate(context).map_err(|e| match e {
        LlmError::Config { message, .. } => c.error(field, message),
        other => c.error(field, other),
    })
}

/// Check every endpoint role of a config before any work (key set, reachable, model served).
pub fn preflight_roles(roles: &RolesConfig) -> Result<(), String> {
    let endpoints: Vec<_> = roles
        .iter()
        .filter(|(_, c)| c.provider == Provider::Openai)
        .collect();
    if endpoints.is_empty() {
        return Ok(());
    }
    let rt = crate::llm::runtime()?;
    for (role, cfg) in endpoints {
        rt.block_on(llm::preflight(*role, cfg))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The model answering `role` in this stage (scripted when the config has no table for it).
/// Its token usage and configured price go into the run's manifest when the stage ends.
pub fn open_role(
    ctx: &StageContext,
    roles: &RolesConfig,
    role: Role,
) -> Result<RoleModel, PipelineError> {
    let cfg = roles.get(&role).cloned().unwrap_or_default();
    let model =
        llm::build_role(role, &cfg, &ctx.response_cache()).map_err(|e| ctx.fail(e.to_string()))?;
    let tracked = model.clone();
    ctx.track_usage(move || llm::role_usage(role, &cfg, &tracked));
    Ok(model)
}

pub use crate::roles::run_all;
