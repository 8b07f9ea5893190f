//! Unit tests of the airline domain: every tool's success and error behaviour (against the
//! hand-written tau-bench fixture), generator consistency and determinism, fork isolation,
//! import/export round trip, each policy rule, and grounding coverage.

use super::db::{AirlineDb, CLOCK, Money};
use super::{Airline, generate, ground, tau_bench};
use crate::domain::Hooks;
use crate::domain::kit::clock::parse_datetime;
use crate::domain::kit::text::arg_str;
use crate::domain::{Database, Domain, Environment, GroundingContext, Split, ToolKind, ToolOutput};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::LazyLock;

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tau_bench/airline")
}

fn fixture() -> AirlineDb {
    tau_bench::import(&fixture_dir()).expect("fixture imports")
}

static GENERATED: LazyLock<AirlineDb> = LazyLock::new(|| generate::generate(7));

fn call(db: &mut AirlineDb, tool: &str, args: Value) -> ToolOutput {
    db.invoke(tool, &args)
}

fn ok(db: &mut AirlineDb, tool: &str, args: Value) -> Value {
    let out = call(db, tool, args);
    assert!(!out.is_error, "{tool} failed: {}", out.text);
    serde_json::from_str(&out.text).unwrap_or(Value::String(out.text))
}

fn err(db: &mut AirlineDb, tool: &str, args: Value) -> String {
    let before = Database::state_hash(db);
    let out = call(db, tool, args);
    assert!(out.is_error, "{tool} should fail, got {}", out.text);
    assert_eq!(
        Database::state_hash(db),
        before,
        "a failed {tool} must not change the state"
    );
    out.text
}

// ---------------------------------------------------------------- contract

#[test]
fn fourteen_tools_with_the_paper_split_of_kinds() {
    let specs = Airline.tool_specs();
    assert_eq!(specs.len(), 14);
    let reads: Vec<&str> = specs
        .iter()
        .filter(|s| s.kind == ToolKind::Read)
        .map(|s| s.name)
        .collect();
    assert_eq!(reads.len(), 8, "{reads:?}");
    for s in &specs {
        let is_read_name = ["get_", "list_", "search_", "find_", "check_"]
            .iter()
            .any(|p| s.name.starts_with(p))
            || ["think", "calculate", "transfer_to_human_agents"].contains(&s.name);
        assert_eq!(s.kind == ToolKind::Read, is_read_name, "{}", s.name);
        assert_eq!(s.terminates, s.name == "transfer_to_human_agents");
        assert_eq!(s.openai()["function"]["name"], s.name);
    }
}

#[test]
fn schema_violations_come_back_as_errors() {
    let mut db = fixture();
    let e = err(&mut db, "get_user_details", json!({}));
    assert_eq!(e, "Error: missing required argument 'user_id'");
    let e = err(&mut db, "get_user_details", json!({"user_id": 5}));
    assert!(e.contains("'user_id' must be of type string"), "{e}");
    let e = err(
        &mut db,
        "cancel_reservation",
        json!({"reservation_id": "QX7P2L", "x": 1}),
    );
    assert!(e.contains("unexpected argument 'x'"), "{e}");
    let e = err(
        &mut db,
        "update_reservation_flights",
        json!({"reservation_id": "QX7P2L", "cabin": "first", "flights": [], "payment_id": "credit_card_1000001"}),
    );
    assert!(e.contains("must be one of"), "{e}");
    let e = err(&mut db, "no_such_tool", json!({}));
    assert_eq!(e, "Unknown action no_such_tool");
}

#[test]
fn hostile_arguments_never_panic() {
    let db = fixture();
    let weird = [
        json!({}),
        json!(null),
        json!([1, 2]),
        json!({"reservation_id": "", "user_id": "", "amount": -1e300}),
        json!({"user_id": "nora_quill_4821", "amount": 1e308}),
        json!({"expression": "((((((("}),
        json!({"expression": "9**9**9**9"}),
        json!({"origin": "", "destination": "", "date": "x"}),
        json!({"reservation_id": "MB4K9Z", "total_baggages": i64::MAX, "nonfree_baggages": i64::MIN, "payment_id": "credit_card_1000001"}),
        json!({"reservation_id": "MB4K9Z", "cabin": "economy", "flights": [{"flight_number": "HAT503", "date": "zz"}], "payment_id": "gift_card_1000002"}),
    ];
    for spec in Airline.tool_specs() {
        for args in &weird {
            let _ = db.clone().invoke(spec.name, args);
        }
    }
}

// ---------------------------------------------------------------- read tools

#[test]
fn get_user_details_returns_the_profile_or_user_not_found() {
    let mut db = fixture();
    let v = ok(
        &mut db,
        "get_user_details",
        json!({"user_id": "nora_quill_4821"}),
    );
    assert_eq!(v["membership"], "gold");
    assert_eq!(v["reservations"], json!(["QX7P2L", "MB4K9Z"]));
    assert_eq!(
        v["payment_methods"]["gift_card_1000002"]["amount"],
        json!(127.5)
    );
    assert!(
        v["payment_methods"]["credit_card_1000001"]
            .get("amount")
            .is_none()
    );
    let e = err(&mut db, "get_user_details", json!({"user_id": "nobody_1"}));
    assert_eq!(e, "Error: user not found");
}

#[test]
fn get_reservation_details_returns_the_row_or_reservation_not_found() {
    let mut db = fixture();
    let v = ok(
        &mut db,
        "get_reservation_details",
        json!({"reservation_id": "CANC01"}),
    );
    assert_eq!(v["status"], "cancelled");
    let v = ok(
        &mut db,
        "get_reservation_details",
        json!({"reservation_id": "QX7P2L"}),
    );
    assert!(v.get("status").is_none(), "absent status stays absent");
    assert_eq!(v["flights"][0]["price"], json!(180));
    let e = err(
        &mut db,
        "get_reservation_details",
        json!({"reservation_id": "NOPE00"}),
    );
    assert_eq!(e, "Error: reservation not found");
}

#[test]
fn list_all_airports_names_the_served_cities() {
    let mut db = fixture();
    let v = ok(&mut db, "list_all_airports", json!({}));
    assert_eq!(
        v,
        json!({"BOS": "Boston", "MIA": "Miami", "SEA": "Seattle"})
    );
}

#[test]
fn search_direct_flight_lists_only_bookable_dates() {
    let mut db = fixture();
    let v = ok(
        &mut db,
        "search_direct_flight",
        json!({"origin": "SEA", "destination": "BOS", "date": "2024-05-16"}),
    );
    let numbers: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["flight_number"].as_str().unwrap())
        .collect();
    assert_eq!(numbers, ["HAT501", "HAT505"]);
    assert_eq!(v[0]["status"], "available");
    assert_eq!(v[0]["prices"]["economy"], json!(180));
    assert_eq!(v[0]["available_seats"]["business"], json!(3));
    assert!(v[0].get("dates").is_none());
    let landed = ok(
        &mut db,
        "search_direct_flight",
        json!({"origin": "SEA", "destination": "BOS", "date": "2024-05-15"}),
    );
    assert_eq!(landed, json!([]));
}

