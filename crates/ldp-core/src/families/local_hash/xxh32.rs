//! `XXH32` of short decimal strings, straight-line: the hash LH clients and servers apply
//! to an item's ASCII decimal text. The values equal `xxhash_rust::xxh32::xxh32` (tested
//! on every item below 2^21 and at the length boundaries); written out so that a scan
//! over the domain can share work between consecutive items (see [`super::scan`]).

pub(super) const PRIME1: u32 = 0x9E37_79B1;
pub(super) const PRIME2: u32 = 0x85EB_CA77;
pub(super) const PRIME3: u32 = 0xC2B2_AE3D;
pub(super) const PRIME4: u32 = 0x27D4_EB2F;
pub(super) const PRIME5: u32 = 0x1656_67B1;

/// `XXH32` of the ASCII decimal representation of `item`.
///
/// ```
/// use ldp_core::families::local_hash::xxh32_decimal;
/// assert_eq!(xxh32_decimal(123, 7), xxhash_rust::xxh32::xxh32(b"123", 7));
/// ```
#[inline]
pub fn xxh32_decimal(item: u32, seed: u32) -> u32 {
    let d = Decimal::new(item);
    xxh32_short(&d.digits, d.len, seed)
}

/// The state `XXH32` starts from for an input of `len` bytes.
#[inline(always)]
pub(super) fn initial(len: usize, seed: u32) -> u32 {
    seed.wrapping_add(PRIME5).wrapping_add(len as u32)
}

/// One 4-byte round (inputs of 4 bytes or more).
#[inline(always)]
pub(super) fn round4(h: u32, word: u32) -> u32 {
    h.wrapping_add(word.wrapping_mul(PRIME3))
        .rotate_left(17)
        .wrapping_mul(PRIME4)
}

/// One single-byte round (the bytes after the last full word).
#[inline(always)]
pub(super) fn round1(h: u32, byte: u8) -> u32 {
    h.wrapping_add(u32::from(byte).wrapping_mul(PRIME5))
        .rotate_left(11)
        .wrapping_mul(PRIME1)
}

/// The final mix.
#[inline(always)]
pub(super) fn avalanche(mut h: u32) -> u32 {
    h ^= h >> 15;
    h = h.wrapping_mul(PRIME2);
    h ^= h >> 13;
    h = h.wrapping_mul(PRIME3);
    h ^ (h >> 16)
}

/// The little-endian word of `bytes[i..i + 4]`.
#[inline(always)]
pub(super) fn word(bytes: &[u8; 12], i: usize) -> u32 {
    u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]])
}

/// `XXH32(bytes[..len], seed)` for inputs under 16 bytes (no 16-byte stripes), without
/// the general function's length dispatch.
#[inline(always)]
pub(super) fn xxh32_short(bytes: &[u8; 12], len: usize, seed: u32) -> u32 {
    let mut h = initial(len, seed);
    let mut i = 0;
    while i + 4 <= len {
        h = round4(h, word(bytes, i));
        i += 4;
    }
    while i < len {
        h = round1(h, bytes[i]);
        i += 1;
    }
    avalanche(h)
}

/// The ASCII decimal digits of an integer, advanced without a division.
#[derive(Debug, Clone)]
pub(super) struct Decimal {
    pub(super) digits: [u8; 12],
    pub(super) len: usize,
}

impl Decimal {
    /// The digits of `v` (at most 10).
    pub(super) fn new(v: u32) -> Self {
        let mut buf = itoa::Buffer::new();
        let text = buf.format(v).as_bytes();
        let mut digits = [0u8; 12];
        digits[..text.len()].copy_from_slice(text);
        Decimal {
            digits,
            len: text.len(),
        }
    }

    /// The digits of `10^n` (n at most 9).
    pub(super) fn power_of_ten(n: usize) -> Self {
        let mut digits = [b'0'; 12];
        digits[0] = b'1';
        Decimal { digits, len: n + 1 }
    }

    /// The next integer's digits (the tests walk the domain with it).
    #[cfg(test)]
    fn increment(&mut self) {
        if !self.increment_prefix(self.len) {
            // 99...9 + 1: one more digit.
            self.digits.copy_within(0..self.len, 1);
            self.digits[0] = b'1';
            self.len += 1;
        }
    }

    /// Adds one to the number formed by the first `n` digits (adds `10^(len - n)` to
    /// the whole), keeping the length; false (and all those digits 0) on overflow.
    #[inline(always)]
    pub(super) fn increment_prefix(&mut self, n: usize) -> bool {
        let mut i = n;
        while i > 0 {
            i -= 1;
            if self.digits[i] == b'9' {
                self.digits[i] = b'0';
            } else {
                self.digits[i] += 1;
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xxhash_rust::xxh32::xxh32;

    #[test]
    fn the_straight_line_hash_is_xxh32_of_the_decimal_text() {
        let mut d = Decimal::new(0);
        for v in 0..(1u32 << 21) {
            let seed = v.wrapping_mul(2_654_435_761);
            let text = v.to_string();
            assert_eq!(&d.digits[..d.len], text.as_bytes(), "{v}");
            assert_eq!(
                xxh32_short(&d.digits, d.len, seed),
                xxh32(text.as_bytes(), seed),
                "{v}"
            );
            d.increment();
        }
        for v in [
            9_999_999u32,
            10_000_000,
            16_777_215,
            12_345_678,
            999_999_999,
            u32::MAX - 1,
        ] {
            let mut d = Decimal::new(v);
            d.increment();
            let next = (v + 1).to_string();
            assert_eq!(&d.digits[..d.len], next.as_bytes());
            for seed in [0, 1, u32::MAX, 0xDEAD_BEEF] {
                assert_eq!(
                    xxh32_decimal(v, seed),
                    xxh32(v.to_string().as_bytes(), seed)
                );
            }
        }
    }

    #[test]
    fn a_prefix_increment_adds_a_power_of_ten() {
        let mut d = Decimal::new(1_290);
        assert!(d.increment_prefix(3));
        assert_eq!(&d.digits[..d.len], b"1300");
        let mut d = Decimal::new(990);
        assert!(!d.increment_prefix(2));
        assert_eq!(&d.digits[..d.len], b"000");
    }
}
