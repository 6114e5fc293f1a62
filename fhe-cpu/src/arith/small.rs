//! Arithmetic on 32-bit residues for moduli below `2^29` (the small bit-scheme rings):
//! [`SmallBarrett`] and slot-by-slot addition ([`add_mod`]), compiled three times
//! (portable, AVX2, AVX-512) and chosen by [`Isa`].
//!
//! `reduce_small`: Barrett with a 32-bit constant. For `k = bitlen(Q)`,
//! `mu = floor(2^(k-1+32) / Q) < 2^32` and `x < 2^(k+31)`, the estimate
//! `((x >> (k-1)) * mu) >> 32` is below `floor(x/Q)` by at most 3, so `x - est*Q < 4Q`
//! and two conditional subtractions (of `2Q`, then `Q`) finish it.

use crate::mem::Isa;

/// Constants of `reduce_small` for one modulus.
#[derive(Clone, Copy, Debug)]
pub struct SmallBarrett {
    pub q: u64,
    pub shift: u32,
    pub mu: u64,
}

impl SmallBarrett {
    pub fn new(q: u64) -> SmallBarrett {
        let k = 64 - q.leading_zeros();
        assert!(k <= 29, "SmallBarrett needs Q < 2^29");
        let mu = (1u128 << (k - 1 + 32)) / q as u128;
        debug_assert!(mu < 1 << 32);
        SmallBarrett { q, shift: k - 1, mu: mu as u64 }
    }

    /// `x mod Q` for `x < 2^(k+31)`.
    #[inline(always)]
    pub fn reduce(&self, x: u64) -> u64 {
        let est = (((x >> self.shift) as u32 as u64) * self.mu) >> 32;
        let r = x.wrapping_sub(est * self.q);
        let r = r.min(r.wrapping_sub(2 * self.q));
        r.min(r.wrapping_sub(self.q))
    }
}

/// `x <- x + y mod q` slot by slot, both operands in `[0, q)`, `q < 2^31`.
#[inline(always)]
fn add_mod_body(q: u32, x: &mut [u32], y: &[u32]) {
    assert_eq!(x.len(), y.len(), "add_mod: operand lengths");
    for (x, &y) in x.iter_mut().zip(y) {
        let t = *x + y;
        *x = t.min(t.wrapping_sub(q));
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_mod_avx2(q: u32, x: &mut [u32], y: &[u32]) {
    add_mod_body(q, x, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn add_mod_avx512(q: u32, x: &mut [u32], y: &[u32]) {
    add_mod_body(q, x, y)
}

/// See [`add_mod_body`]; dispatches on `isa`. The step's accumulator updates: compiled
/// for the baseline ISA they ran SSE2, which has no unsigned 32-bit minimum.
pub fn add_mod(isa: Isa, q: u32, x: &mut [u32], y: &[u32]) {
    match isa {
        Isa::Portable => add_mod_body(q, x, y),
        // SAFETY: `Isa::detect` returned it only after checking the CPU's features.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { add_mod_avx2(q, x, y) },
        // SAFETY: `Isa::detect` returned it only after checking the CPU's features.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { add_mod_avx512(q, x, y) },
    }
}
