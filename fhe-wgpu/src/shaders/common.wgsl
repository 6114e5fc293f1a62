// Modular helpers and the two NTT stage loops shared by every kernel. Each entry file
// declares the global `work` (read_write, u64 residues) and `tw` (read-only tables:
// [0, N) psi^bitrev(k) R, [N, 2N) psi^-bitrev(k) R, [2N, 4N) psi^e R for e in [0, 2N),
// [4N, 5N) the odd exponent 2 bitrev(k) + 1 of slot k), all in Montgomery form R,
// except where the arithmetic file multiplies by twiddles another way (`tw_mul`).

fn add_mod(a: u64, b: u64) -> u64 {
    let s = a + b;
    return select(s, s - Q, s >= Q);
}

fn sub_mod(a: u64, b: u64) -> u64 {
    return select(a - b, a + Q - b, a < b);
}

// Forward negacyclic NTT (Cooley-Tukey, natural in, bit-reversed out: slot k holds
// A(psi^(2 bitrev(k) + 1))) of `polys` consecutive polynomials at `base`, in place.
// Two radix-2 stages per pass over memory (one barrier per pair), a last single stage
// when log N is odd. Every invocation of the workgroup must call it (it holds barriers).
fn ntt_forward_polys(base: u32, polys: u32, tid: u32) {
    var m = 1u;
    var log_half = LOG_N - 1u;
    for (var s = 0u; s + 1u < LOG_N; s += 2u) {
        // Stage s: m groups of half h; stage s + 1: 2m groups of half h / 2.
        let h = 1u << log_half;
        let q4 = h >> 1u;
        for (var t = tid; t < polys * (N / 4u); t += WG) {
            let p = t >> (LOG_N - 2u);
            let u4 = t & (N / 4u - 1u);
            let i = u4 >> (log_half - 1u);
            let x = base + p * N + 2u * i * h + (u4 & (q4 - 1u));
            let a0 = work[x];
            let a1 = work[x + q4];
            let a2 = tw_mul(work[x + h], m + i);
            let a3 = tw_mul(work[x + h + q4], m + i);
            let b0 = add_mod(a0, a2);
            let b2 = sub_mod(a0, a2);
            let b1 = add_mod(a1, a3);
            let b3 = sub_mod(a1, a3);
            let v1 = tw_mul(b1, 2u * m + 2u * i);
            let v3 = tw_mul(b3, 2u * m + 2u * i + 1u);
            work[x] = add_mod(b0, v1);
            work[x + q4] = sub_mod(b0, v1);
            work[x + h] = add_mod(b2, v3);
            work[x + h + q4] = sub_mod(b2, v3);
        }
        storageBarrier();
        m = m << 2u;
        log_half = log_half - 2u;
    }
    if (LOG_N & 1u) == 1u {
        // The last stage (half 1), alone.
        for (var t = tid; t < polys * (N / 2u); t += WG) {
            let p = t >> (LOG_N - 1u);
            let i = t & (N / 2u - 1u);
            let x = base + p * N + 2u * i;
            let u = work[x];
            let v = tw_mul(work[x + 1u], m + i);
            work[x] = add_mod(u, v);
            work[x + 1u] = sub_mod(u, v);
        }
        storageBarrier();
    }
}

// Inverse (Gentleman-Sande) without the 1/N factor, which the caller folds in; a
// first single stage when log N is odd, then two stages per pass.
fn ntt_inverse_polys_unscaled(base: u32, polys: u32, tid: u32) {
    var half = 1u;
    var log_half = 0u;
    var groups = N / 2u;
    if (LOG_N & 1u) == 1u {
        for (var t = tid; t < polys * (N / 2u); t += WG) {
            let p = t >> (LOG_N - 1u);
            let i = t & (N / 2u - 1u);
            let x = base + p * N + 2u * i;
            let u = work[x];
            let v = work[x + 1u];
            work[x] = add_mod(u, v);
            work[x + 1u] = tw_mul(sub_mod(u, v), N + groups + i);
        }
        storageBarrier();
        half = 2u;
        log_half = 1u;
        groups = groups >> 1u;
    }
    for (var s = LOG_N & 1u; s + 1u < LOG_N; s += 2u) {
        // Stage with `groups` groups of half `half`, then groups / 2 of half 2 half.
        for (var t = tid; t < polys * (N / 4u); t += WG) {
            let p = t >> (LOG_N - 2u);
            let u4 = t & (N / 4u - 1u);
            let i = u4 >> log_half;
            let x = base + p * N + 4u * i * half + (u4 & (half - 1u));
            let a0 = work[x];
            let a1 = work[x + half];
            let a2 = work[x + 2u * half];
            let a3 = work[x + 3u * half];
            let b0 = add_mod(a0, a1);
            let b1 = tw_mul(sub_mod(a0, a1), N + groups + 2u * i);
            let b2 = add_mod(a2, a3);
            let b3 = tw_mul(sub_mod(a2, a3), N + groups + 2u * i + 1u);
            let w = N + groups / 2u + i;
            work[x] = add_mod(b0, b2);
            work[x + 2u * half] = tw_mul(sub_mod(b0, b2), w);
            work[x + half] = add_mod(b1, b3);
            work[x + 3u * half] = tw_mul(sub_mod(b1, b3), w);
        }
        storageBarrier();
        half = half << 2u;
        log_half = log_half + 2u;
        groups = groups >> 2u;
    }
}
