//! `tracer anchors generate [--check]`, `tracer emotion map`, `tracer emotion eval`: thin
//! wrappers over `crate::emotion`.
//!
//! Architecture invariant: parse, call the library, print — no mapping logic here.

use super::CliError;
use crate::config::Paths;
use crate::emotion::mapper::View;
use crate::emotion::settings::EmotionsConfig;
use crate::emotion::{self, Mapper, ModelSource, Taxonomy, anchors, eval};
use crate::seed::derive_rng;
use clap::{Args, Subcommand};
use std::io::BufRead;
use std::path::PathBuf;

/// The two command families, flattened into the top-level command list.
#[derive(Debug, Subcommand)]
pub enum EmotionCommands {
    /// The 5,940 emotion anchor instructions (emotion_anchors/anchors.jsonl).
    #[command(subcommand)]
    Anchors(AnchorsCommand),
    /// Map feelings to emotion conditions; measure the mapping's quality.
    #[command(subcommand)]
    Emotion(EmotionCommand),
}

#[derive(Debug, Subcommand)]
pub enum AnchorsCommand {
    /// Regenerate emotion_anchors/anchors.jsonl with the scripted generator.
    Generate(GenerateArgs),
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Do not write: fail if the checked-in file differs from what the generator produces.
    #[arg(long)]
    pub check: bool,
    /// Generator seed (the checked-in file uses the default).
    #[arg(long, default_value_t = emotion::ANCHOR_SEED)]
    pub seed: u64,
}

#[derive(Debug, Subcommand)]
pub enum EmotionCommand {
    /// Map feelings (plain lines, or JSONL with a `text` field) to conditions; writes JSONL.
    Map(MapArgs),
    /// Per-register accuracy on the hand-labelled sets: every view and decision rule.
    Eval(EvalArgs),
    /// Write the checked-in encoder vectors of every training and evaluation text
    /// (emotion_anchors/vectors/), so a fresh clone never encodes the anchors.
    Vectors(VectorsArgs),
    /// How often the mapper reads the scripted feeler's sentences (output/feelings/) as the
    /// feeler meant them: politeness, urgency, trust, emotion and family.
    Agreement(AgreementArgs),
}

#[derive(Debug, Args)]
pub struct AgreementArgs {
    /// Read at most this many feelings per domain (in file order).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Print the report as JSON instead of Markdown.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct VectorsArgs {
    /// Do not write: fail unless the checked-in files are intact and cover every text.
    #[arg(long)]
    pub check: bool,
    /// Rewrite one file with exactly the texts in use (removes deltas and vectors of texts
    /// no longer used). Default: add a delta file with only the texts the seed lacks.
    #[arg(long, conflicts_with = "check")]
    pub compact: bool,
}

#[derive(Debug, Args)]
pub struct MapArgs {
    /// Input file, or `-` for stdin.
    #[arg(long, default_value = "-")]
    pub input: String,
    /// Output file (default stdout).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Neighbours that vote (default: stages/emotions.toml's k).
    #[arg(long)]
    pub k: Option<usize>,
    /// Seed for choosing each line's anchor (default: stages/pipeline.toml).
    #[arg(long)]
    pub seed: Option<u64>,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Views to compare (comma-separated: encoder, tfidf, encoder-tfidf).
    #[arg(
        long,
        default_value = "encoder,tfidf,encoder-tfidf",
        value_delimiter = ','
    )]
    pub views: Vec<String>,
    /// Neighbours that vote (default: stages/emotions.toml's k).
    #[arg(long)]
    pub k: Option<usize>,
    /// Seed of the held-out anchor split.
    #[arg(long, default_value_t = 1)]
    pub split_seed: u64,
    /// Skip the held-out anchor check (it trains one more model).
    #[arg(long)]
    pub no_heldout: bool,
    /// Print the report as JSON instead of Markdown.
    #[arg(long)]
    pub json: bool,
}

fn failed(e: impl std::fmt::Display) -> CliError {
    CliError::Failed(e.to_string())
}

