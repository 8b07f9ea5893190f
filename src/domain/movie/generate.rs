//! The deterministic synthetic movie databases, drawn from a ChaCha8 stream seeded by the
//! caller and the split: the evaluation database at the reference's scale (51 movies, 51
//! theaters with one auditorium each and about 90 shows, 51 bookings) and the training
//! database at the paper's (51 movies, 51 theaters, 1,001 bookings by 752 customers, on
//! bigger auditoriums and more shows so the seats hold).
//!
//! Distributions follow the reference's `db.json`: mostly two-seat bookings (some one or
//! three), adult tickets ahead of senior and child ones, one or two concession lines,
//! one payment by card or wallet (a few cash or gift card), e-tickets ahead of kiosk and
//! box-office pickup, a few pending bookings (nothing paid yet) and a few canceled or
//! refunded ones; tax rates by country (5.5% to 23%); show prices from the theater's base
//! prices plus the format surcharge. Unlike the reference's data, every show lies after the
//! simulation clock (24-05-15) and no booking carries a promotion (the policy offers none;
//! a seat change recomputes totals without them). The training database also holds a few
//! canceled and completed shows, so the policy's rules about them can bite. Names,
//! titles and places are ours (`vocabulary.toml`).
//!
//! Every booking's totals are the price oracle's ([`super::tools::quote`]) and its payment
//! is their exact grand total; confirmed bookings never share a seat of a show; emails are
//! unique per customer.
//!
//! Architecture invariant: generation is pure: same seed and split, same database; no
//! clock, no I/O.

use super::db::{
    Auditorium, BookedSeat, Booking, BookingPayment, CONFIRMED, CastMember, Crew, Customer,
    DaySchedule, Delivery, MethodInfo, Movie, MovieDb, Name, PaymentMethod, PostalAddress,
    PriceFees, PriceSchema, PricingBase, PricingRules, SCHEDULED, Seat, SeatMap, Show, Theater,
    TheaterContact, TheaterFees, TicketDelivery, TimeBasedPricing,
};
use super::tools::{ConcessionSpec, SeatSpec, quote, refund};
use crate::domain::Split;
use crate::domain::kit::draw::{
    self, Scales, UPPER_ALPHANUMERIC, digits, pick, unique_email, weighted,
};
use crate::domain::kit::python::PyDict;
use crate::domain::kit::tau2::{day_of, short_date};
use crate::seed::derive_rng;
use rand::RngExt;
use rand::seq::{IndexedRandom, SliceRandom};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

/// Sizes of one database.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
pub struct Scale {
    pub movies: usize,
    pub theaters: usize,
    pub bookings: usize,
    pub customers: usize,
    /// Seat rows and seats per row of an auditorium (inclusive ranges).
    pub rows: (usize, usize),
    pub per_row: (usize, usize),
    /// Auditoriums per theater, schedule dates per theater, shows per date.
    pub auditoriums: (usize, usize),
    pub dates: (usize, usize),
    pub shows_per_date: (usize, usize),
}

/// The sizes per split (`[scale.eval]`, `[scale.train]` in `vocabulary.toml`).
pub static SCALES: LazyLock<Scales<Scale>> =
    LazyLock::new(|| Scales::read(include_str!("vocabulary.toml")));

#[derive(Debug, Default, Deserialize)]
struct Vocabulary {
    title_first: Vec<String>,
    title_second: Vec<String>,
    genres: Vec<String>,
    ratings: Vec<String>,
    languages: Vec<String>,
    synopses: Vec<String>,
    roles: Vec<String>,
    given_names: Vec<String>,
    family_names: Vec<String>,
    email_domains: Vec<String>,
    places: Vec<(String, String, String, f64, String, String)>,
    streets: Vec<String>,
    theater_first: Vec<String>,
    theater_second: Vec<String>,
    amenities: Vec<String>,
    features: Vec<String>,
    concessions: Vec<(String, String, f64)>,
    special_requests: Vec<String>,
    card_brands: Vec<String>,
    wallet_brands: Vec<String>,
    extra_formats: Vec<(String, f64)>,
    format_surcharges: Vec<(String, f64)>,
    convenience_fees: Vec<f64>,
    booking_fees: Vec<f64>,
    show_starts: Vec<i64>,
    show_statuses: Vec<(String, u32)>,
    payment_sources: Vec<(String, u32)>,
    seats_per_booking: Vec<(usize, u32)>,
    ticket_types: Vec<(String, u32)>,
    concession_lines: Vec<(usize, u32)>,
    concession_quantities: Vec<(i64, u32)>,
    booking_statuses: Vec<(String, u32)>,
    delivery_methods: Vec<(String, u32)>,
}

