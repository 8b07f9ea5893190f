//! What the ToolOrchestra tau2-style domains (School, Restaurant, Travel, Movie, Basketball,
//! Bank) share beyond the serialiser in [`super::pyjson`]:
//!
//! - their database file: one `db.json` whose top-level keys are the tables, each an object
//!   keyed by id. [`parse_table`] reads one table into typed rows (the error names the file,
//!   the table and the row); [`export_tables`] writes rows back in the same shape, in
//!   pydantic's `model_dump()` form (field names, every default filled in), which is what
//!   tau2 hashes and what the differential recorder compares;
//! - the order of their rows: Python lists a table in the order `db.json` holds it, which
//!   the parsed tables (sorted maps) have lost; [`document_order`] reads it back so list
//!   and search tools can print rows in the reference's order;
//! - their short dates: `YY-MM-DD` keys and stamps ([`short_date`], [`parse_short_date`],
//!   [`short_today`]), read with Python's `%y` pivot;
//! - Python's `int()` on a string ([`py_int`]), whose error text their tools surface when
//!   they parse times such as `HH-MM` (quoting with [`super::python::py_str_repr`]);
//! - saved payment methods shaped `{source, extra_info: {brand, last_four}}`, and how a
//!   customer names one ([`saved_method`]).
//!
//! Architecture invariant: knows no particular domain; pure functions of their inputs.

use super::clock::{SimClock, civil_from_days, days_from_civil, parse_date};
use super::python::{PyDict, py_str_repr};
use super::text::brand_name;
use crate::domain::{DomainError, Table};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde::de::IgnoredAny;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// One table of a tau2 database (`tables[name]`, an object keyed by id) as typed rows.
/// A missing table, a table that is not an object, or a row that does not parse is an
/// error naming `origin`, the table and the row.
pub fn parse_table<T: DeserializeOwned>(
    tables: &BTreeMap<String, Value>,
    name: &str,
    origin: &Path,
) -> Result<BTreeMap<String, T>, DomainError> {
    let err = |message: String| DomainError::Import {
        path: origin.display().to_string(),
        message,
    };
    let Some(Value::Object(rows)) = tables.get(name) else {
        return Err(err(match tables.get(name) {
            None => format!("table '{name}' is missing"),
            Some(_) => format!("table '{name}' must be an object keyed by id"),
        }));
    };
    rows.iter()
        .map(|(id, row)| {
            T::deserialize(row)
                .map(|r| (id.clone(), r))
                .map_err(|e| err(format!("{name}['{id}']: {e}")))
        })
        .collect()
}

/// What a tau2 `db.json` must be beyond what its rows parse to, checked on import (the
/// error names `origin`, the table and the row):
/// - every top-level key is one of the domain's tables (`known`): an unknown or misspelt
///   table would otherwise be dropped in silence;
/// - a row's key is its id: in a table whose rows carry their key in one field (the field
///   most rows agree with, e.g. `student_id`), a row whose field says otherwise is refused;
/// - every value shaped like a date (`YY-MM-DD`, `YY-MM-DD-HH-MM`, `YYYY-MM-DD`, at any
///   depth) in a field that holds dates ([`is_date_field`]) is a real one. A date-shaped
///   value elsewhere is not a date (bank's UK sort codes, `routing_number: "20-19-18"`).
pub fn check_import(
    tables: &BTreeMap<String, Value>,
    known: &[&str],
    origin: &Path,
) -> Result<(), DomainError> {
    let err = |message: String| DomainError::Import {
        path: origin.display().to_string(),
        message,
    };
    for name in tables.keys() {
        if !known.contains(&name.as_str()) {
            return Err(err(format!(
                "table '{name}' is not a table of this domain (tables: {})",
                known.join(", ")
            )));
        }
    }
    for (name, rows) in tables {
        let Value::Object(rows) = rows else { continue };
        // The id field: the string field whose value equals the row's key in most rows.
        let mut agree: BTreeMap<&str, usize> = BTreeMap::new();
        for (key, row) in rows {
            for (field, value) in row.as_object().into_iter().flatten() {
                if value.as_str() == Some(key.as_str()) {
                    *agree.entry(field.as_str()).or_default() += 1;
                }
            }
        }
        let id_field = agree
            .iter()
            .max_by_key(|(field, n)| (**n, std::cmp::Reverse(**field)))
            .filter(|(_, n)| **n * 2 > rows.len())
            .map(|(field, _)| *field);
        for (key, row) in rows {
            if let Some(field) = id_field
                && let Some(id) = row.get(field)
                && id.as_str() != Some(key.as_str())
            {
                return Err(err(format!(
                    "{name}['{key}']: the row's key differs from its {field} ({id})"
                )));
            }
            if let Some((at, bad)) = invalid_date(row, String::new(), false) {
                return Err(err(format!(
                    "{name}['{key}']{at}: '{bad}' is not a valid date"
                )));
            }
        }
    }
    Ok(())
}

