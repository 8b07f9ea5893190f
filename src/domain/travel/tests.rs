//! Travel tests: tool behaviour on the generated evaluation database (exact texts of the
//! reference's errors and float formatting; the differential fixture pins whole outputs),
//! the price oracle, the generators' scale and invariants, import in file order, the
//! policy rules, grounding proposals, the refinement hooks and (opt-in) the reference's
//! tools replayed on the reference's own database.

use super::db::{Booking, TravelDb};
use super::generate::{SCALES, generate};
use super::tools::{insurance_per_person, package_total};
use crate::domain::Hooks;
use crate::domain::{Database, Environment, GroundingContext, Intent, Split, ToolKind};
use crate::seed::derive_rng;
use serde_json::{Value, json};
use std::collections::BTreeMap;

fn db() -> TravelDb {
    generate(7, Split::Eval)
}

fn call(db: &mut TravelDb, tool: &str, args: Value) -> (String, bool) {
    let out = Environment::invoke(db, tool, &args);
    (out.text, out.is_error)
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// A confirmed booking (not cancelled) whose departure is still open with a spare slot,
/// and its holder.
fn open_booking(db: &TravelDb) -> (String, Booking) {
    db.travelers
        .in_order()
        .flat_map(|t| t.bookings.iter().map(move |b| (t, b)))
        .find(|(t, b)| {
            !b.is_cancelled()
                && !t.payment_methods.is_empty()
                && db.packages.get(&b.package_id).is_some_and(|p| {
                    p.departures.iter().any(|(d, dep)| {
                        d != b.departure_date
                            && dep.is_open()
                            && dep.available_slots >= b.travelers.len() as i64
                    }) && p
                        .departures
                        .get(&b.departure_date)
                        .is_some_and(|d| d.is_open())
                })
        })
        .map(|(t, b)| (t.traveler_id.clone(), b.clone()))
        .expect("an open booking")
}

#[test]
fn sixteen_tools_nine_read_seven_write_with_customer_intents() {
    let tools = TravelDb::tools();
    assert_eq!(tools.len(), 16);
    let reads = tools
        .iter()
        .filter(|t| t.spec.kind == ToolKind::Read)
        .count();
    assert_eq!((reads, tools.len() - reads), (9, 7));
    let intent = |n: &str| tools.iter().find(|t| t.spec.name == n).unwrap().spec.intent;
    assert_eq!(intent("book_package"), Intent::Book);
    assert_eq!(intent("cancel_booking"), Intent::Cancel);
    assert_eq!(intent("update_booking_add_ons"), Intent::Change);
    assert_eq!(intent("schedule_agent_meeting"), Intent::Book);
    assert_eq!(intent("calculate"), Intent::Helper);
    assert!(
        tools
            .iter()
            .find(|t| t.spec.name == "transfer_to_human_agents")
            .unwrap()
            .spec
            .terminates
    );
}

#[test]
fn price_oracle_follows_the_insurance_table_and_pythons_rounding() {
    assert_eq!(insurance_per_person(Some(" Premium ")), 100.0);
    assert_eq!(insurance_per_person(Some("standard")), 50.0);
    assert_eq!(insurance_per_person(Some("Standard Plan")), 0.0);
    assert_eq!(insurance_per_person(None), 0.0);
    let add = |p: f64| super::db::AddOn {
        kind: "meal".into(),
        description: "x".into(),
        price: p,
    };
    assert_eq!(
        package_total(1899.0, 2, &[add(140.5), add(35.5)], Some("standard")),
        3798.0 + 176.0 + 100.0
    );
    // 0.1 + 0.2 is 0.30000000000000004 in floats; the total rounds to cents.
    assert_eq!(package_total(0.1, 1, &[add(0.2)], None), 0.3);
}

#[test]
fn lookups_print_models_and_the_references_errors() {
    let mut db = db();
    let (owner, b) = open_booking(&db);
    let (out, err) = call(
        &mut db,
        "get_booking_details",
        json!({"booking_id": b.booking_id}),
    );
    assert!(!err);
    assert_eq!(json_of(&out)["booking_id"], json!(b.booking_id));
    // Floats print as Python prints them: a whole price keeps its ".0".
    assert!(
        out.contains(&format!("\"total_price\": {:?}", b.total_price)),
        "{out}"
    );
    let (out, _) = call(
        &mut db,
        "get_traveler_details",
        json!({"traveler_id": owner}),
    );
    assert!(out.starts_with(&format!("{{\"traveler_id\": \"{owner}\", \"name\": ")));
    for (tool, key, msg) in [
        (
            "get_traveler_details",
            "traveler_id",
            "Error: Traveler NOPE not found",
        ),
        (
            "get_agent_details",
            "agent_id",
            "Error: Agent NOPE not found",
        ),
        (
            "get_package_details",
            "package_id",
            "Error: Package NOPE not found",
        ),
        (
            "get_booking_details",
            "booking_id",
            "Error: Booking NOPE not found",
        ),
        (
            "cancel_booking",
            "booking_id",
            "Error: Booking NOPE not found",
        ),
    ] {
        assert_eq!(
            call(&mut db, tool, json!({key: "NOPE"})),
            (msg.into(), true)
        );
    }
    let (out, _) = call(&mut db, "list_all_destinations", json!({}));
    let dests = json_of(&out);
    let n = dests.as_array().unwrap().len();
    let mut unique: Vec<String> = dests
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{}|{}", d["city"], d["country"]))
        .collect();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), n, "destinations repeat");
}