static VOCABULARY: LazyLock<Vocabulary> =
    LazyLock::new(|| toml::from_str(include_str!("vocabulary.toml")).unwrap_or_default());

fn span(rng: &mut ChaCha8Rng, (lo, hi): (usize, usize)) -> usize {
    rng.random_range(lo..=hi)
}

/// A fresh random 7-character code (unique across the database) with `suffix`.
fn code(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>, suffix: &str) -> String {
    loop {
        let id = format!("{}{suffix}", draw::code(rng, UPPER_ALPHANUMERIC, 7));
        if used.insert(id.clone()) {
            return id;
        }
    }
}

fn person(rng: &mut ChaCha8Rng) -> String {
    let v = &*VOCABULARY;
    format!(
        "{} {}",
        pick(rng, &v.given_names),
        pick(rng, &v.family_names)
    )
}

/// `YY-MM-DD-HH-MM` of a day number and minutes after midnight (rolling over midnight).
fn stamp(day: i64, minutes: i64) -> String {
    let day = day + minutes.div_euclid(24 * 60);
    let m = minutes.rem_euclid(24 * 60);
    format!("{}-{:02}-{:02}", short_date(day), m / 60, m % 60)
}

fn generate_movies(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>, n: usize) -> Vec<Movie> {
    let v = &*VOCABULARY;
    let mut titles: Vec<String> = v
        .title_first
        .iter()
        .flat_map(|a| v.title_second.iter().map(move |b| format!("{a} {b}")))
        .collect();
    titles.shuffle(rng);
    let release = day_of(2024, 3, 1);
    (0..n.min(titles.len()))
        .map(|i| {
            let mut genres = vec![pick(rng, &v.genres).clone()];
            let second = pick(rng, &v.genres).clone();
            if rng.random_bool(0.6) && !genres.contains(&second) {
                genres.push(second);
            }
            let language = pick(rng, &v.languages).clone();
            let mut subtitles = vec!["English".to_string()];
            if language != "English" {
                subtitles.push(language.clone());
            } else if rng.random_bool(0.5) {
                subtitles.push("Spanish".into());
            }
            let mut formats = vec!["2D".to_string()];
            for (f, p) in &v.extra_formats {
                if rng.random_bool(*p) {
                    formats.push(f.clone());
                }
            }
            let roles: Vec<&String> = v.roles.sample(rng, 3).collect();
            let cast = roles
                .iter()
                .map(|r| CastMember {
                    name: person(rng),
                    role: (*r).clone(),
                })
                .collect();
            let start = release + rng.random_range(0..70);
            let synopsis = pick(rng, &v.synopses)
                .replace("{lead}", roles[0])
                .replace("{place}", &pick(rng, &v.places).0);
            Movie {
                movie_id: code(rng, used, "-M"),
                title: titles[i].clone(),
                genres,
                runtime_minutes: rng.random_range(85..=170),
                mpaa_rating: pick(rng, &v.ratings).clone(),
                languages_audio: vec![language],
                subtitles,
                formats,
                release_date: short_date(start),
                end_of_run_est: short_date(start + rng.random_range(110..160)),
                cast,
                crew: Crew {
                    director: person(rng),
                    writer: person(rng),
                    producer: person(rng),
                    music: person(rng),
                },
                synopsis,
            }
        })
        .collect()
}

