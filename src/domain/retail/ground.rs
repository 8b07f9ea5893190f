//! Grounding hooks for retail: candidate arguments per tool (`propose_calls`); the ids a
//! call reveals are learnt as `tools.toml` declares (`learns`), and the policy rules they
//! respect are in `policy.rs`.
//!
//! Proposals are about the context's customer: entities the context already knows come
//! first (the order the customer just looked at), then the customer's other entities in a
//! seeded shuffle. Write proposals are built to pass both the tool and `check_policy`
//! (pending orders for modifications, delivered orders for returns and exchanges, available
//! variants of the same product, payment methods that can cover the amount).
//!
//! Architecture invariant: reads the state only; never mutates it and never calls tools.

use super::db::{CANCEL_REASONS, Order, PaymentMethod, RetailDb, User, round2, status};
use super::generate::random_address;
use super::policy::requested;
use crate::domain::GroundingContext;
use crate::domain::kit::propose::{self, MAX_PROPOSALS};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

fn user_id_of(db: &RetailDb, ctx: &GroundingContext) -> Option<String> {
    ctx.user_id
        .iter()
        .chain(ctx.values("user_id"))
        .find(|id| db.users.contains(id))
        .cloned()
}

/// The customer's orders matching `keep`: known ones first (in the order learnt), the rest
/// shuffled by `rng`. Without a customer, the known orders alone.
fn ranked_orders<'a>(
    db: &'a RetailDb,
    ctx: &GroundingContext,
    user_id: Option<&str>,
    rng: &mut ChaCha8Rng,
    keep: impl Fn(&Order) -> bool,
) -> Vec<&'a Order> {
    let own = user_id
        .and_then(|u| db.users.get(u))
        .map(|u| u.orders.clone())
        .unwrap_or_default();
    let row = |id: &str| {
        let o = db.orders.get(id)?;
        (user_id.is_none_or(|u| o.user_id == u) && keep(o)).then_some(o)
    };
    propose::ranked_rows(ctx, "order_id", own, row, rng)
}

/// A payment method of `user` that may pay `amount` (gift cards need the balance), the
/// `preferred` one first.
fn covering_method<'a>(
    user: &'a User,
    preferred: Option<&str>,
    amount: f64,
) -> Option<&'a PaymentMethod> {
    let ok = |m: &&PaymentMethod| !m.is_gift_card() || m.balance_amount() >= amount;
    preferred
        .and_then(|p| user.payment_methods.get(p))
        .filter(ok)
        .or_else(|| {
            user.payment_methods
                .values()
                .find(|m| !m.is_gift_card() && ok(m))
        })
        .or_else(|| user.payment_methods.values().find(ok))
}

/// Swaps for an order: (old item id, new item id, price difference) for each item line
/// that has another available variant of its product, the new variant drawn by `rng`.
fn swaps(db: &RetailDb, order: &Order, rng: &mut ChaCha8Rng) -> Vec<(String, String, f64)> {
    let mut out = Vec::new();
    for item in &order.items {
        if out.iter().any(|(old, _, _)| *old == item.item_id) || requested(order, &item.item_id) {
            continue;
        }
        let Some(product) = db.products.get(&item.product_id) else {
            continue;
        };
        let options = product.alternatives(&item.item_id);
        if options.is_empty() {
            continue;
        }
        let new = options[rng.random_range(0..options.len())];
        out.push((
            item.item_id.clone(),
            new.item_id.clone(),
            new.price - item.price,
        ));
    }
    out
}

/// Item-swap proposals (modify or exchange): each single swap, then all swaps at once.
fn swap_proposals(db: &RetailDb, orders: &[&Order], rng: &mut ChaCha8Rng, out: &mut Vec<Value>) {
    for order in orders {
        let Some(user) = db.users.get(&order.user_id) else {
            continue;
        };
        let original = order.first_payment().map(|p| p.payment_method_id.as_str());
        let found = swaps(db, order, rng);
        let mut sets: Vec<Vec<&(String, String, f64)>> = found.iter().map(|s| vec![s]).collect();
        if found.len() > 1 {
            sets.push(found.iter().collect());
        }
        for set in sets.into_iter().take(3) {
            let diff = round2(set.iter().map(|(_, _, d)| d).sum());
            let Some(method) = covering_method(user, original, diff) else {
                continue;
            };
            out.push(json!({
                "order_id": order.order_id,
                "item_ids": set.iter().map(|(o, _, _)| o.as_str()).collect::<Vec<_>>(),
                "new_item_ids": set.iter().map(|(_, n, _)| n.as_str()).collect::<Vec<_>>(),
                "payment_method_id": method.id,
            }));
        }
        if out.len() >= MAX_PROPOSALS {
            break;
        }
    }
}

