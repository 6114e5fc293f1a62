//! AVX-512 butterflies, chosen per modulus when the engine is built:
//!
//! - `Q < 2^30` (the 25- and 27-bit sets): sixteen 32-bit lanes, Shoup companions
//!   `floor(w 2^32 / Q)`; lazy values stay `< 2^32` (see `k32::ct`). The high half of
//!   `x w'` comes from two `vpmuludq` (even and odd lanes), the low halves from `vpmulld`.
//! - `2^30 <= Q < 2^50` on a CPU with avx512ifma (the CKKS scale primes): eight 64-bit
//!   lanes, IFMA products on 52-bit limbs (`avx512_wide::k52`).
//! - other `Q < 2^60` (the 54-bit set, CKKS's 55- and 60-bit primes): eight 64-bit lanes
//!   with the tables' 64-bit companions; the quotient estimate is built from three
//!   `vpmuludq`, dropping the low-by-low product (estimate low by at most 2 instead of 1,
//!   see `avx512_wide::k64::mul_shoup_raw`), and the low products use `vpmullq`
//!   (AVX-512DQ). Lazy forward outputs are finished by the plan's `PowerFold` where `Q`
//!   allows it (the 54-bit set), else by a Shoup product with one.
//! - otherwise the portable `harvey` code.
//!
//! For `Q < 2^30` an IFMA kernel would hold eight coefficients a register against the
//! 32-bit kernel's sixteen, for the same three multiplies a product (reasoned from the
//! instruction counts, not measured), so those rings keep the 32-bit kernel.
//!
//! Layers closer than one register run on register pairs through the `lanes` schedule.
//! Every butterfly is exact modulo `Q` and the output is reduced to `[0, Q)`, so the bytes
//! equal the reference's.
//!
//! Over ~600 lines: the engine and its 32-bit kernel `k32`, whose forward, inverse and
//! checked paths share one set of lane helpers (the 64-bit kernels are `avx512_wide.rs`).

use std::sync::Arc;

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

#[cfg(target_arch = "x86_64")]
use super::avx512_wide::{k52, k64};
use super::lanes::Plan;
use super::{harvey, NttEngine, NttTables};
use crate::mem::Ahead;

/// Whether this CPU runs the AVX-512 kernels.
pub fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512dq")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether this CPU also has the 52-bit multiply-add (`vpmadd52*`) the `k52` kernel uses.
fn ifma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx512ifma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
enum Path {
    U32(Plan<u32>),
    U64(Plan<u64>),
    /// IFMA products; the plan's companions are 52-bit (`avx512_wide::shoup52`).
    U52(Plan<u64>),
    Portable,
}

pub struct Avx512 {
    t: Arc<NttTables>,
    path: Path,
}

impl Avx512 {
    /// Picks the kernel for this ring; a modulus or size no kernel takes (or a CPU without
    /// AVX-512) falls back to `harvey`, so the engine is always usable.
    pub fn new(t: Arc<NttTables>) -> Self {
        Self::with_ifma(t, ifma())
    }

    /// As [`Avx512::new`], with the IFMA kernel allowed only when `use_ifma` (and the CPU
    /// has it): tests and timings reach the 64-bit kernel on the primes IFMA would take,
    /// as a CPU without IFMA runs them.
    pub(crate) fn with_ifma(t: Arc<NttTables>, use_ifma: bool) -> Self {
        let q = t.modulus.q;
        let path = if !supported() {
            Path::Portable
        } else if q < 1 << 30 && t.n >= 128 {
            // Sizes: two registers of 16 lanes, SIDE = 4 blocks side by side.
            Path::U32(Plan::new(&t, 16, |v| v as u32, |w| super::lanes::shoup32(w, q)))
        } else if q < 1 << 50 && t.n >= 64 && use_ifma && ifma() {
            // As the 64-bit plan; lazy layers add 2Q each.
            let plan = Plan::new(&t, 8, |v| v, |w| super::avx512_wide::shoup52(w, q));
            Path::U52(plan.with_fold(q, 2, u32::MAX.into()))
        } else if q < 1 << 60 && t.n >= 64 {
            // Two registers of 8 lanes, SIDE = 4 blocks. Lazy layers add 3Q each; the
            // fold's factors must fit `vpmuludq`'s 32 bits.
            let plan = Plan::new(&t, 8, |v| v, |w| crate::modulus::shoup(w, q));
            Path::U64(plan.with_fold(q, 3, u32::MAX.into()))
        } else {
            Path::Portable
        };
        Avx512 { t, path }
    }
}

