//! The calendar of the generated data and the sandbox's clock. The clock ([`AsOf`]) is the
//! sandbox's "today": [`FIRST_AS_OF`] unless set, moved forward by whole days
//! (docs/sandbox.md#the-clock). Every date of the data is kept as a day offset before the clock
//! (0 = today, 364 = the oldest day shown), which makes "the last 90 days" a comparison and keeps
//! the formatting to one lookup.

use std::sync::OnceLock;

/// The earliest day the clock can show, and its day by default: the data's first year ends on it.
pub(crate) const FIRST_AS_OF: (i32, u32, u32) = (2026, 11, 20);

/// How many days of data there are before the clock, today included: offsets `0..DAYS`.
pub(crate) const DAYS: u16 = 365;

/// How many days past [`FIRST_AS_OF`] the clock can go: ten years, far past any test's nights,
/// and a bound that keeps a login's data made in milliseconds.
pub(crate) const MAX_CLOCK: u16 = 3_653;

/// The sandbox's "today", in whole days after its first day, 2026-11-20 (docs/sandbox.md#the-clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct AsOf(u16);

impl AsOf {
    /// The clock at `text`, a date written `YYYY-MM-DD` from 2026-11-20 to ten years later; the
    /// error is the rule the text breaks.
    pub fn parse(text: &str) -> Result<AsOf, String> {
        let wrong = || format!("must be a date written YYYY-MM-DD, got {text:?}");
        let trimmed = text.trim();
        if trimmed.len() != 10 {
            return Err(wrong());
        }
        let after = offset_of(AsOf(0), trimmed).ok_or_else(wrong)?.checked_neg().ok_or_else(wrong)?;
        AsOf::after_first(after).ok_or_else(|| {
            format!("must be a date from {} to {}, got {text:?}", AsOf(0).date(), AsOf(MAX_CLOCK).date())
        })
    }

    /// The clock `days` days after its first day, when that is within ten years of it.
    pub fn after_first(days: i64) -> Option<AsOf> {
        u16::try_from(days).ok().filter(|days| *days <= MAX_CLOCK).map(AsOf)
    }

    /// Days after the clock's first day, 2026-11-20.
    pub fn days_after_first(self) -> u16 {
        self.0
    }

    /// The clock `days` days later; the error is the rule `days` breaks (at least 1, and no
    /// later than the last day the clock can show).
    pub fn advanced(self, days: i64) -> Result<AsOf, String> {
        if days < 1 {
            return Err(format!("must be a whole number of days, 1 or more, got {days}"));
        }
        self.0
            .checked_add(u16::try_from(days).unwrap_or(u16::MAX))
            .filter(|moved| *moved <= MAX_CLOCK)
            .map(AsOf)
            .ok_or_else(|| {
                format!(
                    "moves the clock from {} past {}, the last day it can show, got {days}",
                    self.date(),
                    AsOf(MAX_CLOCK).date()
                )
            })
    }

    /// `YYYY-MM-DD`.
    pub fn date(self) -> String {
        let (year, month, day) = civil_after(i64::from(self.0));
        format!("{year:04}-{month:02}-{day:02}")
    }
}

impl std::fmt::Display for AsOf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.date())
    }
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    let year = i64::from(year) - i64::from(month <= 2);
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn civil_from_days(days: i64) -> (i32, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = (year_of_era + era * 400 + i64::from(month <= 2)) as i32;
    (year, month, day)
}

fn first_as_of() -> i64 {
    let (year, month, day) = FIRST_AS_OF;
    days_from_civil(year, month, day)
}

/// The civil date `offset` days before [`FIRST_AS_OF`]: the first year of data is planned so.
pub(crate) fn civil(offset: u16) -> (i32, u32, u32) {
    civil_from_days(first_as_of() - i64::from(offset))
}

/// The civil date `days` days after [`FIRST_AS_OF`] (negative: before it).
pub(crate) fn civil_after(days: i64) -> (i32, u32, u32) {
    civil_from_days(first_as_of() + days)
}

/// How many days `text` (`YYYY-MM-DD`, optionally followed by a time as `DateFrom` and `DateTo`
/// may carry one) lies before the clock: negative after it. None when it is no such date.
pub(crate) fn offset_of(clock: AsOf, text: &str) -> Option<i64> {
    let date = text.trim().get(..10)?;
    let rest = &text.trim()[10..];
    if !(rest.is_empty() || rest.starts_with(['T', ' '])) {
        return None;
    }
    let mut parts = date.split('-');
    let year: i32 = parts.next().filter(|p| p.len() == 4)?.parse().ok()?;
    let month: u32 = parts.next().filter(|p| p.len() == 2)?.parse().ok()?;
    let day: u32 = parts.next().filter(|p| p.len() == 2)?.parse().ok()?;
    let days_in_month = match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return None,
    };
    if day == 0 || day > days_in_month {
        return None;
    }
    Some(first_as_of() + i64::from(clock.0) - days_from_civil(year, month, day))
}

