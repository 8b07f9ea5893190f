//! The pipeline's own counts, read from a run's configuration (the same
//! `Paths::stage_table` every stage reads): the roles each stage uses, the grounded caps per
//! domain and split, the traces a domain samples, the trials of each rollout stage, what
//! review and the analysis keep.
//!
//! Architecture invariant: reads configuration only; nothing here opens an artifact.

use super::PlanError;
use crate::config::{Paths, STAGE_ROLES};
use crate::domain::Domain;
use crate::llm::{Provider, RoleConfig};
use crate::rollout::RolloutsConfig;

/// One role of one stage, as the run's configuration sets it.
#[derive(Clone, Debug)]
pub struct RoleSetting {
    pub stage: &'static str,
    pub role: &'static str,
    /// `None`: the scripted stand-in.
    pub endpoint: Option<RoleConfig>,
    /// The stage's prompts directory (relative to the root).
    pub prompts: String,
}

/// Every role of every stage with roles, in the pipeline's order.
pub fn role_settings(paths: &Paths) -> Result<Vec<RoleSetting>, PlanError> {
    let mut out = Vec::new();
    for (stage, roles) in STAGE_ROLES {
        let (path, table) = paths.stage_table(stage)?;
        let prompts = table
            .get(crate::config::PROMPTS_KEY)
            .and_then(|v| v.as_str())
            .unwrap_or("prompts")
            .to_string();
        for role in *roles {
            let value = if *role == "embedder" {
                table.get("embedder")
            } else {
                table.get("roles").and_then(|r| r.get(*role))
            };
            let endpoint = match value {
                None => None,
                Some(v) => {
                    let cfg: RoleConfig = v.clone().try_into().map_err(|e: toml::de::Error| {
                        PlanError::Invalid(format!(
                            "{}: roles.{role}: {}",
                            path.display(),
                            e.to_string()
                                .split_whitespace()
                                .collect::<Vec<_>>()
                                .join(" ")
                        ))
                    })?;
                    (cfg.provider == Provider::Openai).then_some(cfg)
                }
            };
            out.push(RoleSetting {
                stage,
                role,
                endpoint,
                prompts: prompts.clone(),
            });
        }
    }
    Ok(out)
}

/// What `grounded` takes of a domain's traces: the first `train` / `eval` of at most
/// `max_actions` calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    pub train: usize,
    pub eval: usize,
    pub max_actions: usize,
}

/// `grounded`'s defaults (its settings type in `stage::grounded`; a unit test holds the two
/// together).
pub const DEFAULT_MAX_TRAIN: usize = 300;
pub const DEFAULT_MAX_EVAL: usize = 150;

/// The caps a `grounded` table gives `domain` (its `[caps.<domain>]` entry over the
/// top-level values, over the defaults).
pub fn caps_for(table: &toml::Table, domain: &str) -> Caps {
    let top = |key: &str, default: usize| {
        table
            .get(key)
            .and_then(|v| v.as_integer())
            .map_or(default, |n| n.max(0) as usize)
    };
    let own = |key: &str, fallback: usize| {
        table
            .get("caps")
            .and_then(|c| c.get(domain))
            .and_then(|c| c.get(key))
            .and_then(|v| v.as_integer())
            .map_or(fallback, |n| n.max(0) as usize)
    };
    Caps {
        train: own("max_train", top("max_train", DEFAULT_MAX_TRAIN)),
        eval: own("max_eval", top("max_eval", DEFAULT_MAX_EVAL)),
        max_actions: own(
            "max_actions",
            top("max_actions", crate::verify::MAX_ACTIONS),
        ),
    }
}

/// The traces `traces` samples for `domain` when no run says how many there are: its
/// target (`[targets]`, else `default_target`), split by `eval_fraction` (`[train, eval]`).
pub fn target_traces(table: &toml::Table, domain: &str) -> [f64; 2] {
    let target = table
        .get("targets")
        .and_then(|t| t.get(domain))
        .or_else(|| table.get("default_target"))
        .and_then(|v| v.as_integer())
        .unwrap_or(4000)
        .max(0) as f64;
    let eval = table
        .get("eval_fraction")
        .and_then(|v| v.as_float())
        .unwrap_or(0.1)
        .clamp(0.0, 1.0);
    [target * (1.0 - eval), target * eval]
}

/// The settings of the run the plan is for.
#[derive(Clone, Debug)]
pub struct RunSettings {
    pub roles: Vec<RoleSetting>,
    pub grounded: toml::Table,
    pub traces: toml::Table,
    pub rollouts: RolloutsConfig,
    pub screened: RolloutsConfig,
    pub eval: RolloutsConfig,
    /// `reviewed`'s `unreviewed = "drop"`: only reviewed tasks reach `eval`.
    pub drop_unreviewed: bool,
    /// The analysis reads every scored episode, not only failed ones.
    pub analyse_all: bool,
}

impl RunSettings {
    pub fn load(paths: &Paths) -> Result<RunSettings, PlanError> {
        let rollouts = |stage: &str| -> Result<RolloutsConfig, PlanError> {
            let (path, table) = paths.stage_table(stage)?;
            Ok(RolloutsConfig::load(&path, &table)?)
        };
        let (analysis_path, analysis) = paths.stage_table("analysis")?;
        let analysis = crate::analysis::AnalysisConfig::load(&analysis_path, &analysis)?;
        let (_, reviewed) = paths.stage_table("reviewed")?;
        Ok(RunSettings {
            roles: role_settings(paths)?,
            grounded: paths.stage_table("grounded")?.1,
            traces: paths.stage_table("traces")?.1,
            rollouts: rollouts("rollouts")?,
            screened: rollouts("screened")?,
            eval: rollouts("eval")?,
            drop_unreviewed: reviewed.get("unreviewed").and_then(|v| v.as_str()) == Some("drop"),
            analyse_all: analysis.scope == "all",
        })
    }

    pub fn caps(&self, domain: &dyn Domain) -> Caps {
        caps_for(&self.grounded, domain.name())
    }

    /// The trials of a rollout stage.
    pub fn trials(&self, stage: &str) -> f64 {
        f64::from(match stage {
            "rollouts" => self.rollouts.trials,
            "screened" => self.screened.trials,
            _ => self.eval.trials,
        })
    }

    /// Whether a rollout stage's user is given the emotion instruction.
    pub fn emotion(&self, stage: &str) -> bool {
        match stage {
            "rollouts" => self.rollouts.emotion,
            "screened" => self.screened.emotion,
            _ => self.eval.emotion,
        }
    }
}
