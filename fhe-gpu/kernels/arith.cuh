// Modular arithmetic mod a prime read from a table entry (LuxModulus, args.h), every
// result fully reduced, so any correct implementation gives the CPU oracle's bytes. No
// prime is compiled in: one module serves every prime of its word width (`lux_w`,
// args.h: 32 bits for q < 2^30, else 64 bits for q < 2^62).
//
// Kernels copy their entry into a local `LuxModulus` once, so the constants live in
// registers, and pass it by reference to these inlined helpers.

LUX_DEVICE lux_w lux_csub(lux_w x, lux_w q) { return x >= q ? x - q : x; }
LUX_DEVICE lux_w lux_add(lux_w a, lux_w b, lux_w q) { return lux_csub(a + b, q); }
LUX_DEVICE lux_w lux_sub(lux_w a, lux_w b, lux_w q) { return lux_csub(a + q - b, q); }

#if LUX_WORD_BITS == 32
// q < 2^30 here, so 3q and sums of residues fit 32 bits.

// w * x mod q with the Shoup companion ws = floor(w 2^32 / q): the estimate is low by at
// most one q, and the wrapping difference is the true value in [0, 2q).
LUX_DEVICE lux_w lux_mul_shoup(lux_w x, lux_w w, lux_w ws, lux_w q) {
    u32 hi = lux_mulhi32(x, ws);
    return lux_csub(x * w - hi * q, q);
}

// a * b mod q for a, b < q < 2^30: Barrett on the 64-bit product with k = bitlen(q),
// mu = floor(2^(2k) / q) < 2^(k+1); q1 * mu < 2^(2k+2) <= 2^62 fits.
LUX_DEVICE lux_w lux_mul(lux_w a, lux_w b, const LuxModulus& m) {
    const u32 q = (u32)m.q;
    u64 x = (u64)a * b;
    u64 q1 = x >> (m.bits - 1);
    u64 q3 = (q1 * m.barrett_mu) >> (m.bits + 1);
    u64 r = x - q3 * m.q;
    return lux_csub(lux_csub((lux_w)r, q), q);
}
#else
// w * x mod q with the Shoup companion ws = floor(w 2^64 / q) (Harvey 2014).
LUX_DEVICE lux_w lux_mul_shoup(lux_w x, lux_w w, lux_w ws, lux_w q) {
    u64 hi = lux_mulhi(x, ws);
    return lux_csub(x * w - hi * q, q);
}

// a * b mod q for a, b < q < 2^62: Barrett with k = bitlen(q) (3 <= k <= 62: an NTT prime
// is at least 2N + 1, so every shift below is in [1, 63]), mu = floor(2^(2k) / q); the
// quotient estimate is low by at most 2 (as fhe_api::ring::modulus::Modulus::mul), and
// 3q < 2^64.
LUX_DEVICE lux_w lux_mul(lux_w a, lux_w b, const LuxModulus& m) {
    const u64 q = m.q;
    const u32 k = m.bits;
    u64 lo = a * b;
    u64 hi = lux_mulhi(a, b);
    u64 q1 = (lo >> (k - 1)) | (hi << (65 - k));
    u64 plo = q1 * m.barrett_mu;
    u64 phi = lux_mulhi(q1, m.barrett_mu);
    u64 q3 = (plo >> (k + 1)) | (phi << (63 - k));
    u64 r = lo - q3 * q;
    return lux_csub(lux_csub(r, q), q);
}
#endif