/// The first value under `v` in a date field (`in_date`: `v` is, or is an element of, one)
/// shaped like a date that is not one: (path, value).
fn invalid_date(v: &Value, at: String, in_date: bool) -> Option<(String, String)> {
    match v {
        Value::String(s) => {
            (in_date && looks_like_date(s) && !is_valid_date(s)).then(|| (at, s.clone()))
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| invalid_date(x, format!("{at}[{i}]"), in_date)),
        Value::Object(map) => map
            .iter()
            .find_map(|(k, x)| invalid_date(x, format!("{at}.{k}"), is_date_field(k))),
        _ => None,
    }
}

/// Whether a field of a tau2 row holds dates, by its name: one of its words (split at `_`
/// and `-`, a plural `s` dropped) names a date or a time: `date`, `dob`, `birth`, `at`,
/// `on`, `time`, `timestamp`, `deadline`, `expiry`, `meeting`, `est` (the references'
/// suffix of a US Eastern time). Every date-shaped value in ToolOrchestra's six databases
/// sits in such a field, and none of theirs that is not a date does (a sort code is a
/// `routing_number`).
pub fn is_date_field(name: &str) -> bool {
    const WORDS: [&str; 11] = [
        "date",
        "dob",
        "birth",
        "at",
        "on",
        "time",
        "timestamp",
        "deadline",
        "expiry",
        "meeting",
        "est",
    ];
    name.split(['_', '-']).any(|word| {
        let word = word.to_ascii_lowercase();
        let singular = match word.strip_suffix('s') {
            Some(stem) if stem.len() >= 3 => stem,
            _ => word.as_str(),
        };
        WORDS.contains(&singular)
    })
}

/// `NN-NN-NN`, `NN-NN-NN-NN-NN` or `NNNN-NN-NN` (digits and dashes only).
fn looks_like_date(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    let digits = |g: &str, n: usize| g.len() == n && g.bytes().all(|b| b.is_ascii_digit());
    match groups.as_slice() {
        [y, m, d] => (digits(y, 2) || digits(y, 4)) && digits(m, 2) && digits(d, 2),
        [y, m, d, hh, mm] => [y, m, d, hh, mm].iter().all(|g| digits(g, 2)),
        _ => false,
    }
}

fn is_valid_date(s: &str) -> bool {
    if s.len() == 10 {
        return parse_date(s).is_some_and(|day| long_date(day) == s);
    }
    let Some(date) = s.get(..8) else {
        return false;
    };
    if parse_short_date(date).is_none() {
        return false;
    }
    match s.get(8..) {
        None | Some("") => true,
        Some(time) => {
            let hh: u32 = time.get(1..3).and_then(|t| t.parse().ok()).unwrap_or(99);
            let mm: u32 = time.get(4..6).and_then(|t| t.parse().ok()).unwrap_or(99);
            hh < 24 && mm < 60
        }
    }
}

/// Each table's ids in the order the `db.json` at `origin` lists them (Python dicts keep
/// that order, so the reference's list and search tools print rows in it). Empty when
/// `origin` is not a readable tau2 file (a generated database has no document order; its
/// tables keep id order, which is also the order our export writes).
pub fn document_order(origin: &Path) -> BTreeMap<String, Vec<String>> {
    let Ok(text) = std::fs::read_to_string(origin) else {
        return BTreeMap::new();
    };
    let Ok(tables) = serde_json::from_str::<PyDict<PyDict<IgnoredAny>>>(&text) else {
        return BTreeMap::new();
    };
    tables
        .iter()
        .map(|(name, rows)| (name.to_string(), rows.keys().map(str::to_string).collect()))
        .collect()
}

/// `ids` in the order `order` lists them, then any others in id order (rows the document
/// did not list, e.g. after an export/import round trip that sorted them).
pub fn in_document_order<'a>(
    ids: impl IntoIterator<Item = &'a str>,
    order: Option<&Vec<String>>,
) -> Vec<String> {
    let mut rest: Vec<String> = ids.into_iter().map(str::to_string).collect();
    let mut out = Vec::with_capacity(rest.len());
    for id in order.into_iter().flatten() {
        if let Some(i) = rest.iter().position(|x| x == id) {
            out.push(rest.remove(i));
        }
    }
    rest.sort();
    out.extend(rest);
    out
}

