//! Restaurant tests: tool behaviour on a small hand-built `db.json` (expected texts are what
//! the reference's own tools print for the same calls, except where a test names a
//! departure), the generators' scale and invariants, import/export, the policy rules,
//! grounding proposals, the refinement hooks and (opt-in) the reference's tools replayed on
//! the reference's own database.

use super::db::RestaurantDb;
use super::generate::{self, SCALES};
use super::{Restaurant, hooks};
use crate::domain::Hooks;
use crate::domain::{Database, Domain, GroundingContext, Split, ToolKind};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tau2/restaurant/db.json")
}

/// Three patrons (two share an email; the file lists Amara's own record first), four
/// dishes (two titled "Borscht", a plate not served today), five tickets: placed delivery,
/// dine-in and takeout (two of the same plate), one in progress, one delivered.
fn fixture() -> RestaurantDb {
    let path = fixture_path();
    let text = std::fs::read_to_string(&path).unwrap();
    let tables: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap();
    RestaurantDb::import(&tables, &path).expect("fixture imports")
}

fn call(db: &mut RestaurantDb, tool: &str, args: Value) -> (String, bool) {
    let out = crate::domain::Environment::invoke(db, tool, &args);
    (out.text, out.is_error)
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn charges(out: &str) -> Vec<(String, f64, String)> {
    json_of(out)["charges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["kind"].as_str().unwrap().to_string(),
                c["total"].as_f64().unwrap(),
                c["instrument_ref"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn ch(kind: &str, total: f64, instrument: &str) -> (String, f64, String) {
    (kind.to_string(), total, instrument.to_string())
}

const AMARA: &str = "Rk7Tq2a";
const JONAS: &str = "Pz9Lm4b";

// ---------- tools ----------

#[test]
fn fifteen_tools_nine_read_six_write_with_customer_intents() {
    use crate::domain::Intent::*;
    let specs = Restaurant.tool_specs();
    let reads = specs.iter().filter(|s| s.kind == ToolKind::Read).count();
    assert_eq!((specs.len(), reads), (15, 9));
    let intent = |name: &str| specs.iter().find(|s| s.name == name).unwrap().intent;
    for (name, want) in [
        ("find_patron_ref_by_email", Lookup),
        ("list_all_dishes", Lookup),
        ("cancel_placed_ticket", Cancel),
        ("modify_placed_ticket_items", Change),
        ("modify_placed_ticket_instrument", Change),
        ("add_tip_to_ticket", Pay),
        ("calculate", Helper),
        ("think", Helper),
        ("transfer_to_human_agents", Transfer),
    ] {
        assert_eq!(intent(name), want, "{name}");
    }
}

#[test]
fn lookups_print_tau2_json_and_reference_errors() {
    let mut db = fixture();
    // The reference's own text for the same call on the same file.
    assert_eq!(
        call(
            &mut db,
            "get_ticket_details",
            json!({"ticket_ref": "TkDin02"})
        )
        .0,
        r#"{"ticket_ref": "TkDin02", "guest_ref": "Rk7Tq2a", "service_mode": "dine_in", "dropoff": null, "table_info": {"zone": "Terrace", "table_no": "7", "seat_count": 2}, "line_entries": [{"label": "Borscht - Regular, Mild", "dish_ref": "dSoup03", "plate_ref": "pBsReg1", "cost": 9.5, "mods": {"heat": "mild", "sauce": "sour cream", "side": "rye bread"}}], "state": "placed", "prep_batches": [{"parcel_tags": ["TBL-7"], "plate_refs": ["pBsReg1"]}], "charges": [{"kind": "payment", "total": 9.5, "instrument_ref": "iGift02"}]}"#
    );
    assert_eq!(
        call(&mut db, "get_dish_details", json!({"dish_ref": "dSoup04"})).0,
        r#"{"title": "Borscht", "dish_ref": "dSoup04", "selections": {"pBsLrg1": {"plate_ref": "pBsLrg1", "modifiers": {"spice_level": "mild", "portion": "large", "protein": "beet", "preparation": "simmered"}, "served_today": true, "cost": 12.0}}}"#
    );
    for (tool, arg, err) in [
        (
            "get_ticket_details",
            "ticket_ref",
            "Error: Ticket not found",
        ),
        ("get_dish_details", "dish_ref", "Error: Dish not found"),
        ("get_patron_details", "guest_ref", "Error: Patron not found"),
    ] {
        assert_eq!(
            call(&mut db, tool, json!({arg: "nope"})),
            (err.into(), true)
        );
    }
    // Email: case-insensitive, the first patron in file order (not in id order) wins.
    let find = |db: &mut RestaurantDb, email: &str| {
        call(db, "find_patron_ref_by_email", json!({"email": email})).0
    };
    assert_eq!(find(&mut db, "Amara.Okafor@EXAMPLE.com"), AMARA);
    assert_eq!(find(&mut db, "jonas.eklund@example.net"), JONAS);
    assert_eq!(find(&mut db, "x@example.com"), "Error: Patron not found");
    let by_name = |db: &mut RestaurantDb, zip: &str| {
        call(
            db,
            "find_patron_ref_by_name_zip",
            json!({"given": "JONAS", "family": "eklund", "postal_code": zip}),
        )
        .0
    };
    assert_eq!(by_name(&mut db, "5003"), JONAS);
    assert_eq!(by_name(&mut db, "05003"), "Error: Patron not found");
    assert_eq!(
        call(
            &mut db,
            "calculate",
            json!({"expression": "18.5 + 11.5 * 2"})
        )
        .0,
        "41.5"
    );
    assert_eq!(
        call(&mut db, "calculate", json!({"expression": "2 + x"})).0,
        "Error: Invalid characters in expression"
    );
}

#[test]
fn the_menu_listing_keeps_dishes_that_share_a_title() {
    let mut db = fixture();
    // Departure: the reference prints {"Borscht": "dSoup03", ...}, losing dSoup04.
    assert_eq!(
        call(&mut db, "list_all_dishes", json!({})).0,
        r#"{"Borscht": ["dSoup04", "dSoup03"], "Fish Tacos": "dTaco02", "Lamb Tagine": "dLamb01"}"#
    );
}

#[test]
fn cancel_refunds_what_is_still_paid_once() {
    // A single payment: one refund of it, as the reference records it.
    let mut db = fixture();
    let (out, err) = call(
        &mut db,
        "cancel_placed_ticket",
        json!({"ticket_ref": "TkDel01", "reason": "plans changed"}),
    );
    assert!(!err, "{out}");
    assert_eq!(json_of(&out)["state"], "cancelled");
    assert_eq!(
        charges(&out)[2..],
        [
            ch("payment", 35.4, "iVisa01"),
            ch("refund", 35.4, "iVisa01")
        ][..]
    );
    for (args, want) in [
        (
            json!({"ticket_ref": "TkDel01", "reason": "again"}),
            "Error: Only tickets in 'placed' state can be cancelled",
        ),
        (
            json!({"ticket_ref": "TkPrp03", "reason": "late"}),
            "Error: Only tickets in 'placed' state can be cancelled",
        ),
    ] {
        assert_eq!(call(&mut db, "cancel_placed_ticket", args).0, want);
    }
    let tip = json!({"ticket_ref": "TkDel01", "tip_total": 2, "instrument_ref": "iVisa01"});
    assert_eq!(
        call(&mut db, "add_tip_to_ticket", tip).0,
        "Error: Cannot add tip to a cancelled ticket"
    );

    // Departure: after an instrument change the reference refunds the old instrument a
    // second time (9.50 paid, 19.00 back); ours refunds only the new payment.
    let mut db = fixture();
    let change = json!({"ticket_ref": "TkDin02", "instrument_ref": "iVisa01"});
    assert!(!call(&mut db, "modify_placed_ticket_instrument", change).1);
    let out = call(
        &mut db,
        "cancel_placed_ticket",
        json!({"ticket_ref": "TkDin02", "reason": "r"}),
    )
    .0;
    assert_eq!(
        charges(&out),
        [
            ch("payment", 9.5, "iGift02"),
            ch("payment", 9.5, "iVisa01"),
            ch("refund", 9.5, "iGift02"),
            ch("refund", 9.5, "iVisa01"),
        ]
    );

    // Departure: an item change refunded 1.75 to the gift card; the cancellation gives
    // back the rest (35.40), not the original 35.40 + 1.75 again.
    let mut db = fixture();
    let up = json!({"ticket_ref": "TkDel01", "plate_refs": ["pTcCod1"], "new_plate_refs": ["pTcShr2"], "instrument_ref": "iVisa01"});
    let down = json!({"ticket_ref": "TkDel01", "plate_refs": ["pTcShr2"], "new_plate_refs": ["pTcCod1"], "instrument_ref": "iGift02"});
    assert!(!call(&mut db, "modify_placed_ticket_items", up).1);
    assert!(!call(&mut db, "modify_placed_ticket_items", down).1);
    let out = call(
        &mut db,
        "cancel_placed_ticket",
        json!({"ticket_ref": "TkDel01", "reason": "r"}),
    )
    .0;
    assert_eq!(
        charges(&out)[2..],
        [
            ch("payment", 35.4, "iVisa01"),
            ch("payment", 1.75, "iVisa01"),
            ch("refund", 1.75, "iGift02"),
            ch("refund", 35.4, "iVisa01"),
        ][..]
    );
}

#[test]
fn item_swaps_check_in_the_reference_order_and_settle_the_difference() {
    let mut db = fixture();
    let swap = |old: Value, new: Value, instrument: &str| {
        json!({"ticket_ref": "TkDel01", "plate_refs": old, "new_plate_refs": new,
            "instrument_ref": instrument})
    };
    for (args, want) in [
        (
            swap(json!(["pLmReg1"]), json!(["pLmChk3"]), "iVisa01"),
            "Error: New plate pLmChk3 is not available today",
        ),
        (
            swap(json!(["pLmReg1"]), json!(["pTcShr2"]), "iVisa01"),
            "Error: New plate must be from the same dish as the original",
        ),
        (
            swap(json!(["pLmReg1"]), json!(["zzz"]), "iVisa01"),
            "Error: New plate zzz not found",
        ),
        (
            swap(json!(["pLmReg1"]), json!([]), "iVisa01"),
            "Error: The number of plates to be modified should match",
        ),
        (
            swap(
                json!(["pLmReg1", "pLmReg1"]),
                json!(["pLmLrg2", "pLmLrg2"]),
                "iVisa01",
            ),
            "Error: Plate pLmReg1 not found in the ticket the requested number of times",
        ),
        (
            swap(json!(["pLmReg1"]), json!(["pLmLrg2"]), "iDebt03"),
            "Error: Payment instrument not found",
        ),
    ] {
        assert_eq!(
            call(&mut db, "modify_placed_ticket_items", args),
            (want.into(), true)
        );
    }
    assert_eq!(
        db.state_hash(),
        fixture().state_hash(),
        "failed calls change nothing"
    );
    // 18.50 -> 24.75 charges 6.25 to the chosen instrument; the label stays.
    let (out, _) = call(
        &mut db,
        "modify_placed_ticket_items",
        swap(json!(["pLmReg1"]), json!(["pLmLrg2"]), "iGift02"),
    );
    let v = json_of(&out);
    assert_eq!(v["line_entries"][0]["plate_ref"], "pLmLrg2");
    assert_eq!(v["line_entries"][0]["cost"], 24.75);
    assert_eq!(v["line_entries"][0]["label"], "Lamb Tagine - Regular, Mild");
    assert_eq!(charges(&out).last(), Some(&ch("payment", 6.25, "iGift02")));
    // Now two payments: the instrument can no longer change.
    assert_eq!(
        call(
            &mut db,
            "modify_placed_ticket_instrument",
            json!({"ticket_ref": "TkDel01", "instrument_ref": "iGift02"})
        )
        .0,
        "Error: There should be exactly one payment charge for a placed ticket"
    );
    // Duplicates: the first occurrence is replaced first; the price oracle agrees.
    let mut db = fixture();
    let args = json!({"ticket_ref": "TkTko04", "plate_refs": ["pTcCod1", "pTcCod1"],
        "new_plate_refs": ["pTcShr2", "pTcCod1"], "instrument_ref": "iDebt03"});
    assert_eq!(super::tools::swap_difference(&db, &args), 1.75);
    let out = call(&mut db, "modify_placed_ticket_items", args).0;
    let v = json_of(&out);
    assert_eq!(v["line_entries"][0]["plate_ref"], "pTcShr2");
    assert_eq!(v["line_entries"][1]["plate_ref"], "pTcCod1");
    assert_eq!(charges(&out).last(), Some(&ch("payment", 1.75, "iDebt03")));
    assert_eq!(
        call(
            &mut db,
            "modify_placed_ticket_items",
            json!({"ticket_ref": "TkPrp03", "plate_refs": ["pTcShr2"],
                "new_plate_refs": ["pTcCod1"], "instrument_ref": "iVisa01"})
        )
        .0,
        "Error: Non-placed ticket cannot be modified"
    );
}

#[test]
fn address_table_instrument_and_tip_changes() {
    let mut db = fixture();
    let address = |ticket: &str| {
        json!({"ticket_ref": ticket, "line_one": "9 Canal Street", "line_two": "",
            "municipality": "Lyon", "province": "Auvergne-Rhone-Alpes", "nation": "France",
            "postal_code": "69002"})
    };
    let (out, err) = call(&mut db, "modify_placed_ticket_dropoff", address("TkDel01"));
    assert!(!err);
    assert_eq!(json_of(&out)["dropoff"]["line_one"], "9 Canal Street");
    assert_eq!(
        call(&mut db, "modify_placed_ticket_dropoff", address("TkDin02")).0,
        "Error: Only delivery tickets have a dropoff address"
    );
    assert_eq!(
        call(&mut db, "modify_placed_ticket_dropoff", address("TkPrp03")).0,
        "Error: Non-placed ticket cannot be modified"
    );
    let table = |ticket: &str| json!({"ticket_ref": ticket, "zone": "Garden Room", "table_no": "3", "seat_count": 4});
    let out = call(&mut db, "modify_placed_ticket_table", table("TkDin02")).0;
    assert_eq!(
        json_of(&out)["table_info"],
        json!({"zone": "Garden Room", "table_no": "3", "seat_count": 4})
    );
    assert_eq!(
        call(&mut db, "modify_placed_ticket_table", table("TkDel01")).0,
        "Error: Only dine-in tickets have table information"
    );
    let instrument = |i: &str| json!({"ticket_ref": "TkDin02", "instrument_ref": i});
    assert_eq!(
        call(
            &mut db,
            "modify_placed_ticket_instrument",
            instrument("iGift02")
        )
        .0,
        "Error: The new instrument should be different from the current one"
    );
    assert_eq!(
        call(
            &mut db,
            "modify_placed_ticket_instrument",
            instrument("iMob004")
        )
        .0,
        "Error: Payment instrument not found"
    );
    let out = call(
        &mut db,
        "modify_placed_ticket_instrument",
        instrument("iVisa01"),
    )
    .0;
    assert_eq!(
        charges(&out),
        [
            ch("payment", 9.5, "iGift02"),
            ch("payment", 9.5, "iVisa01"),
            ch("refund", 9.5, "iGift02")
        ]
    );
    let tip = |amount: f64, i: &str| json!({"ticket_ref": "TkDlv05", "tip_total": amount, "instrument_ref": i});
    let out = call(&mut db, "add_tip_to_ticket", tip(3.456, "iDebt03")).0;
    assert_eq!(charges(&out).last(), Some(&ch("tip", 3.46, "iDebt03")));
    assert_eq!(
        call(&mut db, "add_tip_to_ticket", tip(-1.0, "iDebt03")).0,
        "Error: Tip amount must be non-negative"
    );
    assert_eq!(
        call(&mut db, "add_tip_to_ticket", tip(1.0, "iVisa01")).0,
        "Error: Payment instrument not found"
    );
}

#[test]
fn import_names_the_row_and_exports_model_dump_form() {
    let path = fixture_path();
    let mut tables: BTreeMap<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // Optional keys the reference's file omits come back as null.
    let exported = fixture().to_tau_bench();
    assert_eq!(
        exported["service_tickets"]["TkTko04"]["table_info"],
        Value::Null
    );
    assert_eq!(
        exported["menu_board"]["dLamb01"]["selections"]["pLmReg1"]["cost"],
        18.5
    );
    tables.get_mut("service_tickets").unwrap()["TkDin02"]["service_mode"] = json!("drive_in");
    let e = RestaurantDb::import(&tables, &path)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("service_tickets['TkDin02']"), "{e}");
    tables.get_mut("service_tickets").unwrap()["TkDin02"]["service_mode"] = json!("dine_in");
    tables.get_mut("service_tickets").unwrap()["TkDin02"]["charges"][0]["instrument_ref"] =
        json!("iDebt03");
    let e = RestaurantDb::import(&tables, &path)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("'iDebt03' is not saved for patron 'Rk7Tq2a'"),
        "{e}"
    );
}

// ---------- generators ----------

#[test]
fn generators_have_both_scales_and_make_every_write_possible() {
    for (split, scale) in [(Split::Eval, SCALES.eval), (Split::Train, SCALES.train)] {
        let db = generate::generate(7, split);
        assert_eq!(db.patron_registry.len(), scale.patrons, "{split:?}");
        assert_eq!(db.menu_board.len(), scale.dishes);
        assert_eq!(db.service_tickets.len(), scale.tickets);
        // Re-import of the export succeeds (every reference resolves).
        let tables = db.to_tau_bench();
        RestaurantDb::import(&tables, Path::new("generated")).expect("export imports");
        let titles: std::collections::BTreeSet<&str> = db
            .menu_board
            .iter()
            .map(|(_, d)| d.title.as_str())
            .collect();
        assert_eq!(titles.len(), scale.dishes, "titles are unique");
        let multi_plate = db
            .menu_board
            .iter()
            .filter(|(_, d)| d.selections.values().filter(|p| p.served_today).count() > 1)
            .count();
        assert!(
            multi_plate * 2 > scale.dishes,
            "{multi_plate} dishes offer a swap"
        );
        let multi_instrument = db
            .patron_registry
            .iter()
            .filter(|(_, p)| p.saved_instruments.len() > 1)
            .count();
        assert!(multi_instrument * 3 > scale.patrons, "{multi_instrument}");
        let mut placed = 0;
        for (id, t) in db.service_tickets.iter() {
            let items = t.line_entries.iter().fold(0.0, |s, e| s + e.cost);
            let extras: f64 = t
                .charges
                .iter()
                .filter(|c| matches!(c.kind.as_str(), "tax" | "delivery_fee"))
                .fold(0.0, |s, c| s + c.total);
            let tip_at_order = t
                .charges
                .iter()
                .find(|c| c.kind == "tip")
                .map_or(0.0, |c| c.total);
            let pay = t.payments()[0].total;
            // The payment covers items, tax, fee and (when tipped at ordering) the tip.
            let without = crate::domain::kit::calc::py_round(items + extras, 2);
            let with = crate::domain::kit::calc::py_round(items + extras + tip_at_order, 2);
            assert!(
                pay == without || pay == with,
                "{id}: {pay} vs {without}/{with}"
            );
            if t.is_placed() {
                placed += 1;
                assert_eq!(t.payments().len(), 1, "{id}");
            }
        }
        assert!(placed * 5 > scale.tickets, "{placed} placed tickets");
    }
}

// ---------- policy, grounding, hooks ----------

fn rule(db: &RestaurantDb, tool: &str, args: Value) -> Option<&'static str> {
    db.check_policy(tool, &args).err().map(|v| v.rule)
}

#[test]
fn policy_rules_name_what_the_tools_allow_but_the_policy_forbids() {
    let db = fixture();
    let cancel = "cancel_placed_ticket";
    assert_eq!(
        rule(&db, cancel, json!({"ticket_ref": "TkDel01", "reason": " "})),
        Some("reason_given")
    );
    assert_eq!(
        rule(
            &db,
            cancel,
            json!({"ticket_ref": "TkDel01", "reason": "late"})
        ),
        None
    );
    let home = json!({"ticket_ref": "TkDel01", "line_one": "14 Linden Street",
        "line_two": "Apt 2B", "municipality": "Lyon", "province": "Auvergne-Rhone-Alpes",
        "nation": "France", "postal_code": "69003"});
    assert_eq!(
        rule(&db, "modify_placed_ticket_dropoff", home.clone()),
        Some("address_changes")
    );
    let mut partial = home.clone();
    partial["municipality"] = json!("");
    assert_eq!(
        rule(&db, "modify_placed_ticket_dropoff", partial),
        Some("address_complete")
    );
    let mut moved = home;
    moved["line_two"] = json!("");
    assert_eq!(rule(&db, "modify_placed_ticket_dropoff", moved), None);
    let table = |seats: i64, no: &str| json!({"ticket_ref": "TkDin02", "zone": "Terrace", "table_no": no, "seat_count": seats});
    assert_eq!(
        rule(&db, "modify_placed_ticket_table", table(2, "7")),
        Some("table_changes")
    );
    assert_eq!(
        rule(&db, "modify_placed_ticket_table", table(0, "8")),
        Some("seats_in_range")
    );
    assert_eq!(rule(&db, "modify_placed_ticket_table", table(4, "7")), None);
    let same = json!({"ticket_ref": "TkDel01", "plate_refs": ["pLmReg1"],
        "new_plate_refs": ["pLmReg1"], "instrument_ref": "iVisa01"});
    assert_eq!(
        rule(&db, "modify_placed_ticket_items", same),
        Some("swaps_a_plate")
    );
    let tip =
        |x: f64| json!({"ticket_ref": "TkDel01", "tip_total": x, "instrument_ref": "iVisa01"});
    assert_eq!(
        rule(&db, "add_tip_to_ticket", tip(0.0)),
        Some("tip_positive_cents")
    );
    assert_eq!(
        rule(&db, "add_tip_to_ticket", tip(2.005)),
        Some("tip_positive_cents")
    );
    assert_eq!(rule(&db, "add_tip_to_ticket", tip(2.5)), None);
}

/// Every write tool has a proposal that obeys the policy and executes, for some patron of
/// each generated database (the reference's database would fail this for item swaps and
/// instrument changes).
#[test]
fn proposals_obey_the_policy_and_every_write_grounds() {
    for split in [Split::Eval, Split::Train] {
        let db = generate::generate(11, split);
        for spec in Restaurant.tool_specs() {
            let mut found = false;
            for patron in db.customers().iter().take(120) {
                let ctx = GroundingContext::for_user(patron);
                let mut rng = ChaCha8Rng::seed_from_u64(3);
                for args in db.propose_calls(spec.name, &ctx, &mut rng) {
                    let ok = db.check_policy(spec.name, &args).is_ok()
                        && !crate::domain::Environment::invoke(&mut db.clone(), spec.name, &args)
                            .is_error;
                    if spec.kind == ToolKind::Write {
                        assert!(ok, "{split:?} {}: {args}", spec.name);
                    }
                    found |= ok;
                }
                if found {
                    break;
                }
            }
            assert!(found, "{split:?}: no working proposal for {}", spec.name);
        }
    }
}

#[test]
fn observe_learns_refs_from_lookups() {
    let db = fixture();
    let mut ctx = GroundingContext::default();
    let mut env = db.clone();
    let out = call(
        &mut env,
        "find_patron_ref_by_email",
        json!({"email": "amara.okafor@example.com"}),
    )
    .0;
    db.observe("find_patron_ref_by_email", &json!({}), &out, &mut ctx);
    assert_eq!(ctx.values("guest_ref"), [AMARA]);
    let out = call(&mut env, "get_patron_details", json!({"guest_ref": AMARA})).0;
    db.observe("get_patron_details", &json!({}), &out, &mut ctx);
    assert_eq!(ctx.values("ticket_ref"), ["TkDel01", "TkDin02", "TkPrp03"]);
    assert!(
        ctx.values("instrument_ref")
            .contains(&"iGift02".to_string())
    );
}

#[test]
fn facts_requests_and_ids_speak_as_the_patron() {
    let db = fixture();
    let facts = hooks::user_facts(&db, AMARA);
    assert_eq!(facts[0].kind, "identity");
    assert_eq!(
        facts[0].text,
        "Your email address is amara.okafor@example.com."
    );
    assert!(facts.iter().any(|f| f.kind == "payment"
        && f.text.contains("Tablecraft gift card ending in 0917")
        && f.ids == ["iGift02"]));
    let swap = json!({"ticket_ref": "TkDel01", "plate_refs": ["pLmReg1"],
        "new_plate_refs": ["pLmLrg2"], "instrument_ref": "iGift02"});
    let text = db
        .describe_request("modify_placed_ticket_items", &swap, "")
        .unwrap();
    assert!(
        text.contains("Lamb Tagine (regular, mild, lamb) for the large, hot, lamb one"),
        "{text}"
    );
    assert!(text.contains("$6.25"), "{text}");
    assert!(
        text.contains("Tablecraft gift card ending in 0917"),
        "{text}"
    );
    assert!(
        !text.contains("iGift02") && !text.contains("pLmLrg2"),
        "{text}"
    );
    assert_eq!(
        db.internal_ids("modify_placed_ticket_items", &swap),
        ["iGift02"]
    );
    let cancel = json!({"ticket_ref": "TkDin02", "reason": "plans changed"});
    let text = db
        .describe_request("cancel_placed_ticket", &cancel, "")
        .unwrap();
    assert!(
        text.contains("plans changed") && text.contains("TkDin02"),
        "{text}"
    );
    assert!(
        db.describe_request("find_patron_ref_by_email", &json!({"email": "x"}), "")
            .is_none()
    );
    // What the agent can look up covers every plate an item change of this patron needs.
    let records = db.customer_records(AMARA).join("\n");
    assert!(records.contains("pLmLrg2") && records.contains("\"Lamb Tagine\""));
}