#[test]
fn search_onestop_flight_connects_across_midnight() {
    let mut db = fixture();
    let v = ok(
        &mut db,
        "search_onestop_flight",
        json!({"origin": "MIA", "destination": "SEA", "date": "2024-05-16"}),
    );
    assert_eq!(v.as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v[0][0]["flight_number"], "HAT504");
    assert_eq!(v[0][0]["date"], "2024-05-16");
    assert_eq!(v[0][1]["flight_number"], "HAT502");
    assert_eq!(v[0][1]["date"], "2024-05-17");
    // The second leg shows its own date's fares.
    assert_eq!(v[0][1]["prices"]["economy"], json!(162));
    // A connection that leaves before the first leg lands is not offered.
    let none = ok(
        &mut db,
        "search_onestop_flight",
        json!({"origin": "SEA", "destination": "MIA", "date": "2024-05-16"}),
    );
    assert_eq!(none, json!([]));
}

#[test]
fn think_calculate_and_transfer() {
    let mut db = fixture();
    let before = Database::state_hash(&db);
    assert_eq!(call(&mut db, "think", json!({"thought": "hm"})).text, "");
    let calc = |e: &str| crate::domain::kit::calc::evaluate(e);
    assert_eq!(calc("(2 + 3) * 4").unwrap(), "20.0");
    assert_eq!(calc("10 / 4").unwrap(), "2.5");
    assert_eq!(calc("1 / 3").unwrap(), "0.33");
    assert_eq!(calc("-2 ** 2").unwrap(), "-4.0");
    assert_eq!(calc("7 // 2").unwrap(), "3.0");
    assert_eq!(calc("1/0").unwrap_err(), "division by zero");
    assert_eq!(calc("2 +").unwrap_err(), "invalid syntax");
    let e = err(&mut db, "calculate", json!({"expression": "2 ^ 3"}));
    assert_eq!(e, "Error: invalid characters in expression");
    let out = call(&mut db, "transfer_to_human_agents", json!({"summary": "s"}));
    assert_eq!(out.text, "Transfer successful");
    assert_eq!(Database::state_hash(&db), before);
}

// ---------------------------------------------------------------- write tools

fn theo_booking() -> Value {
    json!({"user_id": "theo_marsh_3310", "origin": "BOS", "destination": "SEA",
        "flight_type": "one_way", "cabin": "economy",
        "flights": [{"flight_number": "HAT502", "date": "2024-05-16"}],
        "passengers": [{"first_name": "Theo", "last_name": "Marsh", "dob": "1971-11-03"}],
        "payment_methods": [{"payment_id": "credit_card_2000001", "amount": 150}],
        "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"})
}

#[test]
fn book_reservation_creates_prices_and_charges() {
    let mut db = fixture();
    let v = ok(&mut db, "book_reservation", theo_booking());
    assert_eq!(v["reservation_id"], "HATHAT");
    assert_eq!(v["created_at"], "2024-05-15T15:00:00");
    assert_eq!(v["flights"][0]["price"], json!(150));
    assert_eq!(v["flights"][0]["origin"], "BOS");
    let user = db.users.get("theo_marsh_3310").unwrap();
    assert_eq!(user.reservations.last().unwrap(), "HATHAT");
    let again = ok(&mut db, "book_reservation", theo_booking());
    assert_eq!(again["reservation_id"], "HATHAU");

    // Insurance and paid bags: 2 x (70 + 30) + 50 = 250 across gift card and certificate;
    // the gift card is debited to the cent and the certificate is consumed.
    let args = json!({"user_id": "nora_quill_4821", "origin": "BOS", "destination": "MIA",
        "flight_type": "one_way", "cabin": "basic_economy",
        "flights": [{"flight_number": "HAT503", "date": "2024-05-16"}],
        "passengers": [{"first_name": "Nora", "last_name": "Quill", "dob": "1984-02-29"},
                       {"first_name": "Milo", "last_name": "Quill", "dob": "2012-07-01"}],
        "payment_methods": [{"payment_id": "gift_card_1000002", "amount": 100.25},
                            {"payment_id": "certificate_1000003", "amount": 149.75}],
        "total_baggages": 5, "nonfree_baggages": 1, "insurance": "yes"});
    ok(&mut db, "book_reservation", args);
    let nora = db.users.get("nora_quill_4821").unwrap();
    assert_eq!(
        nora.payment_methods["gift_card_1000002"].amount,
        Some(Money(2725))
    );
    assert!(!nora.payment_methods.contains_key("certificate_1000003"));
    assert_eq!(nora.reservations.len(), 3);
}

#[test]
fn book_reservation_errors_match_tau_bench() {
    let mut db = fixture();
    let with = |patch: Value| {
        let mut a = theo_booking();
        for (k, v) in patch.as_object().unwrap() {
            a[k] = v.clone();
        }
        a
    };
    let cases = [
        (json!({"user_id": "ghost"}), "Error: user not found"),
        (
            json!({"flights": [{"flight_number": "HAT999", "date": "2024-05-16"}]}),
            "Error: flight HAT999 not found",
        ),
        (
            json!({"flights": [{"flight_number": "HAT502", "date": "2024-05-20"}]}),
            "Error: flight HAT502 not found on date 2024-05-20",
        ),
        (
            json!({"flights": [{"flight_number": "HAT502", "date": "2024-05-15"}]}),
            "Error: flight HAT502 not available on date 2024-05-15",
        ),
        (
            json!({"cabin": "business", "origin": "SEA", "destination": "BOS",
                "flights": [{"flight_number": "HAT505", "date": "2024-05-16"}]}),
            "Error: not enough seats on flight HAT505",
        ),
        (
            json!({"payment_methods": [{"payment_id": "credit_card_9", "amount": 150}]}),
            "Error: payment method credit_card_9 not found",
        ),
        (
            json!({"payment_methods": [{"payment_id": "credit_card_2000001", "amount": 140}]}),
            "Error: payment amount does not add up, total price is 150, but paid 140",
        ),
    ];
    for (patch, want) in cases {
        assert_eq!(err(&mut db, "book_reservation", with(patch)), want);
    }
    let ivy = json!({"user_id": "ivy_pell_7754", "origin": "BOS", "destination": "SEA",
        "flight_type": "one_way", "cabin": "basic_economy",
        "flights": [{"flight_number": "HAT502", "date": "2024-05-16"}],
        "passengers": [{"first_name": "Ivy", "last_name": "Pell", "dob": "1999-05-16"}],
        "payment_methods": [{"payment_id": "gift_card_3000001", "amount": 99}],
        "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"});
    assert_eq!(
        err(&mut db, "book_reservation", ivy),
        "Error: not enough balance in payment method gift_card_3000001"
    );
}

