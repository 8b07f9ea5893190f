//! Retail tests: every tool's success and error behaviour (matching tau-bench's strings),
//! generator consistency and determinism, fork isolation, tau-bench round trips on the
//! hand-written fixture, the policy rules, and grounding coverage.

use super::db::{RetailDb, status};
use super::{Retail, generate, tau_bench};
use crate::domain::Hooks;
use crate::domain::{Database, Domain, Environment, GroundingContext, Split, ToolKind, ToolOutput};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tau_bench/retail")
}

fn fixture() -> RetailDb {
    tau_bench::import(&fixture_dir()).expect("fixture imports")
}

/// The fixture under a ruleset other than the default.
fn fixture_under(ruleset: &str) -> RetailDb {
    let mut db = fixture();
    Hooks::set_ruleset(&mut db, ruleset).expect("known ruleset");
    db
}

fn call(db: &mut RetailDb, tool: &str, args: Value) -> ToolOutput {
    Environment::invoke(db, tool, &args)
}

fn ok(db: &mut RetailDb, tool: &str, args: Value) -> String {
    let out = call(db, tool, args);
    assert!(!out.is_error, "{tool} failed: {}", out.text);
    out.text
}

fn ok_json(db: &mut RetailDb, tool: &str, args: Value) -> Value {
    serde_json::from_str(&ok(db, tool, args)).expect("tool output is JSON")
}

fn err(db: &mut RetailDb, tool: &str, args: Value) -> String {
    let out = call(db, tool, args);
    assert!(out.is_error, "{tool} unexpectedly succeeded: {}", out.text);
    out.text
}

fn balance(db: &RetailDb, user: &str, method: &str) -> f64 {
    let m = &db.users.get(user).unwrap().payment_methods[method];
    assert!(m.balance.is_some(), "{method} has a balance");
    m.balance_amount()
}

const MARA: &str = "mara_lindqvist_4021";
const TOMAS: &str = "tomas_okafor_7730";

// ---------- tool list ----------

#[test]
fn sixteen_tools_with_tau_bench_names_and_kinds() {
    let specs = Retail.tool_specs();
    assert_eq!(specs.len(), 16);
    let read: BTreeSet<&str> = specs
        .iter()
        .filter(|s| s.kind == ToolKind::Read)
        .map(|s| s.name)
        .collect();
    let write: BTreeSet<&str> = specs
        .iter()
        .filter(|s| s.kind == ToolKind::Write)
        .map(|s| s.name)
        .collect();
    assert_eq!(
        read,
        BTreeSet::from([
            "calculate",
            "find_user_id_by_email",
            "find_user_id_by_name_zip",
            "get_order_details",
            "get_product_details",
            "get_user_details",
            "list_all_product_types",
            "think",
            "transfer_to_human_agents"
        ])
    );
    assert_eq!(
        write,
        BTreeSet::from([
            "cancel_pending_order",
            "exchange_delivered_order_items",
            "modify_pending_order_address",
            "modify_pending_order_items",
            "modify_pending_order_payment",
            "modify_user_address",
            "return_delivered_order_items"
        ])
    );
    let terminating: Vec<&str> = specs
        .iter()
        .filter(|s| s.terminates)
        .map(|s| s.name)
        .collect();
    assert_eq!(terminating, vec!["transfer_to_human_agents"]);
    for s in specs {
        assert_eq!(s.openai()["function"]["name"], s.name);
        assert_eq!(s.parameters["type"], "object");
        assert!(!s.description.is_empty());
    }
}

#[test]
fn unknown_tool_is_an_error_observation() {
    let mut db = fixture();
    assert_eq!(
        err(&mut db, "book_flight", json!({})),
        "Unknown action book_flight"
    );
}

// ---------- read tools ----------

#[test]
fn find_user_by_email_and_by_name_zip() {
    let mut db = fixture();
    assert_eq!(
        ok(
            &mut db,
            "find_user_id_by_email",
            json!({"email": "MARA.Lindqvist4021@example.com"})
        ),
        MARA
    );
    assert_eq!(
        err(
            &mut db,
            "find_user_id_by_email",
            json!({"email": "nobody@example.com"})
        ),
        "Error: user not found"
    );
    assert!(
        err(&mut db, "find_user_id_by_email", json!({}))
            .contains("missing required argument 'email'")
    );
    assert!(err(&mut db, "find_user_id_by_email", json!({"email": 7})).contains("'email'"));
    assert_eq!(
        ok(
            &mut db,
            "find_user_id_by_name_zip",
            json!({"first_name": "tomas", "last_name": "OKAFOR", "zip": "31405"})
        ),
        TOMAS
    );
    assert_eq!(
        err(
            &mut db,
            "find_user_id_by_name_zip",
            json!({"first_name": "Tomas", "last_name": "Okafor", "zip": "31406"})
        ),
        "Error: user not found"
    );
    assert!(
        err(
            &mut db,
            "find_user_id_by_name_zip",
            json!({"first_name": "Tomas", "last_name": "Okafor"})
        )
        .contains("'zip'")
    );
}

#[test]
fn get_details_return_the_rows_or_not_found() {
    let mut db = fixture();
    let files = db.to_tau_bench_files();
    let user = ok_json(&mut db, "get_user_details", json!({"user_id": MARA}));
    assert_eq!(user, files["users"][MARA]);
    assert_eq!(
        user["orders"],
        json!(["#W1000001", "#W1000002", "#W1000003"])
    );
    assert_eq!(
        err(&mut db, "get_user_details", json!({"user_id": "ghost_1"})),
        "Error: user not found"
    );
    let order = ok_json(
        &mut db,
        "get_order_details",
        json!({"order_id": "#W1000003"}),
    );
    assert_eq!(order, files["orders"]["#W1000003"]);
    assert_eq!(order["cancel_reason"], "no longer needed");
    let pending = ok_json(
        &mut db,
        "get_order_details",
        json!({"order_id": "#W1000001"}),
    );
    assert!(
        pending.get("cancel_reason").is_none(),
        "absent optional fields stay absent"
    );
    assert_eq!(
        err(
            &mut db,
            "get_order_details",
            json!({"order_id": "W1000001"})
        ),
        "Error: order not found"
    );
    let product = ok_json(
        &mut db,
        "get_product_details",
        json!({"product_id": "8310041122"}),
    );
    assert_eq!(product["name"], "Desk Fan");
    assert_eq!(product["variants"]["1100000003"]["available"], false);
    assert_eq!(
        err(
            &mut db,
            "get_product_details",
            json!({"product_id": "1100000001"})
        ),
        "Error: product not found"
    );
    assert!(
        err(
            &mut db,
            "get_product_details",
            json!({"product_id": 8310041122u64})
        )
        .contains("'product_id'")
    );
}

impl RetailDb {
    fn to_tau_bench_files(&self) -> std::collections::BTreeMap<String, Value> {
        Database::to_tau_bench(self)
    }
}

#[test]
fn list_product_types_calculate_think_transfer() {
    let mut db = fixture();
    assert_eq!(
        ok_json(&mut db, "list_all_product_types", json!({})),
        json!({"Desk Fan": "8310041122", "Espresso Cups": "8310041144", "Yoga Block": "8310041133"})
    );
    assert!(
        err(&mut db, "list_all_product_types", json!({"x": 1})).contains("unexpected argument 'x'")
    );
    assert_eq!(
        ok(&mut db, "calculate", json!({"expression": "34.5 + 12.4"})),
        "46.9"
    );
    assert_eq!(
        ok(
            &mut db,
            "calculate",
            json!({"expression": "(60.25 - 46.9) * 2"})
        ),
        "26.7"
    );
    assert_eq!(
        err(&mut db, "calculate", json!({"expression": "import os"})),
        "Error: invalid characters in expression"
    );
    assert_eq!(
        err(&mut db, "calculate", json!({"expression": "4 / 0"})),
        "Error: division by zero"
    );
    assert_eq!(
        ok(&mut db, "think", json!({"thought": "check status first"})),
        ""
    );
    assert!(err(&mut db, "think", json!({})).contains("'thought'"));
    assert_eq!(
        ok(
            &mut db,
            "transfer_to_human_agents",
            json!({"summary": "wants a manager"})
        ),
        "Transfer successful"
    );
    let before = Database::state_hash(&fixture());
    assert_eq!(
        Database::state_hash(&db),
        before,
        "read tools never change the state"
    );
}

// ---------- write tools ----------

#[test]
fn cancel_pending_order_refunds_and_rejects_non_pending() {
    let mut db = fixture();
    let out = ok_json(
        &mut db,
        "cancel_pending_order",
        json!({"order_id": "#W1000004", "reason": "ordered by mistake"}),
    );
    assert_eq!(out["status"], "cancelled");
    assert_eq!(out["cancel_reason"], "ordered by mistake");
    assert_eq!(
        out["payment_history"][1],
        json!({"transaction_type": "refund", "amount": 44.3, "payment_method_id": "paypal_5520031"})
    );
    assert_eq!(
        err(
            &mut db,
            "cancel_pending_order",
            json!({"order_id": "#W1000004", "reason": "no longer needed"})
        ),
        "Error: non-pending order cannot be cancelled"
    );
    assert_eq!(
        err(
            &mut db,
            "cancel_pending_order",
            json!({"order_id": "#W1000002", "reason": "no longer needed"})
        ),
        "Error: non-pending order cannot be cancelled"
    );
    assert_eq!(
        err(
            &mut db,
            "cancel_pending_order",
            json!({"order_id": "#W0", "reason": "no longer needed"})
        ),
        "Error: order not found"
    );
    assert!(
        err(
            &mut db,
            "cancel_pending_order",
            json!({"order_id": "#W1000001", "reason": "too slow"})
        )
        .contains("'reason'")
    );
    assert!(
        err(
            &mut db,
            "cancel_pending_order",
            json!({"order_id": "#W1000001"})
        )
        .contains("'reason'")
    );
    assert_eq!(db.orders.get("#W1000001").unwrap().status, "pending");
}

