// The limb-batched ring NTT (LuxRingNttArgs): negacyclic transforms of any ring degree
// N = 2^log_n <= 2^17, transform t over limb t % limbs with that limb's prime and
// twiddles, so one launch covers every limb of a batch of RNS polynomials (a CKKS
// ciphertext at N = 2^16 has 30+ limbs) and the bit scheme's one prime alike. Nothing
// about the ring is compiled in; only the word width is.
//
// One launch is a "pass": stages [first_stage, last_stage), r = last - first of them,
// each transform cut into 2^(log_n - r) groups of 2^r words that those stages only mix
// among themselves (Cooley-Tukey forward, natural -> bit-reversed; Gentleman-Sande
// inverse, as ntt.cuh and fhe_api::ops::ring define). A group's words lie 2^stride
// apart: forward stride = log_n - first - r (the pass's last, narrowest stage), inverse
// stride = first (its first, narrowest stage). The NTT variants (fhe_gpu::backend::
// variant) differ only in how they cut the stages into passes and where a group lives:
// - registers (shared 0): one group per thread, 2^r <= 16 words (radix 2^r);
// - shared memory (shared 1): 2^log_groups groups per block, group-major in shared
//   memory, loaded in device-memory order: in a strided pass consecutive threads load
//   consecutive groups' words (adjacent columns: segments of 2^log_groups words), in
//   the stride-0 pass the block's tile is one contiguous run.
// Every butterfly is the same exact operation on the same words in every variant, so
// every variant gives the oracle's bytes; only the memory traffic differs. The pass
// that runs the inverse's last stage also applies 1/N.

// The first word of group g (< 2^(log_n - r)) of a pass: g's low `stride` bits stay,
// the rest move above the r bits that index the words within the group.
LUX_DEVICE u32 lux_pass_base(u32 g, u32 stride, u32 r) {
    return (g & ((1u << stride) - 1)) | ((g >> stride) << (stride + r));
}

// Butterfly j (< 2^(r-1)) of the pass's stage `step` (< r) within a group: the word
// indices k0, k0 + 2^hk in the group and the twiddle index of its first word, which
// sits at x + (k0 << stride) in its transform.
LUX_DEVICE u32 lux_pass_butterfly(u32 j, u32 step, u32 r, u32 stride, u32 x, u32 log_n, u32 first, bool fwd,
                                  u32* k0, u32* hk) {
    const u32 h = fwd ? r - 1 - step : step;
    const u32 k = ((j >> h) << (h + 1)) | (j & ((1u << h) - 1));
    const u32 s = first + step;
    // Forward stage s: twiddle psi[2^s + block]; inverse: ipsi[2^(log_n - 1 - s) + block];
    // block = index >> (log half + 1), log half = stride + h.
    const u32 tw = fwd ? 1u << s : 1u << (log_n - 1 - s);
    *k0 = k;
    *hk = h;
    return tw + ((x + (k << stride)) >> (stride + h + 1));
}

LUX_DEVICE void lux_butterfly(lux_w* u, lux_w* v, const LuxNttTable* t, u32 w, bool fwd) {
    const lux_w q = (lux_w)t->modulus.q;
    if (fwd) {
        const lux_w vw = lux_mul_shoup(*v, t->psi[w], t->psi_shoup[w], q);
        *v = lux_sub(*u, vw, q);
        *u = lux_add(*u, vw, q);
    } else {
        const lux_w d = lux_sub(*u, *v, q);
        *u = lux_add(*u, *v, q);
        *v = lux_mul_shoup(d, t->ipsi[w], t->ipsi_shoup[w], q);
    }
}

LUX_DEVICE lux_w lux_scale_n(lux_w x, const LuxNttTable* t) {
    return lux_mul_shoup(x, (lux_w)t->n_inv, (lux_w)t->n_inv_shoup, (lux_w)t->modulus.q);
}

// A pass with each group in one thread's registers. R and FWD are template parameters
// so every index below is a constant after unrolling and `v` stays in registers.
template <u32 R, bool FWD>
LUX_DEVICE void lux_ring_ntt_regs(const LuxRingNttArgs& args) {
    const u32 log_n = args.log_n, first = args.first_stage;
    const u32 stride = FWD ? log_n - first - R : first;
    const bool scale = !FWD && args.last_stage == log_n;
    const u64 per = 1ull << (log_n - R);
    const u64 total = (u64)args.transforms * per;
    for (u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x; g < total; g += (u64)gridDim.x * blockDim.x) {
        // The transform index is below `transforms`, a u32: 32-bit arithmetic from here
        // (a 64-bit modulo is a long emulated sequence on GPUs).
        const u32 tr = (u32)(g >> (log_n - R));
        const u32 x = lux_pass_base((u32)(g & (per - 1)), stride, R);
        const LuxNttTable* t = args.tables + tr % args.limbs;
        lux_w* a = args.data + ((u64)tr << log_n) + x;
        lux_w v[1u << R];
#pragma unroll
        for (u32 k = 0; k < (1u << R); k++) v[k] = a[k << stride];
#pragma unroll
        for (u32 step = 0; step < R; step++) {
#pragma unroll
            for (u32 j = 0; j < (1u << (R - 1)); j++) {
                u32 k0, hk;
                const u32 w = lux_pass_butterfly(j, step, R, stride, x, log_n, first, FWD, &k0, &hk);
                lux_butterfly(&v[k0], &v[k0 + (1u << hk)], t, w, FWD);
            }
        }
#pragma unroll
        for (u32 k = 0; k < (1u << R); k++) a[k << stride] = scale ? lux_scale_n(v[k], t) : v[k];
    }
}

