// Blind rotation (GINX, ternary secret) and sample extraction, one block per ciphertext,
// the whole loop over the n LWE coefficients on the device (LuxBlindRotateArgs). The
// steps and their byte contract are fhe-cpu's tfhe/bootstrap. The set's shapes (LUX_N,
// LUX_L, ...) are compile-time; its prime Q and NTT tables come from `args.ring`, a
// one-entry table.

// Signed gadget digits of one coefficient, as fhe-cpu's Ring::decompose: centered in
// (-Q/2, Q/2], base 2^LUX_BG_LOG, least significant first, digits 0..L-2 in
// [-Bg/2, Bg/2), the top digit the remaining carry; each written as a residue.
LUX_DEVICE void lux_decompose(lux_w x, lux_w* out, int stride, u64 q_ring) {
    const long long q = (long long)q_ring;
    const long long bg = 1ll << LUX_BG_LOG;
    long long v = (long long)x;
    if (v > q / 2) v -= q;
    for (int l = 0; l < LUX_L - 1; l++) {
        long long d = v & (bg - 1);
        if (d >= (bg >> 1)) d -= bg;
        v = (v - d) >> LUX_BG_LOG;
        out[l * stride] = (lux_w)(d < 0 ? d + q : d);
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

// LuxBlindRotateArgs. Dynamic shared memory: 2N words, or (2 + 2L) N words with
// LUX_DIGITS_IN_SMEM (the digits then never touch global memory, and the workspace holds
// only the 2N accumulator words per ciphertext).
LUX_KERNEL(lux_blind_rotate)(LuxBlindRotateArgs args) {
    LUX_DYNAMIC_SHARED(lux_w, smem);
    const int ROWS = 2 * LUX_L;
    const u64 blk = blockIdx.x;
    if (blk >= args.count) return;
    const u32* ct = args.input + blk * (LUX_LWE_N + 1);
    const lux_w* bsk = args.bsk;
    const LuxNttTable ring = args.ring[0];
    const LuxModulus m = ring.modulus;
    const lux_w q = (lux_w)m.q;
    const lux_w* psi_pow = args.psi_pow;
    const u32* slot_exp = args.slot_exp;
#if LUX_DIGITS_IN_SMEM
    lux_w* acc = args.workspace + blk * (u64)(2 * LUX_N);
    lux_w* digits = smem + 2 * LUX_N;  // shared memory holds (2 + 2L) N words
#else
    lux_w* acc = args.workspace + blk * (u64)(2 + ROWS) * LUX_N;
    lux_w* digits = acc + 2 * LUX_N;
#endif
    u64* out = args.output + blk * (u64)(LUX_N + 1);

    // ACC = (0, X^-b TV), TV the look-up table (round(Q/8) in every coefficient for a
    // gate): coefficient i moves to i + k, negated once it wraps past N.
    {
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
            const lux_w tv = args.lut[i];
            acc[LUX_N + j] = (neg && tv != 0) ? q - tv : tv;
        }
    }
    __syncthreads();

    for (int i = 0; i < LUX_LWE_N; i++) {
        const u32 a = lux_ms_to_2n(ct[i]);
        if (a == 0) continue;  // X^0 - 1 = 0: the step is the identity (uniform per block).
        // Gadget digits of both halves: rows 0..L-1 from acc[0], L..2L-1 from acc[1].
        for (int t = threadIdx.x; t < 2 * LUX_N; t += blockDim.x) {
            int half = t / LUX_N;
            int c = t % LUX_N;
            lux_decompose(acc[t], digits + (half * LUX_L) * LUX_N + c, LUX_N, m.q);
        }
        __syncthreads();
        // 2L forward NTTs: all at once where the digits live in shared memory, else two
        // at a time through it.
#if LUX_DIGITS_IN_SMEM
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
        // Both external products with the key pair of coefficient i, times the monomials.
        const lux_w* kp = bsk + (u64)(2 * i) * ROWS * 2 * LUX_N;
        const lux_w* km = kp + (u64)ROWS * 2 * LUX_N;
        for (int j = threadIdx.x; j < LUX_N; j += blockDim.x) {
            const u32 e = slot_exp[j];
            const lux_w mp = lux_monomial_minus_one(psi_pow, a, e, q);
            const lux_w mm = lux_monomial_minus_one(psi_pow, 2 * LUX_N - a, e, q);
            for (int h = 0; h < 2; h++) {
                lux_w sp = 0, sm = 0;
                for (int r = 0; r < ROWS; r++) {
                    const lux_w d = digits[r * LUX_N + j];
                    sp = lux_add(sp, lux_mul(d, kp[(2 * r + h) * LUX_N + j], m), q);
                    sm = lux_add(sm, lux_mul(d, km[(2 * r + h) * LUX_N + j], m), q);
                }
                smem[h * LUX_N + j] = lux_add(lux_mul(sp, mp, m), lux_mul(sm, mm, m), q);
            }
        }
        __syncthreads();
        lux_ntt_inverse_stages(smem, 2, LUX_LOG_N, 0, LUX_LOG_N, 0, LUX_LOG_N, ring);
        lux_ntt_scale(smem, 2 * LUX_N, ring);
        for (int t = threadIdx.x; t < 2 * LUX_N; t += blockDim.x) acc[t] = lux_add(acc[t], smem[t], q);
        __syncthreads();
    }

    // Sample extraction of coefficient 0: a'_0 = a_0, a'_i = -a_(N-i), b' = b_0.
    for (int t = threadIdx.x; t <= LUX_N; t += blockDim.x) {
        u64 v;
        if (t == 0) {
            v = acc[0];
        } else if (t == LUX_N) {
            v = acc[LUX_N];
        } else {
            u64 x = acc[LUX_N - t];
            v = x == 0 ? 0 : m.q - x;
        }
        out[t] = v;
    }
}