/// The transforms with `ahead`'s prefetches (of the blind rotation's next key pair)
/// spread over their loops: the bit scheme's entry points
/// (`crate::tfhe::stream::StreamingNtt`). [`NttEngine`] runs them with nothing ahead.
impl Avx512 {
    pub(crate) fn forward32_ahead(&self, a: &mut [u32], ahead: &mut Ahead) {
        assert_eq!(a.len(), self.t.n, "one polynomial of N coefficients");
        match &self.path {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a 32-bit path exists only when `supported()` saw the CPU features at build time.
            Path::U32(p) => unsafe { k32::forward32(p, a, ahead) },
            _ => super::via_u64(a, |w| self.forward(w)),
        }
    }

    pub(crate) fn inverse32_ahead(&self, a: &mut [u32], ahead: &mut Ahead) {
        assert_eq!(a.len(), self.t.n, "one polynomial of N coefficients");
        match &self.path {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a 32-bit path exists only when `supported()` saw the CPU features at build time.
            Path::U32(p) => unsafe { k32::inverse32(p, a, ahead) },
            _ => super::via_u64(a, |w| self.inverse(w)),
        }
    }

    /// Every forward transform: `ahead` only feeds the 64-bit kernel's loops (the 32-bit
    /// blind rotation streams through `forward32_ahead`).
    pub(crate) fn forward_ahead(&self, a: &mut [u64], ahead: &mut Ahead) {
        assert_eq!(a.len(), self.t.n, "one polynomial of N coefficients");
        #[cfg(not(target_arch = "x86_64"))]
        let _ = ahead;
        match &self.path {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a non-portable path exists only when `supported()` saw avx512f and
            // avx512dq at build time.
            Path::U32(p) => super::lanes::with_scratch(p.n, |buf| unsafe { k32::forward(p, a, buf) }),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Path::U64(p) => super::lanes::with_scratch64(p.n, |buf| unsafe { k64::forward(p, a, buf, ahead) }),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a 52-bit path exists only when `ifma()` also saw avx512ifma.
            Path::U52(p) => super::lanes::with_scratch64(p.n, |buf| unsafe { k52::forward(p, a, buf, ahead) }),
            _ => harvey::forward(&self.t, a),
        }
    }

    /// Every inverse transform; see `forward_ahead`.
    pub(crate) fn inverse_ahead(&self, a: &mut [u64], ahead: &mut Ahead) {
        assert_eq!(a.len(), self.t.n, "one polynomial of N coefficients");
        #[cfg(not(target_arch = "x86_64"))]
        let _ = ahead;
        match &self.path {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a non-portable path exists only when `supported()` saw avx512f and
            // avx512dq at build time.
            Path::U32(p) => super::lanes::with_scratch(p.n, |buf| unsafe { k32::inverse(p, a, buf) }),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Path::U64(p) => super::lanes::with_scratch64(p.n, |buf| unsafe { k64::inverse(p, a, buf, ahead) }),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a 52-bit path exists only when `ifma()` also saw avx512ifma.
            Path::U52(p) => super::lanes::with_scratch64(p.n, |buf| unsafe { k52::inverse(p, a, buf, ahead) }),
            _ => harvey::inverse(&self.t, a),
        }
    }
}

