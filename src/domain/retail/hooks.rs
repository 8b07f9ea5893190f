//! Refinement and verification hooks for retail: what a customer knows about themself
//! (`user_facts`), what they ask of each call (`describe_request`: the sentences live in
//! `requests.toml`, this module computes their variables), what the agent must tell them
//! of a product (`required_outputs`; an order's status is declared in `tools.toml`, with
//! the argument values they could never know) and what the agent can look up once they
//! are identified (`customer_records`).
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
use crate::domain::kit::facts::{self, Identity};
use crate::domain::kit::templates::Templates;
use crate::domain::kit::text::{arg_list, arg_str, brand_name, count_word, dollars, join_and};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static REQUESTS: LazyLock<Templates> =
    LazyLock::new(|| Templates::builtin(include_str!("requests.toml")));

fn gift_cards(user: &User) -> usize {
    user.payment_methods
        .values()
        .filter(|m| m.is_gift_card())
        .count()
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
        "gift_card" if gift_cards(user) > 1 => format!(
            "your gift card with a balance of {}",
            dollars(method.balance_amount())
        ),
        "gift_card" => "your gift card".into(),
        other => format!("your {} payment method", other.replace('_', " ")),
    }
}

/// The literal strings a payment phrase reveals (what the verifier looks for).
fn payment_values(user: &User, method: &PaymentMethod) -> Vec<String> {
    match method.source.as_str() {
        "credit_card" => vec![method.last_four.clone().unwrap_or_default()],
        "paypal" => vec!["PayPal".into()],
        "gift_card" if gift_cards(user) > 1 => {
            vec!["gift card".into(), dollars(method.balance_amount())]
        }
        "gift_card" => vec!["gift card".into()],
        other => vec![other.replace('_', " ")],
    }
}

/// "deluxe edition and party theme": options in words, as a customer names them.
fn options_text(options: &BTreeMap<String, String>) -> String {
    let parts: Vec<String> = options.iter().map(|(k, v)| option_words(k, v)).collect();
    join_and(&parts)
}

/// One option in words: "deluxe edition", "1080p resolution"; a value that already ends in
/// its option's name stands alone ("3-season", not "3-season season").
pub(super) fn option_words(key: &str, value: &str) -> String {
    let key = key.replace('_', " ");
    if value.to_lowercase().ends_with(&key.to_lowercase()) {
        return value.to_string();
    }
    format!("{value} {key}")
}

/// "board game with deluxe edition and party theme".
fn item_text(item: &OrderItem) -> String {
    let name = item.name.to_lowercase();
    if item.options.is_empty() {
        name
    } else {
        format!("{name} with {}", options_text(&item.options))
    }
}

/// Distinct entries in first-seen order, with how often each occurs.
fn counted<T: PartialEq + Copy>(items: impl IntoIterator<Item = T>) -> Vec<(T, usize)> {
    let mut seen: Vec<(T, usize)> = Vec::new();
    for x in items {
        match seen.iter_mut().find(|(s, _)| *s == x) {
            Some((_, n)) => *n += 1,
            None => seen.push((x, 1)),
        }
    }
    seen
}