#[test]
fn cancel_reservation_reverses_every_payment() {
    let mut db = fixture();
    let v = ok(
        &mut db,
        "cancel_reservation",
        json!({"reservation_id": "MB4K9Z"}),
    );
    assert_eq!(v["status"], "cancelled");
    assert_eq!(
        v["payment_history"],
        json!([{"payment_id": "gift_card_1000002", "amount": 100},
               {"payment_id": "credit_card_1000001", "amount": 1600},
               {"payment_id": "gift_card_1000002", "amount": -100},
               {"payment_id": "credit_card_1000001", "amount": -1600}])
    );
    let e = err(
        &mut db,
        "cancel_reservation",
        json!({"reservation_id": "ZZZZZZ"}),
    );
    assert_eq!(e, "Error: reservation not found");
}

#[test]
fn update_reservation_baggages_charges_new_paid_bags() {
    let mut db = fixture();
    let v = ok(
        &mut db,
        "update_reservation_baggages",
        json!({"reservation_id": "QX7P2L", "total_baggages": 5, "nonfree_baggages": 2, "payment_id": "credit_card_1000001"}),
    );
    assert_eq!(v["total_baggages"], 5);
    assert_eq!(
        v["payment_history"][1],
        json!({"payment_id": "credit_card_1000001", "amount": 100})
    );
    // Same paid bags: nothing charged, no payment line.
    let v = ok(
        &mut db,
        "update_reservation_baggages",
        json!({"reservation_id": "QX7P2L", "total_baggages": 6, "nonfree_baggages": 2, "payment_id": "gift_card_1000002"}),
    );
    assert_eq!(v["payment_history"].as_array().unwrap().len(), 2);
    let base = |pid: &str, nonfree: i64| json!({"reservation_id": "QX7P2L", "total_baggages": 9, "nonfree_baggages": nonfree, "payment_id": pid});
    assert_eq!(
        err(
            &mut db,
            "update_reservation_baggages",
            base("gift_card_1000002", 5)
        ),
        "Error: gift card balance is not enough"
    );
    assert_eq!(
        err(
            &mut db,
            "update_reservation_baggages",
            base("certificate_1000003", 3)
        ),
        "Error: certificate cannot be used to update reservation"
    );
    assert_eq!(
        err(
            &mut db,
            "update_reservation_baggages",
            base("credit_card_2000001", 3)
        ),
        "Error: payment method not found"
    );
    let mut missing = base("credit_card_1000001", 3);
    missing["reservation_id"] = json!("NOPE00");
    assert_eq!(
        err(&mut db, "update_reservation_baggages", missing),
        "Error: reservation not found"
    );
}

#[test]
fn update_reservation_flights_prices_the_difference() {
    let mut db = fixture();
    // Another nonstop on the same day: 199 instead of 180.
    let v = ok(
        &mut db,
        "update_reservation_flights",
        json!({"reservation_id": "QX7P2L", "cabin": "economy",
            "flights": [{"flight_number": "HAT505", "date": "2024-05-16"}], "payment_id": "credit_card_1000001"}),
    );
    assert_eq!(v["flights"][0]["flight_number"], "HAT505");
    assert_eq!(
        v["payment_history"][1],
        json!({"payment_id": "credit_card_1000001", "amount": 19})
    );
    // Downgrade a business round trip on the same flights: refund (140 + 131 - 820) x 2
    // to the gift card.
    let v = ok(
        &mut db,
        "update_reservation_flights",
        json!({"reservation_id": "MB4K9Z", "cabin": "economy",
            "flights": [{"flight_number": "HAT503", "date": "2024-05-16"}, {"flight_number": "HAT504", "date": "2024-05-17"}],
            "payment_id": "gift_card_1000002"}),
    );
    assert_eq!(v["cabin"], "economy");
    assert_eq!(v["payment_history"][2]["amount"], json!(-1098));
    let gift = &db.users.get("nora_quill_4821").unwrap().payment_methods["gift_card_1000002"];
    assert_eq!(gift.amount, Some(Money(122_550)));
    // Keeping the same flights and cabin costs nothing.
    let v = ok(
        &mut db,
        "update_reservation_flights",
        json!({"reservation_id": "MB4K9Z", "cabin": "economy",
            "flights": [{"flight_number": "HAT503", "date": "2024-05-16"}, {"flight_number": "HAT504", "date": "2024-05-17"}],
            "payment_id": "credit_card_1000001"}),
    );
    assert_eq!(v["payment_history"].as_array().unwrap().len(), 3);

    let change = |flight: &str, date: &str, pid: &str| {
        json!({"reservation_id": "QX7P2L", "cabin": "business",
            "flights": [{"flight_number": flight, "date": date}], "payment_id": pid})
    };
    let cases = [
        (
            change("HAT777", "2024-05-16", "credit_card_1000001"),
            "Error: flight HAT777 not found",
        ),
        (
            change("HAT501", "2024-05-15", "credit_card_1000001"),
            "Error: flight HAT501 not available on date 2024-05-15",
        ),
        (
            change("HAT505", "2024-05-16", "credit_card_1000001"),
            "Error: not enough seats on flight HAT505",
        ),
        (
            change("HAT501", "2024-05-17", "certificate_1000003"),
            "Error: certificate cannot be used to update reservation",
        ),
        (
            change("HAT501", "2024-05-17", "credit_card_404"),
            "Error: payment method not found",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(err(&mut db, "update_reservation_flights", args), want);
    }
}

#[test]
fn update_reservation_passengers_keeps_the_count() {
    let mut db = fixture();
    let p = json!([{"first_name": "Ada", "last_name": "Quill", "dob": "1960-01-01"}]);
    let v = ok(
        &mut db,
        "update_reservation_passengers",
        json!({"reservation_id": "QX7P2L", "passengers": p}),
    );
    assert_eq!(v["passengers"], p);
    let two = json!([p[0], p[0]]);
    assert_eq!(
        err(
            &mut db,
            "update_reservation_passengers",
            json!({"reservation_id": "QX7P2L", "passengers": two})
        ),
        "Error: number of passengers does not match"
    );
    assert_eq!(
        err(
            &mut db,
            "update_reservation_passengers",
            json!({"reservation_id": "X", "passengers": p})
        ),
        "Error: reservation not found"
    );
}

#[test]
fn send_certificate_adds_numbered_certificates() {
    let mut db = fixture();
    let out = call(
        &mut db,
        "send_certificate",
        json!({"user_id": "nora_quill_4821", "amount": 100}),
    );
    assert_eq!(
        out.text,
        "Certificate certificate_3221322 added to user nora_quill_4821 with amount 100."
    );
    let out = call(
        &mut db,
        "send_certificate",
        json!({"user_id": "nora_quill_4821", "amount": 50}),
    );
    assert!(out.text.contains("certificate_3221323"), "{}", out.text);
    let m = &db.users.get("nora_quill_4821").unwrap().payment_methods["certificate_3221323"];
    assert_eq!(
        (m.source.as_str(), m.amount),
        ("certificate", Some(Money(5000)))
    );
    assert_eq!(
        err(
            &mut db,
            "send_certificate",
            json!({"user_id": "ghost", "amount": 50})
        ),
        "Error: user not found"
    );
}

// ---------------------------------------------------------------- import / export

#[test]
fn tau_bench_round_trip_is_identical_json() {
    let env = Airline.import_tau_bench(&fixture_dir()).expect("imports");
    let exported = env.to_tau_bench();
    assert_eq!(exported.len(), 3);
    for stem in tau_bench::FILES {
        let text = std::fs::read_to_string(fixture_dir().join(format!("{stem}.json"))).unwrap();
        let original: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            exported[stem], original,
            "{stem}.json differs after round trip"
        );
    }
    let tables = env.tables();
    let names: Vec<&str> = tables.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["flights", "reservations", "users"]);
    assert_eq!(tables[1].1.len(), 4);
}

