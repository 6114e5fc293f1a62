// Montgomery arithmetic with R = 2^32, for odd Q < 2^31 (the 25- and 27-bit rings).
// Operands are below Q < 2^31, so a b < 2^62 and m Q < 2^63 fit a u64 product.

fn mont_mul(a: u64, b: u64) -> u64 {
    let t = a * b;
    let m = ((t & 0xfffffffflu) * QINV) & 0xfffffffflu;
    let hi = t >> 32u;
    let u = (m * Q) >> 32u;
    return select(hi - u, hi - u + Q, hi < u);
}

// Lazy dot products: raw products (below Q^2) summed, one reduction at the end. Exact while
// the sum stays below Q R: ROWS Q^2 < Q 2^32 holds since ROWS Q < 10 * 2^27 < 2^32.
fn mont_acc(acc: u64, a: u64, b: u64) -> u64 {
    return acc + a * b;
}

fn mont_fin(acc: u64) -> u64 {
    let m = ((acc & 0xfffffffflu) * QINV) & 0xfffffffflu;
    let hi = acc >> 32u;
    let u = (m * Q) >> 32u;
    return select(hi - u, hi - u + Q, hi < u);
}

// x times twiddle table entry k (stored in Montgomery form).
fn tw_mul(x: u64, k: u32) -> u64 {
    return mont_mul(x, tw[k]);
}
