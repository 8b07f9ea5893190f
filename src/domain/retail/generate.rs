//! The deterministic synthetic retail database: 527 users, 50 products with 5-20 variant
//! items each, 1,075 orders, all drawn from a ChaCha8 stream seeded by the caller.
//!
//! Vocabulary (names, streets, cities, product catalogue) is our own, kept as data in
//! `vocabulary.toml`. The database is
//! internally consistent: every order's user lists it, every order item is a variant of its
//! product with the variant's price and options, every payment uses one of the owner's
//! payment methods, gift-card balances are non-negative, fulfilments match the status
//! (none while pending or cancelled), cancelled orders carry their refund and reason,
//! exchange/return requests name items of the order and valid replacements. Most users have
//! one to four orders (most have two); the first is usually pending and the second usually
//! delivered, so grounding finds both kinds for most customers. One user in forty is a
//! frequent shopper with ten orders, alternating pending and delivered, so multi-intent
//! traces that touch several orders (e.g. a return, then an exchange of another order, then
//! a cancellation) have a customer who can carry them: with about two orders per customer
//! on average, no ordinary customer can.
//!
//! Architecture invariant: generation is pure — same seed, same database; no clock, no I/O.

use super::db::{
    Address, CANCEL_REASONS, Fulfillment, Money, Name, Order, OrderItem, PaymentMethod, Product,
    RetailDb, Transaction, User, Variant, round2, status,
};
use crate::domain::kit::draw::{digits, pick};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

pub const USERS: usize = 527;
pub const ORDERS: usize = 1_075;

/// The vocabulary the generator draws from, kept as data in `vocabulary.toml`.
#[derive(Debug, Default, Deserialize)]
struct Vocabulary {
    first_names: Vec<String>,
    last_names: Vec<String>,
    streets: Vec<String>,
    /// (city, state, first three zip digits).
    cities: Vec<(String, String, String)>,
    card_brands: Vec<String>,
    products: Vec<CatalogueEntry>,
}

/// One catalogue entry: name, price range in dollars, option dimensions (name, values...).
#[derive(Debug, Deserialize)]
struct CatalogueEntry {
    name: String,
    price: (f64, f64),
    options: Vec<Vec<String>>,
}

/// The built-in vocabulary; a broken file is a bug the generator tests catch (an empty
/// vocabulary generates nothing), so this never panics at run time.
static VOCABULARY: LazyLock<Vocabulary> =
    LazyLock::new(|| toml::from_str(include_str!("vocabulary.toml")).unwrap_or_default());

/// A fresh id `prefix + n digits` not yet in `used` (first digit non-zero).
fn unique_id(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>, prefix: &str, n: usize) -> String {
    loop {
        let first = char::from(b'1' + rng.random_range(0..9u8));
        let id = format!("{prefix}{first}{}", digits(rng, n - 1));
        if used.insert(id.clone()) {
            return id;
        }
    }
}

fn money(rng: &mut ChaCha8Rng, low: f64, high: f64) -> f64 {
    let cents = rng.random_range((low * 100.0) as i64..=(high * 100.0) as i64);
    cents as f64 / 100.0
}

/// A random street address in one of our cities (also used by grounding for new addresses).
pub fn random_address(rng: &mut ChaCha8Rng) -> Address {
    let (city, state, zip3) = pick(rng, &VOCABULARY.cities);
    let number = rng.random_range(10..2000u32);
    let street = pick(rng, &VOCABULARY.streets);
    let address2 = match rng.random_range(0..3u8) {
        0 => String::new(),
        1 => format!("Apt {}", rng.random_range(1..500u32)),
        _ => format!("Suite {}", rng.random_range(100..999u32)),
    };
    Address {
        address1: format!("{number} {street}"),
        address2,
        city: city.clone(),
        country: "USA".into(),
        state: state.clone(),
        zip: format!("{zip3}{}", digits(rng, 2)),
    }
}

fn generate_products(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
) -> BTreeMap<String, Product> {
    let mut products = BTreeMap::new();
    for entry in &VOCABULARY.products {
        let (low, high) = entry.price;
        // (dimension, values): the first string names the dimension.
        let dims: Vec<(&String, &[String])> = entry
            .options
            .iter()
            .filter_map(|d| d.split_first())
            .filter(|(_, values)| !values.is_empty())
            .collect();
        let product_id = unique_id(rng, used, "", 10);
        let combos: usize = dims.iter().map(|(_, vals)| vals.len()).product();
        let wanted = rng.random_range(5..=20usize).min(combos);
        let mut chosen: BTreeSet<usize> = BTreeSet::new();
        while chosen.len() < wanted {
            chosen.insert(rng.random_range(0..combos));
        }
        let mut variants = BTreeMap::new();
        for (n, combo) in chosen.into_iter().enumerate() {
            let mut rest = combo;
            let mut options = BTreeMap::new();
            for (key, vals) in &dims {
                let value = vals.get(rest % vals.len()).cloned().unwrap_or_default();
                rest /= vals.len();
                options.insert(key.to_string(), value);
            }
            let item_id = unique_id(rng, used, "", 10);
            // The first two variants stay available so every product can be exchanged.
            let available = n < 2 || rng.random_bool(0.8);
            variants.insert(
                item_id.clone(),
                Variant {
                    item_id,
                    options,
                    available,
                    price: money(rng, low, high),
                },
            );
        }
        products.insert(
            product_id.clone(),
            Product {
                name: entry.name.clone(),
                product_id,
                variants,
            },
        );
    }
    products
}

