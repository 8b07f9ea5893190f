//! Refinement and verification hooks for basketball: what a player knows about themself
//! (`user_facts`), what they ask of each call (`describe_request`: sentences in
//! `requests.toml`, variables computed here), what the agent must tell them of their own
//! record (`required_outputs`) and what the agent can look up once they are identified
//! (`customer_records`: their profile, their club, the club listing, and the games of
//! their club with both sides). `tools.toml` declares which argument values they could
//! never know (`internal`: their own player id, where a tool can only be about them; game,
//! club and other players' ids are not internal: a player names games by clubs and date,
//! clubs by name and players by full name, and the agent finds the ids in what it can look
//! up) and what the other lookups tell (`tells`: scores, records, point totals).
//!
//! Players authenticate with their email (the policy's first step; full name and ZIP code
//! are the fallback and a fact too). They name clubs by name, games by the two clubs and
//! the date, players by full name, and scores by kind and game clock.
//!
//! Architecture invariant: reads the state only; phrasing varies deterministically with the
//! arguments (no RNG), so grounding stays reproducible.

use super::db::{BasketballDb, Game};
use super::policy::ADDRESS_FIELDS;
use super::tools::club_listing;
use crate::domain::UserFact;
use crate::domain::kit::facts;
use crate::domain::kit::pyjson::Py;
use crate::domain::kit::templates::Templates;
use crate::domain::kit::text::{arg_str, output_values};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static REQUESTS: LazyLock<Templates> =
    LazyLock::new(|| Templates::builtin(include_str!("requests.toml")));

/// "the Harborview Comets vs Red Mesa Owls game on 2025-01-14".
pub fn game_text(g: &Game) -> String {
    format!(
        "the {} vs {} game on {}",
        g.clubs.home.name, g.clubs.away.name, g.date
    )
}

fn event_text(event_type: &str) -> &'static str {
    match event_type {
        "3PT" => "a three-pointer (3PT, 3 points)",
        "FT" => "a free throw (FT, 1 point)",
        "1PT" => "a one-point score (1PT)",
        _ => "a two-point basket (2PT, 2 points)",
    }
}

pub fn user_facts(db: &BasketballDb, player_id: &str) -> Vec<UserFact> {
    let Some(p) = db.players.get(player_id) else {
        return Vec::new();
    };
    let name = (&*p.name.first_name, &*p.name.last_name, &*p.address.zip);
    let mut out = facts::email_or_name_zip(&p.email, name, &[player_id]);
    if let Some(c) = db.club_of(player_id) {
        out.push(facts::fact(
            "club",
            format!("You play for the {} ({}).", c.name, c.league),
            vec![c.name.clone()],
            &[&c.club_id],
        ));
    }
    out
}

pub fn describe_request(
    db: &BasketballDb,
    tool: &str,
    args: &Value,
    _output: &str,
) -> Option<String> {
    let mut vars: BTreeMap<&str, String> = BTreeMap::new();
    let game = db.games.get(arg_str(args, "game_id"));
    let club = db.clubs.get(arg_str(args, "club_id"));
    let mut table = tool.to_string();
    if let Some(g) = game {
        vars.insert("game", game_text(g));
    }
    if let Some(c) = club {
        vars.insert("club", c.name.clone());
    }
    let season = arg_str(args, "season");
    vars.insert(
        "in_season",
        if season.is_empty() {
            String::new()
        } else {
            format!(" in the {season} season")
        },
    );
    match tool {
        "modify_player_address" => {
            let parts: Vec<&str> = ADDRESS_FIELDS.iter().map(|f| arg_str(args, f)).collect();
            vars.insert(
                "address",
                format!(
                    "{}, {}, {} {}, {}",
                    parts[0], parts[1], parts[2], parts[4], parts[3]
                ),
            );
        }
        "update_game_status" => {
            let g = game?;
            table = format!("{tool}.{}", arg_str(args, "new_status"));
            vars.insert("current", g.status.replace('_', " "));
        }
        "record_scoring_event" => {
            let p = db.players.get(arg_str(args, "player_id"))?;
            vars.insert("scorer", p.full_name());
            vars.insert("kind", event_text(arg_str(args, "event_type")).to_string());
        }
        "get_player_total_points" => {
            let p = db.players.get(arg_str(args, "player_id"))?;
            vars.insert("scorer", p.full_name());
        }
        "get_club_schedule" => {
            let status = arg_str(args, "status");
            vars.insert(
                "which",
                if status.is_empty() {
                    "games".into()
                } else {
                    format!("{} games", status.replace('_', " "))
                },
            );
        }
        _ => {}
    }
    // Tools without sentences (authentication and agent-side notes) give `None`.
    REQUESTS.render(&table, args, &vars)
}

/// What a player's record tells where `tools.toml`'s `tells` cannot point at it: the
/// street on file and when the contract ends (the latest end of those held). The other
/// lookups' values (a game's score or its status and venue street, a club's record or its
/// arena's name and street, a player's points) are declared there.
pub fn required_outputs(
    _db: &BasketballDb,
    tool: &str,
    _args: &Value,
    output: &str,
) -> Vec<String> {
    if tool != "get_player_details" {
        return Vec::new();
    }
    let mut out = output_values(output, &["/address/street"]);
    let v: Value = serde_json::from_str(output).unwrap_or_default();
    let end = v["contracts"]
        .as_object()
        .into_iter()
        .flat_map(|c| c.values())
        .filter_map(|c| c["end_date"].as_str())
        .max();
    out.extend(end.map(str::to_string));
    out
}

pub fn customer_records(db: &BasketballDb, player_id: &str) -> Vec<String> {
    let Some(p) = db.players.get(player_id) else {
        return Vec::new();
    };
    let mut records = vec![player_id.to_string(), Py::model(p).to_json_str()];
    let mut clubs: Vec<&str> = Vec::new();
    if let Some(c) = db.club_of(player_id) {
        records.push(Py::model(c).to_json_str());
        clubs.push(&c.club_id);
    }
    for g in p.games.iter().filter_map(|id| db.games.get(id)) {
        records.push(Py::model(g).to_json_str());
        for side in [&g.clubs.home, &g.clubs.away] {
            if !clubs.contains(&side.club_id.as_str()) {
                clubs.push(&side.club_id);
            }
        }
    }
    for c in clubs.iter().skip(1).filter_map(|id| db.clubs.get(id)) {
        records.push(Py::model(c).to_json_str());
    }
    records.push(club_listing(db.clubs.in_order()));
    records
}
