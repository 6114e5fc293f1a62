// The base conversions of hybrid key switching, in coefficient form, one output word per
// thread (fhe_api::ring::rns::BaseConverter and fhe_api::ring::moddown::RoundingConverter
// define the integers; any exact reduction gives their words).
//
// lux_ckks_mod_up (LuxCkksModUpArgs): every digit's extension E_j over q_0..q_l, P
// (`limbs` limbs each, one launch): the digit's own limbs [start, start + len) copied, every
// other limb o (o-th target: t < start ? t : t - len) the fast conversion
//   y = sum_i [x_i (Q_D/q_i)^-1]_{q_i} ((Q_D/q_i) mod p_o)  mod p_o.
// The host then runs one forward NTT over every digit's limbs: the own limbs come back to
// the input's evaluation form (inverse then forward is the identity).
//
// lux_ckks_mod_down (LuxCkksModDownArgs): for `parts` polynomials ([part][K][N] in,
// [part][q_limbs][N] out), the rounding P -> q_0..q_l conversion, its
// fixed-point quotient v = floor(sum_k floor(t_k c_k / 2^s_k) / 2^64) exactly as pinned in
// moddown.rs (128-bit sums as hi/lo words), then d_o = sum_k t_k (P/p_k mod q_o) -
// offset(v) mod q_o.

LUX_KERNEL(lux_ckks_mod_up)(LuxCkksModUpArgs args) {
    const u32 log_n = args.log_n;
    const u64 digit_words = (u64)args.limbs << log_n;
    const u64 total = (u64)args.digits * digit_words;
    LUX_FOR_WORDS(w, total) {
        const u32 j = (u32)(w / digit_words);
        const u32 t = lux_limb_of(w, log_n, args.limbs);
        const u64 s = w & ((1ull << log_n) - 1);
        const u32 start = args.starts[j], la = args.starts[j + 1] - start;
        if (t >= start && t < start + la) {
            args.out[w] = args.input[((u64)t << log_n) + s];
            continue;
        }
        const u32 o = t < start ? t : t - la;
        const LuxModulus p = args.tables[t].modulus;
        const u64* row = args.rows + args.row_offsets[j] + (u64)o * la;
        u64 y = 0;
        for (u32 i = 0; i < la; i++) {
            const u32 src = start + i;
            const LuxModulus qi = args.tables[src].modulus;
            // t_i is recomputed per output limb: `la` extra products per word, where a
            // shared-memory block of t_i would trade them for a barrier (a later variant).
            const u64 ti = lux_mul(args.input[((u64)src << log_n) + s], args.q_hat_inv[src], qi);
            y = lux_add(y, lux_mul(lux_reduce(ti, p), row[i], p), p.q);
        }
        args.out[w] = y;
    }
}

LUX_KERNEL(lux_ckks_mod_down)(LuxCkksModDownArgs args) {
    const u32 log_n = args.log_n;
    const u64 part_words = (u64)args.q_limbs << log_n;
    const u64 total = (u64)args.parts * part_words;
    const u32 k_len = args.p_limbs;
    LUX_FOR_WORDS(w, total) {
        const u32 part = (u32)(w / part_words);
        const u32 o = lux_limb_of(w, log_n, args.q_limbs);
        const u64 s = w & ((1ull << log_n) - 1);
        const lux_w* input = args.input + (((u64)part * k_len) << log_n);
        const LuxModulus q = args.tables[o].modulus;
        u64 sum_lo = 0, sum_hi = 0, y = 0;
        for (u32 k = 0; k < k_len; k++) {
            const LuxModulus p = args.tables[args.q_limbs + k].modulus;
            const u64 x = input[((u64)k << log_n) + s];
            const u64 z = lux_csub(x + args.half[k], p.q);
            const u64 tk = lux_mul(z, args.p_hat_inv[k], p);
            // f_k = floor(t_k c_k / 2^s_k), s_k in [1, 62]: a 128-bit product shifted.
            const u64 c = args.frac_c[k];
            const u32 sh = args.frac_s[k];
            const u64 lo = tk * c, hi = lux_mulhi(tk, c);
            const u64 f_lo = (lo >> sh) | (hi << (64 - sh));
            const u64 f_hi = hi >> sh;
            sum_lo += f_lo;
            sum_hi += f_hi + (sum_lo < f_lo ? 1 : 0);
            y = lux_add(y, lux_mul(lux_reduce(tk, q), args.p_hat_mod_q[(u64)o * k_len + k], q), q.q);
        }
        // v = floor(sum / 2^64) <= K.
        args.out[w] = lux_sub(y, args.offset[(u64)o * (k_len + 1) + sum_hi], q.q);
    }
}
