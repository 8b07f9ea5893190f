//! Feeler tests: determinism, the spread of emotions and behaviours over every domain,
//! the cues that decide urgency and trust, causes and grammar, and the labels behind a
//! feeling.

use super::scripted::FAMILIES;
use super::words::emotion_phrase;
use super::*;
use rand::RngExt;

fn family_of(emotion: &str) -> &'static str {
    match emotion {
        "annoyance" | "frustration" | "argumentativeness" | "bitterness" | "exasperation" => {
            "anger"
        }
        "anxiety" | "nervousness" | "dread" | "desperation" => "fear",
        "dislike" | "aversion" | "distaste" | "repugnance" => "disgust",
        "disappointment" | "discouragement" | "helplessness" | "hopelessness" | "sorrow" => {
            "sadness"
        }
        _ => "enjoyment",
    }
}

fn input(instruction: &str, intents: &[Intent]) -> FeelerInput {
    FeelerInput {
        instruction: instruction.into(),
        requested_tools: intents
            .iter()
            .map(|i| format!("tool_{}", i.as_str()))
            .collect(),
        intents: intents.to_vec(),
    }
}

#[test]
fn the_feeler_is_deterministic_and_reads_intents_not_tool_names() {
    let case = input("The lamp arrived damaged.", &[Intent::Return]);
    for k in 0..20 {
        assert_eq!(
            scripted_feeling(&case, &mut derive_rng(k, &["t"])),
            scripted_feeling(&case, &mut derive_rng(k, &["t"])),
            "deterministic"
        );
    }
    // The same intents under a tool name no rule has ever seen give the same feelings.
    let mut renamed = case.clone();
    renamed.requested_tools = vec!["send_back_parcel".into()];
    let mut a = derive_rng(3, &["x"]);
    let mut b = derive_rng(3, &["x"]);
    assert_eq!(
        scripted_feeling(&case, &mut a),
        scripted_feeling(&renamed, &mut b)
    );
}

/// Tasks the way the pipeline hands them over: a few requests drawn from one domain's
/// tools, and the identity sentence every instruction ends with.
fn domain_tasks(domain: &dyn crate::domain::Domain, n: usize) -> Vec<FeelerInput> {
    let specs = domain.tool_specs();
    let mut rng = derive_rng(7, &["tasks", domain.name()]);
    (0..n)
        .map(|_| {
            let k = rng.random_range(1..=4);
            let picked: Vec<_> = (0..k)
                .map(|_| &specs[rng.random_range(0..specs.len())])
                .collect();
            FeelerInput {
                instruction: "Your name is Ada Lee. You want this sorted out. If the agent \
                              asks you to verify who you are: your email is ada@example.com."
                    .into(),
                requested_tools: picked.iter().map(|s| s.name.to_string()).collect(),
                intents: picked.iter().map(|s| s.intent).collect(),
            }
        })
        .collect()
}

#[test]
fn every_domain_reaches_every_emotion_and_behaviour_and_the_mix_is_spread() {
    use std::collections::{BTreeMap, BTreeSet};
    let mut conditions = BTreeSet::new();
    let mut values: BTreeMap<&str, usize> = BTreeMap::new();
    let mut total = 0;
    for d in crate::domain::registry() {
        let mut emotions = BTreeSet::new();
        let mut behaviours = BTreeSet::new();
        let mut families: BTreeMap<&str, usize> = BTreeMap::new();
        let tasks = domain_tasks(*d, 400);
        for (i, t) in tasks.iter().enumerate() {
            let f = scripted_feeling_labelled(t, &mut derive_rng(1, &[d.name(), &i.to_string()]));
            emotions.insert(f.emotion);
            behaviours.insert((f.politeness, f.urgency, f.trust));
            *families.entry(family_of(f.emotion)).or_default() += 1;
            for v in [f.politeness, f.urgency, f.trust] {
                *values.entry(v).or_default() += 1;
            }
            conditions.insert((f.emotion, f.politeness, f.urgency, f.trust));
            total += 1;
        }
        assert_eq!(emotions.len(), 22, "{}: {emotions:?}", d.name());
        assert_eq!(behaviours.len(), 27, "{}: {behaviours:?}", d.name());
        for family in FAMILIES {
            let share = families.get(family).copied().unwrap_or(0) as f64 / 400.0;
            assert!(share >= 0.08, "{}: {family} {share}", d.name());
        }
    }
    assert!(conditions.len() >= 400, "{} conditions", conditions.len());
    for v in [
        "warm",
        "neutral",
        "cold",
        "low",
        "moderate",
        "high",
        "trusting",
        "cautious",
        "skeptical",
    ] {
        let share = values.get(v).copied().unwrap_or(0) as f64 / total as f64;
        assert!(share >= 0.15, "{v}: {share}");
    }
}

