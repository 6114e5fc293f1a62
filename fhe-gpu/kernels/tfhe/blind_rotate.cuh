// The pieces both blind rotations share (GINX in bootstrap.cu, multi-bit in
// multi_bit.cu): gadget digits, monomials, the mod switch to 2N, the starting
// accumulator, the digits' forward NTTs, a step's inverse NTT and addition, and sample
// extraction. The byte contract is fhe-cpu's tfhe/bootstrap. Every function with a
// barrier is called by every thread of the block.

// Signed gadget digits of one coefficient, as fhe-cpu's Ring::decompose: centered in
// (-Q/2, Q/2], base 2^LUX_BG_LOG, least significant first, the exact decomposition's
// LUX_L + LUX_BSK_DROP digits with 0..top-1 in [-Bg/2, Bg/2) and the top digit the
// remaining carry; the lowest LUX_BSK_DROP are dropped (the key has no rows for them),
// the kept ones written as residues, the lowest kept first.
LUX_DEVICE void lux_decompose(lux_w x, lux_w* out, int stride, u64 q_ring) {
    const long long q = (long long)q_ring;
    const long long bg = 1ll << LUX_BG_LOG;
    long long v = (long long)x;
    if (v > q / 2) v -= q;
    for (int l = 0; l < LUX_L + LUX_BSK_DROP - 1; l++) {
        long long d = v & (bg - 1);
        if (d >= (bg >> 1)) d -= bg;
        v = (v - d) >> LUX_BG_LOG;
        if (l >= LUX_BSK_DROP) out[(l - LUX_BSK_DROP) * stride] = (lux_w)(d < 0 ? d + q : d);
    }
    out[(LUX_L - 1) * stride] = (lux_w)(v < 0 ? v + q : v);
}

// psi^(k e) - 1 for the slot of odd exponent e: the evaluation form of X^k - 1.
LUX_DEVICE lux_w lux_monomial_minus_one(const lux_w* psi_pow, u32 k, u32 e, lux_w q) {
    lux_w p = psi_pow[(k * e) & (2 * LUX_N - 1)];
    return p == 0 ? q - 1 : p - 1;
}

// Mod switch q -> 2N (both powers of two), round half up.
LUX_DEVICE u32 lux_ms_to_2n(u32 x) {
    const u32 shift = LUX_LOGQ - (LUX_LOG_N + 1);
    return ((x + (1u << (shift - 1))) >> shift) & (2 * LUX_N - 1);
}

// ACC = (0, X^-b TV), TV the look-up table (round(Q/8) in every coefficient for a
// gate): coefficient i moves to i + k, negated once it wraps past N.
LUX_DEVICE void lux_br_initial_acc(const u32* ct, const lux_w* lut, lux_w* acc, lux_w q) {
    u32 b = lux_ms_to_2n(ct[LUX_LWE_N]);
    u32 k = (2 * LUX_N - b) % (2 * LUX_N);
    bool negate_all = k >= LUX_N;
    if (negate_all) k -= LUX_N;
    for (int i = threadIdx.x; i < LUX_N; i += blockDim.x) {
        acc[i] = 0;
        u32 j = i + k;
        bool neg = negate_all;
        if (j >= LUX_N) {
            j -= LUX_N;
            neg = !negate_all;
        }
        const lux_w tv = lut[i];
        acc[LUX_N + j] = (neg && tv != 0) ? q - tv : tv;
    }
    __syncthreads();
}

// Gadget digits of both halves (rows 0..L-1 from acc[0], L..2L-1 from acc[1]) and
// their 2L forward NTTs: all at once where the digits live in shared memory, else two
// at a time through `smem`.
LUX_DEVICE void lux_br_digits(const lux_w* acc, lux_w* digits, lux_w* smem, const LuxNttTable& ring) {
    const int ROWS = 2 * LUX_L;
    for (int t = threadIdx.x; t < 2 * LUX_N; t += blockDim.x) {
        int half = t / LUX_N;
        int c = t % LUX_N;
        lux_decompose(acc[t], digits + (half * LUX_L) * LUX_N + c, LUX_N, ring.modulus.q);
    }
    __syncthreads();
#if LUX_DIGITS_IN_SMEM
    (void)smem;
    lux_ntt_forward_stages(digits, ROWS, LUX_LOG_N, 0, LUX_LOG_N, 0, LUX_LOG_N, ring);
#else
    for (int r = 0; r < ROWS; r += 2) {
        for (int t = threadIdx.x; t < 2 * LUX_N; t += blockDim.x) smem[t] = digits[r * LUX_N + t];
        __syncthreads();
        lux_ntt_forward_stages(smem, 2, LUX_LOG_N, 0, LUX_LOG_N, 0, LUX_LOG_N, ring);
        for (int t = threadIdx.x; t < 2 * LUX_N; t += blockDim.x) digits[r * LUX_N + t] = smem[t];
        __syncthreads();
    }
#endif
}

// acc += INTT(smem), both halves (`smem` the step's update in evaluation form).
LUX_DEVICE void lux_br_add_update(lux_w* smem, lux_w* acc, const LuxNttTable& ring) {
    __syncthreads();
    lux_ntt_inverse_stages(smem, 2, LUX_LOG_N, 0, LUX_LOG_N, 0, LUX_LOG_N, ring);
    lux_ntt_scale(smem, 2 * LUX_N, ring);
    const lux_w q = (lux_w)ring.modulus.q;
    for (int t = threadIdx.x; t < 2 * LUX_N; t += blockDim.x) acc[t] = lux_add(acc[t], smem[t], q);
    __syncthreads();
}

// Sample extraction of coefficient 0: a'_0 = a_0, a'_i = -a_(N-i), b' = b_0.
LUX_DEVICE void lux_br_extract(const lux_w* acc, u64* out, u64 q) {
    for (int t = threadIdx.x; t <= LUX_N; t += blockDim.x) {
        u64 v;
        if (t == 0) {
            v = acc[0];
        } else if (t == LUX_N) {
            v = acc[LUX_N];
        } else {
            u64 x = acc[LUX_N - t];
            v = x == 0 ? 0 : q - x;
        }
        out[t] = v;
    }
}
