// The key-switching inner product, step 3 of hybrid key switching (fhe-cpu's
// ckks/keyswitch.rs, kernels/ckks/keyswitch.cu): for limb t of q_0..q_l, P (QP prime
// i = t for t <= l, else the key's q_len + t - (l + 1)) and slot s,
//   u0[t][s] = sum_j E_j[t][g(s)] b_j[i][s],  u1[t][s] = sum_j E_j[t][g(s)] a_j[i][s]
// with g the Galois gather (index[s], when `gather` is set) or the identity. E is xs
// (digit-major, `limbs` limbs each), the key halves ys (b) and yhi (a) as prepared
// (digit-major over the key's QP: aux2 limbs, the first aux1 over q). Digits: aux0.
// Limbs over q go to out at out_off (u0) and w0 (u1), those over P at w1 and w2.
@compute @workgroup_size(WG)
fn inner_product(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let n = n_words();
    let q_limbs = args.split;
    let total = args.limbs * n;
    for (var w = gid.x; w < total; w += stride_of(groups)) {
        let t = w >> args.log_n;
        let s = w & (n - 1u);
        var g = s;
        if args.gather != 0u {
            g = index[s];
        }
        let i = select(args.aux1 + (t - q_limbs), t, t < q_limbs);
        let r = record(t);
        let q = tables[r];
        var acc0 = 0lu;
        var acc1 = 0lu;
        for (var j = 0u; j < args.aux0; j += 1u) {
            let e = xs[((j * args.limbs + t) << args.log_n) + g];
            let at = ((j * args.aux2 + i) << args.log_n) + s;
            acc0 = add_q(acc0, mul_at(e, ys[at], r), q);
            acc1 = add_q(acc1, mul_at(e, yhi[at], r), q);
        }
        if t < q_limbs {
            out[args.out_off + w] = acc0;
            out[args.w0 + w] = acc1;
        } else {
            let hi = w - (q_limbs << args.log_n);
            out[args.w1 + hi] = acc0;
            out[args.w2 + hi] = acc1;
        }
    }
}
