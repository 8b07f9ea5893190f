//! An OpenAI-compatible `/v1/embeddings` model as the mapper's [`Embedder`]: the LLM
//! layer's embedder (cache, retries, concurrency limits) behind the emotion module's
//! synchronous trait. Texts go in batches; the vector length is probed once.

use super::embed::{EmbedError, Embedder};
use crate::llm;
use std::sync::Arc;

/// Texts per `/v1/embeddings` request.
const BATCH: usize = 128;

pub struct EndpointEmbedder {
    model: Arc<dyn llm::EmbeddingModel>,
    dim: usize,
    runtime: tokio::runtime::Runtime,
}

impl EndpointEmbedder {
    pub fn new(model: Arc<dyn llm::EmbeddingModel>) -> Result<EndpointEmbedder, EmbedError> {
        let err = |message: String| EmbedError {
            embedder: format!("endpoint:{}", model.model_id()),
            message,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| err(e.to_string()))?;
        let probe = runtime
            .block_on(model.embed(&["dimension probe".to_string()]))
            .map_err(|e| err(e.to_string()))?;
        let dim = probe
            .first()
            .map(Vec::len)
            .filter(|d| *d > 0)
            .ok_or_else(|| err("the endpoint returned no vector".into()))?;
        Ok(EndpointEmbedder {
            model,
            dim,
            runtime,
        })
    }
}

impl Embedder for EndpointEmbedder {
    fn id(&self) -> String {
        format!("endpoint:{}:dim={}", self.model.model_id(), self.dim)
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            let vectors = self
                .runtime
                .block_on(self.model.embed(chunk))
                .map_err(|e| EmbedError {
                    embedder: self.id(),
                    message: e.to_string(),
                })?;
            if vectors.len() != chunk.len() || vectors.iter().any(|v| v.len() != self.dim) {
                return Err(EmbedError {
                    embedder: self.id(),
                    message: format!("expected {} vectors of length {}", chunk.len(), self.dim),
                });
            }
            out.extend(vectors);
        }
        Ok(out)
    }
}

/// The embedder an `[embedder]` table of `stages/emotions.toml` configures: `None` for the
/// offline default (no table, or `provider = "scripted"`), else the endpoint, preflighted.
pub fn from_config(
    cfg: Option<&llm::RoleConfig>,
    cache: &std::path::Path,
) -> Result<Option<Box<dyn Embedder>>, String> {
    let Some(cfg) = cfg.filter(|c| c.provider == llm::Provider::Openai) else {
        return Ok(None);
    };
    let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    rt.block_on(llm::preflight_with_env(
        "embedder 'emotion'",
        cfg,
        &llm::process_env,
    ))
    .map_err(|e| e.to_string())?;
    drop(rt);
    let model = llm::build_embedder("emotion", cfg, cache).map_err(|e| e.to_string())?;
    Ok(Some(Box::new(
        EndpointEmbedder::new(model).map_err(|e| e.to_string())?,
    )))
}

/// The `[embedder]` table of a project's `stages/emotions.toml`, if any.
pub fn project_config(root: &std::path::Path) -> Result<Option<llm::RoleConfig>, String> {
    let path = root.join("stages/emotions.toml");
    let table = crate::config::read_table(&path).map_err(|e| e.to_string())?;
    match table.get("embedder") {
        None => Ok(None),
        Some(v) => v
            .clone()
            .try_into::<llm::RoleConfig>()
            .map(Some)
            .map_err(|e| format!("{}: embedder: {e}", path.display())),
    }
}
