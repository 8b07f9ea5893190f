//! Grounding hooks for basketball: candidate arguments per tool (`propose_calls`); the ids
//! a call reveals are learnt as `tools.toml` declares (`learns`), and the rules proposals
//! respect are in `policy.rs`.
//!
//! Proposals are about the context's player: ids the conversation revealed come first,
//! then the player's own club, its games and its opponents, in a seeded order. Write
//! proposals are shaped to succeed: a complete new address that differs; for a status
//! change, each transition the table allows from the game's current status; for a score,
//! an in-progress game of the player's club, a scorer on the credited club's roster (the
//! player, or someone on that game's box score whose full name is unique, so the agent can
//! look them up by name), points that fit the type and a game clock after the last score.
//!
//! Architecture invariant: reads the state only; never mutates it and never calls tools.

use super::db::{BasketballDb, Club, Game, Player};
use super::generate::random_address;
use super::policy::clock_key;
use super::tools::next_statuses;
use crate::domain::GroundingContext;
use crate::domain::kit::propose::{self, MAX_PROPOSALS};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

/// The player's games (`GAMES.ranked`: known ones first, the rest shuffled); any game
/// may be theirs to ask about.
const GAMES: propose::Owned<BasketballDb, Player, Game> = propose::Owned {
    key: "game_id",
    table: |db| &db.games,
    own: |p| p.games.clone(),
    mine: |_, _| true,
};

/// The player's club first, then clubs the conversation revealed, then the opponents of
/// the player's games.
fn ranked_clubs<'a>(
    db: &'a BasketballDb,
    ctx: &GroundingContext,
    player: Option<&Player>,
    rng: &mut ChaCha8Rng,
) -> Vec<&'a Club> {
    let own: Vec<String> = player
        .and_then(|p| db.club_of(&p.player_id))
        .map(|c| vec![c.club_id.clone()])
        .unwrap_or_default();
    let opponents: Vec<String> = player
        .map(|p| {
            p.games
                .iter()
                .filter_map(|g| db.games.get(g))
                .flat_map(|g| [g.clubs.home.club_id.clone(), g.clubs.away.club_id.clone()])
                .collect()
        })
        .unwrap_or_default();
    let mut ids = own;
    ids.extend(propose::tiered(
        ctx,
        "club_id",
        vec![opponents],
        |id| db.clubs.contains(id),
        rng,
    ));
    propose::distinct(propose::values(ids))
        .iter()
        .filter_map(|v| v.as_str().and_then(|id| db.clubs.get(id)))
        .collect()
}

/// Players whose full name no other player shares (found by name without ambiguity).
fn unique_name(db: &BasketballDb, p: &Player) -> bool {
    db.players
        .iter()
        .filter(|(_, q)| q.name == p.name)
        .take(2)
        .count()
        == 1
}

