//! Pseudonyms: the same real value always becomes the same fake one, in every cassette, so that
//! a later request naming an id (a RequestId in a body, an `...Async/{requestId}` path) still
//! matches, and a test that passes its real LoginId again replays (docs/cassettes.md#redaction).
//! They are derived by SHA-256, which cannot be turned back into the value: a GUID has far too
//! many values to try them all.

use ring::digest::{digest, SHA256};

/// What every pseudonym GUID starts with ("cassette"): a reader sees it is not a real id, and
/// the redactor leaves it as it is when a replayed answer's id is sent back.
const PREFIX: &str = "ca55e77e-";

/// The 32 bytes of `value`'s hash, in the domain `domain` (so that a GUID and a name of the
/// same text do not share their pseudonym).
fn hashed(domain: &str, value: &str) -> [u8; 32] {
    let mut input = Vec::with_capacity(domain.len() + value.len() + 24);
    input.extend_from_slice(b"bankfeed cassette\0");
    input.extend_from_slice(domain.as_bytes());
    input.push(0);
    input.extend_from_slice(value.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(digest(&SHA256, &input).as_ref());
    out
}

/// The pseudonym GUID of the id `real`: a version-4-shaped GUID starting with [`PREFIX`].
pub(crate) fn guid(real: &str) -> String {
    let hex = hashed("id", real).iter().fold(String::with_capacity(64), |mut hex, byte| {
        hex.push(char::from_digit(u32::from(byte >> 4), 16).unwrap_or('0'));
        hex.push(char::from_digit(u32::from(byte & 0xf), 16).unwrap_or('0'));
        hex
    });
    let hex = hex.as_bytes();
    let part = |from: usize, to: usize| String::from_utf8_lossy(hex.get(from..to).unwrap_or_default()).into_owned();
    format!("{PREFIX}{}-4{}-8{}-{}", part(0, 4), part(4, 7), part(7, 10), part(10, 22))
}

/// Whether `text` is a pseudonym [`guid`] made.
pub(crate) fn is_pseudonym(text: &str) -> bool {
    text.len() == 36 && text.get(..PREFIX.len()).is_some_and(|start| start.eq_ignore_ascii_case(PREFIX))
}

/// Whether `text` is a GUID (8-4-4-4-12 hex digits), as the service's ids are.
pub(crate) fn is_guid(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(at, byte)| match at {
            8 | 13 | 18 | 23 => *byte == b'-',
            _ => byte.is_ascii_hexdigit(),
        })
}

/// `real` with the same shape and other characters: each digit another digit, each letter
/// another letter of the same case; spaces, punctuation and `@` stay. An account number keeps its
/// length, an email its look, and the same value always becomes the same text.
pub(crate) fn disguise(field: &str, real: &str) -> String {
    let mut stream = hashed(field, real).to_vec();
    let mut round: u32 = 0;
    let mut at = 0;
    let mut next = || {
        if at >= stream.len() {
            round = round.wrapping_add(1);
            stream = hashed(&format!("{field}#{round}"), real).to_vec();
            at = 0;
        }
        let byte = stream.get(at).copied().unwrap_or(0);
        at += 1;
        byte
    };
    real.chars()
        .map(|c| {
            if c.is_ascii_digit() {
                char::from(b'0' + next() % 10)
            } else if c.is_ascii_uppercase() {
                char::from(b'A' + next() % 26)
            } else if c.is_alphabetic() {
                char::from(b'a' + next() % 26)
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pseudonym_is_a_stable_guid_that_says_what_it_is() {
        let real = "5e1e8d5a-3f2b-4c8e-9b1a-0d2c3b4a5f60";
        let fake = guid(real);
        assert_eq!(fake, guid(real));
        assert!(is_guid(&fake) && is_pseudonym(&fake) && !is_pseudonym(real), "{fake}");
        assert_ne!(guid("another"), fake);
    }

    #[test]
    fn a_disguise_keeps_the_shape_and_not_the_value() {
        let fake = disguise("Email", "Jane.Doe+1@example.com");
        assert_eq!(fake.len(), "Jane.Doe+1@example.com".len());
        assert!(fake.contains('@') && fake.contains('+') && fake != "Jane.Doe+1@example.com", "{fake}");
        assert!(fake.chars().next().unwrap().is_ascii_uppercase());
        let digits = disguise("AccountNumber", "0012345678901234567890123456789012345");
        assert!(digits.chars().all(|c| c.is_ascii_digit()) && digits.len() == 37);
        assert_eq!(disguise("AccountNumber", "1234"), disguise("AccountNumber", "1234"));
    }
}
