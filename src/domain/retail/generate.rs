//! The deterministic synthetic retail database: 527 users, 50 products with 5-20 variant
//! items each, 1,075 orders, all drawn from a ChaCha8 stream seeded by the caller.
//!
//! Vocabulary (names, streets, cities, product catalogue) is our own. The database is
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
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

pub const USERS: usize = 527;
pub const ORDERS: usize = 1_075;

pub const FIRST_NAMES: &[&str] = &[
    "Adele",
    "Bruno",
    "Camila",
    "Dmitri",
    "Elena",
    "Farah",
    "Gideon",
    "Hana",
    "Idris",
    "Juno",
    "Kofi",
    "Leila",
    "Marcus",
    "Nadia",
    "Oren",
    "Priya",
    "Quentin",
    "Rosa",
    "Soren",
    "Tamsin",
    "Umar",
    "Vera",
    "Wendell",
    "Ximena",
    "Yusuf",
    "Zara",
    "Aurelio",
    "Beatrix",
    "Cyrus",
    "Delphine",
    "Emeka",
    "Fiona",
    "Gustavo",
    "Helga",
    "Ines",
    "Jasper",
    "Keiko",
    "Lorcan",
    "Mirela",
    "Nikolai",
    "Odette",
    "Pablo",
    "Rhea",
    "Silas",
    "Talia",
    "Ulrich",
    "Valentina",
    "Wilder",
    "Yara",
    "Zeke",
    "Anouk",
    "Bastien",
    "Cleo",
    "Darius",
    "Esme",
    "Felix",
    "Greta",
    "Hugo",
    "Isla",
    "Joaquin",
];

pub const LAST_NAMES: &[&str] = &[
    "Abernathy",
    "Baptiste",
    "Castellano",
    "Drummond",
    "Eriksen",
    "Fairweather",
    "Galloway",
    "Hollis",
    "Ibarra",
    "Jablonski",
    "Kowalczyk",
    "Lindqvist",
    "Mbeki",
    "Nakagawa",
    "Okonkwo",
    "Pemberton",
    "Quiroga",
    "Rasmussen",
    "Sandoval",
    "Thorne",
    "Underwood",
    "Valdivia",
    "Whitaker",
    "Yamada",
    "Zielinski",
    "Achebe",
    "Beaumont",
    "Calloway",
    "Delacroix",
    "Ellison",
    "Ferreira",
    "Grimaldi",
    "Hargrove",
    "Iverson",
    "Jovanovic",
    "Kaminski",
    "Lachance",
    "Moreau",
    "Novak",
    "Oyelaran",
    "Prescott",
    "Renwick",
    "Sorensen",
    "Tanaka",
    "Vasquez",
    "Winslow",
];

pub const STREETS: &[&str] = &[
    "Juniper Lane",
    "Harbor View Road",
    "Quarry Street",
    "Millbrook Avenue",
    "Sparrow Court",
    "Lantern Way",
    "Copperfield Drive",
    "Orchard Row",
    "Beacon Hill Road",
    "Willow Bend",
    "Granite Street",
    "Foxglove Terrace",
    "Saltmarsh Road",
    "Kingfisher Lane",
    "Tamarack Avenue",
    "Ridgeback Drive",
    "Bluebell Close",
    "Cobblestone Way",
    "Heron Point Road",
    "Aspen Circle",
    "Larkspur Street",
    "Meridian Avenue",
    "Stonebridge Road",
    "Thistle Lane",
    "Wharf Street",
];

/// (city, state, first three digits of its zip codes)
pub const CITIES: &[(&str, &str, &str)] = &[
    ("Portland", "OR", "972"),
    ("Boise", "ID", "837"),
    ("Tucson", "AZ", "857"),
    ("Albuquerque", "NM", "871"),
    ("Omaha", "NE", "681"),
    ("Madison", "WI", "537"),
    ("Richmond", "VA", "232"),
    ("Savannah", "GA", "314"),
    ("Spokane", "WA", "992"),
    ("Tulsa", "OK", "741"),
    ("Raleigh", "NC", "276"),
    ("Burlington", "VT", "054"),
    ("Providence", "RI", "029"),
    ("Lexington", "KY", "405"),
    ("Des Moines", "IA", "503"),
    ("Anchorage", "AK", "995"),
    ("Baton Rouge", "LA", "708"),
    ("Chattanooga", "TN", "374"),
    ("Fort Collins", "CO", "805"),
    ("Ann Arbor", "MI", "481"),
    ("Santa Fe", "NM", "875"),
    ("Reno", "NV", "895"),
    ("Duluth", "MN", "558"),
    ("Charleston", "SC", "294"),
    ("Pittsburgh", "PA", "152"),
];