fn auditorium(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    k: usize,
    s: &Scale,
) -> Auditorium {
    let v = &*VOCABULARY;
    let rows = span(rng, s.rows);
    let per_row = span(rng, s.per_row);
    let recliners = rng.random_bool(0.3);
    let mut map = PyDict::new();
    for r in 1..=rows {
        let seats = (1..=per_row)
            .map(|n| Seat {
                seat_id: format!("R{r}-{n:02}"),
                kind: if recliners && r == rows {
                    "recliner".into()
                } else {
                    "standard".into()
                },
                // Accessible places at the ends of the first and last rows.
                wheelchair_accessible: (r == 1 || r == rows) && (n == 1 || n == per_row),
            })
            .collect();
        map.insert(format!("R{r}"), seats);
    }
    let features = v.features.sample(rng, 2).cloned().collect();
    Auditorium {
        auditorium_id: code(rng, used, &format!("-A{k}")),
        name: format!("Screen {k}"),
        capacity: (rows * per_row) as i64,
        features,
        seat_map: SeatMap { rows: map },
    }
}

fn generate_theaters(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    movies: &[Movie],
    s: &Scale,
    odd_shows: bool,
) -> Vec<Theater> {
    let v = &*VOCABULARY;
    let mut names = BTreeSet::new();
    let first_day = day_of(2024, 6, 1);
    (0..s.theaters)
        .map(|_| {
            let place = pick(rng, &v.places).clone();
            let name = loop {
                let n = format!(
                    "{} {} {}",
                    pick(rng, &v.theater_first),
                    place.0,
                    pick(rng, &v.theater_second)
                );
                if names.insert(n.clone()) || names.len() > 5_000 {
                    break n;
                }
            };
            let adult = f64::from(rng.random_range(16..=32u32)) / 2.0;
            let base = PricingBase {
                adult,
                child: adult - f64::from(rng.random_range(4..=6u32)) / 2.0,
                senior: adult - f64::from(rng.random_range(2..=4u32)) / 2.0,
            };
            let surcharges: PyDict<f64> = v.format_surcharges.iter().cloned().collect();
            let fees = TheaterFees {
                convenience_fee: *pick(rng, &v.convenience_fees),
                booking_fee: *pick(rng, &v.booking_fees),
            };
            let mut auditoriums = PyDict::new();
            for k in 1..=span(rng, s.auditoriums) {
                let a = auditorium(rng, used, k, s);
                auditoriums.insert(a.auditorium_id.clone(), a);
            }
            let aud_ids: Vec<String> = auditoriums.keys().map(str::to_string).collect();
            let mut days: Vec<i64> = (0..span(rng, s.dates))
                .map(|_| first_day + rng.random_range(0..60))
                .collect();
            days.sort();
            days.dedup();
            let mut dates = PyDict::new();
            for day in days {
                let n = span(rng, s.shows_per_date);
                let mut starts: Vec<i64> = v.show_starts.sample(rng, n).copied().collect();
                starts.sort();
                let shows = starts
                    .into_iter()
                    .map(|start| {
                        let m = pick(rng, movies);
                        let format = pick(rng, &m.formats).clone();
                        let extra = surcharges.get(&format).copied().unwrap_or(0.0);
                        let peak = if start >= 19 * 60 { 1.5 } else { 0.0 };
                        let end = start + m.runtime_minutes + 15;
                        let status = if odd_shows {
                            weighted(rng, &v.show_statuses)
                        } else {
                            SCHEDULED.to_string()
                        };
                        Show {
                            show_id: code(rng, used, "-S"),
                            movie_id: m.movie_id.clone(),
                            auditorium_id: pick(rng, &aud_ids).clone(),
                            start_time_local: stamp(day, start),
                            end_time_local: stamp(day, end - end % 5),
                            format,
                            language: m.languages_audio[0].clone(),
                            subtitles: m.subtitles[0].clone(),
                            status,
                            price_schema: PriceSchema {
                                adult: base.adult + extra + peak,
                                child: base.child + extra + peak,
                                senior: base.senior + extra + peak,
                                fees: PriceFees {
                                    convenience_fee: fees.convenience_fee,
                                },
                            },
                        }
                    })
                    .collect();
                dates.insert(short_date(day), DaySchedule { shows });
            }
            let slug: String = name
                .to_lowercase()
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .collect();
            Theater {
                theater_id: code(rng, used, "-T"),
                name,
                address: PostalAddress {
                    street: format!("{} {}", rng.random_range(1..300), pick(rng, &v.streets)),
                    city: place.0.clone(),
                    state: place.1.clone(),
                    country: place.2.clone(),
                    zip: place.5.clone(),
                },
                contact: TheaterContact {
                    phone: format!("{} {} {}", place.4, digits(rng, 3), digits(rng, 4)),
                    email: format!("info@{slug}.example"),
                    website: format!("https://www.{slug}.example"),
                },
                amenities: v.amenities.sample(rng, 3).cloned().collect(),
                auditoriums,
                pricing_rules: PricingRules {
                    base,
                    format_surcharges: surcharges,
                    time_based: TimeBasedPricing {
                        matinee_discount: 2.0,
                        peak_surcharge: 1.5,
                    },
                    fees,
                    tax_rate_percent: place.3,
                },
                dates,
            }
        })
        .collect()
}

