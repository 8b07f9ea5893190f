//! How stages obtain their LLM roles: the `[roles.<role>]` tables of a stage TOML are
//! resolved to scripted stand-ins or preflighted endpoints sharing one response cache
//! (`output/.llm-cache.redb`, so a re-run or resume never pays twice).

use crate::llm::{self, Role, RoleModel, RolesConfig};
use crate::pipeline::{ErrorKind, PipelineError, StageContext};

/// The model answering `role` in this stage (scripted when the config has no table for it).
/// Its token usage and configured price go into the run's manifest when the stage ends.
pub fn open_role(
    ctx: &StageContext,
    roles: &RolesConfig,
    role: Role,
) -> Result<RoleModel, PipelineError> {
    let cfg = roles.get(&role).cloned().unwrap_or_default();
    let model = llm::build_role(role, &cfg, &ctx.response_cache())
        .map_err(|e| ctx.fail(ErrorKind::Endpoint, e.to_string()))?;
    let tracked = model.clone();
    ctx.track_usage(move || llm::role_usage(role, &cfg, &tracked));
    Ok(model)
}

pub use crate::roles::run_all;