const CARD_BRANDS: &[&str] = &["visa", "mastercard", "amex", "discover"];

/// One catalogue entry: name, price range in dollars, option dimensions and their values.
type CatalogueEntry = (
    &'static str,
    f64,
    f64,
    &'static [(&'static str, &'static [&'static str])],
);

pub const CATALOGUE: &[CatalogueEntry] = &[
    (
        "Rain Jacket",
        40.0,
        120.0,
        &[
            ("size", &["S", "M", "L", "XL"]),
            ("color", &["navy", "olive", "yellow", "black"]),
            ("hood", &["packable", "fixed"]),
        ],
    ),
    (
        "Wool Socks",
        12.0,
        35.0,
        &[
            ("size", &["S", "M", "L"]),
            ("pattern", &["solid", "striped", "argyle"]),
            ("pack", &["3-pack", "6-pack"]),
        ],
    ),
    (
        "Denim Jeans",
        45.0,
        110.0,
        &[
            ("waist", &["28", "30", "32", "34", "36"]),
            ("fit", &["slim", "straight", "relaxed"]),
            ("wash", &["light", "dark"]),
        ],
    ),
    (
        "Trail Running Shoes",
        80.0,
        170.0,
        &[
            ("size", &["7", "8", "9", "10", "11", "12"]),
            ("color", &["grey", "blue", "orange"]),
            ("width", &["regular", "wide"]),
        ],
    ),
    (
        "Winter Gloves",
        18.0,
        60.0,
        &[
            ("size", &["S", "M", "L"]),
            ("material", &["leather", "fleece", "wool"]),
            ("touchscreen", &["yes", "no"]),
        ],
    ),
    (
        "Canvas Tote",
        15.0,
        45.0,
        &[
            ("color", &["natural", "black", "red"]),
            ("size", &["small", "large"]),
            ("closure", &["open", "zip"]),
        ],
    ),
    (
        "Ceramic Mug Set",
        20.0,
        60.0,
        &[
            ("color", &["white", "speckled", "blue"]),
            ("pieces", &["2", "4", "6"]),
        ],
    ),
    (
        "Chef Knife",
        35.0,
        180.0,
        &[
            ("blade length", &["6 inch", "8 inch", "10 inch"]),
            ("handle", &["wood", "composite", "steel"]),
        ],
    ),
    (
        "Cast Iron Skillet",
        25.0,
        120.0,
        &[
            ("diameter", &["8 inch", "10 inch", "12 inch"]),
            ("finish", &["pre-seasoned", "enamel"]),
        ],
    ),
    (
        "Blender",
        50.0,
        260.0,
        &[
            ("capacity", &["1L", "1.5L", "2L"]),
            ("power", &["600W", "1000W", "1500W"]),
            ("color", &["black", "silver", "red"]),
        ],
    ),
    (
        "Toaster",
        25.0,
        110.0,
        &[
            ("slots", &["2", "4"]),
            ("color", &["white", "black", "chrome"]),
            ("bagel mode", &["yes", "no"]),
        ],
    ),
    (
        "Rice Cooker",
        30.0,
        190.0,
        &[
            ("capacity", &["3 cup", "6 cup", "10 cup"]),
            ("control", &["basic", "fuzzy logic"]),
        ],
    ),
    (
        "Stand Mixer",
        180.0,
        520.0,
        &[
            ("bowl size", &["4.5 qt", "5.5 qt"]),
            ("color", &["red", "cream", "graphite", "teal"]),
        ],
    ),
    (
        "Air Fryer",
        60.0,
        200.0,
        &[
            ("capacity", &["3 qt", "5 qt", "8 qt"]),
            ("display", &["dial", "touch"]),
        ],
    ),
    (
        "Food Storage Set",
        20.0,
        70.0,
        &[
            ("material", &["glass", "plastic"]),
            ("pieces", &["10", "18", "24"]),
        ],
    ),
    (
        "Bath Towel Set",
        30.0,
        90.0,
        &[
            ("color", &["white", "sand", "slate", "sage"]),
            ("material", &["cotton", "bamboo"]),
        ],
    ),
    (
        "Duvet Cover",
        50.0,
        200.0,
        &[
            ("size", &["twin", "queen", "king"]),
            ("color", &["white", "grey", "blue"]),
            ("material", &["linen", "percale"]),
        ],
    ),
    (
        "Memory Foam Pillow",
        30.0,
        90.0,
        &[
            ("firmness", &["soft", "medium", "firm"]),
            ("size", &["standard", "king"]),
        ],
    ),
    (
        "Floor Lamp",
        45.0,
        220.0,
        &[
            ("color", &["black", "brass", "white"]),
            ("bulb type", &["LED", "incandescent"]),
            ("height", &["5 ft", "6 ft"]),
        ],
    ),
    (
        "Throw Blanket",
        25.0,
        80.0,
        &[
            ("material", &["fleece", "knit", "sherpa"]),
            ("color", &["cream", "charcoal", "rust"]),
        ],
    ),
    (
        "Area Rug",
        70.0,
        420.0,
        &[
            ("size", &["4x6 ft", "5x8 ft", "8x10 ft"]),
            ("style", &["modern", "vintage", "solid"]),
        ],
    ),
    (
        "Standing Desk",
        250.0,
        750.0,
        &[
            ("top size", &["48 inch", "60 inch"]),
            ("color", &["walnut", "white", "black"]),
            ("motor", &["single", "dual"]),
        ],
    ),
    (
        "Monitor",
        130.0,
        700.0,
        &[
            ("size", &["24 inch", "27 inch", "32 inch"]),
            ("resolution", &["1080p", "1440p", "4K"]),
            ("refresh rate", &["60Hz", "144Hz"]),
        ],
    ),
    (
        "Webcam",
        30.0,
        200.0,
        &[
            ("resolution", &["720p", "1080p", "4K"]),
            ("microphone", &["mono", "stereo"]),
        ],
    ),
    (
        "USB-C Hub",
        20.0,
        90.0,
        &[("ports", &["4", "7", "10"]), ("color", &["grey", "silver"])],
    ),
    (
        "Wireless Mouse",
        18.0,
        90.0,
        &[
            ("color", &["black", "white", "pink"]),
            ("connectivity", &["bluetooth", "receiver"]),
            ("grip", &["ambidextrous", "right-handed"]),
        ],
    ),
    (
        "Noise Cancelling Headphones",
        90.0,
        400.0,
        &[
            ("color", &["black", "silver", "blue"]),
            ("style", &["over-ear", "on-ear"]),
        ],
    ),
    (
        "Portable Projector",
        120.0,
        600.0,
        &[
            ("resolution", &["720p", "1080p"]),
            ("brightness", &["300 lumen", "600 lumen", "1000 lumen"]),
        ],
    ),
    (
        "Smart Plug",
        12.0,
        60.0,
        &[
            ("pack", &["1-pack", "2-pack", "4-pack"]),
            ("protocol", &["wifi", "zigbee"]),
        ],
    ),
    (
        "Robot Vacuum",
        150.0,
        800.0,
        &[
            ("navigation", &["random", "lidar", "camera"]),
            ("bin", &["standard", "self-emptying"]),
        ],
    ),
    (
        "Fitness Tracker",
        40.0,
        180.0,
        &[
            ("color", &["black", "rose", "green"]),
            ("band", &["silicone", "fabric"]),
            ("gps", &["yes", "no"]),
        ],
    ),
    (
        "Camera Drone",
        250.0,
        1200.0,
        &[
            ("camera", &["2.7K", "4K"]),
            ("battery", &["single", "triple"]),
            ("color", &["grey", "white"]),
        ],
    ),
    (
        "Drawing Tablet",
        50.0,
        400.0,
        &[
            ("size", &["small", "medium", "large"]),
            ("pen", &["standard", "pro"]),
        ],
    ),
    (
        "Power Bank",
        20.0,
        90.0,
        &[
            ("capacity", &["10000mAh", "20000mAh", "26800mAh"]),
            ("color", &["black", "white", "blue"]),
        ],
    ),
    (
        "Camping Tent",
        80.0,
        450.0,
        &[
            ("capacity", &["2-person", "4-person", "6-person"]),
            ("season", &["3-season", "4-season"]),
        ],
    ),
    (
        "Sleeping Bag",
        50.0,
        320.0,
        &[
            ("temperature rating", &["20F", "35F", "50F"]),
            ("fill", &["down", "synthetic"]),
            ("length", &["regular", "long"]),
        ],
    ),
    (
        "Trekking Poles",
        30.0,
        150.0,
        &[
            ("material", &["aluminum", "carbon"]),
            ("lock", &["twist", "lever"]),
            ("color", &["black", "blue"]),
        ],
    ),
    (
        "Kayak Paddle",
        60.0,
        300.0,
        &[
            ("length", &["220 cm", "230 cm", "240 cm"]),
            ("shaft", &["aluminum", "fiberglass", "carbon"]),
        ],
    ),
    (
        "Road Helmet",
        40.0,
        220.0,
        &[
            ("size", &["S", "M", "L"]),
            ("color", &["white", "black", "red"]),
            ("ventilation", &["standard", "aero"]),
        ],
    ),
    (
        "Tennis Racket",
        80.0,
        260.0,
        &[
            ("weight", &["270g", "285g", "300g"]),
            ("grip size", &["2", "3", "4"]),
        ],
    ),
    (
        "Resistance Bands",
        10.0,
        45.0,
        &[
            ("level", &["light", "medium", "heavy", "set"]),
            ("material", &["latex", "fabric"]),
        ],
    ),
    (
        "Kettlebell",
        25.0,
        120.0,
        &[
            ("weight", &["8 kg", "12 kg", "16 kg", "20 kg", "24 kg"]),
            ("finish", &["cast iron", "vinyl"]),
        ],
    ),
    (
        "Board Game",
        20.0,
        90.0,
        &[
            ("theme", &["strategy", "party", "cooperative"]),
            ("edition", &["standard", "deluxe"]),
        ],
    ),
    (
        "Acrylic Paint Set",
        12.0,
        70.0,
        &[
            ("colors", &["12", "24", "48"]),
            ("finish", &["matte", "gloss"]),
        ],
    ),
    (
        "Fountain Pen",
        25.0,
        200.0,
        &[
            ("nib", &["fine", "medium", "broad"]),
            ("color", &["black", "burgundy", "green"]),
        ],
    ),
    (
        "Plant Pot",
        12.0,
        110.0,
        &[
            ("diameter", &["6 inch", "10 inch", "14 inch"]),
            ("material", &["terracotta", "ceramic", "fiberglass"]),
            ("color", &["natural", "white", "black"]),
        ],
    ),
    (
        "Bird Feeder",
        15.0,
        70.0,
        &[
            ("style", &["tube", "platform", "window"]),
            ("capacity", &["1 lb", "3 lb"]),
        ],
    ),
    (
        "Cordless Drill",
        60.0,
        260.0,
        &[
            ("voltage", &["12V", "18V", "20V"]),
            ("battery", &["1 battery", "2 batteries"]),
            ("kit", &["bare", "with case"]),
        ],
    ),
    (
        "Tool Box",
        20.0,
        110.0,
        &[
            ("size", &["16 inch", "19 inch", "22 inch"]),
            ("material", &["plastic", "steel"]),
        ],
    ),
    (
        "Dog Harness",
        18.0,
        60.0,
        &[
            ("size", &["XS", "S", "M", "L", "XL"]),
            ("color", &["black", "red", "blue", "camo"]),
        ],
    ),
];

