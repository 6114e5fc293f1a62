// The limb-batched negacyclic NTT: workgroup t transforms polynomial t of `out` (from
// word out_off) over limb t % limbs's prime and twiddles, so one dispatch covers every
// limb of every part. The stages are those of shaders/ntt.wgsl (Cooley-Tukey forward,
// natural in, bit-reversed out; Gentleman-Sande inverse with 1/N), with the ring read
// at run time: the same butterflies on the same words as the oracle.

// x times twiddle k of record r: [0, N) forward, [N, 2N) inverse.
fn tw(x: u64, r: u32, k: u32) -> u64 {
    return mul_shoup(x, tables[r + 8u + k], tables[r + 8u + 2u * n_words() + k], tables[r]);
}

@compute @workgroup_size(WG)
fn ntt_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let n = n_words();
    let log_n = args.log_n;
    let r = record(wid.x % args.limbs);
    let q = tables[r];
    let base = args.out_off + wid.x * n;
    var m = 1u;
    var log_half = log_n - 1u;
    for (var s = 0u; s + 1u < log_n; s += 2u) {
        // Stage s: m groups of half h; stage s + 1: 2m groups of half h / 2.
        let h = 1u << log_half;
        let q4 = h >> 1u;
        for (var t = tid; t < n / 4u; t += WG) {
            let i = t >> (log_half - 1u);
            let x = base + 2u * i * h + (t & (q4 - 1u));
            let a0 = out[x];
            let a1 = out[x + q4];
            let a2 = tw(out[x + h], r, m + i);
            let a3 = tw(out[x + h + q4], r, m + i);
            let b0 = add_q(a0, a2, q);
            let b2 = sub_q(a0, a2, q);
            let b1 = add_q(a1, a3, q);
            let b3 = sub_q(a1, a3, q);
            let v1 = tw(b1, r, 2u * m + 2u * i);
            let v3 = tw(b3, r, 2u * m + 2u * i + 1u);
            out[x] = add_q(b0, v1, q);
            out[x + q4] = sub_q(b0, v1, q);
            out[x + h] = add_q(b2, v3, q);
            out[x + h + q4] = sub_q(b2, v3, q);
        }
        storageBarrier();
        m = m << 2u;
        log_half = log_half - 2u;
    }
    if (log_n & 1u) == 1u {
        for (var i = tid; i < n / 2u; i += WG) {
            let x = base + 2u * i;
            let u = out[x];
            let v = tw(out[x + 1u], r, m + i);
            out[x] = add_q(u, v, q);
            out[x + 1u] = sub_q(u, v, q);
        }
    }
}

@compute @workgroup_size(WG)
fn ntt_inverse(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let n = n_words();
    let log_n = args.log_n;
    let r = record(wid.x % args.limbs);
    let q = tables[r];
    let base = args.out_off + wid.x * n;
    var half = 1u;
    var log_half = 0u;
    var groups = n / 2u;
    if (log_n & 1u) == 1u {
        for (var i = tid; i < n / 2u; i += WG) {
            let x = base + 2u * i;
            let u = out[x];
            let v = out[x + 1u];
            out[x] = add_q(u, v, q);
            out[x + 1u] = tw(sub_q(u, v, q), r, n + groups + i);
        }
        storageBarrier();
        half = 2u;
        log_half = 1u;
        groups = groups >> 1u;
    }
    for (var s = log_n & 1u; s + 1u < log_n; s += 2u) {
        // Stage with `groups` groups of half `half`, then groups / 2 of half 2 half.
        for (var t = tid; t < n / 4u; t += WG) {
            let i = t >> log_half;
            let x = base + 4u * i * half + (t & (half - 1u));
            let a0 = out[x];
            let a1 = out[x + half];
            let a2 = out[x + 2u * half];
            let a3 = out[x + 3u * half];
            let b0 = add_q(a0, a1, q);
            let b1 = tw(sub_q(a0, a1, q), r, n + groups + 2u * i);
            let b2 = add_q(a2, a3, q);
            let b3 = tw(sub_q(a2, a3, q), r, n + groups + 2u * i + 1u);
            let w = n + groups / 2u + i;
            out[x] = add_q(b0, b2, q);
            out[x + 2u * half] = tw(sub_q(b0, b2, q), r, w);
            out[x + half] = add_q(b1, b3, q);
            out[x + 3u * half] = tw(sub_q(b1, b3, q), r, w);
        }
        storageBarrier();
        half = half << 2u;
        log_half = log_half + 2u;
        groups = groups >> 2u;
    }
    for (var c = tid; c < n; c += WG) {
        out[base + c] = mul_shoup(out[base + c], tables[r + 3u], tables[r + 4u], q);
    }
}
