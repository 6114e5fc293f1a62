// Modular arithmetic mod LUX_Q (prime), every result fully reduced, so any correct
// implementation gives the CPU oracle's bytes. Residues are `lux_w`: 32-bit words when
// Q < 2^30 (PN10QP27, PN10QP25Q: half the memory traffic, and 32-bit multiplies, which
// GPUs issue at several times the rate of 64-bit ones), 64-bit words otherwise.

#if LUX_WORD_BITS == 32
typedef u32 lux_w;
#else
typedef u64 lux_w;
#endif

LUX_DEVICE lux_w lux_csub(lux_w x, lux_w q) { return x >= q ? x - q : x; }
LUX_DEVICE lux_w lux_add(lux_w a, lux_w b) { return lux_csub(a + b, (lux_w)LUX_Q); }
LUX_DEVICE lux_w lux_sub(lux_w a, lux_w b) { return lux_csub(a + (lux_w)LUX_Q - b, (lux_w)LUX_Q); }

#if LUX_WORD_BITS == 32
// Q < 2^30 here (fhe_gpu::source::word_bits), so 3Q and sums of residues fit 32 bits.

// w * x mod Q with the Shoup companion ws = floor(w 2^32 / Q).
LUX_DEVICE lux_w lux_mul_shoup(lux_w x, lux_w w, lux_w ws) {
    u32 hi = lux_mulhi32(x, ws);
    return lux_csub(x * w - hi * (u32)LUX_Q, (u32)LUX_Q);
}

// a * b mod Q for a, b < Q < 2^31: Barrett on the 64-bit product with k = bitlen(Q),
// mu = floor(2^(2k) / Q) < 2^(k+1); q1 * mu < 2^(2k+2) <= 2^64 fits.
LUX_DEVICE lux_w lux_mul(lux_w a, lux_w b) {
    u64 x = (u64)a * b;
    u64 q1 = x >> (LUX_Q_BITS - 1);
    u64 q3 = (q1 * LUX_BARRETT_MU) >> (LUX_Q_BITS + 1);
    u64 r = x - q3 * LUX_Q;
    return (lux_w)lux_csub(lux_csub((lux_w)r, (lux_w)LUX_Q), (lux_w)LUX_Q);
}
#else
// w * x mod Q with the Shoup companion ws = floor(w 2^64 / Q) (Harvey 2014).
LUX_DEVICE lux_w lux_mul_shoup(lux_w x, lux_w w, lux_w ws) {
    u64 hi = lux_mulhi(x, ws);
    return lux_csub(x * w - hi * LUX_Q, LUX_Q);
}

// a * b mod Q for a, b < Q: Barrett with k = bitlen(Q), mu = floor(2^(2k) / Q); the
// quotient estimate is low by at most 2 (as fhe_api::modulus::Modulus::mul).
LUX_DEVICE lux_w lux_mul(lux_w a, lux_w b) {
    u64 lo = a * b;
    u64 hi = lux_mulhi(a, b);
    u64 q1 = (lo >> (LUX_Q_BITS - 1)) | (hi << (65 - LUX_Q_BITS));
    u64 plo = q1 * LUX_BARRETT_MU;
    u64 phi = lux_mulhi(q1, LUX_BARRETT_MU);
    u64 q3 = (plo >> (LUX_Q_BITS + 1)) | (phi << (63 - LUX_Q_BITS));
    u64 r = lo - q3 * LUX_Q;
    return lux_csub(lux_csub(r, LUX_Q), LUX_Q);
}
#endif

// round(x q / Q) mod q for q = 2^LUX_LOGQ, x < Q, exactly as the oracle's u128 division:
// long division by shifting gives x 2^logq = quot Q + rem, then floor(Q/2) rounds.
LUX_DEVICE u32 lux_ms_to_q(u64 x) {
    u64 rem = x;
    u64 quot = 0;
    for (int i = 0; i < LUX_LOGQ; i++) {
        rem <<= 1;
        quot <<= 1;
        if (rem >= LUX_Q) {
            rem -= LUX_Q;
            quot |= 1;
        }
    }
    rem += LUX_Q / 2;
    if (rem >= LUX_Q) quot += 1;
    return (u32)(quot & ((1ull << LUX_LOGQ) - 1));
}

// Mod switch q -> 2N (both powers of two), round half up.
LUX_DEVICE u32 lux_ms_to_2n(u32 x) {
    const u32 shift = LUX_LOGQ - (LUX_LOG_N + 1);
    return ((x + (1u << (shift - 1))) >> shift) & (2 * LUX_N - 1);
}