#[test]
fn generated_database_round_trips_through_tau_bench_files() {
    let db = generate::generate(3);
    let dir = std::env::temp_dir().join(format!("tracer-airline-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (stem, v) in Database::to_tau_bench(&db) {
        std::fs::write(dir.join(format!("{stem}.json")), v.to_string()).unwrap();
    }
    let back = tau_bench::import(&dir).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(Database::state_hash(&back), Database::state_hash(&db));
}

#[test]
fn import_errors_name_the_file_and_row() {
    let dir = std::env::temp_dir().join(format!("tracer-airline-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for stem in ["flights", "users"] {
        std::fs::copy(
            fixture_dir().join(format!("{stem}.json")),
            dir.join(format!("{stem}.json")),
        )
        .unwrap();
    }
    std::fs::write(
        dir.join("reservations.json"),
        r#"{"R1": {"reservation_id": 3}}"#,
    )
    .unwrap();
    let e = Airline
        .import_tau_bench(&dir)
        .err()
        .expect("must fail")
        .to_string();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        e.contains("reservations.json") && e.contains("row 'R1'"),
        "{e}"
    );
}

#[test]
fn fixture_tasks_replay_without_errors() {
    let text = std::fs::read_to_string(fixture_dir().join("tasks.json")).unwrap();
    let tasks: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(tasks.len(), 2);
    for task in tasks {
        let mut db = fixture();
        for action in task["actions"].as_array().unwrap() {
            let name = action["name"].as_str().unwrap();
            assert_eq!(check_policy(&db, name, &action["kwargs"]), Ok(()));
            ok(&mut db, name, action["kwargs"].clone());
        }
    }
}

fn check_policy(db: &AirlineDb, tool: &str, args: &Value) -> Result<(), String> {
    Hooks::check_policy(db, tool, args).map_err(|v| v.to_string())
}

// ---------------------------------------------------------------- generator

#[test]
fn generator_has_paper_scale_and_resolving_references() {
    let db = &*GENERATED;
    assert_eq!(db.users.len(), 500);
    assert_eq!(db.flights.len(), 300);
    assert_eq!(db.reservations.len(), 2000);
    let clock = CLOCK.seconds();
    let mut recent_future = 0;
    for (id, r) in db.reservations.iter() {
        assert_eq!(id, r.reservation_id);
        assert!(!id.starts_with("HAT"));
        let user = db.users.get(&r.user_id).expect("owner exists");
        assert!(user.reservations.iter().any(|x| x == id));
        assert!((1..=5).contains(&r.passengers.len()));
        for p in &r.payment_history {
            let m = user
                .payment_methods
                .get(&p.payment_id)
                .expect("payment method exists");
            assert!(m.source == "credit_card" || m.source == "gift_card");
        }
        let paid: Money = r.payment_history.iter().map(|p| p.amount).sum();
        assert_eq!(paid == Money(0), r.is_cancelled());
        let created = parse_datetime(&r.created_at).unwrap();
        assert!(created < clock, "{id} booked after the clock");
        let mut prev_dest: Option<&str> = None;
        for s in &r.flights {
            let f = db.flights.get(&s.flight_number).expect("flight exists");
            assert!(
                f.dates.contains_key(&s.date),
                "{id}: {} on {}",
                s.flight_number,
                s.date
            );
            assert_eq!(
                (f.origin.as_str(), f.destination.as_str()),
                (s.origin.as_str(), s.destination.as_str())
            );
            if let Some(d) = prev_dest {
                assert_eq!(d, s.origin, "{id}: segments chain");
            }
            prev_dest = Some(&s.destination);
            assert!(parse_datetime(&format!("{}T23:59:59", s.date)).unwrap() > created);
        }
        assert_eq!(r.flights[0].origin, r.origin);
        if r.flights[0].date.as_str() > CLOCK.today() && clock - created < 86_400 {
            recent_future += 1;
        }
    }
    assert!(
        recent_future > 100,
        "only {recent_future} cancellable-by-24h reservations"
    );
    for (uid, u) in db.users.iter() {
        for rid in &u.reservations {
            assert_eq!(db.reservations.get(rid).unwrap().user_id, uid);
        }
        assert!(
            u.payment_methods
                .values()
                .any(|m| m.source != "certificate")
        );
        for (k, m) in &u.payment_methods {
            assert_eq!(k, &m.id);
            assert!(m.balance() >= Money(0));
            assert_eq!(m.amount.is_some(), m.source != "credit_card");
        }
    }
}

#[test]
fn generated_flight_statuses_follow_the_clock() {
    let db = &*GENERATED;
    let clock = CLOCK.seconds();
    let mut seen = std::collections::BTreeSet::new();
    for (_, f) in db.flights.iter() {
        assert_eq!(f.dates.len(), 30);
        for (date, d) in &f.dates {
            seen.insert(d.status.clone());
            let s = d.status.as_str();
            if date.as_str() > CLOCK.today() {
                assert_eq!(s, "available");
                assert!(d.prices.is_some() && d.available_seats.is_some());
            } else {
                assert!(d.prices.is_none());
            }
            if date.as_str() < CLOCK.today() {
                assert!(s == "landed" || s == "cancelled", "{date}: {s}");
            }
            let t = |x: &Option<String>| x.as_deref().and_then(parse_datetime);
            match s {
                "landed" => assert!(t(&d.actual_arrival_time_est).unwrap() <= clock),
                "flying" => {
                    assert!(t(&d.actual_departure_time_est).unwrap() <= clock);
                    assert!(t(&d.estimated_arrival_time_est).unwrap() > clock);
                }
                "on time" | "delayed" => {
                    assert!(t(&d.estimated_departure_time_est).unwrap() > clock)
                }
                _ => {}
            }
        }
    }
    for s in [
        "landed",
        "flying",
        "on time",
        "delayed",
        "cancelled",
        "available",
    ] {
        assert!(seen.contains(s), "no flight date is {s}");
    }
}

#[test]
fn generation_is_deterministic_per_seed() {
    let a = Airline.generate(7, Split::Eval);
    let b = Airline.generate(7, Split::Train);
    let c = Airline.generate(8, Split::Eval);
    assert_eq!(a.state_hash(), b.state_hash());
    assert_eq!(a.state_hash(), Database::state_hash(&*GENERATED));
    assert_ne!(a.state_hash(), c.state_hash());
    assert_eq!(a.customers(), b.customers());
    assert_eq!(a.customers().len(), 500);
}

#[test]
fn a_write_on_a_fork_leaves_the_original_untouched() {
    let original = Airline.generate(7, Split::Eval);
    let before = original.state_hash();
    let mut fork = original.fork();
    let user = original.customers()[0].clone();
    let out = fork.invoke("send_certificate", &json!({"user_id": user, "amount": 100}));
    assert!(!out.is_error, "{}", out.text);
    assert_ne!(fork.state_hash(), before);
    assert_eq!(original.state_hash(), before);
    let out = original
        .fork()
        .invoke("get_user_details", &json!({"user_id": user}));
    assert!(!out.text.contains("certificate_3221322"));
}

// ---------------------------------------------------------------- policy

#[test]
fn policy_rules_reject_crafted_violations() {
    let mut db = fixture();
    let rejects = |db: &AirlineDb, tool: &str, args: Value, rule: &str| {
        let e = check_policy(db, tool, &args).expect_err(tool);
        assert!(e.contains(rule), "{tool}: expected '{rule}' in '{e}'");
    };
    // Cancellation.
    assert_eq!(
        check_policy(
            &db,
            "cancel_reservation",
            &json!({"reservation_id": "MB4K9Z"})
        ),
        Ok(())
    );
    rejects(
        &db,
        "cancel_reservation",
        json!({"reservation_id": "QX7P2L"}),
        "within 24 hours",
    );
    rejects(
        &db,
        "cancel_reservation",
        json!({"reservation_id": "ZT81WD"}),
        "flown",
    );
    rejects(
        &db,
        "cancel_reservation",
        json!({"reservation_id": "CANC01"}),
        "already cancelled",
    );
    // Flight changes.
    let change = |id: &str, cabin: &str, flights: Value, pid: &str| json!({"reservation_id": id, "cabin": cabin, "flights": flights, "payment_id": pid});
    let hat505 = json!([{"flight_number": "HAT505", "date": "2024-05-16"}]);
    assert_eq!(
        check_policy(
            &db,
            "update_reservation_flights",
            &change("QX7P2L", "economy", hat505.clone(), "credit_card_1000001")
        ),
        Ok(())
    );
    rejects(
        &db,
        "update_reservation_flights",
        change(
            "QX7P2L",
            "economy",
            json!([{"flight_number": "HAT502", "date": "2024-05-16"}]),
            "credit_card_1000001",
        ),
        "origin, destination and trip type",
    );
    rejects(
        &db,
        "update_reservation_flights",
        change("QX7P2L", "economy", hat505.clone(), "certificate_1000003"),
        "not a certificate",
    );
    rejects(
        &db,
        "update_reservation_flights",
        change("CANC01", "economy", hat505.clone(), "credit_card_2000001"),
        "cancelled reservation",
    );
    let mut basic = db.clone();
    basic.reservations.get_mut("QX7P2L").unwrap().cabin = "basic_economy".into();
    rejects(
        &basic,
        "update_reservation_flights",
        change("QX7P2L", "basic_economy", hat505, "credit_card_1000001"),
        "basic economy",
    );
    let same = json!([{"flight_number": "HAT501", "date": "2024-05-16"}]);
    assert_eq!(
        check_policy(
            &basic,
            "update_reservation_flights",
            &change("QX7P2L", "economy", same, "credit_card_1000001")
        ),
        Ok(()),
        "a basic economy cabin may still be upgraded"
    );
    let mut flown = db.clone();
    flown.reservations.get_mut("QX7P2L").unwrap().flights[0].date = "2024-05-14".into();
    rejects(
        &flown,
        "update_reservation_flights",
        change(
            "QX7P2L",
            "economy",
            json!([{"flight_number": "HAT501", "date": "2024-05-17"}]),
            "credit_card_1000001",
        ),
        "flown segment",
    );
    // Baggage.
    let bags = |total: i64, nonfree: i64| json!({"reservation_id": "QX7P2L", "total_baggages": total, "nonfree_baggages": nonfree, "payment_id": "credit_card_1000001"});
    assert_eq!(
        check_policy(&db, "update_reservation_baggages", &bags(4, 1)),
        Ok(())
    );
    rejects(
        &db,
        "update_reservation_baggages",
        bags(0, 0),
        "not removed",
    );
    rejects(
        &db,
        "update_reservation_baggages",
        bags(2, 1),
        "paid bags must be 0",
    );
    // Passengers.
    rejects(
        &db,
        "update_reservation_passengers",
        json!({"reservation_id": "MB4K9Z", "passengers": [{"first_name": "A", "last_name": "B", "dob": "2000-01-01"}]}),
        "number of passengers",
    );
    rejects(
        &db,
        "update_reservation_passengers",
        json!({"reservation_id": "ZT81WD", "passengers": [{"first_name": "A", "last_name": "B", "dob": "2000-01-01"}]}),
        "already flown",
    );
    // Booking.
    let mut six = theo_booking();
    six["passengers"] = json!(vec![six["passengers"][0].clone(); 6]);
    rejects(&db, "book_reservation", six, "one to five");
    let mut bags_wrong = theo_booking();
    bags_wrong["total_baggages"] = json!(3);
    rejects(&db, "book_reservation", bags_wrong, "paid bags must be 2");
    let mut wrong_route = theo_booking();
    wrong_route["destination"] = json!("MIA");
    rejects(&db, "book_reservation", wrong_route, "must match the trip");
    let mut two_cards = theo_booking();
    two_cards["payment_methods"] = json!([{"payment_id": "credit_card_2000001", "amount": 100},
                                          {"payment_id": "credit_card_2000002", "amount": 50}]);
    let mut theo = db.users.get("theo_marsh_3310").unwrap().clone();
    let mut card = theo.payment_methods["credit_card_2000001"].clone();
    card.id = "credit_card_2000002".into();
    theo.payment_methods.insert(card.id.clone(), card);
    db.users.insert("theo_marsh_3310".into(), theo);
    rejects(&db, "book_reservation", two_cards, "one credit card");
    // Compensation.
    rejects(
        &db,
        "send_certificate",
        json!({"user_id": "theo_marsh_3310", "amount": 100}),
        "certificates only",
    );
    rejects(
        &db,
        "send_certificate",
        json!({"user_id": "nora_quill_4821", "amount": 75}),
        "per passenger",
    );
    assert_eq!(
        check_policy(
            &db,
            "send_certificate",
            &json!({"user_id": "nora_quill_4821", "amount": 200})
        ),
        Ok(())
    );
}

// ---------------------------------------------------------------- grounding

#[test]
fn observe_learns_reservations_and_proposals_use_them() {
    let db = &*GENERATED;
    let user = db
        .users
        .iter()
        .find(|(_, u)| u.reservations.len() >= 3)
        .map(|(id, _)| id.to_string())
        .unwrap();
    let mut ctx = GroundingContext::for_user(&user);
    let out = db
        .clone()
        .invoke("get_user_details", &json!({"user_id": user}));
    Hooks::observe(
        db,
        "get_user_details",
        &json!({"user_id": user}),
        &out.text,
        &mut ctx,
    );
    let own = &db.users.get(&user).unwrap().reservations;
    assert_eq!(ctx.values("reservation_id"), own.as_slice());
    assert!(!ctx.values("payment_id").is_empty());
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let props = Hooks::propose_calls(db, "get_reservation_details", &ctx, &mut rng);
    assert_eq!(props[0], json!({"reservation_id": own[0]}));

    // A search reveals flights; the booking proposal books one of them.
    let search = ground::propose_calls(db, "search_direct_flight", &ctx, &mut rng);
    let args = search.first().expect("a search proposal").clone();
    let out = db.clone().invoke("search_direct_flight", &args);
    let mut ctx2 = GroundingContext::for_user(&user);
    Hooks::observe(db, "search_direct_flight", &args, &out.text, &mut ctx2);
    let found = ctx2.values("flight_number").to_vec();
    assert!(!found.is_empty());
    let books = ground::propose_calls(db, "book_reservation", &ctx2, &mut rng);
    let first = books.first().expect("a booking proposal");
    assert!(
        found.contains(
            &first["flights"][0]["flight_number"]
                .as_str()
                .unwrap()
                .to_string()
        )
    );
}

#[test]
fn proposals_are_deterministic_for_the_rng_state() {
    let db = &*GENERATED;
    let ctx = GroundingContext::for_user(&Hooks::customers(db)[3]);
    for tool in [
        "book_reservation",
        "search_onestop_flight",
        "update_reservation_flights",
    ] {
        let a = ground::propose_calls(db, tool, &ctx, &mut ChaCha8Rng::seed_from_u64(9));
        let b = ground::propose_calls(db, tool, &ctx, &mut ChaCha8Rng::seed_from_u64(9));
        assert_eq!(a, b, "{tool}");
        assert!(a.len() <= 8);
    }
}

#[test]
fn every_tool_has_a_succeeding_proposal_for_most_customers() {
    let db = &*GENERATED;
    let customers: Vec<String> = Hooks::customers(db).into_iter().take(20).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    for spec in Airline.tool_specs() {
        let mut served = 0;
        for c in &customers {
            let ctx = GroundingContext::for_user(c);
            let props = Hooks::propose_calls(db, spec.name, &ctx, &mut rng);
            let good = props.iter().any(|p| {
                let out = db.fork().invoke(spec.name, p);
                !out.is_error && check_policy(db, spec.name, p).is_ok()
            });
            served += usize::from(good);
        }
        // Customers without reservations cannot change one; every tool must still serve most.
        let need = match spec.name {
            "cancel_reservation" | "send_certificate" => 8,
            _ => 14,
        };
        assert!(
            served >= need,
            "{}: only {served} of 20 customers have a succeeding proposal",
            spec.name
        );
    }
}

// ---------------------------------------------------------------- refinement hooks

fn norm(s: &str) -> String {
    s.to_lowercase().replace('_', " ")
}

fn string_leaves(path: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::String(s) => out.push((path.to_string(), s.clone())),
        Value::Array(items) => items.iter().for_each(|x| string_leaves(path, x, out)),
        Value::Object(m) => {
            for (k, x) in m {
                string_leaves(k, x, out);
            }
        }
        _ => {}
    }
}

