//! Movie tests: each tool's rules and error strings (the texts are the reference's, except
//! where a test names a departure), the price oracle, the generators' scale and
//! invariants, the policy rules, grounding proposals and the refinement hooks. The
//! differential fixture (`tests/fixtures/reference/movie/`) compares whole outputs.

use super::db::{CONFIRMED, MovieDb, SCHEDULED};
use super::generate::{self, SCALES};
use super::tools::{NOW, SeatSpec, grand_total, quote};
use super::{Movie, policy};
use crate::domain::Hooks;
use crate::domain::kit::policy::check_rules;
use crate::domain::{Database, Domain, Environment, GroundingContext, Split, ToolKind};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

const SEED: u64 = 20261130;

fn eval() -> MovieDb {
    generate::generate(SEED, Split::Eval)
}

fn call(db: &mut MovieDb, tool: &str, args: Value) -> (String, bool) {
    let out = Environment::invoke(db, tool, &args);
    (out.text, out.is_error)
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// A scheduled show with at least `n` free seats that are not wheelchair accessible:
/// (theater id, show id, those seats).
fn open_show(db: &MovieDb, n: usize) -> (String, String, Vec<String>) {
    for (tid, t) in db.theaters.iter() {
        for (_, s) in t.shows() {
            if s.status != SCHEDULED {
                continue;
            }
            let held = super::tools::booked_seats(db, tid, &s.show_id, None);
            let free: Vec<String> = t
                .auditoriums
                .get(&s.auditorium_id)
                .unwrap()
                .seats()
                .filter(|x| !x.wheelchair_accessible && !held.contains(&x.seat_id))
                .map(|x| x.seat_id.clone())
                .collect();
            if free.len() >= n {
                return (tid.to_string(), s.show_id.clone(), free);
            }
        }
    }
    panic!("no open show");
}

fn seats(ids: &[&String], ty: &str) -> Value {
    Value::Array(
        ids.iter()
            .map(|s| json!({"seat_id": s, "ticket_type": ty}))
            .collect(),
    )
}

fn payment(id: &str, amount: f64) -> Value {
    json!({"payment_id": id, "amount": amount, "created_at": NOW,
        "method": {"source": "card", "payment_method_id": "T-CARD",
            "extra_info": {"brand": "VISA", "last_four": "4242"}}})
}

fn booking_args(tid: &str, sid: &str, seat_list: Value, pay: Vec<Value>) -> Value {
    json!({"theater_id": tid, "show_id": sid, "seats": seat_list, "delivery_method": "e-ticket",
        "customer": {"name": {"first_name": "Ada", "last_name": "Quill"},
            "email": "ada@example.com", "phone": "+1 555 000 1111"},
        "payments": pay})
}

// ---------- tools ----------

#[test]
fn sixteen_tools_thirteen_read_three_write() {
    let specs = Movie.tool_specs();
    let reads = specs.iter().filter(|s| s.kind == ToolKind::Read).count();
    assert_eq!((specs.len(), reads), (16, 13));
    let writes: BTreeSet<&str> = specs
        .iter()
        .filter(|s| s.kind == ToolKind::Write)
        .map(|s| s.name)
        .collect();
    assert_eq!(
        writes,
        ["cancel_booking", "create_booking", "update_booking_seats"].into()
    );
}

/// The prices of the reference's own first booking: two adult seats at 10.00 with a 1.00
/// fee, popcorn at 4.00, 23% tax, a 0.50 booking fee. The tool taxes price plus fee (2.53
/// per seat; that booking's stored 2.30 taxed the price alone), 0.92 on the popcorn, 32.48
/// in all. And a rate whose per-seat tax rounds (14.975% of 13.75 = 2.0590625 -> 2.06).
#[test]
fn the_price_oracle_rounds_each_part_then_each_sum() {
    let db = eval();
    let mut t = db.theaters.iter().next().unwrap().1.clone();
    let (_, s) = t.shows().next().unwrap();
    let mut s = s.clone();
    t.pricing_rules.tax_rate_percent = 23.0;
    t.pricing_rules.fees.booking_fee = 0.5;
    s.price_schema.adult = 10.0;
    s.price_schema.fees.convenience_fee = 1.0;
    let two = [
        SeatSpec {
            seat_id: "A".into(),
            ticket_type: "adult".into(),
        },
        SeatSpec {
            seat_id: "B".into(),
            ticket_type: "adult".into(),
        },
    ];
    let pop = super::tools::ConcessionSpec {
        item_id: "C".into(),
        name: "Popcorn".into(),
        size: "M".into(),
        quantity: 1,
        price_each: 4.0,
    };
    let q = quote(&t, &s, &two, &[pop], None).unwrap();
    assert_eq!(q.seats[0].tax, 2.53);
    assert_eq!(q.concessions[0].tax_each, 0.92);
    assert_eq!(
        (
            q.tickets_subtotal,
            q.concessions_subtotal,
            q.fees_total,
            q.tax_total,
            q.grand_total
        ),
        (20.0, 4.0, 2.5, 5.98, 32.48)
    );
    t.pricing_rules.tax_rate_percent = 14.975;
    s.price_schema.adult = 12.5;
    s.price_schema.fees.convenience_fee = 1.25;
    let q = quote(&t, &s, &two[..1], &[], None).unwrap();
    assert_eq!(q.seats[0].tax, 2.06);
    assert_eq!((q.fees_total, q.grand_total), (1.75, 16.31));
    let bad = [SeatSpec {
        seat_id: "A".into(),
        ticket_type: "vip".into(),
    }];
    assert_eq!(
        quote(&t, &s, &bad, &[], None).unwrap_err(),
        "Unsupported ticket type vip"
    );
}

#[test]
fn a_booking_pays_exactly_and_takes_the_next_slot() {
    let mut db = eval();
    let (tid, sid, free) = open_show(&db, 5);
    let pick = |i: usize| seats(&[&free[i]], "adult");
    let args = booking_args(&tid, &sid, pick(0), vec![payment("P", 1.0)]);
    let total = grand_total(&db, &args);
    assert!(total > 1.0);
    let (out, err) = call(&mut db, "create_booking", args.clone());
    assert!(err);
    assert_eq!(
        out,
        format!(
            "Error: Payment amount does not add up, total price is {}, but paid 1.0",
            crate::domain::kit::pyjson::py_float_repr(total)
        )
    );
    for (i, want) in ["BKG001", "BKG002", "BKG003"].iter().enumerate() {
        let a = booking_args(&tid, &sid, pick(i), vec![payment("P", total)]);
        let (out, err) = call(&mut db, "create_booking", a);
        assert!(!err, "{out}");
        let b = json_of(&out);
        assert_eq!(b["booking_id"], *want);
        assert_eq!(b["status"], CONFIRMED);
        assert_eq!(b["created_at"], NOW);
        assert_eq!(b["totals"]["amount_due"], 0.0);
        assert_eq!(
            b["delivery"]["tickets"][0]["ticket_id"],
            format!("{want}-TKT-001")
        );
    }
    let (out, _) = call(
        &mut db,
        "create_booking",
        booking_args(&tid, &sid, pick(3), vec![payment("P", total)]),
    );
    assert_eq!(out, "Error: Too many new bookings in this session");
    // The first new booking now holds its seat.
    let (out, _) = call(
        &mut db,
        "create_booking",
        booking_args(&tid, &sid, pick(0), vec![payment("P", total)]),
    );
    assert_eq!(out, format!("Error: Seats not available: ['{}']", free[0]));
    let avail = json_of(
        &call(
            &mut db,
            "get_seat_availability",
            json!({"theater_id": tid, "show_id": sid}),
        )
        .0,
    );
    assert!(
        avail["booked"]
            .as_array()
            .unwrap()
            .contains(&json!(free[0]))
    );
}

#[test]
fn our_departures_refuse_repeated_seats_no_seats_and_negative_concessions() {
    let mut db = eval();
    let (tid, sid, free) = open_show(&db, 2);
    let before = Database::state_hash(&db);
    let twice = seats(&[&free[0], &free[0]], "adult");
    let (out, _) = call(
        &mut db,
        "create_booking",
        booking_args(&tid, &sid, twice, vec![payment("P", 50.0)]),
    );
    assert_eq!(out, format!("Error: Duplicate seat ids: ['{}']", free[0]));
    let (out, _) = call(
        &mut db,
        "create_booking",
        booking_args(&tid, &sid, json!([]), vec![payment("P", 1.0)]),
    );
    assert_eq!(out, "Error: At least one seat is required");
    let mut a = booking_args(
        &tid,
        &sid,
        seats(&[&free[0]], "adult"),
        vec![payment("P", 1.0)],
    );
    a["concessions"] =
        json!([{"item_id": "C", "name": "Soda", "size": "L", "quantity": -1, "price_each": 3.0}]);
    let (out, _) = call(&mut db, "create_booking", a);
    assert_eq!(out, "Error: Concession quantity must be at least 1");
    assert_eq!(Database::state_hash(&db), before);
}

fn open_booking(db: &MovieDb) -> String {
    db.bookings
        .iter()
        .find(|(_, b)| {
            b.status == CONFIRMED
                && b.seats.len() >= 2
                && db
                    .theaters
                    .get(&b.theater_id)
                    .and_then(|t| t.show(&b.show_id))
                    .is_some_and(|(_, s)| s.status == SCHEDULED)
        })
        .map(|(id, _)| id.to_string())
        .unwrap()
}

#[test]
fn seat_changes_settle_the_exact_difference() {
    let mut db = eval();
    let id = open_booking(&db);
    let b = db.bookings.get(&id).unwrap().clone();
    let cur: Vec<Value> = b
        .seats
        .iter()
        .map(|s| json!({"seat_id": s.seat_id, "ticket_type": s.ticket_type}))
        .collect();
    let t = db.theaters.get(&b.theater_id).unwrap();
    let (_, s) = t.show(&b.show_id).unwrap();
    let held = super::tools::booked_seats(&db, &b.theater_id, &b.show_id, None);
    let extra = t
        .auditoriums
        .get(&s.auditorium_id)
        .unwrap()
        .seats()
        .find(|x| !held.contains(&x.seat_id))
        .unwrap()
        .seat_id
        .clone();
    let mut more = cur.clone();
    more.push(json!({"seat_id": extra, "ticket_type": "adult"}));
    let args = json!({"booking_id": id, "seats": more});
    let diff = super::tools::seat_change_difference(&db, &args);
    assert!(diff > 0.0);
    let (out, _) = call(&mut db, "update_booking_seats", args.clone());
    assert_eq!(
        out,
        format!(
            "Error: Additional payment of {} is required to complete the update",
            crate::domain::kit::pyjson::py_float_repr(diff)
        )
    );
    let mut paid = args.clone();
    paid["payment"] = payment("X", diff);
    let (out, err) = call(&mut db, "update_booking_seats", paid);
    assert!(!err, "{out}");
    let after = json_of(&out);
    assert_eq!(after["totals"]["amount_due"], 0.0);
    assert_eq!(after["seats"].as_array().unwrap().len(), b.seats.len() + 1);
    // Back to one seat: refunded.
    let (out, err) = call(
        &mut db,
        "update_booking_seats",
        json!({"booking_id": id, "seats": [cur[0]]}),
    );
    assert!(!err, "{out}");
    let after = json_of(&out);
    let last = after["payment_history"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["payment_id"], format!("{id}-adj-refund"));
    assert!(last["amount"].as_f64().unwrap() < 0.0);
    let (out, _) = call(
        &mut db,
        "update_booking_seats",
        json!({"booking_id": id, "seats": []}),
    );
    assert_eq!(out, "Error: At least one seat is required");
}

#[test]
fn cancelling_refunds_what_was_paid_once() {
    let mut db = eval();
    let id = open_booking(&db);
    let paid = db.bookings.get(&id).unwrap().totals.amount_paid;
    let (out, _) = call(&mut db, "cancel_booking", json!({"booking_id": id}));
    let b = json_of(&out);
    assert_eq!(b["status"], "canceled");
    assert_eq!(b["canceled_at"], NOW);
    assert_eq!(b["totals"]["amount_paid"], 0.0);
    let refund = b["payment_history"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(refund["payment_id"], format!("{id}-refund"));
    assert_eq!(refund["amount"].as_f64().unwrap(), -paid);
    let (again, _) = call(&mut db, "cancel_booking", json!({"booking_id": id}));
    assert_eq!(again, out);
    let (out, _) = call(
        &mut db,
        "update_booking_seats",
        json!({"booking_id": id, "seats": [{"seat_id": "R1-01", "ticket_type": "adult"}]}),
    );
    assert_eq!(
        out,
        "Error: Only confirmed bookings can be updated (status=canceled)"
    );
    assert_eq!(
        call(&mut db, "cancel_booking", json!({"booking_id": "NOPE"})).0,
        "Error: Booking NOPE not found"
    );
}

#[test]
fn lookups_answer_with_the_references_shapes_and_errors() {
    let mut db = eval();
    let (tid, sid, _) = open_show(&db, 1);
    let (status, _) = call(
        &mut db,
        "get_show_status",
        json!({"theater_id": tid, "show_id": sid}),
    );
    assert_eq!(status, SCHEDULED);
    let (out, _) = call(
        &mut db,
        "list_shows",
        json!({"theater_id": tid, "date": "99-01-01"}),
    );
    assert_eq!(out, "[]");
    let (out, _) = call(
        &mut db,
        "get_show_details",
        json!({"theater_id": tid, "show_id": sid, "date": "99-01-01"}),
    );
    assert_eq!(
        out,
        format!("Error: No schedule for date 99-01-01 at theater {tid}")
    );
    let (out, _) = call(
        &mut db,
        "get_show_details",
        json!({"theater_id": tid, "show_id": "S"}),
    );
    assert_eq!(out, format!("Error: Show S not found at theater {tid}"));
    assert_eq!(
        call(&mut db, "get_movie_details", json!({"movie_id": "M"})).0,
        "Error: Movie M not found"
    );
    assert_eq!(
        call(&mut db, "get_theater_details", json!({"theater_id": "T"})).0,
        "Error: Theater T not found"
    );
    let (out, _) = call(
        &mut db,
        "price_preview",
        json!({"theater_id": tid, "show_id": sid,
        "seats": [{"seat_id": "Z9-99", "ticket_type": "adult"}]}),
    );
    assert_eq!(out, "Error: Unknown seat ids: ['Z9-99']");
    let movies = json_of(&call(&mut db, "list_movies", json!({})).0);
    assert_eq!(movies.as_array().unwrap().len(), SCALES.eval.movies);
}

// ---------- generators ----------

#[test]
fn generators_have_the_scales_and_keep_their_invariants() {
    for (split, scale) in [(Split::Eval, SCALES.eval), (Split::Train, SCALES.train)] {
        let db = generate::generate(SEED, split);
        assert_eq!(db.movies.len(), scale.movies);
        assert_eq!(db.theaters.len(), scale.theaters);
        assert_eq!(db.bookings.len(), scale.bookings, "{split:?}");
        assert_eq!(Hooks::customers(&db).len(), scale.customers, "{split:?}");
        let mut held: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
        for (_, b) in db.bookings.iter() {
            let t = db.theaters.get(&b.theater_id).unwrap();
            let (_, s) = t.show(&b.show_id).unwrap();
            let specs: Vec<SeatSpec> = b
                .seats
                .iter()
                .map(|x| SeatSpec {
                    seat_id: x.seat_id.clone(),
                    ticket_type: x.ticket_type.clone(),
                })
                .collect();
            let q = quote(t, s, &specs, &[], Some(&b.concessions)).unwrap();
            assert_eq!(q.grand_total, b.totals.grand_total);
            let paid: f64 = b.payment_history.iter().map(|p| p.amount).sum();
            assert!(
                (paid - b.totals.amount_paid).abs() < 1e-6,
                "{}",
                b.booking_id
            );
            if b.status == CONFIRMED {
                let set = held
                    .entry((b.theater_id.clone(), b.show_id.clone()))
                    .or_default();
                for x in &b.seats {
                    assert!(
                        set.insert(x.seat_id.clone()),
                        "seat {} sold twice",
                        x.seat_id
                    );
                }
            }
        }
        let confirmed = db
            .bookings
            .iter()
            .filter(|(_, b)| b.status == CONFIRMED)
            .count();
        assert!(
            confirmed * 100 >= scale.bookings * 75,
            "{split:?}: {confirmed}"
        );
        let two = db
            .bookings
            .iter()
            .filter(|(_, b)| b.seats.len() == 2)
            .count();
        assert!(
            two * 2 > scale.bookings,
            "{split:?}: mostly two-seat bookings"
        );
    }
    let a = generate::generate(SEED, Split::Eval);
    assert_eq!(Database::state_hash(&a), Database::state_hash(&eval()));
    assert_ne!(
        Database::state_hash(&a),
        Database::state_hash(&generate::generate(SEED + 1, Split::Eval))
    );
}

// ---------- policy ----------

#[test]
fn policy_rules_name_what_they_refuse() {
    let db = eval();
    let (tid, sid, _) = open_show(&db, 1);
    let t = db.theaters.get(&tid).unwrap();
    let (_, s) = t.show(&sid).unwrap();
    let accessible = t
        .auditoriums
        .get(&s.auditorium_id)
        .unwrap()
        .seats()
        .find(|x| x.wheelchair_accessible)
        .unwrap()
        .seat_id
        .clone();
    let mut a = booking_args(
        &tid,
        &sid,
        seats(&[&accessible], "adult"),
        vec![payment("P", 1.0)],
    );
    let rule = |a: &Value, tool: &str| {
        check_rules(&policy::RULES, &db, tool, a)
            .err()
            .map(|e| e.rule)
    };
    assert_eq!(rule(&a, "create_booking"), Some("no_accessible_seats"));
    a["seats"] = json!([]);
    assert_eq!(rule(&a, "create_booking"), Some("payments_follow_policy"));
    a["payments"] = json!([payment("T-CARD", 1.0)]);
    assert_eq!(rule(&a, "create_booking"), None);
    let id = open_booking(&db);
    let b = db.bookings.get(&id).unwrap();
    let same: Vec<Value> = b
        .seats
        .iter()
        .map(|s| json!({"seat_id": s.seat_id, "ticket_type": s.ticket_type}))
        .collect();
    assert_eq!(
        rule(
            &json!({"booking_id": id, "seats": same}),
            "update_booking_seats"
        ),
        Some("seats_change")
    );
    let gone = db
        .bookings
        .iter()
        .find(|(_, b)| b.status == "canceled" || b.status == "refunded")
        .unwrap()
        .0;
    assert_eq!(
        rule(&json!({"booking_id": gone}), "cancel_booking"),
        Some("booking_active")
    );
    let train = generate::generate(SEED, Split::Train);
    let done = train.bookings.iter().find(|(_, b)| {
        b.status == CONFIRMED
            && train
                .theaters
                .get(&b.theater_id)
                .and_then(|t| t.show(&b.show_id))
                .is_some_and(|(_, s)| s.status == "completed")
    });
    if let Some((id, _)) = done {
        let e = check_rules(
            &policy::RULES,
            &train,
            "cancel_booking",
            &json!({"booking_id": id}),
        )
        .unwrap_err();
        assert_eq!(e.rule, "show_not_completed");
    }
}

// ---------- grounding and hooks ----------

#[test]
fn every_write_grounds_for_many_customers_of_both_databases() {
    for split in [Split::Eval, Split::Train] {
        let db = generate::generate(SEED, split);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for tool in ["create_booking", "update_booking_seats", "cancel_booking"] {
            let mut ok = 0;
            let customers = Hooks::customers(&db);
            for user in customers.iter().take(30) {
                let ctx = GroundingContext::for_user(user);
                let good = Hooks::propose_calls(&db, tool, &ctx, &mut rng)
                    .into_iter()
                    .any(|a| {
                        Hooks::check_policy(&db, tool, &a).is_ok()
                            && !Environment::fork(&db).invoke(tool, &a).is_error
                    });
                ok += usize::from(good);
            }
            assert!(
                ok >= 15,
                "{split:?} {tool}: only {ok} of 30 customers ground it"
            );
        }
    }
}

#[test]
fn facts_start_with_the_booking_ids_and_requests_hide_internal_ids() {
    let db = eval();
    let user = &Hooks::customers(&db)[0];
    let facts = Hooks::user_facts(&db, user);
    assert_eq!(facts[0].kind, "identity");
    let ids: Vec<String> = db
        .bookings_of(user)
        .iter()
        .map(|b| b.booking_id.clone())
        .collect();
    assert_eq!(facts[0].values, ids);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let ctx = GroundingContext::for_user(user);
    let args = Hooks::propose_calls(&db, "create_booking", &ctx, &mut rng).remove(0);
    let out = Environment::fork(&db).invoke("create_booking", &args);
    assert!(!out.is_error, "{}", out.text);
    let request = Hooks::describe_request(&db, "create_booking", &args, &out.text).unwrap();
    for id in Hooks::internal_ids(&db, "create_booking", &args) {
        assert!(!request.contains(&id), "{id} in {request}");
    }
    assert!(
        request.contains(&format!("{:.2}", grand_total(&db, &args))),
        "{request}"
    );
}

#[test]
fn a_day_at_a_theater_is_answered_with_the_titles_of_its_films() {
    let mut db = eval();
    let (tid, sid, _) = open_show(&db, 1);
    let (show, _) = call(
        &mut db,
        "get_show_details",
        json!({"theater_id": tid, "show_id": sid}),
    );
    let date = json_of(&show)["start_time_local"].as_str().unwrap()[..8].to_string();
    let (shows, _) = call(
        &mut db,
        "list_shows",
        json!({"theater_id": tid, "date": date}),
    );
    let told = db.required_outputs("list_shows", &json!({}), &shows);
    let mut want: Vec<String> = Vec::new();
    for s in json_of(&shows).as_array().unwrap() {
        let title = &db
            .movies
            .get(s["movie_id"].as_str().unwrap())
            .unwrap()
            .title;
        if !want.contains(title) {
            want.push(title.clone());
        }
    }
    assert!(!want.is_empty());
    assert_eq!(told, want);
    assert!(!told.iter().any(|t| t == SCHEDULED));
}

#[test]
fn a_theater_and_a_film_are_answered_with_what_every_request_asks() {
    let mut db = eval();
    let (tid, _, _) = open_show(&db, 1);
    let (out, _) = call(&mut db, "get_theater_details", json!({"theater_id": tid}));
    let t = json_of(&out);
    let mut want = vec![t["address"]["street"].as_str().unwrap().to_string()];
    want.extend(
        t["amenities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string()),
    );
    assert_eq!(
        db.required_outputs("get_theater_details", &json!({}), &out),
        want
    );
    // A film: its rating and running time, as every request asks.
    let m = db.movies.in_order().next().unwrap().clone();
    let args = json!({"movie_id": m.movie_id});
    let (out, _) = call(&mut db, "get_movie_details", args.clone());
    let f = json_of(&out);
    assert_eq!(
        db.required_outputs("get_movie_details", &args, &out),
        [
            f["mpaa_rating"].as_str().unwrap().to_string(),
            f["runtime_minutes"].to_string()
        ]
    );
}

/// An amount a customer is told to pay or get back names its currency (the theater's
/// country's): "You will pay the 59.03 EUR", never "59.03 in local currency".
#[test]
fn amounts_in_requests_carry_the_theaters_currency() {
    for split in [Split::Eval, Split::Train] {
        let db = generate::generate(SEED, split);
        for (_, t) in db.theaters.iter() {
            assert!(
                super::hooks::currency_of(&t.address.country).is_some(),
                "{}: no currency for {}",
                t.theater_id,
                t.address.country
            );
        }
    }
    // The reference database's countries too.
    for country in ["Iran", "Romania", "Russia", "Sweden", "Portugal", "Japan"] {
        assert!(super::hooks::currency_of(country).is_some(), "{country}");
    }
    let db = eval();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut said = 0;
    for user in Hooks::customers(&db).iter().take(20) {
        let ctx = GroundingContext::for_user(user);
        for args in Hooks::propose_calls(&db, "create_booking", &ctx, &mut rng) {
            let Some(request) = Hooks::describe_request(&db, "create_booking", &args, "") else {
                continue;
            };
            let theater = db
                .theaters
                .get(args["theater_id"].as_str().unwrap())
                .unwrap();
            let code = super::hooks::currency_of(&theater.address.country).unwrap();
            let total = grand_total(&db, &args);
            let money = match code {
                "USD" => format!("${total:.2}"),
                code => format!("{total:.2} {code}"),
            };
            assert!(request.contains(&money), "{money} not in {request}");
            assert!(!request.contains("local currency"), "{request}");
            said += 1;
        }
    }
    assert!(said > 10, "{said} bookings described");
}
