//! The basketball database: clubs (arena, roster entries with profile and salary, the ids
//! of their games), players (name, home address, email, contracts, the ids of their games)
//! and games (season, date, status, venue, home and away clubs with their scores, box
//! score, periods, scoring history).
//!
//! Rows mirror the reference's pydantic models field for field and in the same order, and
//! serialise in `model_dump()` form (floats as floats, a jersey number as the int or string
//! it was), so a tool output is tau2's text and an export is what tau2 hashes. Nested
//! dicts (rosters, contracts) are key-sorted maps: the differential comparison reads JSON
//! objects without order, and the one tool that lists a roster sorts it.
//!
//! Python walks its dicts in file order: the first player matching an email wins, and the
//! club listings keep file order within a name. The player and club orders of an imported
//! `db.json` are kept ([`BasketballDb::players_in_order`], [`BasketballDb::clubs_in_order`]).
//!
//! Architecture invariant: data and the `Database` glue only; tool behaviour lives in
//! `tools.rs`, grounding in `ground.rs`, refinement hooks in `hooks.rs`.

use crate::domain::DomainError;
use crate::domain::kit::tau2;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Address {
    pub street: String,
    pub city: String,
    pub country: String,
    pub state: String,
    pub zip: String,
}

impl Address {
    /// "12 Harbor Rd, Halden, ON 40211, Canada".
    pub fn text(&self) -> String {
        format!(
            "{}, {}, {} {}, {}",
            self.street, self.city, self.state, self.zip, self.country
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerName {
    pub first_name: String,
    pub last_name: String,
}

/// A jersey number: an int, or a string such as "00" (pydantic's `Union[int, str]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Jersey {
    Number(i64),
    Text(String),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlayerProfile {
    pub position: String,
    pub number: Jersey,
    pub height_cm: f64,
    pub weight_kg: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClubArena {
    pub name: String,
    pub address: Address,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RosterEntry {
    pub player_id: String,
    pub profile: PlayerProfile,
    pub active: bool,
    pub salary: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Club {
    pub name: String,
    pub club_id: String,
    pub league: String,
    pub city: String,
    pub arena: ClubArena,
    pub roster: BTreeMap<String, RosterEntry>,
    pub games: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContractExtra {
    pub salary: f64,
    pub years: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Contract {
    /// draft, trade or free agency.
    pub source: String,
    pub contract_id: String,
    pub club_id: String,
    pub start_date: String,
    pub end_date: String,
    pub extra_info: ContractExtra,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Player {
    pub player_id: String,
    pub name: PlayerName,
    pub address: Address,
    pub email: String,
    pub contracts: BTreeMap<String, Contract>,
    pub games: Vec<String>,
}

impl Player {
    pub fn full_name(&self) -> String {
        format!("{} {}", self.name.first_name, self.name.last_name)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameSide {
    pub name: String,
    pub club_id: String,
    pub score: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameClubs {
    pub home: GameSide,
    pub away: GameSide,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoxScoreOptions {
    pub rebounds: i64,
    pub assists: i64,
    pub minutes: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoxScoreEntry {
    pub name: String,
    pub club_id: String,
    pub player_id: String,
    pub points: i64,
    pub options: BoxScoreOptions,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GamePeriod {
    pub period_number: i64,
    pub event_ids: Vec<String>,
    pub player_ids: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScoringEvent {
    /// 1PT, 2PT, 3PT or FT.
    pub event_type: String,
    pub points: i64,
    pub club_id: String,
    pub player_id: String,
    pub timestamp: String,
}

/// The game statuses of the reference's `GameStatus`.
pub const STATUSES: [&str; 4] = ["scheduled", "in_progress", "final", "postponed"];
/// The scoring event types of the reference's `ScoringEventType`.
pub const EVENT_TYPES: [&str; 4] = ["1PT", "2PT", "3PT", "FT"];

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Game {
    pub game_id: String,
    pub season: String,
    pub date: String,
    pub status: String,
    pub venue: Address,
    pub clubs: GameClubs,
    pub box_score: Vec<BoxScoreEntry>,
    pub periods: Vec<GamePeriod>,
    pub scoring_history: Vec<ScoringEvent>,
}

impl Game {
    pub fn involves(&self, club_id: &str) -> bool {
        self.clubs.home.club_id == club_id || self.clubs.away.club_id == club_id
    }
}

crate::domain::kit::glue::database_struct! {
    /// The whole basketball state. Clubs and players list in the order the reference walks
    /// them (`Table::in_order`: its `db.json` order; id order for a generated database).
    BasketballDb { clubs: Club, players: Player, games: Game }
}

impl BasketballDb {
    /// The club whose roster lists the player (the first in file order).
    pub fn club_of(&self, player_id: &str) -> Option<&Club> {
        self.clubs
            .in_order()
            .find(|c| c.roster.contains_key(player_id))
    }

    /// Read the reference's tables (`db.json` top-level keys). References are not checked:
    /// the reference's own file lists games whose clubs are not in the clubs table, and its
    /// tools answer "not found" for those, as ours do.
    pub fn import(tables: &BTreeMap<String, Value>, origin: &Path) -> Result<Self, DomainError> {
        let clubs: BTreeMap<String, Club> = tau2::parse_table(tables, "clubs", origin)?;
        let players: BTreeMap<String, Player> = tau2::parse_table(tables, "players", origin)?;
        let games: BTreeMap<String, Game> = tau2::parse_table(tables, "games", origin)?;
        if let Some((id, g)) = games.iter().find(|(_, g)| {
            !STATUSES.contains(&g.status.as_str())
                || g.scoring_history
                    .iter()
                    .any(|e| !EVENT_TYPES.contains(&e.event_type.as_str()))
        }) {
            return Err(DomainError::Import {
                path: origin.display().to_string(),
                message: format!(
                    "games['{id}']: status '{}' or an event type is not one of the model's values",
                    g.status
                ),
            });
        }
        let order = tau2::document_order(origin);
        let mut db = BasketballDb::new(clubs, players, games);
        tau2::keep_document_order(&mut db.clubs, &order);
        tau2::keep_document_order(&mut db.players, &order);
        Ok(db)
    }
}