pub fn propose_calls(
    db: &BasketballDb,
    tool: &str,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    let player = propose::customer(ctx, "player_id", &db.players);
    let own_club = player.and_then(|p| db.club_of(&p.player_id));
    let mut out: Vec<Value> = Vec::new();
    let season = |g: &Game| g.season.clone();
    match tool {
        "find_player_id_by_email" => {
            if let Some(p) = player {
                out.push(json!({"email": p.email}));
            }
        }
        "find_player_id_by_name" => {
            if let Some(p) = player {
                out.push(json!({"first_name": p.name.first_name, "last_name": p.name.last_name}));
            }
        }
        "get_player_details" => {
            if let Some(p) = player {
                out.push(json!({"player_id": p.player_id}));
            }
        }
        "get_player_total_points" => {
            let mut ids: Vec<String> = player
                .map(|p| vec![p.player_id.clone()])
                .unwrap_or_default();
            ids.extend(ctx.values("player_id").iter().cloned());
            for id in propose::distinct(propose::values(ids)).into_iter().take(3) {
                out.push(json!({"player_id": id}));
                if let Some(g) = db
                    .players
                    .get(id.as_str().unwrap_or(""))
                    .and_then(|p| p.games.first())
                    .and_then(|g| db.games.get(g))
                {
                    out.push(json!({"player_id": id, "season": season(g)}));
                }
            }
        }
        "list_all_clubs" => out.push(json!({})),
        "list_clubs_by_league" => {
            if let Some(c) = own_club {
                out.push(json!({"league": c.league}));
            }
        }
        "get_club_details" | "list_club_roster_ids" | "get_club_schedule" | "get_club_record" => {
            for c in ranked_clubs(db, ctx, player, rng).into_iter().take(3) {
                let id = &c.club_id;
                match tool {
                    "list_club_roster_ids" => {
                        out.push(json!({"club_id": id}));
                        out.push(json!({"club_id": id, "active_only": false}));
                    }
                    "get_club_schedule" => {
                        out.push(json!({"club_id": id}));
                        let statuses: Vec<&str> = c
                            .games
                            .iter()
                            .filter_map(|g| db.games.get(g))
                            .map(|g| g.status.as_str())
                            .filter(|s| *s != "final")
                            .collect();
                        if !statuses.is_empty() {
                            let s = statuses[rng.random_range(0..statuses.len())];
                            out.push(json!({"club_id": id, "status": s}));
                        }
                        out.push(json!({"club_id": id, "season": "2024-25"}));
                    }
                    "get_club_record" => {
                        out.push(json!({"club_id": id}));
                        out.push(json!({"club_id": id, "season": "2024-25"}));
                    }
                    _ => out.push(json!({"club_id": id})),
                }
            }
        }
        "get_game_details" | "get_game_score" | "get_game_box_score" | "get_game_timeline" => {
            let played = |g: &Game| {
                !matches!(tool, "get_game_box_score" | "get_game_timeline")
                    || !g.scoring_history.is_empty()
            };
            for g in GAMES.ranked(db, ctx, player, rng, played) {
                out.push(json!({"game_id": g.game_id}));
            }
        }
        "calculate" => {
            for g in GAMES
                .ranked(db, ctx, player, rng, |g| g.box_score.len() >= 2)
                .into_iter()
                .take(2)
            {
                let terms: Vec<String> = g.box_score.iter().map(|e| e.points.to_string()).collect();
                out.push(json!({"expression": terms.join(" + ")}));
            }
        }
        "think" => out.push(json!({"thought": format!(
            "Check the game's status and both clubs before recording anything for player {}.",
            player.map_or("(not identified)", |p| p.player_id.as_str()))})),
        "transfer_to_human_agents" => out.push(json!({"summary": format!(
            "Player {} asks for something the basketball tools cannot do.",
            player.map_or("(not identified)", |p| p.player_id.as_str()))})),
        "modify_player_address" => {
            if let Some(p) = player {
                for _ in 0..2 {
                    let a = random_address(rng, None);
                    out.push(json!({"player_id": p.player_id, "street": a.street,
                        "city": a.city, "state": a.state, "country": a.country, "zip": a.zip}));
                }
            }
        }
        "update_game_status" => {
            let open = |g: &Game| !next_statuses(&g.status).is_empty();
            for g in GAMES.ranked(db, ctx, player, rng, open) {
                for s in next_statuses(&g.status) {
                    out.push(json!({"game_id": g.game_id, "new_status": s}));
                }
            }
        }
        "record_scoring_event" => {
            let live = |g: &Game| g.status == "in_progress";
            for g in GAMES.ranked(db, ctx, player, rng, live) {
                score_proposals(db, player, g, rng, &mut out);
                if out.len() >= MAX_PROPOSALS {
                    break;
                }
            }
        }
        _ => {}
    }
    out.truncate(MAX_PROPOSALS);
    out
}

/// Scores in a live game: by the player for their club, then by box-score players of
/// either side with a unique name; at a game clock after the game's last score.
fn score_proposals(
    db: &BasketballDb,
    player: Option<&Player>,
    g: &Game,
    rng: &mut ChaCha8Rng,
    out: &mut Vec<Value>,
) {
    let mut scorers: Vec<(String, String)> = Vec::new();
    if let Some(p) = player
        && let Some(c) = db.club_of(&p.player_id)
        && g.involves(&c.club_id)
    {
        scorers.push((p.player_id.clone(), c.club_id.clone()));
    }
    // Box-score players only of the player's own games: those details are what the agent
    // can look up for them (other games' box scores were never shown).
    let own_game = player.is_some_and(|p| p.games.contains(&g.game_id));
    for e in g.box_score.iter().filter(|_| own_game) {
        let rostered = db
            .clubs
            .get(&e.club_id)
            .is_some_and(|c| c.roster.contains_key(&e.player_id));
        let named = db
            .players
            .get(&e.player_id)
            .is_some_and(|p| unique_name(db, p));
        if rostered && named && !scorers.iter().any(|(id, _)| *id == e.player_id) {
            scorers.push((e.player_id.clone(), e.club_id.clone()));
        }
    }
    let last = g
        .scoring_history
        .iter()
        .filter_map(|e| clock_key(&e.timestamp))
        .max()
        .unwrap_or((1, 0));
    for (player_id, club_id) in scorers.iter().take(3) {
        let (event_type, points) = [("2PT", 2), ("3PT", 3), ("FT", 1)][rng.random_range(0..3)];
        // Later in the same quarter when there is time left, else early in the next.
        let (quarter, elapsed) = if last.1 + 60 < 720 && last.0 <= 4 {
            (last.0, rng.random_range(last.1 + 1..(last.1 + 60).min(719)))
        } else {
            ((last.0 + 1).min(4), rng.random_range(10..120))
        };
        let left = 720 - elapsed;
        let timestamp = format!("Q{} {:02}:{:02}", quarter.min(4), left / 60, left % 60);
        out.push(
            json!({"game_id": g.game_id, "event_type": event_type, "points": points,
            "club_id": club_id, "player_id": player_id, "timestamp": timestamp}),
        );
    }
}
