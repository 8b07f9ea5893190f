//! Minting new ids the way the reference tools do (DOMAINS.md section 10.2): a counter over
//! a table's length (`TICKET{len+1:03d}`), max+1 over the numeric suffixes of existing keys
//! (`APPT{max+1:03d}`), or the first free slot of a fixed list (`BKG001..BKG003`); and
//! finding a customer's id by email, as the find-by-email tools do.
//!
//! Architecture invariant: pure functions of the state's keys; no clock, no global counter.

/// The id of the first `(id, email)` row whose email is `email`, compared case-blind (the
/// rows in the order the tool scans them).
pub fn id_by_email<'a>(
    rows: impl IntoIterator<Item = (&'a str, &'a str)>,
    email: &str,
) -> Option<String> {
    let wanted = email.to_lowercase();
    let mut rows = rows.into_iter();
    rows.find(|(_, e)| e.to_lowercase() == wanted)
        .map(|(id, _)| id.to_string())
}

/// `prefix` followed by `n` zero-padded to `width` digits (`counter_id("TICKET", 3, 241)`
/// = `TICKET241`; wider numbers are not truncated).
pub fn counter_id(prefix: &str, width: usize, n: u64) -> String {
    format!("{prefix}{n:0width$}")
}

/// The largest number `N` over keys of the form `<prefix><digits>` (any of `prefixes`),
/// or 0 when none match.
pub fn max_numeric_suffix<'a>(keys: impl IntoIterator<Item = &'a str>, prefixes: &[&str]) -> u64 {
    keys.into_iter()
        .filter_map(|k| {
            prefixes.iter().find_map(|p| {
                let rest = k.strip_prefix(p)?;
                (!rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| rest.parse::<u64>().ok())
                    .flatten()
            })
        })
        .max()
        .unwrap_or(0)
}

/// The first of `slots` for which `taken` is false.
pub fn first_free_slot(slots: &[&str], taken: impl Fn(&str) -> bool) -> Option<String> {
    slots.iter().find(|s| !taken(s)).map(|s| s.to_string())
}

/// `count` ids `<prefix>001`, `<prefix>002`, ... (the fixed slot lists of tau2 domains).
pub fn slot_list(prefix: &str, count: u64) -> Vec<String> {
    (1..=count).map(|n| counter_id(prefix, 3, n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mints_like_the_references() {
        assert_eq!(counter_id("TICKET", 3, 241), "TICKET241");
        assert_eq!(counter_id("tx_", 7, 12), "tx_0000012");
        assert_eq!(counter_id("R", 2, 1234), "R1234");
        let keys = ["APPT001", "APPT_tracer_223", "APPT049", "APPTX", "REC9"];
        assert_eq!(max_numeric_suffix(keys, &["APPT", "APPT_tracer_"]), 223);
        assert_eq!(max_numeric_suffix(["x"], &["APPT"]), 0);
        let taken = ["BKG001"];
        assert_eq!(
            first_free_slot(&["BKG001", "BKG002"], |s| taken.contains(&s)),
            Some("BKG002".to_string())
        );
        assert_eq!(slot_list("TAU", 3), ["TAU001", "TAU002", "TAU003"]);
    }
}
