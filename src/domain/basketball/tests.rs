//! Basketball tests: each tool's rules and error strings on the generated evaluation
//! database (the texts the reference's tools print; the differential fixture compares the
//! rest), the departures, the generators' scales and invariants, the policy rules, the
//! grounding proposals and the refinement hooks.

use super::db::{BasketballDb, Club, Game};
use super::generate::{self, SCALES};
use super::policy::clock_key;
use super::{Basketball, hooks};
use crate::domain::Hooks;
use crate::domain::{Database, Domain, GroundingContext, Split, ToolKind};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

const SEED: u64 = 20261130;

fn eval_db() -> BasketballDb {
    generate::generate(SEED, Split::Eval)
}

fn call(db: &mut BasketballDb, tool: &str, args: Value) -> (String, bool) {
    let out = crate::domain::Environment::invoke(db, tool, &args);
    (out.text, out.is_error)
}

fn ok(db: &mut BasketballDb, tool: &str, args: Value) -> String {
    let (text, err) = call(db, tool, args.clone());
    assert!(!err, "{tool} {args}: {text}");
    text
}

fn refused(db: &mut BasketballDb, tool: &str, args: Value, want: &str) {
    let before = db.state_hash();
    let (text, err) = call(db, tool, args.clone());
    assert!(err, "{tool} {args} should fail, got {text}");
    assert_eq!(text, format!("Error: {want}"), "{tool} {args}");
    assert_eq!(
        db.state_hash(),
        before,
        "{tool}: a refused call changed the state"
    );
}

fn first_game<'a>(db: &'a BasketballDb, status: &str) -> &'a Game {
    db.games
        .iter()
        .map(|(_, g)| g)
        .find(|g| g.status == status)
        .unwrap_or_else(|| panic!("no {status} game"))
}

fn roster_player(db: &BasketballDb, club_id: &str) -> String {
    db.clubs
        .get(club_id)
        .unwrap()
        .roster
        .keys()
        .next()
        .unwrap()
        .clone()
}

// ---------- tools ----------

#[test]
fn twenty_tools_seventeen_read_three_write() {
    let specs = Basketball.tool_specs();
    let writes: Vec<&str> = specs
        .iter()
        .filter(|s| s.kind == ToolKind::Write)
        .map(|s| s.name)
        .collect();
    assert_eq!(specs.len(), 20);
    assert_eq!(
        writes,
        [
            "modify_player_address",
            "update_game_status",
            "record_scoring_event"
        ]
    );
}