#[test]
fn search_applies_filters_by_truthiness_and_needs_an_open_departure() {
    let mut db = db();
    let all = json_of(&call(&mut db, "search_packages", json!({})).0);
    let bookable = db
        .packages
        .in_order()
        .filter(|p| {
            p.departures
                .values()
                .any(|d| d.is_open() && d.available_slots > 0)
        })
        .count();
    assert_eq!(all.as_array().unwrap().len(), bookable);
    // Empty strings are falsy: no filter.
    let blank = call(
        &mut db,
        "search_packages",
        json!({"destination_city": "", "category": ""}),
    );
    assert_eq!(json_of(&blank.0), all);
    let p = db.packages.in_order().next().unwrap().clone();
    let city = &p.destinations[0].city;
    let hits = json_of(
        &call(
            &mut db,
            "search_packages",
            json!({"destination_city": city}),
        )
        .0,
    );
    assert!(hits.as_array().unwrap().iter().all(|h| {
        h["destinations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["city"] == json!(city))
    }));
    // A city given together with a country that does not hold it matches nothing.
    let none = call(
        &mut db,
        "search_packages",
        json!({"destination_city": city, "destination_country": "Atlantis"}),
    );
    assert_eq!(none, ("[]".into(), false));
}

#[test]
fn booking_pays_exactly_checks_in_order_and_mints_three_slots() {
    let mut db = db();
    let t = db
        .travelers
        .in_order()
        .find(|t| !t.payment_methods.is_empty())
        .unwrap()
        .clone();
    let method = t.payment_methods.keys().next().unwrap().to_string();
    let p = db
        .packages
        .in_order()
        .find(|p| {
            p.departures
                .values()
                .any(|d| d.is_open() && d.available_slots >= 4)
        })
        .unwrap()
        .clone();
    let (date, dep) = p
        .departures
        .iter()
        .find(|(_, d)| d.is_open() && d.available_slots >= 4)
        .map(|(k, d)| (k.to_string(), d.clone()))
        .unwrap();
    let person =
        json!({"first_name": t.name.first_name, "last_name": t.name.last_name, "dob": t.dob});
    let add_on = json!({"type": "meal", "description": "Farewell dinner", "price": 55.0});
    let total = dep.base_price + 55.0 + 100.0;
    let args = |amount: Value, payments: Value| {
        let mut a = json!({
            "traveler_id": t.traveler_id, "package_id": p.package_id, "departure_date": date,
            "travelers": [person], "rooming": {"room_type": "single", "occupancy": 1},
            "add_ons": [add_on], "insurance": "Premium", "payment_methods": payments});
        if !amount.is_null() {
            a["payment_methods"] = json!([{"payment_id": method, "amount": amount}]);
        }
        a
    };
    let (out, err) = call(
        &mut db,
        "book_package",
        args(json!(total - 1.0), Value::Null),
    );
    assert!(err);
    assert_eq!(
        out,
        format!(
            "Error: Payment amount does not add up, total price is {:?}, but paid {:?}",
            total,
            total - 1.0
        )
    );
    assert_eq!(
        call(&mut db, "book_package", args(Value::Null, json!([]))).0,
        format!("Error: Payment amount does not add up, total price is {total:?}, but paid 0")
    );
    assert_eq!(
        call(
            &mut db,
            "book_package",
            args(
                Value::Null,
                json!([{"payment_id": "PM-NONE", "amount": total}])
            )
        )
        .0,
        "Error: Payment method PM-NONE not found for traveler"
    );
    let mut bad_date = args(json!(total), Value::Null);
    bad_date["departure_date"] = json!("99-01-01");
    assert_eq!(
        call(&mut db, "book_package", bad_date).0,
        format!("Error: Package {} not offered on 99-01-01", p.package_id)
    );
    let before = Database::state_hash(&db);
    let slots = dep.available_slots;
    for (i, id) in ["TAU001", "TAU002", "TAU003"].iter().enumerate() {
        let (out, err) = call(&mut db, "book_package", args(json!(total), Value::Null));
        assert!(!err, "{out}");
        let b = json_of(&out);
        assert_eq!(b["booking_id"], json!(id));
        assert_eq!(b["booking_date"], json!("2024-05-15"));
        assert_eq!(b["agent_id"], json!(p.managed_by_agents[0]));
        assert_eq!(b["total_price"], json!(total));
        let left = db
            .packages
            .get(&p.package_id)
            .unwrap()
            .departures
            .get(&date)
            .unwrap();
        assert_eq!(left.available_slots, slots - 1 - i as i64);
    }
    assert_ne!(Database::state_hash(&db), before);
    let agent = db.agents.get(&p.managed_by_agents[0]).unwrap();
    assert!(agent.bookings_handled.iter().any(|b| b == "TAU003"));
    assert!(agent.assigned_travelers.contains(&t.traveler_id));
    let after = Database::state_hash(&db);
    assert_eq!(
        call(&mut db, "book_package", args(json!(total), Value::Null)),
        ("Error: Too many bookings created".into(), true)
    );
    assert_eq!(
        Database::state_hash(&db),
        after,
        "a refused call changes nothing"
    );
}

#[test]
fn cancel_refunds_once_restores_slots_and_a_second_cancel_is_refused() {
    let mut db = db();
    let (_, b) = open_booking(&db);
    let slots = |db: &TravelDb| {
        db.packages
            .get(&b.package_id)
            .unwrap()
            .departures
            .get(&b.departure_date)
            .unwrap()
            .available_slots
    };
    let before = slots(&db);
    let (out, err) = call(
        &mut db,
        "cancel_booking",
        json!({"booking_id": b.booking_id}),
    );
    assert!(!err, "{out}");
    let v = json_of(&out);
    assert_eq!(v["status"], json!("cancelled"));
    let history = v["payment_history"].as_array().unwrap();
    assert_eq!(history.len(), 2 * b.payment_history.len());
    let net: f64 = history.iter().map(|p| p["amount"].as_f64().unwrap()).sum();
    assert_eq!(net, 0.0);
    assert_eq!(slots(&db), before + b.travelers.len() as i64);
    let hash = Database::state_hash(&db);
    assert_eq!(
        call(
            &mut db,
            "cancel_booking",
            json!({"booking_id": b.booking_id})
        ),
        (
            format!("Error: Booking {} is already cancelled", b.booking_id),
            true
        )
    );
    assert_eq!(Database::state_hash(&db), hash);
}

#[test]
fn changes_record_the_price_delta_against_one_saved_method() {
    let mut db = db();
    let (owner, b) = open_booking(&db);
    let method = db
        .travelers
        .get(&owner)
        .unwrap()
        .payment_methods
        .keys()
        .next()
        .unwrap()
        .to_string();
    let mut add_ons = serde_json::to_value(&b.add_ons).unwrap();
    add_ons
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "guide", "description": "Private guide for one day", "price": 210.0}));
    assert_eq!(
        call(
            &mut db,
            "update_booking_add_ons",
            json!({"booking_id": b.booking_id, "add_ons": add_ons, "payment_method_id": "NOPE"})
        )
        .0,
        "Error: Payment method NOPE not found for traveler"
    );
    let (out, err) = call(
        &mut db,
        "update_booking_add_ons",
        json!({"booking_id": b.booking_id, "add_ons": add_ons, "payment_method_id": method}),
    );
    assert!(!err, "{out}");
    let v = json_of(&out);
    let p = db.packages.get(&b.package_id).unwrap().clone();
    let base = p.departures.get(&b.departure_date).unwrap().base_price;
    let mut list = b.add_ons.clone();
    list.push(super::db::AddOn {
        kind: "guide".into(),
        description: "Private guide for one day".into(),
        price: 210.0,
    });
    let expected = package_total(base, b.travelers.len(), &list, b.insurance.as_deref());
    assert_eq!(v["total_price"], json!(expected));
    assert_eq!(
        v["payment_history"].as_array().unwrap().last().unwrap()["amount"],
        json!(crate::domain::kit::calc::py_round(
            expected - b.total_price,
            2
        ))
    );
    // The same list again: no delta, no new payment entry.
    let n = v["payment_history"].as_array().unwrap().len();
    let again = json_of(
        &call(
            &mut db,
            "update_booking_add_ons",
            json!({"booking_id": b.booking_id, "add_ons": add_ons, "payment_method_id": method}),
        )
        .0,
    );
    assert_eq!(again["payment_history"].as_array().unwrap().len(), n);
    // Another departure: slots move from the old date to the new one.
    let (new_date, _) = p
        .departures
        .iter()
        .find(|(d, dep)| {
            *d != b.departure_date
                && dep.is_open()
                && dep.available_slots >= b.travelers.len() as i64
        })
        .unwrap();
    let slot = |db: &TravelDb, d: &str| {
        db.packages
            .get(&b.package_id)
            .unwrap()
            .departures
            .get(d)
            .unwrap()
            .available_slots
    };
    let (old_before, new_before) = (slot(&db, &b.departure_date), slot(&db, new_date));
    let (out, err) = call(
        &mut db,
        "update_booking_departure_date",
        json!({"booking_id": b.booking_id, "new_departure_date": new_date, "payment_method_id": method}),
    );
    assert!(!err, "{out}");
    let n = b.travelers.len() as i64;
    assert_eq!(
        (slot(&db, &b.departure_date), slot(&db, new_date)),
        (old_before + n, new_before - n)
    );
    assert_eq!(json_of(&out)["departure_date"], json!(new_date));
    // Traveler count is fixed; rooming is free-form.
    assert_eq!(
        call(
            &mut db,
            "update_booking_travelers",
            json!({"booking_id": b.booking_id, "travelers": []})
        )
        .0,
        "Error: Number of travelers does not match current booking"
    );
    let (out, _) = call(
        &mut db,
        "update_booking_rooming",
        json!({"booking_id": b.booking_id, "rooming": {"room_type": "suite", "occupancy": 1}}),
    );
    assert_eq!(
        json_of(&out)["rooming"],
        json!({"room_type": "suite", "occupancy": 1})
    );
}

