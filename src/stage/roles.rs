//! How stages obtain their LLM roles and the prompts those roles send: the `[roles.<role>]`
//! tables of a stage's settings (its own TOML, or the run's roles file merged in by
//! `config::Paths::stage_table`) are resolved to scripted stand-ins or preflighted endpoints
//! sharing one response cache (`output/.llm-cache.redb`, so a re-run or resume never pays
//! twice); an endpoint role's prompt is the project file `<prompts>/<name>.md`, which is an
//! input of the stage (editing it makes exactly the stages that send it stale).

use crate::llm::{self, Prompt, Role, RoleModel, RolesConfig};
use crate::pipeline::{ErrorKind, PipelineError, StageContext};
use std::path::PathBuf;
use std::sync::Arc;

/// The prompts directory when a stage's settings name none (relative to the project root).
pub const DEFAULT_PROMPTS_DIR: &str = "prompts";

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

/// `<dir>/<name>.md`, relative to the project root.
pub fn prompt_file(dir: Option<&str>, name: &str) -> PathBuf {
    PathBuf::from(dir.unwrap_or(DEFAULT_PROMPTS_DIR)).join(format!("{name}.md"))
}

/// The prompt a role sends: the project's file for an endpoint (read and parsed; an error
/// names the file), the shipped text for a scripted role (which sends nothing).
pub fn role_prompt(
    ctx: &StageContext,
    model: &RoleModel,
    dir: Option<&str>,
    name: &str,
) -> Result<Arc<Prompt>, PipelineError> {
    let prompt = if model.is_scripted() {
        llm::prompt::builtin(name).ok_or_else(|| format!("no shipped prompt '{name}'"))
    } else {
        Prompt::load(&ctx.paths.root.join(prompt_file(dir, name)))
    };
    prompt
        .map(Arc::new)
        .map_err(|e| ctx.fail(ErrorKind::Config, e))
}

/// The prompt files a stage's settings make it read: for each `(role, prompt name)` the
/// stage uses, `<prompts>/<name>.md` when that role is an endpoint. Stages list them among
/// their source files, so a prompt's bytes are part of the stage's fingerprint.
pub fn prompt_sources(config: &toml::Table, uses: &[(Role, &str)]) -> Vec<PathBuf> {
    let dir = config
        .get(crate::config::PROMPTS_KEY)
        .and_then(|v| v.as_str());
    let roles = config.get("roles").and_then(|r| r.as_table());
    uses.iter()
        .filter(|(role, _)| {
            roles
                .and_then(|r| r.get(role.as_str()))
                .is_some_and(crate::config::is_endpoint)
        })
        .map(|(_, name)| prompt_file(dir, name))
        .collect()
}

/// The probe's bound for each endpoint role of a stage (`uses`: each role and the prompt it
/// sends): the agent's from the run's policies and tools, the grounder's from its prompt
/// and the tools, every other role's from its prompt file.
pub fn probe_fits(
    scope: &crate::pipeline::PreflightScope,
    roles: &RolesConfig,
    prompts: Option<&str>,
    uses: &[(Role, &str)],
) -> llm::preflight::Fits {
    let mut fits = llm::preflight::Fits::new();
    for (role, cfg) in roles {
        if cfg.provider != llm::Provider::Openai {
            continue;
        }
        let agent = || crate::project::agent_fit(scope.paths, scope.domains);
        if *role == Role::Agent {
            fits.insert(*role, agent());
            continue;
        }
        let Some((_, name)) = uses.iter().find(|(r, _)| r == role) else {
            continue;
        };
        let file = prompt_file(prompts, name);
        if let Some(mut fit) = crate::project::prompt_fit(scope.paths, &file, scope.domains) {
            if llm::preflight::offers_tools(*role) {
                fit.tools = agent().tools;
            }
            fits.insert(*role, fit);
        }
    }
    fits
}

/// A stage's preflight of its roles: the model checks and the probe of each endpoint role
/// (`uses` as in [`probe_fits`]).
pub fn preflight(
    scope: &crate::pipeline::PreflightScope,
    roles: &RolesConfig,
    prompts: Option<&str>,
    uses: &[(Role, &str)],
) -> Result<(), String> {
    llm::preflight::preflight_roles(roles, &probe_fits(scope, roles, prompts, uses))
}

pub use crate::roles::run_all;

/// The endpoint failures of a stage's items against what its config tolerates: above
/// `max_errored_share` of `total` the stage fails (and stays stale: a rerun asks again only
/// for these items, every other answer comes from the response cache); at or under it the
/// stage goes on with a warning, the items recorded as errored (never as rejected).
/// `errored` holds (item id, reason).
pub fn settle_errored(
    ctx: &StageContext,
    what: &str,
    errored: &[(String, String)],
    total: usize,
    max_errored_share: f64,
) -> Result<(), PipelineError> {
    let Some((id, why)) = errored.first() else {
        return Ok(());
    };
    let n = errored.len();
    let tolerated = (max_errored_share * total as f64).floor() as usize;
    let summary = format!("{n} of {total} {what} errored at an endpoint (first: {id}: {why})");
    if n > tolerated {
        return Err(ctx.fail(
            ErrorKind::Endpoint,
            format!(
                "{summary}; the stage stays stale and a rerun asks again only for those \
                 (max_errored_share = {max_errored_share} tolerates {tolerated})"
            ),
        ));
    }
    eprintln!(
        "tracer: warning: {}/{}: {summary}; tolerated by max_errored_share = {max_errored_share} and recorded as errored in _rejects.parquet; only --force asks again",
        ctx.stage,
        ctx.domain.name()
    );
    Ok(())
}