fn generate_users(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>) -> BTreeMap<String, User> {
    let mut users = BTreeMap::new();
    let mut name_zip: BTreeSet<(String, String, String)> = BTreeSet::new();
    while users.len() < USERS {
        let first = pick(rng, &VOCABULARY.first_names);
        let last = pick(rng, &VOCABULARY.last_names);
        let address = random_address(rng);
        let key = (first.to_string(), last.to_string(), address.zip.clone());
        let suffix = digits(rng, 4);
        let user_id = format!("{}_{}_{suffix}", first.to_lowercase(), last.to_lowercase());
        // Name + zip must identify one user, and user ids must be unique.
        if name_zip.contains(&key) || users.contains_key(&user_id) {
            continue;
        }
        name_zip.insert(key);
        let email = format!(
            "{}.{}{suffix}@example.com",
            first.to_lowercase(),
            last.to_lowercase()
        );
        let mut sources: Vec<&str> = Vec::new();
        let count = match rng.random_range(0..100u8) {
            0..30 => 1,
            30..75 => 2,
            _ => 3,
        };
        while sources.len() < count {
            let source = *pick(rng, &["credit_card", "paypal", "gift_card"]);
            if !sources.contains(&source) {
                sources.push(source);
            }
        }
        let mut payment_methods = BTreeMap::new();
        for source in sources {
            let id = unique_id(rng, used, &format!("{source}_"), 7);
            let method = match source {
                "credit_card" => PaymentMethod {
                    source: source.into(),
                    brand: Some(pick(rng, &VOCABULARY.card_brands).clone()),
                    last_four: Some(digits(rng, 4)),
                    balance: None,
                    id: id.clone(),
                },
                "gift_card" => PaymentMethod {
                    source: source.into(),
                    brand: None,
                    last_four: None,
                    balance: Some(Money::from_f64(money(rng, 0.0, 500.0))),
                    id: id.clone(),
                },
                _ => PaymentMethod {
                    source: source.into(),
                    brand: None,
                    last_four: None,
                    balance: None,
                    id: id.clone(),
                },
            };
            payment_methods.insert(id, method);
        }
        users.insert(
            user_id,
            User {
                name: Name {
                    first_name: first.into(),
                    last_name: last.into(),
                },
                address,
                email,
                payment_methods,
                orders: Vec::new(),
            },
        );
    }
    users
}

/// How many orders each user gets: two each, then deterministic moves so counts range 1-4
/// and sum to [`ORDERS`].
fn order_counts(rng: &mut ChaCha8Rng, users: usize) -> Vec<usize> {
    let mut counts = vec![2usize; users];
    let mut total = 2 * users;
    while total < ORDERS {
        let i = rng.random_range(0..users);
        if counts[i] < 4 {
            counts[i] += 1;
            total += 1;
        }
    }
    while total > ORDERS {
        let i = rng.random_range(0..users);
        if counts[i] > 1 {
            counts[i] -= 1;
            total -= 1;
        }
    }
    for _ in 0..users / 5 {
        let from = rng.random_range(0..users);
        let to = rng.random_range(0..users);
        if counts[from] > 1 && counts[to] < 4 && from != to {
            counts[from] -= 1;
            counts[to] += 1;
        }
    }
    // Frequent shoppers: a few customers hold many orders (drawn from customers with two or
    // more), so multi-intent tasks that touch several orders have someone to be about.
    let mut frequent = 0;
    while frequent < users / FREQUENT_SHOPPER_SHARE {
        let i = rng.random_range(0..users);
        if counts[i] >= FREQUENT_SHOPPER_ORDERS {
            continue;
        }
        let mut guard = 0;
        while counts[i] < FREQUENT_SHOPPER_ORDERS && guard < 10 * users {
            guard += 1;
            let from = rng.random_range(0..users);
            if from != i && counts[from] > 1 && counts[from] < FREQUENT_SHOPPER_ORDERS {
                counts[from] -= 1;
                counts[i] += 1;
            }
        }
        frequent += 1;
    }
    counts
}

/// One customer in this many is a frequent shopper with [`FREQUENT_SHOPPER_ORDERS`] orders.
const FREQUENT_SHOPPER_SHARE: usize = 40;
pub const FREQUENT_SHOPPER_ORDERS: usize = 10;

fn pick_status(rng: &mut ChaCha8Rng, nth: usize) -> &'static str {
    let favoured = match nth {
        0 | 3 | 4 | 6 | 8 => Some(status::PENDING),
        1 | 2 | 5 | 7 | 9 => Some(status::DELIVERED),
        _ => None,
    };
    if let Some(s) = favoured
        && rng.random_bool(0.85)
    {
        return s;
    }
    match rng.random_range(0..100u8) {
        0..15 => status::PENDING,
        15..30 => status::DELIVERED,
        30..60 => status::PROCESSED,
        60..85 => status::CANCELLED,
        85..93 => status::EXCHANGE_REQUESTED,
        _ => status::RETURN_REQUESTED,
    }
}

