//! Coherence tests: each kind found on a crafted plan, a coherent plan with no finding,
//! changes of mind and re-reads, and which ids are entities.

use super::*;
use serde_json::json;

fn step(tool: &str, args: Value, output: &str, intent: Intent, before: u128, after: u128) -> Step {
    Step {
        tool: tool.into(),
        args,
        output: output.into(),
        kind: if intent == Intent::Lookup {
            ToolKind::Read
        } else {
            ToolKind::Write
        },
        intent,
        before: StateHash(before),
        after: StateHash(after),
        told: Vec::new(),
        target: Vec::new(),
    }
}

fn kinds(steps: &[Step]) -> Vec<Incoherence> {
    check_steps(steps, &["u1"])
        .into_iter()
        .map(|f| f.kind)
        .collect()
}

#[test]
fn a_change_of_mind_is_one_stated_finding_of_a_tolerated_kind() {
    let one = |kind| {
        vec![Finding {
            kind,
            detail: String::new(),
        }]
    };
    let said = "You block the card. Then on second thought, you want it unblocked.";
    assert!(is_stated_change_of_mind(&one(Incoherence::Undo), said));
    assert!(is_stated_change_of_mind(
        &one(Incoherence::CreateCancel),
        "Then you change your mind: you want to cancel the booking you just made."
    ));
    // Not stated, a kind no customer means, or two of them: incoherent.
    assert!(!is_stated_change_of_mind(
        &one(Incoherence::Undo),
        "You block the card. Then you want it unblocked."
    ));
    assert!(!is_stated_change_of_mind(
        &one(Incoherence::RepeatWrite),
        said
    ));
    assert!(!is_stated_change_of_mind(
        &one(Incoherence::UseAfterCancel),
        said
    ));
    let mut two = one(Incoherence::Undo);
    two.extend(one(Incoherence::Overwrite));
    assert!(!is_stated_change_of_mind(&two, said));
    for k in 0..CHANGE_OF_MIND_OPENERS.len() {
        let r = as_change_of_mind("You want to unblock the card.", k);
        assert!(states_change_of_mind(&r), "{r}");
        assert!(r.to_lowercase().contains("you want to unblock"), "{r}");
    }
}

#[test]
fn a_read_asked_again_says_so() {
    let first = "You want the status of order #W1 (the lamp).";
    let earlier = [Some(first.to_string()), None];
    assert_eq!(
        as_recheck(first, earlier.iter().map(Option::as_deref)),
        "You want the status of order #W1 (the lamp), now that those changes are made."
    );
    assert_eq!(
        as_recheck(
            "You want the status of order #W2.",
            earlier.iter().map(Option::as_deref)
        ),
        "You want the status of order #W2."
    );
    assert_eq!(as_recheck(first, std::iter::empty()), first);
    let asked = "Is your registration full-time or part-time?";
    assert_eq!(
        as_recheck(asked, [Some(asked)].into_iter()),
        "Is your registration full-time or part-time, now that those changes are made?"
    );
}