pub fn run(paths: &Paths, c: EmotionCommands) -> Result<(), CliError> {
    match c {
        EmotionCommands::Anchors(AnchorsCommand::Generate(a)) => generate(paths, a),
        EmotionCommands::Emotion(EmotionCommand::Map(a)) => map(paths, a),
        EmotionCommands::Emotion(EmotionCommand::Eval(a)) => evaluate(paths, a),
        EmotionCommands::Emotion(EmotionCommand::Vectors(a)) => vectors(paths, a),
        EmotionCommands::Emotion(EmotionCommand::Agreement(a)) => agreement(paths, a),
    }
}

/// `emotion_anchors/writer.toml`: who writes the anchors.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct WriterConfig {
    /// `[roles.anchor_writer]`: scripted (the compositional generator, the default) or an
    /// endpoint.
    #[serde(default)]
    roles: crate::llm::RolesConfig,
}

fn generate(paths: &Paths, a: GenerateArgs) -> Result<(), CliError> {
    let taxonomy = Taxonomy::load(&emotion::taxonomy_path(&paths.root)).map_err(failed)?;
    let writer_path = anchors::anchors_dir(&paths.root).join("writer.toml");
    let writer: WriterConfig = crate::config::parse_typed(
        &writer_path,
        &crate::config::read_table(&writer_path).map_err(failed)?,
    )
    .map_err(failed)?;
    let role = crate::llm::Role::AnchorWriter;
    let endpoint = writer
        .roles
        .get(&role)
        .filter(|c| c.provider == crate::llm::Provider::Openai)
        .cloned();
    let (list, by) = match endpoint {
        None => (
            anchors::generate(&taxonomy, a.seed).map_err(failed)?,
            "the scripted generator".to_string(),
        ),
        Some(cfg) => {
            if a.check {
                return Err(failed(format!(
                    "{}: --check compares against the scripted generator; it cannot check an endpoint writer",
                    writer_path.display()
                )));
            }
            crate::llm::runtime()
                .map_err(failed)?
                .block_on(crate::llm::preflight(role, &cfg))
                .map_err(failed)?;
            let model = match crate::llm::build_role(role, &cfg, &paths.response_cache())
                .map_err(failed)?
            {
                crate::llm::RoleModel::Endpoint(m) => m,
                crate::llm::RoleModel::Scripted(_) => {
                    return Err(failed("anchor_writer: expected an endpoint"));
                }
            };
            let id = model.model_id().to_string();
            (
                emotion::writer::write_anchors(model, &taxonomy, a.seed).map_err(failed)?,
                format!("anchor_writer {id}"),
            )
        }
    };
    let problems = anchors::validate(&taxonomy, &list);
    if let Some(p) = problems.first() {
        let at = list
            .get(p.line.saturating_sub(1))
            .filter(|_| p.line > 0)
            .map(|a| format!("condition {} anchor {}", a.condition_key(), a.anchor_index))
            .unwrap_or_else(|| "the set".into());
        return Err(failed(format!(
            "anchors written by {by} are invalid: {at}: {}{}",
            p.message,
            if problems.len() > 1 {
                format!(" (and {} more problems)", problems.len() - 1)
            } else {
                String::new()
            }
        )));
    }
    let text = anchors::to_jsonl(&list);
    let path = emotion::anchors_path(&paths.root);
    if a.check {
        let current = std::fs::read_to_string(&path)
            .map_err(|e| failed(format!("{}: {e}", path.display())))?;
        if current != text {
            return Err(failed(format!(
                "{}: differs from `tracer anchors generate --seed {}` output; regenerate it",
                path.display(),
                a.seed
            )));
        }
        outln!(
            "ok: {} is up to date ({} anchors)",
            path.display(),
            list.len()
        );
        return Ok(());
    }
    crate::artifact::write_atomic(&path, text.as_bytes()).map_err(failed)?;
    outln!(
        "wrote {} anchors ({} conditions x {}) by {by} to {}",
        list.len(),
        taxonomy.condition_count(),
        emotion::ANCHORS_PER_CONDITION,
        path.display()
    );
    Ok(())
}