#[test]
fn status_changes_follow_the_transition_table() {
    let base = eval_db();
    let allowed: BTreeSet<(&str, &str)> = [
        ("scheduled", "in_progress"),
        ("scheduled", "postponed"),
        ("postponed", "scheduled"),
        ("in_progress", "final"),
    ]
    .into();
    for from in super::db::STATUSES {
        let id = first_game(&base, from).game_id.clone();
        for to in super::db::STATUSES {
            let mut db = base.clone();
            let args = json!({"game_id": id, "new_status": to});
            if from == to {
                let before = db.state_hash();
                let out = ok(&mut db, "update_game_status", args);
                assert_eq!(json_of(&out)["status"], from);
                assert_eq!(db.state_hash(), before, "the same status is a no-op");
            } else if allowed.contains(&(from, to)) {
                let out = ok(&mut db, "update_game_status", args);
                assert_eq!(json_of(&out)["status"], to);
                assert_eq!(db.games.get(&id).unwrap().status, to);
            } else {
                refused(
                    &mut db,
                    "update_game_status",
                    args,
                    "Invalid status transition",
                );
            }
        }
    }
    let mut db = base.clone();
    let id = first_game(&base, "scheduled").game_id.clone();
    refused(
        &mut db,
        "update_game_status",
        json!({"game_id": id, "new_status": "done"}),
        "Invalid status transition",
    );
    refused(
        &mut db,
        "update_game_status",
        json!({"game_id": "NOPE", "new_status": "final"}),
        "Game not found",
    );
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn scoring_checks_run_in_the_reference_order_and_change_only_the_score_and_history() {
    let base = eval_db();
    let g = first_game(&base, "in_progress").clone();
    let (home, away) = (g.clubs.home.club_id.clone(), g.clubs.away.club_id.clone());
    let scorer = roster_player(&base, &home);
    let outsider = base
        .clubs
        .keys()
        .find(|c| *c != home && *c != away)
        .unwrap()
        .to_string();
    let args = |game: &str, kind: &str, points: i64, club: &str, player: &str| {
        json!({"game_id": game, "event_type": kind, "points": points, "club_id": club,
               "player_id": player, "timestamp": "Q4 11:59"})
    };
    let mut db = base.clone();
    let final_game = first_game(&base, "final").game_id.clone();
    // The status check comes before the type check.
    refused(
        &mut db,
        "record_scoring_event",
        args(&final_game, "9PT", 9, &home, &scorer),
        "Scoring can only be recorded for games in progress",
    );
    refused(
        &mut db,
        "record_scoring_event",
        args(&g.game_id, "4PT", 4, &home, &scorer),
        "'4PT'",
    );
    for (kind, wrong) in [("2PT", 3), ("3PT", 2), ("FT", 2), ("1PT", 2)] {
        refused(
            &mut db,
            "record_scoring_event",
            args(&g.game_id, kind, wrong, &home, &scorer),
            "Points do not match the event type",
        );
    }
    refused(
        &mut db,
        "record_scoring_event",
        args(&g.game_id, "2PT", 2, &outsider, &scorer),
        "Club is not part of this game",
    );
    refused(
        &mut db,
        "record_scoring_event",
        args(&g.game_id, "2PT", 2, &home, "NOPE"),
        "Player not found",
    );
    // Each type adds its points to the credited side only; the box score stays.
    for (kind, points, club) in [
        ("2PT", 2, &home),
        ("3PT", 3, &away),
        ("FT", 1, &home),
        ("1PT", 1, &away),
    ] {
        let before = db.games.get(&g.game_id).unwrap().clone();
        let out = ok(
            &mut db,
            "record_scoring_event",
            args(&g.game_id, kind, points, club, &scorer),
        );
        let after: Game = serde_json::from_str(&out).unwrap();
        let gain = |s: fn(&Game) -> i64| s(&after) - s(&before);
        let (h, a) = (gain(|g| g.clubs.home.score), gain(|g| g.clubs.away.score));
        assert_eq!(
            if club == &home { (h, a) } else { (a, h) },
            (points, 0),
            "{kind}"
        );
        assert_eq!(after.box_score, before.box_score);
        assert_eq!(
            after.scoring_history.len(),
            before.scoring_history.len() + 1
        );
        assert_eq!(after.scoring_history.last().unwrap().event_type, kind);
    }
}

#[test]
fn plain_dicts_and_ints_print_as_strings() {
    let mut db = eval_db();
    let g = first_game(&db, "final").clone();
    let score = ok(&mut db, "get_game_score", json!({"game_id": g.game_id}));
    assert!(
        score.starts_with("{\"status\": \"final\", \"home\": {\"club_id\": "),
        "{score}"
    );
    assert!(
        score.contains(&format!("\"score\": \"{}\"", g.clubs.home.score)),
        "{score}"
    );
    let scorer = g.box_score[0].player_id.clone();
    let total = ok(
        &mut db,
        "get_player_total_points",
        json!({"player_id": scorer}),
    );
    let want = super::tools::player_total_points(&db, &scorer, None).unwrap();
    assert!(want > 0);
    assert_eq!(total, format!("\"{want}\""));
    let none = ok(
        &mut db,
        "get_player_total_points",
        json!({"player_id": scorer, "season": "1999-00"}),
    );
    assert_eq!(none, "\"0\"");
    let club = g.clubs.home.club_id.clone();
    let record = json_of(&ok(&mut db, "get_club_record", json!({"club_id": club})));
    let (w, l) = super::tools::club_record(&db, &club, None).unwrap();
    assert_eq!(
        record,
        json!({"wins": w.to_string(), "losses": l.to_string()})
    );
    assert!(w + l > 0);
    // A model keeps its numbers.
    let details = json_of(&ok(
        &mut db,
        "get_game_details",
        json!({"game_id": g.game_id}),
    ));
    assert!(details["clubs"]["home"]["score"].is_i64());
}

#[test]
fn rosters_list_sorted_and_active_only_by_default() {
    let mut db = eval_db();
    let club: Club = db
        .clubs
        .iter()
        .map(|(_, c)| c)
        .find(|c| c.roster.values().any(|e| !e.active))
        .expect("some club has an inactive player")
        .clone();
    let active = json_of(&ok(
        &mut db,
        "list_club_roster_ids",
        json!({"club_id": club.club_id}),
    ));
    let all = json_of(&ok(
        &mut db,
        "list_club_roster_ids",
        json!({"club_id": club.club_id, "active_only": false}),
    ));
    let want_all: Vec<&String> = club.roster.keys().collect();
    assert_eq!(all, json!(want_all));
    assert!(active.as_array().unwrap().len() < want_all.len());
}

#[test]
fn name_lookups_are_case_blind_and_refuse_ambiguity() {
    let mut db = generate::generate(SEED, Split::Train);
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (_, p) in db.players.iter() {
        *seen
            .entry((p.name.first_name.clone(), p.name.last_name.clone()))
            .or_default() += 1;
    }
    let (twin, _) = seen.iter().find(|(_, n)| **n > 1).expect("a shared name");
    let (single, _) = seen.iter().find(|(_, n)| **n == 1).unwrap();
    refused(
        &mut db,
        "find_player_id_by_name",
        json!({"first_name": twin.0, "last_name": twin.1}),
        "Multiple players found, please provide more information",
    );
    let id = ok(
        &mut db,
        "find_player_id_by_name",
        json!({"first_name": single.0.to_uppercase(), "last_name": single.1.to_lowercase()}),
    );
    let email = db.players.get(&id).unwrap().email.to_uppercase();
    assert_eq!(
        ok(&mut db, "find_player_id_by_email", json!({"email": email})),
        id
    );
    refused(
        &mut db,
        "find_player_id_by_email",
        json!({"email": "no@one.example"}),
        "Player not found",
    );
}

#[test]
fn club_listings_keep_every_club_when_names_repeat() {
    let mut db = eval_db();
    let mut clubs = db.clubs.to_map();
    let ids: Vec<String> = clubs.keys().take(2).cloned().collect();
    let name = clubs[&ids[0]].name.clone();
    clubs.get_mut(&ids[1]).unwrap().name = name.clone();
    let twin = BasketballDb::new(clubs, db.players.to_map(), db.games.to_map());
    let listing = json_of(&super::tools::club_listing(twin.clubs.in_order()));
    assert_eq!(listing[&name], json!(ids));
    assert_eq!(listing.as_object().unwrap().len(), 239);
    // Unique names print as the reference prints them: name -> id, keys sorted.
    let text = ok(&mut db, "list_all_clubs", json!({}));
    let keys: Vec<String> = json_of(&text)
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(
        (keys, json_of(&text).as_object().unwrap().len()),
        (sorted, 240)
    );
    let league = db.clubs.iter().next().unwrap().1.league.to_uppercase();
    assert!(!call(&mut db, "list_clubs_by_league", json!({"league": league})).1);
    refused(
        &mut db,
        "list_clubs_by_league",
        json!({"league": "Nowhere"}),
        "No clubs found for the specified league",
    );
}

// ---------- generators ----------

#[test]
fn generators_have_the_reference_and_paper_scales_and_consistent_games() {
    for (split, scale) in [(Split::Eval, SCALES.eval), (Split::Train, SCALES.train)] {
        let db = generate::generate(SEED, split);
        assert_eq!(
            (db.players.len(), db.clubs.len(), db.games.len()),
            (scale.players, scale.clubs, scale.games),
            "{split:?}"
        );
        let mut status: BTreeMap<&str, usize> = BTreeMap::new();
        let mut busy = BTreeSet::new();
        for (id, g) in db.games.iter() {
            *status.entry(g.status.as_str()).or_default() += 1;
            for side in [&g.clubs.home, &g.clubs.away] {
                assert!(
                    db.clubs
                        .get(&side.club_id)
                        .unwrap()
                        .games
                        .contains(&id.to_string())
                );
                let sum: i64 = g
                    .scoring_history
                    .iter()
                    .filter(|e| e.club_id == side.club_id)
                    .map(|e| e.points)
                    .sum();
                assert_eq!(sum, side.score, "{id}: score is the history's sum");
                assert!(
                    busy.insert((side.club_id.clone(), g.date.clone())),
                    "{id}: twice a day"
                );
            }
            for e in &g.box_score {
                let sum: i64 = g
                    .scoring_history
                    .iter()
                    .filter(|s| s.player_id == e.player_id)
                    .map(|s| s.points)
                    .sum();
                assert_eq!(sum, e.points, "{id}: box score of {}", e.player_id);
            }
            if g.status == "final" {
                assert_ne!(g.clubs.home.score, g.clubs.away.score, "{id}: a final tie");
            }
            let clocks: Vec<_> = g
                .scoring_history
                .iter()
                .map(|e| clock_key(&e.timestamp).unwrap())
                .collect();
            assert!(
                clocks.windows(2).all(|w| w[0] <= w[1]),
                "{id}: history out of order"
            );
        }
        let n = scale.games as f64;
        let share = |s: &str| status.get(s).copied().unwrap_or(0) as f64 / n;
        assert!(
            (0.45..0.65).contains(&share("final")),
            "{split:?} {status:?}"
        );
        assert!(
            share("in_progress") > 0.12 && share("scheduled") > 0.12,
            "{status:?}"
        );
        assert!(share("postponed") > 0.02, "{status:?}");
        let emails: BTreeSet<&str> = db.players.iter().map(|(_, p)| p.email.as_str()).collect();
        assert_eq!(emails.len(), scale.players, "emails are unique");
        assert_eq!(
            db.customers().len(),
            scale.players,
            "every player is on a roster"
        );
        let seasons: BTreeSet<&str> = db.games.iter().map(|(_, g)| g.season.as_str()).collect();
        assert_eq!(
            seasons.contains("2023-24"),
            scale.past_season,
            "{seasons:?}"
        );
        let inactive = db
            .clubs
            .iter()
            .flat_map(|(_, c)| c.roster.values())
            .filter(|e| !e.active)
            .count();
        assert!(inactive > 0);
    }
}

// ---------- policy ----------

#[test]
fn policy_rules_refuse_what_the_tools_accept() {
    let db = eval_db();
    let g = first_game(&db, "in_progress").clone();
    let home = g.clubs.home.club_id.clone();
    let away = g.clubs.away.club_id.clone();
    let scorer = roster_player(&db, &home);
    let stranger = roster_player(&db, &away);
    let rule = |tool: &str, args: Value| db.check_policy(tool, &args).err().map(|v| v.rule);
    let score = |player: &str, ts: &str| {
        json!({"game_id": g.game_id, "event_type": "2PT", "points": 2, "club_id": home,
               "player_id": player, "timestamp": ts})
    };
    assert_eq!(
        rule("record_scoring_event", score(&stranger, "Q4 00:10")),
        Some("scorer_on_club_roster")
    );
    assert_eq!(
        rule("record_scoring_event", score(&scorer, "2nd quarter")),
        Some("game_clock_format")
    );
    assert_eq!(
        rule("record_scoring_event", score(&scorer, "Q1 13:00")),
        Some("game_clock_format")
    );
    if !g.scoring_history.is_empty() {
        assert_eq!(
            rule("record_scoring_event", score(&scorer, "Q1 12:00")),
            Some("not_before_last_score")
        );
    }
    assert_eq!(
        rule("record_scoring_event", score(&scorer, "OT1 00:30")),
        None
    );
    assert_eq!(
        rule(
            "update_game_status",
            json!({"game_id": g.game_id, "new_status": "in_progress"})
        ),
        Some("status_changes")
    );
    let p = db.players.get(&scorer).unwrap();
    let a = &p.address;
    let same = json!({"player_id": scorer, "street": a.street, "city": a.city, "state": a.state,
                      "country": a.country, "zip": a.zip});
    assert_eq!(
        rule("modify_player_address", same.clone()),
        Some("address_changes")
    );
    let mut blank = same;
    blank["zip"] = json!(" ");
    assert_eq!(
        rule("modify_player_address", blank),
        Some("address_complete")
    );
    assert_eq!(clock_key("Q2 03:21"), Some((2, 720 - 201)));
    assert!(clock_key("Q2 3:21").is_none() && clock_key("OT1 05:01").is_none());
}

// ---------- grounding and hooks ----------

#[test]
fn every_write_has_compliant_proposals_that_execute_and_describe_the_request() {
    for split in [Split::Eval, Split::Train] {
        let db = generate::generate(SEED, split);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for tool in [
            "modify_player_address",
            "update_game_status",
            "record_scoring_event",
        ] {
            let mut tried = 0;
            for user in db.customers().iter().take(30) {
                let ctx = GroundingContext::for_user(user);
                for args in db.propose_calls(tool, &ctx, &mut rng) {
                    tried += 1;
                    assert!(db.check_policy(tool, &args).is_ok(), "{tool} {args}");
                    let mut fork = db.clone();
                    let (out, err) = call(&mut fork, tool, args.clone());
                    assert!(!err, "{tool} {args}: {out}");
                    let request = hooks::describe_request(&db, tool, &args, &out).unwrap();
                    for id in db.internal_ids(tool, &args) {
                        assert!(!request.contains(&id), "{request}");
                    }
                }
            }
            assert!(tried >= 10, "{split:?} {tool}: only {tried} proposals");
        }
    }
}

#[test]
fn identity_comes_first_and_records_hold_the_ids_a_request_needs() {
    let db = eval_db();
    let user = db.customers()[0].clone();
    let facts = hooks::user_facts(&db, &user);
    assert_eq!(facts[0].kind, "identity");
    assert!(
        facts[0]
            .text
            .contains(&db.players.get(&user).unwrap().email)
    );
    let records = hooks::customer_records(&db, &user).join("\n");
    for gid in &db.players.get(&user).unwrap().games {
        assert!(records.contains(gid.as_str()));
    }
    let g = db
        .games
        .get(&db.players.get(&user).unwrap().games[0])
        .unwrap();
    let out = format!(
        "{{\"status\": \"x\", \"home\": {{\"score\": \"{}\"}}, \"away\": {{\"score\": \"7\"}}}}",
        g.clubs.home.score
    );
    assert_eq!(
        db.required_outputs("get_game_score", &json!({}), &out),
        [g.clubs.home.score.to_string(), "7".to_string()]
    );
    // A player's own record: the street on file and the latest contract end, never its ids.
    let record = r#"{"address": {"street": "327 Foundry Road"}, "games": ["T4MV5LR"],
        "contracts": {"A1": {"end_date": "2024-06-30"}, "B2": {"end_date": "2026-06-30"}}}"#;
    assert_eq!(
        db.required_outputs("get_player_details", &json!({}), record),
        ["327 Foundry Road", "2026-06-30"]
    );
    let club = r#"{"arena": {"name": "Northline Bank Garden", "address": {"street": "280 Parkside Terrace"}}, "roster": {"0JKVUE9": {}}}"#;
    assert_eq!(
        db.required_outputs("get_club_details", &json!({}), club),
        ["Northline Bank Garden", "280 Parkside Terrace"]
    );
}
