// Modular arithmetic mod LUX_Q (prime, below 2^62), every result fully reduced, so any
// correct implementation gives the CPU oracle's bytes.

LUX_DEVICE u64 lux_csub(u64 x, u64 q) { return x >= q ? x - q : x; }
LUX_DEVICE u64 lux_add(u64 a, u64 b) { return lux_csub(a + b, LUX_Q); }
LUX_DEVICE u64 lux_sub(u64 a, u64 b) { return lux_csub(a + LUX_Q - b, LUX_Q); }

// w * x mod Q with the Shoup companion ws = floor(w 2^64 / Q) (Harvey 2014).
LUX_DEVICE u64 lux_mul_shoup(u64 x, u64 w, u64 ws) {
    u64 hi = lux_mulhi(x, ws);
    return lux_csub(x * w - hi * LUX_Q, LUX_Q);
}

// a * b mod Q for a, b < Q: Barrett with k = bitlen(Q), mu = floor(2^(2k) / Q); the
// quotient estimate is low by at most 2 (as fhe_api::modulus::Modulus::mul).
LUX_DEVICE u64 lux_mul(u64 a, u64 b) {
    u64 lo = a * b;
    u64 hi = lux_mulhi(a, b);
    u64 q1 = (lo >> (LUX_Q_BITS - 1)) | (hi << (65 - LUX_Q_BITS));
    u64 plo = q1 * LUX_BARRETT_MU;
    u64 phi = lux_mulhi(q1, LUX_BARRETT_MU);
    u64 q3 = (plo >> (LUX_Q_BITS + 1)) | (phi << (63 - LUX_Q_BITS));
    u64 r = lo - q3 * LUX_Q;
    return lux_csub(lux_csub(r, LUX_Q), LUX_Q);
}

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
