//! The deterministic synthetic basketball databases, drawn from a ChaCha8 stream seeded by
//! the caller and the split: the evaluation database at the reference's scale (300
//! players, 240 clubs, 300 games) and the training database at the paper's (1,000 players,
//! 240 clubs, 1,468 games).
//!
//! Distributions follow the reference's `db.json` where they do not block a task: 100 of
//! the 240 clubs field a roster of three in evaluation (122 field one to three there), 200
//! a roster of five in training, the rest none; one contract for most players (draft > trade > free agency), a few with
//! none or several; the reference's position mix; a few jersey numbers as strings ("00");
//! scoring events mostly 2PT, then 3PT and FT, rarely 1PT, stamped `Q<n> MM:SS`. Where the
//! reference's data makes a write tool rare, ours departs on purpose: more games are still
//! open (about 55% final, 18% in progress, 21% scheduled, 6% postponed, against 88% final
//! there), so status changes and scoring events have games to apply to; a few roster
//! entries are inactive. The training database adds a previous season (2023-24) so season
//! filters select something.
//!
//! Unlike the reference's data, every game is between two clubs of the table that field a
//! roster, a club plays at most once a day, scores are the sums of the scoring history,
//! box-score points the sums of each player's events, players list their club's games and
//! emails are unique. Names and places are our own (`vocabulary.toml`).
//!
//! Architecture invariant: generation is pure — same seed and split, same database; no
//! clock, no I/O.

use super::db::{
    Address, BasketballDb, BoxScoreEntry, BoxScoreOptions, Club, ClubArena, Contract,
    ContractExtra, Game, GameClubs, GamePeriod, GameSide, Jersey, Player, PlayerName,
    PlayerProfile, RosterEntry, ScoringEvent,
};
use crate::domain::Split;
use crate::domain::kit::clock::{days_from_civil, format_date};
use crate::domain::kit::draw::{
    Scales, UPPER_ALPHANUMERIC, digits_in, fresh_code, pick, unique_email, weighted,
};
use crate::seed::derive_rng;
use rand::RngExt;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

/// Sizes of one database.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
pub struct Scale {
    pub players: usize,
    pub clubs: usize,
    pub games: usize,
    /// Players per rostered club.
    pub roster: usize,
    /// Whether some final games belong to the previous season.
    pub past_season: bool,
}

/// The sizes per split (`[scale.eval]`, `[scale.train]` in `vocabulary.toml`).
pub static SCALES: LazyLock<Scales<Scale>> =
    LazyLock::new(|| Scales::read(include_str!("vocabulary.toml")));

#[derive(Debug, Default, Deserialize)]
struct Vocabulary {
    leagues: Vec<(String, u32)>,
    places: Vec<(String, String, String, String)>,
    nicknames: Vec<String>,
    arena_sponsors: Vec<String>,
    arena_kinds: Vec<String>,
    first_names: Vec<String>,
    last_names: Vec<String>,
    email_domains: Vec<String>,
    streets: Vec<String>,
    positions: Vec<(String, u32)>,
}

/// The built-in vocabulary; a broken file generates an empty database, which the generator
/// tests catch, so this never panics at run time.
static VOCABULARY: LazyLock<Vocabulary> =
    LazyLock::new(|| toml::from_str(include_str!("vocabulary.toml")).unwrap_or_default());

/// A fresh 7-character upper-case id (the reference's shape) not yet in `used`.
fn fresh_id(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>) -> String {
    fresh_code(rng, used, UPPER_ALPHANUMERIC, 7)
}

/// A street address in a vocabulary city (or the given one).
pub fn random_address(rng: &mut ChaCha8Rng, place: Option<usize>) -> Address {
    let v = &*VOCABULARY;
    if v.places.is_empty() || v.streets.is_empty() {
        return Address {
            street: "1 Main Street".into(),
            city: "Springfield".into(),
            country: "USA".into(),
            state: "OR".into(),
            zip: "97477".into(),
        };
    }
    let (city, state, country, zip) = match place {
        Some(i) => &v.places[i % v.places.len()],
        None => pick(rng, &v.places),
    };
    Address {
        street: format!("{} {}", rng.random_range(1..400), pick(rng, &v.streets)),
        city: city.clone(),
        country: country.clone(),
        state: state.clone(),
        zip: digits_in(rng, zip),
    }
}

struct Roster {
    club: usize,
    players: Vec<usize>,
}

