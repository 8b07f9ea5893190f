//! The sixteen retail tools' behaviour; their specs (kind, description, arguments) are data
//! in `tools.toml`, bound here by name.
//!
//! Names, arguments, success payloads and error strings follow tau-bench's public retail
//! environment, so its tasks replay here unchanged. Descriptions are our own wording.
//! Checks run before any mutation, so a failing call leaves the state untouched.
//! Money follows tau-bench exactly: gift-card balances are rounded to cents after every
//! update and exchange price differences are rounded, while the payment/refund recorded by an
//! item modification keeps tau-bench's raw float, so replayed tau-bench tasks end in the
//! same state (checked by the opt-in replay test in `tests.rs`).
//! Retail tools never create rows, so no new ids are ever minted.
//!
//! Architecture invariant: tools see only the `RetailDb` and their validated arguments;
//! policy rules that the tools themselves do not enforce live in `ground.rs`.

use super::db::{Address, CANCEL_REASONS, Order, RetailDb, Transaction, round2, status};
use crate::domain::ToolFn;
use crate::domain::kit::calc;
use crate::domain::kit::ids::id_by_email;
use crate::domain::kit::specs;
use crate::domain::{Args, Tool};
use std::collections::BTreeMap;

crate::domain::kit::glue::tool_list!(RetailDb);

fn build() -> Vec<Tool<RetailDb>> {
    let runs: [(&str, ToolFn<RetailDb>); 16] = [
        ("calculate", |_, a| calc::evaluate(a.str("expression")?)),
        ("cancel_pending_order", cancel_pending_order),
        (
            "exchange_delivered_order_items",
            exchange_delivered_order_items,
        ),
        ("find_user_id_by_email", find_user_id_by_email),
        ("find_user_id_by_name_zip", find_user_id_by_name_zip),
        ("get_order_details", |db, a| {
            to_json(db.orders.get(a.str("order_id")?).ok_or("order not found")?)
        }),
        ("get_product_details", |db, a| {
            to_json(
                db.products
                    .get(a.str("product_id")?)
                    .ok_or("product not found")?,
            )
        }),
        ("get_user_details", |db, a| {
            to_json(db.users.get(a.str("user_id")?).ok_or("user not found")?)
        }),
        ("list_all_product_types", list_all_product_types),
        ("modify_pending_order_address", modify_pending_order_address),
        ("modify_pending_order_items", modify_pending_order_items),
        ("modify_user_address", modify_user_address),
        ("return_delivered_order_items", return_delivered_order_items),
        ("think", |_, a| a.str("thought").map(|_| String::new())),
        ("transfer_to_human_agents", |_, a| {
            a.str("summary").map(|_| "Transfer successful".into())
        }),
        ("modify_pending_order_payment", modify_pending_order_payment),
    ];
    specs::builtin(include_str!("tools.toml"), &runs)
}

fn to_json<T: serde::Serialize>(row: &T) -> Result<String, String> {
    serde_json::to_string(row).map_err(|e| e.to_string())
}

fn read_address(args: &Args) -> Result<Address, String> {
    Ok(Address {
        address1: args.str("address1")?.to_string(),
        address2: args.str("address2")?.to_string(),
        city: args.str("city")?.to_string(),
        country: args.str("country")?.to_string(),
        state: args.str("state")?.to_string(),
        zip: args.str("zip")?.to_string(),
    })
}

fn find_user_id_by_email(db: &mut RetailDb, args: &Args) -> Result<String, String> {
    let rows = db.users.iter().map(|(id, u)| (id, u.email.as_str()));
    id_by_email(rows, args.str("email")?).ok_or_else(|| "user not found".to_string())
}

fn find_user_id_by_name_zip(db: &mut RetailDb, args: &Args) -> Result<String, String> {
    let first = args.str("first_name")?.to_lowercase();
    let last = args.str("last_name")?.to_lowercase();
    let zip = args.str("zip")?;
    db.users
        .iter()
        .find(|(_, u)| {
            u.name.first_name.to_lowercase() == first
                && u.name.last_name.to_lowercase() == last
                && u.address.zip == zip
        })
        .map(|(id, _)| id.to_string())
        .ok_or_else(|| "user not found".to_string())
}

