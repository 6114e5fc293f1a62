//! The radix-2 reference NTT: Cooley-Tukey forward (natural -> bit-reversed),
//! Gentleman-Sande inverse, every butterfly fully reduced. Its output defines the bytes.

use std::sync::Arc;

use super::{NttEngine, NttTables};
use crate::modulus::{csub, mul_shoup_lazy};

pub struct Reference {
    t: Arc<NttTables>,
}

impl Reference {
    pub fn new(t: Arc<NttTables>) -> Self {
        Reference { t }
    }
}

impl NttEngine for Reference {
    fn name(&self) -> &'static str {
        "reference"
    }

    fn forward(&self, a: &mut [u64]) {
        let t = &*self.t;
        let q = t.modulus.q;
        let n = t.n;
        debug_assert_eq!(a.len(), n);
        let mut half = n;
        let mut m = 1;
        while m < n {
            half >>= 1;
            for i in 0..m {
                let w = t.psi_rev[m + i];
                let ws = t.psi_rev_shoup[m + i];
                let base = 2 * i * half;
                let (lo, hi) = a[base..base + 2 * half].split_at_mut(half);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    let u = *x;
                    let v = csub(mul_shoup_lazy(*y, w, ws, q), q);
                    *x = csub(u + v, q);
                    *y = csub(u.wrapping_sub(v).wrapping_add(q), q);
                }
            }
            m <<= 1;
        }
    }

    fn inverse(&self, a: &mut [u64]) {
        let t = &*self.t;
        let q = t.modulus.q;
        let n = t.n;
        debug_assert_eq!(a.len(), n);
        let mut half = 1;
        let mut m = n;
        while m > 1 {
            let h = m >> 1;
            for i in 0..h {
                let w = t.ipsi_rev[h + i];
                let ws = t.ipsi_rev_shoup[h + i];
                let base = 2 * i * half;
                let (lo, hi) = a[base..base + 2 * half].split_at_mut(half);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    let (u, v) = (*x, *y);
                    *x = csub(u + v, q);
                    let d = csub(u.wrapping_sub(v).wrapping_add(q), q);
                    *y = csub(mul_shoup_lazy(d, w, ws, q), q);
                }
            }
            half <<= 1;
            m = h;
        }
        for x in a.iter_mut() {
            *x = csub(mul_shoup_lazy(*x, t.n_inv, t.n_inv_shoup, q), q);
        }
    }
}