/// The items of `order` listed by `ids` (duplicates counted), described by name and options.
fn items_text(order: &Order, ids: &[&str]) -> String {
    let parts: Vec<String> = counted(ids.iter().copied())
        .into_iter()
        .map(|(id, n)| {
            let desc = order
                .items
                .iter()
                .find(|i| i.item_id == id)
                .map_or_else(|| "item".into(), item_text);
            match n {
                1 => format!("the {desc}"),
                n => format!("{} units of the {desc}", count_word(n)),
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
    let changed: Vec<String> = target
        .map(|v| {
            v.options
                .iter()
                .filter(|(k, val)| item.options.get(*k) != Some(*val))
                .map(|(k, val)| option_words(k, val))
                .collect()
        })
        .unwrap_or_default();
    let wanted = if changed.is_empty() {
        "another available variant".to_string()
    } else {
        format!("the one with {}", join_and(&changed))
    };
    (item_text(item), wanted)
}

/// "the board game (...) for the one with edition: classic and two units of the mug (...),
/// each for the one with color: red".
fn swaps_text(db: &RetailDb, order: &Order, old: &[&str], new: &[&str]) -> String {
    let parts: Vec<String> = counted(old.iter().copied().zip(new.iter().copied()))
        .into_iter()
        .map(|((o, n), count)| {
            let (item, wanted) = swap_parts(db, order, o, n);
            match count {
                1 => format!("the {item} for {wanted}"),
                c => format!("{} units of the {item}, each for {wanted}", count_word(c)),
            }
        })
        .collect();
    join_and(&parts)
}

/// "12 Elm Street, Apt 4, Austin, TX 78701, USA" from address fields: a call's arguments
/// or a stored address, which name them alike.
fn address_text(fields: &Value) -> String {
    let s = |k| arg_str(fields, k);
    let mut parts = vec![s("address1")];
    if !s("address2").trim().is_empty() {
        parts.push(s("address2"));
    }
    let state_zip = format!("{} {}", s("state"), s("zip"));
    parts.extend([s("city"), &state_zip, s("country")]);
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

/// An order output's status and first tracking number.
fn order_status_of(output: &str) -> Option<(String, Option<String>)> {
    let v: Value = serde_json::from_str(output).ok()?;
    let status = v.get("status")?.as_str()?.to_string();
    let tracking = v
        .pointer("/fulfillments/0/tracking_id/0")
        .and_then(Value::as_str)
        .map(str::to_string);
    Some((status, tracking))
}

/// The price of the cheapest available variant of a product output, as the tool printed it
/// without a trailing ".0" (so "$100" matches "100").
fn cheapest_available_price(output: &str) -> Option<String> {
    let v: Value = serde_json::from_str(output).ok()?;
    let (_, price) = v
        .get("variants")?
        .as_object()?
        .values()
        .filter(|x| x.get("available").and_then(Value::as_bool) == Some(true))
        .filter_map(|x| Some((x.get("price")?.as_f64()?, x.get("price")?)))
        .min_by(|a, b| a.0.total_cmp(&b.0))?;
    let s = price.to_string();
    Some(s.strip_suffix(".0").map_or(s.clone(), str::to_string))
}

pub fn user_facts(db: &RetailDb, user_id: &str) -> Vec<UserFact> {
    let Some(user) = db.users.get(user_id) else {
        return Vec::new();
    };
    let (first, last, zip) = (
        &user.name.first_name,
        &user.name.last_name,
        &user.address.zip,
    );
    let mut out = vec![
        facts::identity(Identity::Email(&user.email), &[user_id]),
        facts::fact(
            "name",
            facts::name_zip_text(first, last, zip, "default address"),
            vec![first.clone(), last.clone(), zip.clone()],
            &[user_id],
        ),
    ];
    for method in user.payment_methods.values() {
        let text = match method.source.as_str() {
            "gift_card" => format!(
                "You have a store gift card with a balance of {}.",
                dollars(method.balance_amount())
            ),
            _ => format!(
                "You have {} on file.",
                payment_phrase(user, method).replacen("your ", "a ", 1)
            ),
        };
        out.push(facts::fact(
            "payment",
            text,
            payment_values(user, method),
            &[&method.id],
        ));
    }
    let a = &user.address;
    let address = address_text(&serde_json::to_value(a).unwrap_or_default());
    out.push(facts::fact(
        "address",
        format!("Your default address is {address}."),
        vec![a.address1.clone(), a.city.clone(), a.zip.clone()],
        &[],
    ));
    for order in user.orders.iter().filter_map(|id| db.orders.get(id)) {
        let mut resolvable: Vec<&str> = Vec::new();
        for item in &order.items {
            let variants: Vec<&str> = match db.products.get(&item.product_id) {
                Some(p) => p.variants.keys().map(String::as_str).collect(),
                None => vec![item.item_id.as_str()],
            };
            for id in variants {
                if !resolvable.contains(&id) {
                    resolvable.push(id);
                }
            }
        }
        let text = format!(
            "Your order {} contains {}.",
            order.order_id,
            items_text(order, &order.item_ids())
        );
        out.push(facts::fact(
            "entity",
            text,
            vec![order.order_id.clone()],
            &resolvable,
        ));
    }
    out
}

pub fn describe_request(db: &RetailDb, tool: &str, args: &Value, output: &str) -> Option<String> {
    let order = db.orders.get(arg_str(args, "order_id"));
    let mut vars: BTreeMap<&str, String> = BTreeMap::new();
    let pay = |order: &Order| order_payment_phrase(db, order, arg_str(args, "payment_method_id"));
    let swaps = |order: &Order| {
        swaps_text(
            db,
            order,
            &arg_list(args, "item_ids"),
            &arg_list(args, "new_item_ids"),
        )
    };
    let mut table = tool.to_string();
    match tool {
        "cancel_pending_order" => {
            order?;
            let reason = match arg_str(args, "reason") {
                "ordered by mistake" => "because it was ordered by mistake".into(),
                "no longer needed" => "because it is no longer needed".into(),
                other => format!("({other})"),
            };
            vars.insert("reason", reason);
        }
        "modify_pending_order_address" | "modify_user_address" => {
            vars.insert("address", address_text(args));
        }
        "modify_pending_order_items" | "exchange_delivered_order_items" => {
            let order = order?;
            vars.insert("swaps", swaps(order));
            vars.insert("pay", pay(order));
        }
        "modify_pending_order_payment" => {
            vars.insert("pay", pay(order?));
        }
        "return_delivered_order_items" => {
            let order = order?;
            vars.insert("items", items_text(order, &arg_list(args, "item_ids")));
            vars.insert("pay", pay(order));
        }
        "get_order_details" => {
            let (_, tracking) = order_status_of(output)?;
            let case = if tracking.is_some() {
                "tracked"
            } else {
                "untracked"
            };
            table = format!("{tool}.{case}");
        }
        "get_product_details" => {
            let v: Value = serde_json::from_str(output).ok()?;
            vars.insert("name", v.get("name")?.as_str()?.to_lowercase());
        }
        _ => {}
    }
    // Tools without sentences (agent-side lookups and notes) give `None`.
    REQUESTS.render(&table, args, &vars)
}

/// What a product lookup tells: the price of its cheapest available variant.
pub fn required_outputs(_db: &RetailDb, tool: &str, _args: &Value, output: &str) -> Vec<String> {
    match tool {
        "get_product_details" => cheapest_available_price(output).into_iter().collect(),
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
