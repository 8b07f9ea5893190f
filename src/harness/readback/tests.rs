//! Readback tests: confirmations in the customer's words, amounts and dates as they were
//! said, and the values told named by their field, line or tool.

use super::{field_of, summarise_write, summarise_write_as, tell};
use serde_json::json;

#[test]
fn a_detail_naming_the_object_in_the_customers_words_takes_its_place() {
    let known = vec![
        (
            "C1".to_string(),
            "your credit account ending in 0838".to_string(),
        ),
        (
            "K1".to_string(),
            "your Visa debit card ending in 1234".to_string(),
        ),
    ];
    let say = |tool: &str, args| summarise_write_as(tool, &args, &[], &known, None);
    assert_eq!(
        say("unfreeze_account", json!({"account_id": "C1"})),
        "unfreeze your credit account ending in 0838"
    );
    assert_eq!(
        say("freeze_card", json!({"card_id": "K1", "reason": "lost"})),
        "freeze your Visa debit card ending in 1234 (reason: lost)"
    );
    // Not the object, or not in the customer's words: kept as a detail.
    assert_eq!(
        say("make_loan_payment", json!({"from_account_id": "C1"})),
        "make loan payment (from account: your credit account ending in 0838)"
    );
    assert_eq!(
        say(
            "add_beneficiary",
            json!({"allowed_from_account_ids": ["C1"]})
        ),
        "add beneficiary (allowed from account: your credit account ending in 0838)"
    );
    assert_eq!(
        say("cancel_reservation", json!({"reservation_id": "ABC123"})),
        "cancel reservation ABC123"
    );
}