/// The endpoint embedder `stages/emotions.toml` configures (`None`: its offline view).
fn project_embedder(paths: &Paths) -> Result<Option<Box<dyn emotion::embed::Embedder>>, CliError> {
    let cfg = emotion::endpoint::project_config(&paths.root).map_err(failed)?;
    emotion::endpoint::from_config(cfg.as_ref(), &paths.response_cache()).map_err(failed)
}

fn project_config(paths: &Paths, k: Option<usize>) -> Result<EmotionsConfig, CliError> {
    let mut cfg = EmotionsConfig::of_project(&paths.root).map_err(failed)?;
    if let Some(k) = k {
        cfg.k = k;
    }
    Ok(cfg)
}

fn load_mapper(paths: &Paths, k: Option<usize>) -> Result<Mapper, CliError> {
    let config = project_config(paths, k)?.mapper_config();
    let (mapper, source) =
        Mapper::load_or_train_with(&paths.root, &config, project_embedder(paths)?)
            .map_err(failed)?;
    match source {
        ModelSource::Cached => eprintln!("emotion model: {} (cached)", mapper.embedder().id()),
        ModelSource::Trained => eprintln!(
            "emotion model: {} trained in {:.2} s, cached in {}",
            mapper.embedder().id(),
            mapper.meta().train_seconds,
            emotion::mapper::cache_dir(&paths.root).display()
        ),
    }
    Ok(mapper)
}

/// One input line -> (the object to echo, the feeling text).
fn parse_line(
    source: &str,
    n: usize,
    line: &str,
) -> Result<(serde_json::Map<String, serde_json::Value>, String), CliError> {
    if line.trim_start().starts_with('{') {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| failed(format!("{source}:{n}: {e}")))?;
        let obj = v.as_object().cloned().unwrap_or_default();
        let text = obj
            .get("text")
            .and_then(|t| t.as_str())
            .ok_or_else(|| failed(format!("{source}:{n}: no string field `text`")))?
            .to_string();
        Ok((obj, text))
    } else {
        let mut obj = serde_json::Map::new();
        obj.insert("text".into(), line.trim().into());
        Ok((obj, line.trim().to_string()))
    }
}

fn map(paths: &Paths, a: MapArgs) -> Result<(), CliError> {
    if let Some(path) = &a.output {
        crate::artifact::check_output_file(path).map_err(failed)?;
    }
    let seed = super::resolve_seed(paths, a.seed)?;
    let (source, reader): (String, Box<dyn BufRead>) = if a.input == "-" {
        ("<stdin>".into(), Box::new(std::io::stdin().lock()))
    } else {
        let f = std::fs::File::open(&a.input).map_err(|e| failed(format!("{}: {e}", a.input)))?;
        (a.input.clone(), Box::new(std::io::BufReader::new(f)))
    };
    let mut rows = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| failed(format!("{source}:{}: {e}", i + 1)))?;
        if line.trim().is_empty() {
            continue;
        }
        rows.push((i + 1, parse_line(&source, i + 1, &line)?));
    }
    let mapper = load_mapper(paths, a.k)?;
    let texts: Vec<String> = rows.iter().map(|(_, (_, t))| t.clone()).collect();
    let votes = mapper.votes(&texts).map_err(failed)?;
    let mut out = String::new();
    for ((n, (mut obj, _)), vote) in rows.into_iter().zip(votes) {
        let mut rng = derive_rng(seed, &["emotion-map", &n.to_string()]);
        let m = mapper.choose_anchor(&vote, &mut rng);
        if let serde_json::Value::Object(fields) = serde_json::to_value(&m).map_err(failed)? {
            obj.extend(fields);
        }
        out.push_str(&serde_json::Value::Object(obj).to_string());
        out.push('\n');
    }
    match a.output {
        Some(p) => crate::artifact::write_atomic(&p, out.as_bytes()).map_err(failed)?,
        None => out!("{out}"),
    }
    Ok(())
}

