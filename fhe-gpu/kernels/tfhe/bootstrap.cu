// Blind rotation (GINX, ternary secret) and sample extraction, one block per ciphertext,
// the whole loop over the n LWE coefficients on the device (LuxBlindRotateArgs). The
// steps and their byte contract are fhe-cpu's tfhe/bootstrap; the shared pieces are in
// blind_rotate.cuh. The set's shapes (LUX_N, LUX_L, ...) are compile-time; its prime Q
// and NTT tables come from `args.ring`, a one-entry table.

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

    lux_br_initial_acc(ct, args.lut, acc, q);

    for (int i = 0; i < LUX_LWE_N; i++) {
        const u32 a = lux_ms_to_2n(ct[i]);
        if (a == 0) continue;  // X^0 - 1 = 0: the step is the identity (uniform per block).
        lux_br_digits(acc, digits, smem, ring);
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
        lux_br_add_update(smem, acc, ring);
    }

    lux_br_extract(acc, out, m.q);
}
