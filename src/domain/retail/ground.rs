//! Grounding hooks for retail: candidate arguments per tool (`propose_calls`), learning ids
//! from outputs (`observe`) and the machine-checkable policy rules (`check_policy`).
//!
//! Proposals are about the context's customer: entities the context already knows come
//! first (the order the customer just looked at), then the customer's other entities in a
//! seeded shuffle. Write proposals are built to pass both the tool and `check_policy`
//! (pending orders for modifications, delivered orders for returns and exchanges, available
//! variants of the same product, payment methods that can cover the amount).
//!
//! Architecture invariant: reads the state only; never mutates it and never calls tools.

use super::db::{CANCEL_REASONS, Lifecycle, Order, PaymentMethod, RetailDb, User, round2, status};
use super::generate::random_address;
use crate::domain::GroundingContext;
use rand::RngExt;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

/// At most this many proposals per call.
const MAX_PROPOSALS: usize = 8;

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
    let belongs = |o: &Order| user_id.is_none_or(|u| o.user_id == u);
    let mut ranked: Vec<&Order> = ctx
        .values("order_id")
        .iter()
        .filter_map(|id| db.orders.get(id))
        .filter(|o| belongs(o) && keep(o))
        .collect();
    let mut rest: Vec<&Order> = user_id
        .and_then(|u| db.users.get(u))
        .map(|u| {
            u.orders
                .iter()
                .filter_map(|id| db.orders.get(id))
                .filter(|o| keep(o) && !ranked.iter().any(|r| r.order_id == o.order_id))
                .collect()
        })
        .unwrap_or_default();
    rest.shuffle(rng);
    ranked.extend(rest);
    ranked
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
        let options: Vec<_> = product
            .variants
            .values()
            .filter(|v| v.available && v.item_id != item.item_id)
            .collect();
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
/// open (a second request would overwrite the first one's items).
fn returnable(db: &RetailDb, order: &Order) -> bool {
    db.lifecycle.accepts_return_or_exchange(&order.status) && order.return_items.is_none()
}

/// An exchange may start: as [`returnable`], for exchange requests.
fn exchangeable(db: &RetailDb, order: &Order) -> bool {
    db.lifecycle.accepts_return_or_exchange(&order.status) && order.exchange_items.is_none()
}

/// The item is already part of the order's open return or exchange request.
fn requested(order: &Order, item_id: &str) -> bool {
    [&order.return_items, &order.exchange_items]
        .into_iter()
        .flatten()
        .any(|ids| ids.iter().any(|i| i == item_id))
}

pub fn observe(tool: &str, args: &Value, output: &str, ctx: &mut GroundingContext) {
    match tool {
        "find_user_id_by_email" | "find_user_id_by_name_zip" => {
            let id = output.trim();
            if !id.is_empty() {
                ctx.learn("user_id", id);
            }
            return;
        }
        "get_user_details" => {
            if let Some(id) = args.get("user_id").and_then(Value::as_str) {
                ctx.learn("user_id", id);
            }
        }
        _ => {}
    }
    let Ok(value) = serde_json::from_str::<Value>(output) else {
        return;
    };
    ctx.learn_from_json(&value, &[]);
    match tool {
        "get_user_details" | "modify_user_address" => {
            for id in value
                .get("orders")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                ctx.learn("order_id", id);
            }
            if let Some(methods) = value.get("payment_methods").and_then(Value::as_object) {
                for id in methods.keys() {
                    ctx.learn("payment_method_id", id);
                }
            }
        }
        "list_all_product_types" => {
            if let Some(map) = value.as_object() {
                for id in map.values().filter_map(Value::as_str) {
                    ctx.learn("product_id", id);
                }
            }
        }
        _ => {}
    }
}

fn arg_str<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("")
}

fn arg_list<'a>(args: &'a Value, key: &str) -> Vec<&'a str> {
    args.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn order_with_status<'a>(
    db: &'a RetailDb,
    args: &Value,
    required: &str,
    rule: &str,
) -> Result<&'a Order, String> {
    let id = arg_str(args, "order_id");
    let order = db
        .orders
        .get(id)
        .ok_or_else(|| format!("order {id} does not exist"))?;
    if order.status != required {
        return Err(format!("{rule} (order {id} is '{}')", order.status));
    }
    Ok(order)
}

/// The order of the call, delivered as the active lifecycle reads its status.
fn delivered_order<'a>(db: &'a RetailDb, args: &Value, action: &str) -> Result<&'a Order, String> {
    let id = arg_str(args, "order_id");
    let order = db
        .orders
        .get(id)
        .ok_or_else(|| format!("order {id} does not exist"))?;
    if !db.lifecycle.accepts_return_or_exchange(&order.status) {
        return Err(format!(
            "only delivered orders can be {action} (order {id} is '{}')",
            order.status
        ));
    }
    Ok(order)
}

/// No item may be named that an open return or exchange request of the order already holds.
fn check_not_requested(order: &Order, items: &[&str]) -> Result<(), String> {
    match items.iter().find(|id| requested(order, id)) {
        Some(id) => Err(format!(
            "item {id} of order {} is already part of a return or exchange request",
            order.order_id
        )),
        None => Ok(()),
    }
}

