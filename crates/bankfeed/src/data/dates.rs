//! Lenient date parsing: the service writes dates as `YYYY-MM-DD` (transactions), `YYYY/MM/DD`
//! (attribute transactions) and timestamps with 6 or 7 fractional digits, with or without `Z`
//! (a timestamp without a zone is UTC).

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Utc};

/// Days since 1970-01-01 (Arrow's `date32`), or None when `text` is not a date.
///
/// Read by hand rather than with a chrono format string: a year of transactions has a date
/// per row, and the format machinery cost more than everything else in building the table.
pub fn parse_date(text: &str) -> Option<i32> {
    let (head, rest) = text.trim().as_bytes().split_first_chunk::<10>()?;
    let [y0, y1, y2, y3, separator, m0, m1, separator2, d0, d1] = *head;
    if !matches!(separator, b'-' | b'/') || separator2 != separator {
        return None;
    }
    // A longer text must be a timestamp of that day, not a stray suffix.
    if rest.first().is_some_and(|b| !matches!(b, b'T' | b' ')) {
        return None;
    }
    let number = |digits: &[u8]| -> Option<u32> {
        digits.iter().try_fold(0u32, |n, &d| d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0')))
    };
    let (year, month, day) = (number(&[y0, y1, y2, y3])?, number(&[m0, m1])?, number(&[d0, d1])?);
    let date = NaiveDate::from_ymd_opt(year as i32, month, day)?;
    Some(date.num_days_from_ce() - UNIX_EPOCH_DAYS_FROM_CE)
}

/// `NaiveDate::from_ymd(1970, 1, 1).num_days_from_ce()`.
const UNIX_EPOCH_DAYS_FROM_CE: i32 = 719_163;

/// Microseconds since the epoch, UTC (Arrow's `timestamp[us, UTC]`), or None.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Ok(moment) = DateTime::parse_from_rfc3339(text) {
        return Some(moment.with_timezone(&Utc).timestamp_micros());
    }
    let naive = text.strip_suffix('Z').unwrap_or(text);
    NaiveDateTime::parse_from_str(naive, "%Y-%m-%dT%H:%M:%S%.f")
        .or_else(|_| NaiveDateTime::parse_from_str(naive, "%Y-%m-%d %H:%M:%S%.f"))
        .ok()
        .map(|moment| moment.and_utc().timestamp_micros())
        .or_else(|| parse_date(text).map(|days| i64::from(days) * 86_400_000_000))
}

/// (year, month, day) of a `date32` value. Days beyond chrono's range (about 262,000 years either
/// way, which `parse_date` never produces) saturate to its first or last day rather than panic.
pub fn ymd(days: i32) -> (i32, u32, u32) {
    let date = days
        .checked_add(UNIX_EPOCH_DAYS_FROM_CE)
        .and_then(NaiveDate::from_num_days_from_ce_opt)
        .unwrap_or(if days < 0 { NaiveDate::MIN } else { NaiveDate::MAX });
    (date.year(), date.month(), date.day())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_date_formats_parse() {
        assert_eq!(parse_date("1970-01-02"), Some(1));
        assert_eq!(parse_date("2026/11/20"), parse_date("2026-11-20"));
        assert_eq!(parse_date("2026-11-20T08:15:42.1234567"), parse_date("2026-11-20"));
        assert_eq!(ymd(parse_date("2024-02-29").unwrap()), (2024, 2, 29));
        assert_eq!(ymd(0), (1970, 1, 1));
        assert_eq!(ymd(-1), (1969, 12, 31));
        assert_eq!(ymd(i32::MAX), ymd(i32::MAX - 1), "saturates instead of panicking");
        assert_eq!(parse_date("20/11/2026"), None);
        assert_eq!(parse_date("2026-11-20xyz"), None);
        assert_eq!(parse_date("2026-02-30"), None);
        assert_eq!(parse_date("2026-11/20"), None);
        assert_eq!(parse_date("2026-1-200"), None);
        assert_eq!(parse_date(" 1969-12-31 "), Some(-1));
        assert_eq!(parse_date("2026"), None);
        assert_eq!(NaiveDate::from_ymd_opt(1970, 1, 1).unwrap().num_days_from_ce(), UNIX_EPOCH_DAYS_FROM_CE);
    }

    #[test]
    fn timestamps_with_or_without_zone_are_utc() {
        let with_z = parse_timestamp("2026-11-20T21:00:00.0000000Z").unwrap();
        let naive_seven = parse_timestamp("2026-11-20T21:00:00.0000000").unwrap();
        let naive_six = parse_timestamp("2026-11-20T21:00:00.000000").unwrap();
        assert_eq!(with_z, naive_seven);
        assert_eq!(with_z, naive_six);
        assert_eq!(parse_timestamp("2026-11-20T21:00:00.5+01:00").unwrap(), with_z - 3_600_000_000 + 500_000);
        assert_eq!(parse_timestamp("nope"), None);
    }

    #[test]
    fn last_refreshes_as_recorded_read_to_the_microsecond() {
        // Seven digits (a .NET tick) are cut to microseconds, the precision of the tables.
        let moment = parse_timestamp("2025-11-03T17:22:08.441773+00:00").unwrap();
        assert_eq!(moment.rem_euclid(1_000_000), 441_773);
        for text in [
            "2025-11-03T17:22:08.4417736",
            "2025-11-03T17:22:08.441773",
            "2025-11-03T17:22:08.4417736Z",
            "2025-11-03T17:22:08.441773Z",
        ] {
            assert_eq!(parse_timestamp(text), Some(moment), "{text}");
        }
    }
}