fn list_all_product_types(db: &mut RetailDb, _args: &Args) -> Result<String, String> {
    // Later rows win on a duplicate name, as a Python dict comprehension does.
    let by_name: BTreeMap<&str, &str> = db
        .products
        .iter()
        .map(|(_, p)| (p.name.as_str(), p.product_id.as_str()))
        .collect();
    to_json(&by_name)
}

/// The order, which must exist and be pending.
fn pending_order<'a>(
    db: &'a RetailDb,
    order_id: &str,
    wrong_status: &str,
) -> Result<&'a Order, String> {
    let order = db.orders.get(order_id).ok_or("order not found")?;
    if order.status != status::PENDING {
        return Err(wrong_status.to_string());
    }
    Ok(order)
}

/// The order, which must exist and be delivered as the active lifecycle reads the status.
fn delivered_order<'a>(
    db: &'a RetailDb,
    order_id: &str,
    wrong_status: &str,
) -> Result<&'a Order, String> {
    let order = db.orders.get(order_id).ok_or("order not found")?;
    if !db.lifecycle.accepts_return_or_exchange(&order.status) {
        return Err(wrong_status.to_string());
    }
    Ok(order)
}

fn cancel_pending_order(db: &mut RetailDb, args: &Args) -> Result<String, String> {
    let order_id = args.str("order_id")?;
    let order = pending_order(db, order_id, "non-pending order cannot be cancelled")?;
    let reason = args.str("reason")?;
    if !CANCEL_REASONS.contains(&reason) {
        return Err("invalid reason".into());
    }
    // One refund per history entry, as tau-bench does; gift cards are credited at once.
    let refunds: Vec<Transaction> = order
        .payment_history
        .iter()
        .map(|p| Transaction {
            transaction_type: "refund".into(),
            amount: p.amount,
            payment_method_id: p.payment_method_id.clone(),
        })
        .collect();
    let user_id = order.user_id.clone();
    let gift_refunds: Vec<(String, f64)> = refunds
        .iter()
        .filter(|r| r.payment_method_id.contains("gift_card"))
        .map(|r| (r.payment_method_id.clone(), r.amount))
        .collect();
    if !gift_refunds.is_empty() {
        let user = db.users.get(&user_id).ok_or("user not found")?;
        if gift_refunds
            .iter()
            .any(|(id, _)| !user.payment_methods.contains_key(id))
        {
            return Err("payment method not found".into());
        }
        let user = db.users.get_mut(&user_id).ok_or("user not found")?;
        for (id, amount) in &gift_refunds {
            if let Some(pm) = user.payment_methods.get_mut(id) {
                pm.set_balance(round2(pm.balance_amount() + amount));
            }
        }
    }
    let order = db.orders.get_mut(order_id).ok_or("order not found")?;
    order.status = status::CANCELLED.into();
    order.cancel_reason = Some(reason.to_string());
    order.payment_history.extend(refunds);
    to_json(order)
}

/// Check that every id of `item_ids` is in the order as often as it is listed.
fn check_items_present(
    order: &Order,
    item_ids: &[&str],
    missing: impl Fn(&str) -> String,
) -> Result<(), String> {
    let present = order.item_ids();
    for id in item_ids {
        let wanted = item_ids.iter().filter(|x| *x == id).count();
        let have = present.iter().filter(|x| *x == id).count();
        if wanted > have {
            return Err(missing(id));
        }
    }
    Ok(())
}

/// Price difference (new minus old, summed in order and *not* rounded: tau-bench rounds it
/// for exchanges but records the raw float for item modifications) of swapping `item_ids`
/// for `new_item_ids` within the same products; errors as tau-bench words them.
fn price_difference(
    db: &RetailDb,
    order: &Order,
    item_ids: &[&str],
    new_item_ids: &[&str],
) -> Result<f64, String> {
    if item_ids.len() != new_item_ids.len() {
        return Err("the number of items to be exchanged should match".into());
    }
    let mut diff = 0.0;
    for (old, new) in item_ids.iter().zip(new_item_ids) {
        let item = order
            .items
            .iter()
            .find(|i| i.item_id == *old)
            .ok_or_else(|| format!("{old} not found"))?;
        let product = db
            .products
            .get(&item.product_id)
            .ok_or("product not found")?;
        let variant = product
            .variants
            .get(*new)
            .filter(|v| v.available)
            .ok_or_else(|| format!("new item {new} not found or available"))?;
        diff += variant.price - item.price;
    }
    Ok(diff)
}

