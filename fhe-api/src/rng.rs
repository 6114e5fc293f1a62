//! Randomness: one 32-byte seed expanded with ChaCha20, one domain-separated stream per
//! key component, and integer-only samplers.
//!
//! Stream derivation (documented so any implementation can reproduce it):
//!
//! ```text
//! stream_key(seed, label, index) = SHA-256("lux-fhe-v1" || 0x00 || label || 0x00 || LE64(index) || seed)
//! stream(seed, label, index)     = ChaCha20Rng::from_seed(stream_key(...))      (rand_chacha 0.9)
//! public_seed(master)            = SHA-256("lux-fhe-v1/public-seed" || master)
//! ```
//!
//! Secret components are drawn from streams of the master seed; the uniform `a` halves
//! of every public sample are drawn from streams of the *public* seed, which the
//! evaluation and public keys store in place of the `a` halves (seeded keys).

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use sha2::{Digest, Sha256};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// A 32-byte seed. Zeroized on drop: a master seed determines the secret key.
#[derive(Clone, PartialEq, Eq, Zeroize, ZeroizeOnDrop)]
pub struct Seed(pub [u8; 32]);

impl std::fmt::Debug for Seed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Seed(..)")
    }
}

impl Seed {
    /// A seed from the operating system's randomness.
    pub fn from_os() -> crate::Result<Seed> {
        let mut s = [0u8; 32];
        getrandom::fill(&mut s).map_err(|e| crate::Error::Randomness(e.to_string()))?;
        Ok(Seed(s))
    }

    /// A seed derived from a label and a counter (tests, equivalence sweeps).
    pub fn derive(root: &str, index: u64) -> Seed {
        let mut h = Sha256::new();
        h.update(root.as_bytes());
        h.update([0u8]);
        h.update(index.to_le_bytes());
        Seed(h.finalize().into())
    }
}

/// Stream labels: one per key component. Changing one changes every key byte.
pub mod label {
    pub const LWE_SECRET: &str = "lwe-secret";
    pub const RING_SECRET: &str = "ring-secret";
    pub const BSK_A: &str = "bsk-a";
    pub const BSK_E: &str = "bsk-e";
    pub const KSK_A: &str = "ksk-a";
    pub const KSK_E: &str = "ksk-e";
    pub const PK_A: &str = "pk-a";
    pub const PK_E: &str = "pk-e";
    pub const ENCRYPT: &str = "encrypt";
    /// Secret-key encryption of a programmable-bootstrapping block under the ring secret.
    pub const BLOCK_ENCRYPT: &str = "block-encrypt";
}

/// The public seed that expands the `a` halves of a key set's public samples.
pub fn public_seed(master: &Seed) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"lux-fhe-v1/public-seed");
    h.update(master.0);
    h.finalize().into()
}

/// The ChaCha20 stream for one key component.
pub fn stream(seed: &[u8; 32], label: &str, index: u64) -> Sampler {
    let mut h = Sha256::new();
    h.update(b"lux-fhe-v1");
    h.update([0u8]);
    h.update(label.as_bytes());
    h.update([0u8]);
    h.update(index.to_le_bytes());
    h.update(seed);
    let mut key: [u8; 32] = h.finalize().into();
    let rng = ChaCha20Rng::from_seed(key);
    key.zeroize();
    Sampler { rng }
}

/// Integer-only samplers over a ChaCha20 stream. Each consumes the stream in a fixed,
/// documented way, so two implementations that follow it draw the same values.
pub struct Sampler {
    rng: ChaCha20Rng,
}

impl Sampler {
    /// Raw 64-bit word.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Uniform in `[0, q)`: draw a `u32` when `bits(q-1) <= 32`, else a `u64`, keep the
    /// low `bits(q-1)` bits, reject `>= q`.
    #[inline]
    pub fn uniform_mod(&mut self, q: u64) -> u64 {
        let bits = 64 - (q - 1).leading_zeros();
        if bits <= 32 {
            let mask = ((1u64 << bits) - 1) as u32;
            loop {
                let x = (self.rng.next_u32() & mask) as u64;
                if x < q {
                    return x;
                }
            }
        }
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        loop {
            let x = self.rng.next_u64() & mask;
            if x < q {
                return x;
            }
        }
    }

    /// Fills `out` with values uniform in `[0, 2^bits)`, `bits <= 16`: each `u64` of the
    /// stream gives four values, its 16-bit lanes from the least significant up, each
    /// masked to `bits` (a final partial word's unused lanes are discarded).
    pub fn fill_pow2_u16(&mut self, bits: u32, out: &mut [u16]) {
        debug_assert!(bits <= 16);
        let mask = ((1u32 << bits) - 1) as u16;
        for chunk in out.chunks_mut(4) {
            let w = self.rng.next_u64();
            for (k, o) in chunk.iter_mut().enumerate() {
                *o = (w >> (16 * k)) as u16 & mask;
            }
        }
    }