// A pass with 2^log_groups groups per block in shared memory (2^(log_groups + r) words
// of dynamic shared memory), one barrier per stage. Every branch on a block-wide value
// is uniform over the block; the group bound (`g < total`) only idles threads.
LUX_DEVICE void lux_ring_ntt_smem(const LuxRingNttArgs& args, lux_w* smem) {
    const u32 log_n = args.log_n, first = args.first_stage, r = args.last_stage - first;
    const bool fwd = args.inverse == 0;
    const u32 stride = fwd ? log_n - first - r : first;
    const bool scale = !fwd && args.last_stage == log_n;
    const u32 lg = args.log_groups;
    const u32 words = 1u << (lg + r);
    const u64 per = 1ull << (log_n - r);
    const u64 total = (u64)args.transforms * per;
    const u64 tiles = (total + (1ull << lg) - 1) >> lg;
    for (u64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        // Element e of the tile, in device-memory order so consecutive threads touch
        // adjacent words: with stride 0 the tile is one contiguous run (group-major);
        // otherwise word k = e >> lg of group e & (G - 1), adjacent columns (the host's
        // plans have stride 0 or at least log_groups).
        for (u32 e = threadIdx.x; e < words; e += blockDim.x) {
            const u32 gi = stride == 0 ? e >> r : e & ((1u << lg) - 1);
            const u32 k = stride == 0 ? e & ((1u << r) - 1) : e >> lg;
            const u64 g = (tile << lg) + gi;
            if (g < total) {
                const u32 tr = (u32)(g >> (log_n - r));
                const u32 x = lux_pass_base((u32)(g & (per - 1)), stride, r);
                smem[(gi << r) + k] = args.data[((u64)tr << log_n) + x + (k << stride)];
            }
        }
        __syncthreads();
        for (u32 step = 0; step < r; step++) {
            for (u32 b = threadIdx.x; b < (1u << (lg + r - 1)); b += blockDim.x) {
                const u32 gi = b >> (r - 1), j = b & ((1u << (r - 1)) - 1);
                const u64 g = (tile << lg) + gi;
                if (g >= total) continue;
                const u32 tr = (u32)(g >> (log_n - r));
                const u32 x = lux_pass_base((u32)(g & (per - 1)), stride, r);
                u32 k0, hk;
                const u32 w = lux_pass_butterfly(j, step, r, stride, x, log_n, first, fwd, &k0, &hk);
                lux_w* grp = smem + (gi << r);
                lux_butterfly(&grp[k0], &grp[k0 + (1u << hk)], args.tables + tr % args.limbs, w, fwd);
            }
            __syncthreads();
        }
        for (u32 e = threadIdx.x; e < words; e += blockDim.x) {
            const u32 gi = stride == 0 ? e >> r : e & ((1u << lg) - 1);
            const u32 k = stride == 0 ? e & ((1u << r) - 1) : e >> lg;
            const u64 g = (tile << lg) + gi;
            if (g < total) {
                const u32 tr = (u32)(g >> (log_n - r));
                const u32 x = lux_pass_base((u32)(g & (per - 1)), stride, r);
                const lux_w y = smem[(gi << r) + k];
                args.data[((u64)tr << log_n) + x + (k << stride)] =
                    scale ? lux_scale_n(y, args.tables + tr % args.limbs) : y;
            }
        }
        // The next tile overwrites shared memory only once every thread has copied out.
        __syncthreads();
    }
}

template <bool FWD>
LUX_DEVICE void lux_ring_ntt_regs_r(const LuxRingNttArgs& args) {
    switch (args.last_stage - args.first_stage) {
        case 1: lux_ring_ntt_regs<1, FWD>(args); break;
        case 2: lux_ring_ntt_regs<2, FWD>(args); break;
        case 3: lux_ring_ntt_regs<3, FWD>(args); break;
        case 4: lux_ring_ntt_regs<4, FWD>(args); break;
        default: break;  // the host plans register passes of 1 to 4 stages only
    }
}

LUX_KERNEL(lux_ring_ntt)(LuxRingNttArgs args) {
    LUX_DYNAMIC_SHARED(lux_w, smem);
    if (args.shared != 0) {
        lux_ring_ntt_smem(args, smem);
    } else if (args.inverse == 0) {
        lux_ring_ntt_regs_r<true>(args);
    } else {
        lux_ring_ntt_regs_r<false>(args);
    }
}
