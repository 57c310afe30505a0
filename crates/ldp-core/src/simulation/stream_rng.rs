//! The seeded streams' generator: ChaCha8 as rand_chacha's `ChaCha8Rng` computes it, word
//! for word, with the block function in 128-bit SIMD where rand_chacha has none.
//!
//! rand_chacha computes its four blocks per refill with SIMD on x86 and ARM, and in scalar
//! code elsewhere. On WebAssembly that scalar refill was a fifth of the browser's measuring
//! time (Adult's education column, every protocol, 20 runs, in Node). Where a module is
//! built with `simd128` (the page's measuring workers), the four blocks are computed here
//! instead, one per lane of each 128-bit vector; everywhere else the generator is
//! rand_chacha's. Either way a stream's words are the same.

use std::convert::Infallible;

use rand::{TryCryptoRng, TryRng};

/// The generator of one seeded stream ([`stream_rng`](super::stream_rng)): ChaCha8 with a
/// 256-bit key, a 64-bit block counter from 0, and a 64-bit stream id. Its words are those
/// of `rand_chacha::ChaCha8Rng::from_seed(key)` after `set_stream(stream)`, and are drawn
/// the same way (`next_u64` joins two words, low first).
#[derive(Clone, Debug)]
pub struct StreamRng(Inner);

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
type Inner = rand_chacha::ChaCha8Rng;

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
type Inner = rand::rand_core::block::BlockRng<simd::Core>;

impl StreamRng {
    /// The stream `stream` of the key `key`.
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    pub(crate) fn new(key: [u8; 32], stream: u64) -> Self {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::from_seed(key);
        rng.set_stream(stream);
        Self(rng)
    }

    /// The stream `stream` of the key `key`.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    pub(crate) fn new(key: [u8; 32], stream: u64) -> Self {
        Self(rand::rand_core::block::BlockRng::new(simd::Core::new(
            &key, stream,
        )))
    }
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
impl TryRng for StreamRng {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.0.try_next_u32()
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.0.try_next_u64()
    }

    #[inline]
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Infallible> {
        self.0.try_fill_bytes(dest)
    }
}

/// As rand_chacha's `ChaCha8Rng` draws from its block buffer.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
impl TryRng for StreamRng {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.0.next_word())
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.0.next_u64_from_u32())
    }

    #[inline]
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Infallible> {
        self.0.fill_bytes(dest);
        Ok(())
    }
}

impl TryCryptoRng for StreamRng {}