#[test]
fn cancel_refunds_every_history_entry_to_gift_cards_immediately() {
    let mut db = fixture();
    ok(
        &mut db,
        "modify_pending_order_payment",
        json!({"order_id": "#W1000001", "payment_method_id": "gift_card_4410022"}),
    );
    assert_eq!(balance(&db, MARA, "gift_card_4410022"), 13.35);
    let out = ok_json(
        &mut db,
        "cancel_pending_order",
        json!({"order_id": "#W1000001", "reason": "no longer needed"}),
    );
    // tau-bench refunds each history entry; the gift-card one is credited at once.
    assert_eq!(out["payment_history"].as_array().unwrap().len(), 6);
    assert_eq!(balance(&db, MARA, "gift_card_4410022"), 60.25);
}

#[test]
fn modify_pending_order_address_only_while_pending() {
    let mut db = fixture();
    let addr = json!({"address1": "77 Lantern Way", "address2": "", "city": "Reno",
        "state": "NV", "country": "USA", "zip": "89501"});
    let mut args = addr.clone();
    args["order_id"] = json!("#W1000001");
    let out = ok_json(&mut db, "modify_pending_order_address", args);
    assert_eq!(out["address"], addr);
    assert_eq!(out["status"], "pending");
    let mut args = addr.clone();
    args["order_id"] = json!("#W1000005");
    assert_eq!(
        err(&mut db, "modify_pending_order_address", args),
        "Error: non-pending order cannot be modified"
    );
    let mut args = addr.clone();
    args["order_id"] = json!("#W9");
    assert_eq!(
        err(&mut db, "modify_pending_order_address", args),
        "Error: order not found"
    );
    assert!(
        err(
            &mut db,
            "modify_pending_order_address",
            json!({"order_id": "#W1000001"})
        )
        .contains("missing required argument")
    );
}

#[test]
fn modify_pending_order_items_pays_the_difference_and_follows_the_lifecycle() {
    // tau-emotion-bench (default): the order stays pending, so it can be modified again and
    // cancelled afterwards.
    let mut db = fixture();
    assert_eq!(Hooks::ruleset(&db), Some("tau-emotion-bench"));
    let out = ok_json(
        &mut db,
        "modify_pending_order_items",
        json!({"order_id": "#W1000001", "item_ids": ["1100000001"], "new_item_ids": ["1100000002"],
            "payment_method_id": "gift_card_4410022"}),
    );
    assert_eq!(out["status"], status::PENDING);
    assert!(
        Hooks::check_policy(
            &db,
            "cancel_pending_order",
            &json!({"order_id": "#W1000001", "reason": "no longer needed"})
        )
        .is_ok()
    );
    let out = ok_json(
        &mut db,
        "modify_pending_order_items",
        json!({"order_id": "#W1000001", "item_ids": ["1100000002"], "new_item_ids": ["1100000001"],
            "payment_method_id": "gift_card_4410022"}),
    );
    assert_eq!(out["status"], status::PENDING);
    assert_eq!(out["payment_history"].as_array().unwrap().len(), 3);
    let out = ok_json(
        &mut db,
        "cancel_pending_order",
        json!({"order_id": "#W1000001", "reason": "no longer needed"}),
    );
    assert_eq!(out["status"], status::CANCELLED);

    // tau-bench: the modification is final.
    let mut db = fixture_under("tau-bench");
    let out = ok_json(
        &mut db,
        "modify_pending_order_items",
        json!({"order_id": "#W1000001", "item_ids": ["1100000001"], "new_item_ids": ["1100000002"],
            "payment_method_id": "gift_card_4410022"}),
    );
    assert_eq!(out["status"], status::PENDING_ITEM_MODIFIED);
    assert_eq!(out["items"][0]["item_id"], "1100000002");
    assert_eq!(out["items"][0]["price"], 36.25);
    assert_eq!(out["items"][0]["options"]["color"], "black");
    assert_eq!(
        out["payment_history"][1],
        json!({"transaction_type": "payment", "amount": 1.75, "payment_method_id": "gift_card_4410022"})
    );
    assert_eq!(balance(&db, MARA, "gift_card_4410022"), 58.5);
    assert_eq!(
        err(
            &mut db,
            "modify_pending_order_items",
            json!({"order_id": "#W1000001", "item_ids": ["2200000002"], "new_item_ids": ["2200000001"],
                "payment_method_id": "credit_card_4410021"})
        ),
        "Error: non-pending order cannot be modified"
    );
    assert_eq!(
        err(
            &mut db,
            "cancel_pending_order",
            json!({"order_id": "#W1000001", "reason": "no longer needed"})
        ),
        "Error: non-pending order cannot be cancelled"
    );
}

#[test]
fn modify_pending_order_items_handles_duplicates_and_refunds() {
    let mut db = fixture();
    let out = ok_json(
        &mut db,
        "modify_pending_order_items",
        json!({"order_id": "#W1000004", "item_ids": ["3300000001", "3300000001"],
            "new_item_ids": ["3300000002", "3300000002"], "payment_method_id": "paypal_5520031"}),
    );
    assert_eq!(out["items"][0]["item_id"], "3300000002");
    assert_eq!(out["items"][1]["item_id"], "3300000002");
    assert_eq!(out["payment_history"][1]["amount"], 35.3);
    assert_eq!(out["payment_history"][1]["transaction_type"], "payment");
    // A pricier replacement is paid for...
    let mut db = fixture();
    let out = ok_json(
        &mut db,
        "modify_pending_order_items",
        json!({"order_id": "#W1000001", "item_ids": ["2200000002"], "new_item_ids": ["2200000003"],
            "payment_method_id": "credit_card_4410021"}),
    );
    assert_eq!(out["payment_history"][1]["transaction_type"], "payment");
    // Unrounded, as tau-bench records it: 24.6 - 12.4 = 12.200000000000001.
    assert_eq!(out["payment_history"][1]["amount"], 24.6 - 12.4);
    // ...a cheaper one refunds the difference, straight onto a gift card.
    let mut db = fixture();
    db.products
        .get_mut("8310041122")
        .unwrap()
        .variants
        .get_mut("1100000002")
        .unwrap()
        .price = 30.0;
    let out = ok_json(
        &mut db,
        "modify_pending_order_items",
        json!({"order_id": "#W1000001", "item_ids": ["1100000001"], "new_item_ids": ["1100000002"],
            "payment_method_id": "gift_card_4410022"}),
    );
    assert_eq!(
        out["payment_history"][1],
        json!({"transaction_type": "refund", "amount": 4.5, "payment_method_id": "gift_card_4410022"})
    );
    assert_eq!(balance(&db, MARA, "gift_card_4410022"), 64.75);
}

#[test]
fn modify_pending_order_items_errors_match_tau_bench() {
    let mut db = fixture();
    let base = Database::state_hash(&db);
    let args = |items: Value, new: Value, pay: &str| json!({"order_id": "#W1000001", "item_ids": items, "new_item_ids": new, "payment_method_id": pay});
    let cc = "credit_card_4410021";
    assert_eq!(
        err(
            &mut db,
            "modify_pending_order_items",
            args(json!(["999"]), json!(["1100000002"]), cc)
        ),
        "Error: 999 not found"
    );
    assert_eq!(
        err(
            &mut db,
            "modify_pending_order_items",
            args(
                json!(["1100000001", "1100000001"]),
                json!(["1100000002", "1100000002"]),
                cc
            )
        ),
        "Error: 1100000001 not found"
    );
    assert_eq!(
        err(
            &mut db,
            "modify_pending_order_items",
            args(json!(["1100000001"]), json!(["1100000003"]), cc)
        ),
        "Error: new item 1100000003 not found or available"
    );
    assert_eq!(
        err(
            &mut db,
            "modify_pending_order_items",
            args(json!(["1100000001"]), json!(["2200000003"]), cc)
        ),
        "Error: new item 2200000003 not found or available"
    );
    assert_eq!(
        err(
            &mut db,
            "modify_pending_order_items",
            args(json!(["1100000001"]), json!([]), cc)
        ),
        "Error: the number of items to be exchanged should match"
    );
    assert_eq!(
        err(
            &mut db,
            "modify_pending_order_items",
            args(
                json!(["1100000001"]),
                json!(["1100000002"]),
                "paypal_5520031"
            )
        ),
        "Error: payment method not found"
    );
    assert!(
        err(
            &mut db,
            "modify_pending_order_items",
            args(json!("1100000001"), json!(["1100000002"]), cc)
        )
        .contains("'item_ids'")
    );
    assert!(
        err(
            &mut db,
            "modify_pending_order_items",
            args(json!([1]), json!(["1100000002"]), cc)
        )
        .contains("item_ids[0]")
    );
    let mut tomas = fixture();
    assert_eq!(
        err(
            &mut tomas,
            "modify_pending_order_items",
            json!({"order_id": "#W1000004", "item_ids": ["3300000001"], "new_item_ids": ["3300000002"],
                "payment_method_id": "gift_card_5520032"})
        ),
        "Error: insufficient gift card balance to pay for the new item"
    );
    assert_eq!(
        Database::state_hash(&db),
        base,
        "failed calls leave no trace"
    );
}

