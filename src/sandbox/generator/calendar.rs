//! The fixed calendar of the generated data. Every date is kept as a day offset before the
//! as-of date (0 = 2026-11-20, 364 = the oldest day), which makes "the last 90 days" a
//! comparison and keeps the formatting to one lookup.

use std::sync::OnceLock;

/// The as-of date of all data, the day of every login's `LastRefresh`.
pub(crate) const AS_OF: (i32, u32, u32) = (2026, 11, 20);

/// How many days of data there are: offsets `0..DAYS`.
pub(crate) const DAYS: u16 = 365;

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

/// The civil date `offset` days before the as-of date.
pub(crate) fn civil(offset: u16) -> (i32, u32, u32) {
    let (year, month, day) = AS_OF;
    civil_from_days(days_from_civil(year, month, day) - i64::from(offset))
}

/// How many days `text` (`YYYY-MM-DD`, optionally followed by a time as `DateFrom` and `DateTo`
/// may carry one) lies before the as-of date: negative after it. None when it is no such date.
pub(crate) fn offset_of(text: &str) -> Option<i64> {
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
    let (as_of_year, as_of_month, as_of_day) = AS_OF;
    Some(days_from_civil(as_of_year, as_of_month, as_of_day) - days_from_civil(year, month, day))
}

struct Table {
    dash: Vec<String>,
    slash: Vec<String>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let dates: Vec<_> = (0..DAYS).map(civil).collect();
        Table {
            dash: dates.iter().map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}")).collect(),
            slash: dates.iter().map(|(y, m, d)| format!("{y:04}/{m:02}/{d:02}")).collect(),
        }
    })
}

/// `YYYY-MM-DD`, as account and investment transactions carry dates.
pub(crate) fn dash_date(offset: u16) -> &'static str {
    // Generated data only has offsets within the year of DAYS.
    table().dash.get(usize::from(offset)).map_or("", String::as_str)
}

/// `YYYY/MM/DD`, as attribute detail transactions carry dates.
pub(crate) fn slash_date(offset: u16) -> &'static str {
    table().slash.get(usize::from(offset)).map_or("", String::as_str)
}

/// The `count` complete calendar months before the as-of month, newest first, as (year, month).
pub(crate) fn months_before(count: usize) -> Vec<(i32, u32)> {
    let (mut year, mut month, _) = AS_OF;
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
        assert_eq!(dash_date(0), "2026-11-20");
        assert_eq!(dash_date(20), "2026-10-31");
        assert_eq!(dash_date(364), "2025-11-21");
        assert_eq!(slash_date(1), "2026/11/19");
        assert_eq!(months_before(2), [(2026, 10), (2026, 9)]);
        assert_eq!(months_before(12)[11], (2025, 11));
    }

    #[test]
    fn dates_read_back_to_their_offsets() {
        assert_eq!(offset_of("2026-11-20"), Some(0));
        assert_eq!(offset_of("2026-10-31T00:00:00"), Some(20));
        assert_eq!(offset_of("2025-11-21"), Some(364));
        assert_eq!(offset_of("2026-11-21"), Some(-1));
        for bad in ["2026-02-29", "2026-13-01", "20261120", "2026-11-20x", "yesterday", ""] {
            assert_eq!(offset_of(bad), None, "{bad}");
        }
    }
}
