// The base conversions of hybrid key switching, in coefficient form, one output word per
// invocation (fhe_api::ring::rns::BaseConverter and fhe_api::ring::moddown::
// RoundingConverter define the integers; kernels/ckks/convert.cu computes the same).
// The level's constants are one run of `sc` (fhe_wgpu::ckks::plan::LevelOffsets).
//
// mod_up: every digit's extension E_j over q_0..q_l, P (`limbs` limbs each, into out
// from out_off): the digit's own limbs [start, start + len) copied, every other limb o
// (o-th target: t < start ? t : t - len) the fast conversion
//   y = sum_i [x_i (Q_D/q_i)^-1]_{q_i} ((Q_D/q_i) mod p_o)  mod p_o.
// sc from a_off: starts (aux0 + 1 digits' bounds), q_hat_inv (l + 1), row offsets
// (aux0), rows. The input (xs from x_off) is d over q_0..q_l in coefficient form.
@compute @workgroup_size(WG)
fn mod_up(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let n = n_words();
    let digits = args.aux0;
    let q_limbs = args.split;
    let digit_words = args.limbs * n;
    let total = digits * digit_words;
    let starts = args.a_off;
    let q_hat_inv = starts + digits + 1u;
    let row_offsets = q_hat_inv + q_limbs;
    let rows = row_offsets + digits;
    for (var w = gid.x; w < total; w += stride_of(groups)) {
        let j = w / digit_words;
        let t = (w % digit_words) >> args.log_n;
        let s = w & (n - 1u);
        let start = u32(sc[starts + j]);
        let la = u32(sc[starts + j + 1u]) - start;
        if t >= start && t < start + la {
            out[args.out_off + w] = xs[args.x_off + (t << args.log_n) + s];
            continue;
        }
        let o = select(t - la, t, t < start);
        let rp = record(t);
        let p = tables[rp];
        let row = rows + u32(sc[row_offsets + j]) + o * la;
        var y = 0lu;
        for (var i = 0u; i < la; i += 1u) {
            let src = start + i;
            let ti = mul_at(xs[args.x_off + (src << args.log_n) + s], sc[q_hat_inv + src], record(src));
            y = add_q(y, mul_at(reduce_at(ti, rp), sc[row + i], rp), p);
        }
        out[args.out_off + w] = y;
    }
}

// mod_down: for `parts` polynomials ([part][K][N] in xs from x_off, K = aux0;
// [part][l + 1][N] out from out_off), the rounding P -> q_0..q_l conversion: its
// fixed-point quotient v = floor(sum_k floor(t_k c_k / 2^s_k) / 2^64) exactly as pinned
// in moddown.rs (128-bit sums as hi/lo words), then d_o = sum_k t_k (P/p_k mod q_o) -
// offset(v) mod q_o. sc from a_off: half, p_hat_inv, frac_c, frac_s (K each),
// p_hat_mod_q ((l + 1) K), offset ((l + 1)(K + 1)). Limb l + 1 + k is p_k.
@compute @workgroup_size(WG)
fn mod_down(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let n = n_words();
    let k_len = args.aux0;
    let q_limbs = args.limbs;
    let part_words = q_limbs * n;
    let total = args.parts * part_words;
    let half = args.a_off;
    let p_hat_inv = half + k_len;
    let frac_c = p_hat_inv + k_len;
    let frac_s = frac_c + k_len;
    let p_hat_mod_q = frac_s + k_len;
    let offset = p_hat_mod_q + q_limbs * k_len;
    for (var w = gid.x; w < total; w += stride_of(groups)) {
        let part = w / part_words;
        let o = (w % part_words) >> args.log_n;
        let s = w & (n - 1u);
        let input = args.x_off + part * k_len * n;
        let rq = record(o);
        let q = tables[rq];
        var sum_lo = 0lu;
        var sum_hi = 0lu;
        var y = 0lu;
        for (var k = 0u; k < k_len; k += 1u) {
            let rp = record(q_limbs + k);
            let p = tables[rp];
            let x = xs[input + (k << args.log_n) + s];
            let zs0 = x + sc[half + k];
            let z = select(zs0, zs0 - p, zs0 >= p);
            let tk = mul_at(z, sc[p_hat_inv + k], rp);
            // f_k = floor(t_k c_k / 2^s_k), s_k in [1, 62]: a 128-bit product shifted.
            let c = sc[frac_c + k];
            let sh = u32(sc[frac_s + k]);
            let lo = tk * c;
            let hi = mulhi(tk, c);
            let f_lo = (lo >> sh) | (hi << (64u - sh));
            let f_hi = hi >> sh;
            sum_lo += f_lo;
            sum_hi += f_hi + select(0lu, 1lu, sum_lo < f_lo);
            y = add_q(y, mul_at(reduce_at(tk, rq), sc[p_hat_mod_q + o * k_len + k], rq), q);
        }
        // v = floor(sum / 2^64) <= K.
        out[args.out_off + w] = sub_q(y, sc[offset + o * (k_len + 1u) + u32(sum_hi)], q);
    }
}