/// Make `table` list its rows ([`Table::in_order`]) as the file read into `order` by
/// [`document_order`] lists the table of the same name (id order for a generated database).
pub fn keep_document_order<T: Clone + Serialize>(
    table: &mut Table<T>,
    order: &BTreeMap<String, Vec<String>>,
) {
    let ids = in_document_order(table.keys(), order.get(table.name()));
    table.set_order(ids);
}

/// Tables (name, rows keyed by id) as the `db.json` shape: name -> object keyed by id.
pub fn export_tables(tables: Vec<(&str, Vec<(String, Value)>)>) -> BTreeMap<String, Value> {
    tables
        .into_iter()
        .map(|(name, rows)| {
            let object: serde_json::Map<String, Value> = rows.into_iter().collect();
            (name.to_string(), Value::Object(object))
        })
        .collect()
}

/// A day number as `YY-MM-DD`.
pub fn short_date(day: i64) -> String {
    let (y, m, d) = civil_from_days(day);
    format!("{:02}-{m:02}-{d:02}", y.rem_euclid(100))
}

/// Parse `YY-MM-DD` (exactly eight characters) into a day number; two-digit years follow
/// Python's `%y`: 69-99 are 1969-1999, 00-68 are 2000-2068.
pub fn parse_short_date(s: &str) -> Option<i64> {
    if s.len() != 8 || s.as_bytes()[2] != b'-' || s.as_bytes()[5] != b'-' {
        return None;
    }
    let yy: i64 = s.get(..2)?.parse().ok()?;
    let year = if yy >= 69 { 1900 + yy } else { 2000 + yy };
    let iso = format!("{year:04}-{}", s.get(3..)?);
    let day = parse_date(&iso)?;
    // Reject dates that do not exist (e.g. 25-02-30), which parse_date rolls over.
    (short_date(day) == s).then_some(day)
}

/// The clock's day as `YY-MM-DD` (`2025-05-15T...` -> `25-05-15`).
pub fn short_today(clock: &SimClock) -> String {
    parse_date(clock.today()).map_or_else(|| clock.today().to_string(), short_date)
}

/// A date as `YYYY-MM-DD` from its day number (the natural form a customer says; it
/// contains the `YY-MM-DD` form as a substring).
pub fn long_date(day: i64) -> String {
    let (y, m, d) = civil_from_days(day);
    format!("{y:04}-{m:02}-{d:02}")
}

/// A `YY-MM-DD-HH-MM` stamp as a person says it ("2024-07-12 at 18:30"); `None` for
/// anything else.
pub fn long_stamp(stamp: &str) -> Option<String> {
    let (date, time) = (stamp.get(..8)?, stamp.get(9..)?);
    let day = parse_short_date(date)?;
    let (h, m) = time.split_once('-')?;
    let two = |t: &str| t.len() == 2 && t.bytes().all(|b| b.is_ascii_digit());
    (stamp.as_bytes()[8] == b'-' && two(h) && two(m))
        .then(|| format!("{} at {h}:{m}", long_date(day)))
}

/// Day number of a civil date (re-exported for generators of tau2-style data).
pub fn day_of(y: i64, m: i64, d: i64) -> i64 {
    days_from_civil(y, m, d)
}