#[test]
fn user_facts_start_with_identity_and_describe_payments_by_what_customers_know() {
    let db = &*GENERATED;
    let (user_id, user) = db
        .users
        .iter()
        .find(|(_, u)| {
            u.payment_methods
                .values()
                .any(|m| m.source == "credit_card")
                && u.payment_methods.values().any(|m| m.source == "gift_card")
        })
        .map(|(id, u)| (id.to_string(), u.clone()))
        .expect("a customer with a card and a gift card");
    let facts = Hooks::user_facts(db, &user_id);
    assert_eq!(facts[0].kind, "identity");
    assert_eq!(facts[0].values, vec![user_id.clone()]);
    assert_eq!(facts[0].text, format!("Your user id is {user_id}."));
    assert_eq!(facts[1].kind, "name");
    assert!(facts[1].text.contains(&user.name.last_name));
    for m in user.payment_methods.values() {
        let fact = facts
            .iter()
            .find(|f| f.ids == vec![m.id.clone()])
            .unwrap_or_else(|| panic!("no fact resolves {}", m.id));
        assert_eq!(fact.kind, "payment");
        assert!(fact.text.starts_with("You have a"), "{}", fact.text);
        assert!(!fact.text.contains(&m.id), "{} leaks its id", fact.text);
        for v in &fact.values {
            assert!(fact.text.contains(v.as_str()));
        }
        if m.source == "credit_card" {
            let last = m.last_four.clone().unwrap();
            assert!(
                fact.text.contains(&format!("credit card ending in {last}")),
                "{}",
                fact.text
            );
            assert_eq!(fact.values, vec![last]);
        }
        if m.source == "gift_card" {
            assert!(fact.text.contains("gift card"), "{}", fact.text);
            assert!(fact.text.contains("balance"), "{}", fact.text);
        }
    }
    // Reservation codes are printed on confirmations: stated as values, not internal ids.
    if !user.reservations.is_empty() {
        let entity = facts.iter().find(|f| f.kind == "entity").unwrap();
        assert_eq!(entity.values, user.reservations);
        assert!(entity.ids.is_empty());
    }
    assert!(Hooks::user_facts(db, "nobody_0000").is_empty());
}