#[test]
fn modify_pending_order_payment_swaps_and_checks() {
    let mut db = fixture();
    let out = ok_json(
        &mut db,
        "modify_pending_order_payment",
        json!({"order_id": "#W1000001", "payment_method_id": "gift_card_4410022"}),
    );
    assert_eq!(
        out["payment_history"],
        json!([
            {"transaction_type": "payment", "amount": 46.9, "payment_method_id": "credit_card_4410021"},
            {"transaction_type": "payment", "amount": 46.9, "payment_method_id": "gift_card_4410022"},
            {"transaction_type": "refund", "amount": 46.9, "payment_method_id": "credit_card_4410021"}
        ])
    );
    assert_eq!(out["status"], "pending");
    assert_eq!(balance(&db, MARA, "gift_card_4410022"), 13.35);
    assert_eq!(
        err(
            &mut db,
            "modify_pending_order_payment",
            json!({"order_id": "#W1000001", "payment_method_id": "credit_card_4410021"})
        ),
        "Error: there should be exactly one payment for a pending order"
    );
    let mut db = fixture();
    assert_eq!(
        err(
            &mut db,
            "modify_pending_order_payment",
            json!({"order_id": "#W1000001", "payment_method_id": "credit_card_4410021"})
        ),
        "Error: the new payment method should be different from the current one"
    );
    assert_eq!(
        err(
            &mut db,
            "modify_pending_order_payment",
            json!({"order_id": "#W1000001", "payment_method_id": "paypal_5520031"})
        ),
        "Error: payment method not found"
    );
    assert_eq!(
        err(
            &mut db,
            "modify_pending_order_payment",
            json!({"order_id": "#W1000004", "payment_method_id": "gift_card_5520032"})
        ),
        "Error: insufficient gift card balance to pay for the order"
    );
    assert_eq!(
        err(
            &mut db,
            "modify_pending_order_payment",
            json!({"order_id": "#W1000002", "payment_method_id": "credit_card_4410021"})
        ),
        "Error: non-pending order cannot be modified"
    );
    assert_eq!(
        err(
            &mut db,
            "modify_pending_order_payment",
            json!({"order_id": "#W404", "payment_method_id": "credit_card_4410021"})
        ),
        "Error: order not found"
    );
}

#[test]
fn modify_pending_order_payment_refunds_an_old_gift_card() {
    let mut db = fixture();
    // Order #W1000002 is delivered; build a pending gift-card order by editing a fork.
    {
        let order = db.orders.get_mut("#W1000002").unwrap();
        order.status = "pending".into();
    }
    ok(
        &mut db,
        "modify_pending_order_payment",
        json!({"order_id": "#W1000002", "payment_method_id": "credit_card_4410021"}),
    );
    assert_eq!(balance(&db, MARA, "gift_card_4410022"), 101.15);
}

#[test]
fn modify_user_address_replaces_the_default_address() {
    let mut db = fixture();
    let out = ok_json(
        &mut db,
        "modify_user_address",
        json!({"user_id": "ines_varga_1192", "address1": "3 Aspen Circle", "address2": "Apt 4",
            "city": "Boise", "state": "ID", "country": "USA", "zip": "83702"}),
    );
    assert_eq!(out["address"]["zip"], "83702");
    assert_eq!(out["email"], "ines.varga1192@example.com");
    assert_eq!(
        db.users.get("ines_varga_1192").unwrap().address.city,
        "Boise"
    );
    assert_eq!(
        err(
            &mut db,
            "modify_user_address",
            json!({"user_id": "nobody", "address1": "x", "address2": "", "city": "c",
                "state": "s", "country": "USA", "zip": "1"})
        ),
        "Error: user not found"
    );
}

#[test]
fn return_delivered_order_items_rules() {
    let mut db = fixture();
    let out = ok_json(
        &mut db,
        "return_delivered_order_items",
        json!({"order_id": "#W1000002", "item_ids": ["3300000001", "2200000001"],
            "payment_method_id": "gift_card_4410022"}),
    );
    assert_eq!(out["status"], status::DELIVERED_RETURN_REQUESTED);
    assert_eq!(out["return_items"], json!(["2200000001", "3300000001"]));
    assert_eq!(out["return_payment_method_id"], "gift_card_4410022");
    // The authors' tools accept a second return of a `delivered (...)` order and replace
    // the first request's items; our policy refuses it, so no task does that.
    let again = json!({"order_id": "#W1000002", "item_ids": ["2200000001"], "payment_method_id": "gift_card_4410022"});
    let violation = Hooks::check_policy(&db, "return_delivered_order_items", &again).unwrap_err();
    assert!(
        violation.detail.contains("already has a return request"),
        "{violation}"
    );
    let out = ok_json(&mut db, "return_delivered_order_items", again);
    assert_eq!(out["return_items"], json!(["2200000001"]));
    // An exchange may follow a return (of other items).
    let exchange = json!({"order_id": "#W1000002", "item_ids": ["3300000001"], "new_item_ids": ["3300000002"], "payment_method_id": "gift_card_4410022"});
    let violation = Hooks::check_policy(&db, "exchange_delivered_order_items", &json!({"order_id": "#W1000002", "item_ids": ["2200000001"], "new_item_ids": ["2200000003"], "payment_method_id": "credit_card_4410021"})).unwrap_err();
    assert!(violation.detail.contains("already part of"), "{violation}");
    assert!(Hooks::check_policy(&db, "exchange_delivered_order_items", &exchange).is_ok());
    let out = ok_json(&mut db, "exchange_delivered_order_items", exchange);
    assert_eq!(out["status"], status::DELIVERED_EXCHANGE_REQUESTED);

    // tau-bench: exactly `delivered`, and the request ends returns and exchanges.
    let mut db = fixture_under("tau-bench");
    let out = ok_json(
        &mut db,
        "return_delivered_order_items",
        json!({"order_id": "#W1000002", "item_ids": ["3300000001", "2200000001"],
            "payment_method_id": "gift_card_4410022"}),
    );
    assert_eq!(out["status"], status::RETURN_REQUESTED);
    assert_eq!(
        err(
            &mut db,
            "return_delivered_order_items",
            json!({"order_id": "#W1000002", "item_ids": ["2200000001"], "payment_method_id": "gift_card_4410022"})
        ),
        "Error: non-delivered order cannot be returned"
    );
    let mut db = fixture();
    assert_eq!(
        err(
            &mut db,
            "return_delivered_order_items",
            json!({"order_id": "#W1000002", "item_ids": ["2200000001"], "payment_method_id": "credit_card_4410021"})
        ),
        "Error: payment method should be either the original payment method or a gift card"
    );
    assert_eq!(
        err(
            &mut db,
            "return_delivered_order_items",
            json!({"order_id": "#W1000002", "item_ids": ["2200000001", "2200000001"], "payment_method_id": "gift_card_4410022"})
        ),
        "Error: some item not found"
    );
    assert_eq!(
        err(
            &mut db,
            "return_delivered_order_items",
            json!({"order_id": "#W1000002", "item_ids": ["2200000001"], "payment_method_id": "gift_card_5520032"})
        ),
        "Error: payment method not found"
    );
    assert_eq!(
        err(
            &mut db,
            "return_delivered_order_items",
            json!({"order_id": "#W1000001", "item_ids": ["1100000001"], "payment_method_id": "credit_card_4410021"})
        ),
        "Error: non-delivered order cannot be returned"
    );
    assert_eq!(
        err(
            &mut db,
            "return_delivered_order_items",
            json!({"order_id": "#X", "item_ids": [], "payment_method_id": "x"})
        ),
        "Error: order not found"
    );
}

