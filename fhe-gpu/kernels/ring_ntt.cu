// The limb-batched ring NTT (LuxRingNttArgs): negacyclic transforms of any ring degree
// N = 2^log_n <= 2^17, transform t over limb t % limbs with that limb's prime and
// twiddles, so one launch covers every limb of a batch of RNS polynomials (a CKKS
// ciphertext at N = 2^16 has 30+ limbs) and the bit scheme's one prime alike. Nothing
// about the ring is compiled in; only the word width is.
//
// A transform of N words does not fit one block's shared memory beyond a few thousand
// words, so the host runs each direction as a few launches in issue order
// (fhe_gpu::backend::ring):
// - a "global" launch (log_chunk 0) runs one stage whose butterflies span more than a
//   chunk, in device memory, one butterfly per thread over the whole grid;
// - a "chunk" launch loads chunks of 2^log_chunk words into shared memory, one per
//   block at a time, and runs every stage in [first_stage, last_stage) there (the last
//   stages of the forward transform, the first of the inverse).
// The launch that runs the inverse's last stage also applies 1/N.

// One stage in device memory (LuxRingNttArgs with log_chunk 0).
LUX_DEVICE void lux_ring_ntt_stage(const LuxRingNttArgs& args) {
    const u32 s = args.first_stage;
    const u32 log_n = args.log_n;
    const bool inverse = args.inverse != 0;
    const bool scale = inverse && args.last_stage == log_n;
    const u32 log_half = inverse ? s : log_n - 1 - s;
    // The twiddle offset: 2^s blocks forward, 2^(log_n - 1 - s) inverse.
    const u32 tw_base = inverse ? 1u << (log_n - 1 - s) : 1u << s;
    const u64 per_transform = 1ull << (log_n - 1);
    const u64 total = (u64)args.transforms * per_transform;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < total; k += stride) {
        // The transform index is below `transforms`, a u32: 32-bit arithmetic from here
        // (a 64-bit modulo is a long emulated sequence on GPUs).
        const u32 tr = (u32)(k >> (log_n - 1));
        const u32 kk = (u32)(k & (per_transform - 1));
        const LuxNttTable* t = args.tables + tr % args.limbs;
        const lux_w q = (lux_w)t->modulus.q;
        const u32 block = kk >> log_half;
        lux_w* a = args.data + ((u64)tr << log_n) + (block << (log_half + 1)) + (kk & ((1u << log_half) - 1));
        const u32 w = tw_base + block;
        const lux_w u = a[0];
        const lux_w v = a[1u << log_half];
        lux_w x, y;
        if (!inverse) {
            const lux_w vw = lux_mul_shoup(v, t->psi[w], t->psi_shoup[w], q);
            x = lux_add(u, vw, q);
            y = lux_sub(u, vw, q);
        } else {
            x = lux_add(u, v, q);
            y = lux_mul_shoup(lux_sub(u, v, q), t->ipsi[w], t->ipsi_shoup[w], q);
            if (scale) {
                const lux_w ni = (lux_w)t->n_inv, ni_s = (lux_w)t->n_inv_shoup;
                x = lux_mul_shoup(x, ni, ni_s, q);
                y = lux_mul_shoup(y, ni, ni_s, q);
            }
        }
        a[0] = x;
        a[1u << log_half] = y;
    }
}

// Stages [first_stage, last_stage) chunk by chunk in shared memory (2^log_chunk words
// of dynamic shared memory). Every branch below is uniform over the block.
LUX_DEVICE void lux_ring_ntt_chunks(const LuxRingNttArgs& args, lux_w* smem) {
    const u32 log_n = args.log_n;
    const u32 log_c = args.log_chunk;
    const u32 len = 1u << log_c;
    const u64 chunks = (u64)args.transforms << (log_n - log_c);
    const bool scale = args.inverse != 0 && args.last_stage == log_n;
    for (u64 c = blockIdx.x; c < chunks; c += gridDim.x) {
        const u32 tr = (u32)(c >> (log_n - log_c));
        const u32 off = (u32)(c & ((1ull << (log_n - log_c)) - 1)) << log_c;
        const LuxNttTable t = args.tables[tr % args.limbs];
        lux_w* data = args.data + ((u64)tr << log_n) + off;
        for (u32 k = threadIdx.x; k < len; k += blockDim.x) smem[k] = data[k];
        __syncthreads();
        if (args.inverse == 0) {
            lux_ntt_forward_stages(smem, 1, log_c, off, log_n, args.first_stage, args.last_stage, t);
        } else {
            lux_ntt_inverse_stages(smem, 1, log_c, off, log_n, args.first_stage, args.last_stage, t);
            if (scale) lux_ntt_scale(smem, len, t);
        }
        for (u32 k = threadIdx.x; k < len; k += blockDim.x) data[k] = smem[k];
        // The next chunk overwrites shared memory only once every thread has copied out.
        __syncthreads();
    }
}

LUX_KERNEL(lux_ring_ntt)(LuxRingNttArgs args) {
    LUX_DYNAMIC_SHARED(lux_w, smem);
    if (args.log_chunk == 0) {
        lux_ring_ntt_stage(args);
    } else {
        lux_ring_ntt_chunks(args, smem);
    }
}