/// For each write tool: a proposed call for some customer, its output, and the state before.
fn write_examples() -> Vec<(String, Value, String, AirlineDb)> {
    let db = &*GENERATED;
    let mut out = Vec::new();
    for tool in [
        "book_reservation",
        "cancel_reservation",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
    ] {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut found = 0;
        for c in Hooks::customers(db).iter().take(60) {
            let ctx = GroundingContext::for_user(c);
            let Some(args) = ground::propose_calls(db, tool, &ctx, &mut rng)
                .into_iter()
                .next()
            else {
                continue;
            };
            let output = db.clone().invoke(tool, &args);
            assert!(!output.is_error, "{tool}: {}", output.text);
            out.push((tool.to_string(), args, output.text, db.clone()));
            found += 1;
            if found == 4 {
                break;
            }
        }
        assert!(found > 0, "no proposal for {tool}");
    }
    out
}

#[test]
fn describe_request_states_every_value_a_write_needs_and_no_internal_id() {
    for (tool, args, output, db) in write_examples() {
        let text = Hooks::describe_request(&db, &tool, &args, &output)
            .unwrap_or_else(|| panic!("{tool}: no request sentence"));
        let t = norm(&text);
        assert!(
            t.starts_with("you ") || t.contains(" you "),
            "{tool}: {text}"
        );
        let internal = Hooks::internal_ids(&db, &tool, &args);
        for id in &internal {
            assert!(!text.contains(id.as_str()), "{tool} leaks {id}: {text}");
        }
        // Every string argument is in the sentence, except the user id (authentication),
        // internal ids (resolved through the stated payment fact) and values the customer's
        // own records already hold (kept flights, unchanged passengers).
        let records = Hooks::customer_records(
            &db,
            db.reservations
                .get(args["reservation_id"].as_str().unwrap_or(""))
                .map(|r| r.user_id.as_str())
                .or(args["user_id"].as_str())
                .unwrap(),
        )
        .join("\n");
        let mut leaves = Vec::new();
        string_leaves("", &args, &mut leaves);
        for (key, value) in leaves {
            if key == "user_id" || internal.contains(&value) {
                continue;
            }
            assert!(
                t.contains(&norm(&value)) || records.contains(&value),
                "{tool}: '{key}' = '{value}' missing from: {text}"
            );
        }
        // The payment method is named by what the customer knows (its last digits).
        let owner = match args["user_id"].as_str() {
            Some(u) => u.to_string(),
            None => db
                .reservations
                .get(args["reservation_id"].as_str().unwrap())
                .unwrap()
                .user_id
                .clone(),
        };
        let facts = Hooks::user_facts(&db, &owner);
        for id in &internal {
            let fact = facts.iter().find(|f| f.ids.contains(id)).unwrap();
            assert!(
                fact.values.iter().all(|v| text.contains(v.as_str())),
                "{tool}: payment {id} not described in: {text}"
            );
        }
        match tool.as_str() {
            "book_reservation" => {
                let ins = args["insurance"].as_str().unwrap();
                assert!(t.contains(&format!("you say {ins}")), "{text}");
                let bags = args["total_baggages"].as_i64().unwrap();
                assert!(
                    bags == 0 && t.contains("no checked bags") || t.contains(&bags.to_string()),
                    "{text}"
                );
            }
            "cancel_reservation" => assert!(t.contains("because"), "{text}"),
            "update_reservation_baggages" => {
                let total = args["total_baggages"].as_i64().unwrap();
                assert!(t.contains(&format!("{total} checked bag")), "{text}");
            }
            _ => {}
        }
    }
}