/// The database of one split, at its size in [`SCALES`].
pub fn generate(seed: u64, split: Split) -> BasketballDb {
    let scale = SCALES.of(split);
    let mut rng = derive_rng(seed, &["basketball", "db", split.as_str()]);
    let v = &*VOCABULARY;
    let empty = || BasketballDb::new(BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    if v.places.is_empty() || v.nicknames.is_empty() || v.first_names.is_empty() {
        return empty();
    }
    let mut used = BTreeSet::new();
    let mut clubs = generate_clubs(&mut rng, &mut used, scale.clubs);
    // Rostered clubs: enough for every player at `scale.roster` each.
    let rostered = scale.players.div_ceil(scale.roster.max(1)).min(clubs.len());
    let mut order: Vec<usize> = (0..clubs.len()).collect();
    order.shuffle(&mut rng);
    let mut rosters: Vec<Roster> = order[..rostered]
        .iter()
        .map(|&club| Roster {
            club,
            players: Vec::new(),
        })
        .collect();
    let mut players: Vec<Player> = Vec::with_capacity(scale.players);
    let mut emails = BTreeSet::new();
    for k in 0..scale.players {
        let r = k % rosters.len().max(1);
        let club = &clubs[rosters[r].club];
        let place = v.places.iter().position(|p| p.0 == club.city);
        let p = generate_player(&mut rng, &mut used, &mut emails, club, place);
        rosters[r].players.push(players.len());
        players.push(p);
    }
    for r in &rosters {
        for &i in &r.players {
            let entry = roster_entry(&mut rng, &players[i]);
            clubs[r.club]
                .roster
                .insert(players[i].player_id.clone(), entry);
        }
    }
    let games = generate_games(&mut rng, &mut used, &clubs, &rosters, &players, scale);
    for g in &games {
        for side in [&g.clubs.home, &g.clubs.away] {
            if let Some(c) = clubs.iter_mut().find(|c| c.club_id == side.club_id) {
                c.games.push(g.game_id.clone());
            }
        }
    }
    for r in &rosters {
        let ids = clubs[r.club].games.clone();
        for &i in &r.players {
            players[i].games = ids.clone();
        }
    }
    let games = games.into_iter().map(|g| (g.game_id.clone(), g)).collect();
    let clubs = clubs.into_iter().map(|c| (c.club_id.clone(), c)).collect();
    let players = players
        .into_iter()
        .map(|p| (p.player_id.clone(), p))
        .collect();
    BasketballDb::new(clubs, players, games)
}

fn generate_clubs(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>, count: usize) -> Vec<Club> {
    let v = &*VOCABULARY;
    let mut names: Vec<(usize, usize)> = (0..v.places.len())
        .flat_map(|p| (0..v.nicknames.len()).map(move |n| (p, n)))
        .collect();
    names.shuffle(rng);
    let mut out = Vec::with_capacity(count);
    for (place, nick) in names.into_iter().take(count) {
        let (city, _, _, _) = &v.places[place];
        let mut address = random_address(rng, Some(place));
        address.street = format!("{} {}", rng.random_range(1..60) * 10, pick(rng, &v.streets));
        let league = if v.leagues.is_empty() {
            "Continental Basketball Association".to_string()
        } else {
            weighted(rng, &v.leagues).clone()
        };
        let arena = if v.arena_sponsors.is_empty() || v.arena_kinds.is_empty() {
            format!("{city} Arena")
        } else {
            format!(
                "{} {}",
                pick(rng, &v.arena_sponsors),
                pick(rng, &v.arena_kinds)
            )
        };
        out.push(Club {
            name: format!("{city} {}", v.nicknames[nick]),
            club_id: fresh_id(rng, used),
            league,
            city: city.clone(),
            arena: ClubArena {
                name: arena,
                address,
            },
            roster: BTreeMap::new(),
            games: Vec::new(),
        });
    }
    out
}

fn generate_player(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    emails: &mut BTreeSet<String>,
    club: &Club,
    place: Option<usize>,
) -> Player {
    let v = &*VOCABULARY;
    let first = pick(rng, &v.first_names).clone();
    let last = pick(rng, &v.last_names).clone();
    let domain = if v.email_domains.is_empty() {
        "example.com".to_string()
    } else {
        pick(rng, &v.email_domains).clone()
    };
    let base = format!("{}.{}", first.to_lowercase(), last.to_lowercase()).replace(' ', "");
    let email = unique_email(emails, &base, &domain);
    // Most players live in their club's city; some elsewhere.
    let home = if rng.random_range(0..10) < 7 {
        place
    } else {
        None
    };
    let address = random_address(rng, home);
    let player_id = fresh_id(rng, used);
    let count = weighted(rng, &[(1usize, 90), (0, 3), (2, 4), (3, 3)]);
    let mut contracts = BTreeMap::new();
    for k in 0..count {
        let id = fresh_id(rng, used);
        let source = weighted(rng, &[("draft", 153), ("trade", 91), ("free agency", 71)]);
        let start = 2024 - k as i64 * 3 - rng.random_range(0..3i64);
        // The current contract (the first) runs at least into the 2025-26 season.
        let years = rng.random_range(1..=4i64) + if k == 0 { 2024 - start } else { 0 };
        let salary = f64::from(rng.random_range(10..700u32)) * 50_000.0;
        contracts.insert(
            id.clone(),
            Contract {
                source: source.to_string(),
                contract_id: id,
                club_id: club.club_id.clone(),
                start_date: format!("{start}-07-01"),
                end_date: format!("{}-06-30", start + years),
                extra_info: ContractExtra { salary, years },
            },
        );
    }
    Player {
        player_id,
        name: PlayerName {
            first_name: first,
            last_name: last,
        },
        address,
        email,
        contracts,
        games: Vec::new(),
    }
}

fn roster_entry(rng: &mut ChaCha8Rng, p: &Player) -> RosterEntry {
    let v = &*VOCABULARY;
    let position = if v.positions.is_empty() {
        "G".to_string()
    } else {
        weighted(rng, &v.positions).clone()
    };
    let (height, weight) = match position.chars().next() {
        Some('C') => (208.0, 112.0),
        Some('F') => (203.0, 102.0),
        _ => (191.0, 90.0),
    };
    let number = if rng.random_range(0..100) < 3 {
        Jersey::Text("00".into())
    } else {
        Jersey::Number(rng.random_range(0..100))
    };
    let salary = p
        .contracts
        .values()
        .map(|c| c.extra_info.salary)
        .next()
        .unwrap_or(f64::from(rng.random_range(10..100u32)) * 50_000.0);
    RosterEntry {
        player_id: p.player_id.clone(),
        profile: PlayerProfile {
            position,
            number,
            height_cm: (height * 10.0 + f64::from(rng.random_range(-80..80i32))) / 10.0,
            weight_kg: (weight * 10.0 + f64::from(rng.random_range(-100..100i32))) / 10.0,
        },
        active: rng.random_range(0..100) >= 8,
        salary,
    }
}

/// Status of a game by its place in the season's date order.
fn status_for(rank: f64, rng: &mut ChaCha8Rng) -> &'static str {
    if rank < 0.55 {
        "final"
    } else if rank < 0.73 {
        "in_progress"
    } else if rng.random_range(0..100) < 22 {
        "postponed"
    } else {
        "scheduled"
    }
}

