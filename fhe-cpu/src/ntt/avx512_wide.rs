//! The AVX-512 kernels on eight 64-bit lanes, in two arithmetic forms that share one
//! set of loops (the [`wide_loops`] macro, stamped once per form with its CPU features):
//!
//! - [`k64`] (`Q < 2^60`, avx512f + avx512dq): the Shoup quotient estimate from three
//!   `vpmuludq` and the low products from `vpmullq` (three uops each), see
//!   `k64::mul_shoup_raw`. The 54-bit bit-scheme ring and the CKKS 55- and 60-bit primes.
//! - [`k52`] (`Q < 2^50`, adds avx512ifma): one `vpmadd52huq` for the estimate and two
//!   `vpmadd52luq` for the low products, with 52-bit companions. The CKKS scale primes
//!   (about 40 bits). A 54-bit `Q` does not fit a 52-bit limb, so the bit scheme's 64-bit
//!   ring stays on `k64`.
//!
//! Both forms keep every butterfly exact modulo `Q` and reduce the output to `[0, Q)`, so
//! the bytes equal the reference's whichever runs.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// The loops both forms share. The stamping module defines, for its feature string
/// `$feat`: `mul_shoup_raw` (a product in `[0, GROWTH Q)`), `mul_shoup` (one in
/// `[0, 2Q)`), `grown` (`GROWTH Q` as a vector from `Q` and `2Q`), `bcast` and `lanes`
/// (a twiddle and its companions, broadcast or per lane), and the constants `GROWTH` and
/// `LAZY_LIMIT` (the input bound of `mul_shoup_raw`).
#[cfg(target_arch = "x86_64")]
macro_rules! wide_loops {
    ($feat:literal) => {
        const L: usize = 8;
        /// Words a tile of the later layers holds: 32 KiB, inside a 48 KiB L1.
        const TILE: usize = 4096;
        /// Register-resident blocks run side by side (see the 32-bit kernel).
        const SIDE: usize = 4;

        #[inline]
        #[target_feature(enable = $feat)]
        fn splat(v: u64) -> __m512i {
            _mm512_set1_epi64(v as i64)
        }

        #[inline]
        #[target_feature(enable = $feat)]
        fn load(s: &[u64]) -> __m512i {
            let s = &s[..L];
            // SAFETY: 8 in-bounds words; unaligned load.
            unsafe { _mm512_loadu_si512(s.as_ptr().cast()) }
        }

        #[inline]
        #[target_feature(enable = $feat)]
        fn store(s: &mut [u64], v: __m512i) {
            let s = &mut s[..L];
            // SAFETY: 8 in-bounds words; unaligned store.
            unsafe { _mm512_storeu_si512(s.as_mut_ptr().cast(), v) }
        }

        /// `x mod m` for `x < 2m`.
        #[inline]
        #[target_feature(enable = $feat)]
        fn csub(x: __m512i, m: __m512i) -> __m512i {
            _mm512_min_epu64(x, _mm512_sub_epi64(x, m))
        }

        /// Cooley-Tukey. Folding (`LAZY = false`): inputs and outputs `< 4Q`. Lazy: neither
        /// the input nor the product (`< GROWTH Q`) is folded, each layer adds `GROWTH Q` to
        /// the bound, so from `[0, Q)` values stay below `(1 + GROWTH log N) Q`, which
        /// `forward` checks is below `LAZY_LIMIT` (the input bound of `mul_shoup_raw`) before
        /// choosing it.
        #[inline]
        #[target_feature(enable = $feat)]
        fn ct<const LAZY: bool>(
            x: __m512i,
            y: __m512i,
            w: [__m512i; 3],
            q: __m512i,
            q2: __m512i,
        ) -> (__m512i, __m512i) {
            if LAZY {
                let t = mul_shoup_raw(y, w[0], w[1], w[2], q);
                (_mm512_add_epi64(x, t), _mm512_sub_epi64(_mm512_add_epi64(x, grown(q, q2)), t))
            } else {
                let x = csub(x, q2);
                let t = mul_shoup(y, w[0], w[1], w[2], q, q2);
                (_mm512_add_epi64(x, t), _mm512_sub_epi64(_mm512_add_epi64(x, q2), t))
            }
        }

        /// What [`finish`] reads: the broadcast companion of one, and the plan's
        /// [`PowerFold`] as shift, factor and mask (zeros where it has none).
        struct Finish {
            one: [__m512i; 3],
            fold: [__m512i; 3],
        }

        impl Finish {
            #[inline]
            #[target_feature(enable = $feat)]
            fn new(p: &Plan<u64>) -> Finish {
                let f = p.fold.unwrap_or(PowerFold { k: 0, c: 0 });
                Finish { one: bcast(1, p.one_s), fold: [splat(f.k.into()), splat(f.c), splat((1 << f.k) - 1)] }
            }
        }

        /// A forward output to `[0, Q)`: two subtractions after folding layers; after lazy ones
        /// the plan's [`PowerFold`] (`FOLD`), whose factors fit 32 bits (`Avx512::new` asks
        /// for that) so that `vpmuludq` multiplies them, else a Shoup multiplication by one.
        #[inline]
        #[target_feature(enable = $feat)]
        fn finish<const LAZY: bool, const FOLD: bool>(v: __m512i, f: &Finish, q: __m512i, q2: __m512i) -> __m512i {
            if !LAZY {
                csub(csub(v, q2), q)
            } else if FOLD {
                let [k, c, mask] = f.fold;
                let folded = _mm512_mul_epu32(_mm512_srlv_epi64(v, k), c);
                csub(_mm512_add_epi64(_mm512_and_si512(v, mask), folded), q)
            } else {
                csub(mul_shoup(v, f.one[0], f.one[1], f.one[2], q, q2), q)
            }
        }

        #[inline]
        #[target_feature(enable = $feat)]
        fn gs(x: __m512i, y: __m512i, w: [__m512i; 3], q: __m512i, q2: __m512i) -> (__m512i, __m512i) {
            let s = csub(_mm512_add_epi64(x, y), q2);
            (s, mul_shoup(_mm512_sub_epi64(_mm512_add_epi64(x, q2), y), w[0], w[1], w[2], q, q2))
        }

        #[inline]
        #[target_feature(enable = $feat)]
        fn perm(x: __m512i, idx: __m512i, y: __m512i) -> __m512i {
            _mm512_permutex2var_epi64(x, idx, y)
        }

        /// One Cooley-Tukey layer of distance `half` over `buf` (a whole buffer or one
        /// tile): block `i` uses twiddle `first + i`, `first` counted over the whole buffer.
        #[inline]
        #[target_feature(enable = $feat)]
        fn ct_layer<const LAZY: bool>(p: &Plan<u64>, buf: &mut [u64], half: usize, first: usize, ahead: &mut Ahead) {
            let (q, q2) = (splat(p.q), splat(2 * p.q));
            for (i, block) in buf.chunks_exact_mut(2 * half).enumerate() {
                let w = bcast(p.w[first + i], p.ws[first + i]);
                let (lo, hi) = block.split_at_mut(half);
                for (x, y) in lo.chunks_exact_mut(L).zip(hi.chunks_exact_mut(L)) {
                    ahead.touch();
                    let (u, v) = ct::<LAZY>(load(x), load(y), w, q, q2);
                    store(x, u);
                    store(y, v);
                }
            }
        }

        /// One Gentleman-Sande layer of distance `half`, as [`ct_layer`] (inverse twiddles).
        #[inline]
        #[target_feature(enable = $feat)]
        fn gs_layer(p: &Plan<u64>, buf: &mut [u64], half: usize, first: usize, ahead: &mut Ahead) {
            let (q, q2) = (splat(p.q), splat(2 * p.q));
            for (i, block) in buf.chunks_exact_mut(2 * half).enumerate() {
                let w = bcast(p.iw[first + i], p.iws[first + i]);
                let (lo, hi) = block.split_at_mut(half);
                for (x, y) in lo.chunks_exact_mut(L).zip(hi.chunks_exact_mut(L)) {
                    ahead.touch();
                    let (u, v) = gs(load(x), load(y), w, q, q2);
                    store(x, u);
                    store(y, v);
                }
            }
        }

        /// Callers must have checked the CPU features (`$feat`).
        #[target_feature(enable = $feat)]
        pub(in crate::ntt) fn forward(p: &Plan<u64>, a: &mut [u64], buf: &mut [u64], ahead: &mut Ahead) {
            if (1 + GROWTH * u128::from(p.n.trailing_zeros())) * u128::from(p.q) >= LAZY_LIMIT {
                forward_impl::<false, false>(p, a, buf, ahead)
            } else if p.fold.is_some() {
                forward_impl::<true, true>(p, a, buf, ahead)
            } else {
                forward_impl::<true, false>(p, a, buf, ahead)
            }
        }

        /// Callers must have checked the CPU features (`$feat`). The first layer reads `a` into
        /// `buf` (on a cache line, [`crate::mem::Aligned`]), the others run there and the
        /// register phase writes `a`: the caller's buffer is touched once each way, so its
        /// alignment no longer matters (measured in `docs/perf/2026-12-05.md`, "Lab notes moved from
        /// the code").
        #[target_feature(enable = $feat)]
        /// `ahead` is touched once per loop iteration ([`Ahead`]).
        fn forward_impl<const LAZY: bool, const FOLD: bool>(
            p: &Plan<u64>,
            a: &mut [u64],
            buf: &mut [u64],
            ahead: &mut Ahead,
        ) {
            let n = p.n;
            let (q, q2) = (splat(p.q), splat(2 * p.q));
            let fin = Finish::new(p);
            // `n >= 64` (the plan's condition), so there is a first layer above the registers.
            let mut half = n / 2;
            let w = bcast(p.w[1], p.ws[1]);
            let (src, dst) = (a.split_at(half), buf.split_at_mut(half));
            let pairs = src.0.chunks_exact(L).zip(src.1.chunks_exact(L));
            for ((x, y), (dx, dy)) in pairs.zip(dst.0.chunks_exact_mut(L).zip(dst.1.chunks_exact_mut(L))) {
                ahead.touch();
                let (u, v) = ct::<LAZY>(load(x), load(y), w, q, q2);
                store(dx, u);
                store(dy, v);
            }
            let mut m = 2;
            // Layers whose blocks are larger than a tile run over the whole buffer; the
            // rest, and the register phase, tile by tile, so that at large N (CKKS) the
            // later layers work in L1 instead of streaming the buffer once a layer. With
            // `N <= TILE` there is one tile and the order is the untiled one.
            while half > TILE {
                half >>= 1;
                ct_layer::<LAZY>(p, buf, half, m, ahead);
                m <<= 1;
            }
            let f = &p.fwd;
            let pm: [[__m512i; 2]; 3] = std::array::from_fn(|k| [load(&f.perm[k][0]), load(&f.perm[k][1])]);
            let nat = [load(&f.to_natural[0]), load(&f.to_natural[1])];
            let tile_len = TILE.min(n);
            for t in 0..n / tile_len {
                let (tile, out) = (&mut buf[t * tile_len..][..tile_len], &mut a[t * tile_len..][..tile_len]);
                let (mut h, mut mm) = (half, m);
                while h > 2 * L {
                    h >>= 1;
                    // This tile's first block at this layer, counted over the whole buffer.
                    ct_layer::<LAZY>(p, tile, h, mm + t * (tile_len / (2 * h)), ahead);
                    mm <<= 1;
                }
                // The register phase: blocks side by side, as in the 32-bit kernel; `b` is
                // the block's index over the whole buffer (twiddles), `at` its offset here.
                let base = t * (tile_len / (2 * L));
                for b2 in (0..tile_len / (2 * L)).step_by(SIDE) {
                    // A loop, not `array::from_fn` (see `lanes`, "Building register arrays").
                    let mut xy = [(q, q); SIDE];
                    for (d, xy) in xy.iter_mut().enumerate() {
                        let (b, at) = (base + b2 + d, 2 * L * (b2 + d));
                        *xy = ct::<LAZY>(
                            load(&tile[at..]),
                            load(&tile[at + L..]),
                            bcast(p.w[mm + b], p.ws[mm + b]),
                            q,
                            q2,
                        );
                    }
                    for (k, pk) in pm.iter().enumerate() {
                        for (d, (x, y)) in xy.iter_mut().enumerate() {
                            let (xa, ya) = (perm(*x, pk[0], *y), perm(*x, pk[1], *y));
                            (*x, *y) = ct::<LAZY>(xa, ya, lanes(&f.tw[k], &f.tws[k], L * (base + b2 + d)), q, q2);
                        }
                    }
                    for (d, &(x, y)) in xy.iter().enumerate() {
                        let at = 2 * L * (b2 + d);
                        let (lo, hi) = (perm(x, nat[0], y), perm(x, nat[1], y));
                        store(&mut out[at..], finish::<LAZY, FOLD>(lo, &fin, q, q2));
                        store(&mut out[at + L..], finish::<LAZY, FOLD>(hi, &fin, q, q2));
                    }
                }
            }
        }

        /// Callers must have checked the CPU features (`$feat`). The register phase reads `a` into
        /// `buf`, the last layer writes `a` (as `forward_impl`).
        #[target_feature(enable = $feat)]
        pub(in crate::ntt) fn inverse(p: &Plan<u64>, a: &mut [u64], buf: &mut [u64], ahead: &mut Ahead) {
            let n = p.n;
            let (q, q2) = (splat(p.q), splat(2 * p.q));
            let v = &p.inv;
            let pm: [[__m512i; 2]; 3] = std::array::from_fn(|k| [load(&v.perm[k][0]), load(&v.perm[k][1])]);
            let nat = [load(&v.to_natural[0]), load(&v.to_natural[1])];
            let h = n / (2 * L);
            // Tile by tile (see `forward_impl`): the register phase, then the layers whose
            // blocks fit a tile; the larger ones after, over the whole buffer.
            let tile_len = TILE.min(n);
            let mut half = 2 * L;
            while half < n / 2 && 2 * half <= tile_len {
                half <<= 1;
            }
            for t in 0..n / tile_len {
                let (src, tile) = (&a[t * tile_len..][..tile_len], &mut buf[t * tile_len..][..tile_len]);
                let base = t * (tile_len / (2 * L));
                for b2 in (0..tile_len / (2 * L)).step_by(SIDE) {
                    let mut xy: [(__m512i, __m512i); SIDE] = std::array::from_fn(|d| {
                        let at = 2 * L * (b2 + d);
                        (load(&src[at..]), load(&src[at + L..]))
                    });
                    for (k, pk) in pm.iter().enumerate() {
                        for (d, (x, y)) in xy.iter_mut().enumerate() {
                            let (xa, ya) = (perm(*x, pk[0], *y), perm(*x, pk[1], *y));
                            (*x, *y) = gs(xa, ya, lanes(&v.tw[k], &v.tws[k], L * (base + b2 + d)), q, q2);
                        }
                    }
                    for (d, &(x, y)) in xy.iter().enumerate() {
                        let (b, at) = (base + b2 + d, 2 * L * (b2 + d));
                        let (xa, ya) = (perm(x, nat[0], y), perm(x, nat[1], y));
                        let (x, y) = gs(xa, ya, bcast(p.iw[h + b], p.iws[h + b]), q, q2);
                        store(&mut tile[at..], x);
                        store(&mut tile[at + L..], y);
                    }
                }
                let mut hf = 2 * L;
                while hf < half {
                    gs_layer(p, tile, hf, n / (2 * hf) + t * (tile_len / (2 * hf)), ahead);
                    hf <<= 1;
                }
            }
            while half < n / 2 {
                gs_layer(p, buf, half, n / (2 * half), ahead);
                half <<= 1;
            }
            let (ni, wn) = (bcast(p.n_inv, p.n_inv_s), bcast(p.wn, p.wn_s));
            for j in (0..half).step_by(L) {
                ahead.touch();
                let (x, y) = (load(&buf[j..]), load(&buf[j + half..]));
                let (s, d) = (_mm512_add_epi64(x, y), _mm512_sub_epi64(_mm512_add_epi64(x, q2), y));
                store(&mut a[j..], csub(mul_shoup(s, ni[0], ni[1], ni[2], q, q2), q));
                store(&mut a[j + half..], csub(mul_shoup(d, wn[0], wn[1], wn[2], q, q2), q));
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod k64 {
    use super::super::lanes::{Plan, PowerFold};
    use super::*;
    use crate::mem::Ahead;

    /// `mul_shoup_raw`'s products are below `3Q`, its inputs below `2^62`.
    const GROWTH: u128 = 3;
    const LAZY_LIMIT: u128 = 1 << 62;

    wide_loops!("avx512f,avx512dq");

    /// `x w mod Q` in `[0, 3Q)` for `x < 2^62`, `ws = floor(w 2^64 / Q)`, `wsh = ws >> 32`.
    ///
    /// With `x = x1 2^32 + x0`, `ws = s1 2^32 + s0`, the estimate `x1 s1 + floor(x0 s1 / 2^32)
    /// + floor((x1 s0 + (x0 s1 mod 2^32)) / 2^32)` omits `x0 s0` and one carry, each `< 2^64`,
    /// so it is below `floor(x ws / 2^64)` by at most 2 and `x w - qe Q` lies in `[0, 3Q)`.
    /// `x1 < 2^30` keeps the
    /// middle sum below `2^63`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(crate) fn mul_shoup_raw(x: __m512i, w: __m512i, ws: __m512i, wsh: __m512i, q: __m512i) -> __m512i {
        // Only the low word of each lane feeds `vpmuludq`: a port-5 `vpshufd` will do.
        let x1 = _mm512_shuffle_epi32::<0xF5>(x);
        let p01 = _mm512_mul_epu32(x, wsh);
        let p10 = _mm512_mul_epu32(x1, ws);
        let p11 = _mm512_mul_epu32(x1, wsh);
        let mid = _mm512_add_epi64(p10, _mm512_and_si512(p01, _mm512_set1_epi64(0xffff_ffff)));
        let qe = _mm512_add_epi64(_mm512_add_epi64(p11, _mm512_srli_epi64::<32>(p01)), _mm512_srli_epi64::<32>(mid));
        _mm512_sub_epi64(_mm512_mullo_epi64(x, w), _mm512_mullo_epi64(qe, q))
    }

    /// `mul_shoup_raw` folded to `[0, 2Q)`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn mul_shoup(x: __m512i, w: __m512i, ws: __m512i, wsh: __m512i, q: __m512i, q2: __m512i) -> __m512i {
        csub(mul_shoup_raw(x, w, ws, wsh, q), q2)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn bcast(w: u64, ws: u64) -> [__m512i; 3] {
        [splat(w), splat(ws), splat(ws >> 32)]
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn lanes(tw: &[u64], tws: &[u64], at: usize) -> [__m512i; 3] {
        let ws = load(&tws[at..]);
        [load(&tw[at..]), ws, _mm512_srli_epi64::<32>(ws)]
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn grown(q: __m512i, q2: __m512i) -> __m512i {
        _mm512_add_epi64(q2, q)
    }
}

#[cfg(target_arch = "x86_64")]
pub(super) mod k52 {
    use super::super::lanes::{Plan, PowerFold};
    use super::*;
    use crate::mem::Ahead;

    /// `mul_shoup_raw`'s products are below `2Q`, its inputs below `2^52` (one limb).
    const GROWTH: u128 = 2;
    const LAZY_LIMIT: u128 = 1 << 52;

    wide_loops!("avx512f,avx512dq,avx512ifma");

    /// `x w mod Q` in `[0, 2Q)` for `x < 2^52`, `Q < 2^50`, `ws = floor(w 2^52 / Q)`.
    ///
    /// `qe = floor(x ws / 2^52)` is `floor(x w / Q)` or one less (`x ws / 2^52` is below
    /// `x w / Q` by less than `x / 2^52 < 1`), so `x w - qe Q` lies in `[0, 2Q)`, below
    /// `2^52`: the low 52 bits of the two products give it exactly.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
    fn mul_shoup_raw(x: __m512i, w: __m512i, ws: __m512i, _unused: __m512i, q: __m512i) -> __m512i {
        let zero = _mm512_setzero_si512();
        let qe = _mm512_madd52hi_epu64(zero, x, ws);
        let xw = _mm512_madd52lo_epu64(zero, x, w);
        let qq = _mm512_madd52lo_epu64(zero, qe, q);
        _mm512_and_si512(_mm512_sub_epi64(xw, qq), _mm512_set1_epi64((1 << 52) - 1))
    }

    /// Already in `[0, 2Q)`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
    fn mul_shoup(x: __m512i, w: __m512i, ws: __m512i, unused: __m512i, q: __m512i, _q2: __m512i) -> __m512i {
        mul_shoup_raw(x, w, ws, unused, q)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
    fn grown(_q: __m512i, q2: __m512i) -> __m512i {
        q2
    }

    /// The third slot (`k64`'s high companion) is unused here.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
    fn bcast(w: u64, ws: u64) -> [__m512i; 3] {
        let ws = splat(ws);
        [splat(w), ws, ws]
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512dq,avx512ifma")]
    fn lanes(tw: &[u64], tws: &[u64], at: usize) -> [__m512i; 3] {
        let ws = load(&tws[at..]);
        [load(&tw[at..]), ws, ws]
    }
}

/// `floor(w 2^52 / Q)`: `k52`'s Shoup companion (`w < Q < 2^50`, so below `2^52`).
pub(super) fn shoup52(w: u64, q: u64) -> u64 {
    ((u128::from(w) << 52) / u128::from(q)) as u64
}