#[test]
fn the_customers_words_decide_urgency_and_trust_and_the_identity_sentence_does_not() {
    let share = |text: &str, intents: &[Intent], want: &dyn Fn(&ScriptedFeeling) -> bool| {
        let case = input(text, intents);
        (0..200)
            .filter(|k| {
                want(&scripted_feeling_labelled(
                    &case,
                    &mut derive_rng(*k, &["c"]),
                ))
            })
            .count() as f64
            / 200.0
    };
    let verify = "If the agent asks you to verify who you are: your email is a@b.c.";
    assert!(share(verify, &[Intent::Lookup], &|f| f.trust == "cautious") < 0.5);
    assert!(
        share("You are happy to wait.", &[Intent::Change], &|f| f.urgency
            == "low")
            > 0.7
    );
    assert!(
        share("You need it right away.", &[Intent::Lookup], &|f| f.urgency
            == "high")
            > 0.7
    );
    assert!(
        share("They promised this last time.", &[Intent::Pay], &|f| f
            .trust
            == "skeptical")
            > 0.6
    );
    assert!(
        share("Please double-check it.", &[Intent::Book], &|f| f.trust
            == "cautious")
            > 0.55
    );
    // A loss in the customer's words makes sadness, and sorrow, far more likely.
    let loss = share("Your father passed away.", &[Intent::Cancel], &|f| {
        f.emotion == "sorrow"
    });
    let none = share("You changed your plans.", &[Intent::Cancel], &|f| {
        f.emotion == "sorrow"
    });
    assert!(loss > 0.15 && none < 0.05, "{loss} {none}");
}

#[test]
fn causes_name_only_what_the_task_has() {
    for (i, intents) in [
        vec![Intent::Lookup],
        vec![Intent::Cancel, Intent::Pay],
        vec![
            Intent::Return,
            Intent::Exchange,
            Intent::Change,
            Intent::Book,
        ],
        vec![Intent::Report],
    ]
    .iter()
    .enumerate()
    {
        let case = input("You want to sort out your account.", intents);
        for k in 0..300 {
            let text = scripted_feeling(&case, &mut derive_rng(k, &["n", &i.to_string()]));
            for invented in [
                "loss",
                "illness",
                "went wrong",
                "let them down",
                "promised",
                "look forward to",
                "poor service",
            ] {
                assert!(!text.contains(invented), "{text}");
            }
            assert!(!text.contains("{acts}") && !text.contains("  "), "{text}");
        }
    }
    // Every request kind is named, up to three of them.
    let many = input("", &[Intent::Cancel, Intent::Pay, Intent::Lookup]);
    let text = (0..50)
        .map(|k| scripted_feeling(&many, &mut derive_rng(k, &["m"])))
        .find(|t| t.contains("calling off"))
        .expect("the acts are named");
    assert!(
        text.contains("sorting out a payment") && text.contains("getting information"),
        "{text}"
    );
}

#[test]
fn feelings_are_grammatical() {
    for k in 0..60 {
        let case = input(
            "You need this fixed right away, and please double-check the new time.",
            &[Intent::Change],
        );
        let text = scripted_feeling(&case, &mut derive_rng(k, &["g"]));
        for bad in [
            "They is",
            "They answers",
            "They keeps",
            "They stays",
            "They needs",
            "They wants",
        ] {
            assert!(!text.contains(bad), "{text}");
        }
        assert!(text.ends_with('.') && text.starts_with("Th"), "{text}");
    }
}

#[test]
fn the_labels_behind_a_feeling_are_the_ones_its_words_say() {
    let cases = [
        input("There is no rush; whenever suits.", &[Intent::Lookup]),
        input("You need this fixed right away.", &[Intent::Change]),
        input(
            "Your flight was cancelled by the airline.",
            &[Intent::Cancel],
        ),
        input("Please double-check the new time.", &[Intent::Book]),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for (i, case) in cases.iter().enumerate() {
        for k in 0..30 {
            let key = i.to_string();
            let labelled = scripted_feeling_labelled(case, &mut derive_rng(k, &["l", &key]));
            assert_eq!(
                labelled.text,
                scripted_feeling(case, &mut derive_rng(k, &["l", &key])),
                "the same draws"
            );
            let t = &labelled.text;
            let says = |phrases: &[&str]| phrases.iter().any(|p| t.contains(p));
            let politeness_ok = match labelled.politeness {
                "warm" => says(&["stay warm", "courteous and friendly"]),
                "neutral" => says(&["neutral and businesslike", "matter-of-fact"]),
                _ => says(&["curt and cold", "answer tersely"]),
            };
            let urgency_ok = match labelled.urgency {
                "low" => says(&["no hurry", "happy to wait"]),
                "moderate" => says(&["done today", "steady progress"]),
                _ => says(&["right away", "afford any delay"]),
            };
            let trust_ok = match labelled.trust {
                "trusting" => says(&["simply take care", "at their word"]),
                "cautious" => says(&["step confirmed", "read back"]),
                _ => says(&["doubt the agent", "brushed off again"]),
            };
            assert!(politeness_ok && urgency_ok && trust_ok, "{labelled:?}");
            assert!(
                emotion_phrase(labelled.emotion)
                    .iter()
                    .any(|p| t.contains(p)),
                "{labelled:?}"
            );
            seen.insert((labelled.politeness, labelled.urgency, labelled.trust));
        }
    }
    assert!(seen.len() >= 10, "{seen:?}");
}

#[test]
fn every_registered_domain_tool_has_an_intent_the_feeler_reads() {
    for d in crate::domain::registry() {
        for spec in d.tool_specs() {
            let case = FeelerInput {
                instruction: String::new(),
                requested_tools: vec![spec.name.to_string()],
                intents: vec![spec.intent],
            };
            let text = scripted_feeling(&case, &mut derive_rng(0, &[spec.name]));
            assert!(
                text.starts_with("Th") && text.contains(" because "),
                "{}: {text}",
                spec.name
            );
        }
    }
}