/// Rules shared by item modification and exchange: same product, available, different
/// option, and a payment method of the owner that can cover the difference.
fn check_swap(db: &RetailDb, order: &Order, args: &Value) -> Result<(), String> {
    let old = arg_list(args, "item_ids");
    let new = arg_list(args, "new_item_ids");
    if old.is_empty() {
        return Err("at least one item must be listed for the change".into());
    }
    if old.len() != new.len() {
        return Err("each item to change needs exactly one replacement item".into());
    }
    let mut diff = 0.0;
    for (o, n) in old.iter().zip(&new) {
        let item = order
            .items
            .iter()
            .find(|i| i.item_id == *o)
            .ok_or_else(|| format!("item {o} is not part of order {}", order.order_id))?;
        if o == n {
            return Err(format!(
                "replacement for item {o} must be a different option of the product"
            ));
        }
        let variant = db
            .products
            .get(&item.product_id)
            .and_then(|p| p.variants.get(*n))
            .ok_or_else(|| {
                format!("item {n} is not a variant of the same product as {o}; product types cannot change")
            })?;
        if !variant.available {
            return Err(format!("replacement item {n} is not available"));
        }
        diff += variant.price - item.price;
    }
    let present = order.item_ids();
    for id in &old {
        if old.iter().filter(|x| *x == id).count() > present.iter().filter(|x| *x == id).count() {
            return Err(format!(
                "item {id} is listed more often than it was ordered"
            ));
        }
    }
    check_payment_covers(db, order, arg_str(args, "payment_method_id"), round2(diff))
}

fn check_payment_covers(
    db: &RetailDb,
    order: &Order,
    method_id: &str,
    amount: f64,
) -> Result<(), String> {
    let method = db
        .users
        .get(&order.user_id)
        .and_then(|u| u.payment_methods.get(method_id))
        .ok_or_else(|| {
            format!("payment method {method_id} does not belong to the order's customer")
        })?;
    if method.is_gift_card() && method.balance_amount() < amount {
        return Err(format!(
            "gift card {method_id} must have enough balance to cover {amount:.2}"
        ));
    }
    Ok(())
}

pub fn check_policy(db: &RetailDb, tool: &str, args: &Value) -> Result<(), String> {
    match tool {
        "cancel_pending_order" => {
            order_with_status(
                db,
                args,
                status::PENDING,
                "only pending orders can be cancelled",
            )?;
            let reason = arg_str(args, "reason");
            if !CANCEL_REASONS.contains(&reason) {
                return Err(format!(
                    "cancellation reason must be 'no longer needed' or 'ordered by mistake', not '{reason}'"
                ));
            }
            Ok(())
        }
        "modify_pending_order_address" => {
            order_with_status(
                db,
                args,
                status::PENDING,
                "only pending orders can be modified",
            )?;
            check_address(args)
        }
        "modify_pending_order_items" => {
            let rule = match db.lifecycle {
                Lifecycle::TauBench => "only pending orders can be modified, and items only once",
                Lifecycle::TauEmotionBench => "only pending orders can be modified",
            };
            let order = order_with_status(db, args, status::PENDING, rule)?;
            check_swap(db, order, args)
        }
        "modify_pending_order_payment" => {
            let order = order_with_status(
                db,
                args,
                status::PENDING,
                "only pending orders can be modified",
            )?;
            let paid =
                match order.payment_history.as_slice() {
                    [only] if only.transaction_type == "payment" => only,
                    _ => return Err(
                        "the payment can only be changed while the order has exactly one payment"
                            .into(),
                    ),
                };
            let method_id = arg_str(args, "payment_method_id");
            if paid.payment_method_id == method_id {
                return Err("the new payment method must differ from the current one".into());
            }
            check_payment_covers(db, order, method_id, paid.amount)
        }
        "return_delivered_order_items" => {
            let order = delivered_order(db, args, "returned")?;
            if order.return_items.is_some() {
                return Err(format!(
                    "order {} already has a return request; a second one would replace it",
                    order.order_id
                ));
            }
            let items = arg_list(args, "item_ids");
            check_not_requested(order, &items)?;
            if items.is_empty() {
                return Err("at least one item must be listed for the return".into());
            }
            let present = order.item_ids();
            for id in &items {
                if items.iter().filter(|x| *x == id).count()
                    > present.iter().filter(|x| *x == id).count()
                {
                    return Err(format!(
                        "item {id} is not part of order {} (or listed too often)",
                        order.order_id
                    ));
                }
            }
            let method_id = arg_str(args, "payment_method_id");
            let owner = db.users.get(&order.user_id);
            let method = owner
                .and_then(|u| u.payment_methods.get(method_id))
                .ok_or_else(|| {
                    format!("payment method {method_id} does not belong to the order's customer")
                })?;
            let original = order.first_payment().map(|p| p.payment_method_id.as_str());
            if !method.is_gift_card() && original != Some(method_id) {
                return Err(
                    "refunds go to the original payment method or a gift card of the customer"
                        .into(),
                );
            }
            Ok(())
        }
        "exchange_delivered_order_items" => {
            let order = delivered_order(db, args, "exchanged")?;
            if order.exchange_items.is_some() {
                return Err(format!(
                    "order {} already has an exchange request; a second one would replace it",
                    order.order_id
                ));
            }
            check_not_requested(order, &arg_list(args, "item_ids"))?;
            check_swap(db, order, args)
        }
        "modify_user_address" => {
            let id = arg_str(args, "user_id");
            if !db.users.contains(id) {
                return Err(format!("user {id} does not exist"));
            }
            check_address(args)
        }
        _ => Ok(()),
    }
}

/// A new address must be complete (only the second line may be empty).
fn check_address(args: &Value) -> Result<(), String> {
    for key in ["address1", "city", "state", "country", "zip"] {
        if arg_str(args, key).trim().is_empty() {
            return Err(format!("a new address needs a non-empty '{key}'"));
        }
    }
    Ok(())
}