fn make_order(
    rng: &mut ChaCha8Rng,
    order_id: String,
    user_id: &str,
    user: &User,
    products: &[&Product],
    wanted_status: &str,
    used: &mut BTreeSet<String>,
) -> Order {
    let n_items = rng.random_range(1..=5usize);
    let mut items = Vec::with_capacity(n_items);
    for _ in 0..n_items {
        let product = *pick(rng, products);
        let variants: Vec<&Variant> = product.variants.values().collect();
        let variant = *pick(rng, &variants);
        items.push(OrderItem {
            name: product.name.clone(),
            product_id: product.product_id.clone(),
            item_id: variant.item_id.clone(),
            price: variant.price,
            options: variant.options.clone(),
        });
    }
    let total = round2(items.iter().map(|i| i.price).sum());
    let methods: Vec<&PaymentMethod> = user.payment_methods.values().collect();
    let method = *pick(rng, &methods);
    let address = if rng.random_bool(0.9) {
        user.address.clone()
    } else {
        random_address(rng)
    };
    let mut order = Order {
        order_id,
        user_id: user_id.to_string(),
        address,
        items,
        fulfillments: Vec::new(),
        status: status::PENDING.into(),
        payment_history: vec![Transaction {
            transaction_type: "payment".into(),
            amount: total,
            payment_method_id: method.id.clone(),
        }],
        cancel_reason: None,
        exchange_items: None,
        exchange_new_items: None,
        exchange_payment_method_id: None,
        exchange_price_difference: None,
        return_items: None,
        return_payment_method_id: None,
    };
    match wanted_status {
        status::PENDING => {}
        status::CANCELLED => {
            order.status = status::CANCELLED.into();
            order.cancel_reason = Some(pick(rng, &CANCEL_REASONS).to_string());
            order.payment_history.push(Transaction {
                transaction_type: "refund".into(),
                amount: total,
                payment_method_id: method.id.clone(),
            });
        }
        shipped => {
            order.fulfillments.push(Fulfillment {
                tracking_id: vec![unique_id(rng, used, "", 12)],
                item_ids: order.items.iter().map(|i| i.item_id.clone()).collect(),
            });
            order.status = shipped.into();
            if shipped == status::EXCHANGE_REQUESTED
                && !request_exchange(rng, &mut order, user, products)
            {
                order.status = status::DELIVERED.into();
            }
            if shipped == status::RETURN_REQUESTED {
                let item = pick(rng, &order.items).item_id.clone();
                order.return_items = Some(vec![item]);
                order.return_payment_method_id = Some(method.id.clone());
            }
        }
    }
    order
}

/// Fill the exchange fields with one item swapped for another available variant; false
/// when no item of the order has one (the caller then leaves the order delivered).
fn request_exchange(
    rng: &mut ChaCha8Rng,
    order: &mut Order,
    user: &User,
    products: &[&Product],
) -> bool {
    for item in &order.items {
        let Some(product) = products.iter().find(|p| p.product_id == item.product_id) else {
            continue;
        };
        let options = product.alternatives(&item.item_id);
        if options.is_empty() {
            continue;
        }
        let new = *pick(rng, &options);
        let diff = round2(new.price - item.price);
        let method = user
            .payment_methods
            .values()
            .find(|m| !m.is_gift_card() || m.balance_amount() >= diff);
        let Some(method) = method else { continue };
        order.exchange_items = Some(vec![item.item_id.clone()]);
        order.exchange_new_items = Some(vec![new.item_id.clone()]);
        order.exchange_payment_method_id = Some(method.id.clone());
        order.exchange_price_difference = Some(diff);
        return true;
    }
    false
}

/// The synthetic database for `seed`.
pub fn generate(seed: u64) -> RetailDb {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut used = BTreeSet::new();
    let products = generate_products(&mut rng, &mut used);
    let mut users = generate_users(&mut rng, &mut used);
    let product_list: Vec<&Product> = products.values().collect();
    let counts = order_counts(&mut rng, users.len());
    let mut orders = BTreeMap::new();
    let user_ids: Vec<String> = users.keys().cloned().collect();
    for (user_id, count) in user_ids.iter().zip(counts) {
        let Some(user) = users.get(user_id) else {
            continue;
        };
        let mut ids = Vec::with_capacity(count);
        for nth in 0..count {
            let order_id = unique_id(&mut rng, &mut used, "#W", 7);
            let wanted = pick_status(&mut rng, nth);
            let order = make_order(
                &mut rng,
                order_id.clone(),
                user_id,
                user,
                &product_list,
                wanted,
                &mut used,
            );
            ids.push(order_id.clone());
            orders.insert(order_id, order);
        }
        if let Some(user) = users.get_mut(user_id) {
            user.orders = ids;
        }
    }
    RetailDb::new(users, products, orders)
}