/// Python's `int(s)` for a string: surrounding whitespace, an optional sign, ASCII digits
/// with single underscores between them. The error is Python's message.
pub fn py_int(s: &str) -> Result<i64, String> {
    let bad = || format!("invalid literal for int() with base 10: {}", py_str_repr(s));
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let (negative, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let ok = !digits.is_empty()
        && !digits.starts_with('_')
        && !digits.ends_with('_')
        && !digits.contains("__")
        && digits.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    if !ok {
        return Err(bad());
    }
    let value: i64 = digits.replace('_', "").parse().map_err(|_| bad())?;
    Ok(if negative { -value } else { value })
}

/// How a customer names a saved payment method (`source`, `extra_info.brand`,
/// `extra_info.last_four`), and the literal strings that sentence reveals: "your Visa
/// credit card ending in 4444" (["4444"]), "your bank account ending in 0912", "your
/// American Express credit card" (["American Express"]) when no digits are saved.
pub fn saved_method(
    source: &str,
    brand: Option<&str>,
    last_four: Option<&str>,
) -> (String, Vec<String>) {
    let kind = match source {
        "credit_card" => "credit card".to_string(),
        "debit_card" => "debit card".to_string(),
        "bank_account" => "bank account".to_string(),
        other => other.replace('_', " "),
    };
    let brand = brand
        .filter(|b| !b.trim().is_empty() && !b.eq_ignore_ascii_case("ach"))
        .map(brand_name);
    let named = match brand {
        Some(ref b) if !kind.to_lowercase().contains(&b.to_lowercase()) => format!("{b} {kind}"),
        _ => kind.clone(),
    };
    match last_four.filter(|l| !l.trim().is_empty()) {
        Some(last) => (
            format!("your {named} ending in {last}"),
            vec![last.to_string()],
        ),
        None => {
            let value = brand.unwrap_or(kind);
            (format!("your {named}"), vec![value])
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_import_with_unknown_tables_foreign_keys_or_impossible_dates_is_refused() {
        let origin = Path::new("db.json");
        let db = |text: &str| -> BTreeMap<String, Value> { serde_json::from_str(text).unwrap() };
        let known = ["students", "courses"];
        let good = r#"{"students": {"S1": {"student_id": "S1", "dob": "03-08-19"}, "S2": {"student_id": "S2", "dob": "99-12-31"}},
                       "courses": {"C1": {"course_id": "C1", "first": "25-01-27-09-00", "term": "2025-SPRING", "on": "2025-02-28"}}}"#;
        check_import(&db(good), &known, origin).unwrap();
        // A date-shaped value in a field that is no date is left alone: bank's UK sort
        // codes (ToolOrchestra's `BENUK001`), at any depth.
        let sort_code = r#"{"students": {"S1": {"student_id": "S1", "routing_number": "20-19-18",
                           "bank_details": {"routing_number": "20-19-18"}, "codes": ["99-99-99"]}}}"#;
        check_import(&db(sort_code), &known, origin).unwrap();
        for (text, needle) in [
            (
                r#"{"students": {}, "studnets": {}}"#,
                "table 'studnets' is not a table of this domain (tables: students, courses)",
            ),
            (
                r#"{"students": {"S1": {"student_id": "S1"}, "S2": {"student_id": "S2"}, "S3": {"student_id": "S9"}}}"#,
                "students['S3']: the row's key differs from its student_id (\"S9\")",
            ),
            (
                r#"{"students": {"S1": {"student_id": "S1", "dob": "25-02-30"}}}"#,
                "students['S1'].dob: '25-02-30' is not a valid date",
            ),
            (
                r#"{"courses": {"C1": {"course_id": "C1", "meetings": ["25-01-27-25-00"]}}}"#,
                "courses['C1'].meetings[0]: '25-01-27-25-00' is not a valid date",
            ),
            (
                r#"{"courses": {"C1": {"course_id": "C1", "on": "2025-13-01"}}}"#,
                "'2025-13-01' is not a valid date",
            ),
            (
                r#"{"courses": {"C1": {"course_id": "C1", "dates": {"x": {"actual_end_time_est": "25-01-27-09-60"}}}}}"#,
                "courses['C1'].dates.x.actual_end_time_est: '25-01-27-09-60' is not a valid date",
            ),
        ] {
            let e = check_import(&db(text), &known, origin)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("db.json: ") && e.contains(needle),
                "{text}: {e}"
            );
        }
    }

    /// Every field of ToolOrchestra's six `db.json` files that holds a date-shaped value,
    /// but bank's `routing_number` (a UK sort code, `20-19-18`), is a date field.
    #[test]
    fn the_references_date_fields_are_date_fields_and_sort_codes_are_not() {
        for field in [
            "created_at",
            "due_date",
            "first_payment_date",
            "last_reviewed_at",
            "maturity_date",
            "opened_at",
            "origination_date",
            "posted_at",
            "release_at",
            "timestamp",
            "verified_at",
            "date",
            "end_date",
            "start_date",
            "canceled_at",
            "end_of_run_est",
            "end_time_local",
            "release_date",
            "start_time_local",
            "actual_end_time_est",
            "actual_start_time_est",
            "date-of-birth",
            "dob",
            "scheduled_first_meeting_est",
            "booking_date",
            "departure_date",
            "early_bird_deadline",
            "expiry",
            "meetings",
        ] {
            assert!(is_date_field(field), "{field}");
        }
        for field in [
            "routing_number",
            "phone",
            "status",
            "course_code",
            "term",
            "account_number_masked",
            "zip",
        ] {
            assert!(!is_date_field(field), "{field}");
        }
    }

    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[test]
    fn short_dates_use_pythons_pivot_and_reject_impossible_days() {
        assert_eq!(
            long_stamp("24-07-12-18-30").as_deref(),
            Some("2024-07-12 at 18:30")
        );
        for not_a_stamp in [
            "24-07-12",
            "24-02-30-18-30",
            "24-07-12-1830",
            "24-07-12-18-3x",
        ] {
            assert_eq!(long_stamp(not_a_stamp), None, "{not_a_stamp}");
        }
        let d = parse_short_date("25-05-15").unwrap();
        assert_eq!(long_date(d), "2025-05-15");
        assert_eq!(short_date(d), "25-05-15");
        assert_eq!(
            long_date(parse_short_date("99-11-03").unwrap()),
            "1999-11-03"
        );
        assert_eq!(
            long_date(parse_short_date("68-01-01").unwrap()),
            "2068-01-01"
        );
        assert_eq!(
            long_date(parse_short_date("69-01-01").unwrap()),
            "1969-01-01"
        );
        assert!(parse_short_date("25-02-30").is_none());
        assert!(parse_short_date("2025-05-15").is_none());
        assert!(parse_short_date("25/05/15").is_none());
        let clock = SimClock::new("2025-05-15T15:00:00");
        assert_eq!(short_today(&clock), "25-05-15");
        assert_eq!(day_of(2025, 5, 15), d);
    }

    /// Expected strings are CPython 3.11's.
    #[test]
    fn int_like_python() {
        assert_eq!(py_int("09"), Ok(9));
        assert_eq!(py_int(" -1_000 "), Ok(-1000));
        assert_eq!(py_int("+7"), Ok(7));
        assert_eq!(
            py_int("ab").unwrap_err(),
            "invalid literal for int() with base 10: 'ab'"
        );
        assert_eq!(
            py_int("1__0").unwrap_err(),
            "invalid literal for int() with base 10: '1__0'"
        );
        assert!(py_int("").is_err());
        assert!(py_int("_1").is_err());
        assert!(py_int("99999999999999999999").is_err());
    }

    #[test]
    fn tables_parse_with_named_errors_and_export_back() {
        #[derive(Deserialize, serde::Serialize)]
        struct Row {
            n: i64,
        }
        let tables: BTreeMap<String, Value> = [
            ("good".to_string(), json!({"a": {"n": 1}, "b": {"n": 2}})),
            ("bad".to_string(), json!({"a": {"n": "x"}})),
            ("list".to_string(), json!([1])),
        ]
        .into_iter()
        .collect();
        let origin = Path::new("db.json");
        let rows: BTreeMap<String, Row> = parse_table(&tables, "good", origin).unwrap();
        assert_eq!(rows["b"].n, 2);
        let e = parse_table::<Row>(&tables, "bad", origin)
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("db.json: bad['a']: "), "{e}");
        let e = parse_table::<Row>(&tables, "list", origin).err().unwrap();
        assert!(e.to_string().contains("object keyed by id"), "{e}");
        let e = parse_table::<Row>(&tables, "none", origin).err().unwrap();
        assert!(e.to_string().contains("'none' is missing"), "{e}");
        let out = export_tables(vec![(
            "good",
            rows.iter()
                .map(|(k, r)| (k.clone(), serde_json::to_value(r).unwrap()))
                .collect(),
        )]);
        assert_eq!(out["good"], tables["good"]);
    }

    #[test]
    fn document_order_is_the_files_not_the_sorted_maps() {
        let dir = std::env::temp_dir().join(format!("tau2-order-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("db.json");
        std::fs::write(
            &path,
            r#"{"rows": {"b": {"n": 1}, "a": {"n": 2}, "c": {}}, "other": {}}"#,
        )
        .unwrap();
        let order = document_order(&path);
        assert_eq!(order["rows"], ["b", "a", "c"]);
        assert!(order["other"].is_empty());
        assert!(document_order(&dir.join("missing.json")).is_empty());
        assert_eq!(
            in_document_order(["a", "z", "b", "c"], order.get("rows")),
            ["b", "a", "c", "z"]
        );
        assert_eq!(in_document_order(["b", "a"], None), ["a", "b"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn saved_methods_are_named_by_brand_and_last_digits() {
        assert_eq!(
            saved_method("credit_card", Some("visa"), Some("4444")),
            (
                "your Visa credit card ending in 4444".to_string(),
                vec!["4444".to_string()]
            )
        );
        assert_eq!(
            saved_method("bank_account", Some("ACH"), Some("0912")).0,
            "your bank account ending in 0912"
        );
        assert_eq!(
            saved_method("credit_card", Some("amex"), None),
            (
                "your American Express credit card".to_string(),
                vec!["American Express".to_string()]
            )
        );
        assert_eq!(
            saved_method("gift_card", None, None),
            ("your gift card".to_string(), vec!["gift card".to_string()])
        );
    }
}
