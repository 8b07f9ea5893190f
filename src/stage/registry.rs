//! The stage registry: one line per stage, in a topological order, and the DAG the CLI
//! runs. Kept apart from `stage/mod.rs`, which every stage imports, so that a stage's code
//! fingerprint (see `pipeline::fingerprint`) does not reach every other stage through it.

use super::{
    analysis, db, emotions, feelings, graphs, grounded, refined, reviewed, rollouts, tasks, traces,
    trajectories,
};
use crate::pipeline::Stage;

/// The stage DAG the CLI runs: the registry below, handed to the pipeline.
pub fn dag() -> crate::pipeline::Dag {
    crate::pipeline::Dag::new(registry())
}

/// The registry: one line per stage, in a topological order.
pub fn registry() -> &'static [&'static dyn Stage] {
    static STAGES: &[&dyn Stage] = &[
        &db::DbStage,
        &graphs::GraphsStage,
        &traces::TracesStage,
        &grounded::GroundedStage,
        &refined::RefinedStage,
        &feelings::FeelingsStage,
        &emotions::EmotionsStage,
        &tasks::TasksStage,
        &rollouts::ROLLOUTS,
        &trajectories::TrajectoriesStage,
        &rollouts::SCREENED,
        &reviewed::ReviewedStage,
        &rollouts::EVAL,
        &analysis::AnalysisStage,
    ];
    STAGES
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{CODE_FILES, code_hash, code_hash_edited, code_reach};

    /// The scripted agent's file.
    const SCRIPTED_AGENT: &str = "src/harness/agent/mod.rs";
    /// The stages that run the agent (rollouts, screened, eval: one module). Those after
    /// them re-run when what they read changes, not because the agent's code did.
    const RUNS_THE_AGENT: &str = "src/stage/rollouts.rs";
    /// The stages whose code cannot reach the rollout harness.
    const BEFORE_ROLLOUTS: &[&str] = &[
        "db", "graphs", "traces", "grounded", "refined", "feelings", "emotions", "tasks",
    ];

    fn builtin_domains() -> Vec<&'static str> {
        let mut out: Vec<&str> = CODE_FILES.iter().filter_map(|f| f.domain).collect();
        out.dedup();
        out
    }

    #[test]
    fn every_stage_names_the_file_its_code_starts_from() {
        for s in registry() {
            assert!(
                CODE_FILES.iter().any(|f| f.path == s.code_root()),
                "{}: code_root {:?} is not a scanned source file",
                s.name(),
                s.code_root()
            );
            assert!(code_reach(s.code_root(), "retail").contains(s.code_root()));
        }
    }

    #[test]
    fn an_edit_of_the_scripted_agent_leaves_the_stages_before_rollouts_fresh() {
        assert!(CODE_FILES.iter().any(|f| f.path == SCRIPTED_AGENT));
        let agents = registry()
            .iter()
            .filter(|s| s.code_root() == RUNS_THE_AGENT);
        assert_eq!(agents.count(), 3);
        for d in builtin_domains() {
            for s in registry() {
                let before = code_hash(s.code_root(), d);
                let after = code_hash_edited(s.code_root(), d, Some(SCRIPTED_AGENT));
                if BEFORE_ROLLOUTS.contains(&s.name()) {
                    assert_eq!(before, after, "{d}: {} would re-run", s.name());
                } else if s.code_root() == RUNS_THE_AGENT {
                    assert_ne!(before, after, "{d}: {} would not re-run", s.name());
                }
            }
        }
    }

    #[test]
    fn an_edit_of_one_domain_leaves_the_others_fresh_and_shared_code_counts_for_all() {
        let domains = builtin_domains();
        assert!(domains.len() >= 10, "{domains:?}");
        let airline = "src/domain/airline/mod.rs";
        let shared = "src/pipeline/stage.rs";
        for d in domains {
            for s in registry() {
                let root = s.code_root();
                let before = code_hash(root, d);
                let after = code_hash_edited(root, d, Some(airline));
                assert_eq!(before == after, d != "airline", "{d}: {}", s.name());
                assert_ne!(before, code_hash_edited(root, d, Some(shared)));
            }
        }
        // Each domain's hash is its own.
        let hashes: std::collections::BTreeSet<String> = builtin_domains()
            .iter()
            .map(|d| code_hash("src/stage/db.rs", d))
            .collect();
        assert_eq!(hashes.len(), builtin_domains().len());
    }
}
