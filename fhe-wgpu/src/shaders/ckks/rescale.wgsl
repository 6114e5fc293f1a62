// Rescale's and ModRaise's shared step: one coefficient-form limb per part (xs from
// x_off, parts N apart) over the prime of record `aux0`, read as its centered remainder
// and reduced mod each of `limbs` primes: out's part p, limb l.
@compute @workgroup_size(WG)
fn center(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let n = n_words();
    let part_words = args.limbs * n;
    let total = args.parts * part_words;
    let q_src = tables[args.aux0 * table_stride()];
    for (var w = gid.x; w < total; w += stride_of(groups)) {
        let part = w / part_words;
        let l = (w % part_words) >> args.log_n;
        let s = w & (n - 1u);
        out[args.out_off + w] = centered_at(xs[args.x_off + (part << args.log_n) + s], q_src, record(l));
    }
}
