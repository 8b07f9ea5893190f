//! The machine-checkable rules of `policies/retail.md` (and `retail.tau-bench.md`), as named
//! kit rows per write tool: grounding drops proposals that break one, graph and task
//! verification reject calls that do, and the rule name groups those rejections. Rules the
//! tools enforce themselves are repeated here where the policy words them (so a task never
//! relies on a tool error), and the policy adds what the tools do not check: a complete
//! address, a real change of item or payment method, one open return and one open exchange
//! request per order (the authors' tools would silently replace the first), no item in
//! both.
//!
//! Architecture invariant: reads the state only; the active lifecycle decides which
//! statuses count as pending or delivered.

use super::db::{CANCEL_REASONS, Lifecycle, Order, RetailDb, round2, status};
use crate::domain::kit::policy::{Rule, rule};
use crate::domain::kit::text::{arg_list, arg_str};
use serde_json::Value;

const CANCEL: &str = "cancel_pending_order";
const ADDRESS: &str = "modify_pending_order_address";
const ITEMS: &str = "modify_pending_order_items";
const PAYMENT: &str = "modify_pending_order_payment";
const RETURN: &str = "return_delivered_order_items";
const EXCHANGE: &str = "exchange_delivered_order_items";

/// Checked in order; the first broken rule is reported.
pub static RULES: &[Rule<RetailDb>] = &[
    rule(CANCEL, "order_is_pending", |db, a| {
        pending(db, a, "only pending orders can be cancelled")
    }),
    rule(CANCEL, "cancel_reason", |_, a| match arg_str(a, "reason") {
        r if CANCEL_REASONS.contains(&r) => Ok(()),
        r => Err(format!(
            "cancellation reason must be 'no longer needed' or 'ordered by mistake', not '{r}'"
        )),
    }),
    rule(ADDRESS, "order_is_pending", |db, a| {
        pending(db, a, "only pending orders can be modified")
    }),
    rule(ADDRESS, "complete_address", |_, a| complete_address(a)),
    rule(ITEMS, "order_is_pending", |db, a| {
        let words = match db.lifecycle {
            Lifecycle::TauBench => "only pending orders can be modified, and items only once",
            Lifecycle::TauEmotionBench => "only pending orders can be modified",
        };
        pending(db, a, words)
    }),
    rule(ITEMS, "same_product_swap", |db, a| {
        same_product_swap(db, &order(db, a)?, a)
    }),
    rule(ITEMS, "payment_covers", |db, a| {
        let order = order(db, a)?;
        covers(
            db,
            &order,
            arg_str(a, "payment_method_id"),
            swap_difference(db, &order, a),
        )
    }),
    rule(PAYMENT, "order_is_pending", |db, a| {
        pending(db, a, "only pending orders can be modified")
    }),
    rule(PAYMENT, "single_payment", |db, a| {
        single_payment(&order(db, a)?).map(|_| ())
    }),
    rule(PAYMENT, "new_payment_method", |db, a| {
        let order = order(db, a)?;
        let paid = single_payment(&order)?;
        let method = arg_str(a, "payment_method_id");
        if paid.0 == method {
            return Err("the new payment method must differ from the current one".into());
        }
        covers(db, &order, method, paid.1)
    }),
    rule(RETURN, "order_is_delivered", |db, a| {
        delivered(db, a, "returned")
    }),
    rule(RETURN, "one_open_request", |db, a| {
        match order(db, a)?.return_items {
            Some(_) => Err(format!(
                "order {} already has a return request; a second one would replace it",
                arg_str(a, "order_id")
            )),
            None => Ok(()),
        }
    }),
    rule(RETURN, "items_not_requested", |db, a| {
        not_requested(&order(db, a)?, a)
    }),
    rule(RETURN, "items_in_order", |db, a| {
        let order = order(db, a)?;
        let items = arg_list(a, "item_ids");
        if items.is_empty() {
            return Err("at least one item must be listed for the return".into());
        }
        match items.iter().find(|id| over_listed(&order, &items, id)) {
            Some(id) => Err(format!(
                "item {id} is not part of order {} (or listed too often)",
                order.order_id
            )),
            None => Ok(()),
        }
    }),
    rule(RETURN, "refund_destination", |db, a| {
        let order = order(db, a)?;
        let id = arg_str(a, "payment_method_id");
        let method = db
            .users
            .get(&order.user_id)
            .and_then(|u| u.payment_methods.get(id).cloned())
            .ok_or_else(|| {
                format!("payment method {id} does not belong to the order's customer")
            })?;
        let original = order.first_payment().map(|p| p.payment_method_id.as_str());
        if !method.is_gift_card() && original != Some(id) {
            return Err(
                "refunds go to the original payment method or a gift card of the customer".into(),
            );
        }
        Ok(())
    }),
    rule(EXCHANGE, "order_is_delivered", |db, a| {
        delivered(db, a, "exchanged")
    }),
    rule(EXCHANGE, "one_open_request", |db, a| {
        match order(db, a)?.exchange_items {
            Some(_) => Err(format!(
                "order {} already has an exchange request; a second one would replace it",
                arg_str(a, "order_id")
            )),
            None => Ok(()),
        }
    }),
    rule(EXCHANGE, "items_not_requested", |db, a| {
        not_requested(&order(db, a)?, a)
    }),
    rule(EXCHANGE, "same_product_swap", |db, a| {
        same_product_swap(db, &order(db, a)?, a)
    }),
    rule(EXCHANGE, "payment_covers", |db, a| {
        let order = order(db, a)?;
        covers(
            db,
            &order,
            arg_str(a, "payment_method_id"),
            swap_difference(db, &order, a),
        )
    }),
    rule("modify_user_address", "known_user", |db, a| {
        let id = arg_str(a, "user_id");
        match db.users.contains(id) {
            true => Ok(()),
            false => Err(format!("user {id} does not exist")),
        }
    }),
    rule("modify_user_address", "complete_address", |_, a| {
        complete_address(a)
    }),
];