fn generate_customers(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    n: usize,
) -> Vec<Customer> {
    let v = &*VOCABULARY;
    let mut emails = BTreeSet::new();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let first = pick(rng, &v.given_names).clone();
        let last = pick(rng, &v.family_names).clone();
        let base = format!("{}.{}", first.to_lowercase(), last.to_lowercase());
        let domain = pick(rng, &v.email_domains);
        let email = unique_email(&mut emails, &base, domain);
        out.push(Customer {
            name: Name {
                first_name: first,
                last_name: last,
            },
            email,
            phone: format!("+1 555 {} {}", digits(rng, 3), digits(rng, 4)),
            loyalty_id: rng.random_bool(0.8).then(|| code(rng, used, "-L")),
        });
    }
    out
}

/// How a customer pays (the same method across their bookings).
fn payment_method(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>) -> PaymentMethod {
    let v = &*VOCABULARY;
    let source = weighted(rng, &v.payment_sources);
    let (suffix, extra) = match source.as_str() {
        "card" => (
            "-CARD",
            Some(MethodInfo {
                brand: Some(pick(rng, &v.card_brands).clone()),
                last_four: Some(digits(rng, 4)),
            }),
        ),
        "wallet" => (
            "-WALLET",
            Some(MethodInfo {
                brand: Some(pick(rng, &v.wallet_brands).clone()),
                last_four: None,
            }),
        ),
        "gift_card" => (
            "-GIFT",
            Some(MethodInfo {
                brand: None,
                last_four: Some(digits(rng, 4)),
            }),
        ),
        _ => ("-CASH", None),
    };
    PaymentMethod {
        source,
        payment_method_id: code(rng, used, suffix),
        extra_info: extra,
    }
}