#[test]
fn a_confirmation_reads_back_what_the_customer_knows_and_leaves_out_ids_never_said() {
    let args = json!({
        "booking_id": "2W8RZWV-B",
        "show_id": "35YU4IX-S",
        "seats": [
            {"seat_id": "R5-04", "ticket_type": "adult"},
            {"seat_id": "R5-05", "ticket_type": "child"}
        ],
        "payments": [{"payment_id": "O3NSKUK-WALLET", "amount": 36.86}],
        "address1": "12 Elm Street",
        "address2": ""
    });
    let known = vec![(
        "O3NSKUK-WALLET".to_string(),
        "your Google Pay wallet".to_string(),
    )];
    let mut heard = super::Heard::default();
    heard.update(&[
        crate::llm::ChatMessage::user("I'd like to change the seats on booking 2W8RZWV-B."),
        crate::llm::ChatMessage::tool(
            "call_1",
            "list_shows",
            r#"[{"show_id": "35YU4IX-S", "title": "Broken Orchard"}]"#,
        ),
        crate::llm::ChatMessage::tool(
            "call_2",
            "list_courses_by_term",
            r#"[{"course_id": "273JGXY", "course_code": "ENVS-3698", "title": "Soil and Water Science"}]"#,
        ),
    ]);
    let course = json!({"registration_id": "LF5X5ZB", "add_course_ids": ["273JGXY"]});
    assert_eq!(
        super::summarise_write_as(
            "update_registration_courses",
            &course,
            &[],
            &[],
            Some(&heard)
        ),
        "update registration courses (add course: ENVS-3698 Soil and Water Science; \
         registration: LF5X5ZB)"
    );
    let text = super::summarise_write_as("update_booking", &args, &[], &known, Some(&heard));
    assert!(text.starts_with("update booking 2W8RZWV-B ("), "{text}");
    assert!(!text.contains("35YU4IX-S"), "{text}");
    assert!(text.contains("show: Broken Orchard"), "{text}");
    assert!(text.contains("R5-04 (adult) and R5-05 (child)"), "{text}");
    assert!(
        text.contains("payments: your Google Pay wallet ($36.86)"),
        "{text}"
    );
    assert!(text.contains("address line 1: 12 Elm Street"), "{text}");
    assert!(!text.contains("address line 2"), "{text}");
    // Without what the customer said, every id is read back (as before).
    let all = super::summarise_write_as("update_booking", &args, &[], &known, None);
    assert!(all.contains("show: 35YU4IX-S"), "{all}");
    // A record that only refers to an id (a phone listed under its plan) does not name
    // it; the plan's own record does.
    let mut heard = super::Heard::default();
    let mut transcript = vec![crate::llm::ChatMessage::tool(
        "call_1",
        "get_customer_details",
        r#"{"devices": [{"device_id": "1", "name": "Nokia G42", "service": "mobile_golden_years"}]}"#,
    )];
    heard.update(&transcript);
    let remove = json!({"action": "remove", "service_id": "mobile_golden_years"});
    let said = super::summarise_write_as("manage_service", &remove, &[], &[], Some(&heard));
    assert!(!said.contains("Nokia"), "{said}");
    transcript.push(crate::llm::ChatMessage::tool(
        "call_2",
        "get_service_details",
        r#"{"service_id": "mobile_golden_years", "name": "Golden Years Mobile Plan"}"#,
    ));
    heard.update(&transcript);
    let said = super::summarise_write_as("manage_service", &remove, &[], &[], Some(&heard));
    assert!(said.contains("service: Golden Years Mobile Plan"), "{said}");
    // A box-score line names its player, not the club every line holds: the club is
    // named by the game's own club entry, and without one it is read back as its id.
    let line = r#"{"name": "Luka Abernathy", "club_id": "DVL5GUO", "player_id": "UNWCC3R"},
            {"name": "Marcus Adeyemi", "club_id": "DVL5GUO", "player_id": "ZYO5E68"}"#;
    let event = json!({"club_id": "DVL5GUO", "player_id": "UNWCC3R", "points": 2});
    let mut heard = super::Heard::default();
    let mut transcript = vec![crate::llm::ChatMessage::tool(
        "call_1",
        "get_game_box_score",
        format!("[{line}]"),
    )];
    heard.update(&transcript);
    let said = super::summarise_write_as("record_scoring_event", &event, &[], &[], Some(&heard));
    assert!(said.contains("club: DVL5GUO"), "{said}");
    transcript.push(crate::llm::ChatMessage::tool(
        "call_2",
        "get_game_details",
        format!(
            r#"{{"clubs": {{"home": {{"name": "Stonebridge Glaciers", "club_id": "DVL5GUO"}}}}, "box_score": [{line}]}}"#
        ),
    ));
    heard.update(&transcript);
    let said = super::summarise_write_as("record_scoring_event", &event, &[], &[], Some(&heard));
    assert!(said.contains("club: Stonebridge Glaciers"), "{said}");
    assert!(said.contains("player: Luka Abernathy"), "{said}");
    // The same item twice in an order is still that item.
    let mut heard = super::Heard::default();
    let vacuum = r#"{"name": "Robot Vacuum", "item_id": "9368139105", "product_id": "P1"}"#;
    heard.update(&[crate::llm::ChatMessage::tool(
        "call_1",
        "get_order_details",
        format!(r#"{{"items": [{vacuum}, {vacuum}]}}"#),
    )]);
    let ret = json!({"order_id": "#W6286941", "item_ids": ["9368139105"]});
    let said = super::summarise_write_as("return_items", &ret, &[], &[], Some(&heard));
    assert!(said.contains("Robot Vacuum"), "{said}");
    // A show has no name: it is read back by its start, and by its film's title once a
    // result gave that (its theater's name is where it is, not what it is of).
    let mut heard = super::Heard::default();
    let mut transcript = vec![
        crate::llm::ChatMessage::tool(
            "call_1",
            "list_shows",
            r#"[{"show_id": "V0TBP9C-S", "movie_id": "70Y4UPQ-M", "theater_id": "T1", "start_time_local": "24-07-12-18-30"}]"#,
        ),
        crate::llm::ChatMessage::tool(
            "call_2",
            "get_theater_details",
            r#"{"theater_id": "T1", "name": "Roxy Toronto Cinema"}"#,
        ),
    ];
    heard.update(&transcript);
    let book = json!({"show_id": "V0TBP9C-S", "delivery_method": "kiosk"});
    let said = super::summarise_write_as("create_booking", &book, &[], &[], Some(&heard));
    assert!(said.contains("show: 2024-07-12 at 18:30"), "{said}");
    transcript.push(crate::llm::ChatMessage::tool(
        "call_3",
        "get_movie_details",
        r#"{"movie_id": "70Y4UPQ-M", "title": "Velvet Echoes"}"#,
    ));
    heard.update(&transcript);
    let said = super::summarise_write_as("create_booking", &book, &[], &[], Some(&heard));
    assert!(
        said.contains("show: Velvet Echoes on 2024-07-12 at 18:30"),
        "{said}"
    );
    // A booking made since holds the theater's id beside its own start: the theater is
    // still read back by its name, not by the booking's start.
    transcript.push(crate::llm::ChatMessage::tool(
        "call_4",
        "create_booking",
        r#"{"booking_id": "B1", "show_id": "V0TBP9C-S", "theater_id": "T1", "start_time_local": "24-07-12-18-30"}"#,
    ));
    heard.update(&transcript);
    let book = json!({"show_id": "V0TBP9C-S", "theater_id": "T1"});
    let said = super::summarise_write_as("create_booking", &book, &[], &[], Some(&heard));
    assert!(said.contains("theater: Roxy Toronto Cinema"), "{said}");
}
#[test]
fn amounts_and_dates_are_read_back_as_the_customer_said_them() {
    let known = vec![("FWOK9UY".to_string(), "your Amex card".to_string())];
    let book = |amount: f64| {
        json!({"departure_date": "25-03-04", "package_id": "3IRC1V0",
            "payment_methods": [{"payment_id": "FWOK9UY", "amount": amount}]})
    };
    let say = |heard: &super::Heard, amount: f64| {
        super::summarise_write_as("book_package", &book(amount), &[], &known, Some(heard))
    };
    let mut heard = super::Heard::default();
    heard.update(&[crate::llm::ChatMessage::user(
        "Book it for 2025-03-04, paying 4,495.00 EUR with my Amex.",
    )]);
    let said = say(&heard, 4495.0);
    assert!(said.contains("your Amex card (4,495.00 EUR)"), "{said}");
    assert!(said.contains("departure date: 2025-03-04"), "{said}");
    // An amount the customer did not say: no dollar sign once a result showed another
    // currency; a date they did not say stays as the tool writes it.
    let said = say(&heard, 4490.0);
    assert!(said.contains("your Amex card ($4490.00)"), "{said}");
    let mut other = heard.clone();
    other.update(&[
        crate::llm::ChatMessage::user("Book it for 2025-03-04, paying 4,495.00 EUR."),
        crate::llm::ChatMessage::tool("call_1", "get_package_details", r#"{"currency": "JPY"}"#),
    ]);
    let said = say(&other, 4490.0);
    assert!(said.contains("your Amex card (4490.00)"), "{said}");
    let mut dollars = super::Heard::default();
    dollars.update(&[crate::llm::ChatMessage::user(
        "I'll pay $14,495.00 and then $495.00.",
    )]);
    let said = say(&dollars, 495.0);
    assert!(said.contains("($495.00)"), "{said}");
    assert!(said.contains("departure date: 25-03-04"), "{said}");
    // A told value that is a sentence keeps one full stop.
    let policy = "Free cancellation up to 60 days before departure.";
    assert_eq!(
        super::tell(&[(policy.into(), Some("cancellation policy".into()))]),
        format!("The cancellation policy is {policy}")
    );
}

#[test]
fn values_no_field_names_are_named_by_their_line_or_tool() {
    let listing = "Available Providers:\n\n• MD Horatio Marchetti (ID: dr_marchetti_anesthesiology)\n  Fee: $1";
    assert_eq!(
        super::heard::text_words_for(listing, "dr_marchetti_anesthesiology").as_deref(),
        Some("MD Horatio Marchetti")
    );
    assert_eq!(super::heard::text_words_for(listing, "dr_x"), None);
    let details = "Appointment Details (ID: APPT_7)\nPatient: Quinn (ID: quinn_1)";
    assert_eq!(super::heard::text_words_for(details, "APPT_7"), None);
    assert_eq!(
        super::heard::text_words_for(details, "quinn_1").as_deref(),
        Some("Quinn")
    );
    assert_eq!(
        super::answers::text_label("Provider:\n  Consultation Fee: $255.00\n", "$255.00")
            .as_deref(),
        Some("consultation fee")
    );
    let options = "Optimized regimen options:\nOption 1: Lowest-cost suppliers\n  - Zolpidem | \
        dosage=5mg | unit_cost_usd=0.28\n  Synergy notes:\n    - Same doses\nOption 2: Once-daily";
    let told: Vec<(String, Option<String>)> = ["Lowest-cost suppliers", "Once-daily", "0.28"]
        .iter()
        .map(|v| (v.to_string(), super::answers::text_label(options, v)))
        .collect();
    assert_eq!(
        super::tell(&told),
        "The options are Lowest-cost suppliers and Once-daily; and the unit cost is 0.28."
    );
    assert_eq!(
        super::tool_words("get_senior_discount").as_deref(),
        Some("senior discount")
    );
    assert_eq!(super::tool_words("calculate"), None);
}
#[test]
fn answers_name_the_field_of_each_value() {
    let result = r#"{"account": {"status": "active", "balance": {"current": 146.5}}}"#;
    assert_eq!(field_of(result, "active").as_deref(), Some("status"));
    assert_eq!(field_of(result, "146.5").as_deref(), Some("current"));
    assert_eq!(field_of(result, "closed"), None);
    assert_eq!(field_of("not json", "active"), None);
    // A plain-text list under a heading: the value is its place in the list.
    let steps = "\nTroubleshooting steps: \n1) Restart device \n2) Check signal coverage\n";
    assert_eq!(
        field_of(steps, "Restart device").as_deref(),
        Some("first troubleshooting step")
    );
    assert_eq!(
        field_of(steps, "Check signal coverage").as_deref(),
        Some("second troubleshooting step")
    );
    assert_eq!(field_of("Status: open", "open").as_deref(), Some("status"));
    assert_eq!(
        tell(&[
            ("Google".into(), Some("manufacturer".into())),
            ("Restart device".into(), field_of(steps, "Restart device")),
        ]),
        "The manufacturer is Google; and the first troubleshooting step is Restart device."
    );
    // An id used as a map key is not a field: the value is told under the map's field.
    let payees = r#"{"payees": {"ZMI51TK3": "Elif Iyer"}, "other": {"Q1": "x"}}"#;
    assert_eq!(field_of(payees, "Elif Iyer").as_deref(), Some("payees"));
    let told = tell(&[
        ("active".into(), Some("status".into())),
        ("146.5".into(), Some("current balance".into())),
        ("X1".into(), None),
    ]);
    assert_eq!(
        told,
        "The status is active; the current balance is 146.5; and X1."
    );
    let games = tell(&[
        ("A1".into(), Some("games".into())),
        ("B2".into(), Some("games".into())),
        ("C3".into(), Some("games".into())),
        ("Thornbury".into(), Some("city".into())),
    ]);
    assert_eq!(
        games,
        "The games are A1, B2 and C3; and the city is Thornbury."
    );
    assert_eq!(
        tell(&[
            ("Aurora".into(), Some("name".into())),
            ("Bijou".into(), Some("name".into())),
            ("R5-04".into(), Some("booked".into())),
            ("open".into(), Some("status".into())),
            ("final".into(), Some("status".into())),
        ]),
        "The names are Aurora and Bijou; booked: R5-04; and the statuses are open and final."
    );
    assert_eq!(
        tell(&[("2D".into(), Some("format".into()))]),
        "The format is 2D."
    );
    assert_eq!(
        super::field_of(r#"{"mpaa_rating": "PG-13"}"#, "PG-13").as_deref(),
        Some("MPAA rating")
    );
    // A unit in the label follows the number; a label's noun decides its number.
    assert_eq!(
        tell(&[
            ("102".into(), Some("runtime minutes".into())),
            ("0.22".into(), Some("price usd".into())),
            ("8.5".into(), Some("usage hours".into())),
        ]),
        "The runtime is 102 minutes; the price is 0.22 USD; and the usage is 8.5 hours."
    );
    assert_eq!(
        tell(&[
            (
                "Deccan Biotech".into(),
                Some("suppliers for zolpidem".into())
            ),
            ("Ada".into(), Some("status of order".into())),
        ]),
        "Suppliers for zolpidem: Deccan Biotech; and the status of order is Ada."
    );
    assert_eq!(
        tell(&[("Elif Iyer".into(), Some("payees".into()))]),
        "Payees: Elif Iyer."
    );
    assert_eq!(
        tell(&[(
            "none found".into(),
            Some("drug interaction analysis".into())
        )]),
        "The drug interaction analysis is none found."
    );
    assert_eq!(
        tell(&[("open".into(), Some("status".into()))]),
        "The status is open."
    );
}
#[test]
fn a_confirmation_reads_back_choices_not_blanks_or_the_customer() {
    let args = json!({
        "add_ons": [],
        "departure_date": "24-12-02",
        "insurance": null,
        "rooming": {"room_type": "single"},
        "travelers": [{"first_name": "Q"}],
        "traveler_id": "F8XHQCG",
    });
    assert_eq!(
        summarise_write("book_package", &args, &["F8XHQCG".to_string()]),
        "book package (add ons: none; departure date: 24-12-02; rooming: room type single; \
         travelers: first name Q)"
    );
    // List entries by what they are; entries of ids and amounts only are counted.
    let args = json!({
        "add_ons": [{"description": "Private airport pickup", "price": 75.0, "type": "transfer"}],
        "travelers": [
            {"first_name": "Ada", "last_name": "Lee", "dob": "87-04-15"},
            {"first_name": "Bo", "last_name": "Lee", "dob": "90-01-02"},
        ],
        "payment_methods": [{"payment_id": "card_1", "amount": 10}, {"payment_id": "gift_2", "amount": 5}],
    });
    assert_eq!(
        summarise_write("book_package", &args, &[]),
        "book package (add ons: Private airport pickup (transfer); payment methods: 2 entries; \
         travelers: Ada Lee and Bo Lee)"
    );
    assert_eq!(summarise_write("cancel_all", &json!({}), &[]), "cancel all");
    assert_eq!(
        summarise_write(
            "set_price",
            &json!({"price_usd": 0.2, "seat_count": 4}),
            &[]
        ),
        "set price (price: $0.20; seat count: 4)"
    );
    let note = json!({"note": "Patient asked for a copy.", "record_id": "R1"});
    assert_eq!(
        summarise_write("update_note", &note, &[]),
        "update note (note: Patient asked for a copy; record: R1)"
    );
    // Ids are read as written, named by their key in the singular for one.
    assert_eq!(
        summarise_write(
            "manage_service",
            &json!({"action": "add", "service_id": "tv_plus", "devices_ids": ["3"],
                "drop_course_ids": []}),
            &[]
        ),
        "manage service (action: add; device: 3; drop courses: none; service: tv_plus)"
    );
    // A booking the customer identified with is still named when it is what changes.
    assert_eq!(
        summarise_write(
            "cancel_booking",
            &json!({"booking_id": "OC3VOQC-B"}),
            &["OC3VOQC-B".to_string()]
        ),
        "cancel booking OC3VOQC-B"
    );
    // An id the customer knows by other words is read back in those words.
    let card = super::customer_words("You have a Visa credit card ending in 7846.");
    assert_eq!(
        card.as_deref(),
        Some("your Visa credit card ending in 7846")
    );
    assert_eq!(super::customer_words("Your user id is x."), None);
    assert_eq!(
        super::customer_words("You hold a checking account in EUR ending in 0912.").as_deref(),
        Some("your checking account in EUR ending in 0912")
    );
    assert_eq!(
        super::customer_words("You pay with your VISA card ending in 3303.").as_deref(),
        Some("your VISA card ending in 3303")
    );
    let known = [("credit_card_8509532".to_string(), card.unwrap())];
    let args = json!({"payment_id": "credit_card_8509532", "reservation_id": "YTNH41"});
    assert_eq!(
        super::summarise_write_as("update_reservation_flights", &args, &[], &known, None),
        "update reservation flights (payment: your Visa credit card ending in 7846; \
         reservation: YTNH41)"
    );
}
