//! Exact money (docs/tables.md#money): the amount, price and quantity fields of a payload read
//! from the digits the JSON wrote, never through a binary float, and turned into the unscaled
//! integer of an Arrow `decimal128` column.
//!
//! serde_json reads a number into an `f64` before any visitor sees it; its
//! `arbitrary_precision` feature would keep the digits, but it changes how every
//! `serde_json::Value` of the crate (the sandbox's included) holds numbers. A money field is read
//! as a [`RawValue`] instead: the slice of the payload that holds it, borrowed, no allocation.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// How a table holds money: `float64` (the default of the client, for compatibility) or an exact
/// `decimal128` of a documented precision and scale per column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MoneyType {
    #[default]
    Float,
    Decimal,
}

impl MoneyType {
    /// The option's name as the Python API and the command line spell it.
    pub fn name(self) -> &'static str {
        match self {
            MoneyType::Float => "float",
            MoneyType::Decimal => "decimal",
        }
    }

    /// Reads the option `money`; anything else is an error naming the option and its choices.
    pub fn parse(value: &str) -> Result<Self, crate::Error> {
        match value {
            "float" => Ok(MoneyType::Float),
            "decimal" => Ok(MoneyType::Decimal),
            other => Err(crate::Error::config(
                "money",
                format!("must be \"float\" or \"decimal\", not {:?}", shorten(other)),
            )),
        }
    }
}

fn shorten(text: &str) -> String {
    text.chars().take(40).collect()
}

/// The precision and scale of a decimal money column (docs/tables.md#money).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecimalSize {
    /// Digits in all.
    pub precision: u8,
    /// Digits after the point.
    pub scale: i8,
}

/// Amounts, balances and values: 14 digits before the point and 4 after, enough for the
/// three-decimal currencies and a market value in hundredths of a cent, in 64 bits as Parquet
/// stores a precision up to 18.
pub const AMOUNT: DecimalSize = DecimalSize { precision: 18, scale: 4 };
/// Quantities of a security: fractional units of funds and coins, to 8 places.
pub const QUANTITY: DecimalSize = DecimalSize { precision: 18, scale: 8 };
/// Prices of one unit of a security, to 8 places.
pub const PRICE: DecimalSize = DecimalSize { precision: 18, scale: 8 };

impl fmt::Display for DecimalSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "decimal128({}, {})", self.precision, self.scale)
    }
}

/// A number as the payload wrote it: the text of a JSON number, or of a numeric string, trimmed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Written<'a>(pub Cow<'a, str>);

/// The number type of a payload model: `f64` (read leniently, `de::number`) or [`Written`].
pub trait JsonNumber<'de>: Sized {
    /// A number, a numeric string, or nothing (anything else is read as missing, as `f64` reads it).
    fn read<D: Deserializer<'de>>(deserializer: D) -> Result<Option<Self>, D::Error>;
}

impl<'de> JsonNumber<'de> for f64 {
    fn read<D: Deserializer<'de>>(deserializer: D) -> Result<Option<Self>, D::Error> {
        super::de::number(deserializer)
    }
}

impl<'de> JsonNumber<'de> for Written<'de> {
    fn read<D: Deserializer<'de>>(deserializer: D) -> Result<Option<Self>, D::Error> {
        let raw = <&'de RawValue>::deserialize(deserializer)?.get();
        let text: Cow<'de, str> = match raw.as_bytes().first() {
            Some(b'-' | b'0'..=b'9') => return Ok(Some(Written(Cow::Borrowed(raw)))),
            Some(b'"') if !raw.contains('\\') => Cow::Borrowed(raw.get(1..raw.len() - 1).unwrap_or_default()),
            Some(b'"') => Cow::Owned(serde_json::from_str::<String>(raw).map_err(serde::de::Error::custom)?),
            // null, a boolean, a list or an object: missing, as for a float.
            _ => return Ok(None),
        };
        // A numeric string is present exactly when the float reading finds a number in it, so
        // that both money types agree on which cells are missing.
        let trimmed = text.trim();
        if trimmed.parse::<f64>().is_err() {
            return Ok(None);
        }
        Ok(Some(Written(match text {
            Cow::Borrowed(text) => Cow::Borrowed(text.trim()),
            Cow::Owned(text) => Cow::Owned(text.trim().to_owned()),
        })))
    }
}