struct Table {
    dash: Vec<String>,
    slash: Vec<String>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        // Every day the clock can show a transaction on, oldest first.
        let oldest = -i64::from(DAYS - 1);
        let dates: Vec<_> = (oldest..=i64::from(MAX_CLOCK)).map(civil_after).collect();
        Table {
            dash: dates.iter().map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}")).collect(),
            slash: dates.iter().map(|(y, m, d)| format!("{y:04}/{m:02}/{d:02}")).collect(),
        }
    })
}

/// The index in [`table`] of the day `offset` days before `clock`.
fn table_index(clock: AsOf, offset: u16) -> usize {
    // Generated data only has offsets within the year of DAYS.
    usize::from(clock.0 + DAYS - 1).saturating_sub(usize::from(offset))
}

/// `YYYY-MM-DD`, as account and investment transactions carry dates: the day `offset` days
/// before `clock`.
pub(crate) fn dash_date(clock: AsOf, offset: u16) -> &'static str {
    table().dash.get(table_index(clock, offset)).map_or("", String::as_str)
}

/// `YYYY/MM/DD`, as attribute detail transactions carry dates.
pub(crate) fn slash_date(clock: AsOf, offset: u16) -> &'static str {
    table().slash.get(table_index(clock, offset)).map_or("", String::as_str)
}

/// The `count` complete calendar months before the clock's month, newest first, as (year, month).
pub(crate) fn months_before(clock: AsOf, count: usize) -> Vec<(i32, u32)> {
    let (mut year, mut month, _) = civil_after(i64::from(clock.0));
    (0..count)
        .map(|_| {
            if month == 1 {
                year -= 1;
                month = 12;
            } else {
                month -= 1;
            }
            (year, month)
        })
        .collect()
}

pub(crate) fn month_name(month: u32) -> &'static str {
    const NAMES: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    NAMES.get((month as usize).saturating_sub(1) % 12).copied().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_the_expected_dates() {
        let first = AsOf::default();
        assert_eq!(dash_date(first, 0), "2026-11-20");
        assert_eq!(dash_date(first, 20), "2026-10-31");
        assert_eq!(dash_date(first, 364), "2025-11-21");
        assert_eq!(slash_date(first, 1), "2026/11/19");
        assert_eq!(months_before(first, 2), [(2026, 10), (2026, 9)]);
        assert_eq!(months_before(first, 12)[11], (2025, 11));
        let later = AsOf::parse("2026-12-02").unwrap();
        assert_eq!(dash_date(later, 0), "2026-12-02");
        assert_eq!(dash_date(later, 12), "2026-11-20");
        assert_eq!(months_before(later, 1), [(2026, 11)]);
        assert_eq!(dash_date(AsOf(MAX_CLOCK), 0), AsOf(MAX_CLOCK).date());
    }

    #[test]
    fn dates_read_back_to_their_offsets() {
        let first = AsOf::default();
        assert_eq!(offset_of(first, "2026-11-20"), Some(0));
        assert_eq!(offset_of(first, "2026-10-31T00:00:00"), Some(20));
        assert_eq!(offset_of(first, "2025-11-21"), Some(364));
        assert_eq!(offset_of(first, "2026-11-21"), Some(-1));
        assert_eq!(offset_of(AsOf(3), "2026-11-21"), Some(2));
        for bad in ["2026-02-29", "2026-13-01", "20261120", "2026-11-20x", "yesterday", ""] {
            assert_eq!(offset_of(first, bad), None, "{bad}");
        }
    }

    #[test]
    fn the_clock_reads_and_moves_with_clear_rules() {
        assert_eq!(AsOf::parse("2026-11-20"), Ok(AsOf(0)));
        assert_eq!(AsOf::parse(" 2026-11-26 ").map(AsOf::date).as_deref(), Ok("2026-11-26"));
        assert_eq!(AsOf::parse("2027-01-01").map(AsOf::days_after_first), Ok(42));
        for (bad, rule) in [
            ("2026-11-19", "must be a date from 2026-11-20 to 2036-11-20"),
            ("2036-11-21", "must be a date from 2026-11-20 to 2036-11-20"),
            ("2026-11-20T00:00", "YYYY-MM-DD"),
            ("26-11-2026", "YYYY-MM-DD"),
            ("2026-02-30", "YYYY-MM-DD"),
        ] {
            let error = AsOf::parse(bad).unwrap_err();
            assert!(error.contains(rule) && error.contains(bad), "{bad}: {error}");
        }
        assert_eq!(AsOf(0).advanced(6).map(AsOf::date).as_deref(), Ok("2026-11-26"));
        assert!(AsOf(0).advanced(0).unwrap_err().contains("1 or more, got 0"));
        assert!(AsOf(0).advanced(-2).unwrap_err().contains("got -2"));
        assert!(AsOf(MAX_CLOCK - 1).advanced(2).unwrap_err().contains("the last day it can show"));
        assert!(AsOf(0).advanced(i64::MAX).is_err());
    }
}
