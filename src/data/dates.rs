//! Lenient date parsing: the service writes dates as `YYYY-MM-DD` (transactions), `YYYY/MM/DD`
//! (attribute transactions) and timestamps with 6 or 7 fractional digits, with or without `Z`
//! (a timestamp without a zone is UTC).

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};

/// Days since 1970-01-01 (Arrow's `date32`), or None when `text` is not a date.
pub fn parse_date(text: &str) -> Option<i32> {
    let text = text.trim();
    let day = text.get(..10)?;
    let date = NaiveDate::parse_from_str(day, "%Y-%m-%d").or_else(|_| NaiveDate::parse_from_str(day, "%Y/%m/%d")).ok()?;
    // A longer text must be a timestamp of that day, not a stray suffix.
    if text.len() > 10 && !matches!(text.as_bytes()[10], b'T' | b' ') {
        return None;
    }
    Some((date - NaiveDate::from_ymd_opt(1970, 1, 1)?).num_days() as i32)
}

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

/// (year, month, day) of a `date32` value.
pub fn ymd(days: i32) -> (i32, u32, u32) {
    use chrono::Datelike;
    let date = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap() + chrono::Duration::days(i64::from(days));
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
        assert_eq!(parse_date("20/11/2026"), None);
        assert_eq!(parse_date("2026-11-20xyz"), None);
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
}