/// The call's order (a clone: rows are small and rules run on dry runs only).
fn order(db: &RetailDb, args: &Value) -> Result<Order, String> {
    let id = arg_str(args, "order_id");
    db.orders
        .get(id)
        .cloned()
        .ok_or_else(|| format!("order {id} does not exist"))
}

fn pending(db: &RetailDb, args: &Value, rule: &str) -> Result<(), String> {
    let order = order(db, args)?;
    if order.status != status::PENDING {
        return Err(format!(
            "{rule} (order {} is '{}')",
            order.order_id, order.status
        ));
    }
    Ok(())
}

/// Delivered as the active lifecycle reads the status.
fn delivered(db: &RetailDb, args: &Value, action: &str) -> Result<(), String> {
    let order = order(db, args)?;
    if !db.lifecycle.accepts_return_or_exchange(&order.status) {
        return Err(format!(
            "only delivered orders can be {action} (order {} is '{}')",
            order.order_id, order.status
        ));
    }
    Ok(())
}

/// The item is already part of the order's open return or exchange request.
pub fn requested(order: &Order, item_id: &str) -> bool {
    [&order.return_items, &order.exchange_items]
        .into_iter()
        .flatten()
        .any(|ids| ids.iter().any(|i| i == item_id))
}

fn not_requested(order: &Order, args: &Value) -> Result<(), String> {
    match arg_list(args, "item_ids")
        .into_iter()
        .find(|id| requested(order, id))
    {
        Some(id) => Err(format!(
            "item {id} of order {} is already part of a return or exchange request",
            order.order_id
        )),
        None => Ok(()),
    }
}

/// `id` is listed more often than the order holds it.
fn over_listed(order: &Order, listed: &[&str], id: &str) -> bool {
    let have = order.items.iter().filter(|i| i.item_id == id).count();
    listed.iter().filter(|x| **x == id).count() > have
}

/// Every listed item of the order swapped for a different, available variant of the same
/// product, one replacement each.
fn same_product_swap(db: &RetailDb, order: &Order, args: &Value) -> Result<(), String> {
    let (old, new) = (arg_list(args, "item_ids"), arg_list(args, "new_item_ids"));
    if old.is_empty() {
        return Err("at least one item must be listed for the change".into());
    }
    if old.len() != new.len() {
        return Err("each item to change needs exactly one replacement item".into());
    }
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
    }
    match old.iter().find(|id| over_listed(order, &old, id)) {
        Some(id) => Err(format!(
            "item {id} is listed more often than it was ordered"
        )),
        None => Ok(()),
    }
}

/// New minus old price of a swap, rounded to cents (0 for items the swap rule rejects).
fn swap_difference(db: &RetailDb, order: &Order, args: &Value) -> f64 {
    let (old, new) = (arg_list(args, "item_ids"), arg_list(args, "new_item_ids"));
    let diff: f64 = old
        .iter()
        .zip(&new)
        .filter_map(|(o, n)| {
            let item = order.items.iter().find(|i| i.item_id == *o)?;
            let variant = db.products.get(&item.product_id)?.variants.get(*n)?;
            Some(variant.price - item.price)
        })
        .sum();
    round2(diff)
}

/// The order's only payment as (method id, amount).
fn single_payment(order: &Order) -> Result<(String, f64), String> {
    match order.payment_history.as_slice() {
        [only] if only.transaction_type == "payment" => {
            Ok((only.payment_method_id.clone(), only.amount))
        }
        _ => Err("the payment can only be changed while the order has exactly one payment".into()),
    }
}

/// A method of the order's customer that can pay `amount` (gift cards need the balance).
fn covers(db: &RetailDb, order: &Order, method_id: &str, amount: f64) -> Result<(), String> {
    let method = db
        .users
        .get(&order.user_id)
        .and_then(|u| u.payment_methods.get(method_id).cloned())
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

/// A new address must be complete (only the second line may be empty).
fn complete_address(args: &Value) -> Result<(), String> {
    match ["address1", "city", "state", "country", "zip"]
        .into_iter()
        .find(|k| arg_str(args, k).trim().is_empty())
    {
        Some(key) => Err(format!("a new address needs a non-empty '{key}'")),
        None => Ok(()),
    }
}