#[test]
fn describe_request_leaves_agent_lookups_unasked() {
    let db = &*GENERATED;
    let user = Hooks::customers(db)[0].clone();
    let args = json!({"user_id": user});
    let out = db.clone().invoke("get_user_details", &args);
    assert_eq!(
        Hooks::describe_request(db, "get_user_details", &args, &out.text),
        None
    );
    let rid = db.users.get(&user).unwrap().reservations[0].clone();
    let args = json!({"reservation_id": rid});
    let out = db.clone().invoke("get_reservation_details", &args);
    let text = Hooks::describe_request(db, "get_reservation_details", &args, &out.text)
        .expect("a customer asks about their reservation");
    assert!(text.contains(&rid), "{text}");
}

#[test]
fn internal_ids_are_the_payment_ids_of_payment_bearing_calls() {
    for (tool, args, _, db) in write_examples() {
        let ids = Hooks::internal_ids(&db, &tool, &args);
        let expected: Vec<String> = match tool.as_str() {
            "book_reservation" => args["payment_methods"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["payment_id"].as_str().unwrap().to_string())
                .collect(),
            "update_reservation_baggages" | "update_reservation_flights" => {
                vec![args["payment_id"].as_str().unwrap().to_string()]
            }
            _ => Vec::new(),
        };
        assert_eq!(ids, expected, "{tool}");
    }
    let db = &*GENERATED;
    assert!(
        Hooks::internal_ids(
            db,
            "get_reservation_details",
            &json!({"reservation_id": "ABC123"})
        )
        .is_empty()
    );
}

#[test]
fn required_outputs_of_reads_are_literal_values_of_the_output() {
    let db = &*GENERATED;
    let r = db
        .reservations
        .iter()
        .map(|(_, r)| r)
        .find(|r| !r.is_cancelled())
        .unwrap();
    let args = json!({"reservation_id": r.reservation_id});
    let out = db.clone().invoke("get_reservation_details", &args).text;
    let req = Hooks::required_outputs(db, "get_reservation_details", &args, &out);
    // Every flight's number and date, each once.
    let mut told: Vec<String> = Vec::new();
    for f in &r.flights {
        for x in [&f.flight_number, &f.date] {
            if !told.contains(x) {
                told.push(x.clone());
            }
        }
    }
    assert_eq!(req, told);
    assert!(req.iter().all(|v| out.contains(v.as_str())));
    // A cancelled reservation: the agent must say so.
    let cancelled = db
        .reservations
        .iter()
        .map(|(_, r)| r)
        .find(|r| r.is_cancelled());
    if let Some(c) = cancelled {
        let args = json!({"reservation_id": c.reservation_id});
        let out = db.clone().invoke("get_reservation_details", &args).text;
        assert_eq!(
            Hooks::required_outputs(db, "get_reservation_details", &args, &out),
            vec!["cancelled".to_string()]
        );
    }
    // A search: flight numbers (and the cheapest fare for long lists) found in the output.
    let ctx = GroundingContext::for_user(&Hooks::customers(db)[0]);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for tool in ["search_direct_flight", "search_onestop_flight"] {
        let args = ground::propose_calls(db, tool, &ctx, &mut rng)[0].clone();
        let out = db.clone().invoke(tool, &args).text;
        let req = Hooks::required_outputs(db, tool, &args, &out);
        assert!(!req.is_empty(), "{tool}");
        for v in &req {
            assert!(out.contains(v.as_str()), "{tool}: {v} not in output");
        }
        let text = Hooks::describe_request(db, tool, &args, &out).unwrap();
        for key in ["origin", "destination", "date"] {
            assert!(text.contains(args[key].as_str().unwrap()), "{text}");
        }
    }
    // Writes carry no required outputs.
    assert!(Hooks::required_outputs(db, "cancel_reservation", &args, "{}").is_empty());
}

