// The key-switching inner product (LuxCkksInnerArgs), step 3 of hybrid key switching
// (fhe-cpu/src/ckks/keyswitch.rs): for limb t of q_0..q_l, P (QP prime i = t for t <= l,
// else L + 1 + t - (l + 1)) and slot s,
//   u0[t][s] = sum_j E_j[t][g(s)] b_j[i][s],  u1[t][s] = sum_j E_j[t][g(s)] a_j[i][s]
// with g the Galois permutation's gather (index[s]) for a rotation, the identity for a
// relinearization: the oracle keeps its Galois keys permuted by sigma^-1 and gathers the
// sum, which is this sum term by term. The key is read as prepared (digit-major over QP).
// Limbs over q_0..q_l go to u0, u1, those over P to u0_hi, u1_hi.

LUX_KERNEL(lux_ckks_inner_product)(LuxCkksInnerArgs args) {
    const u32 log_n = args.log_n;
    const u64 n = 1ull << log_n;
    const u64 total = (u64)args.limbs << log_n;
    LUX_FOR_WORDS(w, total) {
        const u32 t = (u32)(w >> log_n);
        const u64 s = w & (n - 1);
        const u64 g = args.index == 0 ? s : (u64)args.index[s];
        const u32 i = t < args.q_limbs ? t : args.q_len + (t - args.q_limbs);
        const LuxModulus m = args.tables[t].modulus;
        u64 acc0 = 0, acc1 = 0;
        for (u32 j = 0; j < args.digits; j++) {
            const u64 e = args.ext[(((u64)j * args.limbs + t) << log_n) + g];
            const u64 at = (((u64)j * args.qp + i) << log_n) + s;
            acc0 = lux_add(acc0, lux_mul(e, args.key_b[at], m), m.q);
            acc1 = lux_add(acc1, lux_mul(e, args.key_a[at], m), m.q);
        }
        if (t < args.q_limbs) {
            args.u0[w] = acc0;
            args.u1[w] = acc1;
        } else {
            const u64 hi = w - ((u64)args.q_limbs << log_n);
            args.u0_hi[hi] = acc0;
            args.u1_hi[hi] = acc1;
        }
    }
}
