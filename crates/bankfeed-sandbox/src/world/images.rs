//! The 16 images of the `ImageSelection` challenge: real PNG files, built by hand.
//!
//! The real service sends about 4,000 base64 characters per image. An uncompressed 32x31 RGB
//! PNG is 3,075 bytes, 4,100 characters of base64, and needs no compression library: the
//! deflate stream is made of one stored block, so only CRC-32 and Adler-32 have to be computed.

use std::sync::OnceLock;

use base64::Engine as _;

pub(crate) const IMAGE_COUNT: usize = 16;
/// The image the user "chose" when enrolling: the right answer.
pub(crate) const ANSWER_INDEX: usize = 7;

const WIDTH: usize = 32;
const HEIGHT: usize = 31;
const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// The images as base64 strings, the same on every run.
pub(crate) fn images_base64() -> &'static [String] {
    static IMAGES: OnceLock<Vec<String>> = OnceLock::new();
    IMAGES.get_or_init(|| {
        (0..IMAGE_COUNT).map(|index| base64::engine::general_purpose::STANDARD.encode(png(index))).collect()
    })
}

/// Image `index`: its own hue (16 hues around the colour wheel) on a dark shade of it, in one
/// of four patterns, so no two look alike.
fn png(index: usize) -> Vec<u8> {
    let hue = (index * 360 / IMAGE_COUNT) as u32;
    let bright = hsv(hue, 255);
    let dark = hsv(hue, 70);
    let mut raw = Vec::with_capacity(HEIGHT * (1 + 3 * WIDTH));
    for y in 0..HEIGHT {
        raw.push(0); // filter type None
        for x in 0..WIDTH {
            let on = match index % 4 {
                0 => (y / 4) % 2 == 0,
                1 => (x / 4) % 2 == 0,
                2 => (x / 4 + y / 4) % 2 == 0,
                _ => ((x + y) / 4) % 2 == 0,
            };
            raw.extend_from_slice(if on { &bright } else { &dark });
        }
    }

    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&(WIDTH as u32).to_be_bytes());
    header.extend_from_slice(&(HEIGHT as u32).to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]); // 8 bits per sample, RGB, deflate, no filter, no interlace

    let mut out = Vec::with_capacity(3100);
    out.extend_from_slice(&SIGNATURE);
    chunk(&mut out, *b"IHDR", &header);
    chunk(&mut out, *b"IDAT", &zlib_stored(&raw));
    chunk(&mut out, *b"IEND", &[]);
    out
}

fn chunk(out: &mut Vec<u8>, kind: [u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(&kind);
    out.extend_from_slice(data);
    let crc = crc32_update(crc32_update(0xffff_ffff, &kind), data) ^ 0xffff_ffff;
    out.extend_from_slice(&crc.to_be_bytes());
}

/// A zlib stream of stored (uncompressed) deflate blocks, each at most 65,535 bytes.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    // CMF 0x78 (deflate, 32K window), FLG 0x01: 0x7801 is a multiple of 31, as zlib requires.
    let mut out = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = if data.is_empty() { vec![data] } else { data.chunks(0xffff).collect() };
    for (i, block) in blocks.iter().enumerate() {
        let last = i + 1 == blocks.len();
        out.push(u8::from(last)); // BFINAL, then BTYPE 00 (stored)
        let len = block.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

const CRC_TABLE: [u32; 256] = crc_table();

#[expect(clippy::indexing_slicing, reason = "n counts below 256, the table's length")]
const fn crc_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let mut c = n as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        table[n] = c;
        n += 1;
    }
    table
}

#[expect(clippy::indexing_slicing, reason = "masked with 0xff: below 256, the table's length")]
fn crc32_update(mut crc: u32, bytes: &[u8]) -> u32 {
    for &byte in bytes {
        crc = CRC_TABLE[((crc ^ u32::from(byte)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % MOD;
        b = (b + a) % MOD;
    }
    (b << 16) | a
}

/// A colour of hue `hue` (degrees) at full saturation and brightness `value`.
fn hsv(hue: u32, value: u32) -> [u8; 3] {
    let sector = hue / 60;
    let rising = value * (hue % 60) / 60;
    let falling = value - rising;
    let (r, g, b) = match sector {
        0 => (value, rising, 0),
        1 => (falling, value, 0),
        2 => (0, value, rising),
        3 => (0, falling, value),
        4 => (rising, 0, value),
        _ => (value, 0, falling),
    };
    [r as u8, g as u8, b as u8]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_match_known_values() {
        // Reference values of the standard check string.
        assert_eq!(crc32_update(0xffff_ffff, b"123456789") ^ 0xffff_ffff, 0xcbf4_3926);
        assert_eq!(adler32(b"Wikipedia"), 0x11e6_0398);
    }

    #[test]
    fn images_are_distinct_and_about_4000_characters() {
        let images = images_base64();
        assert_eq!(images.len(), IMAGE_COUNT);
        for (i, image) in images.iter().enumerate() {
            assert_eq!(image.len(), 4100);
            assert!(images[..i].iter().all(|other| other != image));
        }
    }
}
