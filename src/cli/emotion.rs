//! `tracer anchors generate [--check]`, `tracer emotion map`, `tracer emotion eval`: thin
//! wrappers over `crate::emotion`.
//!
//! Architecture invariant: parse, call the library, print — no mapping logic here.

use super::CliError;
use crate::config::Paths;
use crate::emotion::{self, Mapper, MapperConfig, ModelSource, Taxonomy, anchors, eval};
use crate::seed::derive_rng;
use clap::{Args, Subcommand};
use std::io::{BufRead, Write};
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
    /// Held-out anchor accuracy and accuracy on the hand-labelled feelings fixture.
    Eval(EvalArgs),
}

#[derive(Debug, Args)]
pub struct MapArgs {
    /// Input file, or `-` for stdin.
    #[arg(long, default_value = "-")]
    pub input: String,
    /// Output file (default stdout).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Neighbours that vote.
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Seed for choosing each line's anchor (default: stages/pipeline.toml).
    #[arg(long)]
    pub seed: Option<u64>,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The labelled feelings (JSONL: text, family, emotion, politeness, urgency, trust).
    #[arg(long, default_value = "tests/fixtures/feelings/feelings.jsonl")]
    pub feelings: PathBuf,
    /// Neighbours that vote.
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Seed of the held-out anchor split.
    #[arg(long, default_value_t = 1)]
    pub split_seed: u64,
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
    }
}

fn generate(paths: &Paths, a: GenerateArgs) -> Result<(), CliError> {
    let taxonomy = Taxonomy::load(&emotion::taxonomy_path(&paths.root)).map_err(failed)?;
    let list = anchors::generate(&taxonomy, a.seed).map_err(failed)?;
    let problems = anchors::validate(&taxonomy, &list);
    if let Some(p) = problems.first() {
        return Err(failed(format!(
            "generated anchors are invalid: line {}: {}",
            p.line, p.message
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
        println!(
            "ok: {} is up to date ({} anchors)",
            path.display(),
            list.len()
        );
        return Ok(());
    }
    crate::artifact::write_atomic(&path, text.as_bytes()).map_err(failed)?;
    println!(
        "wrote {} anchors ({} conditions x {}) to {}",
        list.len(),
        taxonomy.condition_count(),
        emotion::ANCHORS_PER_CONDITION,
        path.display()
    );
    Ok(())
}

/// The embedder `stages/emotions.toml` configures (`None`: the offline default).
fn project_embedder(paths: &Paths) -> Result<Option<Box<dyn emotion::embed::Embedder>>, CliError> {
    let cfg = emotion::endpoint::project_config(&paths.root).map_err(failed)?;
    emotion::endpoint::from_config(cfg.as_ref(), &crate::stage::roles::cache_path(paths))
        .map_err(failed)
}

fn load_mapper(paths: &Paths, k: usize) -> Result<Mapper, CliError> {
    let config = MapperConfig {
        k,
        ..MapperConfig::default()
    };
    let (mapper, source) = Mapper::load_or_train_with(
        &paths.root,
        &paths.output,
        &config,
        project_embedder(paths)?,
    )
    .map_err(failed)?;
    let model = emotion::mapper::model_path(&paths.output);
    match source {
        ModelSource::Cached => eprintln!("emotion model: {} (cached)", model.display()),
        ModelSource::Trained => eprintln!(
            "emotion model: trained in {:.2} s, cached at {}",
            mapper.meta().train_seconds,
            model.display()
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
        None => std::io::stdout()
            .write_all(out.as_bytes())
            .map_err(|e| failed(format!("<stdout>: {e}")))?,
    }
    Ok(())
}

fn evaluate(paths: &Paths, a: EvalArgs) -> Result<(), CliError> {
    let taxonomy = Taxonomy::load(&emotion::taxonomy_path(&paths.root)).map_err(failed)?;
    let list = anchors::load(&emotion::anchors_path(&paths.root), &taxonomy).map_err(failed)?;
    let feelings_path = if a.feelings.is_absolute() {
        a.feelings.clone()
    } else {
        paths.root.join(&a.feelings)
    };
    let feelings = eval::load_feelings(&feelings_path, &taxonomy).map_err(failed)?;
    let mapper = load_mapper(paths, a.k)?;
    let config = MapperConfig {
        k: a.k,
        ..MapperConfig::default()
    };
    let report = eval::evaluate(
        &taxonomy,
        &list,
        &mapper,
        &feelings,
        &config,
        a.split_seed,
        project_embedder(paths)?,
    )
    .map_err(failed)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).map_err(failed)?);
    } else {
        print!("{}", report.to_markdown());
    }
    Ok(())
}
