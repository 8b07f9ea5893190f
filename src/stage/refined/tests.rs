//! The refined stage's tests: the scripted draft's situations, wordings and links.

use super::draft::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Every domain's situation sentence is drawn from its own table, tells nothing the
/// feeler or the emotions stage would read as a cue or an event, and opens in enough
/// ways that 300 tasks rarely share their first twelve words after the name.
#[test]
fn every_domain_tells_who_its_customer_is_in_many_ways() {
    let cues: Vec<&str> = crate::roles::feeler::cue_words().collect();
    // Every built-in domain's folder holds a table, and each parses.
    let mut checked = 0;
    for (d, _) in DOMAIN_SITUATIONS {
        assert!(
            people_of(d).is_some(),
            "{d}: situations.toml does not parse or has no ties"
        );
    }
    for domain in crate::domain::registry() {
        let d = domain.name();
        let Some(people) = people_of(d) else {
            // A new domain until its table is written: no situation sentence.
            assert!(situation(d, &mut ChaCha8Rng::seed_from_u64(1)).is_none());
            continue;
        };
        checked += 1;
        assert!(people.ties.len() >= 15, "{d}: {} ties", people.ties.len());
        let mut starts: Vec<String> = Vec::new();
        for tie in &people.ties {
            let t = tie.to_lowercase();
            for c in &cues {
                assert!(
                    !t.contains(c),
                    "{d}: tie {tie:?} holds the feeler cue {c:?}"
                );
            }
            if d != "airline" && d != "travel" {
                for (_, events) in crate::stage::emotions::EVENTS {
                    for e in *events {
                        assert!(!t.contains(e), "{d}: tie {tie:?} tells of {e:?}");
                    }
                }
            }
            let start: Vec<&str> = t.split_whitespace().take(3).collect();
            starts.push(start.join(" "));
        }
        starts.sort();
        starts.dedup();
        assert_eq!(starts.len(), people.ties.len(), "{d}: ties share a start");
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let texts: Vec<String> = (0..300)
            .map(|_| {
                let s = situation(d, &mut rng).expect("a sentence");
                assert!(
                    s.starts_with("You are a") || s.starts_with("You're a"),
                    "{s}"
                );
                assert!(s.split_whitespace().count() <= 20, "{s}");
                format!("Your name is Ada Lee. {s} You want to check something.")
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let shared = crate::quality::shared_openings(&refs);
        assert!(shared < 0.10, "{d}: {shared:.2} of openings shared");
    }
    assert!(
        checked >= DOMAIN_SITUATIONS.len(),
        "{checked} tables checked"
    );
    assert!(situation("no_such_domain", &mut ChaCha8Rng::seed_from_u64(1)).is_none());
}

#[test]
fn a_wording_is_one_per_task_and_never_splits_a_word() {
    assert!(WORDINGS.group.len() >= 8, "wordings.toml did not parse");
    let text = "Pay with your Visa credit card ending in 4444, then refund to the Amex \
                credit card ending in 1000. Check the booking you just made.";
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let out = vary_wording(text, &mut ChaCha8Rng::seed_from_u64(seed));
        // Both card mentions read the same way; every value is kept.
        let group = &WORDINGS.group[0].say;
        let used: Vec<&String> = group.iter().filter(|w| out.contains(w.as_str())).collect();
        assert_eq!(used.len(), 1, "{out}");
        assert_eq!(out.matches(used[0].as_str()).count(), 2, "{out}");
        for v in ["4444", "1000", "Visa", "Amex"] {
            assert!(out.contains(v), "{out}");
        }
        seen.insert(out);
    }
    assert!(seen.len() >= 4, "{seen:?}");
    // A phrase inside a longer word is left alone.
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    assert_eq!(
        vary_wording("a discard ending in", &mut rng),
        "a discard ending in"
    );
}

#[test]
fn a_link_is_never_the_one_used_just_before() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut last = "";
    let mut links = Vec::new();
    for _ in 0..200 {
        let bank = if links.len() % 3 == 0 {
            CONNECTIVES
        } else {
            STEP_LINKS
        };
        links.push(pick_link(&mut rng, bank, &mut last));
    }
    assert!(links.windows(2).all(|w| w[0] != w[1]), "{links:?}");
    // Every link of both banks is still used.
    for link in CONNECTIVES.iter().chain(STEP_LINKS) {
        assert!(links.contains(link), "{link} never picked");
    }
}