fn exchange_delivered_order_items(db: &mut RetailDb, args: &Args) -> Result<String, String> {
    let order_id = args.str("order_id")?;
    let item_ids = args.str_list("item_ids")?;
    let new_item_ids = args.str_list("new_item_ids")?;
    let payment_method_id = args.str("payment_method_id")?;
    let order = delivered_order(db, order_id, "non-delivered order cannot be exchanged")?;
    check_items_present(order, &item_ids, |id| format!("{id} not found"))?;
    let diff = round2(price_difference(db, order, &item_ids, &new_item_ids)?);
    let user = db.users.get(&order.user_id).ok_or("user not found")?;
    let method = user
        .payment_methods
        .get(payment_method_id)
        .ok_or("payment method not found")?;
    if method.is_gift_card() && method.balance_amount() < diff {
        return Err("insufficient gift card balance to pay for the price difference".into());
    }
    let mut old_sorted: Vec<String> = item_ids.iter().map(|s| s.to_string()).collect();
    old_sorted.sort();
    let mut new_sorted: Vec<String> = new_item_ids.iter().map(|s| s.to_string()).collect();
    new_sorted.sort();
    let new_status = db.lifecycle.exchange_requested();
    let order = db.orders.get_mut(order_id).ok_or("order not found")?;
    order.status = new_status.into();
    order.exchange_items = Some(old_sorted);
    order.exchange_new_items = Some(new_sorted);
    order.exchange_payment_method_id = Some(payment_method_id.to_string());
    order.exchange_price_difference = Some(diff);
    to_json(order)
}

fn modify_pending_order_address(db: &mut RetailDb, args: &Args) -> Result<String, String> {
    let order_id = args.str("order_id")?;
    pending_order(db, order_id, "non-pending order cannot be modified")?;
    let address = read_address(args)?;
    let order = db.orders.get_mut(order_id).ok_or("order not found")?;
    order.address = address;
    to_json(order)
}

fn modify_pending_order_items(db: &mut RetailDb, args: &Args) -> Result<String, String> {
    let order_id = args.str("order_id")?;
    let item_ids = args.str_list("item_ids")?;
    let new_item_ids = args.str_list("new_item_ids")?;
    let payment_method_id = args.str("payment_method_id")?;
    let order = pending_order(db, order_id, "non-pending order cannot be modified")?;
    check_items_present(order, &item_ids, |id| format!("{id} not found"))?;
    let diff = price_difference(db, order, &item_ids, &new_item_ids)?;
    let user_id = order.user_id.clone();
    let user = db.users.get(&user_id).ok_or("user not found")?;
    let method = user
        .payment_methods
        .get(payment_method_id)
        .ok_or("payment method not found")?;
    let is_gift_card = method.is_gift_card();
    if is_gift_card && method.balance_amount() < diff {
        return Err("insufficient gift card balance to pay for the new item".into());
    }
    // Resolve the new rows before mutating anything.
    let mut replacements = Vec::with_capacity(new_item_ids.len());
    for (old, new) in item_ids.iter().zip(&new_item_ids) {
        let variant = order
            .items
            .iter()
            .find(|i| i.item_id == *old)
            .and_then(|i| db.products.get(&i.product_id))
            .and_then(|p| p.variants.get(*new))
            .ok_or_else(|| format!("new item {new} not found or available"))?;
        replacements.push((variant.price, variant.options.clone()));
    }
    if is_gift_card {
        let user = db.users.get_mut(&user_id).ok_or("user not found")?;
        if let Some(pm) = user.payment_methods.get_mut(payment_method_id) {
            pm.set_balance(round2(pm.balance_amount() - diff));
        }
    }
    let new_status = db.lifecycle.after_item_modification();
    let order = db.orders.get_mut(order_id).ok_or("order not found")?;
    order.payment_history.push(Transaction {
        transaction_type: if diff > 0.0 { "payment" } else { "refund" }.into(),
        // Unrounded, exactly as tau-bench records it (replayed states must hash the same).
        amount: diff.abs(),
        payment_method_id: payment_method_id.to_string(),
    });
    for ((old, new), (price, options)) in item_ids.iter().zip(&new_item_ids).zip(replacements) {
        if let Some(item) = order.items.iter_mut().find(|i| i.item_id == *old) {
            item.item_id = new.to_string();
            item.price = price;
            item.options = options;
        }
    }
    order.status = new_status.into();
    to_json(order)
}