/// The database of one split, at its size in [`SCALES`]; the training
/// one has some cancelled and completed shows (`odd`).
pub fn generate(seed: u64, split: Split) -> MovieDb {
    let scale = SCALES.of(split);
    let odd = split == Split::Train;
    let mut rng = derive_rng(seed, &["movie", "db", split.as_str()]);
    let rng = &mut rng;
    let mut used = BTreeSet::new();
    let v = &*VOCABULARY;
    if v.title_first.is_empty() || v.places.is_empty() || v.given_names.is_empty() {
        return MovieDb::new(BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    }
    let movies = generate_movies(rng, &mut used, scale.movies);
    let theaters = generate_theaters(rng, &mut used, &movies, &scale, odd);
    let customers = generate_customers(rng, &mut used, scale.customers);
    let methods: Vec<PaymentMethod> = customers
        .iter()
        .map(|_| payment_method(rng, &mut used))
        .collect();
    // Every customer books once; the remaining bookings go to customers drawn at random,
    // so some hold two or more.
    let mut owners: Vec<usize> = (0..scale.customers.min(scale.bookings)).collect();
    while owners.len() < scale.bookings {
        owners.push(rng.random_range(0..scale.customers));
    }
    owners.shuffle(rng);
    let mut held: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut bookings = BTreeMap::new();
    let clock = day_of(2024, 5, 15);
    for owner in owners {
        for _ in 0..50 {
            let t = pick(rng, &theaters);
            let shows: Vec<(&str, &Show)> = t.shows().collect();
            let (date, s) = *pick(rng, &shows);
            let Some(aud) = t.auditoriums.get(&s.auditorium_id) else {
                continue;
            };
            let taken = held.entry(s.show_id.clone()).or_default();
            let count = weighted(rng, &v.seats_per_booking);
            // Adjacent free seats of one row, accessible seats left for those who ask.
            let rows: Vec<&Vec<Seat>> = aud.seat_map.rows.values().collect();
            let row = pick(rng, &rows);
            let free: Vec<&Seat> = row
                .iter()
                .filter(|x| !x.wheelchair_accessible && !taken.contains(&x.seat_id))
                .collect();
            if free.len() < count {
                continue;
            }
            let at = rng.random_range(0..=free.len() - count);
            let seats: Vec<SeatSpec> = free[at..at + count]
                .iter()
                .map(|x| SeatSpec {
                    seat_id: x.seat_id.clone(),
                    ticket_type: weighted(rng, &v.ticket_types),
                })
                .collect();
            let lines = weighted(rng, &v.concession_lines);
            let concessions: Vec<ConcessionSpec> = v
                .concessions
                .sample(rng, lines)
                .map(|(name, size, price)| ConcessionSpec {
                    item_id: code(rng, &mut used, "-C"),
                    name: name.clone(),
                    size: size.clone(),
                    quantity: weighted(rng, &v.concession_quantities),
                    price_each: *price,
                })
                .collect();
            let Ok(q) = quote(t, s, &seats, &concessions, None) else {
                continue;
            };
            let status = if s.status != SCHEDULED {
                if s.status == "canceled" {
                    "canceled".to_string()
                } else {
                    CONFIRMED.to_string()
                }
            } else {
                weighted(rng, &v.booking_statuses)
            };
            if status == CONFIRMED {
                taken.extend(seats.iter().map(|x| x.seat_id.clone()));
            }
            let id = code(rng, &mut used, "-B");
            let created_day = clock - rng.random_range(0..20);
            let created = stamp(created_day, rng.random_range(9 * 60..22 * 60));
            let paid_at = created.clone();
            let mut history = Vec::new();
            let mut paid = 0.0;
            if status != "pending" {
                history.push(BookingPayment {
                    payment_id: code(rng, &mut used, "-P"),
                    amount: q.grand_total,
                    method: methods[owner].clone(),
                    created_at: paid_at,
                });
                paid = q.grand_total;
            }
            let mut canceled_at = None;
            if status == "canceled" || status == "refunded" {
                let at = stamp(clock, 10 * 60);
                history.push(refund(format!("{id}-refund"), -q.grand_total, &at));
                paid = 0.0;
                canceled_at = Some(stamp(clock, 10 * 60));
            }
            let tickets_code = code(rng, &mut used, "");
            let tickets = (1..=seats.len())
                .map(|k| TicketDelivery {
                    ticket_id: format!("{tickets_code}-T{k}"),
                    barcode: digits(rng, 12),
                })
                .collect();
            let totals = q.totals(paid);
            let seats_out: Vec<BookedSeat> = q.seats;
            bookings.insert(
                id.clone(),
                Booking {
                    booking_id: id,
                    theater_id: t.theater_id.clone(),
                    movie_id: s.movie_id.clone(),
                    show_id: s.show_id.clone(),
                    date: date.to_string(),
                    start_time_local: s.start_time_local.clone(),
                    status,
                    created_at: created,
                    canceled_at,
                    customer: customers[owner].clone(),
                    seats: seats_out,
                    concessions: q.concessions,
                    promotions_applied: Vec::new(),
                    payment_history: history,
                    totals,
                    delivery: Delivery {
                        method: weighted(rng, &v.delivery_methods),
                        tickets,
                    },
                    special_requests: rng
                        .random_bool(0.3)
                        .then(|| pick(rng, &v.special_requests).clone()),
                },
            );
            break;
        }
    }
    let movies = movies
        .into_iter()
        .map(|m| (m.movie_id.clone(), m))
        .collect();
    let theaters = theaters
        .into_iter()
        .map(|t| (t.theater_id.clone(), t))
        .collect();
    MovieDb::new(movies, theaters, bookings)
}