/// ChaCha8's four-block refill with WebAssembly's 128-bit SIMD: lane j of vector i holds
/// word i of block j, so each quarter round works on four blocks at once.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use core::arch::wasm32::{
        u32x4, u32x4_add, u32x4_extract_lane, u32x4_shl, u32x4_shr, u32x4_splat, v128, v128_or,
        v128_xor,
    };
    use std::fmt;

    use rand::rand_core::block::Generator;

    /// "expand 32-byte k".
    const CONSTANTS: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];
    /// ChaCha8: four double rounds.
    const DOUBLE_ROUNDS: usize = 4;

    #[derive(Clone)]
    pub(crate) struct Core {
        /// The key as eight little-endian words.
        key: [u32; 8],
        /// The counter of the next refill's first block.
        block: u64,
        stream: u64,
    }

    /// The key is not shown.
    impl fmt::Debug for Core {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("Core").finish_non_exhaustive()
        }
    }

    impl Core {
        pub(crate) fn new(key: &[u8; 32], stream: u64) -> Self {
            Self {
                key: std::array::from_fn(|i| {
                    u32::from_le_bytes([key[4 * i], key[4 * i + 1], key[4 * i + 2], key[4 * i + 3]])
                }),
                block: 0,
                stream,
            }
        }
    }

    #[inline(always)]
    fn rotate_left(x: v128, n: u32) -> v128 {
        v128_or(u32x4_shl(x, n), u32x4_shr(x, 32 - n))
    }

    #[inline(always)]
    fn quarter_round(x: &mut [v128; 16], a: usize, b: usize, c: usize, d: usize) {
        x[a] = u32x4_add(x[a], x[b]);
        x[d] = rotate_left(v128_xor(x[d], x[a]), 16);
        x[c] = u32x4_add(x[c], x[d]);
        x[b] = rotate_left(v128_xor(x[b], x[c]), 12);
        x[a] = u32x4_add(x[a], x[b]);
        x[d] = rotate_left(v128_xor(x[d], x[a]), 8);
        x[c] = u32x4_add(x[c], x[d]);
        x[b] = rotate_left(v128_xor(x[b], x[c]), 7);
    }

    impl Generator for Core {
        type Output = [u32; 64];

        /// Blocks `block .. block + 4` (the counter wraps), block j at words `16 j ..`. Out of
        /// line: inlined into every caller's refill path it grew the module by a fifth.
        #[inline(never)]
        fn generate(&mut self, out: &mut [u32; 64]) {
            let counter = |j: u64| self.block.wrapping_add(j);
            let low = |j| counter(j) as u32;
            let high = |j| (counter(j) >> 32) as u32;
            let k = &self.key;
            let input: [v128; 16] = [
                u32x4_splat(CONSTANTS[0]),
                u32x4_splat(CONSTANTS[1]),
                u32x4_splat(CONSTANTS[2]),
                u32x4_splat(CONSTANTS[3]),
                u32x4_splat(k[0]),
                u32x4_splat(k[1]),
                u32x4_splat(k[2]),
                u32x4_splat(k[3]),
                u32x4_splat(k[4]),
                u32x4_splat(k[5]),
                u32x4_splat(k[6]),
                u32x4_splat(k[7]),
                u32x4(low(0), low(1), low(2), low(3)),
                u32x4(high(0), high(1), high(2), high(3)),
                u32x4_splat(self.stream as u32),
                u32x4_splat((self.stream >> 32) as u32),
            ];
            let mut x = input;
            for _ in 0..DOUBLE_ROUNDS {
                // Columns, then diagonals.
                quarter_round(&mut x, 0, 4, 8, 12);
                quarter_round(&mut x, 1, 5, 9, 13);
                quarter_round(&mut x, 2, 6, 10, 14);
                quarter_round(&mut x, 3, 7, 11, 15);
                quarter_round(&mut x, 0, 5, 10, 15);
                quarter_round(&mut x, 1, 6, 11, 12);
                quarter_round(&mut x, 2, 7, 8, 13);
                quarter_round(&mut x, 3, 4, 9, 14);
            }
            for (i, (&word, &start)) in x.iter().zip(&input).enumerate() {
                let word = u32x4_add(word, start);
                out[i] = u32x4_extract_lane::<0>(word);
                out[16 + i] = u32x4_extract_lane::<1>(word);
                out[32 + i] = u32x4_extract_lane::<2>(word);
                out[48 + i] = u32x4_extract_lane::<3>(word);
            }
            self.block = self.block.wrapping_add(4);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Word for word rand_chacha's stream, across refills, in every way of drawing. Native
    /// builds delegate to rand_chacha, so this pins the keying and the delegation; the SIMD
    /// blocks are checked the same way under Node (ldp-wasm's tests, built with simd128).
    #[test]
    fn draws_are_chacha8rng_s() {
        for (seed, stream) in [(0u8, 0u64), (7, 1), (200, u64::MAX)] {
            let key = std::array::from_fn(|i| seed.wrapping_mul(31).wrapping_add(i as u8));
            let mut ours = StreamRng::new(key, stream);
            let mut theirs = ChaCha8Rng::from_seed(key);
            theirs.set_stream(stream);
            for i in 0..300 {
                assert_eq!(ours.next_u32(), theirs.next_u32(), "word {i}");
                assert_eq!(ours.next_u64(), theirs.next_u64(), "u64 {i}");
                let (mut a, mut b) = ([0u8; 13], [0u8; 13]);
                ours.fill_bytes(&mut a);
                theirs.fill_bytes(&mut b);
                assert_eq!(a, b, "bytes {i}");
            }
        }
    }
}