fn pick<'a, T>(rng: &mut ChaCha8Rng, items: &'a [T]) -> &'a T {
    // Every list passed here is a non-empty constant or checked by the caller.
    &items[rng.random_range(0..items.len())]
}

fn digits(rng: &mut ChaCha8Rng, n: usize) -> String {
    (0..n)
        .map(|_| char::from(b'0' + rng.random_range(0..10u8)))
        .collect()
}

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
    let (city, state, zip3) = *pick(rng, CITIES);
    let number = rng.random_range(10..2000u32);
    let street = pick(rng, STREETS);
    let address2 = match rng.random_range(0..3u8) {
        0 => String::new(),
        1 => format!("Apt {}", rng.random_range(1..500u32)),
        _ => format!("Suite {}", rng.random_range(100..999u32)),
    };
    Address {
        address1: format!("{number} {street}"),
        address2,
        city: city.into(),
        country: "USA".into(),
        state: state.into(),
        zip: format!("{zip3}{}", digits(rng, 2)),
    }
}

fn generate_products(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
) -> BTreeMap<String, Product> {
    let mut products = BTreeMap::new();
    for &(name, low, high, dims) in CATALOGUE {
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
            for (key, vals) in dims {
                let value = vals.get(rest % vals.len()).copied().unwrap_or_default();
                rest /= vals.len();
                options.insert(key.to_string(), value.to_string());
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
                name: name.into(),
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
        let first = *pick(rng, FIRST_NAMES);
        let last = *pick(rng, LAST_NAMES);
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
                    brand: Some(pick(rng, CARD_BRANDS).to_string()),
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
        let options: Vec<&Variant> = product
            .variants
            .values()
            .filter(|v| v.available && v.item_id != item.item_id)
            .collect();
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
