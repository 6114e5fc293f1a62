// Montgomery arithmetic with R = 2^64, for any odd Q < 2^63 (the 54-bit ring).
// Requires SHADER_INT64; `mulhi` comes from `mulhi64.wgsl`, prepended.

// a * b / R mod Q, fully reduced, for a, b < Q. With b = c R mod Q this is a * c mod Q.
// REDC, subtractive form: m = lo Q^-1 mod R makes m Q agree with a b in the low word,
// so (a b - m Q) / R = hi(a b) - hi(m Q), which lies in (-Q, Q).
fn mont_mul(a: u64, b: u64) -> u64 {
    let lo = a * b;
    let hi = mulhi(a, b);
    let u = mulhi(lo * QINV, Q);
    return select(hi - u, hi - u + Q, hi < u);
}

// Dot products: no headroom for lazy sums in 64 bits, so reduce every term.
fn mont_acc(acc: u64, a: u64, b: u64) -> u64 {
    let p = mont_mul(a, b);
    let s = acc + p;
    return select(s, s - Q, s >= Q);
}

fn mont_fin(acc: u64) -> u64 {
    return acc;
}

// x times twiddle table entry k by Shoup's method: for this ring the twiddles
// [0, 2N) are stored in plain form with their companions floor(w 2^64 / Q) at
// [5N, 7N), which costs one high product where Montgomery costs two.
fn tw_mul(x: u64, k: u32) -> u64 {
    let r = x * tw[k] - mulhi(x, tw[5u * N + k]) * Q;
    return select(r, r - Q, r >= Q);
}