pub fn propose_calls(
    db: &RetailDb,
    tool: &str,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    let user_id = user_id_of(db, ctx);
    let uid = user_id.as_deref();
    let user = uid.and_then(|u| db.users.get(u));
    let mut out: Vec<Value> = Vec::new();
    match tool {
        "find_user_id_by_email" => {
            if let Some(u) = user {
                out.push(json!({"email": u.email}));
            }
        }
        "find_user_id_by_name_zip" => {
            if let Some(u) = user {
                out.push(json!({"first_name": u.name.first_name,
                    "last_name": u.name.last_name, "zip": u.address.zip}));
            }
        }
        "get_user_details" => {
            if let Some(u) = uid {
                out.push(json!({"user_id": u}));
            }
        }
        "get_order_details" => {
            for o in ranked_orders(db, ctx, uid, rng, |_| true) {
                out.push(json!({"order_id": o.order_id}));
            }
        }
        "get_product_details" => {
            let mut ids: Vec<String> = ctx
                .values("product_id")
                .iter()
                .filter(|id| db.products.contains(id))
                .cloned()
                .collect();
            for o in ranked_orders(db, ctx, uid, rng, |_| true) {
                for item in &o.items {
                    if !ids.contains(&item.product_id) && db.products.contains(&item.product_id) {
                        ids.push(item.product_id.clone());
                    }
                }
            }
            if ids.is_empty() {
                ids.extend(db.products.keys().take(3).map(str::to_string));
            }
            out.extend(ids.into_iter().map(|id| json!({"product_id": id})));
        }
        "list_all_product_types" => out.push(json!({})),
        "calculate" => {
            if let Some(o) = ranked_orders(db, ctx, uid, rng, |_| true).first() {
                let prices: Vec<String> = o.items.iter().map(|i| i.price.to_string()).collect();
                out.push(json!({"expression": prices.join(" + ")}));
            }
            out.push(json!({"expression": "100 - 25.5"}));
        }
        "think" => out.push(json!({"thought": format!(
            "Confirm the identity of {} and check the order status before any change.",
            uid.unwrap_or("the customer"))})),
        "transfer_to_human_agents" => out.push(json!({"summary": format!(
            "Customer {} asks for help outside what the available tools can do.",
            uid.unwrap_or("(not identified)"))})),
        "cancel_pending_order" => {
            for o in ranked_orders(db, ctx, uid, rng, |o| o.status == status::PENDING) {
                let reason = CANCEL_REASONS[rng.random_range(0..CANCEL_REASONS.len())];
                out.push(json!({"order_id": o.order_id, "reason": reason}));
            }
        }
        "modify_pending_order_address" => {
            for o in ranked_orders(db, ctx, uid, rng, |o| o.status == status::PENDING) {
                let address = match user {
                    Some(u) if u.address != o.address => u.address.clone(),
                    _ => random_address(rng),
                };
                out.push(json!({"order_id": o.order_id, "address1": address.address1,
                    "address2": address.address2, "city": address.city,
                    "state": address.state, "country": address.country, "zip": address.zip}));
            }
        }
        "modify_pending_order_items" => {
            let orders = ranked_orders(db, ctx, uid, rng, |o| o.status == status::PENDING);
            swap_proposals(db, &orders, rng, &mut out);
        }
        "exchange_delivered_order_items" => {
            let orders = ranked_orders(db, ctx, uid, rng, |o| exchangeable(db, o));
            swap_proposals(db, &orders, rng, &mut out);
        }
        "modify_pending_order_payment" => {
            let orders = ranked_orders(db, ctx, uid, rng, |o| {
                o.status == status::PENDING && o.payment_history.len() == 1
            });
            for o in orders {
                let (Some(owner), Some(paid)) = (db.users.get(&o.user_id), o.first_payment())
                else {
                    continue;
                };
                for m in owner.payment_methods.values() {
                    let covers = !m.is_gift_card() || m.balance_amount() >= paid.amount;
                    if m.id != paid.payment_method_id && covers {
                        out.push(json!({"order_id": o.order_id, "payment_method_id": m.id}));
                    }
                }
            }
        }
        "modify_user_address" => {
            if let Some(u) = uid {
                for _ in 0..2 {
                    let a = random_address(rng);
                    out.push(json!({"user_id": u, "address1": a.address1,
                        "address2": a.address2, "city": a.city, "state": a.state,
                        "country": a.country, "zip": a.zip}));
                }
            }
        }
        "return_delivered_order_items" => {
            for o in ranked_orders(db, ctx, uid, rng, |o| returnable(db, o)) {
                let Some(owner) = db.users.get(&o.user_id) else {
                    continue;
                };
                let mut refund_to: Vec<&str> = o
                    .first_payment()
                    .map(|p| p.payment_method_id.as_str())
                    .filter(|id| owner.payment_methods.contains_key(*id))
                    .into_iter()
                    .collect();
                for m in owner.payment_methods.values() {
                    if m.is_gift_card() && !refund_to.contains(&m.id.as_str()) {
                        refund_to.push(&m.id);
                    }
                }
                let all: Vec<&str> = o
                    .items
                    .iter()
                    .map(|i| i.item_id.as_str())
                    .filter(|id| !requested(o, id))
                    .collect();
                let Some(item) = all.first().copied() else {
                    continue;
                };
                for (n, method) in refund_to.iter().enumerate().take(2) {
                    let items = if n == 0 { vec![item] } else { all.clone() };
                    out.push(json!({"order_id": o.order_id, "item_ids": items,
                        "payment_method_id": method}));
                }
            }
        }
        _ => {}
    }
    out.truncate(MAX_PROPOSALS);
    out
}

/// A return may start: the lifecycle reads the order as delivered, and no return request is
/// open (the policy's `one_open_request`).
fn returnable(db: &RetailDb, order: &Order) -> bool {
    db.lifecycle.accepts_return_or_exchange(&order.status) && order.return_items.is_none()
}

/// An exchange may start: as [`returnable`], for exchange requests.
fn exchangeable(db: &RetailDb, order: &Order) -> bool {
    db.lifecycle.accepts_return_or_exchange(&order.status) && order.exchange_items.is_none()
}