impl NttEngine for Avx512 {
    fn name(&self) -> &'static str {
        "avx512"
    }

    fn forward32(&self, a: &mut [u32]) {
        self.forward32_ahead(a, &mut Ahead::none());
    }

    fn inverse32(&self, a: &mut [u32]) {
        self.inverse32_ahead(a, &mut Ahead::none());
    }

    fn forward_checked(&self, a: &mut [u64]) -> bool {
        assert_eq!(a.len(), self.t.n, "one polynomial of N coefficients");
        match &self.path {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a 32-bit path exists only when `supported()` saw the CPU features at build time.
            Path::U32(p) => super::lanes::with_scratch(p.n, |buf| unsafe { k32::forward_checked(p, a, buf) }),
            _ => false,
        }
    }

    fn inverse_checked(&self, a: &mut [u64]) -> bool {
        assert_eq!(a.len(), self.t.n, "one polynomial of N coefficients");
        match &self.path {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a 32-bit path exists only when `supported()` saw the CPU features at build time.
            Path::U32(p) => super::lanes::with_scratch(p.n, |buf| unsafe { k32::inverse_checked(p, a, buf) }),
            _ => false,
        }
    }

    fn forward(&self, a: &mut [u64]) {
        self.forward_ahead(a, &mut Ahead::none());
    }

    fn inverse(&self, a: &mut [u64]) {
        self.inverse_ahead(a, &mut Ahead::none());
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod k32 {
    use super::*;

    const L: usize = 16;
    /// Register-resident blocks run side by side (see `forward_impl`).
    const SIDE: usize = 4;

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn splat(v: u32) -> __m512i {
        _mm512_set1_epi32(v as i32)
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn load(s: &[u32]) -> __m512i {
        let s = &s[..L];
        // SAFETY: 16 in-bounds words; unaligned load.
        unsafe { _mm512_loadu_si512(s.as_ptr().cast()) }
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn store(s: &mut [u32], v: __m512i) {
        let s = &mut s[..L];
        // SAFETY: 16 in-bounds words; unaligned store.
        unsafe { _mm512_storeu_si512(s.as_mut_ptr().cast(), v) }
    }

    /// Sixteen `u64` words (each `< 2^32`) narrowed to one register.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn load_wide(s: &[u64]) -> __m512i {
        let s = &s[..L];
        // SAFETY: 16 in-bounds words; unaligned loads.
        unsafe {
            let lo = _mm512_cvtepi64_epi32(_mm512_loadu_si512(s.as_ptr().cast()));
            let hi = _mm512_cvtepi64_epi32(_mm512_loadu_si512(s.as_ptr().add(8).cast()));
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
        }
    }

    /// A mask of which of 16 `u64` words are at or above `q` (each lane of `qw`): the
    /// check `load_wide` cannot make, as it keeps only each word's low half.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn at_or_above(s: &[u64], qw: __m512i) -> u8 {
        let s = &s[..L];
        // SAFETY: 16 in-bounds words; unaligned loads.
        let (lo, hi) = unsafe { (_mm512_loadu_si512(s.as_ptr().cast()), _mm512_loadu_si512(s.as_ptr().add(8).cast())) };
        _mm512_cmpge_epu64_mask(lo, qw) | _mm512_cmpge_epu64_mask(hi, qw)
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn store_wide(s: &mut [u64], v: __m512i) {
        let s = &mut s[..L];
        // SAFETY: 16 in-bounds words; unaligned stores.
        unsafe {
            _mm512_storeu_si512(s.as_mut_ptr().cast(), _mm512_cvtepu32_epi64(_mm512_castsi512_si256(v)));
            _mm512_storeu_si512(s.as_mut_ptr().add(8).cast(), _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64::<1>(v)));
        }
    }

    /// `x mod m` for `x < 2m < 2^32`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn csub(x: __m512i, m: __m512i) -> __m512i {
        _mm512_min_epu32(x, _mm512_sub_epi32(x, m))
    }

    /// `x w mod Q` in `[0, 2Q)` for any `x < 2^32`, `ws = floor(w 2^32 / Q)` per lane;
    /// `wso` has the odd lanes' companions moved to the even positions (`ws >> 32` per
    /// 64-bit lane; a broadcast `ws` is its own `wso`), as `vpmuludq` reads even lanes only.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn mul_shoup(x: __m512i, w: __m512i, ws: __m512i, wso: __m512i, q: __m512i) -> __m512i {
        let even = _mm512_mul_epu32(x, ws);
        // `vpshufd` (port 5) instead of 64-bit shifts, which share port 0 with the multiplies.
        let odd = _mm512_mul_epu32(_mm512_shuffle_epi32::<0xF5>(x), wso);
        let qe = _mm512_mask_blend_epi32(0xAAAA, _mm512_shuffle_epi32::<0xF5>(even), odd);
        _mm512_sub_epi32(_mm512_mullo_epi32(x, w), _mm512_mullo_epi32(qe, q))
    }

    /// Cooley-Tukey. Folding (`LAZY = false`): inputs and outputs `< 4Q`. Lazy: no fold,
    /// each layer adds `2Q` to the bound, so from `[0, Q)` after `log N` layers values stay
    /// below `(1 + 2 log N) Q`, which `forward` checks is `< 2^32` before choosing it.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn ct<const LAZY: bool>(x: __m512i, y: __m512i, w: [__m512i; 3], q: __m512i, q2: __m512i) -> (__m512i, __m512i) {
        let x = if LAZY { x } else { csub(x, q2) };
        let t = mul_shoup(y, w[0], w[1], w[2], q);
        (_mm512_add_epi32(x, t), _mm512_sub_epi32(_mm512_add_epi32(x, q2), t))
    }

    /// A forward output to `[0, Q)`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn finish<const LAZY: bool>(v: __m512i, one: [__m512i; 3], q: __m512i, q2: __m512i) -> __m512i {
        if LAZY {
            csub(mul_shoup(v, one[0], one[1], one[2], q), q)
        } else {
            csub(csub(v, q2), q)
        }
    }

    /// Gentleman-Sande, inputs `< 2Q`, outputs `< 2Q`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn gs(x: __m512i, y: __m512i, w: [__m512i; 3], q: __m512i, q2: __m512i) -> (__m512i, __m512i) {
        let s = csub(_mm512_add_epi32(x, y), q2);
        (s, mul_shoup(_mm512_sub_epi32(_mm512_add_epi32(x, q2), y), w[0], w[1], w[2], q))
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn bcast(w: u32, ws: u32) -> [__m512i; 3] {
        [splat(w), splat(ws), splat(ws)]
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn lanes(tw: &[u32], tws: &[u32], at: usize) -> [__m512i; 3] {
        let ws = load(&tws[at..]);
        [load(&tw[at..]), ws, _mm512_srli_epi64::<32>(ws)]
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn perm(x: __m512i, idx: __m512i, y: __m512i) -> __m512i {
        _mm512_permutex2var_epi32(x, idx, y)
    }

    /// Callers must have checked avx512f.
    #[target_feature(enable = "avx512f")]
    pub(super) fn forward(p: &Plan<u32>, a: &mut [u64], buf: &mut [u32]) {
        if (1 + 2 * u64::from(p.n.trailing_zeros())) * u64::from(p.q) < 1 << 32 {
            forward_impl::<true, true, false>(p, a, buf, &mut Ahead::none());
        } else {
            forward_impl::<false, true, false>(p, a, buf, &mut Ahead::none());
        }
    }

    /// [`forward`] if every word of `a` is below `Q` (true); false with `a` untouched
    /// otherwise: the first layer compares each word as it reads it into `buf`, and `a`
    /// is written only by the last. Callers must have checked the features.
    #[target_feature(enable = "avx512f")]
    pub(super) fn forward_checked(p: &Plan<u32>, a: &mut [u64], buf: &mut [u32]) -> bool {
        if (1 + 2 * u64::from(p.n.trailing_zeros())) * u64::from(p.q) < 1 << 32 {
            forward_impl::<true, true, true>(p, a, buf, &mut Ahead::none())
        } else {
            forward_impl::<false, true, true>(p, a, buf, &mut Ahead::none())
        }
    }

    /// [`forward`] in place on 32-bit words. Callers must have checked the features.
    #[target_feature(enable = "avx512f")]
    pub(super) fn forward32(p: &Plan<u32>, a: &mut [u32], ahead: &mut Ahead) {
        if (1 + 2 * u64::from(p.n.trailing_zeros())) * u64::from(p.q) < 1 << 32 {
            forward_impl::<true, false, false>(p, &mut [], a, ahead);
        } else {
            forward_impl::<false, false, false>(p, &mut [], a, ahead);
        }
    }

    /// [`inverse`] in place on 32-bit words. Callers must have checked the features.
    #[target_feature(enable = "avx512f")]
    pub(super) fn inverse32(p: &Plan<u32>, a: &mut [u32], ahead: &mut Ahead) {
        inverse_impl::<false, false>(p, &mut [], a, ahead);
    }

    /// Callers must have checked the features.
    #[target_feature(enable = "avx512f")]
    pub(super) fn inverse(p: &Plan<u32>, a: &mut [u64], buf: &mut [u32]) {
        inverse_impl::<true, false>(p, a, buf, &mut Ahead::none());
    }

    /// [`inverse`] if every word of `a` is below `Q` (true); false with `a` untouched
    /// otherwise (as [`forward_checked`]). Callers must have checked the features.
    #[target_feature(enable = "avx512f")]
    pub(super) fn inverse_checked(p: &Plan<u32>, a: &mut [u64], buf: &mut [u32]) -> bool {
        inverse_impl::<true, true>(p, a, buf, &mut Ahead::none())
    }

    /// Callers must have checked avx512f. `CHECK` (with `WIDE`): returns false, before
    /// anything is written to `a`, if a word of `a` is not below `Q`; true otherwise.
    #[target_feature(enable = "avx512f")]
    fn forward_impl<const LAZY: bool, const WIDE: bool, const CHECK: bool>(
        p: &Plan<u32>,
        a: &mut [u64],
        buf: &mut [u32],
        ahead: &mut Ahead,
    ) -> bool {
        let n = p.n;
        let (q, q2) = (splat(p.q), splat(2 * p.q));
        let one = bcast(1, p.one_s);
        let (qw, mut bad) = (_mm512_set1_epi64(i64::from(p.q)), 0u8);
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
            if CHECK {
                bad |= at_or_above(&a[j..], qw) | at_or_above(&a[j + half..], qw);
            }
            store(&mut buf[j..], x);
            store(&mut buf[j + half..], y);
        }
        if CHECK && bad != 0 {
            return false;
        }
        let mut m = 2;
        // The other layers down to distance 32, two per pass where two are left: each
        // pass loads and stores every word once, so pairing them halves the memory
        // operations, which compete with the butterflies for issue slots (measured in
        // `docs/perf/2026-12-05.md`, "Lab notes moved from the code"). Three layers per pass measured
        // no faster (register pressure).
        while half > 4 * L {
            let quarter = half / 4;
            for (i, block) in buf.chunks_exact_mut(half).enumerate() {
                let w1 = bcast(p.w[m + i], p.ws[m + i]);
                let w2 = [
                    bcast(p.w[2 * m + 2 * i], p.ws[2 * m + 2 * i]),
                    bcast(p.w[2 * m + 2 * i + 1], p.ws[2 * m + 2 * i + 1]),
                ];
                let (b01, b23) = block.split_at_mut(2 * quarter);
                let ((b0, b1), (b2, b3)) = (b01.split_at_mut(quarter), b23.split_at_mut(quarter));
                let quads = b0
                    .chunks_exact_mut(L)
                    .zip(b1.chunks_exact_mut(L))
                    .zip(b2.chunks_exact_mut(L).zip(b3.chunks_exact_mut(L)));
                for ((x0, x1), (x2, x3)) in quads {
                    // As many touches as the two radix-2 passes made.
                    ahead.touch_lines(4);
                    let (a, c) = ct::<LAZY>(load(x0), load(x2), w1, q, q2);
                    let (b, d) = ct::<LAZY>(load(x1), load(x3), w1, q, q2);
                    let (a, b) = ct::<LAZY>(a, b, w2[0], q, q2);
                    let (c, d) = ct::<LAZY>(c, d, w2[1], q, q2);
                    store(x0, a);
                    store(x1, b);
                    store(x2, c);
                    store(x3, d);
                }
            }
            half >>= 2;
            m <<= 2;
        }
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
        // Blocks of 32: the distance-16 layer, then 8, 4, 2, 1 in registers; widen into `a`.
        let f = &p.fwd;
        let pm: [[__m512i; 2]; 4] = std::array::from_fn(|k| [load(&f.perm[k][0]), load(&f.perm[k][1])]);
        let nat = [load(&f.to_natural[0]), load(&f.to_natural[1])];
        // Two blocks side by side: each block's five layers are one dependency chain
        // (a `vpmulld` is 10 cycles of latency), so a second chain keeps the multipliers busy.
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
        true
    }

    /// Callers must have checked avx512f.
    #[target_feature(enable = "avx512f")]
    /// `CHECK` (with `WIDE`): as in `forward_impl`, false before anything is written to
    /// `a` if a word of `a` is not below `Q` (the register phase reads every word).
    fn inverse_impl<const WIDE: bool, const CHECK: bool>(
        p: &Plan<u32>,
        a: &mut [u64],
        buf: &mut [u32],
        ahead: &mut Ahead,
    ) -> bool {
        let n = p.n;
        let (q, q2) = (splat(p.q), splat(2 * p.q));
        let (qw, mut bad) = (_mm512_set1_epi64(i64::from(p.q)), 0u8);
        // Blocks of 32: distances 1, 2, 4, 8 in registers, then 16; narrow from `a`.
        let v = &p.inv;
        let pm: [[__m512i; 2]; 4] = std::array::from_fn(|k| [load(&v.perm[k][0]), load(&v.perm[k][1])]);
        let nat = [load(&v.to_natural[0]), load(&v.to_natural[1])];
        let h = n / (2 * L);
        // Two blocks side by side, as in `forward_impl`.
        for b2 in (0..n / (2 * L)).step_by(SIDE) {
            for _ in 0..SIDE {
                ahead.touch();
            }
            let mut xy: [(__m512i, __m512i); SIDE] = std::array::from_fn(|d| {
                let at = 2 * L * (b2 + d);
                if CHECK {
                    bad |= at_or_above(&a[at..], qw) | at_or_above(&a[at + L..], qw);
                }
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
        if CHECK && bad != 0 {
            return false;
        }
        let mut half = 2 * L;
        // Two layers per pass where two are left before the last (as in `forward_impl`).
        while 4 * half < n {
            let h = n / (2 * half);
            for (i, block) in buf.chunks_exact_mut(4 * half).enumerate() {
                let w1 = [bcast(p.iw[h + 2 * i], p.iws[h + 2 * i]), bcast(p.iw[h + 2 * i + 1], p.iws[h + 2 * i + 1])];
                let w2 = bcast(p.iw[h / 2 + i], p.iws[h / 2 + i]);
                let (b01, b23) = block.split_at_mut(2 * half);
                let ((b0, b1), (b2, b3)) = (b01.split_at_mut(half), b23.split_at_mut(half));
                let quads = b0
                    .chunks_exact_mut(L)
                    .zip(b1.chunks_exact_mut(L))
                    .zip(b2.chunks_exact_mut(L).zip(b3.chunks_exact_mut(L)));
                for ((x0, x1), (x2, x3)) in quads {
                    ahead.touch_lines(4);
                    let (a, b) = gs(load(x0), load(x1), w1[0], q, q2);
                    let (c, d) = gs(load(x2), load(x3), w1[1], q, q2);
                    let (a, c) = gs(a, c, w2, q, q2);
                    let (b, d) = gs(b, d, w2, q, q2);
                    store(x0, a);
                    store(x1, b);
                    store(x2, c);
                    store(x3, d);
                }
            }
            half <<= 2;
        }
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
            let (s, d) = (_mm512_add_epi32(x, y), _mm512_sub_epi32(_mm512_add_epi32(x, q2), y));
            let (s, d) = (csub(mul_shoup(s, ni[0], ni[1], ni[2], q), q), csub(mul_shoup(d, wn[0], wn[1], wn[2], q), q));
            if WIDE {
                store_wide(&mut a[j..], s);
                store_wide(&mut a[j + half..], d);
            } else {
                store(&mut buf[j..], s);
                store(&mut buf[j + half..], d);
            }
        }
        true
    }
}
