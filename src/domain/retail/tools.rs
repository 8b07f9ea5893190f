//! The sixteen retail tools: specs (name, kind, description, JSON Schema) and behaviour.
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
use crate::domain::kit::calc;
use crate::domain::kit::schema::{object, one_of, string, string_list, tool, with_intent};
use crate::domain::{Args, Intent, Tool, ToolKind};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// All tools, in the order they are listed to a model.
pub fn all() -> &'static [Tool<RetailDb>] {
    static TOOLS: LazyLock<Vec<Tool<RetailDb>>> = LazyLock::new(build);
    &TOOLS
}

const ORDER_ID: &str = "Order id including its leading '#', e.g. '#W4218837'.";
const PAYMENT_ID: &str = "Id of one of the customer's stored payment methods (e.g. 'gift_card_3310247' or 'credit_card_5501864') used to pay or receive the price difference; look it up in the user or order details.";
const ITEM_IDS: &str =
    "Item ids in the order to change, e.g. '6021489373'; repeat an id to change several units.";
const NEW_ITEM_IDS: &str = "Replacement item ids, position by position matching item_ids; each must be an available variant of the same product.";

/// An address-changing tool's schema: the id argument, then the six address fields.
fn address_schema(id_key: &str, id_description: &str) -> Value {
    let fields = [
        (
            "address1",
            "Street line of the address, e.g. '48 Juniper Lane'.",
        ),
        (
            "address2",
            "Second address line such as a unit or suite, or '' when none.",
        ),
        ("city", "City, e.g. 'Portland'."),
        ("state", "State abbreviation, e.g. 'OR'."),
        ("country", "Country, e.g. 'USA'."),
        ("zip", "Postal code, e.g. '97205'."),
    ];
    let mut props = vec![(id_key, string(id_description))];
    props.extend(fields.iter().map(|(k, d)| (*k, string(d))));
    let required: Vec<&str> = props.iter().map(|(k, _)| *k).collect();
    object(&props, &required)
}

/// modify-items and exchange share one argument shape.
fn swap_schema(item_ids: &str) -> Value {
    object(
        &[
            ("order_id", string(ORDER_ID)),
            ("item_ids", string_list(item_ids)),
            ("new_item_ids", string_list(NEW_ITEM_IDS)),
            ("payment_method_id", string(PAYMENT_ID)),
        ],
        &["order_id", "item_ids", "new_item_ids", "payment_method_id"],
    )
}