#[test]
fn exchange_delivered_order_items_rules() {
    let mut db = fixture();
    let out = ok_json(
        &mut db,
        "exchange_delivered_order_items",
        json!({"order_id": "#W1000002", "item_ids": ["2200000001"], "new_item_ids": ["2200000003"],
            "payment_method_id": "credit_card_4410021"}),
    );
    assert_eq!(out["status"], status::DELIVERED_EXCHANGE_REQUESTED);
    assert_eq!(out["exchange_items"], json!(["2200000001"]));
    assert_eq!(out["exchange_new_items"], json!(["2200000003"]));
    assert_eq!(out["exchange_price_difference"], 5.85);
    assert_eq!(
        out["items"][0]["item_id"], "2200000001",
        "items change only when the exchange completes"
    );
    // tau-emotion-bench: a return of other items may follow; a second exchange is refused
    // by our policy (the tool would replace the first request).
    let second = json!({"order_id": "#W1000002", "item_ids": ["3300000001"], "new_item_ids": ["3300000002"], "payment_method_id": "credit_card_4410021"});
    assert!(Hooks::check_policy(&db, "exchange_delivered_order_items", &second).is_err());
    let ret = json!({"order_id": "#W1000002", "item_ids": ["3300000001"], "payment_method_id": "gift_card_4410022"});
    assert!(Hooks::check_policy(&db, "return_delivered_order_items", &ret).is_ok());
    assert_eq!(
        ok_json(&mut db, "return_delivered_order_items", ret)["status"],
        status::DELIVERED_RETURN_REQUESTED
    );

    // tau-bench: the exchange request ends it.
    let mut db = fixture_under("tau-bench");
    let out = ok_json(
        &mut db,
        "exchange_delivered_order_items",
        json!({"order_id": "#W1000002", "item_ids": ["2200000001"], "new_item_ids": ["2200000003"],
            "payment_method_id": "credit_card_4410021"}),
    );
    assert_eq!(out["status"], status::EXCHANGE_REQUESTED);
    assert_eq!(
        err(
            &mut db,
            "exchange_delivered_order_items",
            json!({"order_id": "#W1000002", "item_ids": ["2200000001"], "new_item_ids": ["2200000003"], "payment_method_id": "credit_card_4410021"})
        ),
        "Error: non-delivered order cannot be exchanged"
    );
    let mut db = fixture();
    let ex = |items: Value, new: Value, pay: &str| json!({"order_id": "#W1000002", "item_ids": items, "new_item_ids": new, "payment_method_id": pay});
    assert_eq!(
        err(
            &mut db,
            "exchange_delivered_order_items",
            ex(
                json!(["1100000001"]),
                json!(["1100000002"]),
                "gift_card_4410022"
            )
        ),
        "Error: 1100000001 not found"
    );
    assert_eq!(
        err(
            &mut db,
            "exchange_delivered_order_items",
            ex(
                json!(["3300000001"]),
                json!(["2200000003"]),
                "gift_card_4410022"
            )
        ),
        "Error: new item 2200000003 not found or available"
    );
    assert_eq!(
        err(
            &mut db,
            "exchange_delivered_order_items",
            ex(
                json!(["3300000001"]),
                json!(["3300000002", "3300000002"]),
                "gift_card_4410022"
            )
        ),
        "Error: the number of items to be exchanged should match"
    );
    assert_eq!(
        err(
            &mut db,
            "exchange_delivered_order_items",
            ex(
                json!(["3300000001"]),
                json!(["3300000002"]),
                "paypal_5520031"
            )
        ),
        "Error: payment method not found"
    );
    db.users
        .get_mut(MARA)
        .unwrap()
        .payment_methods
        .get_mut("gift_card_4410022")
        .unwrap()
        .set_balance(1.0);
    assert_eq!(
        err(
            &mut db,
            "exchange_delivered_order_items",
            ex(
                json!(["2200000001"]),
                json!(["2200000003"]),
                "gift_card_4410022"
            )
        ),
        "Error: insufficient gift card balance to pay for the price difference"
    );
    assert_eq!(
        err(
            &mut db,
            "exchange_delivered_order_items",
            ex(
                json!(["2200000001"]),
                json!(["2200000003"]),
                "gift_card_4410022"
            )
        ),
        "Error: insufficient gift card balance to pay for the price difference"
    );
    assert_eq!(
        err(
            &mut db,
            "exchange_delivered_order_items",
            json!({"order_id": "#W1000001", "item_ids": ["1100000001"], "new_item_ids": ["1100000002"], "payment_method_id": "credit_card_4410021"})
        ),
        "Error: non-delivered order cannot be exchanged"
    );
}

#[test]
fn no_tool_panics_on_hostile_arguments() {
    let hostile = [
        json!(null),
        json!([]),
        json!({}),
        json!({"order_id": null, "user_id": 3, "item_ids": [null], "new_item_ids": {}, "expression": "((((",
            "payment_method_id": "", "email": "", "reason": "", "product_id": [], "thought": 1}),
        json!({"order_id": "#W1000001", "item_ids": ["1100000001"], "new_item_ids": ["1100000001"],
            "payment_method_id": "gift_card_4410022", "reason": "no longer needed", "address1": "",
            "address2": "", "city": "", "state": "", "country": "", "zip": "", "user_id": "",
            "expression": "1e5", "summary": "", "thought": "", "email": "", "first_name": "",
            "last_name": "", "product_id": ""}),
    ];
    let mut db = fixture();
    for spec in Retail.tool_specs() {
        for args in &hostile {
            let _ = call(&mut db, spec.name, args.clone());
        }
    }
}

// ---------- generator ----------

#[test]
fn generated_database_has_paper_scale_and_is_consistent() {
    let db = generate::generate(7);
    assert_eq!(db.users.len(), 527);
    assert_eq!(db.products.len(), 50);
    assert_eq!(db.orders.len(), 1_075);
    let mut item_ids = BTreeSet::new();
    for (pid, p) in db.products.iter() {
        assert_eq!(p.product_id, pid);
        assert!(
            (5..=20).contains(&p.variants.len()),
            "{} has {} variants",
            p.name,
            p.variants.len()
        );
        assert!(p.variants.values().filter(|v| v.available).count() >= 2);
        for (iid, v) in &p.variants {
            assert_eq!(&v.item_id, iid);
            assert!(v.price > 0.0);
            assert!(item_ids.insert(iid.clone()), "item id {iid} reused");
        }
    }
    let names: BTreeSet<&str> = db.products.iter().map(|(_, p)| p.name.as_str()).collect();
    assert_eq!(names.len(), 50);
    let mut emails = BTreeSet::new();
    let mut name_zip = BTreeSet::new();
    let mut listed = 0;
    let mut frequent = 0;
    for (uid, u) in db.users.iter() {
        assert!(emails.insert(u.email.to_lowercase()));
        assert!(name_zip.insert((
            u.name.first_name.clone(),
            u.name.last_name.clone(),
            u.address.zip.clone()
        )));
        assert!(!u.payment_methods.is_empty());
        for (mid, m) in &u.payment_methods {
            assert_eq!(&m.id, mid);
            assert!(mid.starts_with(&m.source));
            assert_eq!(m.is_gift_card(), m.balance.is_some());
            assert!(m.balance_amount() >= 0.0);
            assert_eq!(m.source == "credit_card", m.last_four.is_some());
        }
        let n = u.orders.len();
        assert!(
            (1..=4).contains(&n) || n == generate::FREQUENT_SHOPPER_ORDERS,
            "{uid} has {n} orders"
        );
        if n == generate::FREQUENT_SHOPPER_ORDERS {
            frequent += 1;
        }
        for oid in &u.orders {
            assert_eq!(db.orders.get(oid).unwrap().user_id, uid);
            listed += 1;
        }
    }
    assert_eq!(listed, 1_075, "every order is listed by exactly its user");
    assert_eq!(frequent, 527 / 40, "a few frequent shoppers");
    let mut statuses = std::collections::BTreeMap::new();
    for (oid, o) in db.orders.iter() {
        assert_eq!(o.order_id, oid);
        assert!(oid.starts_with("#W") && oid.len() == 9);
        *statuses.entry(o.status.clone()).or_insert(0) += 1;
        let owner = db.users.get(&o.user_id).unwrap();
        assert!(!o.items.is_empty());
        for item in &o.items {
            let p = db.products.get(&item.product_id).unwrap();
            assert_eq!(p.name, item.name);
            let v = &p.variants[&item.item_id];
            assert_eq!(v.price, item.price);
            assert_eq!(v.options, item.options);
        }
        let first = &o.payment_history[0];
        assert_eq!(first.transaction_type, "payment");
        let total: f64 = o.items.iter().map(|i| i.price).sum();
        assert!((first.amount - total).abs() < 0.005);
        for t in &o.payment_history {
            assert!(owner.payment_methods.contains_key(&t.payment_method_id));
        }
        let shipped = !matches!(o.status.as_str(), "pending" | "cancelled");
        assert_eq!(
            shipped,
            !o.fulfillments.is_empty(),
            "{oid} fulfilments vs {}",
            o.status
        );
        match o.status.as_str() {
            "cancelled" => {
                assert_eq!(o.payment_history.len(), 2);
                assert!(o.cancel_reason.is_some());
            }
            "exchange requested" => {
                let old = &o.exchange_items.as_ref().unwrap()[0];
                let new = &o.exchange_new_items.as_ref().unwrap()[0];
                let item = o.items.iter().find(|i| &i.item_id == old).unwrap();
                let v = &db.products.get(&item.product_id).unwrap().variants[new];
                assert!(v.available && new != old);
            }
            "return requested" => {
                let r = &o.return_items.as_ref().unwrap()[0];
                assert!(o.items.iter().any(|i| &i.item_id == r));
            }
            _ => assert_eq!(o.payment_history.len(), 1),
        }
    }
    for s in [
        "pending",
        "processed",
        "delivered",
        "cancelled",
        "exchange requested",
        "return requested",
    ] {
        assert!(
            statuses.get(s).copied().unwrap_or(0) > 5,
            "too few '{s}' orders: {statuses:?}"
        );
    }
    assert!(
        statuses["pending"] > 300 && statuses["delivered"] > 300,
        "{statuses:?}"
    );
}