fn generate_games(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    clubs: &[Club],
    rosters: &[Roster],
    players: &[Player],
    scale: Scale,
) -> Vec<Game> {
    if rosters.len() < 2 {
        return Vec::new();
    }
    let season_start = days_from_civil(2024, 10, 22);
    let season_days = 170;
    let mut busy: BTreeSet<(usize, i64)> = BTreeSet::new();
    let mut drafts: Vec<(i64, usize, usize)> = Vec::with_capacity(scale.games);
    while drafts.len() < scale.games {
        let h = rng.random_range(0..rosters.len());
        let a = rng.random_range(0..rosters.len());
        let day = season_start + rng.random_range(0..season_days);
        if h == a || busy.contains(&(h, day)) || busy.contains(&(a, day)) {
            continue;
        }
        busy.insert((h, day));
        busy.insert((a, day));
        drafts.push((day, h, a));
    }
    drafts.sort();
    let n = drafts.len() as f64;
    let mut out = Vec::with_capacity(drafts.len());
    for (k, (day, h, a)) in drafts.into_iter().enumerate() {
        let status = status_for(k as f64 / n, rng);
        // In training, about a third of the final games are the previous season's.
        let (season, day) = if scale.past_season && status == "final" && rng.random_range(0..3) == 0
        {
            ("2023-24", day - 364)
        } else {
            ("2024-25", day)
        };
        let (home, away) = (&clubs[rosters[h].club], &clubs[rosters[a].club]);
        let game_id = fresh_id(rng, used);
        let mut g = Game {
            game_id,
            season: season.into(),
            date: format_date(day),
            status: status.into(),
            venue: home.arena.address.clone(),
            clubs: GameClubs {
                home: side(home),
                away: side(away),
            },
            box_score: Vec::new(),
            periods: Vec::new(),
            scoring_history: Vec::new(),
        };
        let quarters = match status {
            "final" => 4,
            "in_progress" => rng.random_range(1..=3),
            _ => 0,
        };
        if quarters > 0 {
            let lineup = |r: &Roster| -> Vec<&Player> {
                r.players
                    .iter()
                    .map(|&i| &players[i])
                    .filter(|p| {
                        clubs[r.club]
                            .roster
                            .get(&p.player_id)
                            .is_some_and(|e| e.active)
                    })
                    .collect()
            };
            let sides = [
                (home.club_id.as_str(), lineup(&rosters[h])),
                (away.club_id.as_str(), lineup(&rosters[a])),
            ];
            play(rng, &mut g, &sides, quarters);
        }
        out.push(g);
    }
    out
}

