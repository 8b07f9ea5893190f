//! The simulation clock and calendar arithmetic every domain shares.
//!
//! Domains never read the wall clock: each has a fixed "now" (the reference environments'
//! policy clocks, e.g. 2024-05-15 15:00 EST), and where a reference tool stamps the wall
//! clock (telehealth's cancellation date, bank's transaction times) ours stamps the
//! simulation clock instead, so replays and state hashes are deterministic. Dates are
//! proleptic Gregorian with no time zones.
//!
//! Architecture invariant: pure arithmetic; no `SystemTime`, no `Instant`.

/// A domain's fixed "now".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimClock {
    /// `YYYY-MM-DDTHH:MM:SS`.
    pub now: &'static str,
}

impl SimClock {
    pub const fn new(now: &'static str) -> SimClock {
        SimClock { now }
    }

    /// `YYYY-MM-DD`.
    pub fn today(&self) -> &'static str {
        self.now.get(..10).unwrap_or(self.now)
    }

    /// Seconds since the epoch.
    pub fn seconds(&self) -> i64 {
        parse_datetime(self.now).unwrap_or_default()
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` (the form bank-style timestamps take).
    pub fn utc_stamp(&self) -> String {
        format!("{}Z", self.now)
    }
}

/// Day of the week of a day number: 0 = Monday ... 6 = Sunday.
pub fn weekday(day: i64) -> usize {
    // 1970-01-01 was a Thursday (3).
    (day + 3).rem_euclid(7) as usize
}

/// Lower-case English weekday names, Monday first.
pub const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// Days since 1970-01-01 of a civil date.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Civil date of a day number (inverse of [`days_from_civil`]).
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Parse `YYYY-MM-DD` into a day number.
pub fn parse_date(s: &str) -> Option<i64> {
    let mut parts = s.get(..10)?.split('-');
    let y = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let d: i64 = parts.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

pub fn format_date(day: i64) -> String {
    let (y, m, d) = civil_from_days(day);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Parse `HH:MM:SS` (optionally followed by anything, e.g. `+1`) into seconds of the day.
pub fn parse_clock(s: &str) -> Option<i64> {
    let mut parts = s.get(..8)?.split(':');
    let h: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let sec: i64 = parts.next()?.parse().ok()?;
    Some(h * 3600 + m * 60 + sec)
}

/// Parse `YYYY-MM-DDTHH:MM:SS` into seconds since the epoch.
pub fn parse_datetime(s: &str) -> Option<i64> {
    let day = parse_date(s)?;
    let secs = parse_clock(s.get(11..)?)?;
    Some(day * 86_400 + secs)
}

pub fn format_datetime(t: i64) -> String {
    let day = t.div_euclid(86_400);
    let s = t.rem_euclid(86_400);
    format!(
        "{}T{:02}:{:02}:{:02}",
        format_date(day),
        s / 3600,
        (s / 60) % 60,
        s % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_round_trips() {
        let d = parse_date("2024-05-15").unwrap();
        assert_eq!(format_date(d), "2024-05-15");
        assert_eq!(WEEKDAYS[weekday(d)], "wednesday");
        assert_eq!(format_date(d + 17), "2024-06-01");
        let c = SimClock::new("2024-05-15T15:00:00");
        assert_eq!(c.today(), "2024-05-15");
        assert_eq!(format_datetime(c.seconds()), "2024-05-15T15:00:00");
        assert_eq!(c.utc_stamp(), "2024-05-15T15:00:00Z");
        assert!(parse_date("2024-13-01").is_none());
    }
}