fn evaluate(paths: &Paths, a: EvalArgs) -> Result<(), CliError> {
    let taxonomy = Taxonomy::load(&emotion::taxonomy_path(&paths.root)).map_err(failed)?;
    let registers = eval::load_registers(&paths.root, &taxonomy).map_err(failed)?;
    let views = a
        .views
        .iter()
        .map(|v| {
            View::ALL
                .into_iter()
                .find(|x| x.as_str() == v.trim())
                .ok_or_else(|| {
                    failed(format!(
                        "--views: unknown view '{v}' (encoder, tfidf, encoder-tfidf)"
                    ))
                })
        })
        .collect::<Result<Vec<View>, CliError>>()?;
    if views.is_empty() {
        return Err(failed("--views: name at least one view"));
    }
    let config = project_config(paths, a.k)?.mapper_config();
    let report = eval::evaluate(
        &paths.root,
        &config,
        &registers,
        &eval::EvalOptions {
            views,
            split_seed: a.split_seed,
            heldout_anchors: !a.no_heldout,
        },
    )
    .map_err(failed)?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&report).map_err(failed)?);
    } else {
        out!("{}", report.to_markdown());
    }
    Ok(())
}

/// Every text the encoder sees from the project's own files: the training set (anchors and
/// paraphrases) and the evaluation registers.
fn project_texts(paths: &Paths) -> Result<Vec<String>, CliError> {
    let config = emotion::mapper::MapperConfig::default();
    let (taxonomy, training) = Mapper::training_set(&paths.root, &config).map_err(failed)?;
    let mut texts: Vec<String> = training.into_iter().map(|a| a.text).collect();
    for r in eval::load_registers(&paths.root, &taxonomy).map_err(failed)? {
        texts.extend(r.examples.into_iter().map(|e| e.text));
    }
    Ok(texts)
}

fn vectors(paths: &Paths, a: VectorsArgs) -> Result<(), CliError> {
    let texts = project_texts(paths)?;
    let dir = emotion::mapper::vectors_dir(&paths.root);
    if a.check {
        let model = emotion::encoder::MiniLm::load(&emotion::encoder::model_dir(&paths.root))
            .map_err(failed)?;
        let id = emotion::embed::Embedder::id(&model);
        let seed = emotion::embed_cache::CachedEmbedder::open_seed(Box::new(model), &dir);
        let path = seed.path().to_path_buf();
        match seed.state() {
            emotion::embed_cache::CacheState::Loaded { .. } => {}
            emotion::embed_cache::CacheState::Missing => {
                return Err(failed(format!(
                    "{}: no checked-in vectors for {id}; run `tracer emotion vectors`",
                    path.display()
                )));
            }
            emotion::embed_cache::CacheState::Corrupt(why) => return Err(failed(why)),
        }
        let missing = seed.count_missing(&texts);
        if missing > 0 {
            return Err(failed(format!(
                "{}: {missing} of {} texts have no vector; run `tracer emotion vectors`",
                path.display(),
                texts.len()
            )));
        }
        outln!(
            "ok: the vectors in {} cover all {} texts",
            dir.display(),
            texts.len()
        );
        return Ok(());
    }
    let (encoder, _) = emotion::mapper::cached_encoder(&paths.root).map_err(failed)?;
    match encoder
        .write_seed(&texts, &dir, a.compact)
        .map_err(failed)?
    {
        Some(path) => outln!(
            "wrote {}: the checked-in vectors now cover all {} texts",
            path.display(),
            texts.len()
        ),
        None => outln!(
            "ok: the checked-in vectors already cover all {} texts",
            texts.len()
        ),
    }
    Ok(())
}

