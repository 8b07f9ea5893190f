//! `tracer plan` against the realistic test model (faults off), two domains, small caps,
//! every model role on the model through one roles file: the plan names every endpoint
//! role; `--pilot N` runs N tasks per domain and split through every stage and its
//! extrapolated tokens agree with a full run on the same server within 25%.

use crate::common::{assert_ok, project_copy, stdout, tracer};
use crate::openai_server::OpenAiServer;
use crate::test_model::{Faults, TestModel};
use serde_json::Value;
use std::path::Path;

const DOMAINS: [&str; 2] = ["airline", "bank"];
const MODEL: &str = "test-model";
const SEED: u64 = 20_261_129;
/// The full run's caps, and the pilot's tasks per domain and split.
const MAX_TRAIN: usize = 24;
const MAX_EVAL: usize = 12;
const PILOT: usize = 6;

/// Every endpoint role of a run (the grounder stays the scripted search), priced.
fn roles_file(base_url: &str) -> String {
    ["agent", "user", "refiner", "feeler", "judge"]
        .iter()
        .map(|name| {
            format!(
                "[roles.{name}]\nprovider = \"openai\"\nbase_url = \"{base_url}\"\nmodel = \"{MODEL}\"\n\
                 max_retries = 1\nretry_initial_ms = 1\ntimeout_secs = 5.0\nconcurrency = 8\n\
                 price = {{ input = 0.5, output = 2.0 }}\n"
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn with_domains<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut out = args.to_vec();
    for d in DOMAINS {
        out.extend(["--domain", d]);
    }
    out
}

/// Prompt plus completion tokens every stage's manifest recorded under `output`.
fn recorded_tokens(output: &Path) -> f64 {
    let mut total = 0.0;
    for stage in std::fs::read_dir(output).unwrap().flatten() {
        for d in DOMAINS {
            let manifest = stage
                .path()
                .join(format!("domain={d}"))
                .join("_manifest.json");
            let Ok(text) = std::fs::read_to_string(&manifest) else {
                continue;
            };
            let m: Value = serde_json::from_str(&text).unwrap();
            for u in m["usage"].as_array().into_iter().flatten() {
                total += u["tokens"]["prompt_tokens"].as_f64().unwrap_or(0.0)
                    + u["tokens"]["completion_tokens"].as_f64().unwrap_or(0.0);
            }
        }
    }
    total
}

fn plan_tokens(json: &Value) -> f64 {
    json["total"]["prompt_tokens"].as_f64().unwrap()
        + json["total"]["completion_tokens"].as_f64().unwrap()
}

#[test]
fn a_pilot_extrapolates_the_tokens_of_a_full_run() {
    let root = project_copy("plan-pilot");
    std::fs::write(
        root.join("stages/grounded.toml"),
        format!(
            "max_train = {MAX_TRAIN}\nmax_eval = {MAX_EVAL}\nmax_customers = 24\nmax_proposals = 6\nmax_expansions = 400\n"
        ),
    )
    .unwrap();
    let server = OpenAiServer::start(&[MODEL]);
    let model = TestModel::new(Faults::none());
    server.set_handler(model.handler());
    std::fs::write(root.join("roles.toml"), roles_file(&server.base_url())).unwrap();
    let out = root.join("output");

    // Before any run: a table naming every endpoint role (and the scripted grounder).
    let o = tracer(&root, &out, &with_domains(&["plan"]));
    assert_ok(&o);
    let table = stdout(&o);
    for (stage, role) in [
        ("refined", "refiner"),
        ("feelings", "feeler"),
        ("tasks", "judge"),
        ("rollouts", "agent"),
        ("rollouts", "user"),
        ("screened", "agent"),
        ("screened", "user"),
        ("eval", "agent"),
        ("eval", "user"),
        ("analysis", "judge"),
    ] {
        assert!(
            table.contains(&format!("| {stage} | {role} | {MODEL} |")),
            "{stage}/{role} missing:\n{table}"
        );
    }
    assert!(
        table.contains("| grounded | grounder | scripted | - | - | - | $0 (scripted) |"),
        "{table}"
    );
    assert!(table.contains("documented defaults"), "{table}");
    assert_eq!(server.post_count(), 0, "a plan sends no request");

    // The pilot: every stage on the model, into output/.pilot/.
    model.watch_run(&out.join(".pilot"), &DOMAINS, SEED, 3);
    let pilot_n = PILOT.to_string();
    let o = tracer(
        &root,
        &out,
        &with_domains(&["plan", "--pilot", &pilot_n, "--json"]),
    );
    assert_ok(&o);
    let pilot: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(pilot["basis"]["pilot"]["tasks_per_split"], PILOT);
    assert!(
        !out.join("tasks").exists(),
        "the pilot wrote only into .pilot/"
    );
    for d in DOMAINS {
        let tasks = out.join(".pilot/tasks").join(format!("domain={d}"));
        assert!(tasks.join("part-00000.parquet").is_file(), "{d}");
    }
    let pilot_recorded = recorded_tokens(&out.join(".pilot"));
    assert!(pilot_recorded > 0.0);
    assert_eq!(pilot["pilot"]["tokens"].as_f64().unwrap(), pilot_recorded);
    let md = tracer(&root, &out, &with_domains(&["plan", "--pilot", &pilot_n]));
    assert_ok(&md);
    let md = stdout(&md);
    assert!(
        md.contains(&format!("**Extrapolated from a pilot** of {PILOT}")),
        "{md}"
    );
    assert!(md.contains("What the pilot measured"), "{md}");
    eprintln!("{md}");

    // The full run on the same server.
    assert_ok(&tracer(&root, &out, &with_domains(&["run", "tasks"])));
    model.load_run(&out, &DOMAINS, SEED, 3);
    model.watch_run(&out, &DOMAINS, SEED, 3);
    for stage in ["trajectories", "analysis"] {
        assert_ok(&tracer(&root, &out, &with_domains(&["run", stage])));
    }
    let full = recorded_tokens(&out);
    let extrapolated = plan_tokens(&pilot);
    let measured_plan: Value = serde_json::from_str(&stdout(&tracer(
        &root,
        &out,
        &with_domains(&["plan", "--json"]),
    )))
    .unwrap();
    eprintln!(
        "tokens: full run {full:.0}; extrapolated from a pilot of {PILOT} per domain and split {extrapolated:.0} ({:+.1}%); the pilot itself {pilot_recorded:.0}; planned from the full run's artifacts {:.0}",
        100.0 * (extrapolated - full) / full,
        plan_tokens(&measured_plan)
    );
    assert!(
        (extrapolated - full).abs() <= 0.25 * full,
        "extrapolated {extrapolated:.0} vs a full run's {full:.0}"
    );
}
