//! The twenty basketball tools: the reference's nineteen (same names, arguments, result
//! shapes and error strings, checks in the same order) plus the kit's `think`, so the
//! split is the paper's 17 read / 3 write. Outputs are tau2's `to_json_str` of what the
//! reference returns: clubs, players, games, box-score rows and scoring events as
//! `model_dump()` JSON; plain dicts and lists with their numbers as strings (a score
//! summary, a win-loss record, id lists); a player's point total as a quoted int; the club
//! listings as `json.dumps` text. Descriptions are ours.
//!
//! Every check runs before any mutation, so a failing call leaves the state untouched.
//!
//! Departures (docs/domains/basketball.md,
//! `tests/fixtures/reference/basketball/departures.json`): a `1PT` scoring event (a type
//! the data model allows and the reference's data holds) is recorded as one point, where
//! the reference's points table lacks it and fails with `'1PT'`; the club listings keep
//! every club when names repeat (the name maps to the list of their ids, in file order)
//! instead of silently keeping the last.
//!
//! Architecture invariant: tools see only the `BasketballDb` and their validated arguments;
//! policy rules the tools do not enforce live in `policy.rs`.

use super::db::{BasketballDb, Club, Game, Player, ScoringEvent};
use crate::domain::kit::glue::read_tool;
use crate::domain::kit::ids::id_by_email;
use crate::domain::kit::pyjson::{Py, name_listing};
use crate::domain::kit::python::py_str_repr;
use crate::domain::kit::specs;
use crate::domain::{Args, Tool, ToolFn};
use serde_json::{Value, json};

crate::domain::kit::glue::tool_list!(BasketballDb);

/// Each tool function by name, in `tools.toml`'s order (it places the kit's tools too);
/// `tools.toml` describes them.
fn build() -> Vec<Tool<BasketballDb>> {
    let runs: [(&str, ToolFn<BasketballDb>); 17] = [
        ("get_club_details", read_tool!(club, "club_id")),
        ("get_player_details", read_tool!(player, "player_id")),
        ("get_game_details", read_tool!(game, "game_id")),
        ("list_all_clubs", |db, _| {
            Ok(club_listing(db.clubs.in_order()))
        }),
        ("list_clubs_by_league", |db, a| {
            let league = a.str("league")?.to_lowercase();
            let clubs: Vec<&Club> = db
                .clubs
                .in_order()
                .filter(|c| c.league.to_lowercase() == league)
                .collect();
            if clubs.is_empty() {
                return Err("No clubs found for the specified league".into());
            }
            Ok(club_listing(clubs))
        }),
        ("find_player_id_by_email", |db, a| {
            let rows = db.players.in_order().map(|p| (&*p.player_id, &*p.email));
            id_by_email(rows, a.str("email")?).ok_or_else(|| "Player not found".to_string())
        }),
        ("find_player_id_by_name", |db, a| {
            let first = a.str("first_name")?.to_lowercase();
            let last = a.str("last_name")?.to_lowercase();
            let found: Vec<&Player> = db
                .players
                .in_order()
                .filter(|p| {
                    p.name.first_name.to_lowercase() == first
                        && p.name.last_name.to_lowercase() == last
                })
                .collect();
            match found[..] {
                [] => Err("Player not found".into()),
                [one] => Ok(one.player_id.clone()),
                _ => Err("Multiple players found, please provide more information".into()),
            }
        }),
        ("list_club_roster_ids", |db, a| {
            let c = club(db, a.str("club_id")?)?;
            let active_only = a
                .value("active_only")
                .and_then(Value::as_bool)
                .unwrap_or(true);
            let ids: Vec<&String> = c
                .roster
                .iter()
                .filter(|(_, e)| !active_only || e.active)
                .map(|(id, _)| id)
                .collect();
            Ok(Py::Plain(json!(ids)).to_json_str())
        }),
        ("get_game_box_score", |db, a| {
            Ok(Py::models(&game(db, a.str("game_id")?)?.box_score).to_json_str())
        }),
        ("get_club_schedule", club_schedule),
        ("get_game_score", |db, a| {
            let g = game(db, a.str("game_id")?)?;
            let side = |s: &super::db::GameSide| {
                Py::dict([
                    ("club_id", Py::str(&s.club_id)),
                    ("name", Py::str(&s.name)),
                    ("score", Py::Plain(json!(s.score))),
                ])
            };
            Ok(Py::dict([
                ("status", Py::str(&g.status)),
                ("home", side(&g.clubs.home)),
                ("away", side(&g.clubs.away)),
            ])
            .to_json_str())
        }),
        ("get_game_timeline", |db, a| {
            Ok(Py::models(&game(db, a.str("game_id")?)?.scoring_history).to_json_str())
        }),
        ("get_player_total_points", |db, a| {
            let total = player_total_points(db, a.str("player_id")?, a.opt_str("season"))?;
            Ok(Py::Plain(json!(total)).to_json_str())
        }),
        ("get_club_record", |db, a| {
            let (wins, losses) = club_record(db, a.str("club_id")?, a.opt_str("season"))?;
            Ok(Py::dict([
                ("wins", Py::Plain(json!(wins))),
                ("losses", Py::Plain(json!(losses))),
            ])
            .to_json_str())
        }),
        ("modify_player_address", modify_player_address),
        ("update_game_status", update_game_status),
        ("record_scoring_event", record_scoring_event),
    ];
    specs::builtin(include_str!("tools.toml"), &runs)
}