#[test]
fn customer_records_are_the_profile_and_every_reservation() {
    let db = &*GENERATED;
    let user = Hooks::customers(db)[1].clone();
    let records = Hooks::customer_records(db, &user);
    let u = db.users.get(&user).unwrap();
    assert_eq!(records.len(), 1 + u.reservations.len());
    assert_eq!(
        records[0],
        db.clone()
            .invoke("get_user_details", &json!({"user_id": user}))
            .text
    );
    for (rid, rec) in u.reservations.iter().zip(&records[1..]) {
        assert!(rec.contains(&format!("\"reservation_id\":\"{rid}\"")));
    }
}

#[test]
fn a_later_write_prefers_a_reservation_not_yet_changed() {
    let db = &*GENERATED;
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut checked = 0;
    for c in Hooks::customers(db).iter().take(80) {
        let ctx = GroundingContext::for_user(c);
        let Some(first) =
            ground::propose_calls(db, "update_reservation_passengers", &ctx, &mut rng)
                .into_iter()
                .next()
        else {
            continue;
        };
        let mut state = db.clone();
        let out = state.invoke("update_reservation_passengers", &first);
        let mut ctx2 = ctx.clone();
        Hooks::observe(
            &state,
            "update_reservation_passengers",
            &first,
            &out.text,
            &mut ctx2,
        );
        let next = ground::propose_calls(&state, "update_reservation_passengers", &ctx2, &mut rng);
        let others = next
            .iter()
            .any(|a| a["reservation_id"] != first["reservation_id"]);
        if others {
            assert_ne!(next[0]["reservation_id"], first["reservation_id"], "{c}");
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} customers exercised");
}

// ---------------------------------------------------------------- the authors' gold tasks (opt-in)

/// Replays every gold task of tau-emotion-bench's airline (test + train) on their database
/// and compares each output and each task's final state with the authors' own tools. Every
/// output that differs must be covered by a departure of the differential fixture
/// (`tests/fixtures/reference/airline/departures.json`); every final state that differs
/// must be one of two documented departures (docs/domains/airline.md):
/// `update_reservation_flights` records a new cabin (the state then differs in `cabin`
/// only), and segments carrying keys the schema does not declare (`origin`, `destination`,
/// `price`, which the reference overwrites) are refused.
/// Prepare the directory with `scripts/reference/gold.sh airline <teb checkout> <dir>`, then
/// `TRACER_AIRLINE_GOLD_DIR=<dir> cargo test --lib airline::tests::gold -- --ignored --nocapture`.
#[test]
#[ignore = "needs the reference's data and gold replay (see doc comment)"]
fn gold_tasks_replay_like_the_reference() {
    use crate::domain::reference::{Departure, outputs_equal, same_state_except};
    let dir = PathBuf::from(
        std::env::var("TRACER_AIRLINE_GOLD_DIR").expect("set TRACER_AIRLINE_GOLD_DIR"),
    );
    let jsonl = |name: String| -> Vec<Value> {
        std::fs::read_to_string(dir.join(&name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let export = |db: &AirlineDb| -> Value {
        Value::Object(Database::to_tau_bench(db).into_iter().collect())
    };
    let cabin = ["cabin".to_string()];
    let departures: Vec<Departure> = serde_json::from_str(
        &std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/reference/airline/departures.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut departed = std::collections::BTreeMap::<String, usize>::new();
    let base = tau_bench::import(&dir.join("data")).unwrap();
    let initial = export(&base);
    let mut failures = Vec::new();
    for split in ["test", "train"] {
        let calls = jsonl(format!("calls_{split}.jsonl"));
        let expected = jsonl(format!("expected_{split}.jsonl"));
        assert_eq!(calls.len(), expected.len());
        let (mut same, mut cabin_tasks, mut refused_tasks) = (0, 0, 0);
        let (mut ours_ok, mut theirs_ok) = (0, 0);
        for (i, (seq, exp)) in calls.iter().zip(&expected).enumerate() {
            let mut db = base.clone();
            let (mut cabin_changed, mut refused) = (false, false);
            let (mut all_ours, mut all_theirs) = (true, true);
            for (j, c) in seq.as_array().unwrap().iter().enumerate() {
                let tool = c["name"].as_str().unwrap();
                let before = db
                    .reservations
                    .get(arg_str(&c["kwargs"], "reservation_id"))
                    .cloned();
                let ours = Environment::invoke(&mut db, tool, &c["kwargs"]).text;
                let theirs = exp["outputs"][j].as_str().unwrap();
                if tool == "update_reservation_flights"
                    && before.is_some_and(|r| r.cabin != arg_str(&c["kwargs"], "cabin"))
                    && !ours.starts_with("Error")
                {
                    cabin_changed = true;
                }
                all_ours &= !ours.starts_with("Error");
                all_theirs &= !theirs.starts_with("Error");
                if ours.starts_with("Error: unexpected argument 'flights[") {
                    refused = true;
                }
                if outputs_equal(&ours, theirs) || refused {
                    continue;
                }
                if departures.iter().any(|d| d.covers(tool, &ours, theirs)) {
                    *departed.entry(tool.to_string()).or_default() += 1;
                } else {
                    failures.push(format!(
                        "{split} #{i} call {j} {tool}: ours {ours} | theirs {theirs}"
                    ));
                }
            }
            ours_ok += usize::from(all_ours);
            theirs_ok += usize::from(all_theirs);
            let after = export(&db);
            if same_state_except(&initial, &after, &exp["changed"], &[]) {
                same += 1;
            } else if cabin_changed && same_state_except(&initial, &after, &exp["changed"], &cabin)
            {
                cabin_tasks += 1;
            } else if refused {
                refused_tasks += 1;
            } else {
                failures.push(format!("{split} #{i}: final state differs"));
            }
        }
        eprintln!(
            "{split}: {} tasks; final state equal {same}; equal but for the recorded cabin \
             {cabin_tasks}; a gold call refused for undeclared segment keys {refused_tasks}; \
             every gold action succeeds: ours {ours_ok}, reference {theirs_ok}",
            calls.len()
        );
    }
    eprintln!("outputs that differ as documented departures: {departed:?}");
    assert!(
        failures.is_empty(),
        "{} unexplained differences:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}
