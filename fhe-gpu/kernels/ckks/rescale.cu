// Rescale's and ModRaise's shared step (LuxCkksCenterArgs): one limb in coefficient
// form, mod q_src, read as its centered remainder and reduced mod each of `limbs`
// primes; `parts` parts at once (each part's source limb at input + part N, its output
// limbs at out + part limbs N). The host then takes the output to evaluation form and,
// for a rescale, finishes with (x_i - d_i) q_l^-1 (an eltwise SUB_SCALE), as
// fhe-cpu/src/ckks/rescale.rs pins it.

LUX_KERNEL(lux_ckks_center)(LuxCkksCenterArgs args) {
    const u32 log_n = args.log_n;
    const u64 part_words = (u64)args.limbs << log_n;
    const u64 total = (u64)args.parts * part_words;
    const u64 q_src = args.source->modulus.q;
    LUX_FOR_WORDS(w, total) {
        const u32 part = (u32)(w / part_words);
        const u32 l = lux_limb_of(w, log_n, args.limbs);
        const u64 s = w & ((1ull << log_n) - 1);
        const LuxModulus m = args.tables[l].modulus;
        args.out[w] = lux_centered(args.input[((u64)part << log_n) + s], q_src, m);
    }
}
