// Modular helpers and the two NTT stage loops shared by every kernel. Each entry file
// declares the global `work` (read_write, u64 residues) and `tw` (read-only tables:
// [0, N) psi^bitrev(k) R, [N, 2N) psi^-bitrev(k) R, [2N, 4N) psi^e R for e in [0, 2N),
// [4N, 5N) the odd exponent 2 bitrev(k) + 1 of slot k), all in Montgomery form R.

fn add_mod(a: u64, b: u64) -> u64 {
    let s = a + b;
    return select(s, s - Q, s >= Q);
}

fn sub_mod(a: u64, b: u64) -> u64 {
    return select(a - b, a + Q - b, a < b);
}

// Forward negacyclic NTT (Cooley-Tukey, natural in, bit-reversed out: slot k holds
// A(psi^(2 bitrev(k) + 1))) of `polys` consecutive polynomials at `base`, in place.
// Every invocation of the workgroup must call it (it holds barriers).
fn ntt_forward_polys(base: u32, polys: u32, tid: u32) {
    var half = N;
    var m = 1u;
    var log_half = LOG_N;
    for (var s = 0u; s < LOG_N; s++) {
        half = half >> 1u;
        log_half = log_half - 1u;
        for (var t = tid; t < polys * (N / 2u); t += WG) {
            let p = t >> (LOG_N - 1u);
            let j = t & (N / 2u - 1u);
            let i = j >> log_half;
            let x = base + p * N + 2u * i * half + (j & (half - 1u));
            let y = x + half;
            let u = work[x];
            let v = mont_mul(work[y], tw[m + i]);
            work[x] = add_mod(u, v);
            work[y] = sub_mod(u, v);
        }
        storageBarrier();
        m = m << 1u;
    }
}

// Inverse (Gentleman-Sande) without the 1/N factor, which the caller folds in.
fn ntt_inverse_polys_unscaled(base: u32, polys: u32, tid: u32) {
    var half = 1u;
    var log_half = 0u;
    var m = N;
    for (var s = 0u; s < LOG_N; s++) {
        let h = m >> 1u;
        for (var t = tid; t < polys * (N / 2u); t += WG) {
            let p = t >> (LOG_N - 1u);
            let j = t & (N / 2u - 1u);
            let i = j >> log_half;
            let x = base + p * N + 2u * i * half + (j & (half - 1u));
            let y = x + half;
            let u = work[x];
            let v = work[y];
            work[x] = add_mod(u, v);
            work[y] = mont_mul(sub_mod(u, v), tw[N + h + i]);
        }
        storageBarrier();
        half = half << 1u;
        log_half = log_half + 1u;
        m = h;
    }
}