#[test]
fn meetings_take_the_slot_once() {
    let mut db = db();
    let (agent_id, date, slot) = db
        .agents
        .iter()
        .find_map(|(id, a)| {
            a.availability.iter().find_map(|(d, day)| {
                day.slots
                    .first()
                    .map(|s| (id.to_string(), d.to_string(), s.clone()))
            })
        })
        .unwrap();
    let traveler = Hooks::customers(&db)[0].clone();
    let args =
        json!({"agent_id": agent_id, "date": date, "time_range": slot, "traveler_id": traveler});
    assert_eq!(
        call(&mut db, "schedule_agent_meeting", args.clone()),
        (
            format!("Meeting scheduled with agent {agent_id} on {date} at {slot}"),
            false
        )
    );
    assert_eq!(
        call(&mut db, "schedule_agent_meeting", args.clone()).0,
        format!("Error: Time slot {slot} not available on {date}")
    );
    let mut other = args;
    other["date"] = json!("99-12-31");
    assert_eq!(
        call(&mut db, "schedule_agent_meeting", other).0,
        "Error: Agent is not available on 99-12-31"
    );
}

#[test]
fn generators_have_both_scales_and_consistent_money() {
    for (split, scale) in [(Split::Eval, SCALES.eval), (Split::Train, SCALES.train)] {
        let db = generate(11, split);
        assert_eq!(db.travelers.len(), scale.travelers);
        assert_eq!(db.packages.len(), scale.packages);
        assert_eq!(db.agents.len(), scale.agents);
        let bookings: Vec<(&str, &Booking)> = db
            .travelers
            .in_order()
            .flat_map(|t| t.bookings.iter().map(move |b| (t.traveler_id.as_str(), b)))
            .collect();
        assert_eq!(bookings.len(), scale.bookings);
        let mut ids: Vec<&str> = bookings
            .iter()
            .map(|(_, b)| b.booking_id.as_str())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), scale.bookings, "booking ids repeat");
        assert!(ids.iter().all(|id| !id.starts_with("TAU")));
        for (owner, b) in &bookings {
            let t = db.travelers.get(owner).unwrap();
            let p = db.packages.get(&b.package_id).unwrap();
            let base = p.departures.get(&b.departure_date).unwrap().base_price;
            assert_eq!(
                b.total_price,
                package_total(base, b.travelers.len(), &b.add_ons, b.insurance.as_deref())
            );
            assert!(
                b.payment_history
                    .iter()
                    .all(|x| t.payment_methods.contains_key(&x.payment_id))
            );
            let paid: f64 = b.payment_history.iter().map(|x| x.amount).sum();
            let expect = if b.is_cancelled() { 0.0 } else { b.total_price };
            assert!((paid - expect).abs() < 1e-6, "{} paid {paid}", b.booking_id);
            let agent = db.agents.get(&b.agent_id).unwrap();
            assert!(agent.bookings_handled.contains(&b.booking_id));
            assert!(p.managed_by_agents.contains(&b.agent_id));
        }
        assert_eq!(
            split == Split::Train,
            bookings.iter().any(|(_, b)| b.is_cancelled())
        );
    }
    assert_eq!(
        Database::state_hash(&generate(3, Split::Eval)),
        Database::state_hash(&generate(3, Split::Eval))
    );
    assert_ne!(
        Database::state_hash(&generate(3, Split::Eval)),
        Database::state_hash(&generate(4, Split::Eval))
    );
}