#[test]
fn generation_is_deterministic_per_seed() {
    let a = Retail.generate(11, Split::Eval);
    let b = Retail.generate(11, Split::Train);
    let c = Retail.generate(12, Split::Eval);
    assert_eq!(a.state_hash(), b.state_hash());
    assert_ne!(a.state_hash(), c.state_hash());
    assert_eq!(a.customers(), b.customers());
    assert_eq!(a.customers().len(), 527);
}

#[test]
fn forks_are_isolated() {
    let base = Retail.generate(3, Split::Eval);
    let before = base.state_hash();
    let mut fork = base.fork();
    let user = base.customers()[0].clone();
    let out = fork.invoke(
        "modify_user_address",
        &json!({"user_id": user, "address1": "1 Wharf Street", "address2": "", "city": "Reno",
            "state": "NV", "country": "USA", "zip": "89501"}),
    );
    assert!(!out.is_error, "{}", out.text);
    assert_ne!(fork.state_hash(), before);
    assert_eq!(base.state_hash(), before);
    let mut again = base.fork();
    let out = again.invoke(
        "modify_user_address",
        &json!({"user_id": user, "address1": "1 Wharf Street", "address2": "", "city": "Reno",
            "state": "NV", "country": "USA", "zip": "89501"}),
    );
    assert!(!out.is_error);
    assert_eq!(
        again.state_hash(),
        fork.state_hash(),
        "same edits, same hash"
    );
}

// ---------- tau-bench import / export ----------

