// Batched NTT: one workgroup per polynomial of `work`, transformed in place.

@group(0) @binding(0) var<storage, read> tw: array<u64>;
@group(0) @binding(1) var<storage, read_write> work: array<u64>;

@compute @workgroup_size(WG)
fn forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let polys = arrayLength(&work) / N;
    if wid.x >= polys {
        return;
    }
    ntt_forward_polys(wid.x * N, 1u, tid);
}

@compute @workgroup_size(WG)
fn inverse(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let polys = arrayLength(&work) / N;
    if wid.x >= polys {
        return;
    }
    let base = wid.x * N;
    ntt_inverse_polys_unscaled(base, 1u, tid);
    for (var c = tid; c < N; c += WG) {
        work[base + c] = mont_mul(work[base + c], NINV_R);
    }
}
