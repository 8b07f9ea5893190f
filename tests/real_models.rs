//! The real-model path end to end against the realistic test model
//! (`support/test_model.rs`): every model role of a run on one loopback server, named by one
//! roles file. With the model's faults off, the run gives what the scripted roles give; with
//! them on, no injected fault reaches a released task or a kept SFT row, and no task is lost
//! to a transient endpoint failure once the run is repeated.

use crate::common::{assert_ok, project_copy, stderr, stdout, tracer};
use crate::openai_server::OpenAiServer;
use crate::test_model::{self, Fault, Faults, TestModel};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

const DOMAINS: [&str; 2] = ["airline", "bank"];
const MODEL: &str = "test-model";

/// Every endpoint role of a run on `base_url` (the grounder stays the scripted search).
fn roles_file(base_url: &str) -> String {
    let role = |name: &str| {
        format!(
            "[roles.{name}]\nprovider = \"openai\"\nbase_url = \"{base_url}\"\nmodel = \"{MODEL}\"\n\
             max_retries = 1\nretry_initial_ms = 1\ntimeout_secs = 1.0\nconcurrency = 8\n\
             price = {{ input = 0.5, output = 2.0 }}\n"
        )
    };
    ["agent", "user", "refiner", "feeler", "judge"]
        .iter()
        .map(|r| role(r))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A small project: two domains, a few tasks per split.
fn small(label: &str) -> crate::common::TempDir {
    let root = project_copy(label);
    std::fs::write(
        root.join("stages/grounded.toml"),
        "max_train = 14\nmax_eval = 6\nmax_customers = 24\nmax_proposals = 6\nmax_expansions = 400\n",
    )
    .unwrap();
    root
}

fn domain_args(cmd: &str) -> Vec<&str> {
    let mut args = vec!["run", cmd];
    for d in DOMAINS {
        args.extend(["--domain", d]);
    }
    args
}

fn read_tasks(output: &Path, stage: &str, d: &str) -> Vec<tracer::artifact::TaskRecord> {
    let path = output
        .join(stage)
        .join(format!("domain={d}"))
        .join("part-00000.parquet");
    tracer::artifact::read_records(&path).unwrap().0
}

fn rejects(output: &Path, stage: &str, d: &str) -> Vec<tracer::artifact::RejectRecord> {
    let path = output
        .join(stage)
        .join(format!("domain={d}"))
        .join("_rejects.parquet");
    tracer::artifact::read_records(&path).unwrap().0
}

fn sft_rows(output: &Path, d: &str) -> Vec<Value> {
    let path = output
        .join("trajectories")
        .join(format!("domain={d}"))
        .join("_sft.jsonl");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Start the test model and a project whose roles file puts every role on it.
fn model_project(
    label: &str,
    faults: Faults,
) -> (crate::common::TempDir, OpenAiServer, Arc<TestModel>) {
    let root = small(label);
    let server = OpenAiServer::start(&[MODEL]);
    let model = TestModel::new(faults);
    server.set_handler(model.handler());
    std::fs::write(root.join("roles.toml"), roles_file(&server.base_url())).unwrap();
    (root, server, model)
}

/// Run `stage` for the two domains, and again while a run fails on errored endpoint items
/// (the model answers a request its outage failed when it is asked again; a rerun may ask
/// new requests, which can meet an outage of their own). How many reruns it took.
fn run_with_reruns(root: &Path, out: &Path, stage: &str) -> usize {
    let mut last = String::new();
    for reruns in 0..8 {
        let run = tracer(root, out, &domain_args(stage));
        if run.status.success() {
            return reruns;
        }
        last = stderr(&run);
        assert!(
            last.contains("errored"),
            "{stage} failed for another reason: {last}"
        );
    }
    panic!("{stage}: still failing after seven reruns: {last}");
}

/// With its faults off, the model gives the scripted roles' tasks through one roles file;
/// the artifacts name the model and the prompts; editing one prompt makes exactly the
/// stages that send it stale.
#[test]
fn a_run_on_one_roles_file_names_its_models_and_prompts() {
    let (root, _server, model) = model_project("real-roles-file", Faults::none());
    let out = root.join("output");
    assert_ok(&tracer(&root, &out, &["validate"]));
    assert_ok(&tracer(&root, &out, &domain_args("tasks")));
    model.load_run(&out, &DOMAINS, 20_261_129, 1);
    assert_ok(&tracer(&root, &out, &domain_args("trajectories")));

    // The same project with the scripted roles: the same verified tasks, word for word.
    let scripted = small("real-roles-scripted");
    let s_out = scripted.join("output");
    assert_ok(&tracer(&scripted, &s_out, &domain_args("tasks")));
    for d in DOMAINS {
        let with_model = read_tasks(&out, "tasks", d);
        let offline = read_tasks(&s_out, "tasks", d);
        let key = |ts: &[tracer::artifact::TaskRecord]| -> Vec<(String, Option<String>)> {
            ts.iter()
                .map(|t| (t.task_id.clone(), t.instruction.clone()))
                .collect()
        };
        assert!(!with_model.is_empty(), "{d}: no verified task");
        assert_eq!(
            key(&with_model),
            key(&offline),
            "{d}: the model run verified other tasks"
        );
        for t in &with_model {
            assert_eq!(t.refiner.as_deref(), Some(MODEL));
            assert_eq!(t.refinement.as_deref(), Some("first"), "{}", t.task_id);
        }
        // The manifests name the model per role and the prompt files the stages read.
        let manifest = |stage: &str| -> Value {
            let p = out
                .join(stage)
                .join(format!("domain={d}"))
                .join("_manifest.json");
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
        };
        for (stage, prompt) in [
            ("refined", "prompts/refiner.md"),
            ("feelings", "prompts/feeler.md"),
            ("rollouts", "prompts/user.md"),
        ] {
            let m = manifest(stage);
            assert!(m["inputs"].get(prompt).is_some(), "{stage}: {m}");
            assert!(
                m["usage"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|u| u["model"] == MODEL),
                "{stage}: {m}"
            );
        }
        let rollouts: Vec<tracer::artifact::RolloutRecord> = tracer::artifact::read_records(
            &out.join("rollouts")
                .join(format!("domain={d}"))
                .join("part-00000.parquet"),
        )
        .unwrap()
        .0;
        assert!(
            rollouts
                .iter()
                .all(|r| r.agent_model == MODEL && r.user_model == MODEL)
        );
        assert!(
            rollouts.iter().filter(|r| r.reward == 1).count() * 2 >= rollouts.len(),
            "{d}: the model's agent should solve most tasks"
        );
        assert!(!sft_rows(&out, d).is_empty(), "{d}: no SFT row");
    }

    // One prompt edited: the stages that send it are stale, those upstream are not.
    let feeler = root.join("prompts/feeler.md");
    let text = std::fs::read_to_string(&feeler).unwrap();
    std::fs::write(&feeler, format!("{text}\nBe brief.\n")).unwrap();
    let status = stdout(&tracer(&root, &out, &["status", "--domain", "airline"]));
    let state = |stage: &str| {
        status
            .lines()
            .find(|l| l.starts_with(&format!("| {stage} | airline |")))
            .unwrap_or_else(|| panic!("{stage}: {status}"))
            .to_string()
    };
    assert!(state("refined").ends_with("| fresh |"), "{status}");
    assert!(
        state("feelings").contains("stale (inputs changed)"),
        "{status}"
    );
    assert!(state("tasks").contains("stale"), "{status}");
}

/// With realistic faults on: nothing injected reaches a released task or a kept SFT row, the
/// verified tasks stay at 80% or more of the scripted run's, and a rerun loses no task to a
/// transient failure. Prints the per-fault table.
#[test]
fn a_model_that_errs_like_a_real_one_leaves_no_fault_in_released_data() {
    let (root, _server, model) = model_project("real-faults", Faults::realistic());
    let out = root.join("output");
    let mut reran = Vec::new();
    for stage in ["refined", "feelings", "tasks"] {
        reran.push((stage, run_with_reruns(&root, &out, stage)));
    }
    model.load_run(&out, &DOMAINS, 20_261_129, 1);
    reran.push(("trajectories", run_with_reruns(&root, &out, "trajectories")));

    let scripted = small("real-faults-scripted");
    let s_out = scripted.join("output");
    assert_ok(&tracer(&scripted, &s_out, &domain_args("tasks")));

    let mut verified = (0, 0);
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    for d in DOMAINS {
        let tasks = read_tasks(&out, "tasks", d);
        verified.0 += tasks.len();
        verified.1 += read_tasks(&s_out, "tasks", d).len();
        for t in &tasks {
            let i = t.instruction.as_deref().unwrap_or("");
            assert!(
                !i.contains(test_model::PREAMBLE.trim()),
                "{}: {i}",
                t.task_id
            );
            assert!(
                !i.contains("**Instruction**") && !i.starts_with("My name is"),
                "{}: {i}",
                t.task_id
            );
            let f = t.feeling.as_deref().unwrap_or("");
            assert!(
                !f.is_empty() && !f.contains("Emotion:"),
                "{}: {f}",
                t.task_id
            );
            *outcomes
                .entry(t.refinement.clone().unwrap_or_default())
                .or_default() += 1;
        }
        for stage in ["grounded", "refined", "tasks"] {
            for r in rejects(&out, stage, d) {
                assert_ne!(
                    r.reason_kind, "errored",
                    "{stage}: a task lost to the endpoint: {}",
                    r.reason
                );
            }
        }
        for row in sft_rows(&out, d) {
            let messages = row["messages"].as_array().unwrap();
            for m in messages {
                let text = m["content"].as_str().unwrap_or("");
                let calls = m["tool_calls"].as_array().map_or(0, Vec::len);
                let role = m["role"].as_str().unwrap_or("");
                assert!(
                    role == "system" || role == "tool" || !text.trim().is_empty() || calls > 0,
                    "an empty {role} turn in a kept row: {row}"
                );
                for marker in [
                    test_model::THINKING.trim(),
                    "<tool_call>",
                    "WRONG-0000",
                    "###UNSATISFIED###",
                ] {
                    assert!(!text.contains(marker), "{marker} in a kept row: {text}");
                }
                if role == "user" {
                    assert!(!text.contains("If asked who you are"), "{text}");
                    assert!(!text.contains("You do not give every detail"), "{text}");
                }
            }
        }
    }
    let injected = model.injected.lock().unwrap().clone();
    eprintln!("faults injected: {injected:?}");
    eprintln!("refinement outcomes of released tasks: {outcomes:?}");
    eprintln!("reruns per stage after endpoint errors: {reran:?}");
    eprintln!(
        "verified: {} with the faulty model, {} scripted",
        verified.0, verified.1
    );
    for f in [
        Fault::Preamble,
        Fault::RewordedValue,
        Fault::DroppedIdentity,
        Fault::EmptyAnswer,
        Fault::LeakedLabels,
    ] {
        assert!(
            injected.get(&f).copied().unwrap_or(0) > 0,
            "{f:?} never injected: {injected:?}"
        );
    }
    assert!(
        verified.0 * 10 >= verified.1 * 8,
        "verified {} of the scripted run's {}",
        verified.0,
        verified.1
    );
    assert!(
        outcomes.get("retried").copied().unwrap_or(0) > 0,
        "{outcomes:?}"
    );
}

/// `tracer validate --roles FILE` names a misspelt field of the roles file once, at the file
/// that holds it (the stage that reads the role does not echo it), and exits non-zero; the
/// shipped presets validate.
#[test]
fn validate_checks_a_roles_file_without_a_request() {
    let root = project_copy("roles-validate");
    let out = root.join("output");
    let bad = root.join("bad-roles.toml");
    std::fs::write(
        &bad,
        "[roles.refiner]\nprovider = \"openai\"\nmodle = \"x\"\n",
    )
    .unwrap();
    let o = tracer(&root, &out, &["--roles", bad.to_str().unwrap(), "validate"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    let named: Vec<&str> = err.lines().filter(|l| l.contains("`modle`")).collect();
    assert_eq!(named.len(), 1, "{err}");
    assert!(
        named[0].starts_with(&format!("{}: `roles.refiner`", bad.display())),
        "{err}"
    );
    assert!(err.contains("validation found 1 problem(s)"), "{err}");
    for preset in ["qwen3-8b-vllm", "qwen3-32b-vllm", "llama-cpp", "openai"] {
        let file = crate::common::repo().join(format!("configs/models/{preset}.toml"));
        let o = tracer(
            &root,
            &out,
            &["--roles", file.to_str().unwrap(), "validate"],
        );
        assert_ok(&o);
        assert!(stdout(&o).contains("roles from"), "{preset}");
    }
}