fn read_fixture(stem: &str) -> Value {
    let text = std::fs::read_to_string(fixture_dir().join(format!("{stem}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn fixture_round_trips_to_identical_json() {
    let env = Retail.import_tau_bench(&fixture_dir()).unwrap();
    let files = env.to_tau_bench();
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        vec!["orders", "products", "users"]
    );
    for stem in tau_bench::FILES {
        assert_eq!(
            files[stem],
            read_fixture(stem),
            "{stem}.json differs after round trip"
        );
    }
    assert_eq!(env.customers(), vec!["ines_varga_1192", MARA, TOMAS]);
    let tables = env.tables();
    let sizes: Vec<(&str, usize)> = tables.iter().map(|(n, rows)| (*n, rows.len())).collect();
    assert_eq!(sizes, vec![("users", 3), ("products", 3), ("orders", 5)]);
}

#[test]
fn generated_database_round_trips_through_files() {
    let db = generate::generate(5);
    let dir = std::env::temp_dir().join(format!("tracer-retail-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let files = Database::to_tau_bench(&db);
    for (stem, value) in &files {
        std::fs::write(
            dir.join(format!("{stem}.json")),
            serde_json::to_string(value).unwrap(),
        )
        .unwrap();
    }
    let back = tau_bench::import(&dir).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(Database::state_hash(&back), Database::state_hash(&db));
    assert_eq!(Database::to_tau_bench(&back), files);
}

#[test]
fn import_errors_name_the_file_and_row() {
    let dir = std::env::temp_dir().join(format!("tracer-retail-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for stem in tau_bench::FILES {
        std::fs::write(
            dir.join(format!("{stem}.json")),
            read_fixture(stem).to_string(),
        )
        .unwrap();
    }
    let mut orders = read_fixture("orders");
    orders["#W1000005"]["items"] = json!("not a list");
    std::fs::write(dir.join("orders.json"), orders.to_string()).unwrap();
    let e = Retail.import_tau_bench(&dir).err().unwrap().to_string();
    assert!(e.contains("orders.json") && e.contains("#W1000005"), "{e}");
    let mut orders = read_fixture("orders");
    orders["#W1000005"]["user_id"] = json!("ghost");
    std::fs::write(dir.join("orders.json"), orders.to_string()).unwrap();
    let e = Retail.import_tau_bench(&dir).err().unwrap().to_string();
    assert!(e.contains("unknown user_id 'ghost'"), "{e}");
    std::fs::remove_file(dir.join("users.json")).unwrap();
    let e = Retail.import_tau_bench(&dir).err().unwrap().to_string();
    assert!(e.contains("users.json"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn fixture_tasks_replay_and_obey_the_policy() {
    let tasks = read_fixture("tasks");
    let base = fixture();
    let mut hashes = Vec::new();
    for task in tasks.as_array().unwrap() {
        let mut db = base.clone();
        for action in task["actions"].as_array().unwrap() {
            let name = action["name"].as_str().unwrap();
            let kwargs = &action["kwargs"];
            assert_eq!(Hooks::check_policy(&db, name, kwargs), Ok(()), "{name}");
            let out = Environment::invoke(&mut db, name, kwargs);
            assert!(!out.is_error, "{name}: {}", out.text);
        }
        for expected in task["outputs"].as_array().unwrap() {
            let order = db.orders.get("#W1000002").unwrap();
            assert_eq!(
                format!("{}", order.exchange_price_difference.unwrap()),
                expected.as_str().unwrap()
            );
        }
        hashes.push(Database::state_hash(&db));
    }
    assert_eq!(base.orders.get("#W1000001").unwrap().status, "pending");
    assert_eq!(hashes.len(), 3);
    assert!(hashes.iter().all(|h| *h != Database::state_hash(&base)));
}

// ---------- policy ----------

#[test]
fn check_policy_rejects_each_rule_violation() {
    let db = fixture();
    let rejects = |tool: &str, args: Value, needle: &str| {
        let e = Hooks::check_policy(&db, tool, &args)
            .expect_err(tool)
            .to_string();
        assert!(e.contains(needle), "{tool}: '{e}' lacks '{needle}'");
    };
    rejects(
        "cancel_pending_order",
        json!({"order_id": "#W1000002", "reason": "no longer needed"}),
        "only pending orders can be cancelled",
    );
    rejects(
        "cancel_pending_order",
        json!({"order_id": "#W1000001", "reason": "changed my mind"}),
        "cancellation reason",
    );
    rejects(
        "modify_pending_order_address",
        json!({"order_id": "#W1000005", "address1": "a", "address2": "", "city": "c", "state": "s", "country": "USA", "zip": "1"}),
        "only pending orders can be modified",
    );
    rejects(
        "modify_pending_order_address",
        json!({"order_id": "#W1000001", "address1": "", "address2": "", "city": "c", "state": "s", "country": "USA", "zip": "1"}),
        "address1",
    );
    rejects(
        "modify_user_address",
        json!({"user_id": MARA, "address1": "a", "address2": "", "city": "c", "state": "s", "country": "USA", "zip": " "}),
        "zip",
    );
    rejects(
        "modify_user_address",
        json!({"user_id": "ghost", "address1": "a", "address2": "", "city": "c", "state": "s", "country": "USA", "zip": "1"}),
        "does not exist",
    );
    let items = |order: &str, old: Value, new: Value, pay: &str| json!({"order_id": order, "item_ids": old, "new_item_ids": new, "payment_method_id": pay});
    let cc = "credit_card_4410021";
    rejects(
        "modify_pending_order_items",
        items(
            "#W1000002",
            json!(["2200000001"]),
            json!(["2200000003"]),
            cc,
        ),
        "only pending orders can be modified",
    );
    rejects(
        "modify_pending_order_items",
        items(
            "#W1000001",
            json!(["1100000001"]),
            json!(["1100000001"]),
            cc,
        ),
        "different option",
    );
    rejects(
        "modify_pending_order_items",
        items(
            "#W1000001",
            json!(["1100000001"]),
            json!(["2200000003"]),
            cc,
        ),
        "product types cannot change",
    );
    rejects(
        "modify_pending_order_items",
        items(
            "#W1000001",
            json!(["1100000001"]),
            json!(["1100000003"]),
            cc,
        ),
        "not available",
    );
    rejects(
        "modify_pending_order_items",
        items("#W1000001", json!([]), json!([]), cc),
        "at least one item",
    );
    rejects(
        "modify_pending_order_items",
        items(
            "#W1000001",
            json!(["1100000001"]),
            json!(["1100000002"]),
            "paypal_5520031",
        ),
        "does not belong",
    );
    rejects(
        "modify_pending_order_items",
        items(
            "#W1000004",
            json!(["3300000001"]),
            json!(["3300000002"]),
            "gift_card_5520032",
        )
        .clone(),
        "must have enough balance",
    );
    rejects(
        "modify_pending_order_items",
        items(
            "#W1000004",
            json!(["3300000001"]),
            json!(["3300000002"]),
            "gift_card_5520032",
        ),
        "gift card gift_card_5520032",
    );
    rejects(
        "modify_pending_order_payment",
        json!({"order_id": "#W1000001", "payment_method_id": cc}),
        "must differ",
    );
    rejects(
        "modify_pending_order_payment",
        json!({"order_id": "#W1000004", "payment_method_id": "gift_card_5520032"}),
        "must have enough balance",
    );
    rejects(
        "modify_pending_order_payment",
        json!({"order_id": "#W1000003", "payment_method_id": cc}),
        "only pending orders",
    );
    rejects(
        "return_delivered_order_items",
        json!({"order_id": "#W1000001", "item_ids": ["1100000001"], "payment_method_id": cc}),
        "only delivered orders can be returned",
    );
    rejects(
        "return_delivered_order_items",
        json!({"order_id": "#W1000002", "item_ids": ["2200000001"], "payment_method_id": cc}),
        "original payment method or a gift card",
    );
    rejects(
        "return_delivered_order_items",
        json!({"order_id": "#W1000002", "item_ids": [], "payment_method_id": "gift_card_4410022"}),
        "at least one item",
    );
    rejects(
        "return_delivered_order_items",
        json!({"order_id": "#W1000002", "item_ids": ["1100000001"], "payment_method_id": "gift_card_4410022"}),
        "not part of order",
    );
    rejects(
        "exchange_delivered_order_items",
        items(
            "#W1000001",
            json!(["1100000001"]),
            json!(["1100000002"]),
            cc,
        ),
        "only delivered orders can be exchanged",
    );
    rejects(
        "exchange_delivered_order_items",
        items(
            "#W1000002",
            json!(["3300000001"]),
            json!(["2200000003"]),
            cc,
        ),
        "product types cannot change",
    );
    let mut poor = fixture();
    poor.users
        .get_mut(MARA)
        .unwrap()
        .payment_methods
        .get_mut("gift_card_4410022")
        .unwrap()
        .set_balance(2.0);
    let e = Hooks::check_policy(
        &poor,
        "exchange_delivered_order_items",
        &items(
            "#W1000002",
            json!(["2200000001"]),
            json!(["2200000003"]),
            "gift_card_4410022",
        ),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("enough balance"), "{e}");
    // Compliant calls pass, and read tools are never restricted.
    assert_eq!(
        Hooks::check_policy(
            &db,
            "exchange_delivered_order_items",
            &items(
                "#W1000002",
                json!(["2200000001"]),
                json!(["2200000003"]),
                cc
            )
        ),
        Ok(())
    );
    assert_eq!(
        Hooks::check_policy(&db, "get_order_details", &json!({"order_id": "#W1000002"})),
        Ok(())
    );
}

// ---------- grounding ----------

const GRAPH_TOOLS: [&str; 10] = [
    "get_user_details",
    "get_order_details",
    "get_product_details",
    "find_user_id_by_email",
    "cancel_pending_order",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "return_delivered_order_items",
    "exchange_delivered_order_items",
];

#[test]
fn proposals_succeed_for_every_tool_across_customers() {
    let env = Retail.generate(1, Split::Eval);
    let customers: Vec<String> = env.customers().into_iter().take(20).collect();
    for spec in env.tool_specs() {
        let mut served = 0;
        for (n, user) in customers.iter().enumerate() {
            let ctx = GroundingContext::for_user(user);
            let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
            let proposals = env.propose_calls(spec.name, &ctx, &mut rng);
            assert!(
                proposals.len() <= 8,
                "{}: {} proposals",
                spec.name,
                proposals.len()
            );
            let success = proposals.iter().any(|args| {
                let mut fork = env.fork();
                env.check_policy(spec.name, args).is_ok() && !fork.invoke(spec.name, args).is_error
            });
            if success {
                served += 1;
            }
        }
        let needed = match spec.name {
            // Needs a second payment method that can cover a pending order.
            "modify_pending_order_payment" => 8,
            // About 85% of customers hold a pending and a delivered order.
            _ if GRAPH_TOOLS.contains(&spec.name) => 13,
            _ => 20,
        };
        assert!(
            served >= needed,
            "{}: only {served}/20 customers served",
            spec.name
        );
    }
}

#[test]
fn proposals_are_deterministic_and_policy_compliant() {
    let env = Retail.generate(2, Split::Eval);
    for user in env.customers().into_iter().take(10) {
        let ctx = GroundingContext::for_user(&user);
        for tool in GRAPH_TOOLS {
            let a = env.propose_calls(tool, &ctx, &mut ChaCha8Rng::seed_from_u64(9));
            let b = env.propose_calls(tool, &ctx, &mut ChaCha8Rng::seed_from_u64(9));
            assert_eq!(a, b, "{tool}");
            for args in &a {
                assert_eq!(env.check_policy(tool, args), Ok(()), "{tool} {args}");
            }
        }
    }
}

#[test]
fn observed_entities_steer_later_proposals() {
    let env = Retail.generate(4, Split::Eval);
    let user = env.customers()[3].clone();
    let mut ctx = GroundingContext::default();
    // Identify by email, then read the profile: the context learns the user's orders.
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let email_args = env.propose_calls(
        "find_user_id_by_email",
        &GroundingContext::for_user(&user),
        &mut rng,
    );
    let mut fork = env.fork();
    let out = fork.invoke("find_user_id_by_email", &email_args[0]);
    assert_eq!(out.text, user);
    env.observe("find_user_id_by_email", &email_args[0], &out.text, &mut ctx);
    assert_eq!(ctx.values("user_id"), std::slice::from_ref(&user));
    let get_user = env.propose_calls("get_user_details", &ctx, &mut rng);
    assert_eq!(get_user, vec![json!({"user_id": user})]);
    let out = fork.invoke("get_user_details", &get_user[0]);
    env.observe("get_user_details", &get_user[0], &out.text, &mut ctx);
    let profile: Value = serde_json::from_str(&out.text).unwrap();
    let orders: Vec<String> = profile["orders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(ctx.values("order_id"), orders.as_slice());
    assert!(!ctx.values("payment_method_id").is_empty());
    // A specific order looked at becomes the first proposal for the next call about orders.
    let mut focused = GroundingContext::for_user(&user);
    let last = orders.last().unwrap().clone();
    focused.learn("order_id", &last);
    let details = env.propose_calls("get_order_details", &focused, &mut rng);
    assert_eq!(details[0], json!({"order_id": last}));
    let out = fork.invoke("get_order_details", &details[0]);
    env.observe("get_order_details", &details[0], &out.text, &mut focused);
    let order: Value = serde_json::from_str(&out.text).unwrap();
    let product = order["items"][0]["product_id"].as_str().unwrap();
    assert!(focused.values("product_id").iter().any(|p| p == product));
    let products = env.propose_calls("get_product_details", &focused, &mut rng);
    assert_eq!(products[0], json!({"product_id": product}));
    // Product listing teaches product ids too.
    let out = fork.invoke("list_all_product_types", &json!({}));
    let mut fresh = GroundingContext::default();
    env.observe("list_all_product_types", &json!({}), &out.text, &mut fresh);
    assert_eq!(fresh.values("product_id").len(), 50);
}

// ---------- cross-check against tau-bench itself (opt-in) ----------

/// Numbers equal up to float noise and int/float spelling (Python compares `9 == 9.0`, and
/// serde_json's default float parser may be one ULP off on long decimals).
fn json_close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => (x - y).abs() < 1e-9,
            _ => false,
        },
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_close(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| json_close(v, w))
        }
        _ => a == b,
    }
}

/// Replays every tau-bench retail task on our tools and compares each output and the final
/// changed rows with tau-bench's own Python tools. Needs a directory made by
/// `tests/fixtures/tau_bench/retail/replay_reference.py` (tau-bench's data files plus
/// `replay.json`), named by `TRACER_RETAIL_REPLAY_DIR`:
/// `TRACER_RETAIL_REPLAY_DIR=/tmp/taub cargo test --lib domain::retail -- --ignored`.
#[test]
#[ignore = "needs tau-bench's data and a reference replay (see doc comment)"]
fn tau_bench_tasks_replay_like_tau_bench() {
    let dir = PathBuf::from(
        std::env::var("TRACER_RETAIL_REPLAY_DIR").expect("set TRACER_RETAIL_REPLAY_DIR"),
    );
    let base = tau_bench::import(&dir.join("data")).unwrap();
    let initial = Database::to_tau_bench(&base);
    for stem in tau_bench::FILES {
        let raw = std::fs::read_to_string(dir.join("data").join(format!("{stem}.json"))).unwrap();
        let file: Value = serde_json::from_str(&raw).unwrap();
        assert_eq!(initial[stem], file, "{stem}.json round trip");
    }
    let replay: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("replay.json")).unwrap()).unwrap();
    let mut failures = Vec::new();
    for task in replay.as_array().unwrap() {
        let label = format!("{} #{}", task["split"], task["index"]);
        let mut db = base.clone();
        let actions = task["actions"].as_array().unwrap();
        for (action, expected) in actions.iter().zip(task["outputs"].as_array().unwrap()) {
            let name = action["name"].as_str().unwrap();
            let out = Environment::invoke(&mut db, name, &action["kwargs"]);
            let expected = expected.as_str().unwrap();
            let same = match (
                serde_json::from_str::<Value>(&out.text),
                serde_json::from_str::<Value>(expected),
            ) {
                (Ok(ours), Ok(theirs)) => json_close(&ours, &theirs),
                _ => out.text == expected,
            };
            if !same {
                failures.push(format!("{label} {name}: {} vs {expected}", out.text));
            }
        }
        let after = Database::to_tau_bench(&db);
        for stem in tau_bench::FILES {
            let theirs = task["changed"][stem]
                .as_object()
                .cloned()
                .unwrap_or_default();
            for (id, row) in after[stem].as_object().unwrap() {
                let before = initial[stem].get(id);
                let changed_here = before.is_none_or(|b| !json_close(b, row));
                match theirs.get(id) {
                    Some(t) if !json_close(t, row) => {
                        failures.push(format!("{label} {stem}/{id} differs"))
                    }
                    None if changed_here => {
                        failures.push(format!("{label} {stem}/{id} changed only here"))
                    }
                    _ => {}
                }
            }
            for id in theirs.keys() {
                if after[stem].get(id).is_none() {
                    failures.push(format!("{label} {stem}/{id} missing"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------- refinement / verification hooks ----------

#[test]
fn user_facts_identity_first_payments_by_last_digits_and_ids_mapped() {
    let db = fixture();
    let facts = Hooks::user_facts(&db, MARA);
    assert_eq!(facts[0].kind, "identity");
    assert_eq!(facts[0].values, vec!["mara.lindqvist4021@example.com"]);
    assert!(facts[0].text.contains("mara.lindqvist4021@example.com"));
    assert_eq!(facts[0].ids, vec![MARA]);
    assert_eq!(facts[1].kind, "name");
    assert!(facts[1].text.starts_with("Your name is Mara Lindqvist"));
    assert!(
        facts[1].text.contains("53704"),
        "name + zip also authenticates"
    );
    let card = facts
        .iter()
        .find(|f| f.ids == ["credit_card_4410021"])
        .expect("credit card fact");
    assert_eq!(card.kind, "payment");
    assert_eq!(
        card.text,
        "You have a Visa credit card ending in 1187 on file."
    );
    assert_eq!(card.values, vec!["1187"]);
    let gift = facts
        .iter()
        .find(|f| f.ids == ["gift_card_4410022"])
        .expect("gift card fact");
    assert!(gift.text.contains("gift card") && gift.text.contains("$60.25"));
    // Orders are stated by id; their fact resolves the items and sibling variants.
    let order = facts
        .iter()
        .find(|f| f.values == ["#W1000001"])
        .expect("order fact");
    assert_eq!(order.kind, "entity");
    assert!(
        order
            .text
            .contains("desk fan with white color and 3 speed settings")
    );
    for id in ["1100000001", "2200000002", "1100000002", "2200000003"] {
        assert!(order.ids.iter().any(|i| i == id), "{id} in {:?}", order.ids);
    }
    for f in &facts {
        assert!(f.text.starts_with("You"), "second person: {}", f.text);
        assert!(f.text.ends_with('.'));
        for id in ["credit_card_", "gift_card_", MARA, "1100000001"] {
            assert!(!f.text.contains(id), "{} reveals {id}", f.text);
        }
    }
    assert!(Hooks::user_facts(&db, "nobody_0000").is_empty());
}

/// Run a call on a fork (it must succeed) and describe it on the state before the call.
fn describe_ok(db: &RetailDb, tool: &str, args: Value) -> String {
    let mut fork = db.clone();
    let out = call(&mut fork, tool, args.clone());
    assert!(!out.is_error, "{tool}: {}", out.text);
    assert_eq!(Hooks::check_policy(db, tool, &args), Ok(()));
    let sentence = Hooks::describe_request(db, tool, &args, &out.text)
        .unwrap_or_else(|| panic!("{tool} is a customer request"));
    assert!(
        sentence.contains("you") || sentence.starts_with("You"),
        "{sentence}"
    );
    assert!(sentence.ends_with('.'), "{sentence}");
    for id in Hooks::internal_ids(db, tool, &args) {
        assert!(!sentence.contains(&id), "{sentence} reveals {id}");
    }
    sentence.to_lowercase()
}

#[test]
fn describe_request_states_every_value_each_write_needs() {
    let db = fixture();
    let s = describe_ok(
        &db,
        "cancel_pending_order",
        json!({"order_id": "#W1000001", "reason": "ordered by mistake"}),
    );
    assert!(
        s.contains("#w1000001") && s.contains("ordered by mistake"),
        "{s}"
    );
    let s = describe_ok(
        &db,
        "cancel_pending_order",
        json!({"order_id": "#W1000001", "reason": "no longer needed"}),
    );
    assert!(s.contains("no longer needed"), "{s}");
    let address = json!({"address1": "77 Birch Road", "address2": "Unit 5", "city": "Boise",
        "state": "ID", "country": "USA", "zip": "83702"});
    let mut args = address.clone();
    args["order_id"] = json!("#W1000001");
    let s = describe_ok(&db, "modify_pending_order_address", args);
    for v in [
        "#w1000001",
        "77 birch road",
        "unit 5",
        "boise",
        "id",
        "usa",
        "83702",
    ] {
        assert!(s.contains(v), "{v} missing: {s}");
    }
    let mut args = address;
    args["user_id"] = json!(MARA);
    let s = describe_ok(&db, "modify_user_address", args);
    assert!(
        s.contains("77 birch road") && s.contains("83702") && !s.contains(MARA),
        "{s}"
    );
    let s = describe_ok(
        &db,
        "modify_pending_order_items",
        json!({"order_id": "#W1000001", "item_ids": ["1100000001"],
            "new_item_ids": ["1100000002"], "payment_method_id": "credit_card_4410021"}),
    );
    for v in [
        "#w1000001",
        "desk fan",
        "white color",
        "black color",
        "ending in 1187",
    ] {
        assert!(s.contains(v), "{v} missing: {s}");
    }
    let s = describe_ok(
        &db,
        "modify_pending_order_payment",
        json!({"order_id": "#W1000001", "payment_method_id": "gift_card_4410022"}),
    );
    assert!(s.contains("#w1000001") && s.contains("gift card"), "{s}");
    let s = describe_ok(
        &db,
        "return_delivered_order_items",
        json!({"order_id": "#W1000002", "item_ids": ["2200000001"],
            "payment_method_id": "gift_card_4410022"}),
    );
    for v in [
        "#w1000002",
        "return",
        "yoga block",
        "cork material",
        "gift card",
    ] {
        assert!(s.contains(v), "{v} missing: {s}");
    }
    let s = describe_ok(
        &db,
        "exchange_delivered_order_items",
        json!({"order_id": "#W1000002", "item_ids": ["2200000001"],
            "new_item_ids": ["2200000003"], "payment_method_id": "credit_card_4410021"}),
    );
    for v in [
        "#w1000002",
        "exchange",
        "yoga block",
        "large size",
        "ending in 1187",
    ] {
        assert!(s.contains(v), "{v} missing: {s}");
    }
    // Duplicated items are counted, not listed twice.
    let s = describe_ok(
        &db,
        "modify_pending_order_items",
        json!({"order_id": "#W1000004", "item_ids": ["3300000001", "3300000001"],
            "new_item_ids": ["3300000002", "3300000002"], "payment_method_id": "paypal_5520031"}),
    );
    assert!(
        s.contains("two units of the espresso cups") && s.contains("4 pieces"),
        "{s}"
    );
    assert!(s.contains("paypal"), "{s}");
    // Agent-side lookups are not customer requests; status and product questions are.
    let mut fork = db.clone();
    let out = ok(&mut fork, "get_user_details", json!({"user_id": MARA}));
    assert_eq!(
        Hooks::describe_request(&db, "get_user_details", &json!({"user_id": MARA}), &out),
        None
    );
    let email = json!({"email": "mara.lindqvist4021@example.com"});
    assert_eq!(
        Hooks::describe_request(&db, "find_user_id_by_email", &email, MARA),
        None
    );
    let s = describe_ok(&db, "get_order_details", json!({"order_id": "#W1000002"}));
    assert!(
        s.contains("#w1000002") && s.contains("status") && s.contains("tracking"),
        "{s}"
    );
}

#[test]
fn internal_ids_cover_payment_item_and_user_ids_but_not_orders() {
    let db = fixture();
    let items = json!({"order_id": "#W1000001", "item_ids": ["1100000001", "1100000001"],
        "new_item_ids": ["1100000002", "1100000002"], "payment_method_id": "credit_card_4410021"});
    for tool in [
        "modify_pending_order_items",
        "exchange_delivered_order_items",
    ] {
        assert_eq!(
            Hooks::internal_ids(&db, tool, &items),
            vec!["1100000001", "1100000002", "credit_card_4410021"],
            "{tool}"
        );
    }
    let ret = json!({"order_id": "#W1000002", "item_ids": ["2200000001"],
        "payment_method_id": "gift_card_4410022"});
    assert_eq!(
        Hooks::internal_ids(&db, "return_delivered_order_items", &ret),
        vec!["2200000001", "gift_card_4410022"]
    );
    let pay = json!({"order_id": "#W1000001", "payment_method_id": "gift_card_4410022"});
    assert_eq!(
        Hooks::internal_ids(&db, "modify_pending_order_payment", &pay),
        vec!["gift_card_4410022"]
    );
    assert_eq!(
        Hooks::internal_ids(&db, "get_user_details", &json!({"user_id": MARA})),
        vec![MARA]
    );
    let cancel = json!({"order_id": "#W1000001", "reason": "no longer needed"});
    assert!(Hooks::internal_ids(&db, "cancel_pending_order", &cancel).is_empty());
    assert!(
        Hooks::internal_ids(&db, "get_order_details", &json!({"order_id": "#W1000001"})).is_empty()
    );
    // Every internal id of Mara's possible calls is resolvable through one of her facts.
    let facts = Hooks::user_facts(&db, MARA);
    for id in Hooks::internal_ids(&db, "modify_pending_order_items", &items)
        .into_iter()
        .chain(Hooks::internal_ids(
            &db,
            "return_delivered_order_items",
            &ret,
        ))
    {
        assert!(
            facts.iter().any(|f| f.ids.contains(&id)),
            "{id} unresolvable"
        );
    }
}

#[test]
fn required_outputs_of_reads_are_literals_of_the_output() {
    let mut db = fixture();
    let out = ok(
        &mut db,
        "get_order_details",
        json!({"order_id": "#W1000005"}),
    );
    let req = Hooks::required_outputs(
        &db,
        "get_order_details",
        &json!({"order_id": "#W1000005"}),
        &out,
    );
    assert_eq!(req, vec!["processed", "731100200377"]);
    for r in &req {
        assert!(out.contains(r.as_str()));
    }
    let out = ok(
        &mut db,
        "get_order_details",
        json!({"order_id": "#W1000001"}),
    );
    assert_eq!(
        Hooks::required_outputs(
            &db,
            "get_order_details",
            &json!({"order_id": "#W1000001"}),
            &out
        ),
        vec!["pending"]
    );
    // The cheapest available yoga block costs 12.4 (printed without a trailing zero).
    let args = json!({"product_id": "8310041133"});
    let out = ok(&mut db, "get_product_details", args.clone());
    assert_eq!(
        Hooks::required_outputs(&db, "get_product_details", &args, &out),
        vec!["12.4"]
    );
    let out = ok(&mut db, "get_user_details", json!({"user_id": MARA}));
    assert!(
        Hooks::required_outputs(&db, "get_user_details", &json!({"user_id": MARA}), &out)
            .is_empty()
    );
}

#[test]
fn customer_records_are_what_the_read_tools_print() {
    let mut db = fixture();
    let records = Hooks::customer_records(&db, MARA);
    let profile = ok(&mut db, "get_user_details", json!({"user_id": MARA}));
    assert!(records.contains(&profile));
    for id in ["#W1000001", "#W1000002", "#W1000003"] {
        let order = ok(&mut db, "get_order_details", json!({"order_id": id}));
        assert!(records.contains(&order), "{id}");
    }
    let product = ok(
        &mut db,
        "get_product_details",
        json!({"product_id": "8310041133"}),
    );
    assert!(records.contains(&product));
    let catalogue = ok(&mut db, "list_all_product_types", json!({}));
    assert!(records.contains(&catalogue));
    // Nothing about another customer's orders.
    assert!(!records.iter().any(|r| r.contains("#W1000004")));
    assert!(Hooks::customer_records(&db, "nobody_0000").is_empty());
}

// ---------- the authors' gold tasks under each ruleset (opt-in) ----------

/// Replays every gold task of tau-emotion-bench's retail (test + train) on their database,
/// once per ruleset, and compares each output and each task's changed rows with the
/// reference implementation of that ruleset (tau-emotion-bench's own tools; tau-bench's).
/// Needs a directory made by `scripts/reference/gold_rulesets.sh retail <teb> <tau-bench> <dir>`:
/// `TRACER_GOLD_DIR=<dir> cargo test --lib retail::tests::gold -- --ignored --nocapture`.
#[test]
#[ignore = "needs the reference checkouts (see doc comment)"]
fn gold_tasks_replay_like_the_reference_under_each_ruleset() {
    use crate::domain::reference::{changed_rows, json_equal, outputs_equal};
    let dir = PathBuf::from(std::env::var("TRACER_GOLD_DIR").expect("set TRACER_GOLD_DIR"));
    let read_lines = |name: &str| -> Vec<Value> {
        std::fs::read_to_string(dir.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let calls = read_lines("calls.jsonl");
    let mut failures = Vec::new();
    for ruleset in ["tau-emotion-bench", "tau-bench"] {
        let expected = read_lines(&format!("expected-{ruleset}.jsonl"));
        assert_eq!(calls.len(), expected.len());
        let mut base = tau_bench::import(&dir.join("data")).unwrap();
        Hooks::set_ruleset(&mut base, ruleset).unwrap();
        let initial: Value = Database::to_tau_bench(&base)
            .into_iter()
            .collect::<serde_json::Map<_, _>>()
            .into();
        let (mut same_state, mut same_outputs, mut ours_ok, mut theirs_ok) = (0, 0, 0, 0);
        for (i, (seq, exp)) in calls.iter().zip(&expected).enumerate() {
            let mut db = base.clone();
            let (mut outputs_match, mut all_ok) = (true, true);
            for (j, call) in seq.as_array().unwrap().iter().enumerate() {
                let out =
                    Environment::invoke(&mut db, call["name"].as_str().unwrap(), &call["kwargs"]);
                all_ok &= !out.is_error;
                let theirs = exp["outputs"][j].as_str().unwrap();
                if !outputs_equal(&out.text, theirs) {
                    outputs_match = false;
                    failures.push(format!(
                        "{ruleset} task {i} call {j} {}: ours {} / theirs {theirs}",
                        call["name"], out.text
                    ));
                }
            }
            let after: Value = Database::to_tau_bench(&db)
                .into_iter()
                .collect::<serde_json::Map<_, _>>()
                .into();
            if json_equal(&changed_rows(&initial, &after), &exp["changed"]) {
                same_state += 1;
            } else {
                failures.push(format!("{ruleset} task {i}: final state differs"));
            }
            same_outputs += usize::from(outputs_match);
            ours_ok += usize::from(all_ok);
            theirs_ok += usize::from(
                exp["outputs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|o| !o.as_str().unwrap_or("").starts_with("Error")),
            );
        }
        eprintln!(
            "{ruleset}: {} tasks; final state equal {same_state}, every output equal {same_outputs}; \
             every gold action succeeds: ours {ours_ok}, reference {theirs_ok}",
            calls.len()
        );
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

#[test]
fn policy_violations_name_their_rule() {
    let db = fixture();
    let rule = |tool: &str, args: Value| Hooks::check_policy(&db, tool, &args).unwrap_err().rule;
    assert_eq!(
        rule(
            "cancel_pending_order",
            json!({"order_id": "#W1000002", "reason": "no longer needed"})
        ),
        "order_is_pending"
    );
    assert_eq!(
        rule(
            "cancel_pending_order",
            json!({"order_id": "#W1000001", "reason": "meh"})
        ),
        "cancel_reason"
    );
    assert_eq!(
        rule(
            "return_delivered_order_items",
            json!({"order_id": "#W1000001", "item_ids": ["1100000001"], "payment_method_id": "gift_card_4410022"})
        ),
        "order_is_delivered"
    );
    assert_eq!(
        rule(
            "return_delivered_order_items",
            json!({"order_id": "#W1000002", "item_ids": ["2200000001"], "payment_method_id": "credit_card_4410021"})
        ),
        "refund_destination"
    );
    assert_eq!(
        rule(
            "modify_pending_order_items",
            json!({"order_id": "#W1000001", "item_ids": ["1100000001"], "new_item_ids": ["3300000002"], "payment_method_id": "credit_card_4410021"})
        ),
        "same_product_swap"
    );
    assert_eq!(
        rule(
            "modify_pending_order_payment",
            json!({"order_id": "#W1000001", "payment_method_id": "credit_card_4410021"})
        ),
        "new_payment_method"
    );
    assert_eq!(
        rule(
            "modify_user_address",
            json!({"user_id": MARA, "address1": "", "address2": "", "city": "x", "state": "x", "country": "x", "zip": "1"})
        ),
        "complete_address"
    );
}

#[test]
fn tool_intents_say_what_the_customer_wants() {
    use crate::domain::Intent;
    let intent = |name: &str| {
        Retail
            .tool_specs()
            .into_iter()
            .find(|s| s.name == name)
            .unwrap()
            .intent
    };
    assert_eq!(intent("modify_pending_order_payment"), Intent::Change);
    assert_eq!(intent("modify_pending_order_items"), Intent::Change);
    assert_eq!(intent("cancel_pending_order"), Intent::Cancel);
    assert_eq!(intent("return_delivered_order_items"), Intent::Return);
    assert_eq!(intent("exchange_delivered_order_items"), Intent::Exchange);
    assert_eq!(intent("get_order_details"), Intent::Lookup);
    assert_eq!(intent("transfer_to_human_agents"), Intent::Transfer);
    assert_eq!(intent("calculate"), Intent::Helper);
}

/// The cancel reasons written in `tools.toml` are the ones the tool and policy accept.
#[test]
fn spec_cancel_reasons_match_the_database() {
    let spec = super::tools::all()
        .iter()
        .find(|t| t.spec.name == "cancel_pending_order")
        .map(|t| t.spec.parameters.clone())
        .unwrap_or_default();
    assert_eq!(
        spec["properties"]["reason"]["enum"],
        json!(super::db::CANCEL_REASONS)
    );
}

#[test]
fn an_option_value_that_names_its_option_is_said_once() {
    use super::hooks::option_words;
    assert_eq!(option_words("resolution", "1080p"), "1080p resolution");
    assert_eq!(option_words("season", "3-season"), "3-season");
    assert_eq!(option_words("bowl_size", "5.5 qt"), "5.5 qt bowl size");
}
