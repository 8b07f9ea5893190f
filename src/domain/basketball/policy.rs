//! The machine-checkable rules of `policies/basketball.md`, as named kit rows per write
//! tool. Grounding drops proposals that break one; graph and task verification reject
//! calls that do; the rule name groups rejections in `tracer stats`.
//!
//! The tools already refuse unknown ids, transitions outside the table, scoring in a game
//! that is not in progress, points that do not fit the event type and a club that is not
//! playing. These rules add what the policy asks and the tools do not check: a new address
//! is complete and really differs from the current one; a status change changes the status;
//! a score is credited to a player on the credited club's roster, at a game clock of the
//! form `Q<1-4> MM:SS` (or `OT<n> MM:SS`) within the period, not before the last recorded
//! score.
//!
//! Architecture invariant: reads the state only.

use super::db::{BasketballDb, Game};
use crate::domain::kit::policy::{Rule, address_complete, refuse_if, rule, same_address};
use crate::domain::kit::text::arg_str;
use serde_json::Value;

const ADDRESS: &str = "modify_player_address";
const STATUS: &str = "update_game_status";
const SCORE: &str = "record_scoring_event";

/// The address fields of an address change, in the tool's argument order.
pub const ADDRESS_FIELDS: [&str; 5] = ["street", "city", "state", "country", "zip"];

/// Checked in order; the first broken rule is reported.
pub static RULES: [Rule<BasketballDb>; 6] = [
    rule(ADDRESS, "address_complete", |_, a| {
        address_complete(a, &ADDRESS_FIELDS, &[])
    }),
    rule(ADDRESS, "address_changes", |db, a| {
        let Some(p) = db.players.get(arg_str(a, "player_id")) else {
            return Ok(());
        };
        let now = &p.address;
        let now = [&now.street, &now.city, &now.state, &now.country, &now.zip];
        refuse_if(same_address(a, &ADDRESS_FIELDS, &now), || {
            "the player already lives at that address".into()
        })
    }),
    rule(STATUS, "status_changes", |db, a| match game(db, a) {
        Some(g) if g.status == arg_str(a, "new_status") => {
            Err(format!("the game is already {}", g.status))
        }
        _ => Ok(()),
    }),
    rule(SCORE, "scorer_on_club_roster", |db, a| {
        let (club, player) = (arg_str(a, "club_id"), arg_str(a, "player_id"));
        match db.clubs.get(club) {
            Some(c) if !c.roster.contains_key(player) => Err(format!(
                "player {player} is not on the roster of the credited club"
            )),
            _ => Ok(()),
        }
    }),
    rule(SCORE, "game_clock_format", |_, a| {
        let t = arg_str(a, "timestamp");
        if clock_key(t).is_some() {
            Ok(())
        } else {
            Err(format!(
                "a game clock reads like 'Q3 04:12' (period, minutes:seconds left), not '{t}'"
            ))
        }
    }),
    rule(SCORE, "not_before_last_score", |db, a| {
        let (Some(g), Some(new)) = (game(db, a), clock_key(arg_str(a, "timestamp"))) else {
            return Ok(());
        };
        match g
            .scoring_history
            .iter()
            .filter_map(|e| clock_key(&e.timestamp))
            .max()
        {
            Some(last) if new < last => Err(format!(
                "the game's scoring history already runs past {}",
                arg_str(a, "timestamp")
            )),
            _ => Ok(()),
        }
    }),
];

fn game<'a>(db: &'a BasketballDb, a: &Value) -> Option<&'a Game> {
    db.games.get(arg_str(a, "game_id"))
}

/// A game clock `Q<1-4> MM:SS` or `OT<n> MM:SS` (time left in the period, at most 12:00
/// in a quarter and 5:00 in overtime) as a chronological key: (period, seconds elapsed).
pub fn clock_key(t: &str) -> Option<(i64, i64)> {
    let (period, clock) = t.split_once(' ')?;
    let (number, length) = if let Some(q) = period.strip_prefix('Q') {
        let n: i64 = q.parse().ok().filter(|n| (1..=4).contains(n))?;
        (n, 720)
    } else {
        let n: i64 = period
            .strip_prefix("OT")?
            .parse()
            .ok()
            .filter(|n| *n >= 1)?;
        (4 + n, 300)
    };
    let (m, s) = clock.split_once(':')?;
    if m.len() != 2 || s.len() != 2 {
        return None;
    }
    let (m, s): (i64, i64) = (m.parse().ok()?, s.parse().ok()?);
    let left = m * 60 + s;
    (s < 60 && left <= length).then_some((number, length - left))
}
