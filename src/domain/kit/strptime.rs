//! Python's `datetime.strptime` for the numeric formats reference tools parse (`%Y-%m-%d`,
//! `%Y-%m-%d %H:%M`), so a tool accepts and refuses exactly the strings the reference does:
//! `2025-1-7` parses (one-digit month and day are allowed), `2025-01-07x` and `25-01-07` do
//! not, and `2025-02-30` fails on the calendar. Python matches a regular expression per
//! directive, trying alternatives in order with backtracking, then requires the whole string
//! to be consumed; this module does the same with a small matcher.
//!
//! Architecture invariant: pure string parsing; knows no domain and no clock.

/// One directive's alternatives, as Python's `_strptime` regex lists them (first wins, with
/// backtracking into later ones when the rest of the format does not match).
fn alternatives(directive: char) -> &'static [&'static str] {
    // Each pattern is a sequence of character classes: 'd' any digit, or a literal set.
    match directive {
        'Y' => &["dddd"],
        'm' => &["1[0-2]", "0[1-9]", "[1-9]"],
        'd' => &["3[01]", "[12]d", "0[1-9]", "[1-9]", " [1-9]"],
        'H' => &["2[0-3]", "[0-1]d", "d"],
        'M' => &["[0-5]d", "d"],
        _ => &[],
    }
}

/// The character classes of one alternative: `d` = any ASCII digit, `[xy]` / `[a-b]` a set,
/// anything else itself.
fn classes(pattern: &str) -> Vec<Vec<(char, char)>> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            'd' => {
                out.push(vec![('0', '9')]);
                i += 1;
            }
            '[' => {
                let mut set = Vec::new();
                i += 1;
                while i < chars.len() && chars[i] != ']' {
                    if chars.get(i + 1) == Some(&'-') && chars.get(i + 2).is_some_and(|c| *c != ']')
                    {
                        set.push((chars[i], chars[i + 2]));
                        i += 3;
                    } else {
                        set.push((chars[i], chars[i]));
                        i += 1;
                    }
                }
                out.push(set);
                i += 1;
            }
            c => {
                out.push(vec![(c, c)]);
                i += 1;
            }
        }
    }
    out
}

fn match_alternative(pattern: &str, input: &[char]) -> Option<usize> {
    let cls = classes(pattern);
    if input.len() < cls.len() {
        return None;
    }
    cls.iter()
        .zip(input)
        .all(|(set, c)| set.iter().any(|(lo, hi)| (*lo..=*hi).contains(c)))
        .then_some(cls.len())
}

/// Match `format` against all of `input`; the digits captured per directive, in order.
fn match_format(format: &[char], input: &[char], captured: &mut Vec<String>) -> bool {
    let Some(&f) = format.first() else {
        return input.is_empty();
    };
    if f == '%' {
        let Some(&directive) = format.get(1) else {
            return false;
        };
        for alt in alternatives(directive) {
            if let Some(n) = match_alternative(alt, input) {
                captured.push(input[..n].iter().collect());
                if match_format(&format[2..], &input[n..], captured) {
                    return true;
                }
                captured.pop();
            }
        }
        false
    } else if f.is_whitespace() {
        // Python turns format whitespace into `\s+`.
        let n = input.iter().take_while(|c| c.is_whitespace()).count();
        (1..=n)
            .rev()
            .any(|k| match_format(&format[1..], &input[k..], captured))
    } else {
        input.first() == Some(&f) && match_format(&format[1..], &input[1..], captured)
    }
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// A parsed date and optional time of day.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Parsed {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
}

/// `datetime.strptime(input, format)` for formats built from `%Y %m %d %H %M`, literal
/// characters and spaces; `None` where Python raises `ValueError`.
pub fn strptime(input: &str, format: &str) -> Option<Parsed> {
    let fmt: Vec<char> = format.chars().collect();
    let text: Vec<char> = input.chars().collect();
    let mut captured = Vec::new();
    if !match_format(&fmt, &text, &mut captured) {
        return None;
    }
    let directives: Vec<char> = fmt
        .windows(2)
        .filter(|w| w[0] == '%')
        .map(|w| w[1])
        .collect();
    let mut p = Parsed {
        year: 1900,
        month: 1,
        day: 1,
        hour: 0,
        minute: 0,
    };
    for (d, value) in directives.iter().zip(&captured) {
        let n: i64 = value.trim().parse().ok()?;
        match d {
            'Y' => p.year = n,
            'm' => p.month = n,
            'd' => p.day = n,
            'H' => p.hour = n,
            'M' => p.minute = n,
            _ => return None,
        }
    }
    (p.year >= 1 && p.day <= days_in_month(p.year, p.month)).then_some(p)
}

/// `strptime(s, "%Y-%m-%d")` as a day number (days since 1970-01-01).
pub fn parse_ymd(s: &str) -> Option<i64> {
    strptime(s, "%Y-%m-%d").map(|p| super::clock::days_from_civil(p.year, p.month, p.day))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected values are CPython 3.11's `datetime.strptime` outcomes.
    #[test]
    fn accepts_and_refuses_what_python_does() {
        let ok = |s: &str| parse_ymd(s).is_some();
        assert!(ok("2025-12-01"));
        assert!(ok("2025-1-7"));
        assert!(ok("2024-02-29"));
        assert!(!ok("2025-02-29"));
        assert!(!ok("2025-13-01"));
        assert!(!ok("2025-12-01x"));
        assert!(!ok("25-12-01"));
        assert!(!ok(" 2025-12-01"));
        assert!(!ok("ZZ_NOT_FOUND_0000"));
        assert!(!ok(""));
        // `%d` also takes a space-padded day, and a month of "1" backtracks past "1[0-2]".
        assert!(ok("2025-1- 5"));
        assert_eq!(
            parse_ymd("2025-12-01"),
            Some(super::super::clock::days_from_civil(2025, 12, 1))
        );
        let t = strptime("2025-12-01 9:05", "%Y-%m-%d %H:%M").unwrap();
        assert_eq!((t.hour, t.minute), (9, 5));
        assert!(strptime("2025-12-01  09:05", "%Y-%m-%d %H:%M").is_some());
        assert!(strptime("2025-12-01 24:00", "%Y-%m-%d %H:%M").is_none());
        assert!(strptime("2025-12-0109:05", "%Y-%m-%d %H:%M").is_none());
    }
}