    /// Fills `out` with values uniform in `[0, 2^bits)`, `16 < bits <= 32` (the wide LWE
    /// sets): each `u64` of the stream gives two values, its 32-bit halves from the least
    /// significant up, each masked to `bits`.
    pub fn fill_pow2_u32(&mut self, bits: u32, out: &mut [u32]) {
        debug_assert!(bits <= 32);
        let mask = ((1u64 << bits) - 1) as u32;
        for chunk in out.chunks_mut(2) {
            let w = self.rng.next_u64();
            for (k, o) in chunk.iter_mut().enumerate() {
                *o = (w >> (32 * k)) as u32 & mask;
            }
        }
    }

    /// Uniform binary in `{0, 1}`: the low bit of a `u32`.
    #[inline]
    pub fn binary(&mut self) -> i8 {
        (self.rng.next_u32() & 1) as i8
    }

    /// Uniform ternary in `{-1, 0, 1}`: the low two bits of a `u32`, rejecting 3.
    #[inline]
    pub fn ternary(&mut self) -> i8 {
        loop {
            let x = self.rng.next_u32() & 3;
            if x < 3 {
                return x as i8 - 1;
            }
        }
    }

    /// Centered binomial with parameter `eta <= 32` (variance `eta / 2`): one `u64`,
    /// `popcount(low eta bits) - popcount(next eta bits)`.
    #[inline]
    pub fn cbd(&mut self, eta: u32) -> i64 {
        debug_assert!(eta <= 32);
        let x = self.rng.next_u64();
        let m = (1u64 << eta) - 1;
        (x & m).count_ones() as i64 - ((x >> eta) & m).count_ones() as i64
    }
}

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): a fast, seeded, non-cryptographic generator for test and benchmark
/// inputs that must be the same on every machine (and in the OpenFHE peer's worker,
/// which draws the same values). Never for keys, errors or encryption randomness: those
/// come from [`stream`].
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// The generator whose first output mixes `state + 0x9e37_79b9_7f4a_7c15`.
    pub const fn new(state: u64) -> SplitMix64 {
        SplitMix64(state)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// `next_u64() % bound` (`bound > 0`; its bias is irrelevant for test data).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    /// Uniform in `[-1, 1)`: the top 53 bits as a fraction, doubled, minus one.
    pub fn next_signed_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }

    /// 32 bytes: four outputs, little-endian.
    pub fn seed_bytes(&mut self) -> [u8; 32] {
        let mut s = [0u8; 32];
        s.chunks_exact_mut(8).for_each(|c| c.copy_from_slice(&self.next_u64().to_le_bytes()));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference outputs of the published algorithm for seed 1234567 (the first
    /// three of the sequence in the authors' C code, splitmix64.c).
    #[test]
    fn splitmix64_matches_the_reference() {
        let mut r = SplitMix64::new(1234567);
        assert_eq!(
            [r.next_u64(), r.next_u64(), r.next_u64()],
            [6457827717110365317, 3203168211198807973, 9817491932198370423]
        );
    }

    #[test]
    fn streams_are_domain_separated_and_reproducible() {
        let s = [7u8; 32];
        let a: Vec<u64> = (0..4).map(|_| stream(&s, label::BSK_A, 0).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(stream(&s, label::BSK_A, 0).next_u64(), stream(&s, label::BSK_A, 1).next_u64());
        assert_ne!(stream(&s, label::BSK_A, 0).next_u64(), stream(&s, label::BSK_E, 0).next_u64());
    }

    #[test]
    fn samplers_have_the_stated_moments() {
        let mut r = stream(&[1u8; 32], "test", 0);
        let n = 200_000;
        let (mut sum, mut sq) = (0i64, 0i64);
        for _ in 0..n {
            let e = r.cbd(21);
            assert!(e.abs() <= 21);
            sum += e;
            sq += e * e;
        }
        let var = sq as f64 / n as f64;
        assert!((sum as f64 / n as f64).abs() < 0.05);
        assert!((var - 10.5).abs() < 0.3, "variance {var}");
        let t: Vec<i8> = (0..30_000).map(|_| r.ternary()).collect();
        for v in [-1i8, 0, 1] {
            let c = t.iter().filter(|&&x| x == v).count();
            assert!((9_000..11_000).contains(&c), "{v}: {c}");
        }
        for _ in 0..10_000 {
            assert!(r.uniform_mod(134_215_681) < 134_215_681);
        }
    }
}