fn side(c: &Club) -> GameSide {
    GameSide {
        name: c.name.clone(),
        club_id: c.club_id.clone(),
        score: 0,
    }
}

/// `Q<n> MM:SS`, and its order key (quarter ascending, clock counting down).
fn stamp(quarter: i64, seconds: i64) -> String {
    format!("Q{quarter} {:02}:{:02}", seconds / 60, seconds % 60)
}

/// Fill the box score, periods and scoring history of a game that has started.
fn play(rng: &mut ChaCha8Rng, g: &mut Game, sides: &[(&str, Vec<&Player>); 2], quarters: i64) {
    let mut events: Vec<(i64, i64, ScoringEvent)> = Vec::new();
    for (club_id, lineup) in sides {
        for p in lineup {
            let count = rng.random_range(1..=quarters + 1);
            for _ in 0..count {
                let kind = weighted(
                    rng,
                    &[("2PT", 1030), ("3PT", 678), ("FT", 472), ("1PT", 17)],
                );
                let points = super::tools::event_points(kind).unwrap_or(2);
                let q = rng.random_range(1..=quarters);
                let s = rng.random_range(1..720);
                events.push((
                    q,
                    -s,
                    ScoringEvent {
                        event_type: kind.into(),
                        points,
                        club_id: club_id.to_string(),
                        player_id: p.player_id.clone(),
                        timestamp: stamp(q, s),
                    },
                ));
            }
        }
    }
    events.sort_by_key(|a| (a.0, a.1));
    let score = |events: &[(i64, i64, ScoringEvent)], club: &str| -> i64 {
        events
            .iter()
            .filter(|e| e.2.club_id == club)
            .map(|e| e.2.points)
            .sum()
    };
    // A final game has a winner: a late free throw settles a tie.
    if g.status == "final"
        && score(&events, sides[0].0) == score(&events, sides[1].0)
        && let Some(p) = sides[0].1.first()
    {
        events.push((
            4,
            -1,
            ScoringEvent {
                event_type: "FT".into(),
                points: 1,
                club_id: sides[0].0.to_string(),
                player_id: p.player_id.clone(),
                timestamp: stamp(4, 1),
            },
        ));
    }
    g.clubs.home.score = score(&events, sides[0].0);
    g.clubs.away.score = score(&events, sides[1].0);
    for (club_id, lineup) in sides {
        for p in lineup {
            let points = events
                .iter()
                .filter(|e| e.2.player_id == p.player_id)
                .map(|e| e.2.points)
                .sum();
            let minutes = rng.random_range(8..38);
            g.box_score.push(BoxScoreEntry {
                name: p.full_name(),
                club_id: club_id.to_string(),
                player_id: p.player_id.clone(),
                points,
                options: BoxScoreOptions {
                    rebounds: rng.random_range(0..13),
                    assists: rng.random_range(0..10),
                    minutes: format!("{minutes}:{:02}", rng.random_range(0..60)),
                },
            });
        }
    }
    for q in 1..=quarters {
        let mut event_ids = Vec::new();
        let mut player_ids: Vec<String> = Vec::new();
        for (k, e) in events.iter().enumerate() {
            if e.0 == q {
                event_ids.push(format!("{}-E{}", g.game_id, k + 1));
                if !player_ids.contains(&e.2.player_id) {
                    player_ids.push(e.2.player_id.clone());
                }
            }
        }
        g.periods.push(GamePeriod {
            period_number: q,
            event_ids,
            player_ids,
        });
    }
    g.scoring_history = events.into_iter().map(|e| e.2).collect();
}
