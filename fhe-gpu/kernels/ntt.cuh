// Negacyclic NTT stages over data in shared memory, by the whole block: Cooley-Tukey
// forward (natural -> bit-reversed order), Gentleman-Sande inverse, the order
// fhe_api::ops::ring defines; the inverse's 1/N is `lux_ntt_scale`. Shared by the blind
// rotation (whole polynomials) and the ring NTT (chunks of longer ones). Callers
// synchronize before (the data is in place); each function returns synchronized.
//
// Stage s of a transform of 2^log_n words pairs the words `half` apart in blocks of
// 2 half: forward half = 2^(log_n - 1 - s) with twiddle psi[2^s + block], inverse
// half = 2^s with twiddle ipsi[2^(log_n - 1 - s) + block] (fhe-cpu's reference NTT).
// The data here is `count` chunks of 2^log_len words, each starting `off` words into
// its transform (a multiple of 2^log_len); a stage runs here only while 2 half <= 2^log_len.

// Butterfly `k` of the count * 2^(log_len - 1) in the chunks: the index of its first
// word in `a`, and in `i` its block within the whole transform (the twiddle's offset).
LUX_DEVICE u32 lux_chunk_butterfly(u32 k, u32 log_len, u32 log_half, u32 off, u32* i) {
    const u32 chunk = k >> (log_len - 1);
    const u32 kk = k & ((1u << (log_len - 1)) - 1);
    const u32 block = kk >> log_half;
    *i = (off >> (log_half + 1)) + block;
    return (chunk << log_len) + (block << (log_half + 1)) + (kk & ((1u << log_half) - 1));
}

// Forward stages [s0, s1).
LUX_DEVICE void lux_ntt_forward_stages(lux_w* a, u32 count, u32 log_len, u32 off, u32 log_n, u32 s0, u32 s1,
                                       const LuxNttTable& t) {
    const lux_w q = (lux_w)t.modulus.q;
    for (u32 s = s0; s < s1; s++) {
        const u32 log_half = log_n - 1 - s;
        const u32 m = 1u << s;
        for (u32 k = threadIdx.x; k < (count << (log_len - 1)); k += blockDim.x) {
            u32 i;
            const u32 b = lux_chunk_butterfly(k, log_len, log_half, off, &i);
            const lux_w u = a[b];
            const lux_w v = lux_mul_shoup(a[b + (1u << log_half)], t.psi[m + i], t.psi_shoup[m + i], q);
            a[b] = lux_add(u, v, q);
            a[b + (1u << log_half)] = lux_sub(u, v, q);
        }
        __syncthreads();
    }
}

// Inverse stages [s0, s1), without the 1/N.
LUX_DEVICE void lux_ntt_inverse_stages(lux_w* a, u32 count, u32 log_len, u32 off, u32 log_n, u32 s0, u32 s1,
                                       const LuxNttTable& t) {
    const lux_w q = (lux_w)t.modulus.q;
    for (u32 s = s0; s < s1; s++) {
        const u32 log_half = s;
        const u32 h = 1u << (log_n - 1 - s);
        for (u32 k = threadIdx.x; k < (count << (log_len - 1)); k += blockDim.x) {
            u32 i;
            const u32 b = lux_chunk_butterfly(k, log_len, log_half, off, &i);
            const lux_w u = a[b];
            const lux_w v = a[b + (1u << log_half)];
            a[b] = lux_add(u, v, q);
            a[b + (1u << log_half)] = lux_mul_shoup(lux_sub(u, v, q), t.ipsi[h + i], t.ipsi_shoup[h + i], q);
        }
        __syncthreads();
    }
}

// The inverse's 1/N on `len` words.
LUX_DEVICE void lux_ntt_scale(lux_w* a, u32 len, const LuxNttTable& t) {
    const lux_w q = (lux_w)t.modulus.q;
    for (u32 k = threadIdx.x; k < len; k += blockDim.x) {
        a[k] = lux_mul_shoup(a[k], (lux_w)t.n_inv, (lux_w)t.n_inv_shoup, q);
    }
    __syncthreads();
}