fn modify_pending_order_payment(db: &mut RetailDb, args: &Args) -> Result<String, String> {
    let order_id = args.str("order_id")?;
    let payment_method_id = args.str("payment_method_id")?;
    let order = pending_order(db, order_id, "non-pending order cannot be modified")?;
    let user_id = order.user_id.clone();
    let user = db.users.get(&user_id).ok_or("user not found")?;
    let method = user
        .payment_methods
        .get(payment_method_id)
        .ok_or("payment method not found")?;
    let first = match order.payment_history.as_slice() {
        [only] if only.transaction_type == "payment" => only,
        _ => return Err("there should be exactly one payment for a pending order".into()),
    };
    if first.payment_method_id == payment_method_id {
        return Err("the new payment method should be different from the current one".into());
    }
    let amount = first.amount;
    if method.is_gift_card() && method.balance_amount() < amount {
        return Err("insufficient gift card balance to pay for the order".into());
    }
    let new_is_gift = method.is_gift_card();
    let old_id = first.payment_method_id.clone();
    if old_id.contains("gift_card") && !user.payment_methods.contains_key(&old_id) {
        return Err("payment method not found".into());
    }
    let user = db.users.get_mut(&user_id).ok_or("user not found")?;
    if new_is_gift && let Some(pm) = user.payment_methods.get_mut(payment_method_id) {
        pm.set_balance(round2(pm.balance_amount() - amount));
    }
    if old_id.contains("gift_card")
        && let Some(pm) = user.payment_methods.get_mut(&old_id)
    {
        pm.set_balance(round2(pm.balance_amount() + amount));
    }
    let order = db.orders.get_mut(order_id).ok_or("order not found")?;
    order.payment_history.push(Transaction {
        transaction_type: "payment".into(),
        amount,
        payment_method_id: payment_method_id.to_string(),
    });
    order.payment_history.push(Transaction {
        transaction_type: "refund".into(),
        amount,
        payment_method_id: old_id,
    });
    to_json(order)
}

fn modify_user_address(db: &mut RetailDb, args: &Args) -> Result<String, String> {
    let user_id = args.str("user_id")?;
    let address = read_address(args)?;
    let user = db.users.get_mut(user_id).ok_or("user not found")?;
    user.address = address;
    to_json(user)
}

fn return_delivered_order_items(db: &mut RetailDb, args: &Args) -> Result<String, String> {
    let order_id = args.str("order_id")?;
    let item_ids = args.str_list("item_ids")?;
    let payment_method_id = args.str("payment_method_id")?;
    let order = delivered_order(db, order_id, "non-delivered order cannot be returned")?;
    let user = db.users.get(&order.user_id).ok_or("user not found")?;
    if !user.payment_methods.contains_key(payment_method_id) {
        return Err("payment method not found".into());
    }
    let original = order
        .first_payment()
        .map(|p| p.payment_method_id.as_str())
        .unwrap_or("");
    if !payment_method_id.contains("gift_card") && payment_method_id != original {
        return Err(
            "payment method should be either the original payment method or a gift card".into(),
        );
    }
    check_items_present(order, &item_ids, |_| "some item not found".to_string())?;
    let mut sorted: Vec<String> = item_ids.iter().map(|s| s.to_string()).collect();
    sorted.sort();
    let new_status = db.lifecycle.return_requested();
    let order = db.orders.get_mut(order_id).ok_or("order not found")?;
    order.status = new_status.into();
    order.return_items = Some(sorted);
    order.return_payment_method_id = Some(payment_method_id.to_string());
    to_json(order)
}
