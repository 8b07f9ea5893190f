//! Refinement and verification hooks for retail: what a customer knows about themself
//! (`user_facts`), what they ask of each call (`describe_request`), which argument values
//! they could never know (`internal_ids`), what the agent must tell them (`required_outputs`)
//! and what the agent can look up once they are identified (`customer_records`).
//!
//! Customers authenticate by email (or by name + zip code), so user ids, payment method ids
//! and item ids are internal: a request names payment methods the way a customer knows them
//! ("your Visa credit card ending in 3303", "your PayPal account", "your gift card with a
//! balance of $120.00") and items by product name and options, never by id. Order ids are
//! printed on confirmations, so customers may state them. Each order fact resolves the item
//! ids of its order and of the other variants of those products (the agent finds them from
//! the order and the product details once the customer names the order and the options).
//!
//! Architecture invariant: reads the state only; phrasing varies deterministically with the
//! arguments (no RNG), so grounding stays reproducible.

use super::db::{Order, OrderItem, PaymentMethod, RetailDb, User};
use crate::domain::UserFact;
use serde_json::Value;
use std::collections::BTreeMap;

/// A deterministic choice among `n` phrasings, driven by the call's content.
fn variant(tool: &str, args: &Value, n: usize) -> usize {
    // FNV-1a over the call: stable across platforms and runs.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in format!("{tool}\0{args}").bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % n.max(1) as u64) as usize
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

fn brand_name(brand: &str) -> String {
    match brand.to_lowercase().as_str() {
        "visa" => "Visa".into(),
        "mastercard" => "Mastercard".into(),
        "amex" => "American Express".into(),
        "discover" => "Discover".into(),
        other => {
            let mut c = other.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        }
    }
}

/// A dollar amount as a customer says it ("$120.00").
fn dollars(x: f64) -> String {
    format!("${x:.2}")
}

/// How the customer refers to a payment method, e.g. "your Visa credit card ending in
/// 3303"; gift cards by balance when the customer holds more than one.
fn payment_phrase(user: &User, method: &PaymentMethod) -> String {
    match method.source.as_str() {
        "credit_card" => format!(
            "your {} credit card ending in {}",
            brand_name(method.brand.as_deref().unwrap_or("credit")),
            method.last_four.as_deref().unwrap_or("")
        ),
        "paypal" => "your PayPal account".into(),
        "gift_card" => {
            let cards = user
                .payment_methods
                .values()
                .filter(|m| m.is_gift_card())
                .count();
            if cards > 1 {
                format!(
                    "your gift card with a balance of {}",
                    dollars(method.balance_amount())
                )
            } else {
                "your gift card".into()
            }
        }
        other => format!("your {} payment method", other.replace('_', " ")),
    }
}

/// The literal strings a payment phrase reveals (what the verifier looks for).
fn payment_values(user: &User, method: &PaymentMethod) -> Vec<String> {
    match method.source.as_str() {
        "credit_card" => vec![method.last_four.clone().unwrap_or_default()],
        "paypal" => vec!["PayPal".into()],
        "gift_card" => {
            let mut v = vec!["gift card".to_string()];
            if user
                .payment_methods
                .values()
                .filter(|m| m.is_gift_card())
                .count()
                > 1
            {
                v.push(dollars(method.balance_amount()));
            }
            v
        }
        other => vec![other.replace('_', " ")],
    }
}

/// "edition: deluxe, theme: party".
fn options_text(options: &BTreeMap<String, String>) -> String {
    options
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// "board game (edition: deluxe, theme: party)".
fn item_text(item: &OrderItem) -> String {
    if item.options.is_empty() {
        item.name.to_lowercase()
    } else {
        format!(
            "{} ({})",
            item.name.to_lowercase(),
            options_text(&item.options)
        )
    }
}

fn count_word(n: usize) -> String {
    match n {
        2 => "two".into(),
        3 => "three".into(),
        4 => "four".into(),
        5 => "five".into(),
        n => n.to_string(),
    }
}

/// "a and b", "a, b and c".
fn join_and(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The items of `order` listed by `ids` (duplicates counted), described by name and options.
fn items_text(order: &Order, ids: &[&str]) -> String {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for id in ids {
        match seen.iter_mut().find(|(s, _)| s == id) {
            Some((_, n)) => *n += 1,
            None => seen.push((id, 1)),
        }
    }
    let parts: Vec<String> = seen
        .iter()
        .map(|(id, n)| {
            let desc = order
                .items
                .iter()
                .find(|i| i.item_id == *id)
                .map(item_text)
                .unwrap_or_else(|| "item".into());
            if *n > 1 {
                format!("{} units of the {desc}", count_word(*n))
            } else {
                format!("the {desc}")
            }
        })
        .collect();
    join_and(&parts)
}

/// One swap as (item described, wanted variant described): ("board game (edition: deluxe,
/// theme: party)", "the one with edition: classic"); only the options that change are named.
fn swap_parts(db: &RetailDb, order: &Order, old: &str, new: &str) -> (String, String) {
    let Some(item) = order.items.iter().find(|i| i.item_id == old) else {
        return ("item".into(), "another available variant".into());
    };
    let target = db
        .products
        .get(&item.product_id)
        .and_then(|p| p.variants.get(new));
    let changed = target
        .map(|v| {
            v.options
                .iter()
                .filter(|(k, val)| item.options.get(*k) != Some(*val))
                .map(|(k, val)| format!("{k}: {val}"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let wanted = if changed.is_empty() {
        "another available variant".to_string()
    } else {
        format!("the one with {}", changed.join(", "))
    };
    (item_text(item), wanted)
}

/// "the board game (...) for the one with edition: classic and two units of the mug (...),
/// each for the one with color: red".
fn swaps_text(db: &RetailDb, order: &Order, old: &[&str], new: &[&str]) -> String {
    let mut pairs: Vec<((&str, &str), usize)> = Vec::new();
    for pair in old.iter().copied().zip(new.iter().copied()) {
        match pairs.iter_mut().find(|(p, _)| *p == pair) {
            Some((_, n)) => *n += 1,
            None => pairs.push((pair, 1)),
        }
    }
    let parts: Vec<String> = pairs
        .iter()
        .map(|((o, n), count)| {
            let (item, wanted) = swap_parts(db, order, o, n);
            if *count > 1 {
                format!(
                    "{} units of the {item}, each for {wanted}",
                    count_word(*count)
                )
            } else {
                format!("the {item} for {wanted}")
            }
        })
        .collect();
    join_and(&parts)
}

fn address_text(args: &Value) -> String {
    let mut parts = vec![arg_str(args, "address1").to_string()];
    if !arg_str(args, "address2").trim().is_empty() {
        parts.push(arg_str(args, "address2").to_string());
    }
    parts.push(arg_str(args, "city").to_string());
    parts.push(format!(
        "{} {}",
        arg_str(args, "state"),
        arg_str(args, "zip")
    ));
    parts.push(arg_str(args, "country").to_string());
    parts.join(", ")
}

/// The payment phrase for a method id of the order's owner.
fn order_payment_phrase(db: &RetailDb, order: &Order, method_id: &str) -> String {
    db.users
        .get(&order.user_id)
        .and_then(|u| {
            u.payment_methods
                .get(method_id)
                .map(|m| payment_phrase(u, m))
        })
        .unwrap_or_else(|| "one of your saved payment methods".into())
}

fn order_status_of(output: &str) -> Option<(String, Option<String>)> {
    let v: Value = serde_json::from_str(output).ok()?;
    let status = v.get("status")?.as_str()?.to_string();
    let tracking = v
        .get("fulfillments")
        .and_then(Value::as_array)
        .and_then(|f| f.first())
        .and_then(|f| f.get("tracking_id"))
        .and_then(Value::as_array)
        .and_then(|t| t.first())
        .and_then(Value::as_str)
        .map(str::to_string);
    Some((status, tracking))
}

/// A number as the tool printed it, without a trailing ".0" (so "$100" matches "100").
fn number_text(n: &Value) -> String {
    let s = n.to_string();
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// The cheapest available variant of a product output: (options text, price text).
fn cheapest_available(output: &str) -> Option<(String, String)> {
    let v: Value = serde_json::from_str(output).ok()?;
    let variants = v.get("variants")?.as_object()?;
    variants
        .values()
        .filter(|x| x.get("available").and_then(Value::as_bool) == Some(true))
        .filter_map(|x| Some((x.get("price")?.as_f64()?, x)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, x)| {
            let options: BTreeMap<String, String> = x
                .get("options")
                .and_then(|o| serde_json::from_value(o.clone()).ok())
                .unwrap_or_default();
            (
                options_text(&options),
                x.get("price").map(number_text).unwrap_or_default(),
            )
        })
}

pub fn user_facts(db: &RetailDb, user_id: &str) -> Vec<UserFact> {
    let Some(user) = db.users.get(user_id) else {
        return Vec::new();
    };
    let mut facts = vec![
        UserFact {
            kind: "identity".into(),
            text: format!("Your email address is {}.", user.email),
            values: vec![user.email.clone()],
            ids: vec![user_id.to_string()],
        },
        UserFact {
            kind: "name".into(),
            text: format!(
                "Your name is {} {}, and the zip code of your default address is {}.",
                user.name.first_name, user.name.last_name, user.address.zip
            ),
            values: vec![
                user.name.first_name.clone(),
                user.name.last_name.clone(),
                user.address.zip.clone(),
            ],
            ids: vec![user_id.to_string()],
        },
    ];
    for method in user.payment_methods.values() {
        let phrase = payment_phrase(user, method);
        let text = match method.source.as_str() {
            "gift_card" => format!(
                "You have a store gift card with a balance of {}.",
                dollars(method.balance_amount())
            ),
            _ => format!("You have {} on file.", phrase.replacen("your ", "a ", 1)),
        };
        facts.push(UserFact {
            kind: "payment".into(),
            text,
            values: payment_values(user, method),
            ids: vec![method.id.clone()],
        });
    }
    let a = &user.address;
    let mut address = vec![a.address1.clone()];
    if !a.address2.is_empty() {
        address.push(a.address2.clone());
    }
    address.extend([
        a.city.clone(),
        format!("{} {}", a.state, a.zip),
        a.country.clone(),
    ]);
    facts.push(UserFact {
        kind: "address".into(),
        text: format!("Your default address is {}.", address.join(", ")),
        values: vec![a.address1.clone(), a.city.clone(), a.zip.clone()],
        ids: Vec::new(),
    });
    for order_id in &user.orders {
        let Some(order) = db.orders.get(order_id) else {
            continue;
        };
        let ids: Vec<&str> = order.item_ids();
        let mut resolvable: Vec<String> = Vec::new();
        for item in &order.items {
            let variants = db
                .products
                .get(&item.product_id)
                .map(|p| p.variants.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_else(|| vec![item.item_id.clone()]);
            for id in variants {
                if !resolvable.contains(&id) {
                    resolvable.push(id);
                }
            }
        }
        facts.push(UserFact {
            kind: "entity".into(),
            text: format!(
                "Your order {order_id} contains {}.",
                items_text(order, &ids)
            ),
            values: vec![order_id.clone()],
            ids: resolvable,
        });
    }
    facts
}

pub fn describe_request(db: &RetailDb, tool: &str, args: &Value, output: &str) -> Option<String> {
    let order = db.orders.get(arg_str(args, "order_id"));
    let order_id = arg_str(args, "order_id");
    let v = |n| variant(tool, args, n);
    let sentence = match tool {
        "cancel_pending_order" => {
            order?;
            let reason = match arg_str(args, "reason") {
                "ordered by mistake" => "because it was ordered by mistake",
                "no longer needed" => "because it is no longer needed",
                other => return Some(format!("You want to cancel order {order_id} ({other}).")),
            };
            match v(2) {
                0 => format!("You want to cancel order {order_id} {reason}."),
                _ => format!("You would like your pending order {order_id} cancelled {reason}."),
            }
        }
        "modify_pending_order_address" => {
            let address = address_text(args);
            match v(2) {
                0 => format!(
                    "You want the shipping address of order {order_id} changed to {address}."
                ),
                _ => format!(
                    "Order {order_id} has not shipped yet, and you want it delivered to {address} instead."
                ),
            }
        }
        "modify_pending_order_items" => {
            let order = order?;
            let swaps = swaps_text(
                db,
                order,
                &arg_list(args, "item_ids"),
                &arg_list(args, "new_item_ids"),
            );
            let pay = order_payment_phrase(db, order, arg_str(args, "payment_method_id"));
            match v(2) {
                0 => format!(
                    "In your pending order {order_id}, you want to swap {swaps}. Any price difference should be settled with {pay}."
                ),
                _ => format!(
                    "Before order {order_id} ships, you want to change {swaps}; use {pay} for any price difference."
                ),
            }
        }
        "modify_pending_order_payment" => {
            let order = order?;
            let pay = order_payment_phrase(db, order, arg_str(args, "payment_method_id"));
            match v(2) {
                0 => format!("You want to pay for order {order_id} with {pay} instead."),
                _ => format!("You want to switch the payment of order {order_id} to {pay}."),
            }
        }
        "return_delivered_order_items" => {
            let order = order?;
            let items = items_text(order, &arg_list(args, "item_ids"));
            let pay = order_payment_phrase(db, order, arg_str(args, "payment_method_id"));
            match v(2) {
                0 => format!(
                    "You want to return {items} from your delivered order {order_id}, with the refund going to {pay}."
                ),
                _ => format!(
                    "Order {order_id} has arrived, and you want to return {items} from it, with the money refunded to {pay}."
                ),
            }
        }
        "exchange_delivered_order_items" => {
            let order = order?;
            let swaps = swaps_text(
                db,
                order,
                &arg_list(args, "item_ids"),
                &arg_list(args, "new_item_ids"),
            );
            let pay = order_payment_phrase(db, order, arg_str(args, "payment_method_id"));
            match v(2) {
                0 => format!(
                    "You want to exchange {swaps} from your delivered order {order_id}, settling any price difference with {pay}."
                ),
                _ => format!(
                    "Order {order_id} has arrived, and you want to exchange {swaps}; any price difference goes through {pay}."
                ),
            }
        }
        "modify_user_address" => {
            let address = address_text(args);
            match v(2) {
                0 => format!(
                    "You have moved and want the default address on your account updated to {address}."
                ),
                _ => format!("You want your default address changed to {address}."),
            }
        }
        "get_order_details" => {
            let (_, tracking) = order_status_of(output)?;
            match (tracking.is_some(), v(2)) {
                (true, 0) => format!(
                    "You want to know the status of order {order_id} and its tracking number."
                ),
                (true, _) => format!(
                    "You are wondering where order {order_id} is: you want its current status and the tracking number."
                ),
                (false, 0) => format!("You want to know the current status of order {order_id}."),
                (false, _) => {
                    format!("You would like an update on the status of order {order_id}.")
                }
            }
        }
        "get_product_details" => {
            let name: String = serde_json::from_str::<Value>(output)
                .ok()?
                .get("name")?
                .as_str()?
                .to_lowercase();
            match v(2) {
                0 => format!(
                    "You are interested in the {name} and want to know the price of its cheapest variant that is available right now."
                ),
                _ => format!(
                    "You want to know which options of the {name} are in stock and how much the cheapest available one costs."
                ),
            }
        }
        "list_all_product_types" => {
            "You want to know what kinds of products the store sells.".into()
        }
        "transfer_to_human_agents" => "You want to talk to a human agent about your issue.".into(),
        // Agent-side lookups and notes: the customer does not ask for these.
        _ => return None,
    };
    Some(sentence)
}

pub fn internal_ids(tool: &str, args: &Value) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        if !s.is_empty() && !ids.iter().any(|i| i == s) {
            ids.push(s.to_string());
        }
    };
    match tool {
        "modify_pending_order_items" | "exchange_delivered_order_items" => {
            for id in arg_list(args, "item_ids")
                .into_iter()
                .chain(arg_list(args, "new_item_ids"))
            {
                push(id);
            }
            push(arg_str(args, "payment_method_id"));
        }
        "return_delivered_order_items" => {
            for id in arg_list(args, "item_ids") {
                push(id);
            }
            push(arg_str(args, "payment_method_id"));
        }
        "modify_pending_order_payment" => push(arg_str(args, "payment_method_id")),
        "get_user_details" | "modify_user_address" => push(arg_str(args, "user_id")),
        _ => {}
    }
    ids
}

pub fn required_outputs(tool: &str, output: &str) -> Vec<String> {
    match tool {
        "get_order_details" => order_status_of(output)
            .map(|(status, tracking)| std::iter::once(status).chain(tracking).collect())
            .unwrap_or_default(),
        "get_product_details" => cheapest_available(output)
            .map(|(_, price)| vec![price])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

pub fn customer_records(db: &RetailDb, user_id: &str) -> Vec<String> {
    let Some(user) = db.users.get(user_id) else {
        return Vec::new();
    };
    let mut records = vec![user_id.to_string()];
    records.extend(serde_json::to_string(user).ok());
    let mut products: Vec<&str> = Vec::new();
    for order in user.orders.iter().filter_map(|id| db.orders.get(id)) {
        records.extend(serde_json::to_string(order).ok());
        for item in &order.items {
            if !products.contains(&item.product_id.as_str()) {
                products.push(&item.product_id);
            }
        }
    }
    for product in products.iter().filter_map(|id| db.products.get(id)) {
        records.extend(serde_json::to_string(product).ok());
    }
    let catalogue: BTreeMap<&str, &str> = db
        .products
        .iter()
        .map(|(_, p)| (p.name.as_str(), p.product_id.as_str()))
        .collect();
    records.extend(serde_json::to_string(&catalogue).ok());
    records
}