/// The number `text` as the unscaled integer of a `size` decimal: `12.5` at scale 4 is `125000`.
/// A number with more places than the scale, or more digits before the point than the precision
/// leaves, is refused with the rule it breaks: money is never rounded.
pub fn unscaled(text: &str, size: DecimalSize) -> Result<i128, String> {
    let not_decimal = || "is not a decimal number".to_owned();
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, text.get(1..).unwrap_or_default()),
        Some(b'+') => (false, text.get(1..).unwrap_or_default()),
        _ => (false, text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (unsigned.get(..at).unwrap_or_default(), Some(unsigned.get(at + 1..).unwrap_or_default())),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if whole.len() + fraction.len() == 0 || !all_digits(whole) || !all_digits(fraction) {
        return Err(not_decimal());
    }
    let exponent: i64 = match exponent {
        None => 0,
        Some(written) => exponent_of(written).ok_or_else(not_decimal)?,
    };
    // The value is the significant digits (neither leading nor trailing zeros) × 10^`power`,
    // read in place: no text is made per cell.
    let digits = || whole.bytes().chain(fraction.bytes());
    let Some(lead) = digits().position(|digit| digit != b'0') else {
        return Ok(0);
    };
    let total = whole.len() + fraction.len();
    let trailing = digits().rev().take_while(|digit| *digit == b'0').count();
    let kept = total - lead - trailing;
    let power = exponent
        .saturating_sub(i64::try_from(fraction.len()).unwrap_or(i64::MAX))
        .saturating_add(i64::try_from(trailing).unwrap_or(i64::MAX));
    let shift = power.saturating_add(i64::from(size.scale));
    if shift < 0 {
        return Err(format!("has more than {} decimal places", size.scale));
    }
    let integer_digits = i64::from(size.precision) - i64::from(size.scale);
    if i64::try_from(kept).unwrap_or(i64::MAX).saturating_add(shift) > i64::from(size.precision) {
        return Err(format!("has more than {integer_digits} digits before the point"));
    }
    // At most `precision` (38 at most) digits from here: no step can overflow an i128, and
    // `checked_` says so rather than trust it.
    let mut value: i128 = 0;
    for digit in digits().skip(lead).take(kept) {
        value = value
            .checked_mul(10)
            .and_then(|value| value.checked_add(i128::from(digit - b'0')))
            .ok_or_else(not_decimal)?;
    }
    for _ in 0..shift {
        value = value.checked_mul(10).ok_or_else(not_decimal)?;
    }
    Ok(if negative { -value } else { value })
}

/// An exponent's digits, saturated: `1e99999999999999999999` is simply too large.
fn exponent_of(written: &str) -> Option<i64> {
    let (negative, digits) = match written.as_bytes().first() {
        Some(b'-') => (true, written.get(1..)?),
        Some(b'+') => (false, written.get(1..)?),
        _ => (false, written),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let magnitude =
        digits.bytes().fold(0_i64, |sum, digit| sum.saturating_mul(10).saturating_add(i64::from(digit - b'0')));
    Some(if negative { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Row<'a> {
        #[serde(borrow, default, deserialize_with = "JsonNumber::read")]
        n: Option<Written<'a>>,
    }

    fn written(json: &str) -> Option<String> {
        serde_json::from_str::<Row>(json).unwrap().n.map(|w| w.0.into_owned())
    }

    #[test]
    fn a_money_field_keeps_the_digits_the_payload_wrote() {
        assert_eq!(written(r#"{"n": 0.1}"#).as_deref(), Some("0.1"));
        assert_eq!(written(r#"{"n": 12345678901234.123456789}"#).as_deref(), Some("12345678901234.123456789"));
        assert_eq!(written(r#"{"n": -1E2}"#).as_deref(), Some("-1E2"));
        assert_eq!(written(r#"{"n": " 2.50 "}"#).as_deref(), Some("2.50"));
        assert_eq!(written(r#"{"n": "\u0031.5"}"#).as_deref(), Some("1.5"));
        // What a float reads as missing is missing here too.
        for missing in [r#"{"n": null}"#, r#"{"n": "abc"}"#, r#"{"n": ""}"#, r#"{"n": true}"#, r#"{"n": [1]}"#, "{}"] {
            assert_eq!(written(missing), None, "{missing}");
        }
    }

    #[test]
    fn digits_become_the_unscaled_integer_exactly() {
        assert_eq!(unscaled("0.1", AMOUNT), Ok(1000));
        assert_eq!(unscaled("-12.5", AMOUNT), Ok(-125_000));
        assert_eq!(unscaled("1e2", AMOUNT), Ok(1_000_000));
        assert_eq!(unscaled("1.5E-3", AMOUNT), Ok(15));
        assert_eq!(unscaled("2.50000000", AMOUNT), Ok(25_000));
        assert_eq!(unscaled("-0.00", AMOUNT), Ok(0));
        assert_eq!(unscaled("+7", AMOUNT), Ok(70_000));
        assert_eq!(unscaled(".5", AMOUNT), Ok(5_000));
        assert_eq!(unscaled("5.", AMOUNT), Ok(50_000));
        assert_eq!(unscaled("99999999999999.9999", AMOUNT), Ok(999_999_999_999_999_999));
        assert_eq!(unscaled("0.00000001", QUANTITY), Ok(1));
        assert_eq!(unscaled("0e999999999999999999999", AMOUNT), Ok(0));
    }

    #[test]
    fn a_number_that_does_not_fit_is_refused_never_rounded() {
        assert_eq!(unscaled("0.00001", AMOUNT), Err("has more than 4 decimal places".to_owned()));
        assert_eq!(unscaled("1.23456", AMOUNT), Err("has more than 4 decimal places".to_owned()));
        assert_eq!(unscaled("100000000000000", AMOUNT), Err("has more than 14 digits before the point".to_owned()));
        assert_eq!(unscaled("1e14", AMOUNT), Err("has more than 14 digits before the point".to_owned()));
        assert_eq!(unscaled("1e-999999999999999999999", AMOUNT), Err("has more than 4 decimal places".to_owned()));
        for text in ["NaN", "inf", "-infinity", "1.2.3", "", "-", "1e", "e5", "0x10"] {
            assert_eq!(unscaled(text, AMOUNT), Err("is not a decimal number".to_owned()), "{text}");
        }
    }
}
