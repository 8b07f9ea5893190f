//! Stats tests: the funnel's policy rejections per rule, dollars, and the cost report's
//! prices and divisions.

use super::*;
use crate::cost::{RoleUsage, Usage};

#[test]
fn the_funnel_counts_policy_rejections_per_named_rule() {
    let dir = std::env::temp_dir().join(format!("tracer-stats-{}", std::process::id()));
    let paths = Paths {
        root: dir.clone(),
        output: dir.join("output"),
        overrides: None,
        roles: None,
    };
    let reject = |rule: Option<&str>, kind: &str| RejectRecord {
        domain: "airline".into(),
        split: crate::split::Split::Train,
        trace_id: "t".into(),
        task_id: Some("t".into()),
        stage: "tasks".into(),
        reason_kind: kind.into(),
        rule: rule.map(str::to_string),
        reason: "why".into(),
    };
    let rows = vec![
        reject(Some("basic_economy_no_change"), "policy"),
        reject(Some("basic_economy_no_change"), "policy"),
        reject(Some("cancellation_window"), "policy"),
        reject(None, "information"),
        reject(None, "errored"),
        reject(None, "errored"),
    ];
    let out = stage_dir(&paths.output, "tasks", "airline");
    std::fs::create_dir_all(&out).unwrap();
    let prov = artifact::Provenance {
        version: "test".into(),
        stage: "tasks".into(),
        domain: "airline".into(),
        config_hash: String::new(),
        seed: 0,
        inputs: Default::default(),
    };
    artifact::write_records(&out.join("_rejects.parquet"), &rows, &prov).unwrap();
    let table = funnel(&paths, &["airline"]).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        table.contains(
            "tasks: information x 1, tasks: policy/basic_economy_no_change x 2, tasks: policy/cancellation_window x 1 | tasks x 2 |"
        ),
        "{table}"
    );
    // Errored items are their own column, never among the rejections.
    assert!(!table.contains("errored x"), "{table}");
}

#[test]
fn dollars_keep_four_significant_digits_below_one_dollar() {
    assert_eq!(dollars(0.0), "$0");
    assert_eq!(dollars(1234.5), "$1234.50");
    assert_eq!(dollars(0.25), "$0.2500");
    assert_eq!(dollars(0.000123456), "$0.0001235");
}

#[test]
fn the_cost_report_prices_recorded_tokens_and_divides_by_tasks_and_trajectories() {
    use crate::cost::Price;
    let dir = std::env::temp_dir().join(format!("tracer-cost-{}", std::process::id()));
    let paths = Paths {
        root: dir.clone(),
        output: dir.join("output"),
        overrides: None,
        roles: None,
    };
    let tokens = |p, c, o| Usage {
        prompt_tokens: p,
        cached_prompt_tokens: c,
        completion_tokens: o,
    };
    let endpoint = |role: &str, model: &str, t: Usage, price: Option<Price>| RoleUsage {
        role: role.into(),
        model: model.into(),
        scripted: false,
        tokens: t,
        price,
    };
    let manifests = [
        (
            "refined",
            vec![endpoint(
                "refiner",
                "m",
                tokens(1_000_000, 200_000, 100_000),
                Some(Price {
                    input: 1.0,
                    cached_input: Some(0.25),
                    output: 4.0,
                }),
            )],
        ),
        (
            "tasks",
            vec![RoleUsage::scripted("judge", "scripted:judge")],
        ),
        (
            "rollouts",
            vec![
                endpoint("agent", "a", tokens(10, 0, 10), None),
                RoleUsage::scripted("user", "scripted:user"),
            ],
        ),
    ];
    for (stage, usage) in manifests {
        let d = stage_dir(&paths.output, stage, "airline");
        std::fs::create_dir_all(&d).unwrap();
        let m = crate::pipeline::Manifest {
            usage,
            ..Default::default()
        };
        std::fs::write(d.join("_manifest.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    }
    let prov = artifact::Provenance {
        version: "test".into(),
        stage: "t".into(),
        domain: "airline".into(),
        config_hash: String::new(),
        seed: 0,
        inputs: Default::default(),
    };
    let tasks = vec![TaskRecord::default(); 5];
    artifact::write_records(
        &stage_dir(&paths.output, "tasks", "airline").join("part-00000.parquet"),
        &tasks,
        &prov,
    )
    .unwrap();
    let kept = vec![crate::artifact::RolloutRecord::default(); 2];
    let trajectories = stage_dir(&paths.output, "trajectories", "airline");
    std::fs::create_dir_all(&trajectories).unwrap();
    artifact::write_records(&trajectories.join("part-00000.parquet"), &kept, &prov).unwrap();
    let scope = CostScope {
        stages: vec!["grounded", "refined", "tasks", "rollouts", "trajectories"],
        tasks: vec!["grounded", "refined", "tasks"],
        trajectories: vec!["grounded", "refined", "tasks", "rollouts", "trajectories"],
    };
    let report = cost_report(&paths, &scope, &["airline"]).unwrap().unwrap();
    std::fs::remove_dir_all(&dir).ok();
    // 800k x $1 + 200k x $0.25 + 100k x $4 per million = $1.25.
    for line in [
        "| refined | refiner | m | 1000000 | 200000 | 100000 | 1 / 0.25 / 4 | $1.25 |",
        "| tasks | judge | scripted:judge | 0 | 0 | 0 | scripted | $0 |",
        "| rollouts | agent | a | 10 | 0 | 10 | not set | unknown (no price) |",
        "| rollouts | user | scripted:user | 0 | 0 | 0 | scripted | $0 |",
        "| airline | 5 | $1.25 | $0.2500 | 2 | $1.25 + unpriced | $0.6250 + unpriced |",
    ] {
        assert!(report.contains(line), "{line}\n{report}");
    }
    assert!(!report.contains("| grounded |"), "no manifest, no row");
}

#[test]
fn the_review_table_reports_agreement_per_domain_and_pooled() {
    let dir = std::env::temp_dir().join(format!("tracer-stats-agree-{}", std::process::id()));
    let paths = Paths {
        root: dir.clone(),
        output: dir.join("output"),
        overrides: None,
        roles: None,
    };
    let write = |d: &str, counts: &crate::review::ReviewCounts| {
        let out = stage_dir(&paths.output, "reviewed", d);
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("review.json"), serde_json::to_vec(counts).unwrap()).unwrap();
    };
    let table = |aa, ar, ra, rr| crate::review::Agreement {
        accept_accept: aa,
        accept_reject: ar,
        reject_accept: ra,
        reject_reject: rr,
    };
    // Pooled: 20 / 5 / 10 / 15, kappa 0.40, raw 70%.
    write(
        "airline",
        &crate::review::ReviewCounts {
            candidates: 30,
            conflicts: 2,
            agreement: table(12, 2, 6, 10),
            ..Default::default()
        },
    );
    write(
        "retail",
        &crate::review::ReviewCounts {
            candidates: 20,
            agreement: table(8, 3, 4, 5),
            ..Default::default()
        },
    );
    // A domain reviewed by one person only has no agreement row.
    write("bank", &crate::review::ReviewCounts::default());
    let out = review_table(&paths, &["airline", "retail", "bank"]).unwrap();
    assert!(
        out.contains("| airline | 30 | 0 | 0 | 0 | 0 | 0 | 2 |"),
        "{out}"
    );
    assert!(out.contains("| all | 50 | 35 | 70.0% | 0.40 |"), "{out}");
    let agreement = out.split("Agreement between reviewers").nth(1).unwrap();
    assert!(!agreement.contains("| bank"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}