fn build() -> Vec<Tool<RetailDb>> {
    use ToolKind::{Read, Write};
    vec![
        tool(
            "calculate",
            Read,
            "Evaluate an arithmetic expression and return the result rounded to two decimals. Only digits, + - * /, parentheses, decimal points and spaces are allowed.",
            object(
                &[(
                    "expression",
                    string("Arithmetic to evaluate, e.g. '129.99 + 24.5 - 10'."),
                )],
                &["expression"],
            ),
            |_, a| calc::evaluate(a.str("expression")?),
        ),
        tool(
            "cancel_pending_order",
            Write,
            "Cancel an order whose status is 'pending'; orders already processed or delivered cannot be cancelled. State the order and reason to the customer and get an explicit yes first. Every payment is refunded: gift-card payments go back to the card at once, other methods within 5-7 business days. Returns the updated order.",
            object(
                &[
                    ("order_id", string(ORDER_ID)),
                    (
                        "reason",
                        one_of(
                            &CANCEL_REASONS,
                            "Why the customer cancels: 'no longer needed' or 'ordered by mistake'.",
                        ),
                    ),
                ],
                &["order_id", "reason"],
            ),
            cancel_pending_order,
        ),
        tool(
            "exchange_delivered_order_items",
            Write,
            "Request an exchange of items of a delivered order for other variants of the same products. An order takes one exchange request, so gather every item into one call, explain the exchange and get an explicit yes. Returns the updated order.",
            swap_schema(
                "Item ids in the order to exchange, e.g. '6021489373'; repeat an id to exchange several units.",
            ),
            exchange_delivered_order_items,
        ),
        tool(
            "find_user_id_by_email",
            Read,
            "Look up a customer's user id from their email address (case-insensitive). Returns an error when no customer has that email.",
            object(
                &[(
                    "email",
                    string("The customer's email, e.g. 'jane.roe1234@example.com'."),
                )],
                &["email"],
            ),
            find_user_id_by_email,
        ),
        tool(
            "find_user_id_by_name_zip",
            Read,
            "Look up a customer's user id from first name, last name and the zip code of their default address. Prefer the email lookup; use this one when the customer cannot give an email or it is not found.",
            object(
                &[
                    ("first_name", string("First name, e.g. 'Jane'.")),
                    ("last_name", string("Last name, e.g. 'Roe'.")),
                    (
                        "zip",
                        string("Zip code of the default address, e.g. '97205'."),
                    ),
                ],
                &["first_name", "last_name", "zip"],
            ),
            find_user_id_by_name_zip,
        ),
        tool(
            "get_order_details",
            Read,
            "Show an order: its items, shipping address, status, fulfilments and payment history.",
            object(&[("order_id", string(ORDER_ID))], &["order_id"]),
            |db, a| to_json(db.orders.get(a.str("order_id")?).ok_or("order not found")?),
        ),
        tool(
            "get_product_details",
            Read,
            "Show a product and all of its variant items with their options, price and availability.",
            object(
                &[(
                    "product_id",
                    string(
                        "Product id, e.g. '4402178839'. Product ids and item ids are different things.",
                    ),
                )],
                &["product_id"],
            ),
            |db, a| {
                to_json(
                    db.products
                        .get(a.str("product_id")?)
                        .ok_or("product not found")?,
                )
            },
        ),
        tool(
            "get_user_details",
            Read,
            "Show a customer's profile: name, email, default address, stored payment methods and order ids.",
            object(
                &[("user_id", string("User id, e.g. 'jane_roe_1234'."))],
                &["user_id"],
            ),
            |db, a| to_json(db.users.get(a.str("user_id")?).ok_or("user not found")?),
        ),
        tool(
            "list_all_product_types",
            Read,
            "List every product type the store sells as a map from product name to product id.",
            object(&[], &[]),
            list_all_product_types,
        ),
        tool(
            "modify_pending_order_address",
            Write,
            "Change the shipping address of an order whose status is 'pending'. Explain the change and get an explicit yes first. Returns the updated order.",
            address_schema("order_id", ORDER_ID),
            modify_pending_order_address,
        ),
        tool(
            "modify_pending_order_items",
            Write,
            "Swap items of a pending order for other available variants of the same products, paying or refunding the price difference through the given payment method. Collect every item the customer wants changed into one call (the policy says whether the order can be changed again afterwards), explain the change and get an explicit yes. Returns the updated order.",
            swap_schema(ITEM_IDS),
            modify_pending_order_items,
        ),
        // Switching how an order is paid is a change to the order, not a payment.
        with_intent(
            tool(
                "modify_pending_order_payment",
                Write,
                "Move the payment of a pending order to a different stored payment method; the old method is refunded. A gift card must cover the whole order total. Explain the change and get an explicit yes first. Returns the updated order.",
                object(
                    &[
                        ("order_id", string(ORDER_ID)),
                        (
                            "payment_method_id",
                            string(
                                "Id of the stored payment method that should pay for the order instead, e.g. 'paypal_7215409'.",
                            ),
                        ),
                    ],
                    &["order_id", "payment_method_id"],
                ),
                modify_pending_order_payment,
            ),
            Intent::Change,
        ),
        tool(
            "modify_user_address",
            Write,
            "Replace a customer's default address. Explain the change and get an explicit yes first. Returns the updated profile.",
            address_schema("user_id", "User id, e.g. 'jane_roe_1234'."),
            modify_user_address,
        ),
        tool(
            "return_delivered_order_items",
            Write,
            "Request a return of some items of a delivered order; the order is marked as return requested and the customer is emailed return instructions. The refund goes to the original payment method or to one of the customer's gift cards. Explain the return and get an explicit yes first. Returns the updated order.",
            object(
                &[
                    ("order_id", string(ORDER_ID)),
                    (
                        "item_ids",
                        string_list(
                            "Item ids in the order to return, e.g. '6021489373'; repeat an id to return several units.",
                        ),
                    ),
                    (
                        "payment_method_id",
                        string(
                            "Payment method to receive the refund: the order's original method or a gift card of the customer.",
                        ),
                    ),
                ],
                &["order_id", "item_ids", "payment_method_id"],
            ),
            return_delivered_order_items,
        ),
        tool(
            "think",
            Read,
            "Write down a private line of reasoning. Nothing is looked up and nothing changes; use it to plan multi-step work or keep notes.",
            object(&[("thought", string("The note to record."))], &["thought"]),
            |_, a| a.str("thought").map(|_| String::new()),
        ),
        tool(
            "transfer_to_human_agents",
            Read,
            "Hand the conversation to a human agent together with a summary of the issue. Use it only when the customer explicitly asks for a person or the request cannot be handled with the other tools.",
            object(
                &[(
                    "summary",
                    string("Short summary of the customer's issue for the human agent."),
                )],
                &["summary"],
            ),
            |_, a| a.str("summary").map(|_| "Transfer successful".into()),
        ),
    ]
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
    let email = args.str("email")?.to_lowercase();
    db.users
        .iter()
        .find(|(_, u)| u.email.to_lowercase() == email)
        .map(|(id, _)| id.to_string())
        .ok_or_else(|| "user not found".to_string())
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

/// The order, which must exist and have exactly `required` as its status.
fn order_in_status<'a>(
    db: &'a RetailDb,
    order_id: &str,
    required: &str,
    wrong_status: &str,
) -> Result<&'a Order, String> {
    let order = db.orders.get(order_id).ok_or("order not found")?;
    if order.status != required {
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
    let order = order_in_status(
        db,
        order_id,
        status::PENDING,
        "non-pending order cannot be cancelled",
    )?;
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
    order_in_status(
        db,
        order_id,
        status::PENDING,
        "non-pending order cannot be modified",
    )?;
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
    let order = order_in_status(
        db,
        order_id,
        status::PENDING,
        "non-pending order cannot be modified",
    )?;
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
    let order = order_in_status(
        db,
        order_id,
        status::PENDING,
        "non-pending order cannot be modified",
    )?;
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