#[test]
fn import_keeps_file_order_and_the_first_duplicate_booking_wins() {
    let base = db();
    let mut tables = Database::to_tau_bench(&base);
    // Two travelers holding the same booking id: the reference finds the first in file
    // order, which our import must keep even when it is not the first by id.
    let travelers = tables
        .get_mut("travelers")
        .unwrap()
        .as_object_mut()
        .unwrap();
    let mut ids: Vec<String> = travelers.keys().cloned().collect();
    ids.sort();
    let (first, second) = (ids[ids.len() - 1].clone(), ids[0].clone());
    let mut booking = travelers[&second]["bookings"][0].clone();
    if booking.is_null() {
        booking = travelers
            .values()
            .find_map(|t| t["bookings"].get(0).cloned())
            .unwrap();
    }
    booking["notes"] = json!("the later holder's copy");
    let mut dup = booking.clone();
    dup["notes"] = json!("the first holder's copy");
    travelers[&first]["bookings"]
        .as_array_mut()
        .unwrap()
        .push(dup);
    travelers[&second]["bookings"]
        .as_array_mut()
        .unwrap()
        .insert(0, booking.clone());
    let mut ordered: Vec<(String, Value)> = vec![(first.clone(), travelers[&first].clone())];
    for id in ids.iter().filter(|i| **i != first) {
        ordered.push((id.clone(), travelers[id].clone()));
    }
    let dir = std::env::temp_dir().join(format!("travel-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("db.json");
    // serde_json's map sorts keys, so write the travelers table by hand in our order.
    let body: Vec<String> = ordered
        .iter()
        .map(|(k, v)| format!("{}: {}", json!(k), v))
        .collect();
    let text = format!(
        "{{\"travelers\": {{{}}}, \"packages\": {}, \"agents\": {}}}",
        body.join(", "),
        tables["packages"],
        tables["agents"]
    );
    std::fs::write(&path, text).unwrap();
    let tables: BTreeMap<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut imported = TravelDb::import(&tables, &path).unwrap();
    let id = booking["booking_id"].as_str().unwrap();
    let (out, _) = call(
        &mut imported,
        "get_booking_details",
        json!({"booking_id": id}),
    );
    assert_eq!(json_of(&out)["notes"], json!("the first holder's copy"));
    // A package naming an unknown agent is refused with the file and row named.
    let mut broken = tables.clone();
    let pid = broken["packages"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    broken.get_mut("packages").unwrap()[&pid]["managed_by_agents"] = json!(["GHOST"]);
    let e = TravelDb::import(&broken, &path).err().unwrap().to_string();
    assert!(
        e.contains("db.json") && e.contains(&pid) && e.contains("GHOST"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn rule(db: &TravelDb, tool: &str, args: Value) -> Option<&'static str> {
    Hooks::check_policy(db, tool, &args).err().map(|v| v.rule)
}

#[test]
fn policy_rules_name_what_the_tools_allow_but_the_policy_forbids() {
    let db = db();
    let (_, b) = open_booking(&db);
    let id = json!(b.booking_id);
    assert_eq!(
        rule(&db, "book_package", json!({"travelers": []})),
        Some("travelers_named")
    );
    let person = json!({"first_name": "A", "last_name": "B", "dob": "80-01-01"});
    assert_eq!(
        rule(
            &db,
            "book_package",
            json!({"travelers": [person], "rooming": {"room_type": "double", "occupancy": 2}})
        ),
        Some("room_fits_party")
    );
    let p = db.packages.in_order().next().unwrap();
    let ok_room = json!({"room_type": "single", "occupancy": 1});
    assert_eq!(
        rule(
            &db,
            "book_package",
            json!({"travelers": [person], "rooming": ok_room, "package_id": p.package_id, "agent_id": "NOT-AN-AGENT"})
        ),
        Some("agent_manages_package")
    );
    assert_eq!(
        rule(
            &db,
            "book_package",
            json!({"travelers": [person], "rooming": ok_room, "departure_date": "24-05-15"})
        ),
        Some("departs_after_today")
    );
    assert_eq!(
        rule(
            &db,
            "book_package",
            json!({"travelers": [person], "rooming": ok_room, "departure_date": "25-05-15", "payment_methods": [{"payment_id": "x", "amount": 0}]})
        ),
        Some("positive_payments")
    );
    assert_eq!(
        rule(
            &db,
            "update_booking_departure_date",
            json!({"booking_id": id, "new_departure_date": b.departure_date})
        ),
        Some("real_change")
    );
    assert_eq!(
        rule(
            &db,
            "update_booking_rooming",
            json!({"booking_id": id, "rooming": b.rooming})
        ),
        Some("real_change")
    );
    assert_eq!(
        rule(
            &db,
            "update_booking_add_ons",
            json!({"booking_id": id, "add_ons": b.add_ons})
        ),
        Some("real_change")
    );
    assert_eq!(
        rule(
            &db,
            "update_booking_travelers",
            json!({"booking_id": id, "travelers": b.travelers})
        ),
        Some("real_change")
    );
    // After a cancellation nothing about the booking may change.
    let mut gone = db.clone();
    Environment::invoke(&mut gone, "cancel_booking", &json!({"booking_id": id}));
    for tool in [
        "cancel_booking",
        "update_booking_rooming",
        "update_booking_add_ons",
    ] {
        assert_eq!(
            rule(&gone, tool, json!({"booking_id": id})),
            Some("booking_is_active")
        );
    }
    // The package's cancellation window: a departure inside it goes to a human.
    let late = db
        .travelers
        .in_order()
        .flat_map(|t| &t.bookings)
        .find(|b| !b.is_cancelled() && super::policy::days_to_departure(b).is_some_and(|d| d < 21))
        .expect("a booking close to departure");
    assert_eq!(
        rule(
            &db,
            "cancel_booking",
            json!({"booking_id": late.booking_id})
        ),
        Some("cancellation_permitted")
    );
    assert_eq!(
        super::policy::days_allowed("Free cancellation up to 45 days before departure; then 50%."),
        Some(45)
    );
    assert_eq!(
        super::policy::days_allowed("Terms agreed case by case."),
        None
    );
}

#[test]
fn proposals_pay_exactly_obey_the_policy_and_execute_for_every_write_tool() {
    let db = db();
    for tool in TravelDb::tools()
        .iter()
        .filter(|t| t.spec.kind == ToolKind::Write)
    {
        let name = tool.spec.name;
        let mut ok = 0;
        for (i, user) in Hooks::customers(&db).iter().enumerate().take(40) {
            let mut rng = derive_rng(5, &["travel-test", name, &i.to_string()]);
            let ctx = GroundingContext::for_user(user);
            for args in Hooks::propose_calls(&db, name, &ctx, &mut rng) {
                if Hooks::check_policy(&db, name, &args).is_err() {
                    continue;
                }
                let mut fork = db.clone();
                let out = Environment::invoke(&mut fork, name, &args);
                assert!(
                    !out.is_error || name != "book_package",
                    "{name}: {} for {args}",
                    out.text
                );
                ok += usize::from(!out.is_error);
            }
        }
        assert!(
            ok > 0,
            "{name}: no proposal both obeys the policy and executes"
        );
    }
}

#[test]
fn facts_requests_and_ids_speak_as_the_traveler() {
    let db = db();
    let (owner, b) = open_booking(&db);
    let facts = Hooks::user_facts(&db, &owner);
    assert_eq!(facts[0].kind, "identity");
    assert!(facts[0].text.contains(&owner));
    assert!(
        facts
            .iter()
            .any(|f| f.kind == "payment" && !f.ids.is_empty())
    );
    assert!(facts.iter().any(|f| f.values.contains(&b.booking_id)));
    let mut rng = derive_rng(1, &["travel-test-facts"]);
    let ctx = GroundingContext::for_user(&owner);
    let args = Hooks::propose_calls(&db, "book_package", &ctx, &mut rng)
        .into_iter()
        .next()
        .expect("a booking proposal");
    let text = Hooks::describe_request(&db, "book_package", &args, "").unwrap();
    let ids = Hooks::internal_ids(&db, "book_package", &args);
    assert!(!ids.is_empty());
    assert!(ids.iter().all(|id| !text.contains(id.as_str())), "{text}");
    // The package by name, never by the agency's code (an internal id field).
    let package = args["package_id"].as_str().unwrap();
    assert!(!text.contains(package), "{text}");
    assert!(
        text.contains(&db.packages.get(package).unwrap().name),
        "{text}"
    );
    assert!(Hooks::internal_id_fields(&db).contains(&"package_id"));
    // Dates are said in full, which holds the tools' short form.
    assert!(
        text.contains(args["departure_date"].as_str().unwrap()),
        "{text}"
    );
    let cancel = Hooks::describe_request(
        &db,
        "cancel_booking",
        &json!({"booking_id": b.booking_id}),
        "",
    )
    .unwrap();
    assert!(cancel.contains(&b.booking_id), "{cancel}");
    assert!(
        Hooks::describe_request(
            &db,
            "get_traveler_details",
            &json!({"traveler_id": owner}),
            ""
        )
        .is_none()
    );
    let records = Hooks::customer_records(&db, &owner).join("\n");
    assert!(records.contains(&b.package_id) && records.contains(&b.agent_id));
}

#[test]
fn bookings_made_in_the_conversation_are_named_so_the_words_point_at_one() {
    let mut db = db();
    let (owner, _) = open_booking(&db);
    let mut rng = derive_rng(3, &["travel-test-made"]);
    let ctx = GroundingContext::for_user(&owner);
    let args = Hooks::propose_calls(&db, "book_package", &ctx, &mut rng)
        .into_iter()
        .next()
        .expect("a booking proposal");
    let ask = |db: &TravelDb, id: &str| {
        Hooks::describe_request(db, "get_booking_details", &json!({"booking_id": id}), "").unwrap()
    };
    let (out, err) = call(&mut db, "book_package", args.clone());
    assert!(!err, "{out}");
    let first = json_of(&out)["booking_id"].as_str().unwrap().to_string();
    assert!(ask(&db, &first).contains("the booking you just made for the "));
    // The same package on the same day again: the words must tell the two apart.
    let (out, err) = call(&mut db, "book_package", args);
    assert!(!err, "{out}");
    let second = json_of(&out)["booking_id"].as_str().unwrap().to_string();
    assert_ne!(first, second);
    let said = ask(&db, &first);
    assert!(
        said.contains("the first booking you made, for the "),
        "{said}"
    );
    assert!(!said.contains("just made"), "{said}");
    assert!(ask(&db, &second).contains("the booking you just made for the "));
}

#[test]
fn a_package_lookup_asks_for_and_tells_its_cancellation_policy() {
    let mut db = db();
    let p = db.packages.in_order().next().unwrap().clone();
    let args = json!({"package_id": p.package_id});
    let (out, err) = call(&mut db, "get_package_details", args.clone());
    assert!(!err, "{out}");
    assert_eq!(
        Hooks::required_outputs(&db, "get_package_details", &args, &out),
        vec![p.policies.cancellation_policy.clone()]
    );
    for salt in ["a", "b", "c", "d", "e", "f", "g"] {
        let asked = crate::domain::kit::templates::with_salt(salt, || {
            Hooks::describe_request(&db, "get_package_details", &args, &out)
        })
        .unwrap();
        assert!(asked.contains("cancel"), "{asked}");
    }
}
