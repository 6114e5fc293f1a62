//! Portable lazy butterflies (Harvey, "Faster arithmetic for number-theoretic
//! transforms", 2014) with the tables' 64-bit Shoup companions.
//!
//! Forward (Cooley-Tukey): values stay in `[0, 4Q)`; each butterfly folds its upper input
//! to `[0, 2Q)` and `mul_shoup_lazy` returns `[0, 2Q)`, so both outputs are `< 4Q`.
//! Inverse (Gentleman-Sande): values stay in `[0, 2Q)`. One final pass reduces to `[0, Q)`,
//! and since every step is exact modulo `Q` the output equals the reference's.
//! Needs `4Q < 2^64`, which `Modulus` guarantees (`Q < 2^62`).

use std::sync::Arc;

use super::{NttEngine, NttTables};
use crate::modulus::{csub, mul_shoup_lazy};

pub struct Harvey {
    t: Arc<NttTables>,
}

impl Harvey {
    pub fn new(t: Arc<NttTables>) -> Self {
        Harvey { t }
    }
}

impl NttEngine for Harvey {
    fn name(&self) -> &'static str {
        "harvey"
    }

    fn forward(&self, a: &mut [u64]) {
        forward(&self.t, a);
    }

    fn inverse(&self, a: &mut [u64]) {
        inverse(&self.t, a);
    }
}

/// The forward transform; also the fallback of the SIMD variants for moduli they decline.
pub(super) fn forward(t: &NttTables, a: &mut [u64]) {
    let (q, n) = (t.modulus.q, t.n);
    let q2 = 2 * q;
    assert_eq!(a.len(), n, "one polynomial of N coefficients");
    let mut half = n;
    let mut m = 1;
    while m < n {
        half >>= 1;
        for (i, block) in a.chunks_exact_mut(2 * half).enumerate() {
            let (w, ws) = (t.psi_rev[m + i], t.psi_rev_shoup[m + i]);
            let (lo, hi) = block.split_at_mut(half);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let u = csub(*x, q2);
                let v = scalar(mul_shoup_lazy(*y, w, ws, q));
                *x = u + v;
                *y = u + q2 - v;
            }
        }
        m <<= 1;
    }
    for x in a.iter_mut() {
        *x = csub(csub(*x, q2), q);
    }
}

/// The inverse transform, `1/N` included.
pub(super) fn inverse(t: &NttTables, a: &mut [u64]) {
    let (q, n) = (t.modulus.q, t.n);
    let q2 = 2 * q;
    assert_eq!(a.len(), n, "one polynomial of N coefficients");
    let mut half = 1;
    let mut m = n;
    while m > 1 {
        let h = m >> 1;
        for (i, block) in a.chunks_exact_mut(2 * half).enumerate() {
            let (w, ws) = (t.ipsi_rev[h + i], t.ipsi_rev_shoup[h + i]);
            let (lo, hi) = block.split_at_mut(half);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let (u, v) = (*x, *y);
                *x = csub(u + v, q2);
                *y = scalar(mul_shoup_lazy(u + q2 - v, w, ws, q));
            }
        }
        half <<= 1;
        m = h;
    }
    for x in a.iter_mut() {
        *x = csub(mul_shoup_lazy(*x, t.n_inv, t.n_inv_shoup, q), q);
    }
}

/// Keeps the loop scalar. Without it LLVM vectorizes these loops for SSE2, building each
/// 64x64-bit product from `pmuludq` pieces, which measured 1.4x slower than the scalar
/// `mul`; a value through `black_box` costs one store and load per butterfly instead.
#[inline(always)]
fn scalar(v: u64) -> u64 {
    std::hint::black_box(v)
}
