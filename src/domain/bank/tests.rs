//! Bank tests: what the conformance suite cannot know — each tool's rules and error strings
//! in the reference's order, transaction ids and the simulation clock, the departures
//! (validated methods, kept debit legs, no overwritten beneficiary), the generators' scales
//! and distributions, the policy rules and the grounding proposals (loan payments of
//! exactly the installment due).

use super::db::{BankDb, BeneficiaryName};
use super::generate::{SCALES, generate};
use super::tools::CLOCK;
use crate::domain::Hooks;
use crate::domain::{Database, Environment, GroundingContext, Split, ToolKind};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

const SEED: u64 = 7;

fn eval() -> BankDb {
    generate(SEED, Split::Eval)
}

fn call(db: &mut BankDb, tool: &str, args: Value) -> (bool, String) {
    let out = Environment::invoke(db, tool, &args);
    (!out.is_error, out.text)
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// A client with two active, non-credit accounts in one currency, funded.
fn transfer_pair(db: &BankDb) -> (String, String, String) {
    for c in db.clients.in_order() {
        let ok: Vec<_> = c
            .accounts
            .values()
            .filter(|a| a.is_active() && a.kind != "credit" && a.balance.available > 100.0)
            .collect();
        for a in &ok {
            for b in &ok {
                if a.account_id != b.account_id && a.currency == b.currency {
                    return (
                        c.client_id.clone(),
                        a.account_id.clone(),
                        b.account_id.clone(),
                    );
                }
            }
        }
    }
    panic!("no client with two matching accounts");
}

#[test]
fn the_paper_split_and_the_reference_names() {
    let tools = BankDb::tools();
    let reads = tools
        .iter()
        .filter(|t| t.spec.kind == ToolKind::Read)
        .count();
    assert_eq!((tools.len(), reads), (22, 13));
    for name in [
        "find_client_id_by_email",
        "list_client_accounts",
        "search_transactions",
        "initiate_internal_transfer",
        "add_beneficiary",
        "verify_beneficiary",
        "initiate_transfer_to_beneficiary",
        "make_loan_payment",
        "calculate",
        "transfer_to_human_agents",
        "think",
    ] {
        assert!(tools.iter().any(|t| t.spec.name == name), "{name}");
    }
    // add_beneficiary takes the reference's 22 arguments; only the method has a default.
    let add = tools
        .iter()
        .find(|t| t.spec.name == "add_beneficiary")
        .unwrap();
    let props = add.spec.parameters["properties"].as_object().unwrap().len();
    let required = add.spec.parameters["required"].as_array().unwrap().len();
    assert_eq!((props, required), (22, 21));
}

#[test]
fn generators_have_the_scales_and_the_references_shapes() {
    for (split, scale) in [(Split::Eval, SCALES.eval), (Split::Train, SCALES.train)] {
        let db = generate(SEED, split);
        assert_eq!(db.clients.len(), scale.clients);
        assert_eq!(db.loans.len(), scale.loans);
        assert_eq!(db.beneficiaries.len(), scale.beneficiaries);
        assert_eq!(db.transactions.len(), scale.transactions);
        let mut emails = std::collections::BTreeSet::new();
        let (mut accounts, mut single, mut frozen, mut credit) = (0, 0, 0, 0);
        for (id, c) in db.clients.iter() {
            assert!(emails.insert(c.contact.email.to_lowercase()), "{id}");
            let masks: std::collections::BTreeSet<_> = c
                .accounts
                .values()
                .map(|a| a.account_number_masked.clone())
                .collect();
            assert_eq!(masks.len(), c.accounts.len(), "{id}: masks repeat");
            accounts += c.accounts.len();
            single += usize::from(c.accounts.len() == 1);
            frozen += c.accounts.values().filter(|a| a.status == "frozen").count();
            credit += c.accounts.values().filter(|a| a.kind == "credit").count();
            for l in &c.loan_ids {
                assert_eq!(db.loans.get(l).unwrap().client_id, *id);
            }
            for b in &c.beneficiary_ids {
                let b = db.beneficiaries.get(b).unwrap();
                assert_eq!(b.client_id, *id);
                assert!(
                    b.allowed_from_account_ids
                        .iter()
                        .all(|a| c.accounts.contains_key(a))
                );
            }
        }
        let share = |n: usize, of: usize| n as f64 / of as f64;
        assert!(
            (0.45..0.70).contains(&share(single, scale.clients)),
            "{single}"
        );
        // A fifth frozen (the reference: about a tenth): unfreezing has something to do.
        assert!((0.12..0.28).contains(&share(frozen, accounts)), "{frozen}");
        assert!((0.05..0.25).contains(&share(credit, accounts)), "{credit}");
        let verified = db
            .beneficiaries
            .iter()
            .filter(|(_, b)| b.verification.status == "verified")
            .count();
        assert!((0.45..0.80).contains(&share(verified, scale.beneficiaries)));
        // Money is in whole cents (Python's round(x, 2) leaves it alone).
        for (_, t) in db.transactions.iter() {
            assert!(((t.amount * 100.0).round() - t.amount * 100.0).abs() < 1e-6);
            assert!(!t.transaction_id.starts_with("tx_"));
        }
        for (_, l) in db.loans.iter() {
            assert!(l.next_due().is_some());
        }
    }
}

#[test]
fn internal_transfers_check_in_order_and_keep_both_legs() {
    let mut db = eval();
    let (client, from, to) = transfer_pair(&db);
    let before = Database::state_hash(&db);
    let args = |amount: f64| json!({"client_id": client, "from_account_id": from, "to_account_id": to, "amount": amount});
    assert_eq!(
        call(&mut db, "initiate_internal_transfer", args(0.0)).1,
        "Error: Amount must be greater than zero"
    );
    let other = db
        .clients
        .in_order()
        .find(|c| c.client_id != client)
        .and_then(|c| c.accounts.keys().next().map(str::to_string))
        .unwrap();
    assert_eq!(
        call(
            &mut db,
            "initiate_internal_transfer",
            json!({"client_id": client, "from_account_id": from, "to_account_id": other, "amount": 1})
        )
        .1,
        "Error: Both accounts must belong to the same client"
    );
    assert_eq!(
        call(&mut db, "initiate_internal_transfer", args(1e12)).1,
        "Error: Insufficient available balance"
    );
    assert_eq!(Database::state_hash(&db), before, "refusals change nothing");
    let avail = db
        .clients
        .get(&client)
        .unwrap()
        .accounts
        .get(&from)
        .unwrap()
        .balance
        .available;
    let n = db.transactions.len();
    let (ok, out) = call(&mut db, "initiate_internal_transfer", args(12.345));
    assert!(ok, "{out}");
    let legs = parse(&out);
    let (debit, credit) = (&legs[0], &legs[1]);
    assert_eq!(debit["transaction_id"], format!("tx_{:07}", n + 1));
    assert_eq!(credit["transaction_id"], format!("tx_{:07}", n + 2));
    assert_eq!(debit["related_transaction_id"], credit["transaction_id"]);
    assert_eq!(credit["related_transaction_id"], debit["transaction_id"]);
    assert_eq!(debit["amount"], 12.35);
    assert_eq!(debit["timestamp"], CLOCK.utc_stamp());
    assert_eq!(
        credit["description"],
        format!("Internal transfer from {from}")
    );
    assert_eq!(db.transactions.len(), n + 2);
    let acc = db
        .clients
        .get(&client)
        .unwrap()
        .accounts
        .get(&from)
        .unwrap();
    assert_eq!(
        acc.balance.available,
        crate::domain::kit::calc::py_round(avail - 12.345, 2)
    );
    assert_eq!(debit["balance_after"], json!(acc.balance.current));
    // Both legs show up in the accounts' recent transactions, newest first.
    let recent = parse(
        &call(
            &mut db,
            "get_recent_transactions",
            json!({"account_id": from}),
        )
        .1,
    );
    assert_eq!(recent[0]["transaction_id"], debit["transaction_id"]);
    assert_eq!(
        call(
            &mut db,
            "get_recent_transactions",
            json!({"account_id": from, "limit": -1})
        )
        .1,
        "[]"
    );
}

#[test]
fn a_credit_source_and_mixed_currencies_are_refused() {
    let mut db = eval();
    let found = db.clients.in_order().find_map(|c| {
        let credit = c
            .accounts
            .values()
            .find(|a| a.kind == "credit" && a.is_active())?;
        let other = c
            .accounts
            .values()
            .find(|a| a.account_id != credit.account_id && a.is_active())?;
        Some((
            c.client_id.clone(),
            credit.account_id.clone(),
            other.account_id.clone(),
        ))
    });
    let (client, credit, other) = found.expect("a client with an active credit account");
    let out = call(
        &mut db,
        "initiate_internal_transfer",
        json!({"client_id": client, "from_account_id": credit, "to_account_id": other, "amount": 1}),
    );
    assert_eq!(
        out.1,
        "Error: Transfers from a credit account are not supported"
    );
}

/// The client's first active, verified beneficiary with an allowed, funded account.
fn payee(db: &BankDb) -> (String, String, String) {
    for (_, b) in db.beneficiaries.iter() {
        let c = db.clients.get(&b.client_id).unwrap();
        if b.status != "active" || b.verification.status != "verified" {
            continue;
        }
        if let Some(a) = b.allowed_from_account_ids.iter().find(|a| {
            c.accounts
                .get(a)
                .is_some_and(|x| x.is_active() && x.balance.available > 10.0)
        }) {
            return (b.client_id.clone(), a.clone(), b.beneficiary_id.clone());
        }
    }
    panic!("no payable beneficiary");
}

#[test]
fn methods_outside_the_enum_are_refused_before_any_debit() {
    let mut db = eval();
    let before = Database::state_hash(&db);
    let (client, from, bid) = payee(&db);
    let out = call(
        &mut db,
        "initiate_transfer_to_beneficiary",
        json!({"client_id": client, "from_account_id": from, "beneficiary_id": bid, "amount": 1, "method": "Barter"}),
    );
    assert!(
        out.1
            .starts_with("Error: Invalid transaction method 'Barter'"),
        "{}",
        out.1
    );
    let loan = db.clients.get(&client).unwrap().loan_ids.first().cloned();
    if let Some(loan) = loan {
        let out = call(
            &mut db,
            "make_loan_payment",
            json!({"client_id": client, "loan_id": loan, "from_account_id": from, "amount": 1, "method": "Barter"}),
        );
        assert!(
            out.1.starts_with("Error: Invalid transaction method"),
            "{}",
            out.1
        );
    }
    let out = call(
        &mut db,
        "verify_beneficiary",
        json!({"client_id": client, "beneficiary_id": bid, "method": "telepathy"}),
    );
    assert!(
        out.1.starts_with("Error: Invalid verification method"),
        "{}",
        out.1
    );
    assert_eq!(Database::state_hash(&db), before);
    // The per-transfer limit and ownership, in the reference's words.
    let limit = db
        .beneficiaries
        .get(&bid)
        .unwrap()
        .transfer_limits
        .per_transfer_limit;
    let out = call(
        &mut db,
        "initiate_transfer_to_beneficiary",
        json!({"client_id": client, "from_account_id": from, "beneficiary_id": bid, "amount": limit + 1.0}),
    );
    assert!(
        out.1 == "Error: Amount exceeds per-transfer limit for beneficiary"
            || out.1 == "Error: Insufficient available balance",
        "{}",
        out.1
    );
    let stranger = db
        .clients
        .in_order()
        .find(|c| !c.beneficiary_ids.contains(&bid) && !c.accounts.is_empty())
        .unwrap();
    let (sid, sacc) = (
        stranger.client_id.clone(),
        stranger.accounts.keys().next().unwrap().to_string(),
    );
    let out = call(
        &mut db,
        "verify_beneficiary",
        json!({"client_id": sid, "beneficiary_id": bid}),
    );
    assert_eq!(out.1, "Error: Beneficiary not owned by this client");
    let out = call(
        &mut db,
        "make_loan_payment",
        json!({"client_id": client, "loan_id": "nope", "from_account_id": sacc, "amount": 1}),
    );
    assert_eq!(out.1, "Error: Source account must belong to the client");
}

#[test]
fn add_beneficiary_refuses_an_existing_id_and_starts_pending() {
    let mut db = eval();
    let (client, from, existing) = payee(&db);
    let mut args = json!({"client_id": client, "beneficiary_id": existing,
        "beneficiary_type": "business", "display_name": "Acme", "first_name": null,
        "last_name": null, "business_name": "Acme", "bank_name": "Test Bank",
        "account_number_masked": "****0001", "routing_number": "123456789", "iban": null,
        "swift_bic": null, "address1": "1 Main St", "address2": "", "city": "Town",
        "state": "ST", "zip": "00001", "country": "Nowhere",
        "allowed_from_account_ids": [from], "per_transfer_limit": 10, "daily_limit": 20});
    let before = Database::state_hash(&db);
    assert_eq!(
        call(&mut db, "add_beneficiary", args.clone()).1,
        format!("Error: Beneficiary {existing} already exists")
    );
    args["beneficiary_type"] = json!("robot");
    args["beneficiary_id"] = json!("NEW0001");
    assert!(
        call(&mut db, "add_beneficiary", args.clone())
            .1
            .contains("Invalid beneficiary type")
    );
    assert_eq!(Database::state_hash(&db), before);
    args["beneficiary_type"] = json!("business");
    let (ok, out) = call(&mut db, "add_beneficiary", args);
    assert!(ok, "{out}");
    let b = parse(&out);
    assert_eq!(
        b["verification"],
        json!({"status": "pending", "method": "document", "verified_at": null})
    );
    assert_eq!(b["created_at"], CLOCK.utc_stamp());
    assert_eq!(b["transfer_limits"]["per_transfer_limit"], 10.0);
    assert!(
        db.clients
            .get(&client)
            .unwrap()
            .beneficiary_ids
            .contains(&"NEW0001".to_string())
    );
    let listing = parse(
        &call(
            &mut db,
            "list_client_beneficiaries",
            json!({"client_id": client}),
        )
        .1,
    );
    assert_eq!(listing["NEW0001"], "Acme");
}

#[test]
fn listing_names_fall_back_like_the_reference() {
    let name =
        |d: Option<&str>, f: Option<&str>, l: Option<&str>, b: Option<&str>| BeneficiaryName {
            display_name: d.map(String::from),
            first_name: f.map(String::from),
            last_name: l.map(String::from),
            business_name: b.map(String::from),
        };
    assert_eq!(name(Some(""), None, None, Some("Co")).listing(), "Co");
    assert_eq!(name(None, Some("Ada"), Some(""), None).listing(), "Ada");
    assert_eq!(
        name(None, Some("Ada"), Some("Quill"), None).listing(),
        "Ada Quill"
    );
    assert_eq!(
        name(Some(""), None, None, None).listing(),
        "Unnamed Beneficiary"
    );
}

#[test]
fn cards_and_accounts_change_only_in_manageable_states() {
    let mut db = eval();
    let find = |db: &BankDb, status: &str| {
        db.clients
            .in_order()
            .flat_map(|c| c.cards.values())
            .find(|c| c.status == status)
            .map(|c| c.card_id.clone())
    };
    let expired = find(&db, "expired").expect("an expired card");
    assert_eq!(
        call(
            &mut db,
            "freeze_card",
            json!({"card_id": expired, "reason": "lost"})
        )
        .1,
        "Error: Card not in a manageable state"
    );
    let active = find(&db, "active").unwrap();
    for _ in 0..2 {
        let (ok, out) = call(
            &mut db,
            "freeze_card",
            json!({"card_id": active, "reason": "lost"}),
        );
        assert!(ok);
        assert_eq!(parse(&out)["status"], "blocked");
    }
    // Policy: freezing a blocked card changes nothing, so it is refused.
    assert_eq!(
        Hooks::check_policy(
            &db,
            "freeze_card",
            &json!({"card_id": active, "reason": "x"})
        )
        .unwrap_err()
        .rule,
        "card_is_active"
    );
    let closed = db
        .clients
        .in_order()
        .flat_map(|c| c.accounts.values())
        .find(|a| a.status == "closed")
        .map(|a| a.account_id.clone());
    if let Some(closed) = closed {
        assert_eq!(
            call(
                &mut db,
                "freeze_account",
                json!({"account_id": closed, "reason": "x"})
            )
            .1,
            "Error: Account is closed and cannot be frozen"
        );
        assert_eq!(
            call(&mut db, "unfreeze_account", json!({"account_id": closed})).1,
            "Error: Account is closed and cannot be unfrozen"
        );
    }
}

#[test]
fn policy_rules_name_what_the_tools_let_through() {
    let db = eval();
    let (client, from, _) = transfer_pair(&db);
    let same =
        json!({"client_id": client, "from_account_id": from, "to_account_id": from, "amount": 5});
    assert_eq!(
        Hooks::check_policy(&db, "initiate_internal_transfer", &same)
            .unwrap_err()
            .rule,
        "two_different_accounts"
    );
    let odd = json!({"client_id": client, "from_account_id": from, "to_account_id": "x", "amount": 5.001});
    assert_eq!(
        Hooks::check_policy(&db, "initiate_internal_transfer", &odd)
            .unwrap_err()
            .rule,
        "amount_in_cents"
    );
    let n = db.clients.get(&client).unwrap().beneficiary_ids.len();
    let want = format!("{client}-B{:02}", n + 1);
    assert_eq!(
        super::policy::new_beneficiary_id(&db, &client),
        Some(want.clone())
    );
    let add =
        json!({"client_id": client, "beneficiary_id": "WRONG", "beneficiary_type": "individual"});
    assert_eq!(
        Hooks::check_policy(&db, "add_beneficiary", &add)
            .unwrap_err()
            .rule,
        "beneficiary_id_as_prescribed"
    );
    // The next payee ids are resolvable from the client's identity.
    let facts = Hooks::user_facts(&db, &client);
    assert_eq!(facts[0].kind, "identity");
    assert!(facts[0].ids.contains(&want));
}

#[test]
fn loan_payment_proposals_pay_exactly_the_installment_due() {
    let db = eval();
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let (mut seen, mut followed) = (0, 0);
    for user in Hooks::customers(&db).iter().take(60) {
        let ctx = GroundingContext::for_user(user);
        for args in Hooks::propose_calls(&db, "make_loan_payment", &ctx, &mut rng) {
            let loan = db.loans.get(args["loan_id"].as_str().unwrap()).unwrap();
            assert_eq!(args["amount"].as_f64(), loan.next_due().map(|d| d.amount));
            assert!(Hooks::check_policy(&db, "make_loan_payment", &args).is_ok());
            let mut fork = db.clone();
            let (ok, out) = call(&mut fork, "make_loan_payment", args.clone());
            assert!(ok, "{out}");
            let after = fork.loans.get(&loan.loan_id).unwrap();
            assert_eq!(
                after.repayment_history.len(),
                loan.repayment_history.len() + 1
            );
            // Paid once in this conversation, the installment is not proposed again (the
            // schedule still reads it as due, as in the reference): the following one is.
            assert_eq!(after.next_due(), loan.next_due());
            let following = loan
                .payment_schedule
                .iter()
                .filter(|e| e.status == "due")
                .nth(1);
            let again = Hooks::propose_calls(&fork, "make_loan_payment", &ctx, &mut rng);
            for a in again.iter().filter(|a| a["loan_id"] == args["loan_id"]) {
                let f = following.expect("a second installment is proposed only when due");
                assert_eq!(a["amount"].as_f64(), Some(f.amount));
                let said = Hooks::describe_request(&fork, "make_loan_payment", a, "").unwrap();
                assert!(
                    ["following", "after that", "early"]
                        .iter()
                        .any(|w| said.contains(w)),
                    "{said}"
                );
                followed += 1;
            }
            seen += 1;
        }
    }
    assert!(seen > 10 && followed > 0, "{seen} {followed}");
    assert_eq!(super::generate::round_share(12_345.0), 2_400.0);
    assert_eq!(super::generate::round_share(3.0), 1.0);
}

#[test]
fn imported_clients_keep_file_order_for_first_match_lookups() {
    let dir = std::env::temp_dir().join(format!("bank-order-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = eval();
    let mut tables = Database::to_tau_bench(&db);
    // Two clients sharing an email, the later id first in the file.
    let ids: Vec<String> = db.clients.keys().take(2).map(str::to_string).collect();
    let email = db.clients.get(&ids[0]).unwrap().contact.email.clone();
    tables.get_mut("clients").unwrap()[&ids[1]]["contact"]["email"] = json!(email.to_uppercase());
    let clients = tables["clients"].as_object().unwrap().clone();
    let mut text = String::from("{\"clients\": {");
    text += &format!(
        "\"{}\": {}, \"{}\": {}",
        ids[1], clients[&ids[1]], ids[0], clients[&ids[0]]
    );
    text += "}";
    for t in ["transactions", "loans", "beneficiaries"] {
        text += &format!(", \"{t}\": {}", tables[t]);
    }
    text += "}";
    let path = dir.join("db.json");
    std::fs::write(&path, text).unwrap();
    let mut imported = BankDb::import(&crate::domain::read_tau2_db(&path).unwrap(), &path).unwrap();
    let (ok, out) = call(
        &mut imported,
        "find_client_id_by_email",
        json!({"email": email}),
    );
    assert!(ok);
    assert_eq!(out, ids[1]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn lookups_make_the_agent_tell_what_every_request_asks() {
    let mut db = eval();
    let (client, from, to) = transfer_pair(&db);
    let (ok, account) = call(&mut db, "get_account_details", json!({"account_id": from}));
    assert!(ok, "{account}");
    let a = parse(&account);
    let outputs = db.required_outputs("get_account_details", &json!({}), &account);
    let current =
        crate::domain::kit::pyjson::py_float_repr(a["balance"]["current"].as_f64().unwrap());
    assert_eq!(
        outputs,
        vec![a["status"].as_str().unwrap().to_string(), current]
    );

    // The newest transaction: an internal transfer's description carries an account id,
    // so only its amount is told.
    let (ok, text) = call(
        &mut db,
        "initiate_internal_transfer",
        json!({"client_id": client, "from_account_id": from, "to_account_id": to, "amount": 25.5}),
    );
    assert!(ok, "{text}");
    let (_, recent) = call(
        &mut db,
        "get_recent_transactions",
        json!({"account_id": from}),
    );
    assert!(
        parse(&recent)[0]["description"]
            .as_str()
            .unwrap()
            .contains(&to)
    );
    assert_eq!(
        db.required_outputs("get_recent_transactions", &json!({}), &recent),
        vec!["25.5".to_string()]
    );
    // ... and the request asks for the amount alone, never a description it will not hear.
    let asked = Hooks::describe_request(
        &db,
        "get_recent_transactions",
        &json!({"account_id": from}),
        &recent,
    )
    .unwrap();
    assert!(
        asked.contains("amount") || asked.contains("how much") || asked.contains("how large"),
        "{asked}"
    );
    assert!(
        !asked.contains("description") && !asked.contains("what"),
        "{asked}"
    );
    let purchase = r#"[{"description": "Card purchase at Nordlys Cafe", "amount": 12.0}]"#;
    assert_eq!(
        db.required_outputs("get_recent_transactions", &json!({}), purchase),
        vec![
            "Card purchase at Nordlys Cafe".to_string(),
            "12.0".to_string()
        ]
    );

    // A loan: its status and the first installment still due (date, then amount).
    let loan = json!({"status": "active", "payment_schedule": [
        {"due_date": "2025-09-04", "amount": 311.22, "status": "paid"},
        {"due_date": "2025-10-04", "amount": 311.22, "status": "due"},
        {"due_date": "2025-11-04", "amount": 311.22, "status": "scheduled"}]});
    assert_eq!(
        db.required_outputs("get_loan_details", &json!({}), &loan.to_string()),
        vec!["active", "2025-10-04", "311.22"]
    );
    let card = r#"{"status": "blocked", "limits": {"daily_atm_limit": 710.95, "daily_pos_limit": 4702.65}}"#;
    assert_eq!(
        db.required_outputs("get_card_details", &json!({}), card),
        vec!["blocked", "710.95", "4702.65"]
    );
    // The payee list is the shared default's (its names); writes tell nothing.
    assert!(
        db.required_outputs("list_client_beneficiaries", &json!({}), "{}")
            .is_empty()
    );
    assert!(
        db.required_outputs("freeze_card", &json!({}), &account)
            .is_empty()
    );
}

/// A freeze's reason is the tool's `reason` argument, quoted by the request ("You want your
/// card frozen; the reason: card lost."), so every reason must be a noun phrase that reads
/// after "the reason:" and "citing": no verb of the customer's and no pronoun ("travelling
/// and want it locked" read "...; the reason: travelling and want it locked.").
#[test]
fn freeze_reasons_are_noun_phrases_the_request_can_quote() {
    let clause_words = [
        "want", "wants", "need", "needs", "like", "is", "are", "was", "am", "have", "has", "it",
        "i", "you", "my", "your", "and",
    ];
    for reason in super::ground::REASONS
        .iter()
        .chain(super::ground::ACCOUNT_REASONS.iter())
    {
        for word in reason.split_whitespace() {
            assert!(
                !clause_words.contains(&word.to_lowercase().as_str()),
                "freeze reason {reason:?} is a clause ('{word}'), not a noun phrase"
            );
        }
    }
    // And the request says it as such.
    let db = eval();
    let card = db
        .clients
        .iter()
        .find_map(|(_, c)| c.cards.values().find(|c| c.status == "active"))
        .expect("an active card");
    for reason in super::ground::REASONS {
        let args = json!({"card_id": card.card_id, "reason": reason});
        let request = Hooks::describe_request(&db, "freeze_card", &args, "").unwrap();
        assert!(request.contains(&format!("{reason}.")), "{request}");
    }
}
