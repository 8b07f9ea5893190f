//! What can go wrong running the pipeline, and of what kind ([`ErrorKind`]): a caller can
//! tell a config to fix from a missing input, a failing endpoint or a bug without reading
//! the message, which stays what users read.

use super::{JournalError, LockError};
use crate::artifact::ArtifactError;
use crate::config::ConfigError;
use crate::domain::DomainError;

/// The kind of a pipeline failure: who has to act.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A config file or setting (`stages/*.toml`, the project's files, the command line).
    Config,
    /// An input: an upstream artifact missing, stale, unreadable or not what its manifest
    /// records; a project data file a stage reads (graphs, reviews) that is malformed.
    Input,
    /// The machine or a domain: a database, a policy, the local encoder, files, locks.
    Environment,
    /// A model endpoint: unreachable, failing, or losing more episodes than tolerated.
    Endpoint,
    /// A bug: something the code should have ruled out.
    Internal,
}

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    #[error(transparent)]
    Domain(#[from] DomainError),
    #[error("unknown stage '{name}' (stages: {known})")]
    UnknownStage { name: String, known: String },
    /// A stage's own failure for one domain (`*` for all, e.g. its preflight).
    #[error("stage '{stage}', domain '{domain}': {message}")]
    Stage {
        stage: String,
        domain: String,
        kind: ErrorKind,
        message: String,
    },
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The shared validation found problems: the first, and how many more.
    #[error("{0}")]
    Invalid(String),
}

impl PipelineError {
    /// A stage's failure of `kind` for `domain`.
    pub fn stage(
        stage: &str,
        domain: &str,
        kind: ErrorKind,
        message: impl Into<String>,
    ) -> PipelineError {
        PipelineError::Stage {
            stage: stage.to_string(),
            domain: domain.to_string(),
            kind,
            message: message.into(),
        }
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            PipelineError::Config(_) | PipelineError::UnknownStage { .. } => ErrorKind::Config,
            PipelineError::Invalid(_) => ErrorKind::Config,
            PipelineError::Artifact(_) => ErrorKind::Input,
            PipelineError::Domain(DomainError::UnknownDomain { .. }) => ErrorKind::Config,
            PipelineError::Domain(DomainError::Import { .. }) => ErrorKind::Input,
            PipelineError::Domain(DomainError::Other(_)) => ErrorKind::Environment,
            PipelineError::Stage { kind, .. } => *kind,
            // A journal of another run is the stage's own input; one it cannot write is the
            // machine's.
            PipelineError::Journal(JournalError::Mismatch { .. }) => ErrorKind::Input,
            PipelineError::Journal(JournalError::Io { .. }) => ErrorKind::Environment,
            PipelineError::Lock(_) => ErrorKind::Environment,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_a_kind_and_a_stage_error_keeps_its_message() {
        let e = PipelineError::stage("rollouts", "airline", ErrorKind::Endpoint, "down");
        assert_eq!(e.kind(), ErrorKind::Endpoint);
        assert_eq!(e.to_string(), "stage 'rollouts', domain 'airline': down");
        let config = PipelineError::from(ConfigError::File {
            path: "stages/eval.toml".into(),
            message: "trials: 0 is outside 1..=1000".into(),
        });
        assert_eq!(config.kind(), ErrorKind::Config);
        let input = PipelineError::from(ArtifactError::Io {
            path: "x.parquet".into(),
            message: "missing".into(),
        });
        assert_eq!(input.kind(), ErrorKind::Input);
        let held = PipelineError::from(LockError::Held {
            dir: "output".into(),
            holder: "pid 1".into(),
        });
        assert_eq!(held.kind(), ErrorKind::Environment);
    }
}
