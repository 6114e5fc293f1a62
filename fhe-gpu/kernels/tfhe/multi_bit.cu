// Multi-bit blind rotation and sample extraction, one block per ciphertext
// (LuxMultiBitBlindRotateArgs): one step per group of LUX_GROUPING LWE coefficients.
// The byte contract is fhe-cpu's tfhe/multi_bit: the key holds RGSW([s_group == t]) for
// every non-zero bit pattern t of a group, `[group][t - 1][row][half][slot]`, and a step
// adds sum_t (X^<a,t> - 1) (ACC [x] K_t), <a,t> = sum of a_j over the bits j of t mod 2N.
// Every operation is exact mod Q, so summing in another order than the CPU gives the
// same words. Shapes and shared memory as lux_blind_rotate.

LUX_KERNEL(lux_multi_bit_blind_rotate)(LuxMultiBitBlindRotateArgs args) {
    LUX_DYNAMIC_SHARED(lux_w, smem);
    const int ROWS = 2 * LUX_L;
    const int TERMS = (1 << LUX_GROUPING) - 1;
    const u64 blk = blockIdx.x;
    if (blk >= args.count) return;
    const u32* ct = args.input + blk * (LUX_LWE_N + 1);
    const LuxNttTable ring = args.ring[0];
    const LuxModulus m = ring.modulus;
    const lux_w q = (lux_w)m.q;
#if LUX_DIGITS_IN_SMEM
    lux_w* acc = args.workspace + blk * (u64)(2 * LUX_N);
    lux_w* digits = smem + 2 * LUX_N;
#else
    lux_w* acc = args.workspace + blk * (u64)(2 + ROWS) * LUX_N;
    lux_w* digits = acc + 2 * LUX_N;
#endif
    u64* out = args.output + blk * (u64)(LUX_N + 1);

    lux_br_initial_acc(ct, args.lut, acc, q);

    for (int g = 0; g < LUX_LWE_N / LUX_GROUPING; g++) {
        u32 a[LUX_GROUPING];
        bool any = false;
        for (int j = 0; j < LUX_GROUPING; j++) {
            a[j] = lux_ms_to_2n(ct[g * LUX_GROUPING + j]);
            any = any || a[j] != 0;
        }
        if (!any) continue;  // every X^<a,t> - 1 is 0: the step is the identity (uniform per block).
        lux_br_digits(acc, digits, smem, ring);
        const lux_w* gk = args.bsk + (u64)g * TERMS * ROWS * 2 * LUX_N;
        for (int j = threadIdx.x; j < LUX_N; j += blockDim.x) {
            const u32 e = args.slot_exp[j];
            lux_w upd[2] = {0, 0};
            for (int t = 1; t <= TERMS; t++) {
                u32 k = 0;
                for (int b = 0; b < LUX_GROUPING; b++) {
                    if ((t >> b) & 1) k += a[b];
                }
                const lux_w mono = lux_monomial_minus_one(args.psi_pow, k & (2 * LUX_N - 1), e, q);
                const lux_w* kt = gk + (u64)(t - 1) * ROWS * 2 * LUX_N;
                for (int h = 0; h < 2; h++) {
                    lux_w s = 0;
                    for (int r = 0; r < ROWS; r++) {
                        s = lux_add(s, lux_mul(digits[r * LUX_N + j], kt[(2 * r + h) * LUX_N + j], m), q);
                    }
                    upd[h] = lux_add(upd[h], lux_mul(s, mono, m), q);
                }
            }
            smem[j] = upd[0];
            smem[LUX_N + j] = upd[1];
        }
        lux_br_add_update(smem, acc, ring);
    }

    lux_br_extract(acc, out, m.q);
}