/// Agreement of one domain's feelings: counts of rows and of labels the mapper read as meant.
#[derive(Debug, Default, serde::Serialize)]
struct AgreementRow {
    domain: String,
    /// Rows whose feeling the scripted feeler rewrites identically from the task and the
    /// artifact's seed (an endpoint feeler's rows are skipped: their intent is unknown).
    feelings: usize,
    skipped: usize,
    family: usize,
    emotion: usize,
    politeness: usize,
    urgency: usize,
    trust: usize,
    /// Milliseconds to map one feeling (embedding included), mean over the domain.
    mapping_ms: f64,
}

fn agreement(paths: &Paths, a: AgreementArgs) -> Result<(), CliError> {
    use crate::roles::feeler::feeler_input;
    use crate::roles::feeler::scripted_feeling_labelled;
    let mapper = load_mapper(paths, None)?;
    let mut rows = Vec::new();
    for domain in crate::domain::registry() {
        let path = crate::pipeline::stage_dir(&paths.output, "feelings", domain.name())
            .join("part-00000.parquet");
        if !path.exists() {
            continue;
        }
        let (tasks, provenance) =
            crate::artifact::read_records::<crate::artifact::TaskRecord>(&path).map_err(failed)?;
        let mut row = AgreementRow {
            domain: domain.name().to_string(),
            ..AgreementRow::default()
        };
        let mut texts = Vec::new();
        let mut meant = Vec::new();
        for task in tasks.iter().take(a.limit.unwrap_or(usize::MAX)) {
            let input =
                feeler_input(task).map_err(|e| failed(format!("{}: {e}", path.display())))?;
            let mut rng = derive_rng(provenance.seed, &["feelings", &task.domain, &task.task_id]);
            let scripted = scripted_feeling_labelled(&input, &mut rng);
            match &task.feeling {
                Some(f) if *f == scripted.text => {
                    texts.push(scripted.text.clone());
                    meant.push(scripted);
                }
                _ => row.skipped += 1,
            }
        }
        let started = std::time::Instant::now();
        let mut votes = Vec::with_capacity(texts.len());
        for t in &texts {
            votes.extend(mapper.votes(std::slice::from_ref(t)).map_err(failed)?);
        }
        row.mapping_ms = started.elapsed().as_secs_f64() * 1000.0 / texts.len().max(1) as f64;
        for (vote, m) in votes.iter().zip(&meant) {
            let c = &mapper.taxonomy().conditions()[vote.condition_id];
            row.feelings += 1;
            row.family +=
                (mapper.taxonomy().family_of(m.emotion) == Some(c.family.as_str())) as usize;
            row.emotion += (c.emotion == m.emotion) as usize;
            row.politeness += (c.politeness == m.politeness) as usize;
            row.urgency += (c.urgency == m.urgency) as usize;
            row.trust += (c.trust == m.trust) as usize;
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(failed(format!(
            "{}: no feelings artifacts (output/feelings/domain=*/part-00000.parquet); run the pipeline through `feelings` first",
            paths.output.display()
        )));
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&rows).map_err(failed)?);
        return Ok(());
    }
    outln!(
        "# Scripted feelings read as the feeler meant them ({} / {})\n",
        mapper.embedder().id(),
        mapper.decision().as_str()
    );
    outln!(
        "| domain | feelings | family | emotion | politeness | urgency | trust | ms per feeling |"
    );
    outln!("|---|---|---|---|---|---|---|---|");
    let pct = |k: usize, n: usize| format!("{:.1}%", 100.0 * k as f64 / n.max(1) as f64);
    for r in &rows {
        outln!(
            "| {} | {}{} | {} | {} | {} | {} | {} | {:.1} |",
            r.domain,
            r.feelings,
            if r.skipped > 0 {
                format!(" ({} skipped)", r.skipped)
            } else {
                String::new()
            },
            pct(r.family, r.feelings),
            pct(r.emotion, r.feelings),
            pct(r.politeness, r.feelings),
            pct(r.urgency, r.feelings),
            pct(r.trust, r.feelings),
            r.mapping_ms
        );
    }
    Ok(())
}