crate::domain::kit::glue::row_getters!(BasketballDb {
    club: clubs.get_or("Club not found") -> Club,
    player: players.get_or("Player not found") -> Player,
    game: games.get_or("Game not found") -> Game,
});

/// Clubs as `{name: club_id}` sorted by name ([`name_listing`]: a repeated name keeps
/// every club).
pub fn club_listing<'a>(clubs: impl IntoIterator<Item = &'a Club>) -> String {
    name_listing(
        clubs
            .into_iter()
            .map(|c| (c.name.as_str(), c.club_id.as_str())),
    )
}

fn club_schedule(db: &mut BasketballDb, a: &Args) -> Result<String, String> {
    let c = club(db, a.str("club_id")?)?;
    let (season, status) = (a.opt_str("season"), a.opt_str("status"));
    let mut ids = Vec::new();
    for gid in &c.games {
        let g = game(db, gid)?;
        if season.is_some_and(|s| g.season != s) || status.is_some_and(|s| g.status != s) {
            continue;
        }
        ids.push(gid.clone());
    }
    Ok(Py::Plain(json!(ids)).to_json_str())
}

/// A player's points over the box scores of the games they list (one season or all).
pub fn player_total_points(
    db: &BasketballDb,
    player_id: &str,
    season: Option<&str>,
) -> Result<i64, String> {
    let p = player(db, player_id)?;
    let mut total = 0;
    for gid in &p.games {
        let g = game(db, gid)?;
        if season.is_some_and(|s| g.season != s) {
            continue;
        }
        total += g
            .box_score
            .iter()
            .filter(|e| e.player_id == player_id)
            .map(|e| e.points)
            .sum::<i64>();
    }
    Ok(total)
}

/// A club's (wins, losses) over its final games (one season or all); ties count as neither.
pub fn club_record(
    db: &BasketballDb,
    club_id: &str,
    season: Option<&str>,
) -> Result<(i64, i64), String> {
    let c = club(db, club_id)?;
    let (mut wins, mut losses) = (0, 0);
    for gid in &c.games {
        let g = game(db, gid)?;
        if g.status != "final" || season.is_some_and(|s| g.season != s) {
            continue;
        }
        let (home, away) = (&g.clubs.home, &g.clubs.away);
        let (ours, theirs) = if home.club_id == club_id {
            (home.score, away.score)
        } else if away.club_id == club_id {
            (away.score, home.score)
        } else {
            continue;
        };
        if ours > theirs {
            wins += 1;
        } else if ours < theirs {
            losses += 1;
        }
    }
    Ok((wins, losses))
}

fn modify_player_address(db: &mut BasketballDb, a: &Args) -> Result<String, String> {
    let id = player(db, a.str("player_id")?)?.player_id.clone();
    let address = super::db::Address {
        street: a.str("street")?.into(),
        city: a.str("city")?.into(),
        country: a.str("country")?.into(),
        state: a.str("state")?.into(),
        zip: a.str("zip")?.into(),
    };
    let p = db.players.get_mut(&id).ok_or("Player not found")?;
    p.address = address;
    Ok(Py::model(&*p).to_json_str())
}

/// The statuses a game may move to from `current` (the reference's transition table).
pub fn next_statuses(current: &str) -> &'static [&'static str] {
    match current {
        "scheduled" => &["in_progress", "postponed"],
        "postponed" => &["scheduled"],
        "in_progress" => &["final"],
        _ => &[],
    }
}

fn update_game_status(db: &mut BasketballDb, a: &Args) -> Result<String, String> {
    let g = game(db, a.str("game_id")?)?;
    let new = a.str("new_status")?;
    if new == g.status {
        return Ok(Py::model(g).to_json_str());
    }
    if !next_statuses(&g.status).contains(&new) {
        return Err("Invalid status transition".into());
    }
    let id = g.game_id.clone();
    let g = db.games.get_mut(&id).ok_or("Game not found")?;
    g.status = new.to_string();
    Ok(Py::model(&*g).to_json_str())
}

/// Points a scoring event type is worth; `None` for a type the model does not know.
pub fn event_points(event_type: &str) -> Option<i64> {
    match event_type {
        "2PT" => Some(2),
        "3PT" => Some(3),
        "FT" | "1PT" => Some(1),
        _ => None,
    }
}

fn record_scoring_event(db: &mut BasketballDb, a: &Args) -> Result<String, String> {
    let g = game(db, a.str("game_id")?)?;
    if g.status != "in_progress" {
        return Err("Scoring can only be recorded for games in progress".into());
    }
    let event_type = a.str("event_type")?;
    // The reference indexes a dict with the type: an unknown one is a bare KeyError.
    let expected = event_points(event_type).ok_or_else(|| py_str_repr(event_type))?;
    let points = a.i64("points")?;
    if points != expected {
        return Err("Points do not match the event type".into());
    }
    let club_id = a.str("club_id")?;
    if !g.involves(club_id) {
        return Err("Club is not part of this game".into());
    }
    let player_id = player(db, a.str("player_id")?)?.player_id.clone();
    let event = ScoringEvent {
        event_type: event_type.to_string(),
        points,
        club_id: club_id.to_string(),
        player_id,
        timestamp: a.str("timestamp")?.to_string(),
    };
    let id = g.game_id.clone();
    let g = db.games.get_mut(&id).ok_or("Game not found")?;
    if g.clubs.home.club_id == event.club_id {
        g.clubs.home.score += points;
    } else {
        g.clubs.away.score += points;
    }
    g.scoring_history.push(event);
    Ok(Py::model(&*g).to_json_str())
}
