// Mod switch Q -> q and key switching from the ring secret (dimension N) to the LWE
// secret (dimension n), one block per extracted sample (LuxKeySwitchArgs). The byte
// contract is fhe-cpu's tfhe/keyswitch.rs. The shapes (LUX_N, LUX_LWE_N, the base and
// levels) are compile-time; Q comes from `args.modulus`, a one-entry table.

// round(x q / Q) mod q for q = 2^LUX_LOGQ, x < Q, exactly as the oracle's u128 division:
// long division by shifting gives x 2^logq = quot Q + rem, then floor(Q/2) rounds. No
// intermediate exceeds 2Q < 2^63.
LUX_DEVICE u32 lux_ms_to_q(u64 x, u64 q_ring) {
    u64 rem = x;
    u64 quot = 0;
    for (int i = 0; i < LUX_LOGQ; i++) {
        rem <<= 1;
        quot <<= 1;
        if (rem >= q_ring) {
            rem -= q_ring;
            quot |= 1;
        }
    }
    rem += q_ring / 2;
    if (rem >= q_ring) quot += 1;
    return (u32)(quot & ((1ull << LUX_LOGQ) - 1));
}

// Unsigned base-2^LUX_KS_BASE_LOG digits, most significant first, one key sample per
// non-zero digit value at index (j*levels + l)*(B-1) + (v-1); 16-bit wrapping
// arithmetic, then mod q; `add` is added to b (q/8 for a sign bootstrap).
LUX_KERNEL(lux_key_switch)(LuxKeySwitchArgs args) {
    LUX_SHARED u32 sa[LUX_N + 1];
    const u64 blk = blockIdx.x;
    if (blk >= args.count) return;
    const u64 q_ring = args.modulus[0].q;
    const u64* in = args.input + blk * (u64)(LUX_N + 1);
    const u16* ksk = args.ksk;
    u32* out = args.output + blk * (u64)(LUX_LWE_N + 1);
    const u32 add = args.add;
    const u32 bm1 = (1u << LUX_KS_BASE_LOG) - 1;
    for (int t = threadIdx.x; t <= LUX_N; t += blockDim.x) sa[t] = lux_ms_to_q(in[t], q_ring);
    __syncthreads();
    for (int t = threadIdx.x; t <= LUX_LWE_N; t += blockDim.x) {
        u32 acc = t == LUX_LWE_N ? sa[LUX_N] + add : 0;
        for (int j = 0; j < LUX_N; j++) {
            const u32 a = sa[j];
            for (int l = 0; l < LUX_KS_LEVELS; l++) {
                const u32 v = (a >> (LUX_LOGQ - LUX_KS_BASE_LOG * (l + 1))) & bm1;
                if (v != 0) {
                    const u64 s = (u64)(j * LUX_KS_LEVELS + l) * bm1 + (v - 1);
                    acc -= ksk[s * (LUX_LWE_N + 1) + t];
                }
            }
        }
        out[t] = acc & ((1u << LUX_LOGQ) - 1);
    }
}
