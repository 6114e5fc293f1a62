//! AVX2 butterflies for `Q < 2^30` (the 25- and 27-bit sets): eight 32-bit lanes with
//! Shoup companions `floor(w 2^32 / Q)`, lazy values `< 4Q < 2^32`, the same layer
//! structure as the 32-bit AVX-512 kernel (see `avx512.rs` and `lanes.rs`). AVX2 has no
//! 64-bit low multiply or unsigned 64-bit minimum, so wider moduli (the 54-bit set) run the
//! portable `harvey` code inside this engine, with the same bytes.

use std::sync::Arc;

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::lanes::Plan;
use super::{harvey, NttEngine, NttTables};
use crate::mem::Ahead;

/// Whether this CPU runs the AVX2 kernel.
pub fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

pub struct Avx2 {
    t: Arc<NttTables>,
    plan: Option<Plan<u32>>,
}

impl Avx2 {
    /// The 32-bit kernel when this CPU has AVX2 and the ring fits it, else `harvey`.
    pub fn new(t: Arc<NttTables>) -> Self {
        let q = t.modulus.q;
        let plan = (supported() && q < 1 << 30 && t.n >= 32) // 2 x 8 lanes x SIDE blocks
            .then(|| Plan::new(&t, 8, |v| v as u32, |w| super::lanes::shoup32(w, q)));
        Avx2 { t, plan }
    }
}

/// The 32-bit transforms with `ahead`'s prefetches spread over their loops: the bit
/// scheme's entry points (`crate::tfhe::stream::StreamingNtt`). [`NttEngine`] runs them
/// with nothing ahead.
impl Avx2 {
    pub(crate) fn forward32_ahead(&self, a: &mut [u32], ahead: &mut Ahead) {
        assert_eq!(a.len(), self.t.n, "one polynomial of N coefficients");
        match &self.plan {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a 32-bit path exists only when `supported()` saw the CPU features at build time.
            Some(p) => unsafe { k32::forward32(p, a, ahead) },
            _ => super::via_u64(a, |w| self.forward(w)),
        }
    }

    pub(crate) fn inverse32_ahead(&self, a: &mut [u32], ahead: &mut Ahead) {
        assert_eq!(a.len(), self.t.n, "one polynomial of N coefficients");
        match &self.plan {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a 32-bit path exists only when `supported()` saw the CPU features at build time.
            Some(p) => unsafe { k32::inverse32(p, a, ahead) },
            _ => super::via_u64(a, |w| self.inverse(w)),
        }
    }
}