#[test]
fn a_re_read_telling_the_same_values_is_a_repeat_whatever_else_changed() {
    let loan = json!({"loan_id": "L1"});
    let read = |out: &str, told: &[&str]| Step {
        told: told.iter().map(|t| t.to_string()).collect(),
        ..step("get_loan_details", loan.clone(), out, Intent::Lookup, 2, 2)
    };
    let pay = step("make_loan_payment", loan.clone(), "ok", Intent::Pay, 1, 2);
    let first = read(r#"{"history": []}"#, &["2025-10-04", "311.22"]);
    // The payment shows in the history, the next installment told is the same.
    let same = read(r#"{"history": ["paid"]}"#, &["2025-10-04", "311.22"]);
    assert_eq!(
        kinds(&[first.clone(), pay.clone(), same]),
        [Incoherence::RepeatRead]
    );
    let moved = read(r#"{"history": ["paid"]}"#, &["2025-11-04", "311.22"]);
    assert!(kinds(&[first, pay, moved]).is_empty());
}

#[test]
fn a_coherent_plan_has_no_finding() {
    let steps = [
        step(
            "get_order",
            json!({"order_id": "O1"}),
            "{}",
            Intent::Lookup,
            1,
            1,
        ),
        step(
            "leave_tip",
            json!({"order_id": "O1", "amount": 3}),
            "ok",
            Intent::Pay,
            1,
            2,
        ),
        step(
            "leave_tip",
            json!({"order_id": "O2", "amount": 3}),
            "ok",
            Intent::Pay,
            2,
            3,
        ),
        step(
            "block_card",
            json!({"card_id": "C1"}),
            "ok",
            Intent::Change,
            3,
            4,
        ),
        step(
            "unblock_card",
            json!({"card_id": "C2"}),
            "ok",
            Intent::Change,
            4,
            5,
        ),
    ];
    assert_eq!(kinds(&steps), []);
}

#[test]
fn each_kind_is_found_on_a_crafted_plan() {
    let tip = json!({"order_id": "O1", "amount": 3});
    assert_eq!(
        kinds(&[
            step("leave_tip", tip.clone(), "ok", Intent::Pay, 1, 2),
            step("leave_tip", tip, "ok", Intent::Pay, 2, 3),
        ]),
        [Incoherence::RepeatWrite]
    );
    assert_eq!(
        kinds(&[
            step(
                "update_passengers",
                json!({"reservation_id": "R1", "p": "A"}),
                "ok",
                Intent::Change,
                1,
                2
            ),
            step(
                "update_passengers",
                json!({"reservation_id": "R1", "p": "B"}),
                "ok",
                Intent::Change,
                2,
                1
            ),
        ]),
        [Incoherence::Undo],
        "the state went back"
    );
    assert_eq!(
        kinds(&[
            step(
                "unblock_card",
                json!({"card_id": "C1"}),
                "ok",
                Intent::Change,
                1,
                2
            ),
            step(
                "block_card",
                json!({"card_id": "C1", "reason": "lost"}),
                "ok",
                Intent::Change,
                2,
                3
            ),
        ]),
        [Incoherence::Undo],
        "opposite verbs on one entity, even when a log row keeps the state apart"
    );
    assert_eq!(
        kinds(&[
            step(
                "update_address",
                json!({"order_id": "O1", "city": "A"}),
                "ok",
                Intent::Change,
                1,
                2
            ),
            step(
                "update_address",
                json!({"order_id": "O1", "city": "B"}),
                "ok",
                Intent::Change,
                2,
                3
            ),
        ]),
        [Incoherence::Overwrite]
    );
    assert_eq!(
        kinds(&[
            step(
                "book_movie",
                json!({"movie_id": "M1"}),
                r#"{"booking_id": "BKG001", "movie_id": "M1"}"#,
                Intent::Book,
                1,
                2
            ),
            step(
                "cancel_booking",
                json!({"booking_id": "BKG001"}),
                "ok",
                Intent::Cancel,
                2,
                3
            ),
        ]),
        [Incoherence::CreateCancel]
    );
    assert_eq!(
        kinds(&[
            step(
                "create_ticket",
                json!({"issue": "x"}),
                "Ticket TICKET241 opened.",
                Intent::Report,
                1,
                2
            ),
            step(
                "cancel_ticket",
                json!({"ticket_id": "TICKET241"}),
                "ok",
                Intent::Cancel,
                2,
                3
            ),
        ]),
        [Incoherence::CreateCancel],
        "an id in a text output"
    );
    assert_eq!(
        kinds(&[
            step(
                "update_booking_rooming",
                json!({"booking_id": "BKG-1", "room_type": "suite"}),
                "ok",
                Intent::Change,
                1,
                2
            ),
            step(
                "cancel_booking",
                json!({"booking_id": "BKG-1"}),
                "ok",
                Intent::Cancel,
                2,
                3
            ),
        ]),
        [Incoherence::ChangeCancel]
    );
    assert!(
        kinds(&[
            step(
                "update_booking_rooming",
                json!({"booking_id": "BKG-1", "room_type": "suite"}),
                "ok",
                Intent::Change,
                1,
                2
            ),
            step(
                "cancel_booking",
                json!({"booking_id": "BKG-2"}),
                "ok",
                Intent::Cancel,
                2,
                3
            ),
        ])
        .is_empty(),
        "cancelling another booking is coherent"
    );
    let booked = step(
        "create_booking",
        json!({"show_id": "S1", "seats": ["A1"]}),
        r#"{"booking_id": "BKG007", "show_id": "S1"}"#,
        Intent::Book,
        1,
        2,
    );
    let reseat = |id: &str| {
        step(
            "update_booking_seats",
            json!({"booking_id": id, "seats": ["B2"]}),
            "ok",
            Intent::Change,
            2,
            3,
        )
    };
    assert_eq!(
        kinds(&[booked.clone(), reseat("BKG007")]),
        [Incoherence::CreateChange],
        "booked, then changed: the customer would have booked it that way"
    );
    assert!(
        kinds(&[booked, reseat("BKG001")]).is_empty(),
        "changing an older booking after making a new one is coherent"
    );
    assert_eq!(
        kinds(&[
            step(
                "cancel_appointment",
                json!({"appointment_id": "A1"}),
                "ok",
                Intent::Cancel,
                1,
                2
            ),
            step(
                "get_video_link",
                json!({"appointment_id": "A1"}),
                "{}",
                Intent::Lookup,
                2,
                2
            ),
        ]),
        [Incoherence::UseAfterCancel]
    );
    assert_eq!(
        kinds(&[step(
            "update_address",
            json!({"user_id": "u1"}),
            "ok",
            Intent::Change,
            1,
            1
        )]),
        [Incoherence::NoOp]
    );
    let order = json!({"order_id": "O1"});
    assert_eq!(
        kinds(&[
            step("get_order", order.clone(), "{}", Intent::Lookup, 1, 1),
            step("get_order", order.clone(), "{}", Intent::Lookup, 1, 1),
        ]),
        [Incoherence::RepeatRead]
    );
    // Read again after a write changed the answer: a fair question.
    assert!(
        kinds(&[
            step(
                "get_order",
                order.clone(),
                "{\"n\": 2}",
                Intent::Lookup,
                1,
                1
            ),
            step("cancel_item", order.clone(), "ok", Intent::Change, 1, 2),
            step(
                "get_order",
                order.clone(),
                "{\"n\": 1}",
                Intent::Lookup,
                2,
                2
            ),
        ])
        .is_empty()
    );
    // A write that leaves the answer as it was (a ticket opened between two look-ups
    // of a phone's maker) does not make the second a new question.
    assert_eq!(
        kinds(&[
            step("get_order", order.clone(), "{}", Intent::Lookup, 1, 1),
            step("cancel_item", order.clone(), "ok", Intent::Change, 1, 2),
            step("get_order", order, "{}", Intent::Lookup, 2, 2),
        ]),
        [Incoherence::RepeatRead]
    );
}

#[test]
fn booking_again_what_a_cancel_held_is_a_rebooking() {
    let cancel = step(
        "cancel_booking",
        json!({"booking_id": "B1"}),
        r#"{"booking_id": "B1", "show_id": "S7", "theater_id": "T1", "status": "canceled"}"#,
        Intent::Cancel,
        1,
        2,
    );
    let book = |show: &str| Step {
        target: vec![show.to_string()],
        ..step(
            "create_booking",
            json!({"show_id": show, "theater_id": "T1"}),
            r#"{"booking_id": "B2"}"#,
            Intent::Book,
            2,
            3,
        )
    };
    assert_eq!(
        kinds(&[cancel.clone(), book("S7")]),
        [Incoherence::CancelRebook]
    );
    // Another show at the same theater is a new plan; so is a booking with no target.
    assert!(kinds(&[cancel.clone(), book("S8")]).is_empty());
    let untargeted = Step {
        target: Vec::new(),
        ..book("S7")
    };
    assert!(kinds(&[cancel.clone(), untargeted]).is_empty());
    // Every target value must be the cancelled record's (a package's other departure).
    let departure = Step {
        target: vec!["S7".into(), "24-09-03".into()],
        ..book("S7")
    };
    assert!(kinds(&[cancel.clone(), departure]).is_empty());
    // Booked first, then the old booking cancelled: a swap, not a rebooking.
    let later = Step {
        before: StateHash(3),
        after: StateHash(4),
        ..cancel
    };
    assert!(kinds(&[book("S7"), later]).is_empty());
}

#[test]
fn the_customer_and_payment_ids_are_not_entities() {
    assert_eq!(
        entities(
            &json!({"user_id": "u1", "payment_id": "credit_card_1", "reservation_id": "R1",
                    "flights": [{"flight_number": "HAT001"}]}),
            &["u1"]
        ),
        ["HAT001", "R1"]
    );
    assert_eq!(
        entities(
            &json!({"guest_ref": "u1", "instrument_ref": "zK2051S", "ticket_ref": "T1",
                    "plate_refs": ["P1", "P2"]}),
            &["u1"]
        ),
        ["P1", "P2", "T1"]
    );
    // A booking id the customer identifies with is still the booking a call is about.
    assert_eq!(entities(&json!({"booking_id": "B1"}), &["B1"]), ["B1"]);
    // Setting a ticket's tip twice, paid from two instruments, is one overwrite.
    assert_eq!(
        kinds(&[
            step(
                "add_tip_to_ticket",
                json!({"instrument_ref": "a", "ticket_ref": "T1", "tip_total": 3.0}),
                "ok",
                Intent::Pay,
                1,
                2
            ),
            step(
                "add_tip_to_ticket",
                json!({"instrument_ref": "b", "ticket_ref": "T1", "tip_total": 2.0}),
                "ok",
                Intent::Pay,
                2,
                3
            ),
        ]),
        [Incoherence::Overwrite]
    );
    // Two writes for one customer on different entities are not an overwrite.
    assert_eq!(
        kinds(&[
            step(
                "update_address",
                json!({"user_id": "u1", "city": "A"}),
                "ok",
                Intent::Change,
                1,
                2
            ),
            step(
                "update_address",
                json!({"user_id": "u1", "city": "B"}),
                "ok",
                Intent::Change,
                2,
                3
            ),
        ]),
        [],
        "no entity besides the customer: not decidable as an overwrite"
    );
    assert_eq!(
        id_words("Booking BKG001 for Movie m-1 at 10:30"),
        ["BKG001"]
    );
}