impl NttEngine for Avx2 {
    fn name(&self) -> &'static str {
        "avx2"
    }

    fn forward32(&self, a: &mut [u32]) {
        self.forward32_ahead(a, &mut Ahead::none());
    }

    fn inverse32(&self, a: &mut [u32]) {
        self.inverse32_ahead(a, &mut Ahead::none());
    }

    fn forward(&self, a: &mut [u64]) {
        assert_eq!(a.len(), self.t.n, "one polynomial of N coefficients");
        match &self.plan {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a plan exists only when `supported()` saw avx2 at build time.
            Some(p) => super::lanes::with_scratch(p.n, |buf| unsafe { k32::forward(p, a, buf) }),
            _ => harvey::forward(&self.t, a),
        }
    }

    fn inverse(&self, a: &mut [u64]) {
        assert_eq!(a.len(), self.t.n, "one polynomial of N coefficients");
        match &self.plan {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a plan exists only when `supported()` saw avx2 at build time.
            Some(p) => super::lanes::with_scratch(p.n, |buf| unsafe { k32::inverse(p, a, buf) }),
            _ => harvey::inverse(&self.t, a),
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod k32 {
    use super::*;

    const L: usize = 8;
    /// Register-resident blocks run side by side (see `forward_impl`).
    const SIDE: usize = 2;

    #[inline]
    #[target_feature(enable = "avx2")]
    fn splat(v: u32) -> __m256i {
        _mm256_set1_epi32(v as i32)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn load(s: &[u32]) -> __m256i {
        let s = &s[..L];
        // SAFETY: 8 in-bounds words; unaligned load.
        unsafe { _mm256_loadu_si256(s.as_ptr().cast()) }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn store(s: &mut [u32], v: __m256i) {
        let s = &mut s[..L];
        // SAFETY: 8 in-bounds words; unaligned store.
        unsafe { _mm256_storeu_si256(s.as_mut_ptr().cast(), v) }
    }

    /// Eight `u64` words (each `< 2^32`) narrowed to one register.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn load_wide(s: &[u64]) -> __m256i {
        let s = &s[..L];
        // SAFETY: 8 in-bounds words; unaligned loads.
        let (lo, hi) = unsafe { (_mm256_loadu_si256(s.as_ptr().cast()), _mm256_loadu_si256(s.as_ptr().add(4).cast())) };
        // Low words of the four 64-bit lanes into the low 128 bits, then join the halves.
        let even = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
        _mm256_permute2x128_si256::<0x20>(_mm256_permutevar8x32_epi32(lo, even), _mm256_permutevar8x32_epi32(hi, even))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn store_wide(s: &mut [u64], v: __m256i) {
        let s = &mut s[..L];
        let (lo, hi) =
            (_mm256_cvtepu32_epi64(_mm256_castsi256_si128(v)), _mm256_cvtepu32_epi64(_mm256_extracti128_si256::<1>(v)));
        // SAFETY: 8 in-bounds words; unaligned stores.
        unsafe {
            _mm256_storeu_si256(s.as_mut_ptr().cast(), lo);
            _mm256_storeu_si256(s.as_mut_ptr().add(4).cast(), hi);
        }
    }

    /// `x mod m` for `x < 2m < 2^32`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn csub(x: __m256i, m: __m256i) -> __m256i {
        _mm256_min_epu32(x, _mm256_sub_epi32(x, m))
    }

    /// `x w mod Q` in `[0, 2Q)` for any `x < 2^32`, `ws = floor(w 2^32 / Q)` per lane;
    /// `wso` has the odd lanes' companions moved to the even positions (`ws >> 32` per
    /// 64-bit lane; a broadcast `ws` is its own `wso`), as `vpmuludq` reads even lanes only.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn mul_shoup(x: __m256i, w: __m256i, ws: __m256i, wso: __m256i, q: __m256i) -> __m256i {
        let even = _mm256_mul_epu32(x, ws);
        // `vpshufd` (port 5) instead of 64-bit shifts, which share port 0 with the multiplies.
        let odd = _mm256_mul_epu32(_mm256_shuffle_epi32::<0xF5>(x), wso);
        let qe = _mm256_blend_epi32::<0b1010_1010>(_mm256_shuffle_epi32::<0xF5>(even), odd);
        _mm256_sub_epi32(_mm256_mullo_epi32(x, w), _mm256_mullo_epi32(qe, q))
    }

    /// Cooley-Tukey. Folding (`LAZY = false`): inputs and outputs `< 4Q`. Lazy: no fold,
    /// each layer adds `2Q` to the bound, so from `[0, Q)` after `log N` layers values stay
    /// below `(1 + 2 log N) Q`, which `forward` checks is `< 2^32` before choosing it.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn ct<const LAZY: bool>(x: __m256i, y: __m256i, w: [__m256i; 3], q: __m256i, q2: __m256i) -> (__m256i, __m256i) {
        let x = if LAZY { x } else { csub(x, q2) };
        let t = mul_shoup(y, w[0], w[1], w[2], q);
        (_mm256_add_epi32(x, t), _mm256_sub_epi32(_mm256_add_epi32(x, q2), t))
    }

    /// A forward output to `[0, Q)`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn finish<const LAZY: bool>(v: __m256i, one: [__m256i; 3], q: __m256i, q2: __m256i) -> __m256i {
        if LAZY {
            csub(mul_shoup(v, one[0], one[1], one[2], q), q)
        } else {
            csub(csub(v, q2), q)
        }
    }

    /// Gentleman-Sande, inputs `< 2Q`, outputs `< 2Q`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn gs(x: __m256i, y: __m256i, w: [__m256i; 3], q: __m256i, q2: __m256i) -> (__m256i, __m256i) {
        let s = csub(_mm256_add_epi32(x, y), q2);
        (s, mul_shoup(_mm256_sub_epi32(_mm256_add_epi32(x, q2), y), w[0], w[1], w[2], q))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn bcast(w: u32, ws: u32) -> [__m256i; 3] {
        [splat(w), splat(ws), splat(ws)]
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn lanes(tw: &[u32], tws: &[u32], at: usize) -> [__m256i; 3] {
        let ws = load(&tws[at..]);
        [load(&tw[at..]), ws, _mm256_srli_epi64::<32>(ws)]
    }

    /// A two-source permutation (AVX2 has only one-source `vpermd`): lane `p` of the
    /// pair is `x[p]` for `p < 8`, else `y[p - 8]`; `idx` is `(p, p >= 8 ? !0 : 0)`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn perm(x: __m256i, idx: [__m256i; 2], y: __m256i) -> __m256i {
        _mm256_blendv_epi8(_mm256_permutevar8x32_epi32(x, idx[0]), _mm256_permutevar8x32_epi32(y, idx[0]), idx[1])
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn index(p: &[u32]) -> [__m256i; 2] {
        let v = load(p);
        [v, _mm256_cmpgt_epi32(v, _mm256_set1_epi32(7))]
    }

    /// Callers must have checked avx2.
    #[target_feature(enable = "avx2")]
    pub(super) fn forward(p: &Plan<u32>, a: &mut [u64], buf: &mut [u32]) {
        if (1 + 2 * u64::from(p.n.trailing_zeros())) * u64::from(p.q) < 1 << 32 {
            forward_impl::<true, true>(p, a, buf, &mut Ahead::none())
        } else {
            forward_impl::<false, true>(p, a, buf, &mut Ahead::none())
        }
    }

    /// [`forward`] in place on 32-bit words. Callers must have checked the features.
    #[target_feature(enable = "avx2")]
    pub(super) fn forward32(p: &Plan<u32>, a: &mut [u32], ahead: &mut Ahead) {
        if (1 + 2 * u64::from(p.n.trailing_zeros())) * u64::from(p.q) < 1 << 32 {
            forward_impl::<true, false>(p, &mut [], a, ahead)
        } else {
            forward_impl::<false, false>(p, &mut [], a, ahead)
        }
    }

    /// [`inverse`] in place on 32-bit words. Callers must have checked the features.
    #[target_feature(enable = "avx2")]
    pub(super) fn inverse32(p: &Plan<u32>, a: &mut [u32], ahead: &mut Ahead) {
        inverse_impl::<false>(p, &mut [], a, ahead)
    }

    /// Callers must have checked the features.
    #[target_feature(enable = "avx2")]
    pub(super) fn inverse(p: &Plan<u32>, a: &mut [u64], buf: &mut [u32]) {
        inverse_impl::<true>(p, a, buf, &mut Ahead::none())
    }

    /// Callers must have checked avx2.
    #[target_feature(enable = "avx2")]
    fn forward_impl<const LAZY: bool, const WIDE: bool>(
        p: &Plan<u32>,
        a: &mut [u64],
        buf: &mut [u32],
        ahead: &mut Ahead,
    ) {
        let n = p.n;
        let (q, q2) = (splat(p.q), splat(2 * p.q));
        let one = bcast(1, p.one_s);
        // First layer: narrow from `a` into `buf` (`WIDE`), or in place in `buf`.
        let mut half = n / 2;
        let w = bcast(p.w[1], p.ws[1]);
        for j in (0..half).step_by(L) {
            ahead.touch();
            let (x, y) = if WIDE {
                ct::<LAZY>(load_wide(&a[j..]), load_wide(&a[j + half..]), w, q, q2)
            } else {
                ct::<LAZY>(load(&buf[j..]), load(&buf[j + half..]), w, q, q2)
            };
            store(&mut buf[j..], x);
            store(&mut buf[j + half..], y);
        }
        let mut m = 2;
        while half > 2 * L {
            half >>= 1;
            for (i, block) in buf.chunks_exact_mut(2 * half).enumerate() {
                let w = bcast(p.w[m + i], p.ws[m + i]);
                let (lo, hi) = block.split_at_mut(half);
                for (x, y) in lo.chunks_exact_mut(L).zip(hi.chunks_exact_mut(L)) {
                    ahead.touch();
                    let (u, v) = ct::<LAZY>(load(x), load(y), w, q, q2);
                    store(x, u);
                    store(y, v);
                }
            }
            m <<= 1;
        }
        // Blocks of 16: the distance-8 layer, then 4, 2, 1 in registers; widen into `a`.
        let f = &p.fwd;
        let pm: [[[__m256i; 2]; 2]; 3] = std::array::from_fn(|k| [index(&f.perm[k][0]), index(&f.perm[k][1])]);
        let nat = [index(&f.to_natural[0]), index(&f.to_natural[1])];
        // Blocks side by side: each block's layers are one dependency chain.
        for b2 in (0..n / (2 * L)).step_by(SIDE) {
            for _ in 0..SIDE {
                ahead.touch();
            }
            // A loop, not `array::from_fn` (see `lanes`, "Building register arrays").
            let mut xy = [(q, q); SIDE];
            for (d, xy) in xy.iter_mut().enumerate() {
                let (b, at) = (b2 + d, 2 * L * (b2 + d));
                *xy = ct::<LAZY>(load(&buf[at..]), load(&buf[at + L..]), bcast(p.w[m + b], p.ws[m + b]), q, q2);
            }
            for (k, pk) in pm.iter().enumerate() {
                for (d, (x, y)) in xy.iter_mut().enumerate() {
                    let (xa, ya) = (perm(*x, pk[0], *y), perm(*x, pk[1], *y));
                    (*x, *y) = ct::<LAZY>(xa, ya, lanes(&f.tw[k], &f.tws[k], L * (b2 + d)), q, q2);
                }
            }
            for (d, &(x, y)) in xy.iter().enumerate() {
                let at = 2 * L * (b2 + d);
                let (lo, hi) = (perm(x, nat[0], y), perm(x, nat[1], y));
                let (lo, hi) = (finish::<LAZY>(lo, one, q, q2), finish::<LAZY>(hi, one, q, q2));
                if WIDE {
                    store_wide(&mut a[at..], lo);
                    store_wide(&mut a[at + L..], hi);
                } else {
                    store(&mut buf[at..], lo);
                    store(&mut buf[at + L..], hi);
                }
            }
        }
    }

    /// Callers must have checked avx2.
    #[target_feature(enable = "avx2")]
    fn inverse_impl<const WIDE: bool>(p: &Plan<u32>, a: &mut [u64], buf: &mut [u32], ahead: &mut Ahead) {
        let n = p.n;
        let (q, q2) = (splat(p.q), splat(2 * p.q));
        // Blocks of 16: distances 1, 2, 4 in registers, then 8; narrow from `a`.
        let v = &p.inv;
        let pm: [[[__m256i; 2]; 2]; 3] = std::array::from_fn(|k| [index(&v.perm[k][0]), index(&v.perm[k][1])]);
        let nat = [index(&v.to_natural[0]), index(&v.to_natural[1])];
        let h = n / (2 * L);
        for b2 in (0..n / (2 * L)).step_by(SIDE) {
            for _ in 0..SIDE {
                ahead.touch();
            }
            let mut xy: [(__m256i, __m256i); SIDE] = std::array::from_fn(|d| {
                let at = 2 * L * (b2 + d);
                if WIDE {
                    (load_wide(&a[at..]), load_wide(&a[at + L..]))
                } else {
                    (load(&buf[at..]), load(&buf[at + L..]))
                }
            });
            for (k, pk) in pm.iter().enumerate() {
                for (d, (x, y)) in xy.iter_mut().enumerate() {
                    let (xa, ya) = (perm(*x, pk[0], *y), perm(*x, pk[1], *y));
                    (*x, *y) = gs(xa, ya, lanes(&v.tw[k], &v.tws[k], L * (b2 + d)), q, q2);
                }
            }
            for (d, &(x, y)) in xy.iter().enumerate() {
                let (b, at) = (b2 + d, 2 * L * (b2 + d));
                let (xa, ya) = (perm(x, nat[0], y), perm(x, nat[1], y));
                let (x, y) = gs(xa, ya, bcast(p.iw[h + b], p.iws[h + b]), q, q2);
                store(&mut buf[at..], x);
                store(&mut buf[at + L..], y);
            }
        }
        let mut half = 2 * L;
        while half < n / 2 {
            let h = n / (2 * half);
            for (i, block) in buf.chunks_exact_mut(2 * half).enumerate() {
                let w = bcast(p.iw[h + i], p.iws[h + i]);
                let (lo, hi) = block.split_at_mut(half);
                for (x, y) in lo.chunks_exact_mut(L).zip(hi.chunks_exact_mut(L)) {
                    ahead.touch();
                    let (u, v) = gs(load(x), load(y), w, q, q2);
                    store(x, u);
                    store(y, v);
                }
            }
            half <<= 1;
        }
        // Last layer with `1/N` folded in; widen into `a`.
        let (ni, wn) = (bcast(p.n_inv, p.n_inv_s), bcast(p.wn, p.wn_s));
        for j in (0..half).step_by(L) {
            ahead.touch();
            let (x, y) = (load(&buf[j..]), load(&buf[j + half..]));
            let (s, d) = (_mm256_add_epi32(x, y), _mm256_sub_epi32(_mm256_add_epi32(x, q2), y));
            let (s, d) = (csub(mul_shoup(s, ni[0], ni[1], ni[2], q), q), csub(mul_shoup(d, wn[0], wn[1], wn[2], q), q));
            if WIDE {
                store_wide(&mut a[j..], s);
                store_wide(&mut a[j + half..], d);
            } else {
                store(&mut buf[j..], s);
                store(&mut buf[j + half..], d);
            }
        }
    }
}
